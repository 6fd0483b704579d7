"""``arena play``'s bad arguments: one line on stderr, exit code 2, nothing started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BAD = [
    (["--players", "9"], "classic is for 3 to 6 players"),
    (["--variant", "chess"], "--variant"),
    (["--bots", "mine"], "--bots takes NAME=CMD"),
    (["--bots", "mine=no-such-program-here"], "not found"),
    (["--players", "3", "--bots", "a=python3,b=python3,c=python3"], "2 other seats"),
    (["--name", "two words"], "--name"),
    (["--bots", "you=python3"], "named 'you'"),
    (["--port", "70000"], "--port"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("options", "words"), BAD)
def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path, options: list[str], words: str) -> None:
    done = subprocess.run([sys.executable, "-m", "arena.cli", "play", "--db", str(tmp_path / "p.db"), *options],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "p.db").exists()
