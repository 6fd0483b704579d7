"""``arena tournament --gauntlet NAME``: one bot against a pool, every table.

The schedule is checked for balance directly; one short real run (real bot processes,
a real referee, SQLite in a temp dir) checks the result shown: the bot's row of the
board and its record against each opponent.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.tournament.schedule import ScheduleError, gauntlet_games, gauntlet_schedule

PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"


@pytest.mark.parametrize("opponents, players", [(4, 3), (5, 4), (3, 4), (6, 6)])
def test_every_table_has_the_bot_and_every_opponent_plays_equally(opponents: int, players: int) -> None:
    pool = [f"o{i}" for i in range(opponents)]
    games = gauntlet_games(1, opponents, players)
    schedule = gauntlet_schedule("me", pool, players, games, master_seed=5)
    assert len(schedule) == games and all(g.bots.count("me") == 1 for g in schedule)
    plays = Counter(b for g in schedule for b in g.bots if b != "me")
    assert set(plays) == set(pool) and len(set(plays.values())) == 1
    seats = Counter(g.bots.index("me") for g in schedule)
    assert set(seats) == set(range(players)) and len(set(seats.values())) == 1
    # Duplicate: each table's rotations share one deal.
    assert len({g.seed for g in schedule}) == games // players


def test_a_gauntlet_refuses_its_bot_as_an_opponent_and_too_small_a_pool() -> None:
    with pytest.raises(ScheduleError, match="own opponent"):
        gauntlet_schedule("me", ["me", "a", "b"], 3, 3, 1)
    with pytest.raises(ScheduleError, match="opponents"):
        gauntlet_schedule("me", ["a"], 3, 3, 1)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", "tournament", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_a_gauntlet_shows_its_bot_and_its_record_against_each_opponent(tmp_path: Path) -> None:
    bots = [x for name in ("me", "a", "b", "c") for x in ("--bot", f"{name}={RANDOM}")]
    done = run("--gauntlet", "me", "--no-samples", *bots, "--players", "3", "--rounds", "2", "--games", "6",
               "--db", str(tmp_path / "g.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "gauntlet of me against 3 bots (a, b, c), 9 games" in done.stdout    # rounded up: 3 tables x 3
    board = done.stdout.split("Wizard classic leaderboard")[1].split("me against each opponent")[0]
    assert " me " in board and not any(f" {x} " in board for x in "abc")
    record = done.stdout.split("me against each opponent")[1]
    assert all(f"│ {x} " in record for x in "abc")


def test_a_gauntlet_of_a_bot_not_in_the_lineup_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run("--gauntlet", "nobody", "--no-samples", "--bot", f"a={RANDOM}", "--bot", f"b={RANDOM}",
               "--bot", f"c={RANDOM}", "--players", "3", "--db", str(tmp_path / "g.db"), cwd=tmp_path)
    assert done.returncode == 2 and "--gauntlet nobody: no bot of that name" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "g.db").exists()
