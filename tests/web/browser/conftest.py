"""Fixtures for the real-browser tests: a real Chromium, a real `arena web` process, a
real database filled by real tournaments.

``browser`` (session): Debian's Chromium (``apt install chromium``, ``/usr/bin/chromium``)
driven by Playwright for Python. Playwright is pointed at that binary, so no
``playwright install`` download is needed. Without the browser or Playwright the tests
skip with one line saying why, except in CI (env ``CI`` set), where they fail: CI must
run them.

``site`` (module): three short tournaments (classic with hidden bids, classic with secret
bids, Extreme) played by sample bots into one SQLite file, then ``arena web --port 0``
serving it as its own process; stopped at the end of the module.

The `arena` runs, the ``Site`` and ``arena web`` as a process (``WebServer``) are in
factories.py.

``page`` (test): a fresh page that records console errors and uncaught exceptions; a
test whose pages logged any fails at teardown. ``screenshot(page, name)`` saves a
picture under test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from factories import ROOT, Match, Site, WebServer, arena_json, arena_stdout

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
RANDOM_BOT = f"{sys.executable} -m sample_bots.random_bot"
# Small on purpose: three bots, three rounds, six games each (the seat rotation twice).
# Names no page shows otherwise, so finding one on a page means the page lists that bot.
BOTS = ["ada-rand", "bea-rand", "cy-rand"]
QUICK = ["--players", "3", "--rounds", "3", "--games", "6", "--no-samples",
         *(arg for bot in BOTS for arg in ("--bot", f"{bot}={RANDOM_BOT}"))]
# The three kinds of match the viewer must step through, and the options that make them.
KINDS = {
    "classic-hidden": ["--variant", "classic", "--bidding", "hidden", "--seed", "11"],
    "classic-secret": ["--variant", "classic", "--bidding", "secret", "--seed", "12"],
    "extreme": ["--variant", "extreme", "--seed", "13"],
}


def _unavailable(reason: str) -> None:
    """Skip outside CI; in CI a missing browser is a broken setup, so fail loudly."""
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium per module (starting one costs about a second). Not per
    session: Playwright's sync API keeps an event loop running in this thread while it
    is open, and every later test that calls asyncio.run() would fail."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} not found (apt install chromium)")
    with sync_playwright() as p:
        try:
            # --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
            launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Error as error:
            _unavailable(f"{CHROMIUM} does not start: {str(error).splitlines()[0]}")
        yield launched
        launched.close()


def _kind(config: dict[str, Any]) -> str:
    return "extreme" if config["variant"] == "extreme" else f"classic-{config['bidding']}"


def _fill(folder: Path, db: Path) -> tuple[dict[str, str], dict[str, Match]]:
    """Play the three tournaments; map each kind to its tournament and to one of its matches."""
    for options in KINDS.values():
        arena_stdout("tournament", *QUICK, *options, "--db", str(db), cwd=folder)
    tournaments: dict[str, str] = {}
    matches: dict[str, Match] = {}
    for match in arena_json("matches", "--limit", "1000", "--db", str(db), cwd=folder):
        if match["tournament_id"] in tournaments.values():
            continue
        record = json.loads(arena_stdout("export", match["match_id"], "--db", str(db), cwd=folder))
        kind = _kind(record["config"])
        tournaments[kind] = match["tournament_id"]
        totals = ",".join(str(total) for total in record["totals"])
        matches[kind] = Match(match["match_id"], match["decisions"], totals)
    assert sorted(matches) == sorted(KINDS), matches
    return tournaments, matches


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Fill a database, start `arena web --port 0` on it, read the address it prints."""
    folder = tmp_path_factory.mktemp("web")
    db = folder / "arena.db"
    tournaments, matches = _fill(folder, db)
    server = WebServer(db)
    try:
        yield Site(url=server.url, db=db, folder=folder, tournaments=tournaments, matches=matches)
    finally:
        server.stop()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page (own context: nothing shared between tests); any console error or
    uncaught exception on any page it visits fails the test at teardown."""
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # A document that answers 404 on purpose logs its own failed load: not a fault of
        # the page (a missing script, style or icon has another URL and still counts).
        own_404 = message.location.get("url") == opened.url and "status of 404" in message.text
        if message.type == "error" and not own_404:
            errors.append(f"console: {message.text} ({opened.url})")

    opened.on("console", on_console)
    opened.on("pageerror", lambda error: errors.append(f"exception: {error} ({opened.url})"))
    yield opened
    context.close()
    if errors:
        pytest.fail("errors in the browser:\n" + "\n".join(errors), pytrace=False)


@pytest.fixture
def screenshot() -> Callable[[Page, str], None]:
    """``screenshot(page, name)``: keep a picture of the page for people (CI artifacts),
    compared to nothing."""

    def take(page: Page, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    return take

