"""CPU time and memory read from ``/proc``: of other processes, and of the whole machine.

A benchmark's own process has ``time.process_time()``; the processes it starts (bots,
echo clients, a database server) and the machine as a whole are read here, so that a
figure can say where the CPU went and whether the machine's cores were all busy
(:class:`CpuSplit` puts the three side by side for one measured stretch).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable, Sequence


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None
    when the process is gone or there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _ticks(fields: list[str]) -> int:
    return int(fields[11]) + int(fields[12])      # utime, stime: every thread's


def processes_cpu(pids: Iterable[int]) -> float | None:
    """CPU seconds (user + system, every thread's) used so far by these processes;
    None without ``/proc``. A process that is gone counts nothing.

    >>> processes_cpu([os.getpid()]) is None or processes_cpu([os.getpid()]) >= 0
    True
    """
    if not os.path.isdir("/proc"):
        return None
    return sum(_ticks(fields) for pid in pids if (fields := _stat(pid)) is not None) / os.sysconf("SC_CLK_TCK")


def children_cpu(parent: int | None) -> float | None:
    """CPU seconds used so far by ``parent`` and the processes whose parent it is (a
    database server and its backends); None when unknown (no parent given, no ``/proc``)."""
    if parent is None:
        return None
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return None
    total = 0
    for entry in entries:
        fields = _stat(entry)
        if fields is not None and (int(entry) == parent or int(fields[1]) == parent):   # fields[1]: the parent
            total += _ticks(fields)
    return total / os.sysconf("SC_CLK_TCK")


def cpu_busy() -> tuple[int, int] | None:
    """The machine's busy and total CPU time so far, in clock ticks (None without /proc/stat)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)       # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of the machine's CPU time that was busy between two :func:`cpu_busy`
    readings (1.0: every core busy all the time); None when either is unknown.

    >>> busy_share((100, 400), (250, 600))
    0.75
    """
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident memory of a process in MB (``VmRSS``; this process's by default), or None
    when it is gone or there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class CpuSplit:
    """Where the CPU of a measured stretch went: this process (the server), the
    processes it started for it (bots or echo clients, every thread of each) and the
    machine as a whole. On a machine with few cores the server and its clients share
    them: when they are all busy (``machine_busy`` near 1) a rate is the machine's, and
    the CPU per round trip on each side says what a machine with a core for each would
    give (the server's own core is then the limit). The server's CPU is split once
    more: its event loop's thread (``loop_cpu``, where the referee's Python and
    grpc.aio's Python side run) and the rest, mostly grpc's poller thread, which takes
    gRPC's completions off the network and wakes the loop."""

    def __init__(self, processes: Sequence[asyncio.subprocess.Process]) -> None:
        self.pids = [process.pid for process in processes]
        self.elapsed = self.cpu = self.loop_cpu = 0.0
        self.clients_cpu: float | None = None
        self.busy: float | None = None

    def __enter__(self) -> CpuSplit:
        self._started, self._cpu, self._loop_cpu = time.perf_counter(), time.process_time(), time.thread_time()
        self._clients, self._machine = processes_cpu(self.pids), cpu_busy()
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self._started
        self.cpu = time.process_time() - self._cpu
        self.loop_cpu = time.thread_time() - self._loop_cpu
        clients, self.busy = processes_cpu(self.pids), busy_share(self._machine, cpu_busy())
        if clients is not None and self._clients is not None:
            self.clients_cpu = clients - self._clients

    @classmethod
    def total(cls, splits: Sequence[CpuSplit]) -> CpuSplit:
        """Several measured stretches as one: their times added up, the machine's busy
        share weighted by their lengths (unknown where any is)."""
        whole = cls([])
        whole.elapsed = sum(split.elapsed for split in splits)
        whole.cpu = sum(split.cpu for split in splits)
        whole.loop_cpu = sum(split.loop_cpu for split in splits)
        clients = [split.clients_cpu for split in splits]
        whole.clients_cpu = None if None in clients else sum(c for c in clients if c is not None)
        if whole.elapsed and all(split.busy is not None for split in splits):
            whole.busy = sum((split.busy or 0.0) * split.elapsed for split in splits) / whole.elapsed
        return whole

    def figures(self, prefix: str, server: str, clients: str, per: str, count: int) -> dict[str, float]:
        """``PREFIX_SERVER_cpu_us_per_PER`` (and ``PREFIX_SERVER_loop_cpu_us_per_PER``,
        its event loop's thread), the clients' the same way, and ``PREFIX_machine_busy``,
        over ``count`` round trips (those unknown without /proc are left out)."""
        figures = {f"{prefix}_{server}_cpu_us_per_{per}": self.cpu / count * 1e6,
                   f"{prefix}_{server}_loop_cpu_us_per_{per}": self.loop_cpu / count * 1e6}
        if self.clients_cpu is not None:
            figures[f"{prefix}_{clients}_cpu_us_per_{per}"] = self.clients_cpu / count * 1e6
        if self.busy is not None:
            figures[f"{prefix}_machine_busy"] = self.busy
        return figures

