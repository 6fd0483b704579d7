"""The arena's gRPC server: bot connections, seating, and the public and organiser calls.

Layout, outside in:

* :class:`AuthInterceptor` checks the ``authorization: Bearer <token>`` header before a
  call reaches the servicer: a bot token for ``Play``, the admin token for ``ListBots``
  and ``RunMatch``. Everything else is public.
* :class:`ArenaServicer` is the thin gRPC servicer; each method hands over to
  :class:`ArenaServer`.
* :class:`Connection` is one ``Play`` stream: an outbox the referees put messages in
  (never blocking on a bot's socket), written out by the call's handler, and a reader
  task that routes the bot's answers to the open requests by request id.
* :class:`Registry` keeps the live connections by bot name, seats matches on them, and
  remembers the seats of dropped connections so a reconnecting bot gets them back.
* :class:`ArenaServer` is the Python API the tournament runner uses: ``start``,
  ``add_local_bot``, ``wait_connected``, ``connected_bots``, ``run_match``, ``stop``.
  :func:`serve` runs it for ``arena serve``.

The match logic itself lives in ``arena/referee/match.py``; the wire conversions in
``arena/wire/protocol.py``.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import logging
import os
import random
import secrets
import signal
import sys
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from arena import __version__
from arena.records import MatchRecord, MatchSpec
from arena.referee.match import Limits, OpenRequest, Referee
from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import VARIANTS, ConfigError, GameConfig, replay

if TYPE_CHECKING:
    from arena.results.leaderboard import LeaderboardRow
    from arena.store import Store

log = logging.getLogger(__name__)

SERVICE = "wizard_arena.v1.Arena"
PLAY_METHOD = f"/{SERVICE}/Play"
ADMIN_METHODS = frozenset({f"/{SERVICE}/ListBots", f"/{SERVICE}/RunMatch"})

SERVER_VERSION = __version__

def server_options(keepalive_ms: int = 5_000) -> list[tuple[str, Any]]:
    """The gRPC server options, chosen on purpose (see /work/shared/GRPC-NOTES.md).

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


# Limits a client meets (documented in docs/protocol.md and the proto's comments).
MAX_NAME_LENGTH = 64          # Hello.name
MAX_VERSION_LENGTH = 128      # Hello.version
MAX_MATCHES_PER_STREAM = 64   # Hello.max_matches is capped at this
MAX_STREAMS_PER_BOT = 32      # Play streams one bot may hold open at once
# Flood control, per stream: every message that is not the answer to an open request
# (a stray, a late or repeated answer, Hello again) takes one token from a bucket of
# STRAY_BURST tokens refilled at STRAY_RATE per second. An empty bucket closes the stream
# with RESOURCE_EXHAUSTED. Honest answers cost nothing, so no honest bot ever meets it;
# the burst leaves room for the late answers of a slow bot playing 64 matches at once
# (at most 3 timeouts a match before it forfeits).
STRAY_BURST = 256
STRAY_RATE = 32.0
# Spectators: at most this many per match and in all; each gets the match's public
# events in batches at most every SPECTATOR_BATCH_SECONDS, so a crowd costs the referee
# a few writes per second each; one whose stream takes more than SPECTATOR_WRITE_TIMEOUT
# to accept a batch is dropped, never waited for.
MAX_SPECTATORS_PER_MATCH = 64
MAX_SPECTATORS = 512
SPECTATOR_BATCH_SECONDS = 0.2
SPECTATOR_WRITE_TIMEOUT = 5.0
SPECTATOR_REPLAY_BATCH = 500   # events per message when a stored match is replayed
# A rotated or removed token ends its streams within this many seconds.
TOKEN_CHECK_SECONDS = 0.5
# Seats whose bot is away are remembered so a returning bot gets them back (or, once
# forfeited, hears how the match ended); the finished ones are forgotten after this
# long, and a bot never has more than ORPHANS_PER_BOT of them.
ORPHAN_KEEP_SECONDS = 600.0
ORPHANS_PER_BOT = 64
MAX_LIST_MATCHES = 500


class SeatingError(TimeoutError):
    """The named bots could not all be seated in time."""


@dataclass
class ConnectedBotInfo:
    """A connected bot as ``connected_bots()`` and ``ListBots`` report it."""

    name: str
    version: str
    variants: list[str]     # empty: both
    connections: int
    free_slots: int         # more matches it can take now, over all its connections


def hello_problem(message: pb.BotMessage, name: str) -> tuple[grpc.StatusCode, str] | None:
    """Why a stream's first message is refused (a status and a message), or None.

    The message never echoes a client's field back whole (a 100 KB name would overflow
    the status's metadata and reach the client as RESOURCE_EXHAUSTED instead).
    """
    if message.WhichOneof("msg") != "hello":
        return grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello"
    hello = message.hello
    if len(hello.name) > MAX_NAME_LENGTH:
        return (grpc.StatusCode.INVALID_ARGUMENT,
                f"Hello.name is at most {MAX_NAME_LENGTH} characters (got {len(hello.name)})")
    if len(hello.version) > MAX_VERSION_LENGTH:
        return (grpc.StatusCode.INVALID_ARGUMENT,
                f"Hello.version is at most {MAX_VERSION_LENGTH} characters (got {len(hello.version)})")
    unknown = [v for v in hello.variants if v not in VARIANTS]
    if unknown:
        return (grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown variant {protocol.clip(unknown[0])} in Hello.variants; accepted: {', '.join(VARIANTS)}")
    if hello.name and hello.name != name:
        return (grpc.StatusCode.PERMISSION_DENIED,
                f"this token belongs to bot {name!r}, not {protocol.clip(hello.name)}")
    return None


def bearer_token(metadata: Any) -> str | None:
    """The token of an ``authorization: Bearer <token>`` header, if any."""
    for key, value in metadata or ():
        if key == "authorization":
            if isinstance(value, bytes):
                value = value.decode("ascii", "replace")
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


# ---------------------------------------------------------------------- connections


class Connection:
    """One bot's ``Play`` stream. Implements :class:`arena.referee.match.BotLink`."""

    def __init__(self, serial: int, name: str, hello: pb.Hello, token: str) -> None:
        self.serial = serial                  # connections are numbered in arrival order
        self.conn_id = f"{name}/{serial}"
        self.name = name
        self.token = token
        self.version = hello.version
        self.variants = sorted(set(hello.variants))
        self.capacity = min(MAX_MATCHES_PER_STREAM, max(1, hello.max_matches))
        self.alive = True
        # The outbox: a deque and one waiter future, cheaper than an asyncio.Queue on
        # the hot path (one message out per decision).
        self._outbox: deque[pb.ArenaMessage] = deque()
        self._outbox_waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._finishing = False       # see finish()
        # Why the arena ended the stream (a status for the bot), or None.
        self.ended: tuple[grpc.StatusCode, str] | None = None
        self.seats: set[tuple[Referee, int]] = set()
        self._open: dict[int, OpenRequest] = {}
        # Request ids grow across the whole arena, so every id this stream was ever sent
        # is at most this: an answer naming one of those that is no longer open is late
        # or repeated, whatever the delay, without remembering each id.
        self._highest_sent = 0
        self._tokens = float(STRAY_BURST)
        self._refilled_at = time.monotonic()

    # -- BotLink

    def send(self, message: pb.ArenaMessage) -> None:
        if self.alive:
            self._outbox.append(message)
            self._wake_outgoing()

    def open_request(self, request: OpenRequest) -> None:
        self._open[request.request_id] = request
        if request.request_id > self._highest_sent:
            self._highest_sent = request.request_id

    def close_request(self, request: OpenRequest) -> None:
        self._open.pop(request.request_id, None)

    def join(self, referee: Referee, seat: int) -> None:
        self.seats.add((referee, seat))

    def leave(self, referee: Referee, seat: int) -> None:
        self.seats.discard((referee, seat))

    # -- capacity

    def matches(self) -> set[Referee]:
        return {referee for referee, _ in self.seats}

    def free_slots(self) -> int:
        return max(0, self.capacity - len(self.matches()))

    def plays(self, variant: str) -> bool:
        return not self.variants or variant in self.variants

    # -- the stream

    def route(self, message: pb.BotMessage, received_at: float) -> None:
        """Hand a message from the bot to whoever expects it (docs/protocol.md, section 5).

        * An ``Action`` naming an open request of this stream is that request's answer.
        * An ``Action`` naming any other id this stream could have been sent (a late
          answer after a timeout, a second answer, an answer after its match ended) is
          ignored: never applied, never charged to a seat, whatever the delay.
        * Anything else (``Hello`` again, an empty message, an id above every id sent
          here, or 0) is a stray: it is taken as the answer to the oldest open request,
          whose referee records it as ``unexpected`` and plays the fallback; with no
          open request it is charged to no seat and answered with a seat-less ``Fault``.

        Everything but an answer to an open request draws on the stream's flood
        allowance; when it runs out the stream is closed.
        """
        is_action = message.WhichOneof("msg") == "action"
        if is_action:
            request = self._open.get(message.action.request_id)
            if request is not None and request.deliver(message, received_at):
                return
        if not self._take_token(received_at):
            self.end(grpc.StatusCode.RESOURCE_EXHAUSTED,
                     f"flood: more than {STRAY_BURST} messages that answered no open request "
                     f"(at most {STRAY_RATE:g} a second after that); the stream is closed")
            return
        if is_action and 0 < message.action.request_id <= self._highest_sent:
            return   # late or repeated
        oldest = next(iter(self._open.values()), None)
        if oldest is not None and oldest.deliver(message, received_at):
            return
        self.send(protocol.fault(match_id="", request_id=None, kind="unexpected",
                                 message="a message that answers no open request (charged to no seat)",
                                 faults=0, forfeited=False))

    def _take_token(self, now: float) -> bool:
        self._tokens = min(float(STRAY_BURST), self._tokens + (now - self._refilled_at) * STRAY_RATE)
        self._refilled_at = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def end(self, code: grpc.StatusCode, details: str) -> None:
        """End the stream from the arena's side with this status (flood, revoked token)."""
        if self.ended is None:
            self.ended = (code, details)
            log.warning("ending %s: %s", self.conn_id, details)
        self.close()

    async def outgoing(self) -> AsyncIterator[pb.ArenaMessage]:
        """The outbox as a stream of messages to write, until :meth:`close` (pending ones are dropped)."""
        outbox = self._outbox
        while not self._closed:
            if outbox:
                yield outbox.popleft()
            elif self._finishing:
                return
            else:
                self._outbox_waiter = asyncio.get_running_loop().create_future()
                await self._outbox_waiter

    def finish(self) -> None:
        """The server is stopping: end :meth:`outgoing` once the queued messages are written."""
        self._finishing = True
        self._wake_outgoing()

    def close(self) -> None:
        """The bot's side of the stream ended (or the arena ends it): end :meth:`outgoing` too."""
        self._closed = True
        self._wake_outgoing()

    def _wake_outgoing(self) -> None:
        waiter, self._outbox_waiter = self._outbox_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read_loop(self, context: grpc.aio.ServicerContext) -> None:
        """Route the bot's messages until its side of the stream ends, then :meth:`close`.

        Reads go on in this one task for the stream's whole life: per-decision time
        limits are timers on the requests, never a timeout on a read (which would break
        the stream, see GRPC-NOTES).
        """
        try:
            while not self._closed and (message := await context.read()) is not grpc.aio.EOF:
                self.route(message, time.monotonic())
        except Exception:   # nobody awaits this task: say why the stream is being ended
            log.exception("reading from %s failed; ending the stream", self.conn_id)
        finally:
            self.close()


def _newest_first(conns: Iterable[Connection]) -> list[Connection]:
    return sorted(conns, key=lambda c: -c.serial)


def _recent_orphans(orphans: list[tuple[Referee, int]]) -> list[tuple[Referee, int]]:
    """The orphaned seats worth keeping: running matches, and matches that ended less
    than ORPHAN_KEEP_SECONDS ago, newest last, at most ORPHANS_PER_BOT."""
    now = time.monotonic()
    kept = [(r, s) for r, s in orphans
            if r.finished_at is None or now - r.finished_at < ORPHAN_KEEP_SECONDS]
    return kept[-ORPHANS_PER_BOT:]


class Registry:
    """The live connections by bot name, and the seats waiting for their bot to come back."""

    def __init__(self) -> None:
        self.by_name: dict[str, list[Connection]] = {}
        self._orphans: dict[str, list[tuple[Referee, int]]] = {}
        self._ids = itertools.count(1)
        self._changed: asyncio.Event | None = None

    def connect(self, name: str, hello: pb.Hello, token: str) -> Connection:
        """Register a new stream: Welcome it, and give it back seats its bot lost (and
        the endings of matches it forfeited while away)."""
        conn = Connection(next(self._ids), name, hello, token)
        conn.send(protocol.welcome(bot_id=conn.conn_id, bot_name=name, server_version=SERVER_VERSION,
                                   max_matches=conn.capacity))
        self.by_name.setdefault(name, []).append(conn)
        self._hand_back(name, self._orphans.pop(name, []), [conn])
        self._notify()
        return conn

    def _hand_back(self, name: str, orphans: list[tuple[Referee, int]], streams: list[Connection]) -> None:
        """Give the bot's orphaned seats to the first of ``streams`` that plays the match's
        variant and has a free slot (a stream never gets more than its ``max_matches``);
        a seat no stream can take keeps waiting (and forfeits when its grace is over).
        The ending of a finished match (MatchStarted, then MatchEnded) needs no slot."""
        waiting = []
        for referee, seat in orphans:
            taker = next((c for c in streams if c.plays(referee.variant)
                          and (referee.finished or c.free_slots() > 0)), None)
            if taker is None:
                waiting.append((referee, seat))
            else:
                referee.seat_reconnected(seat, taker)
        if waiting:
            self._orphans[name] = _recent_orphans(waiting)

    def streams_of(self, name: str) -> int:
        return len(self.by_name.get(name, []))

    def disconnect(self, conn: Connection) -> None:
        """The stream is gone: its seats wait for the bot to reconnect.

        If the bot already opened a newer stream (it came back before we noticed the old
        one was dead), that stream takes the seats at once.
        """
        if not conn.alive:
            return
        conn.alive = False
        conns = self.by_name.get(conn.name, [])
        if conn in conns:
            conns.remove(conn)
        if not conns:
            self.by_name.pop(conn.name, None)
        orphans = self._orphans.pop(conn.name, [])
        why = f"the arena closed the stream: {conn.ended[1]}" if conn.ended else "the connection was lost"
        for referee, seat in sorted(conn.seats, key=lambda rs: (rs[0].match_id, rs[1])):
            if referee.seat_disconnected(seat, conn, why, closed_by_arena=conn.ended is not None):
                orphans.append((referee, seat))
        conn.seats.clear()
        # A newer stream of the bot (it came back before we noticed) takes them at once.
        self._hand_back(conn.name, orphans, _newest_first(c for c in conns if c.serial > conn.serial))
        self._notify()

    def revoke(self, still_valid: Callable[[Connection], bool]) -> None:
        """End every stream whose token is no longer its bot's (rotated or removed)."""
        for conns in list(self.by_name.values()):
            for conn in conns:
                if conn.alive and not still_valid(conn):
                    conn.end(grpc.StatusCode.UNAUTHENTICATED, "this bot's token was rotated or removed")

    def released(self) -> None:
        """A match ended: slots are free again, also for seats waiting for one."""
        for name in [n for n in self._orphans if n in self.by_name]:
            self._hand_back(name, self._orphans.pop(name), _newest_first(self.by_name[name]))
        self._notify()

    def seat(self, bots: list[str], variant: str) -> list[Connection] | None:
        """Connections for each seat, or None if some bot has no usable connection now.

        Each seat gets a connection of its bot with a free slot, preferring one not yet
        used in this match; when the same bot fills several seats and has no other free
        connection, one connection holds several seats (they share its slot).
        """
        chosen: list[Connection] = []
        for name in bots:
            conns = [c for c in self.by_name.get(name, []) if c.alive and c.plays(variant)]
            fresh = [c for c in conns if c not in chosen and c.free_slots() > 0]
            if fresh:
                chosen.append(max(fresh, key=Connection.free_slots))
                continue
            reused = [c for c in conns if c in chosen]
            if not reused:
                return None
            chosen.append(reused[0])
        return chosen

    def missing(self, bots: list[str], variant: str) -> list[str]:
        """Bots with no free connection for ``variant`` now (for error messages)."""
        return sorted({name for name in bots
                       if not any(c.plays(variant) and c.free_slots() > 0 for c in self.by_name.get(name, []))})

    def info(self) -> dict[str, ConnectedBotInfo]:
        out: dict[str, ConnectedBotInfo] = {}
        for name, conns in self.by_name.items():
            variants = sorted({v for c in conns for v in c.variants}) if all(c.variants for c in conns) else []
            out[name] = ConnectedBotInfo(name=name, version=conns[-1].version, variants=variants,
                                         connections=len(conns), free_slots=sum(c.free_slots() for c in conns))
        return out

    async def wait_for_change(self, timeout: float) -> None:
        """Return after the next connect, disconnect or released match, or after ``timeout``."""
        if self._changed is None:
            self._changed = asyncio.Event()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None


# ---------------------------------------------------------------------- auth


async def _refuse_stream(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
    log.warning("refused a Play stream from %s: missing or unknown bot token", context.peer())
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or unknown bot token")


async def _refuse_unary(request: Any, context: grpc.aio.ServicerContext) -> None:
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "this call needs the admin token")


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Refuses ``Play`` without a known bot token and organiser calls without the admin token.

    A refused bidi call gets a *stream-stream* handler that aborts (a unary one would
    hang a client that waits for the server to speak first).
    """

    def __init__(self, arena: ArenaServer) -> None:
        self._arena = arena
        self._refuse_stream = grpc.stream_stream_rpc_method_handler(_refuse_stream)
        self._refuse_unary = grpc.unary_unary_rpc_method_handler(_refuse_unary)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method = handler_call_details.method
        if method == PLAY_METHOD:
            token = bearer_token(handler_call_details.invocation_metadata)
            if token is None or await self._arena.bot_for_token(token) is None:
                return self._refuse_stream
        elif method in ADMIN_METHODS:
            token = bearer_token(handler_call_details.invocation_metadata)
            if token is None or not secrets.compare_digest(token, self._arena.admin_token):
                return self._refuse_unary
        return await continuation(handler_call_details)


# ---------------------------------------------------------------------- the servicer


class ArenaServicer(pb_grpc.ArenaServicer):
    """The gRPC face of :class:`ArenaServer`; see ``proto/wizard_arena/v1/arena.proto``."""

    def __init__(self, arena: ArenaServer) -> None:
        self._arena = arena

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        await self._arena.play(context)

    async def Spectate(self, request: pb.SpectateRequest, context: grpc.aio.ServicerContext) -> None:
        # Written with context.write (not yielded) so that a spectator that stops reading
        # can be dropped after a timeout instead of holding its batch forever.
        try:
            async for batch in self._arena.spectate(request.match_id):
                update = pb.SpectatorUpdate(match_id=request.match_id, events_json=batch)
                try:
                    await asyncio.wait_for(context.write(update), SPECTATOR_WRITE_TIMEOUT)
                except TimeoutError:
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                        f"spectator too slow: a batch waited over {SPECTATOR_WRITE_TIMEOUT:g} s")
        except LookupError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {protocol.clip(request.match_id)}")
        except OverflowError as error:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))

    async def ListMatches(self, request: pb.ListMatchesRequest,
                          context: grpc.aio.ServicerContext) -> pb.ListMatchesResponse:
        if request.variant and request.variant not in VARIANTS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"unknown variant {protocol.clip(request.variant)}; accepted: {', '.join(VARIANTS)}")
        matches = await self._arena.list_matches(request.variant, min(request.limit or 50, MAX_LIST_MATCHES))
        return pb.ListMatchesResponse(matches=matches)

    async def GetLeaderboard(self, request: pb.LeaderboardRequest,
                             context: grpc.aio.ServicerContext) -> pb.LeaderboardResponse:
        if self._arena.store is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "this arena has no database")
        variant = request.variant or "classic"
        if variant not in VARIANTS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"unknown variant {protocol.clip(variant)}; accepted: {', '.join(VARIANTS)}")
        rows = await self._arena.leaderboard(variant, request.min_games)
        return pb.LeaderboardResponse(rows=rows)

    async def ListBots(self, request: pb.ListBotsRequest, context: grpc.aio.ServicerContext) -> pb.ListBotsResponse:
        return pb.ListBotsResponse(bots=[
            pb.ConnectedBot(name=b.name, version=b.version, variants=b.variants, free_slots=b.free_slots,
                            connections=b.connections)
            for b in self._arena.connected_bots().values()
        ])

    async def RunMatch(self, request: pb.RunMatchRequest, context: grpc.aio.ServicerContext) -> pb.RunMatchResponse:
        try:
            spec = spec_from_request(request)
            record = await self._arena.run_match(spec)
        except (ConfigError, ValueError) as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except SeatingError as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        await self._arena.save(record)
        return pb.RunMatchResponse(record_json=json.dumps(record.to_json(), separators=(",", ":")))


def spec_from_request(request: pb.RunMatchRequest) -> MatchSpec:
    """The :class:`MatchSpec` a ``RunMatchRequest`` asks for (0 limits mean the server default)."""
    config = json.loads(request.config_json) if request.config_json else {}
    if not isinstance(config, dict):
        raise ValueError("config_json must be a JSON object (an engine GameConfig)")
    return MatchSpec(
        config=config,
        bots=list(request.bots),
        match_id=request.match_id,
        bot_seeds=list(request.bot_seeds) or None,
        move_time=request.move_time_ms / 1000 if request.move_time_ms else None,
        time_bank=request.time_bank_ms / 1000 if request.time_bank_ms else None,
        max_faults=request.max_faults or None,
        tournament_id=request.tournament_id or None,
        game_index=request.game_index if request.game_index >= 0 else None,
    )


# ---------------------------------------------------------------------- the arena


class ArenaServer:
    """The arena as a Python object: a gRPC server plus the matches running on it.

    Bots authenticate with a token from the store (``arena bot register``) or a one-run
    token given to :meth:`add_local_bot`. ``run_match`` does not store the record; the
    ``RunMatch`` call and the ladder do (when there is a store).
    """

    def __init__(self, *, store: Store | None = None, move_time: float = 1.0, time_bank: float = 10.0,
                 max_faults: int = 3, grace: float = 5.0, admin_token: str | None = None,
                 ladder: dict | None = None) -> None:
        self.store = store
        self.limits = Limits(move_time=move_time, time_bank=time_bank, max_faults=max_faults, grace=grace)
        self.admin_token = admin_token or secrets.token_urlsafe(24)
        self.ladder = ladder
        self.seat_timeout = 10.0          # how long run_match waits for busy or absent bots
        self.hello_timeout = 10.0         # a stream that never says Hello is closed after this
        self.keepalive_ms = 5_000         # ping interval and ack timeout (read by start())
        self.registry = Registry()
        self.spectators = 0
        self.running: dict[str, Referee] = {}
        self.recent: OrderedDict[str, Referee] = OrderedDict()   # finished, newest last
        self._tokens: dict[str, str] = {}        # token -> bot name (local ones and cached store hits)
        self._request_ids = itertools.count(1)
        self.port = 0                     # the bound port once started
        self._server: grpc.aio.Server | None = None
        self._health: health_aio.HealthServicer | None = None
        self._background: set[asyncio.Task[Any]] = set()

    # -- lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Start listening; returns the bound port (``port=0`` picks a free one)."""
        server = grpc.aio.server(interceptors=[AuthInterceptor(self)], options=server_options(self.keepalive_ms))
        pb_grpc.add_ArenaServicer_to_server(ArenaServicer(self), server)
        health = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health, server)
        reflection.enable_server_reflection(
            [SERVICE, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME], server)
        try:
            bound = server.add_insecure_port(f"{host}:{port}")
        except RuntimeError:   # grpc's way of saying the bind failed
            bound = 0
        if bound == 0:
            await server.stop(None)
            raise OSError(f"cannot listen on {host}:{port} (is the port taken?)")
        await server.start()
        await health.set("", health_pb2.HealthCheckResponse.SERVING)
        await health.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
        self._server, self._health = server, health
        self.port = bound
        if self.ladder:
            self._spawn(self._ladder_loop(**self.ladder))
        if self.store is not None:
            self._spawn(self._watch_tokens())
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

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- bots

    def add_local_bot(self, name: str, token: str) -> None:
        """Accept ``token`` for bot ``name`` for this server's lifetime (not stored)."""
        self._tokens[token] = name

    async def bot_for_token(self, token: str) -> str | None:
        """The bot a token belongs to, or None: a one-run token of a bot this arena launched,
        else the store's. Store answers are not cached, so a rotated token stops working at
        once; it is one indexed read per new stream."""
        name = self._tokens.get(token)
        if name is None and self.store is not None:
            name = await asyncio.to_thread(self.store.bot_for_token, token)
        return name

    async def _watch_tokens(self) -> None:
        """End the streams of rotated or removed tokens (``arena bot register --rotate``,
        ``arena bot remove``, run in another process) within TOKEN_CHECK_SECONDS."""
        store = self.store
        assert store is not None
        while True:
            await asyncio.sleep(TOKEN_CHECK_SECONDS)
            tokens = {conn.token for conns in self.registry.by_name.values() for conn in conns
                      if conn.token not in self._tokens}
            if not tokens:
                continue
            try:
                owners = await asyncio.to_thread(store.bots_for_tokens, tokens)
            except Exception:   # a database hiccup must not stop the watch
                log.exception("checking bot tokens failed")
                continue
            self.registry.revoke(lambda conn: conn.token in self._tokens or owners.get(conn.token) == conn.name)

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

    async def play(self, context: grpc.aio.ServicerContext) -> None:
        """One bot's Play stream, from Hello to disconnect.

        The handler writes the outbox with ``context.write``; a reader task routes the
        answers. Measured back to back with 32 matches, this costs less referee CPU per
        decision than grpc draining a response iterator, or a separate writer task.
        """
        token = bearer_token(context.invocation_metadata()) or ""
        name = await self.bot_for_token(token)
        peer = context.peer()
        if name is None:   # the interceptor lets no such call through; belt and braces
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, "missing or unknown bot token", peer)
        try:
            # wait_for breaks the stream when it fires (GRPC-NOTES); here that is the point.
            first = await asyncio.wait_for(context.read(), self.hello_timeout)
        except TimeoutError:
            await self._refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED,
                               f"no Hello within {self.hello_timeout:g} s", peer, name)
        if first is grpc.aio.EOF:
            return
        problem = hello_problem(first, name)
        if problem is not None:
            await self._refuse(context, *problem, peer, name)
        if self.registry.streams_of(name) >= MAX_STREAMS_PER_BOT:
            await self._refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                               f"bot {name!r} already has {MAX_STREAMS_PER_BOT} streams open", peer, name)
        conn = self.registry.connect(name, first.hello, token)
        log.info("bot %s connected from %s (%s, version %s, %d slots)", name, peer, conn.conn_id,
                 protocol.clip(conn.version), conn.capacity)
        reader = asyncio.ensure_future(conn.read_loop(context))
        try:
            async for message in conn.outgoing():   # ends when the bot's side ends
                await context.write(message)
        except Exception as error:   # the stream broke under a write: it is over either way
            log.debug("write to %s failed: %r", conn.conn_id, error)
        finally:
            # Also reached when the call is cancelled, or a write fails, while we wait.
            reader.cancel()
            self.registry.disconnect(conn)
            log.info("bot %s disconnected (%s)", name, conn.conn_id)
        if conn.ended is not None:
            await context.abort(*conn.ended)

    @staticmethod
    async def _refuse(context: grpc.aio.ServicerContext, code: grpc.StatusCode, details: str, peer: str,
                      name: str | None = None) -> NoReturn:
        log.warning("refused a Play stream from %s%s: %s %s", peer, f" (bot {name})" if name else "",
                    code.name, details)
        await context.abort(code, details)
        raise AssertionError("abort returns by raising")   # for the type checker

    # -- matches

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        """Seat the named bots (waiting up to ``seat_timeout`` for free slots), play the
        match, and return its record. Does not store it."""
        config = GameConfig.from_dict(spec.config).validate()
        if len(spec.bots) != config.players:
            raise ValueError(f"the config is for {config.players} players but {len(spec.bots)} bots were named")
        if not spec.match_id:
            spec.match_id = uuid.uuid4().hex[:16]
        if spec.match_id in self.running:
            raise ValueError(f"match {spec.match_id!r} is already running")
        deadline = time.monotonic() + self.seat_timeout
        while (clash := self._same_deal(config, spec.bots)) or \
                (links := self.registry.seat(spec.bots, config.variant)) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                if clash:
                    raise SeatingError(f"{clash} within {self.seat_timeout:g} s")
                missing = self.registry.missing(spec.bots, config.variant)
                raise SeatingError(f"cannot seat {', '.join(missing)} for a {config.variant} match "
                                   f"within {self.seat_timeout:g} s (not connected, busy, or not playing it)")
            await self.registry.wait_for_change(left)
        referee = Referee(spec, list(links), limits=self.limits,
                          next_request_id=lambda: next(self._request_ids))
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
            while len(self.recent) > 200:
                self.recent.popitem(last=False)
            self.registry.released()

    def _same_deal(self, config: GameConfig, bots: list[str]) -> str:
        """Why the match must wait: one of its bots is playing the same deal right now in
        another match (a duplicate rotation), where it would hold another seat's cards.
        Empty when it may start."""
        for referee in self.running.values():
            if referee.config.seed == config.seed and referee.config.variant == config.variant:
                shared = sorted(set(bots) & set(referee.spec.bots))
                if shared:
                    return (f"{', '.join(shared)} cannot play the same deal twice at once "
                            f"(match {referee.match_id} is still running)")
        return ""

    async def save(self, record: MatchRecord) -> None:
        """Store a record, off the event loop; a storage error is logged, not raised."""
        if self.store is None:
            return
        try:
            await asyncio.to_thread(self.store.save_match, record)
        except Exception:
            log.exception("could not store match %s", record.match_id)

    async def spectate(self, match_id: str) -> AsyncIterator[list[str]]:
        """The public events of a match as JSON, in batches, from its start; live while it runs.

        The spectator reads the match's public log at its own pace (a cursor, no queue):
        the referee never waits for it, and a crowd costs one write per spectator per
        batch (at most every ``SPECTATOR_BATCH_SECONDS``). A match no longer in memory is
        replayed from the store. Raises ``LookupError`` for an unknown match and
        ``OverflowError`` when the match or the arena has all the spectators it takes.
        """
        referee = self.running.get(match_id) or self.recent.get(match_id)
        if referee is None:
            events = await self._stored_public_events(match_id)
            for start in range(0, len(events), SPECTATOR_REPLAY_BATCH):
                yield [protocol.dumps(event) for event in events[start:start + SPECTATOR_REPLAY_BATCH]]
            return
        if referee.spectators >= MAX_SPECTATORS_PER_MATCH or self.spectators >= MAX_SPECTATORS:
            raise OverflowError(f"match {match_id} already has {referee.spectators} spectators "
                                f"(at most {MAX_SPECTATORS_PER_MATCH} a match, {MAX_SPECTATORS} in all)")
        referee.spectators += 1
        self.spectators += 1
        try:
            cursor = 0
            while True:
                events, cursor = referee.public_json(cursor)
                if events:
                    yield events
                if referee.finished:
                    events, cursor = referee.public_json(cursor)
                    if events:
                        yield events
                    return
                await referee.wait_for_change()
                await asyncio.sleep(SPECTATOR_BATCH_SECONDS)   # gather a batch
        finally:
            referee.spectators -= 1
            self.spectators -= 1

    async def _stored_public_events(self, match_id: str) -> list[Any]:
        if self.store is None:
            raise LookupError(match_id)
        store = self.store

        def load() -> list[Any]:
            from arena.store import StoreError

            try:
                record = store.load_match(match_id)
            except StoreError:
                raise LookupError(match_id) from None
            return replay(GameConfig.from_dict(record.config), record.actions).events_for(None, 0)[0]

        return await asyncio.to_thread(load)

    async def list_matches(self, variant: str, limit: int) -> list[pb.MatchSummary]:
        """Running matches first, then finished ones (from the store, or from memory)."""
        out: list[pb.MatchSummary] = []
        for referee in list(self.running.values()):
            if not variant or referee.variant == variant:
                out.append(pb.MatchSummary(match_id=referee.match_id, variant=referee.variant, status="running",
                                           bot_names=referee.spec.bots, totals=referee.running_totals()))
        # Store summaries and in-memory records share the attributes used here.
        finished: list[Any]
        if self.store is not None:
            finished = await asyncio.to_thread(self.store.list_matches, variant=variant or None, limit=limit)
        else:
            finished = [r.record for r in reversed(self.recent.values())
                        if r.record is not None and (not variant or r.variant == variant)]
        for record in finished:
            status = "finished" if record.status == "completed" else record.status
            out.append(pb.MatchSummary(match_id=record.match_id, variant=record.variant, status=status,
                                       bot_names=record.bots, totals=record.totals, places=record.places))
        return out[:limit]

    async def leaderboard(self, variant: str, min_games: int) -> list[pb.LeaderboardRow]:
        from arena.results.leaderboard import leaderboard

        rows = await asyncio.to_thread(leaderboard, self.store, variant, min_games=min_games)
        return [leaderboard_row(row, variant) for row in rows]

    # -- ladder

    async def _ladder_loop(self, variant: str = "classic", players: int = 4, rounds: int | None = None,
                           interval: float = 1.0) -> None:
        """Keep seating idle connected bots that play ``variant`` into matches."""
        rng = random.Random()
        while True:
            idle = sorted(name for name, conns in self.registry.by_name.items()
                          if any(c.plays(variant) and c.free_slots() > 0 for c in conns))
            if len(idle) >= players:
                bots = rng.sample(idle, players)
                # Deal seeds are secrets: unguessable, never derived from anything a bot sees.
                config = {"variant": variant, "players": players, "seed": secrets.randbits(63)}
                if rounds is not None:
                    config["rounds"] = rounds
                self._spawn(self._ladder_match(MatchSpec(config=config, bots=bots)))
                await asyncio.sleep(0)   # let the match take its seats before looking again
                continue
            await self.registry.wait_for_change(interval)

    async def _ladder_match(self, spec: MatchSpec) -> None:
        try:
            record = await self.run_match(spec)
        except SeatingError as error:
            log.info("ladder: %s", error)
            return
        await self.save(record)


def leaderboard_row(row: LeaderboardRow, variant: str) -> pb.LeaderboardRow:
    """The wire form of a row of ``arena.results.leaderboard.leaderboard``."""
    return pb.LeaderboardRow(
        rank=row.rank, bot=row.bot, rating=row.rating, interval=row.interval,
        elo=row.elo if row.elo is not None else 0.0, games=row.games, average_score=row.avg_score,
        average_place=row.avg_place, exact_bid_rate=row.exact_bid_rate or 0.0, faults=row.faults,
        think_p50_ms=row.think_p50_ms or 0.0, think_p99_ms=row.think_p99_ms or 0.0, timeouts=row.timeouts,
        lower_score_is_better=variant == "extreme",
    )


async def serve(host: str = "127.0.0.1", port: int = 50051, db_path: str = "arena.db", move_time: float = 1.0,
                time_bank: float = 10.0, max_faults: int = 3, grace: float = 5.0,
                ladder_variant: str | None = None, ladder_players: int = 4, ladder_rounds: int | None = None,
                admin_token: str | None = None, quiet: bool = False) -> None:
    """``arena serve``: run the arena until SIGINT or SIGTERM, storing every finished match.

    The admin token is ``admin_token``, else ``$ARENA_ADMIN_TOKEN``, else a fresh random
    one; it is printed once at startup together with the bound address. Connections,
    finished matches and faults are logged on stderr (only warnings with ``quiet``).
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
    bound = await arena.start(host, port)
    tune_gc()
    print(f"arena listening on {host}:{bound}", flush=True)
    print(f"admin token: {arena.admin_token}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await arena.stop(grace=2.0)
