"""The flood benchmark: a small confined tournament, as is and with a flooding bot in it.

``arena bench flood`` plays the same tournament (three Python sample bots, the rivals,
and a fourth bot; a fixed seed, ``--sandbox bwrap``, one worker) as real ``arena
tournament`` processes, ``--runs`` times each way, taking turns:

* **as is**: the fourth bot is ``sample_bots.random_bot``;
* **flooded**: the fourth bot is ``arena.bench.flooder``, which plays the same random
  legal answers while 16 threads call the referee's public calls and open ``Play``
  streams with made-up tokens through the address it was given (the Unix socket, from
  inside its sandbox).

For each it prints the wall time of the whole command, the rivals' think times (p50 and
p99 over every decision of the three rivals in the stored matches: what the referee
measured, so a busy referee shows there; the fourth bot's own are left out) and their
timeouts, the flooded run's ratios to the run as is, what the flood's calls got (from
the flooder's log) and how many console lines the refused streams took. Each figure is
the median of its runs.

    >>> figures = bench_flood(games=4, rounds=3, runs=1)      # doctest: +SKIP
"""

from __future__ import annotations

import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from arena.bench.tournament_run import PLAYED

PY = sys.executable
RIVALS = {"heuristic": "sample_bots.heuristic_bot", "greedy": "sample_bots.greedy_bot",
          "cautious": "sample_bots.cautious_bot"}
FOURTH = {"as_is": ("random", "sample_bots.random_bot"), "flooded": ("flooder", "arena.bench.flooder")}


def bench_flood(games: int = 8, rounds: int | None = None, runs: int = 1, seed: int = 7,
                threads: int = 16) -> dict[str, Any]:
    """The figures of both ways (medians of ``runs`` each) and the flooded run's ratios."""
    runs_of: dict[str, list[dict[str, Any]]] = {way: [] for way in FOURTH}
    with tempfile.TemporaryDirectory() as root:
        for run in range(runs):
            for way in FOURTH:
                folder = Path(root) / f"{way}-{run}"
                folder.mkdir()
                folder.chmod(0o755)      # the confined bots run as other users
                runs_of[way].append(_one_run(way, folder, games, rounds, seed, threads))
    figures: dict[str, Any] = {"games": games, "runs": runs, "flood_threads": threads}
    for way, measured in runs_of.items():
        for key in ("wall_s", "rivals_think_p50_ms", "rivals_think_p99_ms", "rivals_timeouts", "refusal_lines"):
            values = [m[key] for m in measured]
            figures[f"{way}_{key}"] = statistics.median(values) if key.endswith(("_s", "_ms")) else max(values)
    for key in ("wall_s", "rivals_think_p50_ms", "rivals_think_p99_ms"):
        figures[f"ratio_{key}"] = round(figures[f"flooded_{key}"] / figures[f"as_is_{key}"], 3)
    flood = runs_of["flooded"][-1]["flood"]
    figures["flood_calls"] = sum(flood.values())
    figures["flood_calls_per_s"] = round(figures["flood_calls"] / runs_of["flooded"][-1]["wall_s"], 1)
    by_code: collections.Counter[str] = collections.Counter()
    for what, count in flood.items():
        by_code[what.split(" ")[-1]] += count
    for code, count in sorted(by_code.items()):
        figures[f"flood_{code}"] = count
    return figures


def _one_run(way: str, folder: Path, games: int, rounds: int | None, seed: int, threads: int) -> dict[str, Any]:
    """Play one tournament in ``folder``; its wall time, the rivals' think times and timeouts,
    the flooder's last tally and the console's lines about refused streams."""
    name, module = FOURTH[way]
    fourth = f"{name}={PY} -m {module}" + (f" --flood-threads {threads}" if way == "flooded" else "")
    options = ["--no-samples", "--players", "4", "--games", str(games), "--seed", str(seed), "--sandbox", "bwrap",
               "--workers", "1", *(["--rounds", str(rounds)] if rounds else []),
               *(arg for bot, rival in RIVALS.items() for arg in ("--bot", f"{bot}={PY} -m {rival}")),
               "--bot", fourth, "--db", str(folder / "a.db")]
    started = time.perf_counter()
    done = subprocess.run([PY, "-m", "arena.cli", "tournament", *options], cwd=folder, capture_output=True,
                          text=True, timeout=3600, env={**os.environ, "COLUMNS": "200"})
    wall = time.perf_counter() - started
    if done.returncode != 0 or PLAYED.search(done.stdout) is None:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]
        raise RuntimeError(f"the {way.replace('_', ' ')} tournament failed: {' '.join(last)}")
    think, timeouts, tournament_id = _rivals(folder / "a.db")
    output = done.stdout + done.stderr
    return {"wall_s": round(wall, 2),
            "rivals_think_p50_ms": round(float(np.percentile(think, 50)), 3),
            "rivals_think_p99_ms": round(float(np.percentile(think, 99)), 3),
            "rivals_timeouts": timeouts,
            "refusal_lines": sum(1 for line in output.splitlines() if "refused" in line and "Play stream" in line),
            "flood": _flood_tally(folder / "arena-logs" / tournament_id / f"{name}.log")}


def _rivals(db: Path) -> tuple[np.ndarray, int, str]:
    """Every think time of the rivals' seats in the stored matches, their timeouts, and
    the tournament's id."""
    from arena.store import Store

    store = Store(str(db))
    (tournament,) = store.list_tournaments()
    latencies: list[float] = []
    timeouts = 0
    for summary in store.list_matches(tournament_id=tournament.id, limit=1_000_000):
        record = store.load_match(summary.match_id)
        rivals = {seat for seat, bot in enumerate(record.bots) if bot in RIVALS}
        latencies += [ms for (seat, _), ms in zip(record.actions, record.latencies_ms)
                      if seat in rivals and ms is not None]
        timeouts += sum(1 for fault in record.faults if fault.seat in rivals and fault.kind == "timeout")
    return np.array(latencies), timeouts, tournament.id


def _flood_tally(log: Path) -> dict[str, int]:
    """The flooder's calls by call and status code, from its ``FLOOD`` lines ({} if none).

    Each line is its process's tally so far; a tally smaller than the one before is a
    new process of the bot (one is started again when it stops), so the last line of
    each process is added up."""
    if not log.exists():
        return {}
    total: collections.Counter[str] = collections.Counter()
    last: dict[str, int] = {}
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith("FLOOD "):
            continue
        tally = json.loads(line[len("FLOOD "):])
        if sum(tally.values()) < sum(last.values()):
            total.update(last)
        last = tally
    total.update(last)
    return dict(total)
