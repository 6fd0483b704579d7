"""The organiser's lists and views through the real CLI: ``arena tournaments``,
``arena matches`` (table, JSON, CSV; narrow terminals) and ``arena show``.

One SQLite file is filled once for the module by real short tournaments (real
referee, real bot processes): classic with hidden bids, classic with secret bids and
Wizard Extreme; plus a tournament organised elsewhere, saved through the store as a
server saves one. The interrupted-run test starts its own tournament and kills it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from factories.commands import forked_arena

from arena.store import Store
from arena.tournament.lock import hold_lock, log_dir_for

# Every test runs the arena command as its own process: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

PY = sys.executable
RANDOM_BOT = f"{PY} -m sample_bots.random_bot"


def arena(*args: str, cwd: Path, columns: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``arena ARGS`` as a user would, in a process of its own; output is piped, as in a
    script (``columns`` sets COLUMNS, as a terminal of that width does). A tournament runs
    in a fresh interpreter; the lists and views, dozens of them, in a process forked from
    this one once it has imported the command line (factories.commands.forked_arena)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    if args[0] != "tournament":   # the lists and views: forked from this process, imports done
        return forked_arena(*args, cwd=cwd, env=env, timeout=timeout)
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def lineup(count: int) -> list[str]:
    return ["--no-samples", *[arg for i in range(count) for arg in ("--bot", f"r{i}={RANDOM_BOT}")]]


def run_tournament(folder: Path, *options: str) -> str:
    """Play a short tournament into folder/arena.db; its id."""
    before = {t.id for t in Store(str(folder / "arena.db")).list_tournaments()} \
        if (folder / "arena.db").exists() else set()
    done = arena("tournament", "--db", "arena.db", *options, cwd=folder)
    assert done.returncode == 0, done.stderr
    (new,) = {t.id for t in Store(str(folder / "arena.db")).list_tournaments()} - before
    return new


@dataclass
class Stored:
    """The module's database and what is in it."""

    folder: Path
    hidden: str        # classic, hidden bids
    secret: str        # classic, secret bids
    extreme: str
    remote: str        # organised elsewhere: its matches were saved here by a server

    def json(self, *args: str) -> list[dict]:
        done = arena(*args, "--format", "json", "--db", "arena.db", cwd=self.folder)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    folder = tmp_path_factory.mktemp("browse")
    hidden = run_tournament(folder, "--rounds", "2", "--games", "4", "--bidding", "hidden", "--seed", "1", *lineup(4))
    secret = run_tournament(folder, "--rounds", "2", "--games", "4", "--bidding", "secret", "--seed", "2", *lineup(4))
    extreme = run_tournament(folder, "--variant", "extreme", "--players", "3", "--rounds", "1", "--games", "3",
                             "--seed", "3", *lineup(3))
    # A server stores the matches of a tournament organised elsewhere under a stub
    # tournament of status "remote": the same save path, with a real match's record.
    store = Store(str(folder / "arena.db"))
    record = store.load_match(store.list_matches(tournament_id=hidden, limit=1)[0].match_id)
    record.match_id, record.tournament_id = "t-elsewh-00000", "t-elsewh"
    assert store.save_match(record)
    return Stored(folder, hidden, secret, extreme, "t-elsewh")


def whole(word: str, text: str) -> bool:
    """Whether ``word`` appears in ``text`` uncut: not folded over two lines, no "…"."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


# --------------------------------------------------------------------------- arena tournaments

TOURNAMENT_KEYS = ["id", "created_at", "status", "variant", "players", "rounds", "length", "bidding",
                   "plus_minus_one", "destroyer_penalty", "deals", "games", "stored", "bots", "seed", "server",
                   "format", "test"]


def test_tournaments_json_has_every_option_as_its_own_field(stored: Stored) -> None:
    listed = {t["id"]: t for t in stored.json("tournaments")}
    assert all(list(t) == TOURNAMENT_KEYS for t in listed.values())
    hidden = listed[stored.hidden]
    assert hidden["status"] == "finished" and hidden["variant"] == "classic"
    assert (hidden["players"], hidden["rounds"], hidden["length"], hidden["bidding"], hidden["plus_minus_one"],
            hidden["destroyer_penalty"]) == (4, 2, "standard", "hidden", False, None)
    assert (hidden["games"], hidden["stored"], hidden["seed"], hidden["bots"]) == (4, 4, 1, ["r0", "r1", "r2", "r3"])
    assert (hidden["format"], hidden["test"]) == ("round-robin", None)   # arena sprt's are tested in test_sprt_run
    assert hidden["created_at"].startswith("20") and "T" in hidden["created_at"]     # ISO 8601
    extreme = listed[stored.extreme]
    assert (extreme["players"], extreme["rounds"], extreme["destroyer_penalty"], extreme["bidding"],
            extreme["length"], extreme["plus_minus_one"]) == (3, 1, 4, None, None, None)
    remote = listed[stored.remote]
    assert remote["status"] == "remote" and remote["stored"] == 1
    assert remote["bots"] is None and remote["seed"] is None and remote["players"] is None


def test_tournaments_csv_is_a_header_then_one_row_each(stored: Stored) -> None:
    done = arena("tournaments", "--format", "csv", "--db", "arena.db", cwd=stored.folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == ",".join(TOURNAMENT_KEYS)
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(done.stdout))}
    assert set(rows) == {stored.hidden, stored.secret, stored.extreme, stored.remote}
    secret = rows[stored.secret]
    assert (secret["bidding"], secret["plus_minus_one"], secret["destroyer_penalty"], secret["bots"]) == \
        ("secret", "false", "", "r0 r1 r2 r3")
    assert rows[stored.extreme]["destroyer_penalty"] == "4"


def test_tournaments_table_shows_the_options_compactly(stored: Stored) -> None:
    done = arena("tournaments", "--db", "arena.db", cwd=stored.folder)
    assert done.returncode == 0, done.stderr
    rows = {tid: next(line for line in done.stdout.splitlines() if tid in line)
            for tid in (stored.hidden, stored.extreme, stored.remote)}
    assert "4 players, 2 rounds, hidden, standard, ±1 off" in rows[stored.hidden]
    assert "3 players, 1 round, destroyer 4" in rows[stored.extreme]
    assert "remote" in rows[stored.remote] and "elsewhere" in rows[stored.remote]
    assert done.stderr == ""       # 160 columns when piped: nothing left out


# --------------------------------------------------------------------------- arena matches

def test_matches_json_has_full_ids_iso_dates_numbers_and_the_score_order(stored: Stored) -> None:
    matches = stored.json("matches")
    assert len(matches) == 4 + 4 + 3 + 1
    keys = ["match_id", "tournament_id", "game_index", "variant", "score_order", "status", "started_at",
            "finished_at", "seats", "faults", "decisions", "median_latency_ms", "max_latency_ms"]
    assert all(list(m) == keys for m in matches)
    extreme = [m for m in matches if m["tournament_id"] == stored.extreme]
    assert {m["match_id"] for m in extreme} == {f"{stored.extreme}-{i:05d}" for i in range(3)}
    assert {m["score_order"] for m in extreme} == {"lower_is_better"}
    assert {m["score_order"] for m in matches if m["variant"] == "classic"} == {"higher_is_better"}
    first = extreme[0]
    assert isinstance(first["game_index"], int) and isinstance(first["decisions"], int)
    assert isinstance(first["median_latency_ms"], float)
    assert [s["seat"] for s in first["seats"]] == [0, 1, 2]
    assert all(isinstance(s["total"], int) and isinstance(s["place"], int) for s in first["seats"])
    assert first["finished_at"] >= first["started_at"] and "+00:00" in first["finished_at"]


def test_matches_csv_has_one_row_per_seat_and_says_which_way_totals_rank(stored: Stored) -> None:
    done = arena("matches", "--variant", "extreme", "--format", "csv", "--db", "arena.db", cwd=stored.folder)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].split(",")
    assert header[:5] == ["match_id", "tournament_id", "game_index", "variant", "score_order"]
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == 3 * 3
    assert {row["score_order"] for row in rows} == {"lower_is_better"}
    assert {row["match_id"] for row in rows} == {f"{stored.extreme}-{i:05d}" for i in range(3)}


def test_matches_table_marks_extreme_totals_lower_is_better(stored: Stored) -> None:
    extreme = arena("matches", "--variant", "extreme", "--db", "arena.db", cwd=stored.folder).stdout
    assert "Players (penalty ↓, place)" in extreme and "lower is better" in extreme
    classic = arena("matches", "--variant", "classic", "--db", "arena.db", cwd=stored.folder).stdout
    assert "Players (score, place)" in classic and "↓" not in classic and "lower is better" not in classic


@pytest.mark.parametrize("columns", [60, 40])
def test_a_narrow_terminal_never_cuts_an_id(stored: Stored, columns: int) -> None:
    match_ids = [m["match_id"] for m in stored.json("matches")]
    tournament_ids = [stored.hidden, stored.secret, stored.extreme, stored.remote]
    for command, ids in (("matches", match_ids), ("tournaments", tournament_ids)):
        done = arena(command, "--db", "arena.db", cwd=stored.folder, columns=columns)
        assert done.returncode == 0, done.stderr
        assert max(len(line) for line in done.stdout.splitlines()) <= columns
        assert "…" not in done.stdout
        for tid in ids:
            assert whole(tid, done.stdout), (command, tid, done.stdout)
        # The columns left out to fit are named, with where to see them all.
        assert "left out to fit" in done.stderr and "--format json" in done.stderr


# --------------------------------------------------------------------------- arena show

def shown(stored: Stored, match_id: str) -> list[str]:
    done = arena("show", match_id, "--db", "arena.db", cwd=stored.folder)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def round_bids(stored: Stored, match_id: str) -> tuple[list[list[int]], list[str]]:
    """Each round's bids by seat, as the stored result has them, and the bots by seat."""
    exported = json.loads(arena("export", match_id, "--db", "arena.db", cwd=stored.folder).stdout)
    return [[seat["bid"] for seat in rnd] for rnd in exported["result"]["rounds"]], exported["bots"]


def test_show_says_which_seat_bid_what_once_hidden_bids_are_revealed(stored: Stored) -> None:
    match_id = f"{stored.hidden}-00001"
    lines = shown(stored, match_id)
    assert "Options: 4 players, 2 rounds, standard length, hidden bidding, ±1 rule off" in lines
    bids, bots = round_bids(stored, match_id)
    revealed = [line.strip() for line in lines if line.strip().startswith("bids revealed")]
    assert revealed == ["bids revealed: " + " · ".join(f"seat {s} ({bots[s]}) bid {b}" for s, b in enumerate(rnd))
                        for rnd in bids]
    # Revealed once everybody has bid: after the four face-down bids, before the first trick.
    first = lines.index(next(line for line in lines if line.strip().startswith("bids revealed")))
    assert [line.strip().endswith("bids face down (hidden until everybody has bid)")
            for line in lines[first - 4:first]] == [True] * 4
    assert lines[first + 1].strip().startswith("trick 1:")


def test_show_reveals_secret_bids_at_the_scoring(stored: Stored) -> None:
    match_id = f"{stored.secret}-00000"
    lines = [line.strip() for line in shown(stored, match_id)]
    bids, bots = round_bids(stored, match_id)
    revealed = [i for i, line in enumerate(lines) if line.startswith("bids revealed")]
    assert len(revealed) == 2
    for i, rnd in zip(revealed, bids):
        assert lines[i] == "bids revealed at the scoring: " + " · ".join(
            f"seat {s} ({bots[s]}) bid {b}" for s, b in enumerate(rnd))
        assert lines[i - 1].startswith("trick ") and lines[i + 1].startswith("end of round")


def test_show_of_an_extreme_match_says_lower_is_better(stored: Stored) -> None:
    lines = shown(stored, f"{stored.extreme}-00000")
    assert "Options: 3 players, 1 round, destroyer penalty 4, totals are penalty points: lower is better" in lines
    assert any(line.startswith("Result (penalty points: lower is better): ") for line in lines)
    assert any("end of round 1 (penalties: lower is better)" in line for line in lines)


# --------------------------------------------------------------------------- interrupted runs

def test_a_killed_run_is_listed_as_interrupted_and_a_live_one_as_running(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.Popen([PY, "-m", "arena.cli", "tournament", "--rounds", "10", "--games", "400",
                             "--concurrency", "1", "--db", "arena.db", *lineup(4)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    bots: list[int] = []

    def status() -> str:
        (listed,) = json.loads(arena("tournaments", "--format", "json", cwd=tmp_path).stdout)
        return listed["status"]

    try:
        deadline = time.monotonic() + 180     # a game of 10 rounds; the rest is slack for a busy machine
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "no game stored in time"
            tournaments = Store(str(db)).list_tournaments() if db.exists() else []
            if tournaments and tournaments[0].matches >= 1:
                break
            time.sleep(0.2)
        tid = tournaments[0].id
        assert status() == "running"                  # its process holds the lock
        bots = [int(pid) for pid in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                                   text=True).stdout.split()]
    finally:
        proc.kill()                                   # kill -9: no chance to mark itself interrupted
        proc.wait()
        stop_orphans(bots)
    assert status() == "interrupted"
    table = arena("tournaments", cwd=tmp_path).stdout
    assert "interrupted" in next(line for line in table.splitlines() if tid in line)
    assert Store(str(db)).get_tournament(tid).status == "running", "a listing writes nothing"
    # Whoever holds the lock is a live run (here: this test, standing in for a runner).
    lock = hold_lock(log_dir_for(str(db), tid), tid)
    try:
        assert status() == "running"
    finally:
        lock.close()
    assert status() == "interrupted"


def stop_orphans(pids: list[int], grace: float = 10) -> None:
    """The bots of a killed arena end on their own once they notice; on a shared machine
    none may linger, so any still running after ``grace`` seconds is killed."""
    def running(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    deadline = time.monotonic() + grace
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if running(pid)]
        time.sleep(0.1)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("args", [["tournaments", "--format", "xml"], ["matches", "--format", "xml"],
                                  ["matches", "--format", "md"], ["tournaments", "--format"]])
def test_bad_format_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, args: list[str]) -> None:
    done = arena(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "--format" in done.stderr
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_bad_format_on_a_database_leaves_it_untouched(stored: Stored) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in stored.folder.iterdir()}
    done = arena("matches", "--format", "xml", "--db", "arena.db", cwd=stored.folder)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "arena matches: error: Invalid value for --format: 'xml' is not one of table, json, csv"]
    assert {p.name: p.stat().st_mtime_ns for p in stored.folder.iterdir()} == before
