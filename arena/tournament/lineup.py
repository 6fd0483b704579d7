"""Which bots play, and starting them as their own processes.

A bot in the lineup is a name and the command that starts it. The arena appends
``--arena HOST:PORT --token TOKEN`` to the command (and sets ``ARENA_ADDRESS``,
``ARENA_TOKEN``, ``ARENA_BOT_NAME``, ``ARENA_MAX_MATCHES`` in its environment), so
any program that reads either can play. Bots are started with exec, never fork
(a forked child of a running grpc process hangs; see GRPC-NOTES).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import sample_bots
from arena.wire.proto_gen import INSTALLED_PROTO

SAMPLE_DIR = Path(sample_bots.__file__).resolve().parent
NODE_BOT_DIR = SAMPLE_DIR / "node_bot"
# The contract as installed with the package (the repository's proto/ is not installed).
PROTO_FILE = INSTALLED_PROTO

# The Python sample bots, by the name they play under and their module.
PYTHON_SAMPLE_BOTS = {
    "random": "sample_bots.random_bot",
    "heuristic": "sample_bots.heuristic_bot",
    "greedy": "sample_bots.greedy_bot",
    "cautious": "sample_bots.cautious_bot",
}
NODE_BOT_NAME = "node-heuristic"
# The reference bots `--lineup ladder` adds to the sample bots: stronger and much slower
# (about 100 ms a decision), so the default tournament stays quick without them.
LADDER_BOTS = {"search": "sample_bots.search_bot"}
LINEUPS = ("samples", "ladder")
BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


class LineupError(ValueError):
    """A bot option that cannot work: bad name, missing program."""


class BotStartError(RuntimeError):
    """A bot process that could not start, or ended before it connected."""

    def __init__(self, bot: str, message: str, log: Path | None = None):
        super().__init__(message)
        self.bot = bot
        self.log = log        # the bot's output, when it ran at all


@dataclass
class BotEntry:
    """A bot the arena starts: its name and its command (before the arena's own arguments)."""

    name: str
    command: list[str]
    cwd: Path | None = None
    # Sample bots understand these; foreign commands get them only through the environment.
    extra_args: bool = False
    env: dict[str, str] = field(default_factory=dict)   # added to the process's environment


def check_name(name: str) -> str:
    if not BOT_NAME.match(name):
        raise LineupError(f"bad bot name {name!r}: use 1-40 letters, digits, '-', '_' or '.'")
    return name


# Script files run with an interpreter whatever their mode bits or first line say:
# the arena's own Python (so the bot can import arena.sdk), and node for JavaScript.
INTERPRETERS = {".py": [sys.executable], ".js": ["node"]}


def parse_bot_option(text: str) -> BotEntry:
    """``NAME=COMMAND`` from ``--bot``: a command that can start, or a one-line LineupError.

    A ``.py`` file runs with the arena's own Python and a ``.js`` file with ``node``,
    executable or not; any other program must be on ``PATH`` or an executable file.

    >>> parse_bot_option("mine=python3 -c pass").command
    ['python3', '-c', 'pass']
    >>> import os, tempfile
    >>> script = os.path.join(tempfile.mkdtemp(), "my_bot.py")
    >>> open(script, "w").close()
    >>> parse_bot_option(f"mine={script} --fast").command == [sys.executable, script, "--fast"]
    True
    """
    name, sep, command = text.partition("=")
    if not sep or not command.strip():
        raise LineupError(f"--bot takes NAME=COMMAND (got {text!r})")
    name = check_name(name.strip())
    try:
        argv = shlex.split(command)
    except ValueError as error:          # e.g. an unclosed quote
        raise LineupError(f"bot {name!r}: cannot read the command {command!r} ({error})") from None
    # Run from where it was given, so relative paths in it still work on --resume elsewhere.
    return BotEntry(name, startable(name, argv), cwd=Path.cwd())


def startable(name: str, argv: list[str]) -> list[str]:
    """``argv`` as it will be run, checked the way exec will check it, so that a bot
    that cannot start is refused before anything is written."""
    program = argv[0]
    path = Path(program)
    if path.suffix in INTERPRETERS and path.is_file():
        interpreter = INTERPRETERS[path.suffix]
        if shutil.which(interpreter[0]) is None:
            raise LineupError(f"bot {name!r}: {program} needs {interpreter[0]}, which is not installed")
        return [*interpreter, *argv]
    if "/" not in program and shutil.which(program) is not None:
        return argv
    if path.is_dir():
        raise LineupError(f"bot {name!r}: {program} is a folder, not a program")
    if not path.is_file():
        raise LineupError(f"bot {name!r}: program {program!r} not found")
    if not os.access(path, os.X_OK):
        raise LineupError(f"bot {name!r}: {program} is not executable "
                          f"(chmod +x {shlex.quote(program)}, or name its interpreter: 'python3 {program}')")
    # A file in this folder named without "./" would be looked up on PATH by exec.
    return [program if "/" in program else f"./{program}", *argv[1:]]


def node_packages_dir() -> Path:
    """Where the Node bot's npm packages live: a per-user cache, one folder per lock file
    (never inside the Python installation, which may be read-only)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    lock = (NODE_BOT_DIR / "package-lock.json").read_bytes()
    return cache / "wizard-arena" / f"node-bot-{hashlib.sha256(lock).hexdigest()[:12]}"


def node_ready(notice: Callable[[str], None]) -> Path | None:
    """The folder holding the Node bot's ``node_modules`` once node is installed and the
    packages are (installed with npm on first use, under a lock so that two arenas
    starting together do not race); otherwise say why in one line and return None."""
    if shutil.which("node") is None:
        notice("node is not installed: the Node.js sample bot is left out")
        return None
    npm = shutil.which("npm")
    folder = node_packages_dir()
    if (folder / "node_modules" / "@grpc" / "grpc-js").is_dir():
        return folder
    if npm is None:
        notice("npm is not installed: the Node.js sample bot is left out")
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        import fcntl

        with open(folder.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)      # another arena may be installing right now
            if (folder / "node_modules" / "@grpc" / "grpc-js").is_dir():
                return folder
            notice(f"installing the Node.js sample bot's packages into {folder} (first use only)...")
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(NODE_BOT_DIR / name, folder / name)
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=folder,
                                  capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        notice(f"npm failed ({exc}): the Node.js sample bot is left out")
        return None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        notice(f"npm failed ({last}): the Node.js sample bot is left out")
        return None
    return folder


def sample_lineup(notice: Callable[[str], None], with_node: bool = True, lineup: str = "samples") -> list[BotEntry]:
    """The sample bots: the Python ones always, the Node.js one when its runtime is here;
    with ``lineup="ladder"`` the search bot too (:data:`LADDER_BOTS`)."""
    python_bots = {**PYTHON_SAMPLE_BOTS, **(LADDER_BOTS if lineup == "ladder" else {})}
    entries = [BotEntry(name, [sys.executable, "-m", module], extra_args=True)
               for name, module in python_bots.items()]
    packages = node_ready(notice) if with_node and (NODE_BOT_DIR / "bot.js").exists() else None
    if packages is not None:
        # NODE_PATH: node finds the cached packages although bot.js sits elsewhere.
        entries.append(BotEntry(NODE_BOT_NAME, ["node", str(NODE_BOT_DIR / "bot.js"), "--proto", str(PROTO_FILE)],
                                extra_args=True, env={"NODE_PATH": str(packages / "node_modules")}))
    return entries


@dataclass
class BotProcesses:
    """The running bot processes of one tournament; their output goes to ``log_dir``."""

    log_dir: Path
    processes: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)

    async def start(self, entry: BotEntry, address: str, token: str, max_matches: int) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        argv = [*entry.command, "--arena", address, "--token", token]
        if entry.extra_args:
            argv += ["--name", entry.name, "--max-matches", str(max_matches)]
        env = {**os.environ, **entry.env, "ARENA_ADDRESS": address, "ARENA_TOKEN": token,
               "ARENA_BOT_NAME": entry.name, "ARENA_MAX_MATCHES": str(max_matches),
               "ARENA_PARENT_PID": str(os.getpid()), "PYTHONUNBUFFERED": "1"}
        log = open(self.log_dir / f"{entry.name}.log", "ab")
        try:
            self.processes[entry.name] = await asyncio.create_subprocess_exec(
                *argv, cwd=entry.cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,  # a Ctrl-C in the terminal is the arena's to handle, not the bots'
            )
        except OSError as error:   # exec refused it: no such file, not executable, bad "#!" line...
            raise BotStartError(entry.name, f"bot {entry.name!r} cannot start: {' '.join(map(shlex.quote, argv[:1]))}: "
                                f"{error.strerror or error}") from None
        finally:
            log.close()

    def exited(self) -> dict[str, int]:
        """Bots whose process has ended, with their exit codes."""
        return {name: p.returncode for name, p in self.processes.items() if p.returncode is not None}

    async def stop(self, timeout: float = 3.0, only: str | None = None) -> None:
        """SIGTERM every bot (or just ``only``), then SIGKILL those still running after ``timeout``."""
        processes = {only: self.processes[only]} if only is not None else self.processes
        for proc in processes.values():
            if proc.returncode is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in processes.values():
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                try:
                    proc.kill()
                except ProcessLookupError:
                    pass
                await proc.wait()
