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

``page`` (test): a fresh page that records console errors and uncaught exceptions; a
test whose pages logged any fails at teardown. ``screenshot(page, name)`` saves a
picture under test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
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
SERVER_START_SECONDS = 30


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


def arena(*args: str, cwd: Path) -> str:
    """Run one `arena` command as its own process; its stdout, or the test fails with its stderr."""
    done = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"arena {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


def arena_json(*args: str, cwd: Path) -> Any:
    return json.loads(arena(*args, "--format", "json", cwd=cwd))


@dataclass(frozen=True)
class Match:
    """One stored match, as the CLI reports it (`arena matches`, `arena export`)."""

    match_id: str
    decisions: int
    totals: str  # "t0,t1,..." by seat: the format of the viewer's data-totals


@dataclass
class Site:
    """A running `arena web` over a database filled by one tournament of each kind."""

    url: str
    db: Path
    folder: Path
    # kind ("classic-hidden", "classic-secret", "extreme") -> its tournament's id, and one
    # of its matches: id, decisions, stored totals as the viewer's #totals carries them.
    tournaments: dict[str, str] = field(default_factory=dict)
    matches: dict[str, Match] = field(default_factory=dict)

    def cli_json(self, *args: str) -> Any:
        """`arena ARGS --format json --db DB` against this site's database, parsed."""
        return arena_json(*args, "--db", str(self.db), cwd=self.folder)


def _kind(config: dict[str, Any]) -> str:
    return "extreme" if config["variant"] == "extreme" else f"classic-{config['bidding']}"


def _fill(folder: Path, db: Path) -> tuple[dict[str, str], dict[str, Match]]:
    """Play the three tournaments; map each kind to its tournament and to one of its matches."""
    for options in KINDS.values():
        arena("tournament", *QUICK, *options, "--db", str(db), cwd=folder)
    tournaments: dict[str, str] = {}
    matches: dict[str, Match] = {}
    for match in arena_json("matches", "--limit", "1000", "--db", str(db), cwd=folder):
        if match["tournament_id"] in tournaments.values():
            continue
        record = json.loads(arena("export", match["match_id"], "--db", str(db), cwd=folder))
        kind = _kind(record["config"])
        tournaments[kind] = match["tournament_id"]
        totals = ",".join(str(total) for total in record["totals"])
        matches[kind] = Match(match["match_id"], match["decisions"], totals)
    assert sorted(matches) == sorted(KINDS), matches
    return tournaments, matches


def _read_lines(stream: Any, lines: queue.Queue[str]) -> None:
    """Read the server's stdout on a thread: the first line is the address; the rest are
    drained so a chatty server never blocks on a full pipe."""
    for line in stream:
        lines.put(line)


class WebServer:
    """`arena web --port 0` on ``db`` as a real process; ``url`` is the address it
    prints, its stderr goes to ``web.stderr`` beside the database."""

    def __init__(self, db: Path) -> None:
        self.stderr_path = db.parent / "web.stderr"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "arena.cli", "web", "--db", str(db), "--port", "0"],
                                        cwd=db.parent, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_read_lines, args=(self.process.stdout, lines), daemon=True).start()
        try:
            first = lines.get(timeout=SERVER_START_SECONDS)
        except queue.Empty:
            first = ""
        if not first.startswith("serving http://"):
            self.stop()
            pytest.fail(f"arena web did not start: stdout {first!r}, stderr:\n{self.stderr_path.read_text()}",
                        pytrace=False)
        self.url = first.split()[1].rstrip("/")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


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

