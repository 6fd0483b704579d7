"""The processes of a fuzz run: ``arena serve`` under test (this checkout's, or
``FuzzSettings.server_command``), the honest sample bots, stopping them (SIGTERM, then
SIGKILL), and the server's stderr summarised (its memory is read with
:func:`arena.bench.machine.rss_mb`).

    >>> summarise_log("12:00:01 refused a Play stream 3\\n12:00:02 refused a Play stream 44")
    ([], ['2 x refused a Play stream N'])
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections import Counter
from pathlib import Path

from fuzz.settings import FuzzSettings


async def start_server(workdir: Path, settings: FuzzSettings,
                       admin_token: str) -> tuple[asyncio.subprocess.Process, str]:
    """``arena serve`` on 127.0.0.1, port 0; returns the process and the address it printed."""
    log = open(workdir / "server.log", "ab")
    try:
        command = settings.server_command or (sys.executable, "-m", "arena.cli", "serve")
        process = await asyncio.create_subprocess_exec(
            *command, "--host", "127.0.0.1", "--port", "0",
            "--db", str(workdir / "arena.db"), "--move-time", str(settings.move_time),
            "--time-bank", str(settings.time_bank), "--grace", str(settings.grace), "--quiet",
            stdout=asyncio.subprocess.PIPE, stderr=log, stdin=asyncio.subprocess.DEVNULL,
            env={**os.environ, "ARENA_ADMIN_TOKEN": admin_token, "PYTHONUNBUFFERED": "1"})
    finally:
        log.close()
    assert process.stdout is not None
    try:
        while True:
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            if not line:
                raise RuntimeError(f"arena serve exited before listening; see {workdir / 'server.log'}")
            found = re.match(r"arena listening on (\S+):(\d+)", line)
            if found:
                break
    except BaseException:
        await stop_process(process)
        raise
    # Keep draining stdout so the server never blocks on a full pipe.
    asyncio.ensure_future(_drain(process.stdout))
    return process, f"{found.group(1)}:{found.group(2)}"


async def _drain(stream: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await stream.read(65536):
            pass


async def start_honest_bot(workdir: Path, name: str, module: str, address: str, token: str,
                           slots: int) -> asyncio.subprocess.Process:
    log = open(workdir / f"bot-{name}.log", "ab")
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, "--arena", address, "--token", token, "--name", name,
            "--max-matches", str(slots), "--give-up-after", "30",
            stdout=log, stderr=log, stdin=asyncio.subprocess.DEVNULL,
            env={**os.environ, "ARENA_PARENT_PID": str(os.getpid()), "GRPC_VERBOSITY": "ERROR"})
    finally:
        log.close()


async def stop_process(process: asyncio.subprocess.Process, timeout: float = 10.0) -> int | None:
    """SIGTERM, then SIGKILL after ``timeout``; returns the exit code."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return process.returncode


def summarise_log(text: str, limit: int = 40) -> tuple[list[str], list[str]]:
    """The tracebacks and the other lines of the server's stderr, each as "N x summary"
    (ids and numbers blanked so that repeats group together)."""
    counts: Counter[str] = Counter()
    others: Counter[str] = Counter()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Traceback (most recent call last):"):
            before = lines[i - 1].strip() if i > 0 else ""
            j = i + 1
            while j < len(lines) and (lines[j].startswith(" ") or not lines[j].strip()):
                j += 1
            where = [ln.strip() for ln in lines[i + 1:j] if ln.strip().startswith("File ")]
            error = lines[j].strip() if j < len(lines) else "?"
            counts[_blank(f"{before} | {where[-1] if where else ''} | {error}")] += 1
            i = j + 1
            continue
        if line.strip() and not line.startswith(" ") and not lines[min(i + 1, len(lines) - 1)].startswith("Traceback"):
            others[_blank(line.strip())] += 1
        i += 1
    return ([f"{n} x {text}" for text, n in counts.most_common(limit)],
            [f"{n} x {text}" for text, n in others.most_common(limit)])


def _blank(text: str) -> str:
    text = re.sub(r"^\d\d:\d\d:\d\d ", "", text)
    text = re.sub(r"\b[0-9a-f]{16}\b", "<id>", text)
    return re.sub(r"\d+", "N", text)[:400]
