"""The arena's gRPC server: :class:`ArenaServer`, its lifecycle, and ``arena serve``.

The room, outside in:

* ``auth``: the interceptor that checks tokens and holds the public calls to their rate
  limits (``rate_limits``), and the Hello that admits a ``Play`` stream;
* ``servicer``: the thin gRPC servicer, one short method per call;
* ``connections``: one ``Play`` stream (:class:`~arena.referee.connections.Connection`):
  its outbox, the routing of answers, the flood allowance;
* ``seating``: the live connections by bot name, seating, and seats waiting for
  their bot to come back;
* ``match``: one match's run (:class:`~arena.referee.match.Referee`), with ``limits``
  its time control and the arena's defaults;
* ``spectators``, ``listing``, ``ladder``: the public calls and ``arena serve --auto-match``.

:class:`ArenaServer` is the Python API the tournament runner uses: ``start``,
``add_local_bot``, ``wait_connected``, ``connected_bots``, ``run_match``, ``stop``.
:func:`serve` runs it for ``arena serve``. The wire conversions are in ``arena/wire/``.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import secrets
import signal
import sys
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from arena.records import MatchRecord, MatchSpec
from arena.referee.auth import SERVICE, AuthInterceptor, Tokens
from arena.referee.connections import SERVER_VERSION
from arena.referee.ladder import ladder_loop
from arena.referee.limits import GRACE, MAX_FAULTS, MOVE_TIME, TIME_BANK, Limits
from arena.referee.match import Referee
from arena.referee.rate_limits import DEFAULT_LIMITS, RateLimits, RefusalLog
from arena.referee.seating import Absence, ConnectedBotInfo, Registry, SeatingError
from arena.referee.servicer import ArenaServicer
from arena.referee.spectators import Spectators
from arena.tls import ServerTls
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from arena.store import Store

__all__ = ["SERVER_VERSION", "Absence", "ArenaServer", "ConnectedBotInfo", "SeatingError", "serve", "server_options",
           "tune_gc"]

log = logging.getLogger(__name__)

RECENT_MATCHES = 200   # finished matches kept in memory (for spectators and ListMatches)


def server_options(keepalive_ms: int = 5_000) -> list[tuple[str, Any]]:
    """The gRPC server options, chosen on purpose (measured with grpcio here; docs/protocol.md §10).

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
    young-generation threshold makes collections rarer. Measured: about 8% less
    referee CPU per decision with 32 concurrent matches.
    """
    gc.collect()
    gc.freeze()
    # Older generations keep their default ratios (10, 10): finished matches leave
    # cyclic garbage (a referee and its seats' links) that must not linger for long.
    gc.set_threshold(20_000, 10, 10)


class ArenaServer:
    """The arena as a Python object: a gRPC server plus the matches running on it.

    Bots authenticate with a token from the store (``arena bot register``) or a one-run
    token given to :meth:`add_local_bot`. ``run_match`` does not store the record; the
    ``RunMatch`` call and the ladder do (when there is a store).
    """

    def __init__(self, *, store: Store | None = None, move_time: float = MOVE_TIME, time_bank: float = TIME_BANK,
                 max_faults: int = MAX_FAULTS, grace: float = GRACE, admin_token: str | None = None,
                 ladder: dict | None = None, rate_limits: RateLimits = DEFAULT_LIMITS) -> None:
        self.store = store
        self.rate_limits = rate_limits
        # The console's warnings about refused Play streams, summarised (one line per bot
        # or peer per interval): a flood of bad tokens must not flood the console too.
        self.refusals = RefusalLog(logging.getLogger("arena.referee.auth"), rate_limits.summary_seconds)
        self.limits = Limits(move_time=move_time, time_bank=time_bank, max_faults=max_faults, grace=grace)
        self.admin_token = admin_token or secrets.token_urlsafe(24)
        self.ladder = ladder
        self.seat_timeout = 10.0          # how long run_match waits for busy or absent bots
        self.hello_timeout = 10.0         # a stream that never says Hello is closed after this
        self.keepalive_ms = 5_000         # ping interval and ack timeout (read by start())
        self.tokens = Tokens(store)
        self.registry = Registry()
        # Set by a runner that started every bot itself (LocalArena): the bots it knows
        # to be down, and that any bot still unconnected after seat_timeout is seated
        # absent instead of failing the match (see Registry.seat_when_free).
        self.absent: dict[str, Absence] | None = None
        self.running: dict[str, Referee] = {}
        self.recent: OrderedDict[str, Referee] = OrderedDict()   # finished, newest last
        self.spectators = Spectators(self.find_match, store)
        self._request_ids = itertools.count(1)
        self.port = 0                     # the bound port once started
        self._server: grpc.aio.Server | None = None
        self._health: health_aio.HealthServicer | None = None
        self._background: set[asyncio.Task[Any]] = set()

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
        interceptor = AuthInterceptor(self.tokens, self.admin_token, self.rate_limits, self.refusals)
        server = grpc.aio.server(interceptors=[interceptor],
                                 options=server_options(self.keepalive_ms))
        pb_grpc.add_ArenaServicer_to_server(ArenaServicer(self), server)
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
        if self.ladder:
            self.spawn(ladder_loop(self, **self.ladder))
        if self.store is not None:
            self.spawn(self.tokens.watch(self.registry))
        self.spawn(self._summarise_refusals())
        log.debug("arena listening on %s:%d", host, bound)
        return bound

    async def stop(self, grace: float = 1.0) -> None:
        """Stop the ladder, tell health checkers, and stop the server (running calls get
        ``grace`` seconds, then are cancelled)."""
        for task in list(self._background):
            task.cancel()
        # End every Play stream from our side once its queued messages are out, so the
        # handlers return instead of being cancelled by grpc (which logs a traceback each).
        for conns in list(self.registry.by_name.values()):
            for conn in conns:
                conn.finish()
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

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background until it ends or the server stops."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- bots

    def add_local_bot(self, name: str, token: str, max_streams: int | None = None) -> None:
        """Accept ``token`` for bot ``name`` (not stored) until :meth:`remove_local_bot`,
        for at most ``max_streams`` streams at once when given."""
        self.tokens.add_local(name, token, max_streams)

    def remove_local_bot(self, token: str) -> None:
        """Stop accepting ``token`` and end the streams that use it (a bot process that
        was stopped or restarted: whatever it left behind cannot play on)."""
        self.tokens.remove_local(token)
        self.registry.revoke(lambda conn: conn.token != token)

    def connected_bots(self) -> dict[str, ConnectedBotInfo]:
        return self.registry.info()

    async def wait_connected(self, names: list[str], timeout: float) -> None:
        """Wait until every named bot has a connection; TimeoutError names the missing ones."""
        deadline = time.monotonic() + timeout
        while True:
            missing = sorted(set(names) - set(self.registry.by_name))
            if not missing:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"bots not connected after {timeout:g} s: {', '.join(missing)}")
            await self.registry.wait_for_change(left)

    async def wait_for_tokens(self, tokens: list[str], timeout: float) -> None:
        """Wait until a stream that authenticated with each of ``tokens`` is connected;
        TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while any(self.registry.streams_with_token(token) == 0 for token in tokens):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"not connected after {timeout:g} s")
            await self.registry.wait_for_change(left)

    # -- matches

    async def run_match(self, spec: MatchSpec, tokens: dict[str, str] | None = None,
                        absent: dict[str, Absence] | None = None) -> MatchRecord:
        """Seat the named bots (waiting up to ``seat_timeout`` for free slots), play the
        match, and return its record. Does not store it.

        With ``tokens`` each bot they name gets its seats on its stream of that one-run
        token only (the process its runner chose for this match), also when they come back
        after a drop; the caller may change the mapping while the match runs (a process
        restarted with a new token). Where :attr:`absent` is set (and ``absent``
        adds to it for this match), a bot without a connection plays its seats by the
        disconnect rule instead of failing the match."""
        config = spec.config
        if not spec.match_id:
            spec.match_id = uuid.uuid4().hex[:16]
        if spec.match_id in self.running:
            raise ValueError(f"match {spec.match_id!r} is already running")
        if self.absent is not None:
            absent = {**self.absent, **(absent or {})}
        links = await self.registry.seat_when_free(spec.bots, config, self.running.values(), self.seat_timeout,
                                                   absent, tokens)
        referee = Referee(spec, list(links), limits=self.limits,
                          next_request_id=lambda: next(self._request_ids))
        referee.tokens = tokens     # a seat that drops goes back only to a stream they allow
        for seat, link in enumerate(links):
            if link is None:
                name = spec.bots[seat]
                absence = (absent or {}).get(name) or Absence("not connected")
                referee.seat_absent(seat, f"{name} has no connection: {absence.reason}", absence.final)
                if not absence.final:
                    self.registry.wait_for_bot(referee, seat)
        self.running[spec.match_id] = referee
        try:
            record = await referee.run()   # takes the seats before its first await
            log.info("match %s %s: %s%s", spec.match_id, record.status,
                     ", ".join(f"{bot} {total} (#{place})" for bot, total, place
                               in zip(record.bots, record.totals, record.places)),
                     f"; {len(record.faults)} fault{'s' if len(record.faults) != 1 else ''}" if record.faults else "")
            return record
        finally:
            del self.running[spec.match_id]
            self.recent[spec.match_id] = referee
            while len(self.recent) > RECENT_MATCHES:
                self.recent.popitem(last=False)
            self.registry.released()

    def find_match(self, match_id: str) -> Referee | None:
        """A match still in memory: running, or among the last RECENT_MATCHES finished."""
        return self.running.get(match_id) or self.recent.get(match_id)

    async def save(self, record: MatchRecord) -> None:
        """Store a record, off the event loop; a storage error is logged, not raised."""
        if self.store is None:
            return
        try:
            await asyncio.to_thread(self.store.save_match, record)
        except Exception:
            log.exception("could not store match %s", record.match_id)


async def serve(host: str = "127.0.0.1", port: int = 50051, db_path: str = "arena.db", move_time: float = MOVE_TIME,
                time_bank: float = TIME_BANK, max_faults: int = MAX_FAULTS, grace: float = GRACE,
                ladder_variant: str | None = None, ladder_players: int = 4, ladder_rounds: int | None = None,
                admin_token: str | None = None, quiet: bool = False, tls: ServerTls | None = None) -> None:
    """``arena serve``: run the arena until SIGINT or SIGTERM, storing every finished match.

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
    ladder = None
    if ladder_variant:
        ladder = {"variant": ladder_variant, "players": ladder_players, "rounds": ladder_rounds}
    arena = ArenaServer(store=store, move_time=move_time, time_bank=time_bank, max_faults=max_faults,
                        grace=grace, admin_token=admin_token or os.environ.get("ARENA_ADMIN_TOKEN"), ladder=ladder)
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
