"""The match viewer in a real browser, at a desktop's and a phone's size: the timeline
reaches any decision as stepping does, play and its speeds step on by a fake clock's
ticks, the Extreme trick never lies on the middle's words, the page says what is coming
before its data and reads without JavaScript, reduced motion moves nothing, and nothing
is wider than a phone.

`arena web` runs as its own process over the web tests' SQLite file of real engine games
(``web_db``: classic with open, hidden and secret bids at three seats, Extreme at four).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
from browser_fixtures import COUNT_MOTION  # noqa: E402
from factories.web_server import WebServer  # noqa: E402
from playwright.sync_api import Browser, Page, Route, expect  # noqa: E402

from arena.store import Store  # noqa: E402

pytestmark = pytest.mark.slow

Shoot = Callable[[Page, str], None]
START = datetime(2030, 1, 1)      # the fake clock's start (test_play_...)
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}

# Everything the viewer draws for a step, read in one go: comparing two of these compares
# the felt (seats, their panels, the trick, the middle), the rows, the rounds and the totals.
READ_STEP = """() => ({
  step: document.getElementById("step").textContent,
  timeline: document.getElementById("timeline").value,
  felt: document.getElementById("felt").innerHTML,
  seats: Array.from(document.querySelectorAll("#felt .seat")).map((n) => n.innerText),
  trick: Array.from(document.querySelectorAll("#felt .trick-card .pc")).map((n) => n.dataset.card),
  rows: document.getElementById("table").innerHTML,
  rounds: document.getElementById("rounds").innerHTML,
  totals: document.getElementById("totals").dataset.totals})"""

# From the first decision to the last, one step a key press (the viewer draws a step in the
# key's handler): at each, whether a card of the trick overlaps the middle's words where the
# cards lie (a card still gliding there from its hand may pass over them: its motion is
# finished first). One call for the whole match: a round trip a step would cost seconds.
COVERED_AT_EACH_STEP = """() => {
  const boxes = (selector) => Array.from(document.querySelectorAll(selector)).map((n) => n.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.height > 0);
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const last = Number(document.getElementById("timeline").max);
  const found = [];
  for (let k = 0; k <= last; k++) {
    if (k) document.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight"}));
    document.getAnimations().forEach((a) => a.finish());
    const words = boxes("#felt .trick-text, #felt .felt-round");
    const cards = boxes("#felt .trick-card, #felt .trick-card .pc");
    found.push({step: document.getElementById("step").textContent, words: words.length, cards: cards.length,
                covered: cards.some((c) => words.some((w) => meets(c, w)))});
  }
  return found;
}"""


@pytest.fixture(scope="module")
def web(web_db: tuple[Path, str]) -> Iterator[str]:
    """`arena web --port 0` over the web tests' database, for the whole module."""
    server = WebServer(web_db[0])
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def records(web_db: tuple[Path, str]) -> dict[str, Any]:
    """The stored records, by match id, as plain data."""
    with Store(str(web_db[0])) as store:
        return {m: store.load_match(m).to_json() for m in ("hidden-1", "secret-0", "open-0", "extreme-1")}


def open_match(page: Page, web: str, match_id: str, size: str = "desktop", at: int | None = None) -> int:
    """Open the viewer of ``match_id`` at ``size`` (at decision ``at``); its decisions."""
    page.set_viewport_size(SIZES[size])
    page.goto(f"{web}/matches/{match_id}" + ("" if at is None else f"#d={at}"))
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    return int(page.locator("#timeline").get_attribute("max") or "0")


def first_play(record: dict[str, Any]) -> int:
    """The first decision that plays a card."""
    return next(k for k, (_, action) in enumerate(record["actions"], start=1)
                if isinstance(action, str) and action[:1] in "rygbpWJ" and action[1:2].isdigit())


def first_trick_won(web: str, match_id: str) -> int:
    """The first decision that ends a trick but not its round (whose step has a "trick"
    event and no "round_end": a new round clears the table)."""
    data = json.loads(_get(f"{web}/api/matches/{match_id}"))
    return next(step["index"] for step in data["steps"]
                if {"trick"} <= {e["type"] for e in step["events"]} and
                not any(e["type"] == "round_end" for e in step["events"]))


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=60) as answer:
        return str(answer.read().decode())


@pytest.mark.parametrize(("size", "match_id"), [("desktop", "extreme-1"), ("phone", "hidden-1")])
def test_the_timeline_reaches_a_decision_as_stepping_to_it_does(web: str, page: Page, screenshot: Shoot,
                                                                 size: str, match_id: str) -> None:
    decisions = open_match(page, web, match_id, size)
    chosen = decisions // 2 + 1        # mid-match, inside some round
    page.locator("#first").click()
    for _ in range(chosen):
        page.keyboard.press("ArrowRight")
    stepped = page.evaluate(READ_STEP)
    assert stepped["step"] == f"{chosen} / {decisions}" and stepped["timeline"] == str(chosen)
    # From elsewhere (the end) straight to the chosen decision on the timeline.
    page.locator("#last").click()
    page.locator("#timeline").fill(str(chosen))
    expect(page.locator("#step")).to_have_text(f"{chosen} / {decisions}")
    assert page.evaluate(READ_STEP) == stepped
    expect(page).to_have_url(re.compile(rf"#d={chosen}$"))      # the address links to it
    # And from a fresh page: the same drawing, built from nothing.
    page.reload()
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    page.locator("#timeline").fill(str(chosen))
    assert page.evaluate(READ_STEP) == stepped
    # Its marks: one at each round's start, the first before any decision.
    starts = [int(v) for v in page.locator("#round-starts option").evaluate_all("(os) => os.map((o) => o.value)")]
    assert starts[0] == 0 and starts == sorted(starts) and len(starts) == 3, starts
    page.locator("#timeline").fill(str(starts[1]))
    expect(page.locator("#felt .felt-round")).to_have_text("Round 2")
    screenshot(page, f"viewer-timeline-{size}")


def test_play_steps_at_the_chosen_speed_and_pause_holds(web: str, page: Page) -> None:
    # The page's timers run only when the test says: steps are counted, not timed.
    page.clock.install(time=START)
    decisions = open_match(page, web, "secret-0")
    page.clock.pause_at(START + timedelta(hours=1))
    page.locator("#first").click()
    page.locator("#play").click()
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "true")
    page.clock.run_for(1600)                       # 1x: a step every 800 ms
    expect(page.locator("#step")).to_have_text(f"2 / {decisions}")
    page.locator("#speed").select_option("4")      # 4x: every 200 ms, from now on
    assert page.locator("#viewer").get_attribute("data-step-ms") == "200"
    page.clock.run_for(1600)
    expect(page.locator("#step")).to_have_text(f"10 / {decisions}")
    page.locator("#speed").select_option("0.5")
    page.clock.run_for(1600)
    expect(page.locator("#step")).to_have_text(f"11 / {decisions}")
    page.locator("#play").click()                  # pause
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "false")
    page.clock.run_for(10_000)
    expect(page.locator("#step")).to_have_text(f"11 / {decisions}")
    # Playing from the end starts again at the beginning, and stops at the end.
    page.locator("#last").click()
    page.locator("#speed").select_option("4")
    page.locator("#play").click()
    page.clock.run_for(200)
    expect(page.locator("#step")).to_have_text(f"1 / {decisions}")
    page.clock.run_for(200 * decisions)
    expect(page.locator("#step")).to_have_text(f"{decisions} / {decisions}")
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "false")
    # The speed chosen last is the page's next time.
    page.reload()
    expect(page.locator("#viewer")).to_have_attribute("data-step-ms", "200")
    assert page.input_value("#speed") == "4"


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_extreme_trick_never_covers_the_middles_words(web: str, page: Page, screenshot: Shoot, size: str) -> None:
    decisions = open_match(page, web, "extreme-1", size)
    page.locator("#first").click()
    found = page.evaluate(COVERED_AT_EACH_STEP)
    assert [f["step"] for f in found] == [f"{k} / {decisions}" for k in range(decisions + 1)]
    for k, at in enumerate(found):
        assert at["words"] >= 1 and not at["covered"], f"after decision {k}: {at}"
    # Three of the four seats' cards at most (a box for the card and one for its tile):
    # the fourth ends the trick, which goes to its winner.
    fullest = max(range(len(found)), key=lambda k: found[k]["cards"])
    assert found[fullest]["cards"] == 2 * 3, "no trick of three cards was ever on the table"
    page.locator("#timeline").fill(str(fullest))
    screenshot(page, f"viewer-extreme-trick-{size}")


def test_the_page_says_what_is_coming_before_its_data(web: str, page: Page, screenshot: Shoot) -> None:
    held: list[Route] = []
    page.route("**/api/matches/**", lambda route: held.append(route))     # answered only when the test lets it
    page.goto(f"{web}/matches/open-0")
    expect(page.locator("#loading")).to_have_text("Loading match open-0…")
    expect(page.locator("#loading")).to_be_visible()
    for hidden in ("#felt", "#step", ".controls", "#timeline"):
        expect(page.locator(hidden)).to_be_hidden()
    assert held, "the page did not ask for its data"
    screenshot(page, "viewer-loading")
    held[0].continue_()
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#loading")).to_be_hidden()
    expect(page.locator("#step")).to_have_text(re.compile(r"^0 / \d+$"))


def test_without_javascript_the_page_lists_every_round_trick_and_score(web: str, browser: Browser,
                                                                         records: dict[str, Any],
                                                                         screenshot: Any) -> None:
    record = records["hidden-1"]
    context = browser.new_context(java_script_enabled=False, viewport=SIZES["phone"])
    try:
        page = context.new_page()
        page.goto(f"{web}/matches/hidden-1")
        expect(page.locator("#viewer")).to_be_hidden()
        rows = page.locator("#match-rows")
        expect(rows).to_be_visible()
        rounds = rows.locator("table.played-round")
        expect(rounds).to_have_count(3)
        # Round r deals r cards: r tricks, each with a card (in words) from every seat.
        for r in range(3):
            tricks = rounds.nth(r).locator("tbody tr", has_text=re.compile(r"^trick \d"))
            expect(tricks).to_have_count(r + 1)
            cells = tricks.first.locator("td").all_inner_texts()
            assert all(re.match(r"^(red|yellow|green|blue) \d+|^Wizard|^Jester", c) for c in cells[:3]), cells
            assert cells[3] in record["bots"]
        totals = ", ".join(f"{b} {t}" for b, t in zip(record["bots"], record["totals"], strict=True))
        expect(page.locator("#final-totals")).to_have_text(f"Totals: {totals}")
        last_score = rounds.nth(2).locator("tbody tr").last.locator("td").all_inner_texts()
        assert [cell.split("→ ")[-1] for cell in last_score[:3]] == [str(t) for t in record["totals"]]
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        screenshot(page, "viewer-no-javascript")
    finally:
        context.close()


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_cards_move_to_the_trick_and_to_its_winner_unless_motion_is_reduced(
        web: str, browser: Browser, records: dict[str, Any], motion: str) -> None:
    context = browser.new_context(reduced_motion=motion)  # type: ignore[arg-type]
    context.add_init_script(COUNT_MOTION)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        played = first_play(records["open-0"])
        open_match(page, web, "open-0", at=played - 1)
        page.evaluate("window.movedElements = []")
        page.keyboard.press("ArrowRight")           # a card goes from its hand to the trick
        to_trick = page.evaluate("window.movedElements.length")
        won = first_trick_won(web, "open-0")
        page.locator("#timeline").fill(str(won - 1))
        page.evaluate("window.movedElements = []")
        page.keyboard.press("ArrowRight")            # the trick goes to its winner's seat
        to_winner = page.evaluate("window.movedElements.filter((e) => e.closest('.seat-won')).length")
        expect(page.locator("#felt .seat-won .pc")).to_have_count(3)
        if motion == "reduce":
            page.locator("#speed").select_option("4")
            page.locator("#play").click()
            page.wait_for_function("document.getElementById('step').textContent.split(' / ')[0] > " + str(won + 2))
            assert (to_trick, to_winner, page.evaluate("window.movedElements.length")) == (0, 0, 0)
        else:
            assert to_trick > 0 and to_winner == 3, (to_trick, to_winner)
        assert not errors, errors
    finally:
        context.close()


@pytest.mark.parametrize("match_id", ["extreme-1", "secret-0"])
def test_nothing_is_wider_than_a_phone(web: str, page: Page, screenshot: Shoot, match_id: str) -> None:
    decisions = open_match(page, web, match_id, "phone", at=None)
    page.locator("#timeline").fill(str(decisions // 2))
    for view in ("table", "rows"):
        widths = page.evaluate("""() => ({scroll: document.documentElement.scrollWidth,
                                          client: document.documentElement.clientWidth})""")
        assert widths["scroll"] <= widths["client"], f"{view}: {widths}"
        screenshot(page, f"viewer-phone-{match_id}-{view}")
        page.locator("#view-toggle").click()
