"""The arena's gRPC server: :class:`ArenaServer`, its lifecycle, and ``arena serve``.

The room, outside in:

* ``server``: listening (TCP, a Unix socket, TLS), health and reflection, and the start
  and stop of everything else;
* ``auth``: the interceptor that checks tokens and holds the public calls to their rate
  limits (``rate_limits``), and the Hello that admits a ``Play`` stream;
* ``servicer``: the thin gRPC servicer, one short method per call;
* ``host``: the bots and the matches (:class:`~arena.referee.host.MatchHost`): who is
  connected, which matches run and which just finished, running and storing a match;
* ``connections``: one ``Play`` stream (:class:`~arena.referee.connections.Connection`):
  its outbox, the routing of answers, the flood allowance;
* ``seating``: the live connections by bot name, seating, and seats waiting for
  their bot to come back;
* ``match``: one match's run (:class:`~arena.referee.match.Referee`), with ``limits``
  its time control and the arena's defaults;
* ``spectators``, ``listing``, ``automatch``: the public calls and ``arena serve --auto-match``.

The server builds the host and hands its parts to the servicer and the auto-match;
they import the host, never the server. A tournament runner in the same process
starts and stops an :class:`ArenaServer` and calls its :attr:`~ArenaServer.host` for
the rest (``add_local_bot``, ``wait_connected``, ``connected_bots``, ``run_match``).
:func:`serve` runs it for ``arena serve``.
The wire conversions are in ``arena/wire/``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from arena.referee.auth import SERVICE, AuthInterceptor
from arena.referee.automatch import AutoMatch, auto_match
from arena.referee.connections import SERVER_VERSION
from arena.referee.host import MatchHost
from arena.referee.limits import GRACE, MAX_FAULTS, MOVE_TIME, TIME_BANK, Limits
from arena.referee.rate_limits import DEFAULT_LIMITS, RateLimits, RefusalLog
from arena.referee.seating import Absence, ConnectedBotInfo, SeatingError
from arena.referee.servicer import ArenaServicer
from arena.referee.spectators import Spectators
from arena.tls import ServerTls
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from arena.store import Store

__all__ = ["SERVER_VERSION", "Absence", "ArenaServer", "AutoMatch", "ConnectedBotInfo", "SeatingError", "serve",
           "server_options", "tune_gc"]

log = logging.getLogger(__name__)

HELLO_TIMEOUT = 10.0   # seconds a new Play stream has to say Hello before it is closed


def server_options(keepalive_ms: int = 5_000) -> list[tuple[str, Any]]:
    """The gRPC server options, each chosen on purpose (docs/protocol.md §10).

    - keepalive pings every ``keepalive_ms`` with as long an ack timeout find a frozen
      bot in about twice that; the ack timer follows http2.ping_timeout_ms, so that is
      set too, and pings continue while no data flows;
    - bots may ping us every 5 s or more (the SDK's keepalive); more often earns a GOAWAY;
    - answers from bots are tiny, so 1 MiB in is plenty; records and spectator streams
      going out may be larger;
    - so_reuseport 0 makes a taken port an error instead of a silently shared one.
    """
    return [
        ("grpc.keepalive_time_ms", keepalive_ms),
        ("grpc.keepalive_timeout_ms", keepalive_ms),
        ("grpc.http2.ping_timeout_ms", keepalive_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.max_receive_message_length", 1 * 1024 * 1024),
        ("grpc.max_send_message_length", 32 * 1024 * 1024),
        ("grpc.so_reuseport", 0),
    ]


def tune_gc() -> None:
    """Garbage-collector settings for a long-running referee process (``arena serve``).

    A decision allocates many short-lived objects (observation dicts, protobuf
    messages, futures) that reference counting frees; with the default threshold
    (700) the cyclic collector still runs every few decisions and walks every
    tracked object of the young generation. Freezing what start-up created (modules,
    grpc, the engine's tables) keeps it out of every later collection, and a higher
    young-generation threshold makes collections rarer.
    """
    gc.collect()
    gc.freeze()
    # Older generations keep their default ratios (10, 10): finished matches leave
    # cyclic garbage (a referee and its seats' links) that must not linger for long.
    gc.set_threshold(20_000, 10, 10)


class ArenaServer:
    """The arena on the network: a gRPC server in front of a :class:`MatchHost`.

    The server owns what listening needs: the port (and a Unix socket), TLS, the
    interceptor that checks tokens and rate limits, the health service, reflection, and
    how long a stream may take to say Hello. The bots and the matches are its
    :attr:`host`'s; the servicer and the auto-match are handed the host's parts when the
    server starts, and a runner in the same process calls the host itself
    (``server.host.add_local_bot``, ``wait_connected``, ``connected_bots``, ``run_match``, ...).
    """

    def __init__(self, *, store: Store | None = None, move_time: float = MOVE_TIME, time_bank: float = TIME_BANK,
                 max_faults: int = MAX_FAULTS, grace: float = GRACE, admin_token: str | None = None,
                 auto_match: AutoMatch | None = None, rate_limits: RateLimits = DEFAULT_LIMITS,
                 hello_timeout: float = HELLO_TIMEOUT) -> None:
        self.host = MatchHost(store=store, limits=Limits(move_time=move_time, time_bank=time_bank,
                                                         max_faults=max_faults, grace=grace))
        self.store = store
        self.rate_limits = rate_limits
        # The console's warnings about refused Play streams, summarised (one line per bot
        # or peer per interval): a flood of bad tokens must not flood the console too.
        self.refusals = RefusalLog(logging.getLogger("arena.referee.auth"), rate_limits.summary_seconds)
        self.admin_token = admin_token or secrets.token_urlsafe(24)
        self.auto_match = auto_match
        self.hello_timeout = hello_timeout   # a stream that never says Hello is closed after this
        self.keepalive_ms = 5_000         # ping interval and ack timeout (read by start())
        self.port = 0                     # the bound port once started
        self._server: grpc.aio.Server | None = None
        self._health: health_aio.HealthServicer | None = None

    # -- lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0, unix_socket: Path | None = None,
                    tls: ServerTls | None = None) -> int:
        """Start listening; returns the bound port (``port=0`` picks a free one).

        With ``tls`` (checked by :func:`arena.tls.load_server_tls`) the TCP port speaks
        TLS only, asking for a client certificate when ``tls.client_ca`` is set.

        With ``unix_socket`` the server also listens on that Unix domain socket (gRPC's
        ``unix:`` address): the only way into the arena for a confined bot, whose
        sandbox has no network. It stays plaintext, TLS or not: it never leaves this
        machine. The socket is made connectable by every user (a bot may run under an
        unprivileged uid); its token still decides who may play."""
        matches = self.host
        interceptor = AuthInterceptor(matches.tokens, self.admin_token, self.rate_limits, self.refusals)
        server = grpc.aio.server(interceptors=[interceptor],
                                 options=server_options(self.keepalive_ms))
        servicer = ArenaServicer(matches, matches.roster, matches.tokens, Spectators(matches.find_match, self.store),
                                 self.store, self.hello_timeout, self.refusals)
        pb_grpc.add_ArenaServicer_to_server(servicer, server)
        health = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health, server)
        reflection.enable_server_reflection(
            [SERVICE, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME], server)
        try:
            bound = (server.add_secure_port(f"{host}:{port}", tls.credentials()) if tls is not None
                     else server.add_insecure_port(f"{host}:{port}"))
        except RuntimeError:   # grpc's way of saying the bind failed
            bound = 0
        if bound == 0:
            await server.stop(None)
            raise OSError(f"cannot listen on {host}:{port} (is the port taken?)")
        if unix_socket is not None:
            try:
                listening = server.add_insecure_port(f"unix:{unix_socket}")
            except RuntimeError:
                listening = 0
            if listening == 0:
                await server.stop(None)
                size = len(os.fsencode(unix_socket))
                why = f" (its path is {size} bytes; a socket path holds at most 107)" if size > 107 else ""
                raise OSError(f"cannot listen on the Unix socket {unix_socket}{why}")
        await server.start()
        if unix_socket is not None:
            os.chmod(unix_socket, 0o666)
        await health.set("", health_pb2.HealthCheckResponse.SERVING)
        await health.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
        self._server, self._health = server, health
        self.port = bound
        if self.auto_match is not None:
            matches.spawn(auto_match(self.auto_match, matches.roster, matches))
        matches.watch_tokens()
        matches.spawn(self._summarise_refusals())
        log.debug("arena listening on %s:%d", host, bound)
        return bound

    async def stop(self, grace: float = 1.0) -> None:
        """Stop the auto-match, end the Play streams, tell health checkers, and stop the
        server (running calls get ``grace`` seconds, then are cancelled)."""
        self.host.close()
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
            self._health = None
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        self.refusals.flush(everything=True)

    async def _summarise_refusals(self) -> None:
        """Write the summaries of refused Play streams as they fall due (every second)."""
        while True:
            await asyncio.sleep(1.0)
            self.refusals.flush()


async def serve(host: str = "127.0.0.1", port: int = 50051, db_path: str = "arena.db", move_time: float = MOVE_TIME,
                time_bank: float = TIME_BANK, max_faults: int = MAX_FAULTS, grace: float = GRACE,
                auto_match: AutoMatch | None = None, admin_token: str | None = None, quiet: bool = False,
                tls: ServerTls | None = None) -> None:
    """``arena serve``: run the arena until SIGINT or SIGTERM, storing every finished match,
    and with ``auto_match`` seating idle bots in matches of its own.

    The admin token is ``admin_token``, else ``$ARENA_ADMIN_TOKEN``, else a fresh random
    one; it is printed once at startup together with the bound address (and ``(TLS)``
    after it when the port speaks TLS, ``(TLS, client certificates required)`` with mutual
    TLS). Connections, finished matches and faults are logged on stderr (only warnings
    with ``quiet``). Whether plaintext may be served on ``host`` is the command's
    decision (arena.cli.serve), made before this is called.
    """
    from arena.store import Store

    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(message)s", datefmt="%H:%M:%S")

    store = Store(db_path)
    arena = ArenaServer(store=store, move_time=move_time, time_bank=time_bank, max_faults=max_faults,
                        grace=grace, admin_token=admin_token or os.environ.get("ARENA_ADMIN_TOKEN"),
                        auto_match=auto_match)
    bound = await arena.start(host, port, tls=tls)
    tune_gc()
    secured = "" if tls is None else " (TLS, client certificates required)" if tls.client_ca else " (TLS)"
    print(f"arena listening on {host}:{bound}{secured}", flush=True)
    print(f"admin token: {arena.admin_token}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await arena.stop(grace=2.0)
