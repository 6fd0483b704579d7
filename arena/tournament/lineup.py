"""Which bots play, and starting them as their own processes.

A bot in the lineup is a name and the command that starts it. The arena appends
``--arena ADDRESS --token TOKEN`` to the command (and sets ``ARENA_ADDRESS``,
``ARENA_TOKEN``, ``ARENA_BOT_NAME``, ``ARENA_MAX_MATCHES`` in its environment), so
any program that reads either can play. A confined bot (the default, see
arena.tournament.sandbox) gets the referee's Unix socket as its address
(``unix:/run/arena/referee.sock``), an unconfined one its TCP address. Bots are
started with exec, never fork (a forked child of a running grpc process hangs).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

import sample_bots
from arena.settings import BotEntry
from arena.tournament.bot_files import (
    JOURNAL_SUFFIXES,
    BotFiles,
    BotFilesError,
    copy_own_files,
    file_key,
    find_bot_files,
    is_sqlite,
    open_files,
    package_folders,
    within,
)
from arena.tournament.sandbox import (
    NEVER_CONNECTED_HINT,
    SOCKET_DIR,
    Confinement,
    Launched,
    LaunchSpec,
    SandboxMode,
    launch,
    sandbox_may_be_why,
    unconfined,
)
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
# The reference bots `--lineup ladder` adds to the sample bots: the learned policy (a rung
# above heuristic, under 1 ms a decision) and the search bot (the top, about 100 ms a
# decision, so the default tournament stays quick without it).
LADDER_BOTS = {"learned": "sample_bots.learned_bot", "search": "sample_bots.search_bot"}
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
    executable or not; a Python sample bot's name (``heuristic`` or ``heuristic_bot``,
    :func:`sample_module`) runs that sample bot, with any arguments after it; any other
    program must be on ``PATH`` or an executable file.

    >>> parse_bot_option("mine=python3 -c pass").command
    ['python3', '-c', 'pass']
    >>> import os, tempfile
    >>> script = os.path.join(tempfile.mkdtemp(), "my_bot.py")
    >>> open(script, "w").close()
    >>> parse_bot_option(f"mine={script} --fast").command == [sys.executable, script, "--fast"]
    True
    >>> parse_bot_option("heur=heuristic_bot").command == [sys.executable, "-m", "sample_bots.heuristic_bot"]
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
    sample = sample_module(argv[0])
    argv = [sys.executable, "-m", sample, *argv[1:]] if sample is not None else startable(name, argv)
    files = find_bot_files(argv, Path.cwd())
    try:
        stamp = copy_own_files(files, None)
    except BotFilesError as error:
        raise LineupError(f"bot {name!r}: {error}{TOO_BIG_HINT}") from None
    # Run from where it was given, so relative paths in it still work on --resume elsewhere.
    # A sample bot takes the arena's --name and --max-matches, as in the sample lineup.
    return BotEntry(name, argv, cwd=Path.cwd(), extra_args=sample is not None, files=files, stamp=stamp)


def sample_module(program: str) -> str | None:
    """The module of the Python sample bot a command's first word names, by its name in
    the lineup (``heuristic``) or its module's (``heuristic_bot``); None for anything
    else, and for a program of that name on ``PATH`` or in this folder, which wins.

    >>> sample_module("heuristic"), sample_module("search_bot"), sample_module("python3")
    ('sample_bots.heuristic_bot', 'sample_bots.search_bot', None)
    """
    if "/" in program or shutil.which(program) is not None or Path(program).exists():
        return None
    for name, module in {**PYTHON_SAMPLE_BOTS, **LADDER_BOTS}.items():
        if program in (name, module.rpartition(".")[2]):
            return module
    return None


TOO_BIG_HINT = (": a bot runs from a copy of its own folder, so give it a folder of its own with just what it runs "
                "(a compiled bot: copy the program out of its build folder), and name large data files on its "
                "command line from outside that folder (a named path is readable as it is, not copied)")


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
        samples = ", ".join({**PYTHON_SAMPLE_BOTS, **LADDER_BOTS})
        raise LineupError(f"bot {name!r}: program {program!r} not found (give a program on PATH, a file, or a "
                          f"sample bot's name: {samples})")
    if not os.access(path, os.X_OK):
        raise LineupError(f"bot {name!r}: {program} is not executable "
                          f"(chmod +x {shlex.quote(program)}, or name its interpreter: 'python3 {program}')")
    # A file in this folder named without "./" would be looked up on PATH by exec.
    return [program if "/" in program else f"./{program}", *argv[1:]]


def program_files(entry: BotEntry) -> list[Path]:
    """The files a bot's command names (its script, its program), resolved from where
    it was given: what the other bots of a tournament must not read.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp(); open(os.path.join(folder, "a.py"), "w").close()
    >>> [p.name for p in program_files(BotEntry("a", [sys.executable, "a.py", "--fast"], cwd=Path(folder)))]
    ['a.py']
    """
    base = entry.cwd or Path.cwd()
    shared = [Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", sys.prefix, sys.base_prefix)]
    files = []
    for arg in entry.command:
        path = (base / arg).resolve()
        if not arg.startswith("-") and path.is_file() and not any(path.is_relative_to(root) for root in shared):
            files.append(path)
    return files


def private_to_root(paths: list[Path]) -> Path | None:
    """The first of a bot's own files or folders that an unprivileged user cannot read
    (a confined bot of a root arena runs under a uid of its own), or None."""
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & wanted != wanted:
            return path
    return None


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
    with ``lineup="ladder"`` the learned and search bots too (:data:`LADDER_BOTS`)."""
    python_bots = {**PYTHON_SAMPLE_BOTS, **(LADDER_BOTS if lineup == "ladder" else {})}
    entries = [BotEntry(name, [sys.executable, "-m", module], extra_args=True)
               for name, module in python_bots.items()]
    packages = node_ready(notice) if with_node and (NODE_BOT_DIR / "bot.js").exists() else None
    if packages is not None:
        # NODE_PATH: node finds the cached packages although bot.js sits elsewhere.
        entries.append(BotEntry(NODE_BOT_NAME, ["node", str(NODE_BOT_DIR / "bot.js"), "--proto", str(PROTO_FILE)],
                                extra_args=True, env={"NODE_PATH": str(packages / "node_modules")},
                                readable=[packages]))
    return entries


# What one bot process may write to its log in a run of it: a bot that prints without
# end fills neither the disk nor the arena's time (the rest of its output is dropped).
LOG_LIMIT = 16 << 20
def databases_in(folders: list[Path], skip: Collection[Path] = (), depth: int = 3, budget: int = 5000) -> list[Path]:
    """SQLite files in ``folders`` (``depth`` levels down, at most ``budget`` entries looked
    at), each with its journal files (``-wal`` holds its latest pages): a confined bot sees
    its own folder, never a database that sits in it.

    It never opens a file in ``skip`` nor one this process has open, and never a journal
    file: closing any descriptor of a file drops every POSIX lock this process holds on it,
    SQLite's own included. Another process's SQLite (``arena web``, a reader) would then
    take the arena's database for unused: truncate its ``-shm`` under this process's
    mapping (a SIGBUS here) or checkpoint it and delete its WAL."""
    found: list[Path] = []
    todo = [(folder, 0) for folder in folders]
    untouchable = open_files() | {key for path in skip if (key := file_key(path)) is not None}
    while todo and budget > 0:
        folder, level = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries[:budget]:
            budget -= 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if level < depth and entry.name != "node_modules":
                        todo.append((Path(entry.path), level + 1))
                    continue
                if not entry.is_file(follow_symlinks=False) or entry.name.endswith(JOURNAL_SUFFIXES):
                    continue
                if is_sqlite(Path(entry.path), untouchable):
                    found += [Path(entry.path + suffix) for suffix in ("", *JOURNAL_SUFFIXES)]
            except OSError:
                continue
    return found


def exit_reason(code: int) -> str:
    """A process's end in words.

    >>> exit_reason(1), exit_reason(-9)
    ('exited with code 1', 'killed by signal 9 (SIGKILL)')
    """
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"killed by signal {-code}"
    return f"killed by signal {-code} ({name})"


async def copy_output(stream: asyncio.StreamReader, log: Path, limit: int = LOG_LIMIT) -> None:
    """Append what a bot prints to its log, up to ``limit`` bytes; after that one line says
    the rest was dropped, and the output is still read (so the bot never blocks on it).

    Whole lines at a time: the processes of one bot (``--fresh-per-match``) share a log,
    and a line cut between two reads would otherwise take another process's line into
    its middle. A line longer than a read is written as it comes."""
    written = 0
    pending = b""
    with open(log, "ab") as out:

        def keep(data: bytes) -> None:
            nonlocal written
            if written < limit:
                out.write(data[:limit - written])
                written += len(data)
                if written >= limit:
                    out.write(f"\n[arena: this bot's output past {limit >> 20} MiB is not kept]\n".encode())
                out.flush()

        while chunk := await stream.read(READ_SIZE):
            pending += chunk
            cut = pending.rfind(b"\n") + 1 or (len(pending) if len(pending) >= READ_SIZE else 0)
            if cut:
                keep(pending[:cut])
                pending = pending[cut:]
        if pending:
            keep(pending)


READ_SIZE = 1 << 16


SOCKET_FOLDER_PREFIX = "arena-referee-"


SOCKET_PATH_MAX = 100
"""The longest Unix socket path we bind: the kernel's ``sun_path`` holds 108 bytes
with the closing NUL, and a longer path fails to bind with no useful error."""


def _socket_base() -> Path:
    """The temporary folder, or ``/tmp`` when ``$TMPDIR`` is so deep that a socket in
    it would pass :data:`SOCKET_PATH_MAX`."""
    base = Path(tempfile.gettempdir())
    longest = len(f"{base}/{SOCKET_FOLDER_PREFIX}{os.getpid()}-xxxxxxxx/referee.sock".encode())
    return base if longest <= SOCKET_PATH_MAX else Path("/tmp")


def socket_folder() -> Path:
    """A new folder for a local referee's Unix socket (it is bound into every sandbox, so
    it holds the socket alone)."""
    folder = _run_folder(_socket_base(), SOCKET_FOLDER_PREFIX)
    folder.chmod(0o755)
    return folder


FILES_FOLDER_PREFIX = "arena-bot-files-"


def files_folder() -> Path:
    """A new private folder for a run's copies of its bots' files."""
    return _run_folder(Path(tempfile.gettempdir()), FILES_FOLDER_PREFIX)


def _run_folder(base: Path, prefix: str) -> Path:
    """A new folder in ``base`` named ``prefix``, this process's id and a random part; the
    folders of runs whose process is gone (killed with -9) are removed on the way."""
    for stale in base.glob(f"{prefix}*-*"):
        pid = stale.name.removeprefix(prefix).partition("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


@dataclass
class BotProcesses:
    """The running bot processes of one tournament; their output goes to ``log_dir``.

    Each is started through :func:`arena.tournament.sandbox.launch` as ``confinement``
    says: confined bots reach the referee only through its Unix socket (``socket``),
    see only their own files (minus ``hidden`` and any database among them) and get a
    cleared environment plus ``bot_env``. Processes are kept by a key: the bot's name,
    or a name per match with ``--fresh-per-match``.
    """

    log_dir: Path
    confinement: Confinement = field(default_factory=unconfined)
    socket: Path | None = None
    hidden: list[Path] = field(default_factory=list)
    bot_env: dict[str, str] = field(default_factory=dict)
    processes: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    launched: dict[str, Launched] = field(default_factory=dict)
    files_dir: Path | None = None                                  # this run's copies of the bots' files
    copies: dict[str, Path] = field(default_factory=dict)          # by bot name
    _output: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    @property
    def confined(self) -> bool:
        return self.confinement.mode is SandboxMode.BWRAP

    def never_connected_hint(self, output: str) -> str:
        """What to add to the words on a bot that never connected, given what it printed:
        the sandbox's limits, if the bots run in one and its output shows a sign that they
        may be why (a program that simply is not a bot gets no such hint)."""
        return f"; {NEVER_CONNECTED_HINT}" if self.confined and sandbox_may_be_why(output) else ""

    async def start(self, entry: BotEntry, address: str, token: str, max_matches: int, key: str | None = None,
                    hidden: list[Path] | None = None) -> None:
        """Start ``entry`` with its arena arguments; ``address`` is the referee's TCP
        address, used by unconfined bots (a confined one gets the Unix socket)."""
        key = key or entry.name
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if self.confined:
            assert self.socket is not None, "confined bots need the referee's Unix socket"
            address = f"unix:{SOCKET_DIR}/{self.socket.name}"
        argv = [*entry.command, "--arena", address, "--token", token]
        if entry.extra_args:
            argv += ["--name", entry.name, "--max-matches", str(max_matches)]
        arena_env = {"ARENA_ADDRESS": address, "ARENA_TOKEN": token, "ARENA_BOT_NAME": entry.name,
                     "ARENA_MAX_MATCHES": str(max_matches), "PYTHONUNBUFFERED": "1"}
        if self.confined:
            env = {**entry.env, **self.bot_env, **arena_env}
        else:   # the organiser's own bots: their environment, as any program they start, but the
            # arena's variables are the arena's (never the organiser's ARENA_ADMIN_TOKEN or ARENA_TLS_CA)
            inherited = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
            env = {**inherited, **entry.env, **self.bot_env, **arena_env, "ARENA_PARENT_PID": str(os.getpid())}
        # The arena's own packages are public: a file of theirs named as another bot's program
        # (--bot heur=sample_bots/heuristic_bot.py) stays readable to the sample bots.
        public = package_folders()
        secret = [path for path in [*self.hidden, *(hidden or [])]
                  if not any(within(path, package) for package in public)]
        files = entry.files or find_bot_files(entry.command, entry.cwd)
        own: tuple[Path, Path] | None = None
        if self.confined:
            if os.geteuid() == 0:
                private = private_to_root(list(files.data))
                if private is not None:
                    raise BotStartError(entry.name, f"bot {entry.name!r}: {private} is not readable by others "
                                        f"(mode {private.stat().st_mode & 0o777:o}), and a confined bot runs as an "
                                        f"unprivileged user: chmod o+rX {shlex.quote(str(private))} (or --sandbox "
                                        "none for a bot you trust)")
            own = await self._own_copy(entry, files, secret)
            # off the event loop: a big folder takes a quarter of a second
            secret += await asyncio.to_thread(databases_in, [p for p in files.data if p.is_dir()], secret)
        spec = LaunchSpec(name=entry.name, argv=argv, env=env, cwd=entry.cwd, own=own, data=list(files.data),
                          readable=list(entry.readable), hidden=secret,
                          socket_dir=self.socket.parent if self.socket is not None else None)
        try:
            launched = await launch(self.confinement, spec, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except OSError as error:   # exec refused it: no such file, not executable, bad "#!" line...
            raise BotStartError(entry.name, f"bot {entry.name!r} cannot start: {shlex.quote(entry.command[0])}: "
                                f"{error.strerror or error}") from None
        self.launched[key] = launched
        self.processes[key] = launched.process
        assert launched.process.stdout is not None
        self._output[key] = asyncio.ensure_future(copy_output(launched.process.stdout,
                                                              self.log_dir / f"{entry.name}.log"))

    async def _own_copy(self, entry: BotEntry, files: BotFiles, hidden: list[Path]) -> tuple[Path, Path] | None:
        """The private copy of the bot's own files, made at its first start in this run and
        kept for its restarts and other processes: (the copy, where the originals are).
        BotStartError when they cannot be copied or differ from the tournament's stamp."""
        if files.own is None:
            return None
        if entry.name in self.copies:
            return self.copies[entry.name], files.own
        if self.files_dir is None:
            self.files_dir = files_folder()
        copy = self.files_dir / entry.name
        try:
            stamp = await asyncio.to_thread(copy_own_files, files, copy, hidden)
        except BotFilesError as error:
            raise BotStartError(entry.name, f"bot {entry.name!r}: {error}{TOO_BIG_HINT}") from None
        if entry.stamp is not None and stamp.sha256 != entry.stamp.sha256:
            raise BotStartError(entry.name, f"bot {entry.name!r}: its files changed since the tournament started "
                                f"({entry.stamp.describe()} then, {stamp.describe()} now): restore them, or start "
                                "a new tournament")
        self.copies[entry.name] = copy
        if files.folder is None and files.shared_because is not None and files.program is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            with open(self.log_dir / f"{entry.name}.log", "a") as log:
                log.write(f"[arena: confined, this bot sees {files.program.name} and none of the files beside it: "
                          f"{files.program.parent} is shared ({files.shared_because}). A bot in a folder of its "
                          "own (arena new-bot makes one) sees that folder.]\n")
        return copy, files.own

    def remove_copies(self) -> None:
        """Remove this run's copies of the bots' files."""
        if self.files_dir is not None:
            shutil.rmtree(self.files_dir, ignore_errors=True)
            self.files_dir = None
            self.copies.clear()

    def exited(self) -> dict[str, int]:
        """Bots whose process has ended, with their exit codes."""
        return {name: p.returncode for name, p in self.processes.items() if p.returncode is not None}

    def end_reason(self, key: str) -> str:
        """Why the process ``key`` ended, in words: a limit it hit, else its exit status."""
        launched = self.launched[key]
        code = launched.process.returncode
        limit = launched.limit_hit()
        if limit is not None:
            return f"killed: {limit}"
        return exit_reason(code) if code is not None else "still running"

    async def stop(self, timeout: float = 3.0, only: str | None = None) -> None:
        """SIGTERM every bot (or just ``only``), then SIGKILL those still running after
        ``timeout``; every process a bot started is gone when this returns."""
        keys = [only] if only is not None else list(self.processes)
        for key in keys:
            if self.processes[key].returncode is None:
                self.launched[key].terminate()
        for key in keys:
            proc = self.processes[key]
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                pass
            await self.launched[key].kill()
            await proc.wait()
            self.launched[key].cleanup()
            output = self._output.get(key)
            if output is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(output), 1.0)
                except TimeoutError:   # a process left behind unconfined still holds the pipe
                    output.cancel()
                except Exception:
                    pass

    async def last_line(self, key: str, log: Path) -> str:
        """The last line the ended process ``key`` printed (its output copied to ``log``
        first), or empty."""
        lines = (await self.output_of(key, log)).strip().splitlines()
        return lines[-1] if lines else ""

    async def output_of(self, key: str, log: Path, tail: int = 20_000) -> str:
        """The end of what the process ``key`` printed to ``log`` (once it has all been
        copied there, if the process has ended), or empty."""
        output = self._output.get(key)
        process = self.processes.get(key)
        if output is not None and process is not None and process.returncode is not None:
            try:
                await asyncio.wait_for(asyncio.shield(output), 1.0)
            except (TimeoutError, Exception):
                pass
        try:
            return log.read_bytes()[-tail:].decode("utf-8", "replace")
        except OSError:
            return ""

    def forget(self, key: str) -> None:
        """Drop a process that ended and was stopped (its key may be started again)."""
        self.processes.pop(key, None)
        self.launched.pop(key, None)
        self._output.pop(key, None)
