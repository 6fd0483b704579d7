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

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser_fixtures import browser, page, screenshot  # noqa: F401  (the fixtures, for these tests)
from factories.browser_site import Match, Site
from factories.commands import arena_stdout
from factories.web_server import WebServer

from arena.store import Store

if TYPE_CHECKING:
    pass

RANDOM_BOT = f"{sys.executable} -m sample_bots.random_bot"
# Small on purpose: three bots, three rounds, six games each (the seat rotation twice).
# Names no page shows otherwise, so finding one on a page means the page lists that bot.
BOTS = ["ada-rand", "bea-rand", "cy-rand"]
QUICK = ["--players", "3", "--rounds", "3", "--games", "6", "--no-samples",
         *(arg for bot in BOTS for arg in ("--bot", f"{bot}={RANDOM_BOT}"))]
# The three kinds of match the viewer must step through, and the options that make them.
# Extreme is played at four seats (a fourth bot joins): the table's side seats sit
# furthest out there, so the seat-bounds check sees the widest layout.
KINDS = {
    "classic-hidden": ["--variant", "classic", "--bidding", "hidden", "--seed", "11"],
    "classic-secret": ["--variant", "classic", "--bidding", "secret", "--seed", "12"],
    "extreme": ["--variant", "extreme", "--seed", "13", "--players", "4", "--bot", f"dee-rand={RANDOM_BOT}"],
}


def _kind(config: dict[str, Any]) -> str:
    return "extreme" if config["variant"] == "extreme" else f"classic-{config['bidding']}"


def _fill(folder: Path, db: Path) -> tuple[dict[str, str], dict[str, Match]]:
    """Play the three tournaments; map each kind to its tournament and to one of its matches."""
    for options in KINDS.values():
        arena_stdout("tournament", *QUICK, *options, "--db", str(db), cwd=folder)
    tournaments: dict[str, str] = {}
    matches: dict[str, Match] = {}
    with Store(str(db)) as store:     # read in this process: a command per match cost seconds
        for summary in store.list_matches(limit=1000):
            if summary.tournament_id is None or summary.tournament_id in tournaments.values():
                continue
            record = store.load_match(summary.match_id)
            kind = _kind(record.config.to_dict())
            tournaments[kind] = summary.tournament_id
            matches[kind] = Match(summary.match_id, summary.decisions, ",".join(str(t) for t in record.totals))
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
