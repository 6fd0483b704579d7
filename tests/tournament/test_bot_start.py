"""Starting the lineup: how `--bot` commands run, and what a bot that cannot start leaves behind.

Every test runs the real `arena tournament` command with real bot processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.store import Store
from arena.tournament.lineup import NODE_BOT_DIR

# Every test runs the arena command as its own process: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
QUICK = ["--players", "3", "--rounds", "2", "--games", "3", "--no-samples"]

# A bot in the README's style: it imports the arena's SDK, so it only runs with the
# arena's own Python, and it is deliberately not executable.
SDK_BOT = """\
from arena.sdk import Bot, run


class Mine(Bot):
    def bid(self, obs, options):
        return options[0]

    def play(self, obs, options):
        return options[0]


if __name__ == "__main__":
    run(Mine)
"""


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PATH": os.environ["PATH"], "HOME": str(cwd), **(env or {})})


def one_line_error(done: subprocess.CompletedProcess[str], *expected: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line, done.stderr
    for text in expected:
        assert text in line
    return line


def test_a_py_file_runs_with_the_arenas_python_even_when_not_executable(tmp_path: Path) -> None:
    bot = tmp_path / "my_bot.py"
    bot.write_text(SDK_BOT)
    bot.chmod(0o644)
    done = arena("tournament", *QUICK, "--bot", "mine=my_bot.py", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mine" in done.stdout and "3 games played" in done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_js_file_runs_with_node(tmp_path: Path) -> None:
    # Its own packages cannot be found here, so it fails to start: what matters is that
    # node ran it (its error is node's), although the file is not executable.
    (tmp_path / "bot.js").write_text("require('no-such-package-anywhere');\n")
    done = arena("tournament", *QUICK, "--bot", "js=bot.js", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 cwd=tmp_path)
    one_line_error(done, "bot 'js' exited with code 1 before connecting")
    log = next((tmp_path / "arena-logs").glob("*/js.log")).read_text()
    assert "no-such-package-anywhere" in log


def test_a_file_that_is_not_executable_and_not_a_script_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "prog").write_text("echo hi\n")
    done = arena("tournament", *QUICK, "--bot", "a=./prog", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 cwd=tmp_path)
    one_line_error(done, "./prog is not executable", "chmod +x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog"]


def test_a_command_exec_refuses_is_one_line_and_leaves_no_tournament(tmp_path: Path) -> None:
    script = tmp_path / "bot.sh"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    done = arena("tournament", *QUICK, "--bot", "a=./bot.sh", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 cwd=tmp_path)
    one_line_error(done, "bot 'a' cannot start", "No such file or directory")
    # No database, no log folder: as if the command had never run.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bot.sh"]


def test_a_named_bot_that_dies_at_start_fails_the_command_and_an_existing_database_keeps_only_its_own(
        tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(str(db)) as store:
        kept = store.create_tournament({"game": {"variant": "classic", "players": 3}}, 1, status="finished")
    (tmp_path / "crash.py").write_text("raise SystemExit('broken on purpose')\n")
    done = arena("tournament", *QUICK, "--bot", "crash=crash.py", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
                 cwd=tmp_path)
    line = one_line_error(done, "bot 'crash' exited with code 1 before connecting")
    with Store(str(db)) as store:
        assert [t.id for t in store.list_tournaments()] == [kept]
    # The log the message points at is kept: it says why.
    log = Path(line.split("its output: ")[1].rstrip(")"))
    assert "broken on purpose" in log.read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_an_optional_sample_bot_that_fails_to_start_is_left_out_and_the_tournament_goes_on(tmp_path: Path) -> None:
    # A package cache that looks complete (so no npm runs) and a node that fails as it
    # starts: the Node.js sample bot dies before connecting, as with a broken install.
    # (NODE_OPTIONS rather than the empty cache alone: in a checkout, bot.js would find
    # packages in its own folder; and unconfined, since only then does the organiser's
    # environment reach a bot.)
    lock = (NODE_BOT_DIR / "package-lock.json").read_bytes()
    fake = tmp_path / "cache" / "wizard-arena" / f"node-bot-{hashlib.sha256(lock).hexdigest()[:12]}"
    (fake / "node_modules" / "@grpc" / "grpc-js").mkdir(parents=True)
    done = arena("tournament", "--rounds", "1", "--games", "4", "--sandbox", "none", cwd=tmp_path,
                 env={"XDG_CACHE_HOME": str(tmp_path / "cache"),
                      "NODE_OPTIONS": f"--require={tmp_path / 'no-such-file.js'}"})
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "node-heuristic" in line]
    assert len(notes) == 1 and "left out of the lineup" in notes[0]
    assert "node-heuristic" not in done.stdout
    assert "4 bots (random, heuristic, greedy, cautious)" in done.stdout
    with Store(str(tmp_path / "arena.db")) as store:
        (stored,) = store.list_tournaments()
        assert [b["name"] for b in stored.settings["bots"]] == ["random", "heuristic", "greedy", "cautious"]
        assert stored.status == "finished" and stored.matches == stored.settings["games"] == 4


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_left_out_sample_bots_log_stays_when_the_tournament_then_cannot_be_scheduled(tmp_path: Path) -> None:
    # As above, the Node.js sample bot dies as it starts; with --players 5 the 4 bots left
    # cannot fill a table, so the new tournament is discarded, but not the log its note names.
    lock = (NODE_BOT_DIR / "package-lock.json").read_bytes()
    fake = tmp_path / "cache" / "wizard-arena" / f"node-bot-{hashlib.sha256(lock).hexdigest()[:12]}"
    (fake / "node_modules" / "@grpc" / "grpc-js").mkdir(parents=True)
    done = arena("tournament", "--rounds", "1", "--players", "5", "--sandbox", "none", cwd=tmp_path,
                 env={"XDG_CACHE_HOME": str(tmp_path / "cache"),
                      "NODE_OPTIONS": f"--require={tmp_path / 'no-such-file.js'}"})
    assert done.stderr.splitlines()[-1] == ("arena: error: 5-player tables need at least 5 bots (the lineup has 4): "
                                            "add bots with --bot NAME=COMMAND (repeatable), or --lineup ladder "
                                            "(the sample bots, the learned bot and the search bot), or --players 4")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (note,) = [line for line in done.stderr.splitlines() if "left out of the lineup" in line]
    log = Path(note.split("its output: ")[1].split(")")[0])
    assert "no-such-file.js" in log.read_text()
    assert not (tmp_path / "arena.db").exists()


def test_an_unconfined_bot_gets_the_organisers_environment_but_not_the_organisers_arena_variables(
        tmp_path: Path) -> None:
    # An organiser with a CA for --server tournaments and an admin token in the environment
    # runs a local tournament of bots they trust: the bots inherit the rest of it.
    (tmp_path / "env_bot.py").write_text(
        "import json, os, pathlib, sys\n"
        "pathlib.Path('env.json').write_text(json.dumps(dict(os.environ)))\n"
        "sys.exit(3)\n")
    done = arena("tournament", *QUICK, "--sandbox", "none", "--bot", "e=env_bot.py", "--bot", f"r1={RANDOM}",
                 "--bot", f"r2={RANDOM}", cwd=tmp_path,
                 env={"ARENA_TLS_CA": "/nonexistent/ca.pem", "ARENA_ADMIN_TOKEN": "organiser-secret",
                      "ORGANISERS_OWN": "kept"})
    assert "bot 'e' exited with code 3 before connecting" in done.stderr
    env = json.loads((tmp_path / "env.json").read_text())
    assert env["ORGANISERS_OWN"] == "kept" and env["ARENA_BOT_NAME"] == "e"
    assert sorted(k for k in env if k.startswith("ARENA_")) == [
        "ARENA_ADDRESS", "ARENA_BOT_NAME", "ARENA_MAX_MATCHES", "ARENA_PARENT_PID", "ARENA_TOKEN"]
