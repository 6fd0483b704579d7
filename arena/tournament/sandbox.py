"""What a bot process sees, and starting it: a bubblewrap sandbox around every bot.

Bots are hostile programs whose authors want to win. In the sandbox a bot sees the
system's programs and libraries (``/usr`` and the merged-usr links, a fixed list of
harmless files from ``/etc``), the Python installation the arena runs on (for an editable
install only the ``engine``, ``arena`` and ``sample_bots`` package folders, never the
checkout they sit in), its own files (``LaunchSpec.own``: the private copy
:mod:`arena.tournament.bot_files` makes, bound where the originals are), each other path
its command names alone (``LaunchSpec.data``), the folders the caller adds
(``LaunchSpec.readable``) and the referee's socket folder at
:data:`SOCKET_DIR`, all read-only; a fresh ``/proc`` that shows only its own processes, a
minimal ``/dev``, and a scratch tmpfs at ``/tmp`` (its ``HOME``) and ``/dev/shm``, sized to
its memory limit. It does not see the arena's database, the logs, other bots' files
(``LaunchSpec.hidden``: left out of the sandbox altogether, even inside a folder it may
read, and so are files made there later, such as a database's ``-wal``), the organiser's
environment (``--clearenv``: only ``PATH``, ``HOME``, ``LANG``, ``LaunchSpec.env``, and
the ``PWD`` bubblewrap sets),
other processes (PID namespace), the network (a network namespace with only its own
loopback; the referee's Unix socket works through the file system), or the host's
SysV IPC and hostname. ``--die-with-parent`` kills the sandbox when the arena dies, also by
``kill -9``, and the PID namespace's init takes every process in it along.

As root, bubblewrap runs without a user namespace (in one, the sandbox's uid would still
be the outside root and could read root's files) and the bot drops to an unprivileged uid
of its own (:data:`BOT_UID_BASE` + n, through util-linux ``setpriv``, with every
capability set empty and no new privileges). **Files bound into the sandbox must then be
readable by "other"** (mode 0644, folders 0755), and the referee's socket writable by
"other" (0666; the token authenticates). As another user, bubblewrap's unprivileged mode
maps the bot to uid 65534 in a user namespace of its own and forbids it nested ones; to
the kernel the bot is then the organiser's own uid, so whatever is bound is readable
whatever its mode, which is why hidden paths are left out rather than made unreadable.

The arena never forks Python children (it runs gRPC threads): a bot is started with
``asyncio.create_subprocess_exec`` as a chain of execs, ``/bin/sh`` joining its cgroups
(:mod:`arena.tournament.bot_limits`), ``prlimit``, then ``bwrap --args FD -- HELPER``.
bubblewrap reads its options from a memfd; it will not take the command from there
(bubblewrap 0.8), so the command on its real command line is a fixed helper
(:data:`EXEC_ARGV`, a few lines of the arena's own Python) that reads the bot's argv from
:data:`ARGV_FILE` inside the sandbox and execs it. So the host's ``/proc/PID/cmdline`` of
the launched process shows neither the bot's command nor its token. (The bot's own
process, once running, shows its argv to the host's ``ps`` like any process: a token
that must not be seen there goes in ``ARENA_TOKEN`` only.)
"""

from __future__ import annotations

import asyncio
import enum
import functools
import itertools
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.tournament.bot_files import bindable, python_folders, within
from arena.tournament.bot_limits import (
    MIB,
    NO_LIMITS,
    RLIMIT,
    BotGroups,
    BotLimits,
    CgroupTree,
    describe_limits,
    find_limiter,
    join_command,
    prlimit_options,
    user_tasks,
)

SOCKET_DIR = "/run/arena"     # where the referee's socket folder appears inside the sandbox
SCRATCH = "/tmp"              # the bot's writable tmpfs and its HOME
BOT_UID_BASE = 61000          # as root: each bot runs under a uid of its own from here (not in /etc/passwd)
NOBODY = 65534                # the bot's uid in bubblewrap's unprivileged mode
HOSTNAME = "arena-bot"
# The bot's argv inside the sandbox, and the few lines of the arena's Python that exec it
# (with -I -S: no site, nothing from the environment; it replaces itself by the bot).
ARGV_FILE = "/run/bot-argv"
CANNOT_START = "cannot start "    # how that exec says the bot's command cannot run
EXEC_ARGV = ("import os, sys\n"
             "argv = open(sys.argv[1], 'rb').read().split(b'\\0')[:-1]\n"
             "try:\n    os.execvp(argv[0], argv)\n"
             "except OSError as error:\n    sys.exit(f'cannot start {os.fsdecode(argv[0])}: {error.strerror}')\n")
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
INSTALL_HINT = "apt-get install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)"
# Said of a confined bot that never connected and whose output shows a sign of it
# (sandbox_may_be_why): what it lacks that a bot that runs on its author's machine may
# have counted on (a toolchain under HOME, files elsewhere, TCP).
NEVER_CONNECTED_HINT = ("confined, it sees only the system, a copy of its own folder (or of its program alone, "
                        "when that folder is shared: its log says), the paths its command names and an empty HOME "
                        "(/tmp), and reaches the arena only at its --arena unix: address: --sandbox none tells "
                        "whether that is why")
# What a confined bot's output shows when the sandbox may be why it never connected: a file,
# program or module it cannot find or open (not copied in, or under a HOME it no longer
# has), a read-only folder, a network it cannot reach (Python's and Node.js's words). A
# program that simply ends without speaking the protocol (not a bot) shows none of these.
CONFINEMENT_SIGNS = re.compile(
    r"no such file or directory|permission denied|read-only file system|operation not permitted|not found"
    r"|no module named|cannot find module|cannot open shared object|network is unreachable|connection refused"
    r"|name or service not known|temporary failure in name resolution|cannot assign requested address"
    r"|\b(?:ENOENT|EACCES|EPERM|EROFS|ENETUNREACH|ECONNREFUSED|EAI_AGAIN)\b", re.IGNORECASE)


def sandbox_may_be_why(output: str) -> bool:
    """Whether a confined bot that never connected printed a sign of what confinement takes
    away (:data:`CONFINEMENT_SIGNS`), so that trying it with ``--sandbox none`` may tell.

    >>> sandbox_may_be_why("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/.mybot.toml'")
    True
    >>> sandbox_may_be_why("ModuleNotFoundError: No module named 'torch'")
    True
    >>> sandbox_may_be_why("hello, world"), sandbox_may_be_why("")
    (False, False)
    """
    return CONFINEMENT_SIGNS.search(output) is not None


# Top-level links of a merged-usr system (a real folder on others): a link stays a link.
USR_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs need from /etc, and nothing else: /etc holds root-only files.
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload", "ssl", "ca-certificates",
             "ca-certificates.conf", "pki", "crypto-policies", "alternatives", "localtime", "timezone",
             "nsswitch.conf", "passwd", "group", "hosts", "host.conf", "gai.conf", "services", "protocols",
             "mime.types", "os-release", "locale.alias", "python3", *(f"python3.{minor}" for minor in range(8, 20)))


class SandboxMode(enum.StrEnum):
    """``--sandbox``: ``auto`` confines bots when bubblewrap can, and says so when it
    cannot; ``bwrap`` insists; ``none`` runs them as they are, without limits (the
    organiser's own trusted bots)."""

    AUTO = "auto"
    BWRAP = "bwrap"
    NONE = "none"


class SandboxError(RuntimeError):
    """Bots cannot be confined as asked: one line that says how to fix it, or what
    bubblewrap itself said."""


@dataclass(frozen=True)
class Confinement:
    """How this run's bots are confined (found once per run by :func:`find_confinement`):
    ``mode`` is BWRAP or NONE, ``limiter`` one of ``"cgroup v1"``, ``"cgroup v2"``,
    ``"rlimit"``, ``"none"``; ``cgroups`` where the limiter makes its groups."""

    mode: SandboxMode
    limiter: str
    limits: BotLimits
    cgroups: CgroupTree | None = field(default=None, repr=False)
    unconfined_because: str = "--sandbox none"

    def describe(self) -> str:
        """The tournament's start line: what confines the bots, which limits hold, which do not.

        >>> Confinement(SandboxMode.NONE, "none", BotLimits()).describe()
        'bots run unconfined (--sandbox none), without limits'
        """
        if self.mode is SandboxMode.NONE and self.limiter == NO_LIMITS:
            return f"bots run unconfined ({self.unconfined_because}), without limits"
        confined = "bots confined (bubblewrap)" if self.mode is SandboxMode.BWRAP else \
            f"bots run unconfined ({self.unconfined_because})"
        per_bot_uid = self.mode is SandboxMode.BWRAP and os.geteuid() == 0
        return f"{confined}; {describe_limits(self.limiter, self.limits, self.cgroups, per_bot_uid)}"


@dataclass
class LaunchSpec:
    """One bot process to start. ``argv`` is its full command (with the arena's arguments),
    ``env`` what it gets besides ``PATH``, ``HOME`` and ``LANG`` when confined, and its whole
    environment when not (the lineup then passes the organiser's, less every ``ARENA_``
    variable but the arena's own for the bot), ``cwd`` where the command
    was given (relative paths in ``argv`` are relative to it). ``own``: the bot's own files
    as (their private copy, where the sandbox shows it: the originals' path); ``data``: the
    other paths its command names, each bound alone; ``readable``: more folders it
    may read; ``hidden``: paths it never sees, even inside a readable folder (the
    database and its ``-wal``/``-shm``/``-journal``, the logs, other bots' files);
    ``socket_dir``: the referee's socket folder, seen at :data:`SOCKET_DIR`."""

    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path | None
    own: tuple[Path, Path] | None = None
    data: list[Path] = field(default_factory=list)
    readable: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)
    socket_dir: Path | None = None


def _dedupe(folders: list[Path]) -> list[Path]:
    """Each folder once, parents before children, a child dropped when its parent holds it."""
    kept: list[Path] = []
    for folder in sorted(set(folders), key=lambda path: (len(path.parts), str(path))):
        real = Path(os.path.realpath(folder))
        if not any(within(folder, other) and within(real, Path(os.path.realpath(other))) for other in kept):
            kept.append(folder)
    return kept


def _bind(source: Path, dest: Path, hidden: list[Path]) -> list[str]:
    """``--ro-bind source dest``; when a hidden path lies inside ``source``, an empty
    read-only folder at ``dest`` with every entry but the hidden ones bound one by one
    (so a file made there later, like a database's ``-wal``, is not seen either). A hidden
    ``source`` is not bound at all. ``source`` and ``hidden`` are real paths.

    >>> _bind(Path("/srv/bot"), Path("/srv/bot"), [Path("/srv/other")])
    ['--ro-bind', '/srv/bot', '/srv/bot']
    >>> _bind(Path("/srv/bot"), Path("/srv/bot"), [Path("/srv")])
    []
    """
    if any(within(source, path) for path in hidden):
        return []
    if not any(within(path, source) for path in hidden):
        return ["--ro-bind", str(source), str(dest)]
    args = ["--perms", "0755", "--tmpfs", str(dest)]
    try:
        entries = sorted(os.scandir(source), key=lambda entry: entry.name)
    except OSError:
        entries = []
    for entry in entries:
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry.path), str(dest / entry.name)]
        else:
            args += _bind(source / entry.name, dest / entry.name, hidden)
    return [*args, "--remount-ro", str(dest)]


def _interpreter_folder(program: str) -> Path | None:
    """The folder of a program named without a path (``node``) when it is outside the
    system trees the sandbox has anyway (``~/.nvm/.../bin``, ``/opt/node/bin``)."""
    if "/" in program or (found := shutil.which(program)) is None:
        return None
    folder = Path(os.path.realpath(found)).parent
    return folder if bindable(folder) else None


def bwrap_arguments(spec: LaunchSpec, limits: BotLimits, bot_uid: int | None, argv_fd: int,
                    setpriv: str | None = None) -> tuple[list[str], list[str]]:
    """bubblewrap's arguments for one bot: the options (what goes into ``--args FD``), and
    the command after them, which bubblewrap wants on its real command line, so it names
    neither the bot's command nor its token: :data:`EXEC_ARGV` reads the bot's ``argv``
    from :data:`ARGV_FILE` (the contents of ``argv_fd``, NUL-separated) and execs it.
    ``bot_uid`` given: bubblewrap runs as root without a user namespace and ``setpriv``
    drops the bot to ``bot_uid``; None: unprivileged mode."""
    hidden = [Path(os.path.realpath(path)) for path in spec.hidden]
    args = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", HOSTNAME]
    if bot_uid is not None:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--disable-userns"]
    interpreter = _interpreter_folder(spec.argv[0]) if spec.argv else None
    path = ":".join([os.path.dirname(sys.executable), *([str(interpreter)] if interpreter else []), SYSTEM_PATH])
    args.append("--clearenv")
    for key, value in {"PATH": path, "LANG": "C.UTF-8", **spec.env, "HOME": SCRATCH}.items():
        args += ["--setenv", key, value]
    size = str(limits.memory_mb * MIB)
    args += ["--perms", "1777", "--size", size, "--tmpfs", SCRATCH]
    args += _bind(Path(os.path.realpath("/usr")), Path("/usr"), hidden)
    for link in USR_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += _bind(Path(os.path.realpath(link)), Path(link), hidden)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
    # (source on the host, where the sandbox has it)
    mounts = [(Path(os.path.realpath(f"/etc/{name}")), Path(f"/etc/{name}"))
              for name in ETC_FILES if os.path.exists(f"/etc/{name}")]
    data = [Path(os.path.abspath(path)) for path in spec.data]
    folders = _dedupe([*python_folders(), *([interpreter] if interpreter else []),
                       *map(Path, map(os.path.abspath, spec.readable)), *(path for path in data if path.is_dir())])
    binds = [(Path(os.path.realpath(folder)), folder) for folder in folders]
    # Each named file alone, and the bot's own files (its private copy, where the originals are).
    binds += [(Path(os.path.realpath(path)), path) for path in data if not path.is_dir()]
    if spec.own is not None:
        binds.append(spec.own)
        if spec.own[0].is_dir():
            folders.append(spec.own[1])
    # Parents before children: a folder bound after a file in it would hide the file.
    mounts += sorted(binds, key=lambda bind: len(bind[1].parts))
    if spec.socket_dir is not None:
        mounts.append((Path(os.path.realpath(spec.socket_dir)), Path(SOCKET_DIR)))
    workdir, make_workdir = _workdir(spec.cwd, folders, hidden)
    args += _parents([*(dest for _, dest in mounts), Path(ARGV_FILE)], [workdir] if make_workdir else [])
    for source, dest in mounts:
        args += _bind(source, dest, hidden)
    args += ["--perms", "0444", "--ro-bind-data", str(argv_fd), ARGV_FILE, "--chdir", str(workdir)]
    # The sandbox's own root (a tmpfs holding the mount points) read-only: unprivileged, the
    # bot owns the folders made there. /tmp, /dev/shm are mounts of their own: they stay writable.
    args += ["--remount-ro", "/"]
    command = [sys.executable, "-I", "-S", "-c", EXEC_ARGV, ARGV_FILE]
    if bot_uid is not None:
        command = [setpriv or "setpriv", "--reuid", str(bot_uid), "--regid", str(bot_uid), "--clear-groups",
                   "--inh-caps=-all", "--bounding-set=-all", "--", *command]
    return args, command


def _parents(dests: list[Path], folders: list[Path]) -> list[str]:
    """``--perms 0755 --dir`` for each folder above the mount points ``dests`` (top down),
    and for ``folders``: bubblewrap would make them mode 0700, closed to the bot's uid.

    >>> _parents([Path("/etc/hosts"), Path("/srv/bots/a")], [Path("/tmp/x")])  # doctest: +NORMALIZE_WHITESPACE
    ['--perms', '0755', '--dir', '/etc', '--perms', '0755', '--dir', '/srv', '--perms', '0755', '--dir', '/srv/bots',
     '--perms', '0755', '--dir', '/tmp/x']
    """
    made: list[Path] = []
    for folder in [*(parent for dest in dests for parent in reversed(dest.parents)), *folders]:
        if folder in made or str(folder) in ("/", SCRATCH) or any(within(folder, Path(tree))
                                                                  for tree in ("/usr", "/proc", "/dev")):
            continue
        made.append(folder)
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", str(folder))]


def _workdir(cwd: Path | None, folders: list[Path], hidden: list[Path]) -> tuple[Path, bool]:
    """Where the bot starts, and whether that folder must be made: ``cwd`` when the
    sandbox shows it; an empty folder at ``cwd`` when it lies outside everything bound (so
    relative paths into bound folders below it still work); else the scratch folder."""
    if cwd is None:
        return Path(SCRATCH), False
    folder = Path(os.path.abspath(cwd))
    if any(within(Path(os.path.realpath(folder)), path) for path in hidden):
        return Path(SCRATCH), False
    return folder, not any(within(folder, bound) for bound in folders)


def _args_fd(args: list[str]) -> int:
    """A memfd holding ``args`` NUL-separated, at offset 0 (for ``bwrap --args FD``)."""
    fd = os.memfd_create("bwrap-args")
    os.write(fd, b"".join(arg.encode() + b"\0" for arg in args))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_bot_numbers = itertools.count()


def _bot_uid() -> int:
    """A uid of its own for the next bot (as root), one no account on this machine has."""
    while True:
        uid = BOT_UID_BASE + next(_bot_numbers) % 1000
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid


@functools.cache
def _sandbox_problem(bwrap: str, euid: int, setpriv: str | None) -> str | None:
    """Why a trivial sandbox, made the way real ones are, cannot run here (None: it can).
    Once per process and bubblewrap."""
    if euid == 0 and setpriv is None:
        return "setpriv is not installed: it comes with util-linux (apt-get install util-linux)"
    argv_fd = _args_fd(["true"])
    args, command = bwrap_arguments(LaunchSpec("probe", ["true"], {}, None), BotLimits(),
                                    BOT_UID_BASE if euid == 0 else None, argv_fd, setpriv)
    fd = _args_fd(args)
    try:
        done = subprocess.run([bwrap, "--args", str(fd), "--", *command], pass_fds=(fd, argv_fd),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap cannot make a sandbox here: {error}"
    finally:
        os.close(fd)
        os.close(argv_fd)
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return f"bubblewrap cannot make a sandbox here: {last}"


def sandbox_problem() -> str | None:
    """Why bots cannot be sandboxed on this machine, in one line that says how to fix it;
    None when they can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bubblewrap is not installed: {INSTALL_HINT}"
    return _sandbox_problem(bwrap, os.geteuid(), shutil.which("setpriv"))


def unconfined() -> Confinement:
    """No sandbox and no limits (``--sandbox none``): the organiser's own trusted bots."""
    return Confinement(SandboxMode.NONE, NO_LIMITS, BotLimits())


def find_confinement(mode: SandboxMode, limits: BotLimits, notice: Callable[[str], None]) -> Confinement:
    """How this run's bots will be confined. ``AUTO``: sandboxed when bubblewrap can run,
    otherwise one ``notice`` line (how to install it, and that bots run unconfined) and
    mode NONE, with the limits that hold without it (cgroups, rlimits). ``BWRAP``:
    SandboxError when it cannot. ``NONE``: no sandbox and no limits."""
    if mode is SandboxMode.NONE:
        return replace(unconfined(), limits=limits)
    limiter, tree = find_limiter()
    problem = sandbox_problem()
    if problem is None:
        return Confinement(SandboxMode.BWRAP, limiter, limits, tree)
    if mode is SandboxMode.BWRAP:
        raise SandboxError(problem)
    notice(f"{problem}; until then bots run unconfined")
    return Confinement(SandboxMode.NONE, limiter, limits, tree, unconfined_because="bubblewrap not available")


def _gone(pid: int) -> bool:
    """No process ``pid``, or only its zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _children(pid: int) -> list[int]:
    """The children of ``pid`` (its main thread's)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


class Launched:
    """A started bot process (sandboxed or not) and its limits."""

    def __init__(self, process: asyncio.subprocess.Process, conf: Confinement, groups: BotGroups | None):
        self.process = process
        self.confinement = conf
        self.groups = groups       # its cgroups, while they exist
        self._limit_hit: str | None = None

    def limit_hit(self) -> str | None:
        """After the bot ended: the limit the kernel enforced on it, e.g. ``"out of memory
        (limit 512 MiB)"`` when its memory group counted an OOM kill; None otherwise (and
        always without cgroups: rlimits leave no record)."""
        return self.groups.limit_hit() if self.groups is not None else self._limit_hit

    def terminate(self) -> None:
        """Ask the bot to end: SIGTERM to its program. (SIGTERM to bubblewrap, the launched
        process, would end the sandbox at once, with SIGKILL inside, so a confined bot gets
        it at its program, bubblewrap's grandchild; while the sandbox is still being set
        up, bubblewrap gets it.)"""
        targets = [self.process.pid]
        if self.confinement.mode is SandboxMode.BWRAP:
            targets = [pid for init in _children(self.process.pid) for pid in _children(init)] or targets
        for pid in targets:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass

    async def kill(self) -> None:
        """Kill the bot and every process it started; they are all gone on return. With
        cgroups: every pid in its groups until they are empty. Sandboxed without: the
        PID namespace's init (it takes the namespace along) and bubblewrap. Unconfined
        without: its process group (a child that left it with setsid survives)."""
        process = self.process
        inner = _children(process.pid) if self.groups is None and self.confinement.mode is SandboxMode.BWRAP else []
        for pid in inner:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            if self.groups is None and self.confinement.mode is SandboxMode.NONE:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        except OSError:
            pass
        if self.groups is not None:
            await self.groups.kill()
        await process.wait()
        deadline = time.monotonic() + 10
        while inner and not all(map(_gone, inner)) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    def cleanup(self) -> None:
        """Remove the bot's groups (killing anything still in them); idempotent. What
        :meth:`limit_hit` says is kept."""
        if self.groups is not None:
            self._limit_hit = self.groups.limit_hit()
            self.groups.remove()
            self.groups = None


def _nproc(conf: Confinement, bot_uid: int | None) -> int | None:
    """RLIMIT_NPROC for the rlimit limiter (cgroups count processes better): the tasks
    of the bot's uid now plus its allowance. Per bot when it has a uid of its own; else
    shared with every process of this user; never for root, whom it does not bind."""
    if conf.limiter != RLIMIT:
        return None
    if bot_uid is not None:
        return user_tasks(bot_uid) + conf.limits.processes
    if os.geteuid() != 0:
        return user_tasks(os.geteuid()) + conf.limits.processes
    return None


async def launch(conf: Confinement, spec: LaunchSpec, stdout: int, stderr: int) -> Launched:
    """Start one bot as ``conf`` says: in its own groups, under its rlimits, in its sandbox;
    stdin is /dev/null and it gets a session of its own. ``stdout``/``stderr`` as for
    ``asyncio.create_subprocess_exec``. OSError when it cannot start; SandboxError when
    its groups cannot be made or bubblewrap is gone."""
    groups: BotGroups | None = None
    if conf.cgroups is not None and conf.limiter == conf.cgroups.limiter:
        try:
            groups = conf.cgroups.new_groups(spec.name, conf.limits)
        except OSError as error:
            raise SandboxError(f"cannot make the cgroups of bot {spec.name!r}: {error}") from None
    bot_uid = _bot_uid() if os.geteuid() == 0 and conf.mode is SandboxMode.BWRAP else None
    command = join_command(groups.procs_files()) if groups is not None else []
    prlimit = shutil.which("prlimit")
    if conf.limiter != NO_LIMITS and prlimit is not None:
        options = prlimit_options(conf.limits, address_space=conf.limiter == RLIMIT, nproc=_nproc(conf, bot_uid))
        command += [prlimit, *options, "--"]
    fds: tuple[int, ...] = ()
    cwd: Path | None
    if conf.mode is SandboxMode.BWRAP:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            if groups is not None:
                groups.remove()
            raise SandboxError(f"bubblewrap is not installed: {INSTALL_HINT}")
        argv_fd = _args_fd(spec.argv)
        args, inner = bwrap_arguments(spec, conf.limits, bot_uid, argv_fd, shutil.which("setpriv"))
        fds = (_args_fd(args), argv_fd)
        command += [bwrap, "--args", str(fds[0]), "--", *inner]
        env, cwd = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, Path("/")   # the sandbox sets the bot's own
    else:
        command += spec.argv
        env, cwd = dict(spec.env), spec.cwd
    try:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=env, cwd=cwd,
            pass_fds=fds, start_new_session=True)
    except BaseException:
        if groups is not None:
            groups.remove()
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return Launched(process, conf, groups)
