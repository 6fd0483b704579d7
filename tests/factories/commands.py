"""One `arena` command as its own process: ``arena_stdout``, ``arena_json``; ``forked_arena``
for the many short ones (forked from a process that has imported the command line)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def arena_stdout(*args: str, cwd: Path) -> str:
    """Run one `arena` command as its own process; its stdout, or the test fails with its stderr."""
    done = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"arena {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


def arena_json(*args: str, cwd: Path) -> Any:
    return json.loads(arena_stdout(*args, "--format", "json", cwd=cwd))


# The modules the commands import lazily, once they run (the store, the results, the
# tournament's runner): a fresh `arena` process spends 1-2 s of CPU importing them before it
# can refuse a bad argument. ``forked_arena`` imports them once in the test process.
WARM = ("arena.cli.app", "arena.cli.tournament_run", "arena.store", "arena.results.sprt",
        "arena.results.elo_history", "arena.results.listings", "arena.results.browse")


def forked_arena(*args: str, cwd: Path, env: dict[str, str] | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run one `arena` command as its own process, forked from this one once it has imported
    the command line (``WARM``): the command's own code runs as in a fresh process (its
    folder, its environment, its stdout and stderr, its exit code), without paying for the
    imports again. For the many bad-argument cases; what a fresh interpreter does (its
    imports, the installed script) keeps its tests with real ``python -m arena.cli``."""
    import importlib

    for module in WARM:
        importlib.import_module(module)
    from arena.cli.app import main

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:                                   # the child: one `arena` command, then exit
            code = 1
            try:
                os.chdir(cwd)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 (fd 1 outlives it)
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                if env is not None:
                    os.environ.clear()
                    os.environ.update(env)
                _fresh_consoles()
                try:
                    main(list(args))
                except SystemExit as done:
                    code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
                    if isinstance(done.code, str):
                        print(done.code, file=sys.stderr)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = time.monotonic() + timeout
        while (waited := os.waitpid(pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["arena", *args], timeout)
            time.sleep(0.005)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["arena", *args], os.waitstatus_to_exitcode(waited[1]),
                                           out.read().decode(), err.read().decode())


def _fresh_consoles() -> None:
    """The command line's consoles are made as it is imported, for that process's stdout
    and environment (a pipe prints 160 columns wide, COLUMNS sets the width): made again,
    in place, for the forked command's own."""
    from arena.cli import common

    for console, stderr in ((common.console, False), (common.err_console, True)):
        console.__dict__.update(common.make_console(stderr=stderr).__dict__)
