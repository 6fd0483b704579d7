"""A person's whole match in ``arena play``, played on the card table in a real Chromium.

Every decision is answered by clicking on the table: a bid's button, a card of the
hand (only the referee's options are raised and clickable, the others dimmed), a
prediction's token steppers, a token to return. One classic match at phone size (no
horizontal overflow; then "play again"), one Wizard Extreme match at desktop size (a
card played with the keyboard among them), each ending on the final standings the
database stored. The
rivals' moves are told in the aria-live line; the page's pace is set to fast (and
remembered) so that the suite stays quick. Screenshots: the table mid-trick at both
sizes, the bidding and prediction controls, the final standings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from arena.store import Store

from .conftest import Play

if TYPE_CHECKING:
    from playwright.sync_api import Page

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 60_000

# The page has drawn a decision's controls (its request id differs from the last one
# answered), or the final standings of the stored match.
READY = """after => {
    const controls = document.getElementById("controls");
    const standings = document.getElementById("standings");
    return (!controls.hidden && controls.dataset.request && controls.dataset.request !== after)
        || (!standings.hidden && document.getElementById("viewer-link") !== null);
}"""


def next_step(page: Page, answered: str) -> str | None:
    """Wait for the next decision's controls (its kind) or the end (None)."""
    page.wait_for_function(READY, arg=answered, timeout=WAIT_MS)
    if page.is_visible("#standings"):
        return None
    return page.get_attribute("#controls", "data-kind")


def no_horizontal_overflow(page: Page) -> None:
    width, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width <= client, (width, client)


def check_play_options(page: Page, decision: dict[str, Any], hand: list[str]) -> None:
    """The hand shows every card; exactly the referee's options are enabled and raised."""
    assert page.locator("#hand .pc").count() == len(hand)
    legal = page.locator("#hand button.legal:enabled").evaluate_all("bs => bs.map(b => b.dataset.card)")
    assert sorted(legal) == sorted(decision["options"])
    assert page.locator("#hand button.dim:disabled").count() == len(hand) - len(decision["options"])


def play_whole_match(game: Play, page: Page, screenshot: Callable[[Page, str], None], size: str,
                     keyboard: bool = False) -> dict[str, int]:
    """Answer every decision on the table until the final standings; the decisions by kind."""
    answered = ""
    kinds: dict[str, int] = {}
    pictured: set[str] = set()
    best = (False, 0)
    while (kind := next_step(page, answered)) is not None:
        answered = page.get_attribute("#controls", "data-request") or ""
        state = game.state()
        decision = state["decision"]
        assert decision is not None and str(decision["request_id"]) == answered and decision["kind"] == kind
        no_horizontal_overflow(page)
        if kind not in pictured and kind in ("bid", "predict"):
            screenshot(page, f"play-{size}-{kind}")
            pictured.add(kind)
        if kind == "play":
            check_play_options(page, decision, state["observation"]["hand"])
            # The table mid-trick: kept for the largest hand with a dimmed card seen so far.
            hand = state["observation"]["hand"]
            worth = (len(decision["options"]) < len(hand), len(hand))
            if state["observation"]["trick"] and worth > best:
                screenshot(page, f"play-{size}-mid-trick")
                best = worth
            if keyboard and not kinds.get("keyboard") and len(decision["options"]) > 1:
                page.focus("#hand button.legal")
                page.keyboard.press("ArrowRight")
                chosen = page.evaluate("document.activeElement.dataset.card")
                assert chosen == page.locator("#hand button.legal").nth(1).get_attribute("data-card")
                page.keyboard.press("Enter")
                kinds["keyboard"] = 1
                page.wait_for_function(
                    "c => [...document.querySelectorAll('#events li')]"
                    ".some(li => li.textContent === 'You played ' + c + '.')",
                    arg=page.evaluate(f"WizardTable.cardName({chosen!r})"), timeout=WAIT_MS)
            else:
                page.locator("#hand button.legal").last.click()
        elif kind == "predict":
            free = state["observation"]["destroyer_free"]
            assert page.locator("#choices button[data-option=destroyer]").count() == (1 if free else 0)
            # Many tokens, so that a trick won later leaves a choice of which to return.
            for colour, count in (("red", 3), ("yellow", 1), ("green", 1), ("blue", 1), ("purple", 1)):
                for _ in range(count):
                    page.locator(f".stepper[data-colour={colour}] .step[data-step='1']").click()
            assert "You take 3 red, 1 yellow, 1 green, 1 blue, 1 purple" in page.inner_text("#choices .summary")
            # A colour the supply lacks comes from another seat: the person may say whose.
            supply = state["observation"]["supply"]
            short = [colour for colour, count in (("red", 3), ("yellow", 1), ("green", 1), ("blue", 1),
                                                  ("purple", 1)) if count > supply[colour]]
            assert short and page.locator(".take-from select").count() == len(short)
            for colour in short:
                choose = page.locator(f".take-from select[data-colour={colour}]")
                holders = choose.locator("option").evaluate_all("os => os.map(o => o.value).filter(v => v)")
                choose.select_option(holders[0])
            page.locator("#choices button[data-option=tokens]").click()
        else:
            buttons = page.locator("#choices button.choice")
            assert buttons.evaluate_all("bs => bs.map(b => b.dataset.option)") == decision["options"]
            meaning = {"bid": "you expect to win", "trump": "beat every other suit", "pay": ""}[kind]
            assert meaning in buttons.first.inner_text()
            buttons.last.click()
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def check_standings(game: Play, page: Page) -> None:
    """The final standings are the stored match's, with a link to its replay."""
    stored = game.state()
    assert stored["faults"] == [] and stored["stored"] is not None
    store = Store(str(game.db))
    try:
        record = store.load_match(stored["stored"]["match_id"])
    finally:
        store.close()
    shown = {int(item.get_attribute("data-seat") or -1): int(item.get_attribute("data-total") or 0)
             for item in page.locator("#places li").all()}
    assert shown == dict(enumerate(record.totals))
    assert page.get_attribute("#viewer-link", "href") == f"/matches/{record.match_id}"
    no_horizontal_overflow(page)
    # The whole match was told, one line a card, the rivals' last cards included.
    told = page.locator("#events li").all_text_contents()
    assert page.get_attribute("#say", "aria-live") == "polite" and page.inner_text("#say") == "The match is over."
    assert any(line.startswith(("heuristic played", "greedy played")) for line in told)
    assert any(line.endswith("won the trick.") for line in told)
    cards = sum(event["type"] == "play" for event in stored["events"])
    assert stored["events"][-1]["type"] == "game_over" and told[0] == "The match is over."
    assert sum(" played " in line for line in told) == cards == sum(
        isinstance(logged.action, str) and logged.action[1:].isdigit() for logged in record.actions)


def fast(page: Page) -> None:
    """Choose the fast pace on the page, as a person would; the page remembers it."""
    page.select_option("#pace", "fast")
    assert page.evaluate("localStorage.getItem('wizard-arena.play.pace')") == "fast"
    page.reload()
    assert page.input_value("#pace") == "fast"


@pytest.mark.slow
def test_a_classic_match_on_the_table_at_phone_size(play: Callable[..., Play], page: Page,
                                                      screenshot: Callable[[Page, str], None]) -> None:
    game = play("--variant", "classic", "--players", "3", "--rounds", "3", "--seed", "63")
    page.set_viewport_size(PHONE)
    page.goto(game.url)
    fast(page)
    kinds = play_whole_match(game, page, screenshot, "phone")
    # A Wizard turned up when the person dealt round 2: they chose the trump suit.
    assert kinds == {"bid": 3, "trump": 1, "play": 1 + 2 + 3}
    check_standings(game, page)
    assert "you are #" in page.inner_text("#status")
    no_horizontal_overflow(page)
    screenshot(page, "play-phone-standings")
    # "Play again" deals another match at the same table, on the same page.
    page.click("#again")
    page.wait_for_function("() => document.getElementById('play').dataset.game === '2'", timeout=WAIT_MS)
    assert next_step(page, "") in ("bid", "trump")
    assert page.is_hidden("#standings") and game.state()["game"] == 2


@pytest.mark.slow
def test_an_extreme_match_on_the_table_at_desktop_size(play: Callable[..., Play], page: Page,
                                                     screenshot: Callable[[Page, str], None]) -> None:
    game = play("--variant", "extreme", "--players", "3", "--rounds", "1", "--seed", "1")
    page.set_viewport_size(DESKTOP)
    page.goto(game.url)
    fast(page)
    kinds = play_whole_match(game, page, screenshot, "desktop", keyboard=True)
    assert kinds == {"predict": 1, "play": 15, "pay": 1, "keyboard": 1}
    check_standings(game, page)
    screenshot(page, "play-desktop-standings")
