"""The live viewer in a real browser: a running match is watched as it is played, and the
page never holds a card that some seat still has in hand.

`arena tournament` runs as its own process with bots slow enough to watch (secret
bidding, so the bids must stay face down too); `arena web` finds the tournament's
referee by itself. While the match runs the test reads the page over and over (its
text and its whole HTML, and the decision it shows); after the match it replays the
stored record to each of those moments and checks every card name the page held.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
from factories.commands import arena_stdout  # noqa: E402
from factories.live import card_names, moment, running_match, slow_tournament  # noqa: E402
from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.slow

Shoot = Callable[[Page, str], None]
STEP = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# What the page shows, read in one go so that the decision and the text agree.
READ_PAGE = """() => {
  const viewer = document.getElementById("viewer");
  return {step: document.getElementById("step").textContent, text: document.body.innerText,
          html: document.documentElement.outerHTML, over: viewer.dataset.over || "",
          table: document.getElementById("table").outerHTML,
          bids: Array.from(document.querySelectorAll("#table tbody tr")).map((row) => row.cells[2].textContent)};
}"""


def watch(page: Page, timeout: float = 90.0) -> list[dict[str, Any]]:
    """Read the live page every few ms until it says the match is over."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = page.evaluate(READ_PAGE)
        if shown["over"]:
            return seen
        if STEP.match(shown["step"]) and shown["bids"]:
            seen.append(shown)
        time.sleep(0.03)
    raise AssertionError(f"the live page did not say the match was over in {timeout:g} s")


def test_the_live_viewer_follows_a_match_and_never_shows_a_card_still_in_hand(
        tmp_path: Path, page: Page, screenshot: Shoot, web_over: Callable[[Path], str]) -> None:
    db = tmp_path / "live.db"
    hold = tmp_path / "hold"      # the match waits at its first decision until the page is ready
    hold.touch()
    runner = slow_tournament(tmp_path, db, "--bidding", "secret", "--rounds", "8", "--games", "2", "--seed", "5",
                             sleep_ms=15, hold=hold)
    try:
        url = web_over(db) if _wait_for(db) else ""
        match_id = running_match(url)
        page.goto(f"{url}/live/{match_id}")
        expect(page.locator("#viewer")).to_have_attribute("data-ready", "true", timeout=60_000)
        screenshot(page, "live-running")
        hold.unlink()
        seen = watch(page)
        expect(page.locator("#replay-link")).to_be_visible()
        assert runner.wait(timeout=120) == 0, (tmp_path / "tournament.out").read_text()
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()

    shown_steps = [int(STEP.match(s["step"]).group(1)) for s in seen]  # type: ignore[union-attr]
    assert any(card_names(s["table"], "classic") for s in seen), "no card was ever seen on the table"
    # It was watched while it ran, and moved on by itself: two decisions at least, however
    # few reads a busy machine allowed (watched from its first decision, the match lasts
    # seconds of the bots' sleeps alone).
    assert len(set(shown_steps)) >= 2, shown_steps
    record = json.loads(arena_stdout("export", match_id, "--db", str(db), cwd=tmp_path))
    for shown, k in zip(seen, shown_steps, strict=True):
        truth = moment(record, k)
        # Anywhere on the page: only cards the public events had named (played, turned up).
        cards = card_names(shown["text"], "classic") | card_names(shown["html"], "classic")
        assert cards <= truth.public, f"after decision {k} the page named cards never played: {cards - truth.public}"
        # The table is this round's: none of its cards may be in a hand now. (The step's
        # event list may name a card played last round that is dealt again this round.)
        on_table = card_names(shown["table"], "classic")
        assert not on_table & truth.held, f"after decision {k} the table showed cards in hand: {on_table & truth.held}"
        if not truth.bids_revealed:
            assert set(shown["bids"]) <= {"", "face down"}, f"after decision {k} secret bids showed: {shown['bids']}"

    # Once over, the replay shows the hands face up and ends on the stored totals.
    page.locator("#replay-link").click()
    expect(page).to_have_url(re.compile(rf"/matches/{re.escape(match_id)}"))
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    assert card_names(page.locator("#table").inner_text(), "classic"), "the replay shows no hand"
    page.locator("#last").click()
    expect(page.locator("#totals")).to_have_attribute("data-totals", ",".join(map(str, record["totals"])))
    screenshot(page, "live-over-replay")


def _wait_for(db: Path, timeout: float = 60.0) -> bool:
    """Wait until the tournament has created its database (arena web needs it to start)."""
    deadline = time.monotonic() + timeout
    while not db.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{db} was not created in {timeout:g} s")
        time.sleep(0.1)
    time.sleep(0.5)   # the schema is written just after the file appears
    return True
