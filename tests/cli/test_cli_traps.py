"""Traps a newcomer met in the `arena` command line, each with real parts: the `arena`
command as its own process, real bot processes, a real SQLite file in the test's folder.

- docs/sprt.md's example names the sample bots by name, and runs as written;
- `arena tournament --workers 0` prints the `arena worker` command that plays its games;
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from factories import ROOT

# Every test runs the arena command as its own process: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

ENV = {**os.environ, "COLUMNS": "200", "GRPC_VERBOSITY": "ERROR"}


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**ENV, **(env or {})})


def test_the_sprt_docs_example_runs_as_written_with_sample_bots_named_by_name(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "sprt.md").read_text()
    found = re.search(r"`(arena sprt --candidate [^`]*)`", text)
    assert found, "docs/sprt.md has no arena sprt example"
    argv = shlex.split(found.group(1))
    assert argv[:2] == ["arena", "sprt"] and "--max-games" in argv
    # The doc's own options, but one set (8 games at 4 seats) instead of its 1200 games, and
    # one process a bot rather than one for each game of the set: a cheaper start.
    argv[argv.index("--max-games") + 1] = "8"
    done = arena(*argv[1:], "--shared-processes", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not found" not in done.stderr and "Traceback" not in done.stderr
    assert re.search(r"\bheur\b", done.stdout) and re.search(r"\bgreedy\b", done.stdout), done.stdout
    assert "8 games played" in done.stdout, done.stdout


def test_a_tournament_without_workers_prints_the_worker_command_that_plays_it(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    tournament = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "tournament", "--workers", "0", "--no-samples", "--bot", "a=random",
         "--bot", "b=random", "--bot", "c=random", "--players", "3", "--rounds", "1", "--games", "3",
         "--sandbox", "none", "--db", "runs/t.db"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**ENV, "PYTHONUNBUFFERED": "1"})
    try:
        lines: list[str] = []
        assert tournament.stdout is not None
        for line in tournament.stdout:
            lines.append(line)
            if "start one or more with:" in line:
                break
        (said,) = [line for line in lines if "start one or more with:" in line]
        command = shlex.split(said.split("start one or more with: ", 1)[1])
        tournament_id = re.search(r"Tournament (t-\w+)", "".join(lines))
        assert tournament_id, lines
        assert command == ["arena", "worker", "--tournament", tournament_id.group(1), "--db", "runs/t.db"], said
        # The printed command, run as it is, plays every game; the tournament then ends by itself.
        worker = arena(*command[1:], cwd=tmp_path)
        assert worker.returncode == 0, worker.stdout + worker.stderr
        assert "3 games played" in worker.stdout, worker.stdout
        rest: list[str] = []
        reader = threading.Thread(target=lambda: rest.extend(tournament.stdout or []), daemon=True)
        reader.start()
        assert tournament.wait(timeout=120) == 0, (lines, tournament.stderr.read() if tournament.stderr else "")
        reader.join(timeout=10)
        assert "3 games stored by workers" in "".join(rest), rest
    finally:
        if tournament.poll() is None:
            tournament.kill()
            tournament.wait()
