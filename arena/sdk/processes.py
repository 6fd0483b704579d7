"""The bot's processes: whether the process that started this one is still there
(:func:`launcher_gone`), and ``--processes N`` (:func:`supervise`).

Threads share one core (the GIL); processes do not. With ``--processes N`` this process
starts N copies of its own command line, each with ``ARENA_PROCESS=I/N`` and its
:func:`process_share` of ``--max-matches``, watches them, and stops them together.
Both the client (an orphaned bot does not reconnect) and the command line use
:func:`launcher_gone`; nothing here knows about grpc.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from typing import Any

log = logging.getLogger("arena.sdk")   # the SDK's one logger, whichever module logs

# The most processes --processes starts: the arena lets one bot hold 32 streams at once.
MAX_PROCESSES = 32
# Tells a process started by supervise() which of them it is: "I/N".
PROCESS_VARIABLE = "ARENA_PROCESS"
# Seconds between a process's looks at whether its starter is still there.
ORPHAN_POLL = 0.5
# Seconds the processes get to leave after SIGTERM before they are killed.
STOP_SECONDS = 5.0


# The parent when the SDK was loaded, that is when the bot started (see launcher_gone).
_PARENT_AT_START = os.getppid()


def launcher_gone() -> bool:
    """True when the arena process that started this bot (``ARENA_PARENT_PID``) is gone:
    then there is nothing to reconnect to, and an orphaned bot should not linger.

    Only a launcher that was this process's parent at the start counts. A bot in a
    sandbox (its own PID namespace) gets no ``ARENA_PARENT_PID``, and if one leaks into
    it from an outer environment, it names a process in another namespace: the parent
    seen there (the sandbox's init) never matched it, so the bot is not taken for an
    orphan and reconnects as usual. Such a bot ends when its retries run out (exit 1).
    """
    launcher = os.environ.get("ARENA_PARENT_PID", "")
    return launcher.isdigit() and _PARENT_AT_START == int(launcher) != os.getppid()


def process_share(max_matches: int, processes: int, index: int) -> int:
    """How many matches process ``index`` (1 to ``processes``) plays at once: ``max_matches``
    shared out as evenly as can be, and at least one each.

    >>> [process_share(4, 2, i) for i in (1, 2)], [process_share(5, 2, i) for i in (1, 2)]
    ([2, 2], [3, 2])
    >>> [process_share(2, 3, i) for i in (1, 2, 3)]
    [1, 1, 1]
    """
    share, extra = divmod(max_matches, processes)
    return max(1, share + (1 if index <= extra else 0))


def supervise(processes: int, command: list[str] | None = None, name: str = "bot") -> int:
    """Play in ``processes`` processes (``--processes N``) and return the exit code for all.

    Each is ``command``, by default this program's own command line run again
    (``sys.orig_argv`` with this Python), with ``ARENA_PROCESS=I/N`` in its environment:
    process I of N plays its :func:`process_share` of ``--max-matches`` on its own
    connection, and stops when this process is gone (``ARENA_PARENT_PID``). This process
    only watches them. Separate processes, not threads, because Python code that computes
    runs on one core at a time in a process (the GIL); and started afresh, not forked,
    because a forked gRPC process can hang.

    The bot ends as one: SIGTERM or SIGINT here, or the arena that started this process
    exiting, stops them all (exit 0); when one exits by itself (a crash, a refusal, the
    arena ending the session), the others are stopped and its exit code is the bot's
    (the highest, when several exit together; 128 + N for one killed by signal N).
    """
    command = command or [sys.executable, *sys.orig_argv[1:]]
    stopped: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stopped.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    children: list[subprocess.Popen[bytes]] = []
    try:
        env = {**os.environ, "ARENA_PARENT_PID": str(os.getpid())}
        for index in range(1, processes + 1):
            children.append(subprocess.Popen(command, env={**env, PROCESS_VARIABLE: f"{index}/{processes}"}))
        log.info("%s: playing in %d processes (%s)", name, processes, ", ".join(str(c.pid) for c in children))
        while not stopped and not launcher_gone() and all(child.poll() is None for child in children):
            time.sleep(0.1)
    finally:
        ended = {index: child.returncode for index, child in enumerate(children, 1) if child.returncode is not None}
        _stop_processes(children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stopped or not ended:
        return 0
    index, code = max(ended.items(), key=lambda item: _exit_code(item[1]))
    log.log(logging.INFO if code == 0 else logging.ERROR, "%s: process %d/%d exited with code %s; %s",
            name, index, processes, code, "the others were stopped" if processes > 1 else "stopped")
    return _exit_code(code)


def _exit_code(returncode: int) -> int:
    """A child's return code as an exit status: 128 + N for one killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def _stop_processes(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM the children still running, and SIGKILL those still there after STOP_SECONDS."""
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
