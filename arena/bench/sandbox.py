"""The confinement benchmark: the default tournament unconfined, confined with one
process a bot, confined as by default (no process plays two games of one deal), and
confined with a fresh process per match, as real ``arena tournament`` processes.

``arena bench sandbox`` runs the same tournament (the default lineup and options, a
fixed seed) in each mode of :data:`MODES`, in turn, ``--runs`` times each (A B C D A B
C D ...: the machine's drift hits all alike), and prints each one's median

- wall time: the whole command's (starting the referee and the bots included), as an
  organiser waits for it;
- start time: from the command's start to its start line (``Tournament ID: ...``),
  printed once every bot has started and connected, right before the first game;
- games per second: the command's own count of its playing part;
- peak bot memory: the largest sum, over the run, of the resident set (RSS, from
  ``/proc/PID/statm``) of every process under the command's but the arena's own (the
  bots, their sandboxes' bubblewrap, any ``arena worker``'s excluded), sampled every
  :data:`SAMPLE_SECONDS`. Pages the bots share (the interpreter's code, read from the
  same files) count once per process: an upper bound of what they cost together, the
  figure ``top`` adds up;

with each mode's ratio to the unconfined run.

    >>> figures = bench_sandbox(games=8, runs=1)      # doctest: +SKIP
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bench.tournament_run import PLAYED

MODES = {
    "unconfined": ["--sandbox", "none", "--shared-processes"],
    "shared": ["--sandbox", "bwrap", "--shared-processes"],     # before the pools: one process a bot
    "confined": ["--sandbox", "bwrap"],                         # the default: no process plays a deal twice
    "fresh_per_match": ["--sandbox", "bwrap", "--fresh-per-match"],
}
SAMPLE_SECONDS = 0.1
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Watched:
    """One run of ``arena tournament``: seconds in all and until its start line, games
    per second of its playing part, and the most memory its bots held at once (bytes)."""

    wall: float
    start: float
    games_per_s: float
    peak_bot_bytes: int


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/PID/stat``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])     # after the name, which may hold spaces
        children.setdefault(ppid, []).append(int(entry))
    return children


def _is_arena(pid: int) -> bool:
    try:
        return b"arena.cli" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def bot_memory(root: int) -> int:
    """The resident bytes of every process under ``root`` that is not an arena process."""
    children = _children()
    total, todo = 0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        if _is_arena(pid):
            continue
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


def watched_tournament(options: list[str], folder: Path) -> Watched:
    """Play ``arena tournament OPTIONS --db folder/a.db`` in ``folder``, timing it and
    sampling its bots' memory (:class:`Watched`)."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", *options, "--db",
                                str(folder / "a.db")], cwd=folder, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})
    out: list[str] = []
    err: list[str] = []
    start_line: list[float] = []

    def read_out() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if not start_line and line.startswith("Tournament "):
                start_line.append(time.perf_counter() - started)
            out.append(line)

    def read_err() -> None:
        assert process.stderr is not None
        err.extend(process.stderr)

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for reader in readers:
        reader.start()
    peak = 0
    while process.poll() is None:
        peak = max(peak, bot_memory(process.pid))
        time.sleep(SAMPLE_SECONDS)
    wall = time.perf_counter() - started
    for reader in readers:
        reader.join(10)
    if process.returncode != 0:
        raise RuntimeError(f"arena tournament {' '.join(options)} failed: {''.join(err).strip().splitlines()[-1:]}")
    played = PLAYED.search("".join(out))
    if played is None or not start_line:
        raise RuntimeError(f"arena tournament printed no start line or game count: {''.join(out)[-300:]}")
    return Watched(wall, start_line[0], int(played.group(1)) / float(played.group(2)), peak)


def bench_sandbox(games: int = 40, rounds: int | None = None, runs: int = 3, seed: int = 7) -> dict[str, Any]:
    """Each mode's median wall time, start time, games/s and peak bot memory (MiB), and
    each one's ratio to the unconfined run."""
    options = ["--games", str(games), "--seed", str(seed), *(["--rounds", str(rounds)] if rounds else [])]
    seen: dict[str, list[Watched]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as root:
        for run in range(runs):
            for mode, extra in MODES.items():
                folder = Path(root) / f"{mode}-{run}"
                folder.mkdir()
                seen[mode].append(watched_tournament([*options, *extra], folder))
    figures: dict[str, Any] = {"games": games, "runs": runs, "memory": "peak sum of the bot processes' RSS, MiB"}
    for mode, watched in seen.items():
        figures[f"{mode}_wall_s"] = round(statistics.median(w.wall for w in watched), 3)
        figures[f"{mode}_start_s"] = round(statistics.median(w.start for w in watched), 3)
        figures[f"{mode}_games_per_s"] = round(statistics.median(w.games_per_s for w in watched), 3)
        figures[f"{mode}_bot_memory_mib"] = round(statistics.median(w.peak_bot_bytes for w in watched) / 2**20, 1)
    ratios = {"wall_s": "wall", "start_s": "start", "games_per_s": "games_per_s", "bot_memory_mib": "bot_memory"}
    for mode in list(MODES)[1:]:
        for figure, ratio in ratios.items():
            base = figures[f"unconfined_{figure}"]
            figures[f"{mode}_{ratio}_ratio"] = round(figures[f"{mode}_{figure}"] / base, 3) if base else float("nan")
    return figures
