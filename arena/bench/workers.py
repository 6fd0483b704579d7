"""The workers benchmark: one tournament played by one worker, then by two, as real processes.

``arena bench workers [--games N]`` plays the same tournament (random bots,
so the bots' thinking does not hide the arena's own cost; 3 seats, 6 rounds, fixed
seed) twice: once with ``arena tournament`` alone (one worker), once with ``arena
tournament --workers 0`` and two ``arena worker`` processes. It prints games per second
for each and their ratio: the ratio is what carries to another machine (on 2 cores,
two workers compete with their own bots for the same cores). The figures include
starting the bot processes, as a real run does.

    >>> figures = bench_workers(games=6)      # doctest: +SKIP
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LINEUP = [arg for name, bot in (("a", "random_bot"), ("b", "random_bot"), ("c", "greedy_bot"), ("d", "greedy_bot"))
          for arg in ("--bot", f"{name}={sys.executable} -m sample_bots.{bot}")]


def _arena(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _wait(process: subprocess.Popen[str]) -> None:
    _, err = process.communicate(timeout=3600)
    if process.returncode != 0:
        raise RuntimeError(f"{process.args!r} failed: {err.strip().splitlines()[-1:]}")


def _tournament_id(db: str) -> str | None:
    from arena.store import Store

    try:
        with Store(db) as store:
            found = store.list_tournaments()
            return found[0].id if found and store.scheduled_games(found[0].id) else None
    except Exception:  # noqa: BLE001 (the organiser may be creating the schema right now)
        return None


def bench_workers(games: int = 240) -> dict[str, Any]:
    """Games per second with one worker and with two, each run on its own SQLite file in
    a temporary folder (the PostgreSQL cost of claiming and saving is ``arena bench store
    --worker-db``'s figure)."""
    options = ["--no-samples", *LINEUP, "--players", "3", "--rounds", "6", "--games", str(games), "--seed", "7",
               "--concurrency", "1"]
    figures: dict[str, Any] = {"games": games}
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        one = str(cwd / "one.db")
        started = time.perf_counter()
        _wait(_arena("tournament", *options, "--db", one, cwd=cwd))
        figures["one_worker_games_per_s"] = round(games / (time.perf_counter() - started), 1)

        two = str(cwd / "two.db")
        started = time.perf_counter()
        organiser = _arena("tournament", *options, "--workers", "0", "--db", two, cwd=cwd)
        deadline = time.monotonic() + 120
        tournament = None
        while tournament is None:
            tournament = _tournament_id(two)
            if time.monotonic() > deadline:
                raise RuntimeError("the tournament was not created")
            time.sleep(0.05)
        workers = [_arena("worker", "--tournament", tournament, "--db", two, cwd=cwd) for _ in range(2)]
        for process in (*workers, organiser):
            _wait(process)
        figures["two_workers_games_per_s"] = round(games / (time.perf_counter() - started), 1)
    figures["two_over_one"] = round(figures["two_workers_games_per_s"] / figures["one_worker_games_per_s"], 2)
    return figures

