"""One bot's ``Play`` stream as the referees see it: a :class:`Connection`.

A connection is an outbox the referees put messages in (never blocking on a bot's
socket), written out by the call's handler (:meth:`Connection.serve`), and a reader
task that routes the bot's answers to the open requests by request id
(:meth:`Connection.route`). Messages that answer no open request draw on a flood
allowance (a burst, refilled at a steady rate); when it runs out the stream is closed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque

import grpc

from arena import __version__
from arena.referee.match import OpenRequest, Referee
from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb

log = logging.getLogger(__name__)

SERVER_VERSION = __version__  # told to every bot in its Welcome
MAX_MATCHES_PER_STREAM = 64   # Hello.max_matches is capped at this
# Flood control, per stream: every message that is not the answer to an open request
# (a stray, a late or repeated answer, Hello again) spends one of an allowance of
# STRAY_BURST messages, refilled at STRAY_RATE per second. An empty allowance closes the
# stream with RESOURCE_EXHAUSTED. Honest answers cost nothing, so no honest bot ever
# meets it; the burst leaves room for the late answers of a slow bot playing 64 matches
# at once (at most 3 timeouts a match before it forfeits).
STRAY_BURST = 256
STRAY_RATE = 32.0


class Connection:
    """One bot's ``Play`` stream, from its Welcome (the first message queued) to its end.
    Implements :class:`arena.referee.match.BotLink`."""

    def __init__(self, serial: int, name: str, hello: pb.Hello, token: str) -> None:
        self.serial = serial                  # connections are numbered in arrival order
        self.conn_id = f"{name}/{serial}"
        self.name = name
        self.token = token
        self.version = hello.version
        self.variants = sorted(set(hello.variants))
        self.capacity = min(MAX_MATCHES_PER_STREAM, max(1, hello.max_matches))
        self.events_only = hello.events_only
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
        self._allowance = float(STRAY_BURST)
        self._refilled_at = time.monotonic()
        self.send(protocol.welcome(bot_id=self.conn_id, bot_name=name, server_version=SERVER_VERSION,
                                   max_matches=self.capacity, events_only=self.events_only))

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
        if not self._spend_allowance(received_at):
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

    def _spend_allowance(self, now: float) -> bool:
        self._allowance = min(float(STRAY_BURST), self._allowance + (now - self._refilled_at) * STRAY_RATE)
        self._refilled_at = now
        if self._allowance < 1.0:
            return False
        self._allowance -= 1.0
        return True

    def end(self, code: grpc.StatusCode, details: str) -> None:
        """End the stream from the arena's side with this status (flood, revoked token)."""
        if self.ended is None:
            self.ended = (code, details)
            log.warning("ending %s: %s", self.conn_id, details)
        self.close()

    def finish(self) -> None:
        """The server is stopping: end :meth:`serve` once the queued messages are written."""
        self._finishing = True
        self._wake_outgoing()

    def close(self) -> None:
        """The bot's side of the stream ended (or the arena ends it): end :meth:`serve` too
        (messages still queued are dropped)."""
        self._closed = True
        self._wake_outgoing()

    def _wake_outgoing(self) -> None:
        waiter, self._outbox_waiter = self._outbox_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read_loop(self, context: grpc.aio.ServicerContext) -> None:
        """Route the bot's messages until its side of the stream ends, then :meth:`close`.

        Reads go on in this one task for the stream's whole life: per-decision time
        limits are timers on the requests, never a timeout on a read (grpc.aio cancels
        the whole call when a read is cancelled, so the stream would break).
        """
        try:
            while not self._closed and (message := await context.read()) is not grpc.aio.EOF:
                self.route(protocol.bot_message_from_wire(message), time.monotonic())
        except Exception:   # nobody awaits this task: say why the stream is being ended
            log.exception("reading from %s failed; ending the stream", self.conn_id)
        finally:
            self.close()

    async def serve(self, context: grpc.aio.ServicerContext) -> None:
        """Carry the stream until either side ends it: write the outbox with
        ``context.write`` while a reader task routes the bot's answers.

        Writing here costs the referee less CPU a decision than grpc draining a response
        iterator, a writer task of its own, or writing a request from the match's task
        when the stream is idle (fewer decisions a second with many matches, and no
        shorter a round trip), each run against it in ``arena bench referee``
        (docs/speed.md).
        """
        reader = asyncio.ensure_future(self.read_loop(context))
        outbox = self._outbox
        try:
            while not self._closed:        # until the bot's side ends
                if outbox:
                    await context.write(outbox.popleft())
                elif self._finishing:
                    break
                else:
                    self._outbox_waiter = asyncio.get_running_loop().create_future()
                    await self._outbox_waiter
        except Exception as error:   # the stream broke under a write: it is over either way
            log.debug("write to %s failed: %r", self.conn_id, error)
        finally:
            # Also reached when the call is cancelled, or a write fails, while we wait.
            reader.cancel()
