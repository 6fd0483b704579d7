"""Builders the tests share: plain functions and classes, no fixtures (those are in
conftest.py). Every test module imports what it needs from here (``from factories import
played``: tests/ is on sys.path under pytest, through tests/conftest.py), never from another
test module.

* records: ``played`` (a real engine game of random decisions, as the referee records it),
  ``classic_record`` and ``extreme_record`` (hand-made records for the boards);
* older databases: ``as_schema_1``, ``as_schema_2``, ``as_schema_3`` (a store turned into
  what an older arena wrote) and ``drop_schema_5``; ``wipe_postgres``;
* the sample bots as processes: ``ROOT``, ``NODE_BOT``, ``node_available``, ``sample_bot_command``;
  ``DroppingProxy`` (a network that drops a bot's connections);
* live viewing: ``slow_tournament`` (a tournament slow enough to watch), ``running_match``,
  ``card_names`` and ``moment`` (the truth to hold a live view against once the match is
  over), ``get_json``;
* ``arena web`` as its own process: ``WebServer``, ``http_fetch``, ``wait_for``;
  ``arena_stdout``, ``arena_json``, ``Site`` and ``Match`` (the browser tests' site).

The live-viewing check is an attacker's: every card name found in what a live viewer was
given (a page's text and HTML, an event stream's data) must have been public at that moment
of the match, and none may be a card some seat still held. The moment is the number of
decisions played so far; the stored record replayed through the engine to that point says
which cards were public and which were still in hands.

Import-light like conftest.py: nothing from the store, SQLAlchemy or grpc at import time.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from arena.records import FaultRecord, MatchRecord, final_places
from engine import GameConfig, new_game, replay_record
from engine.classic_cards import CODES as CLASSIC_CARDS
from engine.extreme_cards import CODES as EXTREME_CARDS

if TYPE_CHECKING:
    from arena.store import Store

ROOT = Path(__file__).resolve().parent.parent        # the checkout
TEST_BOTS = ROOT / "tests" / "bots"                 # the test bot programs (bots.harness's BOTS_DIR)
NODE_BOT = ROOT / "sample_bots" / "node_bot"


# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------


def played(match_id: str, variant: str, bots: list[str], seed: int, forfeited: list[bool] | None = None,
           rounds: int | None = 3, play_seed: int | None = None, **options: Any) -> MatchRecord:
    """A real engine game of random decisions (``rounds`` rounds, None: the variant's full
    length; ``options`` as GameConfig's), wrapped as the referee would. The cards come
    from ``seed``, the decisions from ``play_seed`` (by default the same seed)."""
    config = GameConfig(variant=variant, players=len(bots), seed=seed, rounds=rounds, **options)
    game = new_game(config)
    rng = random.Random(seed if play_seed is None else play_seed)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    result = game.result()
    forfeited = forfeited or [False] * len(bots)
    return MatchRecord(
        match_id=match_id, variant=variant, config=config.to_dict(), seed=seed, bots=bots,
        bot_versions=["1"] * len(bots), totals=list(result.totals),
        places=final_places(list(result.totals), forfeited, result.higher_is_better), forfeited=forfeited,
        result=result.to_json(), actions=[list(a) for a in game.actions],
        latencies_ms=[round(rng.uniform(0.1, 3.0), 3) for _ in game.actions],
    )


def classic_record(match_id: str, seats: list[tuple[str, int, int, int]], faults: list[FaultRecord] | None = None,
                   tournament_id: str | None = None, game_index: int | None = None) -> MatchRecord:
    """A classic record from ``(bot, total, place, exact bids out of 2 rounds)`` per seat."""
    rounds = [[{"score": 0, "bid": 1, "tricks": 1 if exact > r else 0} for _, _, _, exact in seats] for r in range(2)]
    return MatchRecord(
        match_id=match_id, variant="classic", config={"variant": "classic", "players": len(seats)}, seed=0,
        bots=[s[0] for s in seats], bot_versions=["1"] * len(seats), totals=[s[1] for s in seats],
        places=[s[2] for s in seats], forfeited=[False] * len(seats),
        result={"variant": "classic", "rounds": rounds}, actions=[], latencies_ms=[], faults=faults or [],
        tournament_id=tournament_id, game_index=game_index,
    )


def extreme_record(match_id: str, seats: list[tuple[str, int, int]]) -> MatchRecord:
    """An Extreme record from ``(bot, total, place)`` per seat."""
    return MatchRecord(
        match_id=match_id, variant="extreme", config={"variant": "extreme"}, seed=0,
        bots=[s[0] for s in seats], bot_versions=["1"] * len(seats), totals=[s[1] for s in seats],
        places=[s[2] for s in seats], forfeited=[False] * len(seats), result={"variant": "extreme"},
        actions=[], latencies_ms=[],
    )


# --------------------------------------------------------------------------------------
# Databases: a store turned into what an older arena wrote; PostgreSQL wiped
# --------------------------------------------------------------------------------------


V1_COLUMNS = {
    "match_seats": ["match_pk", "seat", "bot_id", "bot_version", "total", "place", "forfeited", "faults", "rounds",
                    "exact_bids"],
    "bot_totals": ["bot_id", "variant", "tournament_key", "games", "seats", "score_sum", "place_sum", "rounds",
                   "exact_bids", "faults", "forfeits"],
}


V2_COLUMNS = {
    "matches": ["id", "match_id", "tournament_id", "game_index", "variant", "players", "config_json", "seed",
                "status", "started_at", "finished_at", "result_json", "decisions", "median_latency_ms",
                "max_latency_ms"],
    "match_seats": V1_COLUMNS["match_seats"] + ["timeouts"],
}


def as_schema_3(store: Store) -> str:
    """Turn a store into what the arena before schema 4 would have written (no schedule
    or lease tables, no Elo cursor) and close it; return its URL to open it again."""
    url = store.engine.url.render_as_string(hide_password=False)
    _drop_schema_4(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE arena_meta SET value = '3' WHERE key = 'schema_version'")
    store.close()
    return url


def drop_schema_5(store: Store) -> None:
    """Take away what schema 5 added: the crash table (its indexes go with it) and the
    matches' private flag."""
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE bot_crashes")
        conn.exec_driver_sql("ALTER TABLE matches DROP COLUMN private")


def _drop_schema_4(store: Store) -> None:
    drop_schema_5(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE work_units")
        conn.exec_driver_sql("DROP TABLE scheduled_games")
        conn.exec_driver_sql("ALTER TABLE tournaments DROP COLUMN elo_next")


def _drop_schema_3_columns(store: Store) -> None:
    _drop_schema_4(store)
    with store.engine.begin() as conn:
        for table, column in (("matches", "time_bank_ms"), ("match_seats", "think_max_ms"),
                              ("match_seats", "bank_used_ms")):
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")


def as_schema_2(store: Store) -> str:
    """Turn a store into what the arena before schema 3 would have written (the same
    rows, without the new columns) and close it; return its URL to open it again."""
    from sqlalchemy import inspect

    url = store.engine.url.render_as_string(hide_password=False)
    _drop_schema_3_columns(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE arena_meta SET value = '2' WHERE key = 'schema_version'")
    with store.engine.connect() as conn:
        for table, columns in V2_COLUMNS.items():
            assert [c["name"] for c in inspect(conn).get_columns(table)] == columns
    store.close()
    return url


def as_schema_1(store: Store) -> str:
    """Turn a store into what the arena before schema 2 would have written (the same
    rows, without the new columns) and close it; return its URL to open it again."""
    from sqlalchemy import inspect

    url = store.engine.url.render_as_string(hide_password=False)
    _drop_schema_3_columns(store)
    with store.engine.begin() as conn:
        for table, column in (("match_seats", "timeouts"), ("bot_totals", "timeouts"),
                              ("bot_totals", "think_histogram")):
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.exec_driver_sql("UPDATE arena_meta SET value = '1' WHERE key = 'schema_version'")
    with store.engine.connect() as conn:
        for table, columns in V1_COLUMNS.items():
            assert [c["name"] for c in inspect(conn).get_columns(table)] == columns
    store.close()
    return url


def wipe_postgres(url: str) -> None:
    """Empty the PostgreSQL database at ``url`` (its public schema dropped and made again)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


# --------------------------------------------------------------------------------------
# The sample bots as processes; a network that drops
# --------------------------------------------------------------------------------------


def node_available() -> str | None:
    """Why the Node.js bot cannot run here, or None when it can (installing its packages
    with ``npm ci`` first if they are missing)."""
    if shutil.which("node") is None:
        return "node is not installed"
    installed = NODE_BOT / "node_modules" / "@grpc" / "grpc-js"
    if not installed.is_dir():
        if shutil.which("npm") is None:
            return "npm is not installed, so the Node bot's packages cannot be installed"
        # The test processes (pytest-xdist) may all get here at once on a fresh checkout:
        # one installs, the others wait for it (npm ci first empties node_modules).
        with open(Path(tempfile.gettempdir()) / "wizard-arena-tests-npm.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not installed.is_dir():
                done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_BOT,
                                      capture_output=True, text=True, timeout=180)
                if done.returncode != 0:
                    pytest.fail(f"npm ci failed in {NODE_BOT}:\n{done.stderr[-2000:]}")
    return None


def node_or_skip() -> None:
    """Skip the test when the Node.js sample bot cannot play here (no node, no npm install)."""
    reason = node_available()
    if reason:
        pytest.skip(f"Node.js bot not playable: {reason}")


def python_bot(name: str) -> list[str]:
    """A Python sample bot, as a file or as a module (both forms run)."""
    if name in ("greedy", "cautious"):
        return [sys.executable, "-m", f"sample_bots.{name}_bot"]
    return [sys.executable, str(ROOT / "sample_bots" / f"{name}_bot.py")]


def sample_bot_command(name: str) -> list[str]:
    """How a sample bot is started; two bots use the ``python -m`` form so both forms run."""
    if name == "node-heuristic":
        return ["node", str(NODE_BOT / "bot.js")]
    if name in ("greedy", "cautious"):
        return [sys.executable, "-m", f"sample_bots.{name}_bot"]
    return [sys.executable, str(ROOT / "sample_bots" / f"{name}_bot.py")]


@dataclass
class DroppingProxy:
    """A TCP proxy between a bot and the arena whose connections can be cut at will:
    what a flaky network does to a bot."""

    upstream_port: int
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    accepted: int = 0
    accepted_at: list[float] = field(default_factory=list)   # time.monotonic() of each connection
    dropped_at: float | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.accepted_at.append(time.monotonic())
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def drop(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    async def stop(self) -> None:
        self.drop()
        self.server.close()

    async def run_match_dropping_midway(self, arena: Any, spec: Any) -> Any:
        """Run ``spec`` on ``arena`` (an ArenaThread) and cut every proxied connection once
        the match is well under way (20 actions in); return the finished match's record."""
        match = asyncio.wrap_future(arena.submit(arena.arena.run_match(spec)))
        server = arena.arena
        while not server.running or len(next(iter(server.running.values())).game.actions) < 20:
            await asyncio.sleep(0.005)
        assert not match.done(), "the match ended before the drop; make it longer"
        self.dropped_at = time.monotonic()
        self.drop()
        return await asyncio.wait_for(match, 60)


# --------------------------------------------------------------------------------------
# Live viewing: a tournament slow enough to watch, and the truth to hold a live view against
# --------------------------------------------------------------------------------------


SLOW_BOT = TEST_BOTS / "slow_bot.py"
# Not card names: a bot's name on a page must not pass for a card.
LIVE_BOTS = ("ann", "bob", "cy")
CARDS = {"classic": frozenset(CLASSIC_CARDS), "extreme": frozenset(EXTREME_CARDS)}


def slow_tournament(folder: Path, db: Path, *options: str, sleep_ms: int = 30) -> subprocess.Popen[str]:
    """`arena tournament` as its own process, three bots that each think ``sleep_ms`` per
    decision: a match lasts seconds, long enough to be watched. Output in ``tournament.out``.
    Independent deals unless ``options`` say otherwise: a duplicate deal's matches are
    private (their cards are the hands of its other rotations) and cannot be watched."""
    if "--deals" not in options:
        options = ("--deals", "independent", *options)
    bots = [arg for name in LIVE_BOTS for arg in
            ("--bot", f"{name}={sys.executable} {SLOW_BOT} --name {name} --slow 1000000 --sleep-ms {sleep_ms}")]
    with (folder / "tournament.out").open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", "--players", "3", "--concurrency",
                                 "1", "--no-samples", *bots, *options, "--db", str(db)],
                                cwd=folder, stdout=out, stderr=subprocess.STDOUT, text=True)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def running_match(base: str, timeout: float = 60.0) -> str:
    """The id of a match `arena web` at ``base`` lists as running, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        matches = get_json(f"{base}/api/live")["matches"]
        if matches:
            return str(matches[0]["match_id"])
        time.sleep(0.1)
    raise AssertionError(f"no running match was listed at {base}/api/live in {timeout:g} s")


def card_names(text: str, variant: str) -> set[str]:
    """The card names in ``text``, as whole words (``r1`` is not found in ``r13`` or ``xr1``).

    >>> sorted(card_names("ann plays r13 · xr1 · W2, trump y7", "classic"))
    ['W2', 'r13', 'y7']
    """
    return {word for word in re.findall(r"[A-Za-z0-9]+", text) if word in CARDS[variant]}


@dataclass(frozen=True)
class Moment:
    """The match after its first ``decisions`` decisions."""

    public: frozenset[str]      # every card the public events had named by then
    held: frozenset[str]        # every card still in some hand
    bids_revealed: bool         # whether this round's bids are public (always, with open bidding)


def moment(record: dict[str, Any], decisions: int) -> Moment:
    """The truth about ``record`` (a stored match, ``arena export``) after ``decisions`` decisions."""
    game = replay_record(record["config"], record["actions"][:decisions])
    public, _ = game.events_for(None, 0)
    held = set().union(*(game.observe(seat)["hand"] for seat in range(len(record["bots"]))))
    this_round = public[max(i for i, e in enumerate(public) if e["type"] == "round_start"):]
    revealed = record["config"].get("bidding", "open") == "open" or any(
        e["type"] == "bids_revealed" for e in this_round)
    return Moment(frozenset(card_names(json.dumps(public), record["variant"])), frozenset(held), revealed)


# --------------------------------------------------------------------------------------
# `arena web` as its own process, read over HTTP
# --------------------------------------------------------------------------------------


SERVER_START_SECONDS = 30
WEB_BOTS = ["ann", "bob", "cy<&>"]     # the web tests' database (conftest.py's web_db): a name that must be escaped
# (status, body, the Location header if any) of one GET.
Fetch = Callable[[str], tuple[int, str, str]]


def http_fetch(base: str) -> Fetch:
    def fetch(path: str) -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(base + path, timeout=120) as answer:
                return answer.status, answer.read().decode(), ""
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), error.headers.get("Location", "")

    return fetch


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout:g} s"
        time.sleep(0.1)


def first_line(process: subprocess.Popen[str], timeout: float) -> tuple[str, queue.Queue[str]]:
    """The first line a server process prints (its address), "" if none comes within
    ``timeout`` seconds; and the queue its later lines go to. Its stdout is read on a
    thread, so that a chatty server never blocks on a full pipe."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
    try:
        return lines.get(timeout=timeout), lines
    except queue.Empty:
        return "", lines


def _read_lines(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))


class WebServer:
    """`arena web --port 0 ARGS` on ``db`` as a real process; ``url`` is the address it
    prints, its stderr goes to ``web.stderr`` beside the database."""

    def __init__(self, db: Path, *args: str) -> None:
        self.stderr_path = db.parent / "web.stderr"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "arena.cli", "web", "--db", str(db), "--port", "0",
                                         *args], cwd=db.parent, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        first, _ = first_line(self.process, SERVER_START_SECONDS)
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


def arena_stdout(*args: str, cwd: Path) -> str:
    """Run one `arena` command as its own process; its stdout, or the test fails with its stderr."""
    done = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"arena {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


def arena_json(*args: str, cwd: Path) -> Any:
    return json.loads(arena_stdout(*args, "--format", "json", cwd=cwd))


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


def bwrap_problem() -> str | None:
    """Why bots cannot run confined here (bubblewrap missing, or unable to make a sandbox),
    or None."""
    from arena.tournament.bot_limits import BotLimits
    from arena.tournament.sandbox import SandboxError, SandboxMode, find_confinement

    try:
        find_confinement(SandboxMode.BWRAP, BotLimits(), lambda line: None)
    except SandboxError as error:
        return str(error)
    return None


def needs_bwrap() -> pytest.MarkDecorator:
    """The mark of a test that runs bots confined: skipped where they cannot be, and with
    ``CI`` set an error at once (CI must run the sandbox tests)."""
    problem = bwrap_problem()
    if problem and os.environ.get("CI"):
        raise RuntimeError(f"confinement cannot run here, and CI is set: {problem}")
    return pytest.mark.skipif(problem is not None, reason=f"bubblewrap cannot run here: {problem}")


def running_tournament(store: Store, stored: int, deals: str = "duplicate") -> tuple[str, list[str], list[int]]:
    """A running classic tournament of ann, bob and cy: two deals in three rotations each
    (one deal a game with ``deals="independent"``), its first ``stored`` games played and
    stored as the runner stores them; its match ids and deal seeds by game."""
    from arena.tournament.lineup import BotEntry
    from arena.tournament.runner import match_spec
    from arena.tournament.settings import TournamentSettings

    settings = TournamentSettings(game={"variant": "classic", "players": 3}, games=6, seed=11, deals=deals,
                                  bots=[BotEntry(name, ["bot"]) for name in ("ann", "bob", "cy")])
    tournament = store.create_tournament(settings.to_dict(), 11, status="running")
    schedule = settings.schedule()
    store.put_schedule(tournament, schedule)
    ids = []
    for game in schedule:
        spec = match_spec(settings, tournament, game)
        ids.append(spec.match_id)
        if game.index < stored:
            record = played(spec.match_id, "classic", list(game.bots), game.seed)
            record.tournament_id, record.game_index, record.private = tournament, game.index, spec.private
            store.save_match(record)
    return tournament, ids, [game.seed for game in schedule]
