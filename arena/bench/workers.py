"""The workers benchmark: the default tournament played by one worker and by N local
workers (``arena tournament --workers N``), as real processes, taking turns.

``arena bench workers [--games 40] [--workers 2] [--runs 3]`` plays the default
tournament (``--variant classic``, the default lineup, a fixed seed) with
``--workers 1`` and ``--workers N`` in turn, ``--runs`` times each (1 N 1 N ...: the
machine's drift and other jobs hit both alike), each run on a fresh SQLite file, and
prints each one's median wall time and games per second and the ratio of N to one.
The wall time is the whole command's (the lineup checked, the workers and their bots
started), as an organiser waits for it; the "play" figures are the command's own count
of its playing part. Every run must store the same games and the same board (the
ratings, Elo and tallies; not the think times): ``boards_identical`` says whether they
did. The load average before and after and the cores are reported beside the figures,
since a second worker only pays off with cores to spare.

    >>> figures = bench_workers(games=8, runs=1)      # doctest: +SKIP
"""

from __future__ import annotations

import os
import statistics
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from arena.bench.tournament_run import timed_tournament


def _result(db: Path) -> tuple[Any, ...]:
    """What must not depend on the number of workers: every stored game (bots, places,
    totals, actions) by slot, and the board (ratings, Elo, tallies; not think times)."""
    from arena.results.leaderboard import leaderboard
    from arena.store import Store

    with Store(str(db)) as store:
        (tournament,) = store.list_tournaments()
        games = {}
        for summary in store.list_matches(tournament_id=tournament.id, limit=100_000):
            record = store.load_match(summary.match_id)
            games[record.game_index] = (record.bots, record.places, record.totals, record.actions)
        board = [{k: v for k, v in asdict(row).items() if k not in ("think_p50_ms", "think_p99_ms")}
                 for row in leaderboard(store, "classic", tournament.id)]
    return games, board


def bench_workers(games: int = 40, workers: int = 2, runs: int = 3, seed: int = 7) -> dict[str, Any]:
    """Median wall time and games/s with one worker and with ``workers``, their ratio, and
    whether every run stored the same games and board."""
    options = ["--variant", "classic", "--games", str(games), "--seed", str(seed)]
    counts = (1, workers)
    walls: dict[int, list[float]] = {n: [] for n in counts}
    rates: dict[int, list[float]] = {n: [] for n in counts}
    results = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as root:
        for run in range(runs):
            for n in counts:
                folder = Path(root) / f"{n}-{run}"
                folder.mkdir()
                wall, rate = timed_tournament([*options, "--workers", str(n)], folder)
                walls[n].append(wall)
                rates[n].append(rate)
                results.append(_result(folder / "a.db"))
    figures: dict[str, Any] = {"games": len(results[0][0]), "runs": runs, "cores": os.cpu_count(),
                               "load_before": round(load_before, 1), "load_after": round(os.getloadavg()[0], 1)}
    for n in counts:
        wall = statistics.median(walls[n])
        figures[f"wall_s_{n}"] = round(wall, 2)
        figures[f"games_per_s_{n}"] = round(figures["games"] / wall, 2)
        figures[f"play_games_per_s_{n}"] = round(statistics.median(rates[n]), 2)
    figures[f"ratio_{workers}_to_1"] = round(figures[f"games_per_s_{workers}"] / figures["games_per_s_1"], 2)
    figures[f"play_ratio_{workers}_to_1"] = round(figures[f"play_games_per_s_{workers}"]
                                                  / figures["play_games_per_s_1"], 2)
    figures["boards_identical"] = all(result == results[0] for result in results)
    return figures
