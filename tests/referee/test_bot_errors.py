"""A bot's own errors are never hidden: when the bot's code raises or returns no option,
the Python SDK answers with its first option and says why (``Action.bot_error``); the
referee records a ``bot_error`` fault, `arena bot check` fails on it, and boards count it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import ROOT

BUGGY = ROOT / "tests" / "bots" / "buggy_bot.py"
RANDOM = f"{sys.executable} -m sample_bots.random_bot"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_a_buggy_bot_fails_bot_check_with_each_reason(tmp_path: Path) -> None:
    done = arena("bot", "check", f"{sys.executable} {BUGGY}", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "bot_error: bid returned 'lots', which is no whole number" in out
    assert "bot_error: play returned 'zz99', which is no option (choose from" in out
    assert any(line.startswith("FAILED") and "bot_error" in line for line in out.splitlines())


@pytest.mark.slow
def test_a_buggy_bot_is_counted_on_the_board(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    done = arena("tournament", "--no-samples", "--players", "3", "--rounds", "3", "--games", "3",
                 "--bot", f"buggy={sys.executable} {BUGGY}", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    board = json.loads(arena("leaderboard", "--db", str(db), "--format", "json", cwd=tmp_path).stdout)
    faults = {row["bot"]: row["faults"] for row in board["rows"]}
    assert faults["buggy"] >= 3 and faults["r1"] == faults["r2"] == 0
    listed = json.loads(arena("matches", "--db", str(db), "--format", "json", cwd=tmp_path).stdout)
    shown = arena("show", "--db", str(db), listed[0]["match_id"], cwd=tmp_path)
    assert "bot_error" in shown.stdout, shown.stdout
