"""CPU time read from ``/proc``: of other processes, and of the whole machine.

A benchmark's own process has ``time.process_time()``; the processes it starts (bots,
echo clients, a database server) and the machine as a whole are read here, so that a
figure can say where the CPU went and whether the machine's cores were all busy.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def processes_cpu(pids: Iterable[int]) -> float | None:
    """CPU seconds (user + system, every thread's) used so far by these processes, from
    ``/proc/PID/stat`` in clock ticks (1/100 s on Linux); None without ``/proc``. A
    process that is gone counts nothing.

    >>> processes_cpu([os.getpid()]) is None or processes_cpu([os.getpid()]) >= 0
    True
    """
    if not os.path.isdir("/proc"):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])      # utime, stime
    return total / ticks


def children_cpu(parent: int) -> float | None:
    """CPU seconds used so far by the processes whose parent is ``parent``, and by
    ``parent`` itself (a database server and its backends); None without ``/proc``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    ticks, total = os.sysconf("SC_CLK_TCK"), 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue            # gone meanwhile
        if int(fields[1]) == parent or int(entry) == parent:      # fields[1]: the parent's pid
            total += int(fields[11]) + int(fields[12])
    return total / ticks


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
