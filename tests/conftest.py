"""Shared fixtures. Import-light on purpose: the engine's tests need neither the store
(SQLAlchemy) nor grpc, so every arena import happens inside the fixture that needs it.

``store``: an empty store, once on a fresh SQLite file and once on PostgreSQL
(``postgres_url``, wiped before each test).

``postgres_url`` (one per test session): a PostgreSQL database the tests may fill and
wipe. ``ARENA_TEST_POSTGRES_URL`` names one, e.g.
``ARENA_TEST_POSTGRES_URL=postgresql://arena@127.0.0.1:55432/arena_test pytest tests/store/test_store.py``;
without it, when PostgreSQL's ``initdb`` and ``pg_ctl`` are found (on the PATH or in
Debian's ``/usr/lib/postgresql/VERSION/bin``), a throwaway cluster is started for the
session (a temporary folder, a free port on 127.0.0.1, trust authentication) and stopped
at its end. Without either, the PostgreSQL cases skip, or fail when ``CI`` is set. The
driver comes with the test extras (``psycopg[binary]``; see CONTRIBUTING.md).

``arena_server`` (one test) and ``module_arena_server`` (one test module): start a real
:class:`arena.referee.server.ArenaServer` on 127.0.0.1, port 0, on its own event loop
thread (``tests/bots/harness.py``'s ``ArenaThread``), optionally with an honest random
bot process connected under each of ``bots``; stopped, with its bot processes, at the
end of the test or module::

    def test_something(arena_server):
        arena = arena_server(bots=["honest0", "honest1", "honest2"], move_time=0.5)
        record = arena.run_match(["honest0", "honest1", "honest2"])

``web_over`` (one test): `arena web` as its own process over a database file.
``played_boards``: real engine games in a ``store``, in tournaments and outside any (the
leaderboard and Elo plot tests). ``web_db`` and ``web_client`` (one test module): the web
tests' SQLite file of real engine games and Starlette's TestClient over it.

The builders these fixtures use, and the tests too, are plain functions in the factories package;
no test module imports another.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from arena.wire.grpc_io import use_measured_io

# The I/O path the arena's command line and the SDK choose for gRPC: before any test
# module imports grpc, so that the tests run on what users run.
use_measured_io()
# The suite forks its own process (``forked_arena``, the sandbox tests) where gRPC may be
# running. gRPC's fork handlers restart its poller thread in the child, and a child that
# closes descriptors before it execs then aborts (grpc/grpc#43055: 67 children of 300 with a
# ``preexec_fn``, 0 with this off). The arena itself starts programs by exec alone.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

from arena.bench.postgres import free_port, postgres_bin  # noqa: E402

if TYPE_CHECKING:
    from bots.harness import ArenaThread
    from starlette.testclient import TestClient

    from arena.records import MatchRecord
    from arena.store import Store

POSTGRES_URL = os.environ.get("ARENA_TEST_POSTGRES_URL")
# `arena tournament` without --workers picks workers by the machine's cores: the tests
# play with one, whatever machine runs them (test_local_workers.py asks for more).
os.environ.setdefault("ARENA_WORKERS", "1")
# A crashed bot restarts after 0.1 s each time, not 0.5, 1, 2, 4, 8 s: the tests of
# restarts wait through every one of them.
os.environ.setdefault("ARENA_RESTART_DELAYS", "0.1")


@pytest.fixture
def socket_path(tmp_path: Path) -> Iterator[Path]:
    """Where a test arena's Unix socket goes: in the test's folder, unless that path is
    longer than a Unix socket path may be (107 bytes: a long TMPDIR); then in a short
    folder of /tmp."""
    path = tmp_path / "referee.sock"
    if len(os.fsencode(path)) <= 107:
        yield path
        return
    folder = Path(tempfile.mkdtemp(prefix="arena-sock-", dir="/tmp"))
    try:
        yield folder / "referee.sock"
    finally:
        (folder / "referee.sock").unlink(missing_ok=True)
        folder.rmdir()


@pytest.fixture(autouse=True)
def _tmp_path_readable_by_bots(request: pytest.FixtureRequest) -> None:
    """pytest makes each test's ``tmp_path`` private (mode 0700); a bot written there runs,
    confined, as an unprivileged user that must read it, as a bot in an organiser's
    ordinary folder can (the arena refuses a private one with a one-line error)."""
    if "tmp_path" in request.fixturenames:
        request.getfixturevalue("tmp_path").chmod(0o755)


def _throwaway_postgres(folder: Path, bin_dir: Path) -> Iterator[str]:
    """A PostgreSQL cluster in ``folder`` for the session, and one empty database in it."""
    command_prefix: list[str] = []
    if os.geteuid() == 0:
        # initdb refuses to run as root: run the cluster as Debian's postgres user.
        import pwd

        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("running as root, and there is no 'postgres' user to run a test PostgreSQL as")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        command_prefix = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*command_prefix, *args], capture_output=True, text=True, timeout=120)
        if done.returncode:
            log = folder / "postgres.log"
            pytest.fail(f"{' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}"
                        + (f"\n{log.read_text()[-2000:]}" if log.exists() else ""))

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "arena", "--auth=trust", "-E", "UTF8", "--no-sync")
    # fsync off: a throwaway cluster need not survive a crash, and the tests run faster.
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -F"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(folder / "postgres.log"), "-o", options, "-w", "start")
    try:
        run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "arena", "arena_test")
        yield f"postgresql://arena@127.0.0.1:{port}/arena_test"
    finally:
        subprocess.run([*command_prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=120)


def _postgres_missing() -> str | None:
    """What the PostgreSQL cases lack on this machine, or None."""
    if importlib.util.find_spec("psycopg") is None:
        return "the psycopg driver (pip install -e '.[test]')"
    if POSTGRES_URL is None and postgres_bin() is None:
        return "PostgreSQL (initdb, pg_ctl)"
    return None


# Outside CI, a machine without PostgreSQL runs the store tests on SQLite alone and says
# so in one line at the end (pytest_terminal_summary); in CI the cases run, and fail.
POSTGRES_MISSING = _postgres_missing()
SKIP_POSTGRES = POSTGRES_MISSING is not None and not os.environ.get("CI")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SKIP_POSTGRES:
        terminalreporter.write_line(f"{POSTGRES_MISSING} not found: the PostgreSQL cases were skipped")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL database for the tests: ``ARENA_TEST_POSTGRES_URL``, or a throwaway
    cluster (see the module docstring); skips without PostgreSQL, fails so in CI."""
    if POSTGRES_MISSING:
        if os.environ.get("CI"):
            pytest.fail(f"{POSTGRES_MISSING} not found: the PostgreSQL cases cannot run (CI is set)")
        pytest.skip(f"{POSTGRES_MISSING} not found: the PostgreSQL cases skip")
    if POSTGRES_URL:
        yield POSTGRES_URL
        return
    bin_dir = postgres_bin()
    assert bin_dir is not None
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    try:
        yield from _throwaway_postgres(folder, bin_dir)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["sqlite"] + ([] if SKIP_POSTGRES else ["postgresql"]))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store: a SQLite file in a temp dir, or the PostgreSQL test database wiped."""
    from factories.databases import wipe_postgres

    from arena.store import Store

    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        wipe_postgres(url)
    else:
        url = str(tmp_path / "arena.db")
    with Store(url) as opened:
        yield opened


class StartArena(Protocol):
    def __call__(self, *, bots: list[str] | tuple[str, ...] = (), max_matches: int = 4,
                 keepalive_ms: int | None = None, port: int = 0, local_bots: dict[str, str] | None = None,
                 **server_options: Any) -> ArenaThread: ...


def _arena_servers() -> Iterator[StartArena]:
    from bots.harness import ArenaThread

    started: list[ArenaThread] = []

    def start(*, bots: list[str] | tuple[str, ...] = (), max_matches: int = 4, keepalive_ms: int | None = None,
              port: int = 0, local_bots: dict[str, str] | None = None, **server_options: Any) -> ArenaThread:
        """A started arena (``server_options`` are ArenaServer's: store, move_time, ...)
        with an honest random bot process connected under each of ``bots``, accepting
        the one-run tokens of ``local_bots`` (name -> token) for bots the test starts."""
        arena = ArenaThread(keepalive_ms=keepalive_ms, port=port, local_bots=local_bots, **server_options)
        started.append(arena)
        for i, name in enumerate(bots):
            arena.start_bot("random_bot.py", name, "--seed", str(i), max_matches=max_matches)
        return arena

    try:
        yield start
    finally:
        for arena in reversed(started):
            arena.close()


arena_server = pytest.fixture(_arena_servers, name="arena_server")
module_arena_server = pytest.fixture(_arena_servers, scope="module", name="module_arena_server")


@pytest.fixture
def web_over() -> Iterator[Callable[[Path], str]]:
    """``web_over(db)``: start `arena web --port 0` on ``db`` as its own process, return its
    address; stopped at the end (factories.web_server.WebServer)."""
    from factories.web_server import WebServer

    servers: list[WebServer] = []

    def start(db: Path) -> str:
        servers.append(WebServer(db))
        return servers[-1].url

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def played_boards(store: Store) -> tuple[Store, dict[str, list[MatchRecord]]]:
    """Real 3-round engine games in three tournaments (two sets of game options, one
    organised elsewhere) and outside any, with fallbacks and timeouts; and an aborted one."""
    from factories.records import played

    from arena.records import FaultRecord

    three = store.create_tournament({"game": {"variant": "classic", "players": 3, "rounds": 3}}, master_seed=1)
    four = store.create_tournament({"game": {"variant": "classic", "players": 4, "rounds": 3}}, master_seed=2)
    games: dict[str, list[MatchRecord]] = {three: [], four: [], "t-remote": [], "": []}
    for i in range(4):
        record = played(f"three-{i}", "classic", ["ann", "bob", "cy"], seed=i)
        record.tournament_id, record.game_index = three, i
        record.latencies_ms[i] = None           # a fallback the referee played: no think time
        if i == 1:
            record.faults = [FaultRecord(2, "cy", "timeout", "no answer"), FaultRecord(2, "cy", "illegal", "x"),
                             FaultRecord(0, "ann", "timeout", "no answer")]
        games[three].append(record)
    for i in range(2):
        record = played(f"four-{i}", "classic", ["ann", "bob", "cy", "dee"], seed=10 + i)
        record.tournament_id, record.game_index = four, i
        games[four].append(record)
    remote = played("remote-0", "classic", ["ann", "bob", "dee"], seed=20)
    remote.tournament_id, remote.game_index = "t-remote", 0
    games["t-remote"].append(remote)
    games[""].append(played("alone-0", "classic", ["bob", "cy", "dee"], seed=30))
    for records in games.values():
        store.save_matches(records)
    aborted = played("aborted-0", "classic", ["ann", "bob", "cy"], seed=40)
    aborted.status, aborted.faults = "aborted", [FaultRecord(0, "ann", "timeout", "not counted")]
    store.save_match(aborted)
    return store, games


@pytest.fixture(scope="module")
def web_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The web tests' database file and the id of its one tournament (classic, hidden bids)."""
    from factories.records import played
    from factories.web_server import WEB_BOTS

    from arena.records import FaultRecord
    from arena.store import Store

    path = tmp_path_factory.mktemp("web") / "arena.db"
    with Store(str(path)) as store:
        tournament = store.create_tournament({"game": {"variant": "classic", "players": 3, "bidding": "hidden"}},
                                             master_seed=1, status="completed")
        for i in range(6):
            record = played(f"hidden-{i}", "classic", WEB_BOTS[i % 3:] + WEB_BOTS[:i % 3], i, bidding="hidden")
            record.tournament_id, record.game_index = tournament, i
            store.save_match(record)
        for i in range(3):
            store.save_match(played(f"secret-{i}", "classic", WEB_BOTS, 10 + i, bidding="secret"))
            open_match = played(f"open-{i}", "classic", WEB_BOTS[::-1], 20 + i)
            if i == 0:    # seat 2 is ann: one timeout for her bot page
                open_match.faults = [FaultRecord(seat=2, bot="ann", kind="timeout", message="too slow")]
            store.save_match(open_match)
            store.save_match(played(f"extreme-{i}", "extreme", ["ann", "bob", "dee", "eve"], 30 + i))
    return path, tournament


@pytest.fixture(scope="module")
def web_client(web_db: tuple[Path, str]) -> TestClient:
    """Starlette's TestClient on ``arena web``'s app over ``web_db``."""
    from starlette.testclient import TestClient

    from arena.web.app import create_app

    return TestClient(create_app(str(web_db[0])))
