"""One ``arena tournament`` run as a separate process, timed: what the benchmarks that
compare whole tournaments (``bench sandbox``, ``bench workers``) time."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

# The command's closing line: "40 games played in 9.8 s" (by N workers, with N of them).
PLAYED = re.compile(r"(\d+) games played in ([0-9.]+) s")


def timed_tournament(options: list[str], folder: Path) -> tuple[float, float]:
    """Play ``arena tournament OPTIONS --db folder/a.db`` in ``folder``: (whole wall
    seconds, games per second of the playing part, as the command's closing line says)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", *options, "--db", str(folder / "a.db")],
                          cwd=folder, capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "COLUMNS": "200"})     # the closing line on one line
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"arena tournament {' '.join(options)} failed: {done.stderr.strip().splitlines()[-1:]}")
    played = PLAYED.search(done.stdout)
    if played is None:
        raise RuntimeError(f"arena tournament printed no game count: {done.stdout[-300:]}")
    return wall, int(played.group(1)) / float(played.group(2))
