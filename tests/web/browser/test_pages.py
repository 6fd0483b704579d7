"""`arena web` in a real browser: the pages a person opens show what the CLI shows.

Chromium (Debian's) driven by Playwright, against `arena web` running as its own process
over a database filled by real tournaments (fixtures in conftest.py). Every page is also
checked for console errors and photographed into test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Outside CI, no Playwright means a skip (one line); in CI the import below fails the run.
if not os.environ.get("CI"):
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
from browser_fixtures import COUNT_MOTION  # noqa: E402
from factories.commands import arena_stdout  # noqa: E402
from playwright.sync_api import Browser, Page, expect  # noqa: E402

if TYPE_CHECKING:
    from factories.browser_site import Site

Shoot = Callable[[Page, str], None]

# Real processes, a real browser: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

STEP = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def board_bots(page: Page) -> list[str]:
    return [row.get_attribute("data-bot") or "" for row in page.locator("#board tbody tr[data-bot]").all()]


def cli_bots(site: Site, *args: str) -> list[str]:
    return [row["bot"] for row in site.cli_json("leaderboard", *args)["rows"]]


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_the_leaderboard_lists_the_clis_bots_in_its_order(site: Site, page: Page, screenshot: Shoot,
                                                          variant: str) -> None:
    page.goto(f"{site.url}/leaderboard/{variant}")
    expected = cli_bots(site, "--variant", variant)
    assert expected, "the tournaments stored no rows"
    assert board_bots(page) == expected
    screenshot(page, f"leaderboard-{variant}")


def test_one_tournaments_leaderboard_lists_that_tournaments_bots(site: Site, page: Page, screenshot: Shoot) -> None:
    tournament = site.tournaments["classic-secret"]
    page.goto(f"{site.url}/leaderboard/classic?tournament={tournament}")
    assert board_bots(page) == cli_bots(site, "--variant", "classic", "--tournament", tournament)
    screenshot(page, "leaderboard-one-tournament")


def open_viewer(page: Page, url: str, decisions: int) -> None:
    """Open a match viewer and wait until it has its data (it fetches it after the page
    loads: a click before that would race it)."""
    page.goto(url)
    expect(page.locator("#step")).to_have_text(re.compile(rf"/\s*{decisions}\s*$"))


def step(page: Page) -> tuple[int, int]:
    """The viewer's "k / N" position."""
    shown = STEP.match(page.locator("#step").inner_text())
    assert shown, f"#step shows {page.locator('#step').inner_text()!r}, not 'k / N'"
    return int(shown[1]), int(shown[2])


@pytest.mark.parametrize("kind", ["classic-hidden", "classic-secret", "extreme"])
def test_the_last_step_shows_the_stored_totals(site: Site, page: Page, screenshot: Shoot, kind: str) -> None:
    match = site.matches[kind]
    open_viewer(page, f"{site.url}/matches/{match.match_id}", match.decisions)
    page.locator("#last").click()
    expect(page.locator("#totals")).to_have_attribute("data-totals", match.totals)
    assert step(page) == (match.decisions, match.decisions)
    screenshot(page, f"match-{kind}")


# The card table as it stands: each seat's total, the cards on the table, the hands; and,
# read in the same call, the position shown and the stored totals of that step.
READ_FELT = """() => ({
  totals: Array.from(document.querySelectorAll("#felt .seat .total")).map((n) => n.dataset.total).join(","),
  trick: document.querySelectorAll("#felt .trick-card").length,
  hands: document.querySelectorAll("#felt .hand .pc[data-card]").length,
  step: document.getElementById("step").textContent,
  stored: document.getElementById("totals").dataset.totals})"""


def step_to_the_end_on_the_table(page: Page, decisions: int) -> None:
    """Step through a whole match in the card table view, one decision at a time (the
    arrow key, and the button every eighth step: a click waits for the button to stand
    still, 70 ms against 30 for a key, over 192 steps), checking the table at each step:
    never more cards in the middle than seats, every total drawn; it ends on the stored totals.
    The viewer draws a step in the key's or click's own handler, so the table is read
    once right after it, with nothing to wait for."""
    expect(page.locator("#felt")).to_be_visible()
    expect(page.locator("#table")).to_be_hidden()
    page.locator("#first").click()
    assert step(page) == (0, decisions)
    start = page.locator("#totals").get_attribute("data-totals") or ""
    assert set(start.split(",")) == {"0"}, f"totals before any decision: {start!r}"
    players = page.locator("#felt .seat").count()
    for k in range(1, decisions + 1):
        if k % 8 == 1:
            page.locator("#next").click()
        else:
            page.keyboard.press("ArrowRight")
        felt = page.evaluate(READ_FELT)
        shown = STEP.match(felt["step"])
        assert shown and (int(shown[1]), int(shown[2])) == (k, decisions), f"after decision {k}: {felt['step']!r}"
        assert felt["trick"] <= players, f"after decision {k}: {felt['trick']} cards in the middle"
        assert felt["totals"] == felt["stored"], f"after decision {k}"
    # One more press at the end stays at the end.
    page.keyboard.press("ArrowRight")
    assert step(page) == (decisions, decisions)


@pytest.mark.parametrize("kind", ["classic-hidden", "classic-secret", "extreme"])
def test_stepping_through_a_whole_match_on_the_card_table(site: Site, page: Page, kind: str) -> None:
    match = site.matches[kind]
    open_viewer(page, f"{site.url}/matches/{match.match_id}", match.decisions)
    step_to_the_end_on_the_table(page, match.decisions)
    expect(page.locator("#totals")).to_have_attribute("data-totals", match.totals)
    assert page.evaluate(READ_FELT)["totals"] == match.totals


def stored(site: Site, kind: str) -> dict[str, Any]:
    """The stored record of the site's match of ``kind`` (`arena export`)."""
    return dict(json.loads(arena_stdout("export", site.matches[kind].match_id, "--db", str(site.db), cwd=site.folder)))


def test_the_match_page_draws_its_seats_before_the_script_runs(site: Site, browser: Browser) -> None:
    match = site.matches["classic-hidden"]
    context = browser.new_context(java_script_enabled=False)    # the page as it comes from the server
    try:
        page = context.new_page()
        page.goto(f"{site.url}/matches/{match.match_id}")
        names = page.locator("#felt .seat .seat-name").all_inner_texts()
        assert [name.strip() for name in names] == stored(site, "classic-hidden")["bots"]
    finally:
        context.close()


def test_the_toggle_switches_to_the_rows_and_is_remembered(site: Site, page: Page, screenshot: Shoot) -> None:
    match = site.matches["extreme"]
    open_viewer(page, f"{site.url}/matches/{match.match_id}", match.decisions)
    toggle = page.locator("#view-toggle")
    expect(page.locator("#felt")).to_be_visible()
    toggle.click()
    expect(page.locator("#table")).to_be_visible()
    expect(page.locator("#felt")).to_be_hidden()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    page.reload()
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#table")).to_be_visible()     # remembered
    screenshot(page, "match-rows-view")
    toggle.click()
    expect(page.locator("#felt")).to_be_visible()
    expect(page.locator("#table")).to_be_hidden()


def first_play(site: Site, kind: str) -> int:
    """The first decision of a stored match that plays a card."""
    record = stored(site, kind)
    return next(k for k, (_, action) in enumerate(record["actions"], start=1)
                if isinstance(action, str) and action[:1] in "rygbpWJ" and action[1:2].isdigit())


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_a_card_played_moves_to_the_table_unless_motion_is_reduced(site: Site, browser: Browser, motion: str) -> None:
    match = site.matches["classic-hidden"]
    context = browser.new_context(reduced_motion=motion)  # type: ignore[arg-type]
    context.add_init_script(COUNT_MOTION)
    try:
        page = context.new_page()
        open_viewer(page, f"{site.url}/matches/{match.match_id}#d={first_play(site, 'classic-hidden') - 1}",
                    match.decisions)
        page.evaluate("window.movedElements = []")
        page.keyboard.press("ArrowRight")
        moving = page.evaluate("window.movedElements.length")
        assert (moving > 0) == (motion == "no-preference"), f"{moving} animations with {motion} motion"
    finally:
        context.close()


@pytest.mark.parametrize("kind", ["classic-secret", "extreme"])
def test_the_card_table_at_desktop_and_phone_width(site: Site, page: Page, screenshot: Shoot, kind: str) -> None:
    match = site.matches[kind]
    middle = match.decisions // 2
    open_viewer(page, f"{site.url}/matches/{match.match_id}#d={middle}", match.decisions)
    screenshot(page, f"table-{kind}-desktop")
    # At the narrowest width with the events beside the table, the seats stay on it
    # (the Extreme matches are played at four seats, the widest of the fixtures' tables).
    assert page.locator("#felt .seat").count() == (4 if kind == "extreme" else 3)
    page.set_viewport_size({"width": 1150, "height": 900})
    page.reload()
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    sides = page.evaluate("""() => { const felt = document.getElementById("felt").getBoundingClientRect();
      const seats = Array.from(document.querySelectorAll("#felt .seat")).map((n) => n.getBoundingClientRect());
      return {felt: [felt.left, felt.right], seats: [Math.min(...seats.map((b) => b.left)),
                                                     Math.max(...seats.map((b) => b.right))]}; }""")
    assert sides["felt"][0] <= sides["seats"][0] and sides["seats"][1] <= sides["felt"][1], sides
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    # Nothing of the table wider than the phone: no sideways scrolling to see a seat.
    widths = page.evaluate("""() => ({page: document.documentElement.clientWidth,
      felt: document.getElementById("felt").getBoundingClientRect().right,
      seats: Math.max(...Array.from(document.querySelectorAll("#felt .seat"))
                           .map((n) => n.getBoundingClientRect().right))})""")
    assert widths["felt"] <= widths["page"] and widths["seats"] <= widths["page"], widths
    screenshot(page, f"table-{kind}-phone")


READ_TOKENS = """() => ({
  step: document.getElementById("step").textContent,
  supply: JSON.parse(document.getElementById("supply").dataset.supply),
  tokens: Array.from(document.querySelectorAll("#table td.tokens")).map((td) => JSON.parse(td.dataset.tokens))})"""


def test_extreme_tokens_and_supply_follow_the_engine_at_every_step(site: Site, page: Page,
                                                                    screenshot: Shoot) -> None:
    from engine import replay_record

    match = site.matches["extreme"]
    record = json.loads(arena_stdout("export", match.match_id, "--db", str(site.db), cwd=site.folder))
    open_viewer(page, f"{site.url}/matches/{match.match_id}", match.decisions)
    page.locator("#first").click()
    for k in range(match.decisions + 1):
        if k:
            page.keyboard.press("ArrowRight")
        truth = replay_record(record["config"], record["actions"][:k]).observe(None)
        shown = page.evaluate(READ_TOKENS)    # drawn in the key's handler: nothing to wait for
        assert re.match(rf"^\s*{k}\s*/", shown["step"]), f"after decision {k}: {shown['step']!r}"
        assert shown["supply"] == truth["supply"], f"supply after decision {k}"
        assert shown["tokens"] == [{c: n for c, n in held.items() if n} for held in truth["tokens"]], \
            f"tokens after decision {k}"
        if k == match.decisions // 2:
            screenshot(page, "match-extreme-tokens")


def test_the_url_hash_opens_a_decision(site: Site, page: Page) -> None:
    match = site.matches["extreme"]
    page.goto(f"{site.url}/matches/{match.match_id}#d={match.decisions}")
    expect(page.locator("#totals")).to_have_attribute("data-totals", match.totals)
    assert step(page) == (match.decisions, match.decisions)
    page.goto(f"{site.url}/matches/{match.match_id}#d=1")
    expect(page.locator("#step")).to_have_text(re.compile(rf"^\s*1\s*/\s*{match.decisions}\s*$"))


def test_play_steps_on_by_itself_until_paused(site: Site, page: Page) -> None:
    match = site.matches["classic-secret"]
    open_viewer(page, f"{site.url}/matches/{match.match_id}", match.decisions)
    page.locator("#first").click()
    page.locator("#play").click()
    expect(page.locator("#step")).not_to_have_text(re.compile(r"^\s*0\s*/"))
    page.locator("#play").click()
    paused = step(page)
    page.wait_for_timeout(1000)  # several of the player's ticks
    assert step(page) == paused


@pytest.mark.parametrize("path", ["/matches/no-such-match", "/leaderboard/chess",
                                  "/leaderboard/classic?tournament=no-such-tournament", "/crosstable/chess"])
def test_an_unknown_match_variant_or_tournament_is_a_404_page(site: Site, page: Page, screenshot: Shoot,
                                                               path: str) -> None:
    response = page.goto(f"{site.url}{path}")
    assert response is not None and response.status == 404
    assert "text/html" in response.headers.get("content-type", "")
    assert "Traceback" not in page.content()
    if path.startswith("/matches/"):
        screenshot(page, "404")


def test_the_index_links_to_each_board_and_each_tournament(site: Site, page: Page, screenshot: Shoot) -> None:
    page.goto(f"{site.url}/")
    links = [link.get_attribute("href") or "" for link in page.locator("a[href]").all()]
    for wanted in ["/leaderboard/classic", "/leaderboard/extreme", *site.tournaments.values()]:
        assert any(wanted in link for link in links), f"no link to {wanted} in {links}"
    screenshot(page, "index")


def test_a_header_click_sorts_the_board(site: Site, page: Page) -> None:
    page.goto(f"{site.url}/leaderboard/classic")
    header = page.locator("#board thead th", has_text=re.compile(r"^\s*Bot\s*$"))
    header.click()
    by_name = sorted(board_bots(page))
    assert board_bots(page) == by_name
    header.click()
    assert board_bots(page) == by_name[::-1]


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_the_crosstable_pairs_the_boards_bots(site: Site, page: Page, screenshot: Shoot, variant: str) -> None:
    page.goto(f"{site.url}/crosstable/{variant}")
    expect(page.locator("#crosstable")).to_be_visible()
    headers = {text.strip() for text in page.locator("#crosstable thead th").all_inner_texts()}
    assert set(cli_bots(site, "--variant", variant)) <= headers
    screenshot(page, f"crosstable-{variant}")


# -- a running tournament ------------------------------------------------------------------

# Long enough to watch (about 10 s alone on a laptop; it is killed long before the end).
RUNNING = ["--players", "3", "--rounds", "8", "--games", "90", "--concurrency", "1", "--no-samples",
           *(arg for bot in ("ann-live", "bob-live", "cy-live")
             for arg in ("--bot", f"{bot}={sys.executable} -m sample_bots.random_bot"))]


def _stored_tournament(db: Path, deadline: float) -> tuple[str, int]:
    """The id of the one tournament in ``db`` and its stored games, once it has some."""
    from arena.store import Store

    while time.monotonic() < deadline:
        if db.exists():
            try:
                with Store(str(db)) as store:
                    found = store.list_tournaments()
                    if found and found[0].matches > 0:
                        return found[0].id, found[0].matches
            except Exception:  # noqa: BLE001 (the other process may be creating the schema right now)
                pass
        time.sleep(0.2)
    pytest.fail("the tournament stored no game in time", pytrace=False)


def test_a_running_tournament_updates_itself_then_says_interrupted(tmp_path: Path, page: Page, screenshot: Shoot,
                                                                    web_over: Callable[[Path], str]) -> None:
    db = tmp_path / "live.db"
    with (tmp_path / "tournament.out").open("w") as out:
        runner = subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", *RUNNING, "--db", str(db)],
                                  cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        tournament, _ = _stored_tournament(db, time.monotonic() + 60)
        url = web_over(db)
        page.goto(f"{url}/tournaments/{tournament}")
        expect(page.locator("#status")).to_have_text("running")
        page.evaluate("window.notReloaded = true")
        shown = int(page.locator("#games-stored").text_content() or "0")
        # The count grows on the page by itself, while the page stays the same document.
        page.wait_for_function(f"Number(document.getElementById('games-stored').textContent) > {shown}",
                               timeout=15_000)
        assert page.evaluate("window.notReloaded === true")
        expect(page.locator("#progress")).to_have_text(re.compile(r"^\s*\d+ / 90\s*$"))
        assert runner.poll() is None, "the tournament finished before it could be interrupted"
        screenshot(page, "tournament-running")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=30)
    page.reload()
    expect(page.locator("#status")).to_have_text("interrupted")
    expect(page.locator("#resume")).to_have_text(f"arena tournament --resume {tournament} --db live.db")
    screenshot(page, "tournament-interrupted")


def test_a_bot_page_from_the_board(site: Site, page: Page, screenshot: Shoot) -> None:
    page.goto(f"{site.url}/leaderboard/classic")
    bot = board_bots(page)[0]
    page.locator("#board tbody a.bot-link", has_text=bot).first.click()
    expect(page.locator("h1")).to_have_text(f"Bot {bot}")
    expect(page.locator("#bot-variants tbody tr[data-variant=classic]")).to_have_count(1)
    screenshot(page, "bot")


@pytest.mark.parametrize("kind", ["classic-secret", "extreme"])
def test_an_exported_replay_opened_from_disk_ends_on_the_stored_totals(site: Site, page: Page, screenshot: Shoot,
                                                                       tmp_path: Path, kind: str) -> None:
    match = site.matches[kind]
    out = tmp_path / "boards"
    arena_stdout("leaderboard", "--db", str(site.db), "--export", str(out), "--replays", match.match_id,
                 cwd=site.folder)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto((out / "matches" / f"{match.match_id}.html").as_uri())
    expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
    step_to_the_end_on_the_table(page, match.decisions)
    expect(page.locator("#totals")).to_have_attribute("data-totals", match.totals)
    assert page.evaluate(READ_FELT)["totals"] == match.totals
    # Offline: the page asked for nothing but itself (and its data: icon).
    assert all(url.startswith(("file://", "data:")) for url in requests), requests
    page.locator("nav a").first.click()      # its board, exported beside it
    page.wait_for_load_state()
    assert page.url.startswith("file://") and page.url.endswith(".html")
    assert page.locator("table tr").count() > 1
    screenshot(page, f"exported-match-{kind}")
