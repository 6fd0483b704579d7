"""Bots the arena starts run confined, tested as an attacker would: ``arena tournament``
(a real referee, real bot processes in real bubblewrap sandboxes, a real SQLite file)
with a hostile SDK bot (tests/bots/hostile_bot.py) that plays legally while it tries
every attack, and reports what it got in its log. Every attack must get nothing.

Also: a bot that dies mid-tournament is restarted and the tournament completes; a
resumed one finishes the same way; ``--fresh-per-match`` keeps nothing between matches;
``--sandbox none`` still works (and lets the same attacks through, which shows that
they are real).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from factories import TEST_BOTS
from factories.bots import needs_bwrap

from arena.store import Store

PY = sys.executable
ORGANISER_SECRET = "WIZARD_TEST_ORGANISER_SECRET"   # not ARENA_: those never reach a bot
ENV = {**os.environ, "COLUMNS": "200", ORGANISER_SECRET: "the organiser's own"}
RANDOM = f"{PY} -m sample_bots.random_bot"


def arena(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=ENV)


class Listener:
    """A TCP listener on 127.0.0.1 that is not the referee: it counts who reaches it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reached = 0
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.reached += 1
            conn.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.sock.close()


def hostile_setup(tmp_path: Path, marker: str, resources: bool = True) -> tuple[Path, Path, Listener]:
    """The folders of a hostile tournament: the organiser's run folder (database, logs),
    the evil bot's own folder (with its config), a canary elsewhere; a listener."""
    run = tmp_path / "run"
    evil = tmp_path / "bots" / "evil"
    secret = tmp_path / "secret"
    for folder in (run, evil, secret):
        folder.mkdir(parents=True)
    shutil.copy(TEST_BOTS / "hostile_bot.py", evil / "hostile_bot.py")
    # A rival's program in the same folder: the hostile bot must not read it either.
    (evil / "rival_bot.py").write_text("# RIVAL's secret strategy\nfrom arena.sdk import Bot, run\nrun(Bot)\n")
    (secret / "canary.txt").write_text("CANARY the organiser's private file")
    # The bot runs as an unprivileged user: its own folder must be readable by others
    # (pytest makes its temporary folders private).
    for folder in (tmp_path, tmp_path / "bots", evil):
        folder.chmod(0o755)
    listener = Listener()
    config = {"canary": str(secret / "canary.txt"), "database": str(run / "arena.db"),
              "logs": [str(run / "arena-logs")], "programs": [str(evil / "rival_bot.py")], "port": listener.port,
              "pid": os.getpid(),
              "env": ORGANISER_SECRET, "marker": marker, "resources": resources}
    (evil / "hostile.json").write_text(json.dumps(config))
    (evil / "hostile_bot.py").chmod(0o644)
    for name in ("hostile.json", "rival_bot.py"):
        (evil / name).chmod(0o644)
    return run, evil, listener


def reports(log: Path) -> dict[str, object]:
    """What the hostile bot got, by attack (the last report of each)."""
    got: dict[str, object] = {}
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("HOSTILE "):
            item = json.loads(line[len("HOSTILE "):])
            got.setdefault("state_reports", [])
            if item["attack"] == "state":
                got["state_reports"].append(item["got"])      # type: ignore[union-attr]
            else:
                got[item["attack"]] = item["got"]
    return got


def marked_processes(marker: str) -> list[int]:
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                alive.append(int(pid))
        except OSError:
            continue
    return alive


def wait_until_gone(marker: str, seconds: float = 30) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    return alive


@pytest.mark.slow
@needs_bwrap()
def test_a_hostile_bot_gets_nothing_and_the_tournament_is_unharmed(tmp_path: Path) -> None:
    marker = f"hostile-marker-{os.getpid()}"
    run, evil, listener = hostile_setup(tmp_path, marker)
    try:
        done = arena("tournament", "--rounds", "2", "--players", "3", "--games", "6", "--no-samples",
                     "--bot", f"evil={PY} {evil / 'hostile_bot.py'}", "--bot", f"r1={RANDOM}",
                     "--bot", f"rival={PY} {evil / 'rival_bot.py'}", "--db", str(run / "arena.db"),
                     "--sandbox", "bwrap", cwd=run)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    assert "bots confined" in done.stdout, done.stdout
    store = Store(str(run / "arena.db"))
    (tournament,) = store.list_tournaments()
    logs = run / "arena-logs" / tournament.id
    got = reports(logs / "evil.log")
    assert got.get("done") is not None, (logs / "evil.log").read_text()[-3000:]
    assert got["canary"] is None
    assert got["database"] is None
    assert got["databases_found"] == []
    assert got["logs"] in ({str(run / "arena-logs"): None}, {str(run / "arena-logs"): []})
    assert got["programs"] == {str(evil / "rival_bot.py"): None}
    processes = got["processes"]
    assert isinstance(processes, dict)
    assert processes["tokens"] == [] and processes["signalled"] is None
    assert processes["others"] == [] or all("bwrap" in p for p in processes["others"]), processes["others"]
    environment = got["environment"]
    assert isinstance(environment, dict)
    assert environment["organiser_variable"] is None
    assert set(environment["names"]) <= {"ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_BOT_NAME", "ARENA_MAX_MATCHES",
                                         "PYTHONUNBUFFERED", "PATH", "HOME", "LANG", "PWD",
                                         "GRPC_VERBOSITY", "GRPC_EXPERIMENTS"}, environment   # set by the SDK itself
    network = got["network"]
    assert isinstance(network, dict)
    assert network["tcp"] is None and listener.reached == 0
    if network["listening_port"]:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", network["listening_port"]), timeout=1).close()
    resources = got["resources"]
    assert isinstance(resources, dict)
    assert resources["allocated_1gib"] is False
    assert resources["processes_started"] < 100
    assert resources["wrote_mib"] <= 64
    assert resources["wrote_own_folder"] is False
    assert not (evil / "planted.txt").exists()
    assert wait_until_gone(marker) == [], "a process the bot left behind outlived the run"
    # It played legally all along: its seats have no faults, and every game is stored.
    assert len(store.finished_game_indexes(tournament.id)) == 6
    assert all(m.faults == 0 for m in store.tournament_matches(tournament.id, range(6)))


@pytest.mark.slow
@needs_bwrap()
def test_fresh_processes_per_match_keep_nothing_between_matches(tmp_path: Path) -> None:
    marker = f"fresh-marker-{os.getpid()}"
    run, evil, listener = hostile_setup(tmp_path, marker, resources=False)
    try:
        # Three matches (a hostile process spends about 1.5 s on its attacks, per match).
        done = arena("tournament", "--rounds", "1", "--players", "3", "--games", "3", "--no-samples",
                     "--bot", f"evil={PY} {evil / 'hostile_bot.py'}", "--bot", f"r1={RANDOM}",
                     "--bot", f"r2={RANDOM}", "--db", str(run / "arena.db"), "--fresh-per-match", cwd=run)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    (tournament,) = Store(str(run / "arena.db")).list_tournaments()
    states = reports(run / "arena-logs" / tournament.id / "evil.log")["state_reports"]
    assert isinstance(states, list) and len(states) == 3
    assert all(s["matches_in_process"] == 1 and s["matches_on_disk"] == 0 for s in states), states
    assert wait_until_gone(marker) == []


@pytest.mark.slow
def test_unconfined_the_same_attacks_get_through(tmp_path: Path) -> None:
    """--sandbox none runs the organiser's own bots as they are: the hostile bot's attacks
    are real (it reads the canary and the organiser's variable there)."""
    marker = f"none-marker-{os.getpid()}"
    run, evil, listener = hostile_setup(tmp_path, marker, resources=False)
    try:
        done = arena("tournament", "--rounds", "1", "--players", "3", "--games", "3", "--no-samples",
                     "--bot", f"evil={PY} {evil / 'hostile_bot.py'}", "--bot", f"r1={RANDOM}",
                     "--bot", f"r2={RANDOM}", "--db", str(run / "arena.db"), "--sandbox", "none", cwd=run)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    assert "unconfined" in done.stdout
    (tournament,) = Store(str(run / "arena.db")).list_tournaments()
    got = reports(run / "arena-logs" / tournament.id / "evil.log")
    assert got["canary"] is not None and "CANARY" in str(got["canary"])
    assert got["environment"]["organiser_variable"] == "the organiser's own"   # type: ignore[index]
    assert listener.reached >= 1
    for pid in marked_processes(marker):    # unconfined, the sleeper does outlive the run
        os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_bot_that_dies_mid_tournament_is_restarted_and_the_tournament_completes(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    done = arena("tournament", "--rounds", "6", "--players", "3", "--games", "6", "--no-samples",
                 "--bot", f"crash={PY} {TEST_BOTS / 'crash_bot.py'}", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    store = Store(str(db))
    (tournament,) = store.list_tournaments()
    assert store.finished_game_indexes(tournament.id) == set(range(6))
    assert store.get_tournament(tournament.id).status == "finished"
    crashes = store.crashes(tournament_id=tournament.id)
    assert crashes["crash"].count >= 1 and "exited with code 1" in crashes["crash"].last_reason
    assert "crash" in done.stdout and "crashed" in done.stdout
    (closing,) = [line for line in done.stdout.splitlines() if " games played in " in line]
    assert "bot crash" in closing        # the closing line counts them
    faults = sum(m.faults for m in store.tournament_matches(tournament.id, range(6)))
    assert faults >= 1      # its seats in the match it died in: a disconnect


def stored_matches(db: Path) -> int:
    """How many matches ``db`` holds, read as a spectator reads it: read-only, so that a
    look while the run is still creating the file never writes to it (a Store would
    create the schema in a file found empty)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            return int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.Error:      # not there yet, or no schema yet
        return 0


@pytest.mark.slow
def test_a_bot_that_always_dies_forfeits_its_remaining_games_and_a_resume_finishes(tmp_path: Path) -> None:
    """Past its restarts a bot's seats forfeit at once; the tournament still finishes,
    also when it is interrupted and resumed."""
    db = tmp_path / "arena.db"
    bot = tmp_path / "always.py"
    bot.write_text("import os, sys\nfrom arena.sdk import Bot, run\n"
                   "class B(Bot):\n    def play(self, obs, options):\n        os._exit(2)\n"
                   "run(B)\n")
    tmp_path.chmod(0o755)
    bot.chmod(0o644)
    proc = subprocess.Popen([PY, "-m", "arena.cli", "tournament", "--rounds", "3", "--players", "3", "--games", "30",
                             "--no-samples", "--bot", f"always={PY} {bot}", "--bot", f"r1={RANDOM}",
                             "--bot", f"r2={RANDOM}", "--db", str(db), "--concurrency", "2"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not stored_matches(db):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    (tournament,) = Store(str(db)).list_tournaments()
    done = arena("tournament", "--resume", tournament.id, "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    store = Store(str(db))
    assert store.finished_game_indexes(tournament.id) == set(range(30))
    assert store.get_tournament(tournament.id).status == "finished"
    assert store.crashes(tournament_id=tournament.id)["always"].count >= 2
    forfeits = [m for m in store.tournament_matches(tournament.id, range(30)) if "always" in m.bots]
    assert forfeits and all(m.faults >= 1 for m in forfeits)


@pytest.mark.slow
@needs_bwrap()
def test_a_bot_past_its_memory_limit_is_killed_alone_and_recorded_with_the_reason(tmp_path: Path) -> None:
    bot = tmp_path / "hog.py"
    # It hoards only in seat 0, which the seat rotation gives it in one game of the three:
    # one kill, one restart, and the other games played.
    bot.write_text("from arena.sdk import Bot, run\nclass Hog(Bot):\n    def play(self, obs, options):\n"
                   "        if obs['seat'] == 0:\n"
                   "            hoard = bytearray(1 << 30)\n            hoard[::4096] = b'x' * len(hoard[::4096])\n"
                   "        return options[0]\nrun(Hog)\n")
    bot.chmod(0o644)
    db = tmp_path / "arena.db"
    done = arena("tournament", "--rounds", "1", "--players", "3", "--games", "3", "--no-samples",
                 "--bot", f"hog={PY} {bot}", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}", "--db", str(db),
                 "--memory-limit", "256", "--sandbox", "bwrap", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "memory 256 MiB" in done.stdout
    store = Store(str(db))
    (tournament,) = store.list_tournaments()
    assert store.finished_game_indexes(tournament.id) == {0, 1, 2}
    crash = store.crashes(tournament_id=tournament.id)["hog"]
    assert crash.last_reason == "killed: out of memory (limit 256 MiB)"
    assert "out of memory" in done.stdout          # the board's crash line
    assert set(store.crashes(tournament_id=tournament.id)) == {"hog"}, "only the bot over its limit was killed"


@pytest.mark.slow
@needs_bwrap()
def test_the_sample_bots_play_confined_with_no_fault(tmp_path: Path) -> None:
    """Python and Node.js sample bots, the default lineup, confined (bwrap required)."""
    done = arena("tournament", "--rounds", "2", "--games", "5", "--sandbox", "bwrap", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bots confined (bubblewrap)" in done.stdout
    store = Store(str(tmp_path / "arena.db"))
    (tournament,) = store.list_tournaments()
    games = len(store.finished_game_indexes(tournament.id))
    bots = {b["name"] for b in tournament.settings["bots"]}
    if shutil.which("node") or os.environ.get("CI"):
        assert "node-heuristic" in bots
    matches = store.tournament_matches(tournament.id, range(games))
    assert games == tournament.settings["games"] and all(m.faults == 0 for m in matches)
    assert store.crashes(tournament_id=tournament.id) == {}


@needs_bwrap()
def test_a_confined_bot_that_never_connects_is_told_what_the_sandbox_lacks(tmp_path: Path) -> None:
    """A bot that runs on its author's machine and looks for something there (a file
    under HOME, a toolchain, TCP) dies in the sandbox: the one line says what the sandbox
    holds and how to tell whether that is why."""
    from arena.tournament.sandbox import NEVER_CONNECTED_HINT

    (tmp_path / "homebot.py").write_text(
        "import os, pathlib\nprint(pathlib.Path(os.environ['HOME'], '.homebot.toml').read_text())\n")
    checked = arena("bot", "check", f"{PY} homebot.py", "--sandbox", "bwrap", cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "never connected: it exited with code 1 before it connected" in checked.stdout
    assert f"FileNotFoundError: [Errno 2] No such file or directory: '/tmp/.homebot.toml'; {NEVER_CONNECTED_HINT} " \
        in checked.stdout
    played = arena("tournament", "--players", "3", "--rounds", "1", "--games", "3", "--sandbox", "bwrap",
                   "--bot", "home=homebot.py", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}", "--no-samples",
                   cwd=tmp_path)
    assert played.returncode == 2 and "Traceback" not in played.stderr, played.stderr
    assert f"bot 'home' exited with code 1 before connecting; {NEVER_CONNECTED_HINT} (its output: " in played.stderr
    unconfined = arena("bot", "check", f"{PY} homebot.py", "--sandbox", "none", cwd=tmp_path)
    assert unconfined.returncode == 1 and NEVER_CONNECTED_HINT not in unconfined.stdout
