"""Test harness: a real ArenaServer on 127.0.0.1 (port 0) in a background event loop,
and the test bots as real separate processes.

The server runs on its own thread so a test can drive it with plain blocking calls
(``arena.call(coro)``) and talk to it with ordinary synchronous grpc clients. Tests get
one through the ``arena_server`` and ``module_arena_server`` fixtures (``tests/conftest.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from arena.records import MatchRecord, MatchSpec
from arena.referee.server import ArenaServer

BOTS_DIR = Path(__file__).resolve().parent
ADMIN_TOKEN = "test-admin-token"


class ArenaThread:
    """An :class:`ArenaServer` on its own event loop thread, plus the bot processes it serves."""

    def __init__(self, keepalive_ms: int | None = None, port: int = 0, local_bots: dict[str, str] | None = None,
                 **server_options: Any) -> None:
        """``local_bots``: one-run tokens (bot name -> token) accepted from the start, for
        bot processes a test starts itself."""
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="arena-loop", daemon=True)
        self._thread.start()
        server_options.setdefault("admin_token", ADMIN_TOKEN)
        self.arena: ArenaServer = self.call(self._make(server_options))
        if keepalive_ms is not None:
            self.arena.keepalive_ms = keepalive_ms
        for name, token in (local_bots or {}).items():
            self.arena.host.add_local_bot(name, token)   # not started yet: nothing else touches it
        try:
            self.port: int = self.call(self.arena.start("127.0.0.1", port))
        except BaseException:   # e.g. a taken port: leave no loop thread behind
            self._stop_loop()
            raise
        self.address = f"127.0.0.1:{self.port}"
        self._processes: list[subprocess.Popen[bytes]] = []

    @staticmethod
    async def _make(options: dict[str, Any]) -> ArenaServer:
        return ArenaServer(**options)   # created on the loop it will live on

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        """Run a coroutine on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Start a coroutine on the server's loop; returns a concurrent.futures.Future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def start_bot(self, script: str, name: str, *args: str, report: Path | None = None,
                  max_matches: int = 1, wait: bool = True, token: str | None = None) -> subprocess.Popen[bytes]:
        """Start ``tests/bots/<script>`` as bot ``name``, with ``token`` (e.g. one from the
        store) or else a one-run token registered for it now."""
        if token is None:
            token = f"token-{name}"
            self.loop.call_soon_threadsafe(self.arena.host.add_local_bot, name, token)
        command = bot_command(script, self.address, token, name, "--max-matches", str(max_matches), *args)
        if report is not None:
            command += ["--report", str(report)]
        process = subprocess.Popen(command, env={**os.environ, "GRPC_VERBOSITY": "ERROR"})
        self._processes.append(process)
        if wait:
            self.call(self.arena.host.wait_connected([name], 30))
        return process

    def run_match(self, bots: list[str], timeout: float = 60, **spec: Any) -> MatchRecord:
        config = spec.pop("config", {"variant": "classic", "players": len(bots), "seed": 1, "rounds": 2})
        return self.call(self.arena.host.run_match(MatchSpec(config=config, bots=bots, **spec)), timeout)

    def stop_bot(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            process.terminate()
        process.wait(10)

    def close(self) -> None:
        if self.loop.is_closed():      # closed already (a test may close before its fixture)
            return
        for process in self._processes:
            self.stop_bot(process)
        self.call(self.arena.stop(0))
        self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


def bot_command(script: str, address: str, token: str, name: str, *args: str) -> list[str]:
    """The command line that runs the test bot ``tests/bots/<script>``."""
    return [sys.executable, str(BOTS_DIR / script), "--arena", address, "--token", token, "--name", name, *args]


def read_report(path: Path) -> list[dict[str, Any]]:
    """The JSON lines a test bot wrote with --report, the whole ones: a bot may be writing
    its last line right now (a long line goes out in more than one write)."""
    if not path.exists():
        return []
    whole = path.read_text().rpartition("\n")[0]
    return [json.loads(line) for line in whole.splitlines() if line.strip()]


def seat_faults(record: MatchRecord, seat: int) -> list[str]:
    return [fault.kind for fault in record.faults if fault.seat == seat]


def assert_played_honestly(record: MatchRecord, seats: list[int]) -> None:
    """These seats had no fault, did not forfeit, and every one of their decisions
    was answered by their bot (a latency, not a fallback)."""
    for seat in seats:
        assert seat_faults(record, seat) == [], (seat, record.faults)
        assert not record.forfeited[seat]
        latencies = [ms for (s, _), ms in zip(record.actions, record.latencies_ms) if s == seat]
        assert latencies and all(ms is not None for ms in latencies), (seat, latencies)
