"""Every page `arena web` serves fits a phone: opened in a real Chromium at 390x844 (a
phone's viewport, touch, device scale factor 2), no page is wider than the screen (a
wide table scrolls inside its own box, with a shadow at the edge that has more), the
navigation wraps without a "·" left alone on a line, and no page logs an error.

The database is written straight into a store (real engine games, ``factories.records``):
a finished classic and a finished Extreme tournament of four bots with long names, one
of which crashed and faulted (so the board has its Crashes column), and an interrupted
duplicate tournament whose stored match is still private (a 403 page). `arena web`
serves it as its own process, once for the module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Outside CI, no Playwright means a skip (one line); in CI the import below fails the run.
if not os.environ.get("CI"):
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
from browser_fixtures import watched_page  # noqa: E402
from factories.records import played  # noqa: E402
from factories.tournaments import running_tournament  # noqa: E402
from factories.web_server import WebServer  # noqa: E402
from playwright.sync_api import Browser, Page, expect  # noqa: E402
from starlette.routing import Route  # noqa: E402

from arena.records import BotCrash, FaultRecord  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.web.app import routes as app_routes  # noqa: E402
from engine import GameConfig  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

    Shoot = Callable[[Page, str], None]

# Real processes, a real browser: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
BOTS = ["heuristic-classic", "node-heuristic", "lookahead-search", "crashy-memory-hog"]
CRASHY = BOTS[-1]
OOM = "killed: out of memory (limit 512 MiB)"


@dataclass(frozen=True)
class PhoneSite:
    url: str
    paths: dict[str, str]      # what each page is, and its path


def _tournament(store: Store, variant: str, games: int, seed: int) -> tuple[str, list[str]]:
    """A finished round-robin of BOTS at four seats, its games played and stored; its id
    and its match ids. The crashy bot is charged a timeout in each of its matches."""
    from arena.tournament.lineup import BotEntry
    from arena.tournament.runner import match_spec
    from arena.tournament.settings import TournamentSettings, schedule_of

    settings = TournamentSettings(game=GameConfig(variant=variant, players=4, rounds=3), games=games, seed=seed,
                                  deals="independent", bots=[BotEntry(name, ["bot"]) for name in BOTS])
    tournament = store.create_tournament(settings.to_dict(), seed, status="running")
    ids = []
    for game in schedule_of(settings):
        spec = match_spec(settings, tournament, game)
        record = played(spec.match_id, variant, list(game.bots), game.seed)
        record.tournament_id, record.game_index = tournament, game.index
        record.faults = [FaultRecord(record.bots.index(CRASHY), CRASHY, "timeout", "no answer within 1 s")]
        store.save_match(record)
        ids.append(spec.match_id)
    store.set_tournament_status(tournament, "finished")
    return tournament, ids


def _fill(db: Path) -> dict[str, str]:
    with Store(str(db)) as store:
        classic, classic_ids = _tournament(store, "classic", 8, 21)
        extreme, extreme_ids = _tournament(store, "extreme", 4, 22)
        at = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
        store.save_crash(BotCrash(CRASHY, "exited with code 1", 1, classic, at=at))
        store.save_crash(BotCrash(CRASHY, OOM, None, classic, restarted=True, at=at.replace(hour=13)))
        interrupted, private_ids, _ = running_tournament(store, stored=1)
    return {
        "index": "/",
        "classic board": "/leaderboard/classic",
        "extreme board": "/leaderboard/extreme",
        "a tournament's board": f"/leaderboard/classic?tournament={classic}",
        "classic crosstable": "/crosstable/classic",
        "extreme crosstable": "/crosstable/extreme",
        "a tournament's crosstable": f"/crosstable/classic?tournament={classic}",
        "a tournament": f"/tournaments/{classic}",
        "an interrupted tournament": f"/tournaments/{interrupted}",
        "a bot that crashed": f"/bots/{CRASHY}",
        "a bot": f"/bots/{BOTS[1]}",
        "a classic match": f"/matches/{classic_ids[0]}",
        "an extreme match": f"/matches/{extreme_ids[0]}",
        "live": "/live",
        "a private match (403)": f"/matches/{private_ids[0]}",
        "an unknown match (404)": "/matches/no-such-match-0123456789abcdef0123456789abcdef",
        "an unknown bot (404)": "/bots/nobody-of-that-name-at-all",
        "an unknown variant (404)": "/leaderboard/chess",
        "an unknown path (404)": "/no/such/page",
        "a live match no referee plays (404)": "/live/no-such-match-0123456789abcdef",
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoneSite]:
    db = tmp_path_factory.mktemp("phone") / "arena.db"
    paths = _fill(db)
    server = WebServer(db)
    try:
        yield PhoneSite(server.url, paths)
    finally:
        server.stop()


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    """A page in a phone's viewport, watched for console errors (``watched_page``)."""
    with watched_page(browser, **PHONE) as page:
        yield page


# The page's width and the screen's, and (for the message) what sticks out past the
# screen's right edge outside the boxes that scroll or clip.
WIDTHS = """() => {
  const width = document.documentElement.clientWidth;
  const inBox = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible") return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const right = el.getBoundingClientRect().right;
    if (right > width + 0.5 && !inBox(el)) {
      out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " ends at " + Math.round(right));
    }
  }
  return {scroll: document.documentElement.scrollWidth, client: width, out: out.slice(0, 8)};
}"""

# The navigation's text, line by line as it is drawn, its text nodes, and its links' right edges.
NAV = """() => {
  const nav = document.querySelector("nav");
  const walker = document.createTreeWalker(nav, NodeFilter.SHOW_TEXT);
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode.textContent);
  return {lines: nav.innerText.split("\\n"), texts: texts,
          rights: [...nav.querySelectorAll("a")].map((a) => a.getBoundingClientRect().right)};
}"""


def open_on_phone(page: Page, url: str) -> None:
    """Open the page and wait until its scripts have drawn it (a match page: the viewer's
    step counter, filled once it has fetched the match)."""
    page.goto(url, wait_until="load")
    if page.locator("#viewer").count():
        expect(page.locator("#step")).to_have_text(re.compile(r"/\s*\d+\s*$"))


PAGES = ["index", "classic board", "extreme board", "a tournament's board", "classic crosstable",
         "extreme crosstable", "a tournament's crosstable", "a tournament", "an interrupted tournament",
         "a bot that crashed", "a bot", "a classic match", "an extreme match", "live", "a private match (403)",
         "an unknown match (404)", "an unknown bot (404)", "an unknown variant (404)", "an unknown path (404)",
         "a live match no referee plays (404)"]


def test_the_pages_are_every_page(site: PhoneSite) -> None:
    """Every page route of the app (not /api/, not /static) has a page here: a route
    added later is measured too, once it is named above."""
    assert sorted(PAGES) == sorted(site.paths)
    paths = [path.split("?")[0] for path in site.paths.values()]
    for route in app_routes:
        if isinstance(route, Route) and not route.path.startswith("/api/"):
            assert any(route.path_regex.match(path) for path in paths), f"no page here opens {route.path}"


@pytest.mark.parametrize("name", PAGES)
def test_every_page_fits_a_phone(site: PhoneSite, phone: Page, name: str) -> None:
    open_on_phone(phone, site.url + site.paths[name])
    widths: dict[str, Any] = phone.evaluate(WIDTHS)
    assert widths["scroll"] <= widths["client"], f"{name} is {widths['scroll']} px wide on a " \
        f"{widths['client']} px screen: {widths['out']}"
    nav: dict[str, Any] = phone.evaluate(NAV)
    assert not [text for text in nav["texts"] if "·" in text], nav["texts"]
    assert all(line.strip() and not line.strip().startswith("·") and not line.strip().endswith("·")
               for line in nav["lines"]), nav["lines"]
    assert max(nav["rights"]) <= widths["client"], nav


@pytest.mark.parametrize(("name", "table", "shot"), [("classic board", "#board", "phone-leaderboard"),
                                                     ("classic crosstable", "#crosstable", "phone-crosstable"),
                                                     ("a bot that crashed", "#bot-variants", "phone-bot")])
def test_a_wide_table_scrolls_in_its_own_box_and_shows_it(site: PhoneSite, phone: Page, screenshot: Shoot,
                                                          name: str, table: str, shot: str) -> None:
    open_on_phone(phone, site.url + site.paths[name])
    screenshot(phone, shot)
    box = phone.locator(table).locator("xpath=..")
    shown: dict[str, Any] = box.evaluate("""(box) => {
      const style = getComputedStyle(box);
      const before = [box.scrollWidth, box.clientWidth];
      box.scrollLeft = box.scrollWidth;
      const last = box.querySelector("thead th:last-child, tbody tr:first-child > :last-child");
      return {overflow: style.overflowX, hint: style.backgroundImage, widths: before,
              lastRight: last.getBoundingClientRect().right, screen: document.documentElement.clientWidth};
    }""")
    assert shown["overflow"] == "auto" and shown["widths"][0] > shown["widths"][1], shown
    assert "gradient" in shown["hint"], shown      # the edge's shadow says there is more
    assert shown["lastRight"] <= shown["screen"] + 0.5, shown      # scrolled: its last column on screen


def test_the_crashed_bots_page_on_a_phone_says_its_crashes_and_faults(site: PhoneSite, phone: Page) -> None:
    open_on_phone(phone, site.url + site.paths["a bot that crashed"])
    expect(phone.locator("#bot-crash-count")).to_have_text("2")
    expect(phone.locator("#bot-fault-count")).to_have_text("12")     # a timeout in each of its 12 matches
    expect(phone.locator("#bot-last-crash")).to_contain_text(OOM)
    assert phone.locator("#bot-last-crash").bounding_box()["width"] <= 390
