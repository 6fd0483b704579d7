"""Who may call what: bot tokens, the admin token, and the Hello that admits a stream.

* :class:`AuthInterceptor` checks the ``authorization: Bearer <token>`` header before a
  call reaches the servicer: a bot token for ``Play``, the admin token for ``ListBots``
  and ``RunMatch``. Everything else is public.
* :class:`Tokens` says which bot a token belongs to (a one-run token of a bot this arena
  launched, else the store's) and ends the streams of rotated or removed tokens.
* :func:`admit` takes a ``Play`` stream from its token to a valid ``Hello``, or ends it
  with the status ``docs/protocol.md`` (section 2) promises.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import grpc

from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import VARIANTS

if TYPE_CHECKING:
    from arena.referee.seating import Registry
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

    async def watch(self, registry: Registry) -> None:
        """End the streams of rotated or removed tokens (``arena bot register --rotate``,
        ``arena bot remove``, run in another process) within TOKEN_CHECK_SECONDS."""
        store = self.store
        assert store is not None
        while True:
            await asyncio.sleep(TOKEN_CHECK_SECONDS)
            tokens = {conn.token for conns in registry.by_name.values() for conn in conns
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
            registry.revoke(lambda conn, owners=owners, asked=tokens: conn.token in self.local  # type: ignore[misc]
                            or conn.token not in asked or owners.get(conn.token) == conn.name)


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

    def __init__(self, tokens: Tokens, admin_token: str) -> None:
        self._tokens = tokens
        self._admin_token = admin_token
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
            if token is None or await self._tokens.bot_for(token) is None:
                return self._refuse_stream
        elif method in ADMIN_METHODS:
            token = bearer_token(handler_call_details.invocation_metadata)
            if token is None or not secrets.compare_digest(token, self._admin_token):
                return self._refuse_unary
        return await continuation(handler_call_details)


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
                streams_of: Callable[[str], int], streams_with_token: Callable[[str], int]) -> Admitted | None:
    """Check a new ``Play`` stream's token and its first message; ``None`` if the bot
    hung up before saying Hello. A refusal ends the call (``context.abort`` raises)."""
    token = bearer_token(context.invocation_metadata()) or ""
    name = await tokens.bot_for(token)
    peer = context.peer()
    if name is None:   # the interceptor lets no such call through; belt and braces
        await _refuse(context, grpc.StatusCode.UNAUTHENTICATED, "missing or unknown bot token", peer)
    try:
        # wait_for on a read breaks the stream when it fires (grpc.aio cancels the call);
        # here that is the point.
        first = await asyncio.wait_for(context.read(), hello_timeout)
    except TimeoutError:
        await _refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {hello_timeout:g} s", peer, name)
    if first is grpc.aio.EOF:
        return None
    problem = hello_problem(first, name)
    if problem is not None:
        await _refuse(context, *problem, peer, name)
    if streams_of(name) >= MAX_STREAMS_PER_BOT:
        await _refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"bot {name!r} already has {MAX_STREAMS_PER_BOT} streams open", peer, name)
    cap = tokens.stream_caps.get(token)
    if cap is not None and streams_with_token(token) >= cap:
        await _refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"this bot process's token already has {cap} stream{'s' if cap != 1 else ''} open", peer, name)
    return Admitted(name=name, token=token, hello=first.hello)


async def _refuse(context: grpc.aio.ServicerContext, code: grpc.StatusCode, details: str, peer: str,
                  name: str | None = None) -> NoReturn:
    log.warning("refused a Play stream from %s%s: %s %s", peer, f" (bot {name})" if name else "",
                code.name, details)
    await context.abort(code, details)
    raise AssertionError("abort returns by raising")   # for the type checker
