"""Traps a newcomer met in the `arena` command line, each with real parts: the `arena`
command as its own process, real bot processes, a real SQLite file in the test's folder.

- docs/sprt.md's example names the sample bots by name, and runs as written;
- `arena tournament --workers 0` prints the `arena worker` command that plays its games;
- a sample bot that drops out leaves one note on the games' rounding, for the lineup that plays;
- the sandbox's hint on a bot that never connected comes only when its output shows the
  sandbox may be why, not for a program that simply is not a bot;
- a plaintext sample bot at an `arena serve` with TLS says so in one line and exits, no retries.

The traps of `arena bot check` (its note on slow decisions, answers that were all wrong)
are tested with the rest of the check, in tests/check/test_bot_check.py.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from factories import ROOT
from factories.bots import needs_bwrap

from arena.tournament.lineup import NODE_BOT_DIR
from arena.tournament.sandbox import NEVER_CONNECTED_HINT

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


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_sample_bot_that_drops_out_leaves_one_note_on_the_games_for_the_lineup_that_plays(tmp_path: Path) -> None:
    # The Node.js sample bot dies as it starts (a package cache that looks complete, and a
    # node that fails at once: as with a broken install), so 6 bots become 5.
    lock = (NODE_BOT_DIR / "package-lock.json").read_bytes()
    fake = tmp_path / "cache" / "wizard-arena" / f"node-bot-{hashlib.sha256(lock).hexdigest()[:12]}"
    (fake / "node_modules" / "@grpc" / "grpc-js").mkdir(parents=True)
    done = arena("tournament", "--bot", "mine=random", "--games", "8", "--rounds", "1", "--sandbox", "none",
                 "--shared-processes", cwd=tmp_path,
                 env={"XDG_CACHE_HOME": str(tmp_path / "cache"),
                      "NODE_OPTIONS": f"--require={tmp_path / 'no-such-file.js'}"})
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    left_out = [i for i, line in enumerate(notes) if "node-heuristic" in line and "left out of the lineup" in line]
    rounded = [i for i, line in enumerate(notes) if "rounded up" in line]
    assert len(left_out) == 1 and len(rounded) == 1, notes
    assert rounded[0] > left_out[0], notes
    assert "games rounded up from 8 to 20 so that every bot plays every seat equally often (5 bots, 4 seats)" \
        in notes[rounded[0]], notes
    assert "20 games played" in done.stdout, done.stdout


NOT_A_BOT = "print('hello, world')\n"
# On its author's machine it reaches a service on TCP; confined, it has no network.
WANTS_THE_NETWORK = "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=5)\n"


@needs_bwrap()
@pytest.mark.parametrize("command, script, hinted", [
    ("/bin/true", None, False),
    ("hello.py", NOT_A_BOT, False),
    ("hello.py", WANTS_THE_NETWORK, True),
], ids=["bin-true", "prints-and-exits", "needs-the-network"])
def test_the_sandbox_hint_comes_only_when_the_sandbox_may_be_why(tmp_path: Path, command: str, script: str | None,
                                                                hinted: bool) -> None:
    if script is not None:
        (tmp_path / "hello.py").write_text(script)
    done = arena("tournament", "--no-samples", "--bot", f"x={command}", "--bot", "r1=random", "--bot", "r2=random",
                 "--players", "3", "--rounds", "1", "--games", "3", "--sandbox", "bwrap", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "bot 'x'" in line]
    assert "before connecting" in line, line
    assert (NEVER_CONNECTED_HINT in line) is hinted, line


def test_a_plaintext_bot_at_a_tls_arena_is_one_line_without_retries(tmp_path: Path) -> None:
    made = arena("tls-cert", "127.0.0.1", "--out", "tls", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    serve = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--db", "served.db",
         "--tls-cert", "tls/server.pem", "--tls-key", "tls/server-key.pem"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        port = re.match(r"arena listening on \S+:(\d+)", first)
        assert port, (first, serve.stderr.read() if serve.poll() is not None else "")
        # The random sample bot, as its author starts it, without --tls-ca: it would retry for
        # 60 s if it took the closed connection for an arena going down.
        bot = subprocess.run([sys.executable, "-m", "sample_bots.random_bot", "--arena", f"127.0.0.1:{port.group(1)}",
                              "--token", "t", "--retry-for", "60"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=30, env=ENV)
    finally:
        serve.terminate()
        serve.communicate(timeout=30)
    lines = bot.stderr.strip().splitlines()
    assert bot.returncode == 2, bot.stderr
    assert len(lines) == 1, lines
    assert "uses TLS, and this bot connected without it: give --tls-ca FILE" in lines[0], lines
    assert "retrying" not in bot.stderr and "gave up" not in bot.stderr
