"""A person's whole match in ``arena play``, clicked in a real Chromium.

Every decision of a 2-round, 3-player classic match is answered by clicking: a bid
button, or a card of the hand. Only the referee's options are clickable (the other
cards of the hand are disabled); the page ends on the totals the database stored, with
a link to the replay. Screenshots at desktop and phone width.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from arena.store import Store

from .conftest import Play

if TYPE_CHECKING:
    from playwright.sync_api import Page

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def wait_for_turn_or_end(page: Page, after: str) -> str:
    """Wait until the page has drawn a state newer than ``after`` in which it is the
    person's turn or the match is stored; the page's status."""
    page.wait_for_function(
        """after => {
            const root = document.getElementById("play");
            const status = root.getAttribute("data-status");
            return root.getAttribute("data-version") !== after
                && (status === "your_turn" || (status === "over" && document.getElementById("viewer-link")));
        }""", arg=after, timeout=30_000)
    return page.get_attribute("#play", "data-status") or ""


@pytest.mark.slow
def test_a_person_plays_a_whole_match_by_clicking(play: Callable[..., Play], page: Page,
                                                  screenshot: Callable[[Page, str], None]) -> None:
    game = play("--variant", "classic", "--players", "3", "--rounds", "2", "--seed", "7")
    page.set_viewport_size(DESKTOP)
    page.goto(game.url)
    version = ""
    clicks = {"bid": 0, "play": 0, "trump": 0}
    pictured = False
    while wait_for_turn_or_end(page, version) == "your_turn":
        version = page.get_attribute("#play", "data-version") or ""
        state = game.state()
        decision = state["decision"]
        kind = page.get_attribute("#decision", "data-kind")
        assert kind == decision["kind"]
        if kind == "play":
            enabled = page.locator("#hand button:enabled")
            assert sorted(enabled.evaluate_all("bs => bs.map(b => b.dataset.card)")) == sorted(decision["options"])
            hand = page.locator("#hand button").count()
            assert hand == len(state["observation"]["hand"])
            assert page.locator("#hand button:disabled").count() == hand - len(decision["options"])
            if not pictured and hand > 1:
                screenshot(page, "play-desktop-turn")
                page.set_viewport_size(PHONE)
                screenshot(page, "play-phone-turn")
                page.set_viewport_size(DESKTOP)
                pictured = True
            enabled.first.click()
        else:
            buttons = page.locator("#options button")
            assert buttons.evaluate_all("bs => bs.map(b => b.dataset.option)") == decision["options"]
            buttons.first.click()
        clicks[kind] += 1
    assert clicks["bid"] == 2 and clicks["play"] == 1 + 2      # a card in round 1, two in round 2
    stored = game.state()
    assert stored["faults"] == []
    store = Store(str(game.db))
    try:
        record = store.load_match(stored["stored"]["match_id"])
    finally:
        store.close()
    rows = page.locator("#totals tbody tr")
    shown = {int(row.get_attribute("data-seat") or -1): int(row.locator("td").nth(2).inner_text())
             for row in rows.all()}
    assert shown == dict(enumerate(record.totals))
    assert page.get_attribute("#viewer-link", "href") == f"/matches/{record.match_id}"
    screenshot(page, "play-desktop-over")
    page.set_viewport_size(PHONE)
    screenshot(page, "play-phone-over")
