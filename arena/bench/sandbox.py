"""The confinement benchmark: the default tournament unconfined, confined, and confined
with a fresh process per match, as real ``arena tournament`` processes.

``arena bench sandbox`` runs the same tournament (the default lineup and options, a
fixed seed) with ``--sandbox none``, ``--sandbox bwrap`` and ``--sandbox bwrap
--fresh-per-match``, in turn, ``--runs`` times each (A B C A B C ...: the machine's
drift hits all three alike), and prints each one's median wall time and games per
second with the ratio to the unconfined run. The wall time is the whole command's
(starting the referee and the bots included), as an organiser waits for it; the
games per second are the command's own count of the playing part.

    >>> figures = bench_sandbox(games=8, runs=1)      # doctest: +SKIP
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from arena.bench.tournament_run import timed_tournament

MODES = {
    "unconfined": ["--sandbox", "none"],
    "confined": ["--sandbox", "bwrap"],
    "fresh_per_match": ["--sandbox", "bwrap", "--fresh-per-match"],
}


def bench_sandbox(games: int = 40, rounds: int | None = None, runs: int = 3, seed: int = 7) -> dict[str, Any]:
    """Median wall time and games/s of each mode, and each one's ratio to the unconfined run."""
    options = ["--games", str(games), "--seed", str(seed), *(["--rounds", str(rounds)] if rounds else [])]
    walls: dict[str, list[float]] = {mode: [] for mode in MODES}
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as root:
        for run in range(runs):
            for mode, extra in MODES.items():
                folder = Path(root) / f"{mode}-{run}"
                folder.mkdir()
                wall, rate = timed_tournament([*options, *extra], folder)
                walls[mode].append(wall)
                rates[mode].append(rate)
    figures: dict[str, Any] = {"games": games, "runs": runs}
    for mode in MODES:
        figures[f"{mode}_wall_s"] = statistics.median(walls[mode])
        figures[f"{mode}_games_per_s"] = statistics.median(rates[mode])
    for mode in ("confined", "fresh_per_match"):
        figures[f"{mode}_wall_ratio"] = round(figures[f"{mode}_wall_s"] / figures["unconfined_wall_s"], 3)
        figures[f"{mode}_games_per_s_ratio"] = round(
            figures[f"{mode}_games_per_s"] / figures["unconfined_games_per_s"], 3)
    return figures
