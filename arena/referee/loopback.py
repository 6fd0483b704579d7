"""A referee in this process on a free loopback port, for bots this process admits itself.

A run that plays its own bots against its own referee starts it the same way every
time: an :class:`~arena.referee.server.ArenaServer` that stores nothing, listening on
127.0.0.1 on a port the system picks, maybe on a Unix socket too (the only way in for a
confined bot, whose sandbox has no network) or with TLS on its TCP port, and a one-run
token for each bot it starts (never stored: ``add_local_bot``). :class:`LoopbackReferee`
is that start, with its differences as parameters. The tournament's ``LocalArena``,
``arena bot check`` and the benchmarks (``arena bench referee``, ``arena bench
hostile``) start their referee with it; how each starts its bots (confined processes,
SDK clients in this process, benchmark processes) stays its own.

    >>> import asyncio
    >>> async def one_bot() -> tuple[bool, int, bool]:
    ...     referee = LoopbackReferee(move_time=1.0, hello_timeout=5.0)
    ...     address = await referee.start()
    ...     try:
    ...         token = referee.admit("me")
    ...         return address == f"127.0.0.1:{referee.port}", len(token), referee.admit("you", "t") == "t"
    ...     finally:
    ...         await referee.stop()
    >>> asyncio.run(one_bot())
    (True, 48, True)
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from arena.referee.limits import GRACE, MAX_FAULTS, MOVE_TIME, TIME_BANK

if TYPE_CHECKING:
    from arena.referee.server import ArenaServer
    from arena.tls import ServerTls

LOOPBACK = "127.0.0.1"


class LoopbackReferee:
    """An :class:`ArenaServer` without a store, for a run's own bots on this machine.

    The limits are the match defaults (the referee's own unless given); ``hello_timeout``
    shortens the time a stream has to say Hello (never lengthens it), so that a bot
    that connects but never says Hello is refused within a caller's own deadline.
    ``server`` is the referee itself: matches are played with ``server.run_match``.
    """

    def __init__(self, *, move_time: float = MOVE_TIME, time_bank: float = TIME_BANK, max_faults: int = MAX_FAULTS,
                 grace: float = GRACE, hello_timeout: float | None = None) -> None:
        # The gRPC server is imported when a referee is made, not with this module.
        from arena.referee.server import HELLO_TIMEOUT, ArenaServer

        self.server: ArenaServer = ArenaServer(
            store=None, move_time=move_time, time_bank=time_bank, max_faults=max_faults, grace=grace,
            hello_timeout=HELLO_TIMEOUT if hello_timeout is None else min(HELLO_TIMEOUT, hello_timeout))

    @property
    def port(self) -> int:
        """The TCP port it listens on (0 until started)."""
        return self.server.port

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, the address its bots are given."""
        return f"{LOOPBACK}:{self.server.port}"

    async def start(self, *, unix_socket: Path | None = None, tls: ServerTls | None = None) -> str:
        """Listen on a free loopback port (speaking TLS with ``tls``), and on ``unix_socket``
        too when given; returns :attr:`address`."""
        await self.server.start(LOOPBACK, 0, unix_socket=unix_socket, tls=tls)
        return self.address

    def admit(self, name: str, token: str | None = None, *, max_streams: int | None = None) -> str:
        """Accept bot ``name`` with ``token`` (a fresh one-run token if none is given), for at
        most ``max_streams`` streams at once when given; returns the token."""
        token = secrets.token_hex(24) if token is None else token
        self.server.host.add_local_bot(name, token, max_streams=max_streams)
        return token

    async def stop(self, grace: float = 1.0) -> None:
        """Stop the referee: running calls get ``grace`` seconds (``ArenaServer.stop``)."""
        await self.server.stop(grace)
