"""Who may call what: bot tokens, the admin token, and the Hello that admits a stream.

* :class:`AuthInterceptor` checks the ``authorization: Bearer <token>`` header before a
  call reaches the servicer: a bot token for ``Play``, the admin token for ``ListBots``
  and ``RunMatch``. Everything else is public, and held to its rate limits
  (``arena.referee.rate_limits``) as refused ``Play`` streams are.
* :class:`Tokens` says which bot a token belongs to (a one-run token of a bot this arena
  launched, else the store's) and ends the streams of rotated or removed tokens.
* :func:`admit` takes a ``Play`` stream from its token to a valid ``Hello``, or ends it
  with the status ``docs/protocol.md`` (section 2) promises; the Hello it admits has its
  text cleaned (:func:`arena.wire.protocol.bot_message_from_wire`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import grpc

from arena.referee.rate_limits import DEFAULT_LIMITS, Limiter, RateLimits, RefusalLog, peer_host
from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import VARIANTS

if TYPE_CHECKING:
    from arena.referee.seating import Roster
    from arena.store import Store

log = logging.getLogger(__name__)

SERVICE = pb.DESCRIPTOR.services_by_name["Arena"].full_name   # "wizard_arena.v1.Arena"
PLAY_METHOD = f"/{SERVICE}/Play"
ADMIN_METHODS = frozenset({f"/{SERVICE}/ListBots", f"/{SERVICE}/RunMatch"})

# Limits a client meets (documented in docs/protocol.md and the proto's comments).
MAX_NAME_LENGTH = 64          # Hello.name
MAX_VERSION_LENGTH = 128      # Hello.version
MAX_STREAMS_PER_BOT = 32      # Play streams one bot may hold open at once
# Play streams the one-run token of a bot process the arena started may hold open at
# once: one per process of an SDK bot started with --processes N (N <= 4), and as many
# again while dropped streams are not yet noticed as gone. A bot cannot open streams
# beyond what it needs to play.
MAX_STREAMS_PER_PROCESS = 8
# A rotated or removed token ends its streams within this many seconds.
TOKEN_CHECK_SECONDS = 0.5
MISSING_TOKEN = "missing or unknown bot token"


def bearer_token(metadata: Any) -> str | None:
    """The token of an ``authorization: Bearer <token>`` header, if any.

    >>> bearer_token([("authorization", "Bearer abc")]), bearer_token([("authorization", "Basic abc")])
    ('abc', None)
    """
    for key, value in metadata or ():
        if key == "authorization":
            if isinstance(value, bytes):
                value = value.decode("ascii", "replace")
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


class Tokens:
    """Which bot a token belongs to: one-run tokens of bots this arena launched, else the store's."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self.local: dict[str, str] = {}   # token -> bot name, for this server's lifetime
        self.stream_caps: dict[str, int] = {}   # token -> the most streams it may hold at once

    def add_local(self, name: str, token: str, max_streams: int | None = None) -> None:
        self.local[token] = name
        if max_streams is not None:
            self.stream_caps[token] = max_streams

    def remove_local(self, token: str) -> None:
        self.local.pop(token, None)
        self.stream_caps.pop(token, None)

    async def bot_for(self, token: str) -> str | None:
        """The bot a token belongs to, or None. Store answers are not cached, so a rotated
        token stops working at once; it is one indexed read per new stream."""
        name = self.local.get(token)
        if name is None and self.store is not None:
            name = await asyncio.to_thread(self.store.bot_for_token, token)
        return name

    async def watch(self, roster: Roster) -> None:
        """End the streams of rotated or removed tokens (``arena bot register --rotate``,
        ``arena bot remove``, run in another process) within TOKEN_CHECK_SECONDS."""
        store = self.store
        assert store is not None
        while True:
            await asyncio.sleep(TOKEN_CHECK_SECONDS)
            tokens = {conn.token for conns in roster.by_name.values() for conn in conns
                      if conn.token not in self.local}
            if not tokens:
                continue
            try:
                owners = await asyncio.to_thread(store.bots_for_tokens, tokens)
            except Exception:   # a database hiccup must not stop the watch
                log.exception("checking bot tokens failed")
                continue
            # A stream stays if its token is a local one, or still its bot's in the store,
            # or was not asked about: a bot that connected while the store was being read
            # is checked the next time round (judged by this answer it lost its stream).
            roster.revoke(lambda conn, owners=owners, asked=tokens: conn.token in self.local  # type: ignore[misc]
                          or conn.token not in asked or owners.get(conn.token) == conn.name)


async def _refuse_unary(request: Any, context: grpc.aio.ServicerContext) -> None:
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "this call needs the admin token")


TurnAway = Callable[[grpc.aio.ServicerContext, str], Awaitable[None]]


def _limited(handler: grpc.RpcMethodHandler, limiter: Limiter, turn_away: TurnAway) -> grpc.RpcMethodHandler:
    """``handler`` (a servicer method's, unary-unary or unary-stream with a coroutine
    behaviour) behind ``limiter``: a call over it is turned away before the method runs."""

    async def check(context: grpc.aio.ServicerContext) -> None:
        problem = limiter.take(context.peer())
        if problem is not None:
            await turn_away(context, problem)

    if handler.unary_unary is not None:
        unary = handler.unary_unary

        async def unary_call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await check(context)
            return await unary(request, context)

        return grpc.unary_unary_rpc_method_handler(unary_call, handler.request_deserializer,
                                                   handler.response_serializer)
    streaming = handler.unary_stream
    assert streaming is not None, "only unary-request calls are rate-limited"

    async def stream_call(request: Any, context: grpc.aio.ServicerContext) -> None:
        await check(context)
        await streaming(request, context)

    return grpc.unary_stream_rpc_method_handler(stream_call, handler.request_deserializer,
                                                handler.response_serializer)


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Refuses ``Play`` without a known bot token and organiser calls without the admin
    token, and holds the public calls and refused ``Play`` streams to their rate limits
    (``arena.referee.rate_limits``).

    This is the cheapest place for both: a ``Play`` stream with a one-run token of this
    arena goes straight through (a dict lookup; the arena's own bots are never limited);
    any other ``Play`` stream is first held to the peer's allowance of refused streams,
    so a flood of bad tokens is refused without asking the store each time. An
    interceptor sees the method and the metadata but not the peer, so the limit is
    checked by a small handler in front of the servicer's, before it does any work.

    A call over its limit gets RESOURCE_EXHAUSTED after ``limits.refusal_delay`` (1 s),
    not at once: a client that waits for each answer (a thread per call, as most do)
    then makes one call a second per thread instead of thousands, which spares both the
    referee's loop and the CPU the flooder shares with the other bots; at most
    ``limits.max_delayed`` calls wait at once, the rest are refused at once.
    A refused bidi call gets a *stream-stream* handler that aborts (a unary one would
    hang a client that waits for the server to speak first).
    """

    def __init__(self, tokens: Tokens, admin_token: str, limits: RateLimits = DEFAULT_LIMITS,
                 refusals: RefusalLog | None = None) -> None:
        self._tokens = tokens
        self._admin_token = admin_token
        self._limits = limits
        self._delayed = 0     # calls over their limit waiting for their refusal now
        self._refuse_unary = grpc.unary_unary_rpc_method_handler(_refuse_unary)
        self.refusals = refusals if refusals is not None else RefusalLog(log, limits.summary_seconds)
        self._refused_play = Limiter(limits.refused_play)
        self._limiters = {f"/{SERVICE}/ListMatches": Limiter(limits.list_matches),
                          f"/{SERVICE}/GetLeaderboard": Limiter(limits.get_leaderboard),
                          f"/{SERVICE}/Spectate": Limiter(limits.spectate)}
        self._limited: dict[str, grpc.RpcMethodHandler] = {}   # method -> its handler behind its limiter

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method = handler_call_details.method
        if method == PLAY_METHOD:
            token = bearer_token(handler_call_details.invocation_metadata)
            if token is not None and token in self._tokens.local:
                return await continuation(handler_call_details)
            return self._checked_play(token, await continuation(handler_call_details))
        if method in ADMIN_METHODS:
            token = bearer_token(handler_call_details.invocation_metadata)
            if token is None or not secrets.compare_digest(token, self._admin_token):
                return self._refuse_unary
            return await continuation(handler_call_details)
        limiter = self._limiters.get(method)
        if limiter is None:
            return await continuation(handler_call_details)
        handler = self._limited.get(method)
        if handler is None:
            handler = self._limited[method] = _limited(await continuation(handler_call_details), limiter,
                                                       self._turn_away)
        return handler

    async def _turn_away(self, context: grpc.aio.ServicerContext, problem: str) -> None:
        """Refuse a call over its rate limit with RESOURCE_EXHAUSTED, after the refusal delay."""
        if self._delayed < self._limits.max_delayed:
            self._delayed += 1
            try:
                await asyncio.sleep(self._limits.refusal_delay)
            finally:
                self._delayed -= 1
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, problem)

    def _checked_play(self, token: str | None, play: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """The ``Play`` handler for a stream whose token is not a one-run token: over the
        peer's allowance of refused streams it is refused at once (RESOURCE_EXHAUSTED);
        else its token is looked up (the store's), and an unknown one refused and counted."""
        behaviour = play.stream_stream
        assert behaviour is not None

        async def checked(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
            peer = context.peer()
            over = self._refused_play.over(peer)
            if over is not None:
                self.refusals.refused(peer_host(peer), "over the rate limit", f"RESOURCE_EXHAUSTED {over}")
                await self._turn_away(context, over)
            if token is None or await self._tokens.bot_for(token) is None:
                self._refused_play.spend(peer)
                reason = "without a token" if token is None else "with a bad token"
                self.refusals.refused(peer_host(peer), reason, f"UNAUTHENTICATED {MISSING_TOKEN}")
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, MISSING_TOKEN)
            await behaviour(request_iterator, context)

        return grpc.stream_stream_rpc_method_handler(checked, play.request_deserializer, play.response_serializer)


def hello_problem(message: pb.BotMessage, name: str) -> tuple[grpc.StatusCode, str] | None:
    """Why a stream's first message is refused (a status and a message), or None.

    The message never echoes a client's field back whole (a 100 KB name would overflow
    the status's metadata and reach the client as RESOURCE_EXHAUSTED instead).

    >>> hello_problem(pb.BotMessage(hello=pb.Hello(name="ann")), "ann") is None
    True
    >>> hello_problem(pb.BotMessage(hello=pb.Hello(variants=["poker"])), "ann")[1]
    "unknown variant 'poker' in Hello.variants; accepted: classic, extreme"
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


@dataclass(frozen=True)
class Admitted:
    """A ``Play`` stream that may join: its bot, the token it used, and its Hello."""

    name: str
    token: str
    hello: pb.Hello


async def admit(context: grpc.aio.ServicerContext, tokens: Tokens, hello_timeout: float,
                streams_of: Callable[[str], int], streams_with_token: Callable[[str], int],
                refusals: RefusalLog | None = None) -> Admitted | None:
    """Check a new ``Play`` stream's token and its first message; ``None`` if the bot
    hung up before saying Hello. A refusal ends the call (``context.abort`` raises) and
    is told to ``refusals`` (the console's summarised warnings), else logged."""
    token = bearer_token(context.invocation_metadata()) or ""
    name = await tokens.bot_for(token)
    peer = context.peer()
    if name is None:   # the interceptor lets no such call through; belt and braces
        await _refuse(context, grpc.StatusCode.UNAUTHENTICATED, MISSING_TOKEN, peer, refusals=refusals)
    try:
        # wait_for on a read breaks the stream when it fires (grpc.aio cancels the call);
        # here that is the point.
        first = await asyncio.wait_for(context.read(), hello_timeout)
    except TimeoutError:
        await _refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {hello_timeout:g} s", peer, name,
                      refusals)
    if first is grpc.aio.EOF:
        return None
    problem = hello_problem(first, name)
    if problem is not None:
        await _refuse(context, *problem, peer, name, refusals)
    if streams_of(name) >= MAX_STREAMS_PER_BOT:
        await _refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"bot {name!r} already has {MAX_STREAMS_PER_BOT} streams open", peer, name, refusals)
    cap = tokens.stream_caps.get(token)
    if cap is not None and streams_with_token(token) >= cap:
        await _refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"this bot process's token already has {cap} stream{'s' if cap != 1 else ''} open", peer, name,
                      refusals)
    # Checked as sent (the limits count what the bot wrote), kept clean from here on.
    return Admitted(name=name, token=token, hello=protocol.bot_message_from_wire(first).hello)


async def _refuse(context: grpc.aio.ServicerContext, code: grpc.StatusCode, details: str, peer: str,
                  name: str | None = None, refusals: RefusalLog | None = None) -> NoReturn:
    if refusals is not None:
        refusals.refused(f"bot {name}" if name else peer_host(peer), code.name,
                         f"{code.name} {details}" + (f" (from {peer})" if name else ""))
    else:
        log.warning("refused a Play stream from %s%s: %s %s", peer, f" (bot {name})" if name else "",
                    code.name, details)
    await context.abort(code, details)
    raise AssertionError("abort returns by raising")   # for the type checker
