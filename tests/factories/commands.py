"""One `arena` command as its own process: ``arena_stdout``, ``arena_json``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def arena_stdout(*args: str, cwd: Path) -> str:
    """Run one `arena` command as its own process; its stdout, or the test fails with its stderr."""
    done = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"arena {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


def arena_json(*args: str, cwd: Path) -> Any:
    return json.loads(arena_stdout(*args, "--format", "json", cwd=cwd))
