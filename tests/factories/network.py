"""A network that drops: ``DroppingProxy``."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class DroppingProxy:
    """A TCP proxy between a bot and the arena whose connections can be cut at will:
    what a flaky network does to a bot."""

    upstream_port: int
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    accepted: int = 0
    accepted_at: list[float] = field(default_factory=list)   # time.monotonic() of each connection
    dropped_at: float | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.accepted_at.append(time.monotonic())
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def drop(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    async def stop(self) -> None:
        self.drop()
        self.server.close()

    async def run_match_dropping_midway(self, arena: Any, spec: Any) -> Any:
        """Run ``spec`` on ``arena`` (an ArenaThread) and cut every proxied connection once
        the match is well under way (20 actions in); return the finished match's record."""
        match = asyncio.wrap_future(arena.submit(arena.arena.host.run_match(spec)))
        host = arena.arena.host
        while not host.running or len(next(iter(host.running.values())).game.actions) < 20:
            await asyncio.sleep(0.005)
        assert not match.done(), "the match ended before the drop; make it longer"
        self.dropped_at = time.monotonic()
        self.drop()
        return await asyncio.wait_for(match, 60)
