"""``arena tournament --workers N``: N ``arena worker`` processes of this machine play one
tournament while the command shows one progress line.

Real processes and a real SQLite file throughout: the same seed stores the same games
and prints the same board with one worker and with two; a Ctrl-C (SIGTERM) stops the
workers and their bots and the tournament resumes with another N, and while they play ``arena web`` finds both
referees for its live list; workers that die are
reported, and when all have died the command says so in one line and exits 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.store import Store

PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"
# Small and quick: 3 random bots at 3 seats, 2 rounds, 4 deals of 3 rotations.
LINEUP = ["--no-samples", "--bot", f"a={RANDOM}", "--bot", f"b={RANDOM}", "--bot", f"c={RANDOM}",
          "--variant", "classic", "--players", "3", "--seed", "5"]
SMALL = [*LINEUP, "--rounds", "2", "--games", "12"]
# Long enough to be stopped while it plays: 30 games of 10 rounds, one match at a time per worker.
LONGER = [*LINEUP, "--rounds", "10", "--games", "30", "--concurrency", "1"]


def arena(*args: str, cwd: Path, **env: str) -> subprocess.Popen[str]:
    """The command, its lines unwrapped (``COLUMNS``)."""
    return subprocess.Popen([PY, "-m", "arena.cli", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "COLUMNS": "200", **env})


def stored(db: Path) -> dict[str, Any]:
    """The tournament, and every stored game by slot: bots, places, totals, actions."""
    with Store(str(db)) as store:
        (tournament,) = store.list_tournaments()
        games = {}
        for summary in store.list_matches(tournament_id=tournament.id, limit=1000):
            record = store.load_match(summary.match_id)
            games[record.game_index] = (record.bots, record.places, record.totals, record.actions)
        return {"tournament": tournament, "games": games}


def board(out: str) -> list[list[str]]:
    """The printed leaderboard's rows without the think times (p50, p99 ms: not part of the result)."""
    rows = [line.split() for line in out.splitlines()]
    return [row[:9] + row[11:] for row in rows if row and row[0].isdigit() and " games " not in " ".join(row)]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (its children's children too), from /proc."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        try:
            children = Path(f"/proc/{todo[0]}/task/{todo[0]}/children").read_text().split()
        except OSError:
            children = []
        todo = todo[1:] + [int(child) for child in children]
        found.update(int(child) for child in children)
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def workers_playing(command: subprocess.Popen[str], db: Path, games: int = 1) -> list[int]:
    """The command's worker processes, once ``games`` games are stored."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and command.poll() is None:
        workers = [int(p) for p in Path(f"/proc/{command.pid}/task/{command.pid}/children").read_text().split()]
        if len(workers) == 2 and db.exists():
            with Store(str(db)) as store:
                found = store.list_tournaments()
                if found and len(store.finished_game_indexes(found[0].id)) >= games:
                    return workers
        time.sleep(0.05)
    raise AssertionError(f"the workers did not start playing: {command.poll()}")


def test_one_worker_and_two_store_the_same_games_and_print_the_same_board(tmp_path: Path) -> None:
    runs = {n: arena("tournament", *SMALL, "--workers", str(n), "--db", str(tmp_path / f"{n}.db"), cwd=tmp_path)
            for n in (1, 2)}
    outputs = {n: run.communicate(timeout=240) for n, run in runs.items()}
    for n, run in runs.items():
        assert run.returncode == 0, outputs[n]
    one, two = stored(tmp_path / "1.db"), stored(tmp_path / "2.db")
    assert sorted(two["games"]) == list(range(12)), "every slot stored exactly once"
    assert two["games"] == one["games"], "the same games: actions, totals, places"
    assert two["tournament"].status == "finished"
    assert len(board(outputs[2][0])) == 3 and board(outputs[2][0]) == board(outputs[1][0])
    assert "Played by 2 local workers." in outputs[2][0]
    assert "12 games played in" in outputs[2][0] and " s by 2 workers, 0 faults" in outputs[2][0]
    assert "Played by 1 worker." in outputs[1][0]


def live_referees(db: Path) -> int:
    """How many referees ``arena web`` finds for the running tournament, once each of them
    lists a running match (a worker may be between two matches at one moment)."""
    from arena.web.live import referees, running_matches

    deadline = time.monotonic() + 120
    while True:
        with Store(str(db)) as store:
            addresses = referees(store, str(db), [])
        matches, problems = running_matches(addresses)
        if ({m.referee for m in matches} == set(addresses) and not problems) or time.monotonic() > deadline:
            assert not problems, problems
            return len({m.referee for m in matches})
        time.sleep(0.05)


@pytest.mark.slow
def test_sigterm_stops_the_workers_and_their_bots_and_another_n_resumes(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    command = arena("tournament", *LONGER, "--workers", "2", "--db", str(db), cwd=tmp_path)
    workers = workers_playing(command, db)
    below = {pid for worker in workers for pid in descendants(worker)} | set(workers)
    assert len(below) > len(workers), "the workers started their bots"
    assert live_referees(db) == 2, "arena web's live list reaches both workers' referees"
    command.send_signal(signal.SIGTERM)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 130, (out, err)
    assert "Resume with: arena tournament --resume" in err
    assert not [pid for pid in below if alive(pid)], "no worker or bot is left running"
    tournament_id = stored(db)["tournament"].id
    resume = arena("tournament", "--resume", tournament_id, "--db", str(db), cwd=tmp_path, ARENA_WORKERS="1")
    out, err = resume.communicate(timeout=240)
    assert resume.returncode == 0, (out, err)
    assert "Played by 1 worker." in out
    run = stored(db)
    assert sorted(run["games"]) == list(range(30)) and run["tournament"].status == "finished"


@pytest.mark.slow
def test_when_every_worker_dies_the_command_says_so_and_exits_1(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    command = arena("tournament", *LONGER, "--workers", "2", "--db", str(db), cwd=tmp_path)
    for worker in workers_playing(command, db):
        os.kill(worker, signal.SIGKILL)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 1, (out, err)
    assert err.count("killed by signal 9 (SIGKILL)") == 2
    (last,) = [line for line in err.splitlines() if line.startswith("Stopped:")]
    assert "all 2 workers ended with" in last and "games left. Resume with: arena tournament --resume t-" in last
    assert stored(db)["tournament"].status == "interrupted"
