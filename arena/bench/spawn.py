"""The helper processes a benchmark starts, and their end.

A helper is ``python -m MODULE ARGS`` (an echo client, the benchmark's bots, a spectator
or a flooder), started with ``asyncio.create_subprocess_exec``, never a bare fork: a
forked child of a process running gRPC's threads hangs.
"""

from __future__ import annotations

import asyncio
import os
import sys


async def spawn(module: str, *args: str) -> asyncio.subprocess.Process:
    """``python -m module *args`` as a child process of this one."""
    # GRPC_VERBOSITY=ERROR: grpc core logs every GOAWAY at shutdown otherwise.
    return await asyncio.create_subprocess_exec(sys.executable, "-m", module, *args,
                                                env={**os.environ, "GRPC_VERBOSITY": "ERROR"})


async def reap(processes: list[asyncio.subprocess.Process]) -> None:
    """Terminate the processes still running, and wait for every one."""
    for process in processes:
        if process.returncode is None:
            process.terminate()
    for process in processes:
        await process.wait()
