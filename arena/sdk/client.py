"""The reconnecting client: :class:`BotClient` plays one bot on one arena connection at a
time, and connects again when it drops.

One connection is a *session* (:meth:`BotClient._session`): Hello, then the arena's
messages read as they come, each request queued on its match's lane
(``arena.sdk.matches``) and each answer sent by the connection's one writer task. Between
sessions the retry policy (``arena.sdk.retry``) decides whether to try again and when;
a refusal, a failed TLS handshake (``arena.sdk.tls``), the arena ending the stream with
status OK, or the launcher gone (``arena.sdk.processes``) end the run instead. What goes
back for a request is ``arena.sdk.answers``. The exit codes are the package docstring's.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena.sdk.addresses import arena_target
from arena.sdk.answers import fallback_after, read_request, reply
from arena.sdk.bot import DECISION_KINDS, Bot, FaultInfo, MatchInfo, MatchResult, _is_async, ask, ask_async
from arena.sdk.matches import LANE_GRACE, _Job, _Lane, _mix_seed, _Outbox, _Outcome, _Seat, _Thinker
from arena.sdk.processes import launcher_gone
from arena.sdk.retry import (
    _ASK_AGAIN,
    _REFUSAL_HINTS,
    CONNECT_TIMEOUT,
    FATAL_CODES,
    RETRY_FOR,
    RETRY_MAX_DELAY,
    _Outage,
    _SessionEnd,
)
from arena.sdk.tls import _PLAINTEXT_CLOSED_HINT, Tls, closed_before_answering, plaintext_to_tls, tls_failure
from arena.wire import json_codec, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2, arena_pb2_grpc

log = logging.getLogger("arena.sdk")   # the SDK's one logger, whichever module logs

# The arena may send up to 32 MiB (arena/referee/server.py); a bot's answers are tiny.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024

# Keepalive: the arena refuses pings more often than every 5-10 s when no data flows
# (it answers with GOAWAY "too_many_pings"), so ping every 20 s. Pings continue while
# idle (max_pings_without_data 0) so that a vanished arena is noticed while the bot
# waits between matches; ping_timeout makes that take seconds, not a minute.
CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    # Reconnection pacing is ours (see BotClient); keep grpc's own retries out of it.
    ("grpc.enable_retries", 0),
)


@dataclass
class BotClient:
    """Plays one bot on one arena connection, reconnecting when it drops.

    ``bot`` is a :class:`Bot` subclass (one instance per seat, each match answered on
    its own lane, beside the others) or an instance (shared by every seat, so one lane
    answers them all, in turn). Use :func:`run` for the command line; use this class
    directly to embed a bot in another program (``await client.run()``,
    ``client.stop()``). ``tls`` connects with TLS (``Tls.from_files(ca="ca.pem")``).
    """

    bot: type[Bot] | Bot
    arena: str
    token: str
    name: str | None = None
    version: str | None = None
    max_matches: int = 1
    seed: int | None = None
    give_up_after: float = RETRY_FOR   # seconds without a connection before exiting (--retry-for)
    channel_options: tuple[tuple[str, Any], ...] = CHANNEL_OPTIONS
    tls: Tls | None = None             # None: plaintext; ignored for a unix: address (the socket is local)
    seats: dict[tuple[str, int], _Seat] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # HOST alone means the arena's default port; unix:/PATH stays as it is
        # (ValueError for a non-address).
        self.arena = arena_target(self.arena)
        # TLS over TCP only: a Unix socket is local, and the arena serves it in plaintext
        # (a confined bot's environment may still carry an organiser's ARENA_TLS_CA).
        self._tls = None if self.arena.startswith("unix:") else self.tls
        if self.tls is not None and self._tls is None:
            log.debug("%s: %s is a Unix socket: connecting without TLS", self.name or self.bot.name, self.arena)
        self._credentials = self._tls.credentials() if self._tls is not None else None
        # The token says which bot this is: Hello names one only when it was given
        # (--name, $ARENA_BOT_NAME), and then it must be the token's. The class's name
        # is for logs until the Welcome tells the registered one.
        self._hello_name = self.name or ""
        # name/version/variants are class attributes: readable on a class or an instance.
        self.name = self.name or self.bot.name
        self.version = self.version or self.bot.version
        self._stopping = False
        self._session_task: asyncio.Task | None = None
        self._call: grpc.aio.StreamStreamCall | None = None     # the current connection's
        self._wake: asyncio.Event | None = None
        # Set while there is no connection: read by _session to say how long it took.
        self._outage: _Outage | None = None
        # Jitter for reconnect delays: never drawn from a bot's seeded rng.
        self._jitter = random.Random()
        # The lanes answering the matches: by match id, or one (key None) for a shared bot
        # instance, whose seats would otherwise race on its rng and match attributes.
        self._lanes: dict[str | None, _Lane] = {}
        # SystemExit (or KeyboardInterrupt) raised by the bot's own code on a lane: it ends
        # the bot, as it would have without threads; run() raises it again.
        self._exit: BaseException | None = None

    # -- lifecycle

    def stop(self) -> None:
        """Leave: end the current connection and do not reconnect."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._session_task is not None:
            self._session_task.cancel()
        # Also end the call itself: on Python 3.11 a task cancel that lands just as
        # asyncio.wait_for's inner read finishes (the Welcome) is swallowed, and the
        # session would read on.
        if self._call is not None:
            self._call.cancel()

    async def run(self) -> int:
        """Connect and play until stopped, refused or unable to reconnect; return an exit code.

        One connection at a time (a :meth:`_session`); between them the retry policy of
        the package docstring, logged once per outage rather than once per attempt.
        """
        try:
            return await self._connect_until_done()
        finally:
            await self._close_lanes(LANE_GRACE)
            if self._exit is not None:
                raise self._exit

    async def _connect_until_done(self) -> int:
        """:meth:`run`'s loop: one connection after another, until there is a reason to stop."""
        self._wake = asyncio.Event()
        self._outage = None
        asked_again = 0   # attempts whose answer grpc lost (see status_lost below)
        while not self._stopping:
            attempt_began = time.monotonic()
            self._session_task = asyncio.create_task(self._session())
            try:
                end = await self._session_task
            except asyncio.CancelledError:
                if self._stopping:
                    break
                raise
            finally:
                self._session_task = None
            if self._stopping:
                break
            if end.code is grpc.StatusCode.OK:
                log.info("%s: the arena ended the session (it is stopping); exiting", self.name)
                return 0
            if end.code in FATAL_CODES:
                log.error("%s: refused by the arena: %s %s%s", self.name, end.code.name, end.details,
                          _REFUSAL_HINTS.get(end.code, ""))
                return 2
            handshake = tls_failure(end.details, self._tls, self.arena)
            if handshake is not None and end.code is grpc.StatusCode.UNAVAILABLE:   # the arena is not down
                log.error("%s: TLS handshake with %s failed: %s", self.name, self.arena, handshake)
                return 2
            if not end.welcomed and end.code is grpc.StatusCode.UNAVAILABLE:
                wants_tls = await asyncio.to_thread(plaintext_to_tls, self.arena, end.details, self._tls)
                if wants_tls is not None:      # a setting of the bot's: no retry can fix it
                    log.error("%s: %s", self.name, wants_tls)
                    return 2
            if launcher_gone():
                log.info("%s: the arena that started this bot has exited; exiting", self.name)
                return 0
            if end.welcomed:
                asked_again = 0
            elif end.status_lost() and asked_again < _ASK_AGAIN:
                # A refused token ends the call at once, and our Hello can cross that end
                # (a few percent of the time on a busy machine): grpc then loses the
                # refusal. Ask again at once, before saying anything, so that a bad token
                # is a refusal (exit 2), not a "cannot reach".
                asked_again += 1
                log.debug("%s: the arena's answer was lost (%s); asking again", self.name, end.reason())
                continue
            outage = self._outage
            new_outage = outage is None or end.welcomed
            if outage is None or end.welcomed:   # new_outage, spelt out for the type checker
                # After a lost connection the outage starts now; before the first
                # connection it started with this attempt.
                outage = self._outage = _Outage(since=time.monotonic() if end.welcomed else attempt_began,
                                                lost=end.welcomed, attempts=0 if end.welcomed else 1)
            else:
                outage.attempts += 1
            left = outage.since + self.give_up_after - time.monotonic()
            why = self._reason(end)
            if left <= 0:
                log.error("%s: gave up after %.0f s and %d attempt%s: cannot reach %s (%s)", self.name,
                          time.monotonic() - outage.since, outage.attempts, "s" if outage.attempts != 1 else "",
                          self.arena, why)
                return 1
            if new_outage:   # said once; each attempt is logged only under -v (debug)
                log.warning("%s: %s %s (%s); %s with backoff up to %g s for %g s", self.name,
                            "lost the connection to" if outage.lost else "cannot reach", self.arena,
                            why, "reconnecting" if outage.lost else "retrying",
                            RETRY_MAX_DELAY, self.give_up_after)
            # The last wait ends at the give-up time, for one last attempt then.
            wait = min(outage.next_wait(self._jitter), left)
            log.debug("%s: next attempt in %.1f s (%d failed so far, the last: %s)", self.name, wait,
                      outage.attempts, why)
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                pass
        log.info("%s: stopped", self.name)
        return 0

    def _reason(self, end: _SessionEnd) -> str:
        """The failure in a few words, with a hint when the arena closed the connection
        before answering: grpc cannot tell why, and a client certificate missing or
        refused looks just like that (a plaintext bot at a TLS arena is found out before,
        :func:`~arena.sdk.tls.plaintext_to_tls`). It is still retried: an arena going down
        looks the same."""
        reason = end.reason()
        if end.welcomed or not closed_before_answering(end.details) or self.arena.startswith("unix:"):
            return reason
        hint = self._tls.closed_hint() if self._tls is not None else _PLAINTEXT_CLOSED_HINT
        return f"{reason} before the arena answered: {hint}"

    def _connect_timeout(self) -> float:
        """How long this attempt may wait for its Welcome: CONNECT_TIMEOUT, less when the
        retry time runs out sooner (but a second at least, or no attempt could succeed)."""
        since = self._outage.since if self._outage is not None else time.monotonic()
        left = since + self.give_up_after - time.monotonic()
        return min(CONNECT_TIMEOUT, max(left, 1.0))

    async def _session(self) -> _SessionEnd:
        """One connection: Hello, then read the arena's messages until the stream ends.

        Reading never waits for the bot: a request goes to its match's lane (see
        :meth:`_handle`), and the answers come back through this connection's outbox,
        which one writer task sends (grpc allows one write at a time on a call).
        """
        welcomed = False
        outbox = _Outbox()
        writer: asyncio.Task[None] | None = None
        if self._credentials is not None:
            channel = grpc.aio.secure_channel(self.arena, self._credentials, options=self.channel_options)
        else:
            channel = grpc.aio.insecure_channel(self.arena, options=self.channel_options)
        try:
            stub = arena_pb2_grpc.ArenaStub(channel)
            call = self._call = stub.Play(metadata=(("authorization", f"Bearer {self.token}"),))
            if self._stopping:       # stop() came while this call was being made
                call.cancel()
            try:
                timeout = self._connect_timeout()
                try:
                    # Bounded: an unanswering host would hold grpc for 20 s. A timed-out
                    # read breaks the stream (grpc.aio cancels the call), but this one is abandoned anyway.
                    message = await asyncio.wait_for(self._hello(call), timeout)
                except TimeoutError:
                    call.cancel()
                    return _SessionEnd(None, f"no answer within {timeout:.0f} s", False)
                writer = asyncio.create_task(self._write_answers(call, outbox))
                while message is not grpc.aio.EOF:
                    if message.HasField("welcome"):
                        welcomed = True
                        self._welcomed(message.welcome)
                    self._handle(message, outbox)
                    message = await call.read()
            except grpc.aio.AioRpcError as err:
                return _SessionEnd(err.code(), err.details() or "", welcomed)
            except asyncio.InvalidStateError:
                pass  # a read after the call ended: its status says why, below
            code = await call.code()
            return _SessionEnd(code, await call.details() or "", welcomed)
        finally:
            self._call = None
            outbox.closed = True
            if writer is not None:
                writer.cancel()
                await asyncio.gather(writer, return_exceptions=True)
            await channel.close()

    @staticmethod
    async def _write_answers(call: grpc.aio.StreamStreamCall, outbox: _Outbox) -> None:
        """The connection's one writer: send each answer as its lane hands it over."""
        try:
            while True:
                message = await outbox.get()
                await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            pass   # the call ended; the reader sees how, and the session ends with it
        except Exception:   # anything else would leave the bot reading but mute: start over
            log.error("cannot send an answer; reconnecting:\n%s", traceback.format_exc())
            call.cancel()

    async def _hello(self, call: grpc.aio.StreamStreamCall) -> Any:
        """Say Hello; return the arena's first message (a Welcome, or ``grpc.aio.EOF``)."""
        await call.write(arena_pb2.BotMessage(hello=arena_pb2.Hello(
            name=self._hello_name, version=self.version,
            variants=list(self.bot.variants), max_matches=max(1, self.max_matches),
            events_only=self.bot.events_only,
        )))
        return await call.read()

    def _welcomed(self, welcome: arena_pb2.Welcome) -> None:
        """The arena took the bot: log it (with how long it took, after an outage) and
        end the outage, so the next one starts with a quick retry and a full budget."""
        self.name = welcome.bot_name or self.name
        outage, self._outage = self._outage, None
        after = ""
        if outage is not None:
            tries = outage.attempts + 1   # the failed ones and this one
            after = f" after {time.monotonic() - outage.since:.1f} s ({tries} attempt{'s' if tries > 1 else ''})"
        log.info("%s: %s %s%s%s as %s (server %s)", self.name,
                 "reconnected to" if outage is not None and outage.lost else "connected to",
                 self.arena, " over TLS" if self._credentials is not None else "", after, welcome.bot_id,
                 welcome.server_version)

    # -- messages

    def _handle(self, message: arena_pb2.ArenaMessage, outbox: _Outbox) -> None:
        """React to one arena message without waiting for the bot: a request (with the
        outbox its answer goes to) and the hooks are queued on their match's lane."""
        which = message.WhichOneof("msg")
        if which == "request":
            self._ask(message.request, outbox)
        elif which == "match_started":
            self._start_match(message.match_started)
        elif which == "match_ended":
            self._end_match(message.match_ended)
        elif which == "fault":
            self._fault(message.fault)

    def _new_seat(self, info: MatchInfo) -> _Seat:
        bot = self.bot if isinstance(self.bot, Bot) else self.bot()
        return _Seat(info=info, bot=bot, rng=random.Random(_mix_seed(info.seed, self.seed)))

    def _start_match(self, started: arena_pb2.MatchStarted) -> None:
        try:
            options = json_codec.loads(started.options_json) if started.options_json else {}
        except ValueError:
            options = {}
        info = MatchInfo(
            match_id=started.match_id, variant=started.variant, seat=started.seat,
            players=started.players, bot_names=tuple(started.bot_names), options=options,
            seed=started.seed, move_time_ms=started.move_time_ms, time_bank_ms=started.time_bank_ms,
        )
        key = (info.match_id, info.seat)
        if key in self.seats:
            return  # re-sent after a reconnect: keep the seat's rng where it was
        seat = self.seats[key] = self._new_seat(info)
        self._queue_hook(seat, "on_match_start", info)

    def _seat_for(self, match_id: str, seat_no: int) -> _Seat:
        """The seat's state; a request for a match we never saw start (e.g. its
        MatchStarted was lost in a reconnect) gets a seat seeded from the match id."""
        key = (match_id, seat_no)
        seat = self.seats.get(key)
        if seat is None:
            info = MatchInfo(match_id=match_id, variant="", seat=seat_no, players=0, bot_names=(),
                             options={}, seed=sum(match_id.encode()), move_time_ms=0, time_bank_ms=0)
            seat = self.seats[key] = self._new_seat(info)
        return seat

    def _end_match(self, ended: arena_pb2.MatchEnded) -> None:
        seat = self.seats.pop((ended.match_id, ended.seat), None)
        if seat is None:
            return
        try:
            result_data = json_codec.loads(ended.result_json) if ended.result_json else {}
        except ValueError:
            result_data = {}
        result = MatchResult(
            match_id=ended.match_id, seat=ended.seat, totals=tuple(ended.totals),
            places=tuple(ended.places), result=result_data, forfeited=ended.forfeited,
            reason=ended.reason,
        )
        log.info("%s: match %s ended (%s): place %s of %d, totals %s", self.name, ended.match_id,
                 ended.reason or "completed", result.place, len(result.places), list(result.totals))
        self._queue_hook(seat, "on_match_end", result)
        # The match's last seat here: its lane ends after its queued work (a decision still
        # thinking is answered, late and ignored by the arena, and its thread then ends).
        if isinstance(self.bot, type) and not any(match_id == ended.match_id for match_id, _ in self.seats):
            lane = self._lanes.pop(ended.match_id, None)
            if lane is not None:
                lane.close()

    def _fault(self, fault: arena_pb2.Fault) -> None:
        log.warning("%s: fault in match %s (request %d): %s: %s%s", self.name, fault.match_id,
                    fault.request_id, fault.kind, fault.message,
                    " - seat forfeited" if fault.forfeited else "")
        info = FaultInfo(match_id=fault.match_id, request_id=fault.request_id, kind=fault.kind,
                         message=fault.message, faults=fault.faults, forfeited=fault.forfeited)
        for (match_id, _), seat in list(self.seats.items()):
            if match_id == fault.match_id:
                self._queue_hook(seat, "on_fault", info)

    # -- lanes: each match's work in order, the matches beside each other

    def _lane_for(self, seat: _Seat) -> _Lane:
        """The lane of the seat's match (of every seat, for a shared bot instance), started on first use."""
        key = None if isinstance(self.bot, Bot) else seat.info.match_id
        lane = self._lanes.get(key)
        if lane is None:
            where = "all matches" if key is None else f"match {key}"
            lane = self._lanes[key] = _Lane(_Thinker(f"{self.name} {where}"), self._job_done)
        return lane

    def _queue_hook(self, seat: _Seat, hook: str, arg: Any) -> None:
        if _is_async(getattr(seat.bot, hook)):
            self._lane_for(seat).put(_Job(functools.partial(self._call_hook_async, seat, hook, arg), on_loop=True))
        else:
            self._lane_for(seat).put(_Job(functools.partial(self._call_hook, seat, hook, arg)))

    def _ask(self, request: arena_pb2.DecisionRequest, outbox: _Outbox) -> None:
        """Queue a decision on its match's lane; the answer goes to ``outbox``."""
        seat = self._seat_for(request.match_id, request.seat)
        kind = protocol.kind_from_wire(request.kind)
        method = getattr(seat.bot, kind, None) if kind in DECISION_KINDS else None
        on_loop = _is_async(method) or (bool(request.events_json) and _is_async(seat.bot.on_events))
        answer = self._answer_async if on_loop else self._answer
        self._lane_for(seat).put(_Job(functools.partial(answer, seat, request), on_loop, outbox))

    def _job_done(self, job: _Job, outcome: _Outcome) -> bool:
        """A lane's job is done (on the loop): its answer goes to its connection's outbox.
        False ends the lane: the bot's code raised SystemExit or KeyboardInterrupt, which
        ends the bot, as it would have without threads (run() raises it again)."""
        ok, value = outcome
        if ok:
            if value is not None and job.outbox is not None:
                job.outbox.send(value)
            return True
        if isinstance(value, (SystemExit, KeyboardInterrupt)):
            self._exit = value
            self.stop()
            return False
        # An SDK bug: _answer and the hooks catch the bot's own errors.
        log.error("%s: a lane failed:\n%s", self.name, "".join(traceback.format_exception(value)))
        return True

    async def _close_lanes(self, grace: float) -> None:
        """End every lane: the jobs already queued get ``grace`` seconds (decisions for a
        connection that is gone are skipped), then the lanes are cancelled. A thread still
        in the bot's code is not waited for: it is a daemon and ends when it returns."""
        lanes, self._lanes = list(self._lanes.values()), {}
        for lane in lanes:
            lane.close()
        waiting = [lane.finished for lane in lanes if not lane.finished.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=grace)
        cancelled = [task for lane in lanes if (task := lane.cancel()) is not None]
        await asyncio.gather(*cancelled, return_exceptions=True)

    # -- calling the bot (on a lane: its thread, or the loop for an async def method)

    def _call_hook(self, seat: _Seat, hook: str, arg: Any) -> None:
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        try:
            getattr(bot, hook)(arg)
        except Exception:  # a bug in a hook must not end the bot
            log.error("%s: %s raised:\n%s", self.name, hook, traceback.format_exc())

    async def _call_hook_async(self, seat: _Seat, hook: str, arg: Any) -> None:
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        try:
            await getattr(bot, hook)(arg)
        except Exception:  # a bug in a hook must not end the bot
            log.error("%s: %s raised:\n%s", self.name, hook, traceback.format_exc())

    def _answer(self, seat: _Seat, request: arena_pb2.DecisionRequest) -> arena_pb2.BotMessage:
        """Ask the bot, falling back to the first option (or no prediction) if it fails:
        the fallback says why in ``Action.bot_error``, which the arena records as a
        ``bot_error`` fault (a bot's own bug is never hidden from its author).

        The wire layer converts both ways (``arena.wire.protocol``, through
        ``arena.sdk.answers``): the options arrive as the engine types them (ints for
        bids), the bot's answer is checked against them as it is, and only the answer
        message turns it back into text. Runs on the lane's thread; :meth:`_answer_async`
        is the same for an ``async def`` method.
        """
        read = read_request(self.name, seat, request)
        if isinstance(read, arena_pb2.BotMessage):
            return read
        kind, obs, events, options = read
        try:
            if events is not None:
                seat.bot.on_events(events)
            action = ask(seat.bot, kind, obs, options)
        except Exception as error:
            return fallback_after(self.name, request, kind, error)
        return reply(self.name, request, kind, options, action)

    async def _answer_async(self, seat: _Seat, request: arena_pb2.DecisionRequest) -> arena_pb2.BotMessage:
        """:meth:`_answer` for a bot whose method (or ``on_events``) is ``async def``: on the loop."""
        read = read_request(self.name, seat, request)
        if isinstance(read, arena_pb2.BotMessage):
            return read
        kind, obs, events, options = read
        try:
            if events is not None:
                on_events: Callable[[list[dict[str, Any]]], Any] = seat.bot.on_events
                heard = on_events(events)
                if inspect.isawaitable(heard):
                    await heard
            action = await ask_async(seat.bot, kind, obs, options)
        except Exception as error:
            return fallback_after(self.name, request, kind, error)
        return reply(self.name, request, kind, options, action)
