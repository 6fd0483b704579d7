"""Traps a newcomer met in the `arena` command line, each with real parts: the `arena`
command as its own process, real bot processes, a real SQLite file in the test's folder.

- docs/sprt.md's example names the sample bots by name, and runs as written;
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
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
