"""Limits over all of a bot's processes: memory, processes, file size, open files, CPU share.

A bot is a hostile program, and the limits that matter hold over *everything* it
starts, not one process at a time. Three ways, best first:

- **cgroup v1** (:class:`CgroupTree` with ``version=1``): one child group per bot in
  each hierarchy (``memory``, ``pids``, and ``cpu``/``cpuacct`` when mounted), under
  ``<this process's group>/wizard-arena-<arena pid>/<bot>-<n>``. ``memory.limit_in_bytes``
  (and ``memory.memsw.limit_in_bytes``, so swap is no way out) bounds the memory of all
  its processes, page cache and tmpfs pages included: past it the kernel OOM-kills inside
  the group, and ``memory.oom_control`` counts the kill (:meth:`BotGroups.limit_hit`).
  ``pids.max`` bounds processes *and threads* (gRPC starts threads of its own: a Python
  gRPC client had 8, node 7, when measured). ``cpu.shares`` is 1024 for every bot, so under contention each bot
  gets an equal share of the CPU whatever its thread count. Tested on the machine this
  was written on.
- **cgroup v2** (``version=2``): the same with ``memory.max``, ``memory.swap.max``,
  ``pids.max``, ``cpu.weight``, ``cgroup.kill``; used only where this process's group is
  delegated to us (writable) and offers ``memory`` and ``pids``, e.g. under
  ``systemd-run --user --scope -p Delegate=yes arena tournament ...``. A v2 group with
  controllers enabled for its children may hold no processes, so the arena moves itself
  into a leaf ``wizard-arena-<pid>/arena`` first, and only when it is the one process in
  its group. Honest status: the machine this was developed on had v2 without controllers,
  so only the controller-free part (making groups, joining them, ``cgroup.kill``,
  removing them) is tested; the limit files are written as the kernel documents them and
  are untested here.
- **rlimit** (util-linux ``prlimit`` in the bot's exec chain), per process, weaker:
  ``RLIMIT_AS`` bounds one process's *address space*, not the memory of all of them, and
  runtimes reserve far more address space than they use (node 20 does not start below
  about 800 MiB), so it is ``memory_mb`` + :data:`AS_HEADROOM_MB`. ``RLIMIT_NPROC`` counts
  every process of the uid: it works per bot only where each bot runs under its own uid
  (the sandbox started as root gives it one), and never for root itself. Equal CPU shares
  cannot be made with rlimits at all.

With every limiter, ``prlimit`` also sets ``RLIMIT_FSIZE`` (a write past it fails with
EFBIG, or SIGXFSZ for programs that do not ignore it; Python does), ``RLIMIT_NOFILE`` and
``RLIMIT_CORE`` 0 (no core dumps on the disk).

Processes are never forked from Python here (a forked child of a process running gRPC
threads hangs): :func:`join_command` is a tiny ``/bin/sh`` prefix that writes its own
pid into each group's ``cgroup.procs`` and then ``exec``\\ s the rest, so the bot is in
its groups before its program runs, and every descendant stays there.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import itertools
import os
import re
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from arena.settings import BotLimits

MIB = 1024 * 1024
# Address space above the memory limit that RLIMIT_AS allows (rlimit fallback only):
# node 20 reserves ~750 MiB of address space at start, and every thread a stack.
AS_HEADROOM_MB = 1024
GROUP_PREFIX = "wizard-arena-"
# The v1 hierarchies a bot joins; memory and pids are required, the rest used when present.
V1_REQUIRED = ("memory", "pids")
V1_OPTIONAL = ("cpu", "cpuacct")
CPU_SHARES = 1024     # cgroup v1 default weight: every bot the same
CPU_WEIGHT = 100      # cgroup v2 default weight: every bot the same

CGROUP_V1, CGROUP_V2, RLIMIT, NO_LIMITS = "cgroup v1", "cgroup v2", "rlimit", "none"


def prlimit_options(limits: BotLimits, address_space: bool = False, nproc: int | None = None) -> list[str]:
    """The options of util-linux ``prlimit`` for ``limits`` (soft = hard).

    >>> prlimit_options(BotLimits(file_size_mb=1))
    ['--fsize=1048576', '--nofile=256', '--core=0']
    >>> prlimit_options(BotLimits(memory_mb=512), address_space=True, nproc=70)[-2:]
    ['--as=1610612736', '--nproc=70']
    """
    options = [f"--fsize={limits.file_size_mb * MIB}", f"--nofile={limits.open_files}", "--core=0"]
    if address_space:
        options.append(f"--as={(limits.memory_mb + AS_HEADROOM_MB) * MIB}")
    if nproc is not None:
        options.append(f"--nproc={nproc}")
    return options


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _counter(text: str, key: str) -> int:
    """The number after ``key`` in a flat-keyed cgroup file (``memory.oom_control``, ``*.events``).

    >>> _counter("oom_kill_disable 0\\nunder_oom 0\\noom_kill 2\\n", "oom_kill")
    2
    """
    match = re.search(rf"^{re.escape(key)} (\d+)$", text, re.MULTILINE)
    return int(match.group(1)) if match else 0


def _pids(folder: Path) -> list[int]:
    return [int(line) for line in _read(folder / "cgroup.procs").split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_group(folder: Path) -> None:
    """Kill what is left in ``folder`` and its subgroups, then remove them (deepest first)."""
    if not folder.is_dir():
        return
    for child in [entry for entry in folder.iterdir() if entry.is_dir()]:
        _remove_group(child)
    for _ in range(200):          # ~2 s: a process being killed leaves its group when it has exited
        pids = _pids(folder)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY:
                return
        time.sleep(0.01)


@dataclass(frozen=True)
class CgroupTree:
    """Where the groups of this process's bots go: ``parents`` are this process's own group
    folders (one per v1 hierarchy that a bot joins, keyed by controller; one for v2, keyed
    ``""``); ``controllers`` the ones whose limits are written (``cpu`` only when present)."""

    version: int
    parents: dict[str, Path]
    controllers: frozenset[str]

    @property
    def limiter(self) -> str:
        return CGROUP_V1 if self.version == 1 else CGROUP_V2

    def arena_folders(self) -> list[Path]:
        """``wizard-arena-<pid>`` in each hierarchy, one per distinct folder."""
        return list(dict.fromkeys(parent / f"{GROUP_PREFIX}{os.getpid()}" for parent in self.parents.values()))

    def remove_stale(self) -> None:
        """Remove the ``wizard-arena-<pid>`` groups of arenas that no longer run (killed
        with -9, say), with whatever is still in them."""
        for parent in dict.fromkeys(self.parents.values()):
            try:
                entries = list(parent.iterdir())
            except OSError:
                continue
            for entry in entries:
                suffix = entry.name.removeprefix(GROUP_PREFIX)
                if entry.name.startswith(GROUP_PREFIX) and suffix.isdigit() and not _alive(int(suffix)):
                    _remove_group(entry)

    def new_groups(self, name: str, limits: BotLimits) -> BotGroups:
        """Make one bot's groups (``<name>-<n>``) with ``limits`` written; OSError if the
        kernel refuses (the caller reports it)."""
        leaf = f"{name}-{next(_group_numbers)}"
        if self.version == 2:
            _prepare_v2(self)
        folders = {controller: parent / f"{GROUP_PREFIX}{os.getpid()}" / leaf
                   for controller, parent in self.parents.items()}
        groups = BotGroups(self, folders, limits)
        try:
            for folder in dict.fromkeys(folders.values()):
                folder.mkdir(parents=True, exist_ok=True)
            groups.write_limits()
        except OSError:
            groups.remove()
            raise
        return groups


_group_numbers = itertools.count(1)


def _write(path: Path, value: str) -> None:
    with open(path, "w") as file:
        file.write(value)


def _prepare_v2(tree: CgroupTree) -> None:
    """Make ``wizard-arena-<pid>`` and give it the controllers for its children. A v2 group
    that lends controllers to its children may hold no processes itself, so when this
    process's own group must be given them and the kernel refuses (EBUSY), the arena moves
    into the leaf ``wizard-arena-<pid>/arena``, if it is the only process in its group.
    Untested: the machine this was written on had no v2 controllers."""
    parent = tree.parents[""]
    arena = parent / f"{GROUP_PREFIX}{os.getpid()}"
    arena.mkdir(exist_ok=True)
    if not tree.controllers:
        return
    line = " ".join(f"+{name}" for name in sorted(tree.controllers))
    if not tree.controllers <= set(_read(parent / "cgroup.subtree_control").split()):
        try:
            _write(parent / "cgroup.subtree_control", line)
        except OSError as error:
            if error.errno != errno.EBUSY or _pids(parent) != [os.getpid()]:
                raise
            (arena / "arena").mkdir(exist_ok=True)
            _write(arena / "arena" / "cgroup.procs", str(os.getpid()))
            _write(parent / "cgroup.subtree_control", line)
    if not tree.controllers <= set(_read(arena / "cgroup.subtree_control").split()):
        _write(arena / "cgroup.subtree_control", line)


@dataclass
class BotGroups:
    """One bot's groups: ``folders`` by controller (v1) or ``{"": folder}`` (v2)."""

    tree: CgroupTree
    folders: dict[str, Path]
    limits: BotLimits

    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files the bot's first process writes its pid into."""
        return [folder / "cgroup.procs" for folder in dict.fromkeys(self.folders.values())]

    def _folder(self, controller: str) -> Path | None:
        if controller not in self.tree.controllers:
            return None
        return self.folders.get(controller if self.tree.version == 1 else "")

    def write_limits(self) -> None:
        limits, v1 = self.limits, self.tree.version == 1
        memory = str(limits.memory_mb * MIB)
        if (folder := self._folder("memory")) is not None:
            _write(folder / ("memory.limit_in_bytes" if v1 else "memory.max"), memory)
            swap = folder / ("memory.memsw.limit_in_bytes" if v1 else "memory.swap.max")
            if swap.exists():          # absent without swap accounting
                _write(swap, memory if v1 else "0")
        if (folder := self._folder("pids")) is not None:
            _write(folder / "pids.max", str(limits.processes))
        if (folder := self._folder("cpu")) is not None:
            _write(folder / ("cpu.shares" if v1 else "cpu.weight"), str(CPU_SHARES if v1 else CPU_WEIGHT))

    def pids(self) -> list[int]:
        """The processes in the bot's groups now (host pids)."""
        return _pids(next(iter(self.folders.values())))

    def limit_hit(self) -> str | None:
        """What limit the kernel enforced on the bot, if any: an OOM kill in its memory
        group, or a refused fork in its pids group."""
        if (folder := self._folder("memory")) is not None:
            text = _read(folder / ("memory.oom_control" if self.tree.version == 1 else "memory.events"))
            if _counter(text, "oom_kill"):
                return f"out of memory (limit {self.limits.memory_mb} MiB)"
        if (folder := self._folder("pids")) is not None and _counter(_read(folder / "pids.events"), "max"):
            return f"too many processes (limit {self.limits.processes} processes and threads)"
        return None

    def cpu_seconds(self) -> float | None:
        """CPU time used by all the bot's processes (cpuacct in v1, cpu.stat in v2)."""
        if self.tree.version == 1:
            folder = self.folders.get("cpuacct")
            text = _read(folder / "cpuacct.usage") if folder is not None else ""
            return int(text) / 1e9 if text.strip() else None
        return _counter(_read(self.folders[""] / "cpu.stat"), "usage_usec") / 1e6

    async def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL every process in the groups until they are empty (``cgroup.kill`` on v2).
        A fork bomb cannot outrun this: ``pids.max`` bounds what there is to kill."""
        deadline = time.monotonic() + timeout
        kill_file = self.folders[""] / "cgroup.kill" if self.tree.version == 2 else None
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                return
            if kill_file is not None and kill_file.exists():
                try:
                    _write(kill_file, "1")
                except OSError:
                    pass
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            await asyncio.sleep(0.005)

    def remove(self) -> None:
        """Remove the groups (killing anything left), and ``wizard-arena-<pid>`` when it
        has no other bots' groups. Idempotent."""
        for folder in dict.fromkeys(self.folders.values()):
            _remove_group(folder)
            try:
                remaining = [entry.name for entry in folder.parent.iterdir() if entry.is_dir()]
                if not remaining:
                    folder.parent.rmdir()
            except OSError:
                pass        # gone already, or another bot's group (or the arena's v2 leaf) is there


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fs type, super options) of each cgroup mount in /proc/self/mountinfo."""
    found = []
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        fstype, superopts = fields[sep + 1], set(fields[sep + 3].split(",")) if len(fields) > sep + 3 else set()
        if fstype in ("cgroup", "cgroup2"):
            found.append((fields[3], fields[4].replace("\\040", " "), fstype, superopts))
    return found


def _inside(mount_root: str, mount_point: str, group: str) -> Path | None:
    """Where the group ``group`` (as /proc/self/cgroup names it) is under a mount of ``mount_root``.

    >>> _inside("/", "/sys/fs/cgroup/memory", "/user/1")
    PosixPath('/sys/fs/cgroup/memory/user/1')
    >>> _inside("/docker/x", "/sys/fs/cgroup/memory", "/docker/x/y") is None, _inside("/a", "/m", "/b")
    (False, None)
    """
    if mount_root == "/":
        relative = group
    elif group == mount_root or group.startswith(mount_root + "/"):
        relative = group[len(mount_root):]
    else:
        return None
    return Path(mount_point) / relative.lstrip("/")


def _own_groups() -> dict[str, str]:
    """This process's group per v1 controller, and ``""`` for v2, from /proc/self/cgroup."""
    groups: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        number, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            if controller or number == "0":
                groups[controller] = path
    return groups


def _can_make_groups(folder: Path) -> bool:
    """Whether the kernel lets this process make a group in ``folder`` (tried: a writable
    mode says little about a cgroup mount); the trial group is removed again."""
    trial = folder / f"{GROUP_PREFIX}{os.getpid()}"
    try:
        trial.mkdir(exist_ok=True)
    except OSError:
        return False
    try:
        trial.rmdir()
    except OSError:
        pass            # it holds this process's bot groups already
    return True


def v2_group() -> Path | None:
    """This process's own folder in the cgroup v2 (unified) hierarchy, when it is mounted."""
    group = _own_groups().get("")
    for root, point, fstype, _ in _mounts():
        folder = _inside(root, point, group) if fstype == "cgroup2" and group is not None else None
        if folder is not None and (folder / "cgroup.procs").exists():
            return folder
    return None


def _v2_tree() -> CgroupTree | None:
    """v2, when this process's group is writable and offers the memory and pids controllers."""
    folder = v2_group()
    if folder is None:
        return None
    offered = set(_read(folder / "cgroup.controllers").split())
    if not {"memory", "pids"} <= offered or not _can_make_groups(folder):
        return None
    return CgroupTree(2, {"": folder}, frozenset({"memory", "pids"} | ({"cpu"} & offered)))


def _v1_tree(groups: dict[str, str]) -> CgroupTree | None:
    parents: dict[str, Path] = {}
    for root, point, fstype, options in _mounts():
        if fstype != "cgroup":
            continue
        for controller in (*V1_REQUIRED, *V1_OPTIONAL):
            if controller in options and controller in groups:
                folder = _inside(root, point, groups[controller])
                if folder is not None and folder.is_dir() and _can_make_groups(folder):
                    parents.setdefault(controller, folder)
    if not all(name in parents for name in V1_REQUIRED):
        return None
    return CgroupTree(1, parents, frozenset(parents))


@functools.cache
def find_cgroups() -> CgroupTree | None:
    """The cgroups this process may make bot groups in (v2 first, then v1), or None; stale
    groups of dead arenas are removed on the way. Found once per process."""
    tree = _v2_tree() or _v1_tree(_own_groups())
    if tree is not None:
        tree.remove_stale()
    return tree


def user_tasks(uid: int) -> int:
    """How many tasks (threads included, as RLIMIT_NPROC counts them) run under ``uid``."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        status = _read(Path(entry.path) / "status")
        uid_line = re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE)
        threads = re.search(r"^Threads:\s+(\d+)", status, re.MULTILINE)
        if uid_line and int(uid_line.group(1)) == uid:
            count += int(threads.group(1)) if threads else 1
    return count


def find_limiter() -> tuple[str, CgroupTree | None]:
    """The best limiter here: ``("cgroup v2"|"cgroup v1", tree)``, else ``("rlimit", None)``
    when util-linux ``prlimit`` is installed, else ``("none", None)``."""
    tree = find_cgroups()
    if tree is not None:
        return tree.limiter, tree
    if shutil.which("prlimit"):
        return RLIMIT, None
    return NO_LIMITS, None


def join_command(procs_files: list[Path]) -> list[str]:
    """The exec-chain prefix that puts the process into its groups before the rest runs:
    ``/bin/sh -c SCRIPT sh FILE... -- COMMAND...`` writes ``$$`` into each ``cgroup.procs``
    file, then ``exec``\\ s COMMAND (exit 125 if the kernel refuses).

    >>> join_command([Path("/g/cgroup.procs")])[3:]
    ['sh', '/g/cgroup.procs', '--']
    """
    script = ('while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"')
    return ["/bin/sh", "-c", script, "sh", *map(str, procs_files), "--"]


def describe_limits(limiter: str, limits: BotLimits, tree: CgroupTree | None, per_bot_uid: bool) -> str:
    """Which limits are in force, and which are not, in words (for the tournament's start line).

    >>> describe_limits("rlimit", BotLimits(), None, per_bot_uid=False)  # doctest: +NORMALIZE_WHITESPACE
    'limits by rlimit: address space 1536 MiB per process, files 64 MiB, 256 open files;
     not in force: memory over all its processes, a process count per bot, equal CPU shares'
    """
    files = f"files {limits.file_size_mb} MiB, {limits.open_files} open files"
    if limiter == NO_LIMITS:
        return "no limits"
    if limiter == RLIMIT:
        parts = [f"address space {limits.memory_mb + AS_HEADROOM_MB} MiB per process", files]
        missing = ["memory over all its processes"]
        if per_bot_uid:
            parts.append(f"{limits.processes} processes")
        else:
            missing.append("a process count per bot")
        missing.append("equal CPU shares")
        return f"limits by rlimit: {', '.join(parts)}; not in force: {', '.join(missing)}"
    assert tree is not None
    parts = [f"memory {limits.memory_mb} MiB", f"{limits.processes} processes", files]
    cpu = "cpu" in tree.controllers
    if cpu:
        parts.append("equal CPU shares")
    return f"limits by {limiter}: {', '.join(parts)}" + ("" if cpu else "; not in force: equal CPU shares")
