"""docs/training.md's random agent runs as written, from an empty folder."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pettingzoo", reason="the train extra is not installed: pip install -e '.[train]'")

DOC = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def test_the_random_agent_of_training_md_plays_a_game(tmp_path: Path) -> None:
    block = DOC.read_text().split("## A random agent", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert len(block.splitlines()) <= 10
    run = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    totals = ast.literal_eval(run.stdout.strip())     # it prints the game's totals
    assert len(totals) == 4 and all(isinstance(t, int) for t in totals)
