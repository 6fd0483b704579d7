"""CPU time read from ``/proc``: of other processes, and of the whole machine.

A benchmark's own process has ``time.process_time()``; the processes it starts (bots,
echo clients, a database server) and the machine as a whole are read here, so that a
figure can say where the CPU went and whether the machine's cores were all busy.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


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
