"""The sample bots as processes (``sample_bot_command``, ``python_bot``, and the Node.js
bot's ``node_available``/``node_or_skip``), and whether bots can run confined here
(``needs_bwrap``)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from factories import ROOT

NODE_BOT = ROOT / "sample_bots" / "node_bot"



def node_available() -> str | None:
    """Why the Node.js bot cannot run here, or None when it can (installing its packages
    with ``npm ci`` first if they are missing)."""
    if shutil.which("node") is None:
        return "node is not installed"
    installed = NODE_BOT / "node_modules" / "@grpc" / "grpc-js"
    if not installed.is_dir():
        if shutil.which("npm") is None:
            return "npm is not installed, so the Node bot's packages cannot be installed"
        # The test processes (pytest-xdist) may all get here at once on a fresh checkout:
        # one installs, the others wait for it (npm ci first empties node_modules).
        with open(Path(tempfile.gettempdir()) / "wizard-arena-tests-npm.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not installed.is_dir():
                done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_BOT,
                                      capture_output=True, text=True, timeout=180)
                if done.returncode != 0:
                    pytest.fail(f"npm ci failed in {NODE_BOT}:\n{done.stderr[-2000:]}")
    return None


def node_or_skip() -> None:
    """Skip the test when the Node.js sample bot cannot play here (no node, no npm install)."""
    reason = node_available()
    if reason:
        pytest.skip(f"Node.js bot not playable: {reason}")


def python_bot(name: str) -> list[str]:
    """A Python sample bot, as a file or as a module (both forms run)."""
    if name in ("greedy", "cautious"):
        return [sys.executable, "-m", f"sample_bots.{name}_bot"]
    return [sys.executable, str(ROOT / "sample_bots" / f"{name}_bot.py")]


def sample_bot_command(name: str) -> list[str]:
    """How a sample bot is started; two bots use the ``python -m`` form so both forms run."""
    if name == "node-heuristic":
        return ["node", str(NODE_BOT / "bot.js")]
    if name in ("greedy", "cautious"):
        return [sys.executable, "-m", f"sample_bots.{name}_bot"]
    return [sys.executable, str(ROOT / "sample_bots" / f"{name}_bot.py")]


def bwrap_problem() -> str | None:
    """Why bots cannot run confined here (bubblewrap missing, or unable to make a sandbox),
    or None."""
    from arena.tournament.bot_limits import BotLimits
    from arena.tournament.sandbox import SandboxError, SandboxMode, find_confinement

    try:
        find_confinement(SandboxMode.BWRAP, BotLimits(), lambda line: None)
    except SandboxError as error:
        return str(error)
    return None


def needs_bwrap() -> pytest.MarkDecorator:
    """The mark of a test that runs bots confined: skipped where they cannot be, and with
    ``CI`` set an error at once (CI must run the sandbox tests)."""
    problem = bwrap_problem()
    if problem and os.environ.get("CI"):
        raise RuntimeError(f"confinement cannot run here, and CI is set: {problem}")
    return pytest.mark.skipif(problem is not None, reason=f"bubblewrap cannot run here: {problem}")
