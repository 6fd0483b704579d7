"""The match runner: one engine game, its seats, time control, faults and the final record.

A :class:`Referee` runs one match. It asks the engine who must act, sends each of those
seats a ``DecisionRequest`` through the seat's :class:`BotLink` (a bot connection; the
server implements it), waits for the answer under the time control, applies it, and
repeats until the game is over. Every match runs in its own task and only ever waits on
its own seats' answers, so a slow or broken bot stalls nobody else.

Time control. Each decision has a limit (``move_time``); each seat also has a time bank
for the whole match. Time past the limit is drawn from the bank; an answer that comes
later than limit + bank is a timeout (and the bank is then empty). Time is measured on
the referee's monotonic clock from handing the request to the connection to receiving
the answer.

Faults (``records.FAULT_KINDS``). A timeout, an illegal action, a malformed answer or an
unexpected message is recorded, told to the bot with a ``Fault`` message, and the
documented fallback (``Decision.default``) is played for that decision. An answer its
SDK marks as a fallback for the bot's own failure (``Action.bot_error``) is played as
sent and recorded as a ``bot_error`` fault. After
``max_faults`` faults the seat forfeits: the fallback plays it to the end and it takes
the last place. A disconnect is a fault too, but the seat's decisions wait up to
``grace`` seconds for the bot to come back before the seat forfeits.

Stale answers. An answer for a request that is no longer open (it timed out, was
answered already, or its match is over) is ignored, whatever the delay: a timeout is
counted once and a repeated answer changes nothing. The connection applies this rule
(``arena/referee/connections.py``, ``Connection.route``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from arena.records import FaultRecord, LoggedAction, MatchRecord, MatchSpec, final_places, utcnow
from arena.referee.limits import Limits
from arena.wire import json_codec, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import PUBLIC, Action, Decision, Event, IllegalAction, new_game

log = logging.getLogger(__name__)

# The wire JSON of public events, kept for the whole process by (variant, players) and
# the event as the engine logs it: the same card played by the same seat, the same bid,
# is the same text in every match, so most events are encoded once, not once a match.
# Each table takes no new events past EVENT_MEMO_SIZE (tricks seldom repeat). A seat's
# private events (its hand, its hidden bid) are encoded for its match alone.
EVENT_MEMO_SIZE = 4096
_event_memo: dict[tuple[str, int], dict[Event, str]] = {}


class BotLink(Protocol):
    """One bot connection, as the referee uses it. ``arena.referee.connections.Connection`` implements it."""

    name: str
    version: str
    events_only: bool   # its requests go without the observation (Hello.events_only)

    def send(self, message: pb.ArenaMessage) -> None:
        """Queue a message to the bot; never blocks (dropped if the connection is gone)."""

    def open_request(self, request: OpenRequest) -> None:
        """Route the bot's answers for ``request.request_id`` to ``request`` from now on."""

    def close_request(self, request: OpenRequest) -> None:
        """The request is settled; later answers to it are stale."""

    def join(self, referee: Referee, seat: int) -> None:
        """The connection now plays ``seat`` of this match (counts against its capacity)."""

    def leave(self, referee: Referee, seat: int) -> None:
        """The connection no longer plays ``seat`` of this match."""


# What an open request resolves to: the bot's message (None when the connection
# dropped, TIMED_OUT when the time ran out) and when it arrived on the referee's clock.
TIMED_OUT = pb.BotMessage()
Answer = tuple["pb.BotMessage | None", float]


@dataclass(eq=False)
class OpenRequest:
    """A decision request waiting for its answer."""

    referee: Referee
    seat: int
    request_id: int
    answer: asyncio.Future[Answer]

    def deliver(self, message: pb.BotMessage | None, received_at: float) -> bool:
        """Resolve with the bot's message (or ``None``: the connection is gone).
        Returns False if the request was already resolved."""
        if self.answer.done():
            return False
        self.answer.set_result((message, received_at))
        return True

    def expire(self) -> None:
        """The time is up (called by the request's timer)."""
        if not self.answer.done():
            self.answer.set_result((TIMED_OUT, time.monotonic()))


@dataclass(eq=False)
class SeatState:
    """Everything the referee tracks for one seat."""

    seat: int
    bot: str
    version: str
    link: BotLink | None
    bank: float                              # seconds left in the time bank
    seed: int
    faults: int = 0
    forfeited: bool = False
    event_cursor: int = 0                    # engine events already sent to this seat
    pending: OpenRequest | None = None
    deadline: float = 0.0                    # of the pending request, on the loop's (monotonic) clock
    timer: asyncio.TimerHandle | None = None   # due by the deadline (Referee._arm)
    wake: asyncio.Event = field(default_factory=asyncio.Event)   # relinked or forfeited
    grace_timer: asyncio.TimerHandle | None = None
    told_the_end: bool = False               # MatchEnded went out to this seat's bot


class Referee:
    """Runs one match between seated bots and produces its :class:`MatchRecord`.

    ``links`` gives the connection for each seat (the same connection may hold several
    seats); ``None`` for a seat whose bot has no connection as the match starts, which
    :meth:`seat_absent` must then explain before :meth:`run`. ``next_request_id`` hands
    out request ids that are unique and increasing across the whole server, so a
    connection can route any answer by id alone.
    """

    def __init__(self, spec: MatchSpec, links: list[BotLink | None], *, limits: Limits,
                 next_request_id: Callable[[], int]) -> None:
        if not spec.match_id:
            raise ValueError("the match needs a match_id")
        if len(links) != len(spec.bots):
            raise ValueError("one link per seat")
        self.spec = spec
        self.match_id = spec.match_id
        # Set by the server for a match seated by one-run tokens: the only streams that
        # may take its seats, also back after a drop (Roster).
        self.tokens: Mapping[str, str] | None = None
        self.config = spec.config
        self.limits = Limits(
            move_time=spec.move_time if spec.move_time is not None else limits.move_time,
            time_bank=spec.time_bank if spec.time_bank is not None else limits.time_bank,
            max_faults=spec.max_faults if spec.max_faults is not None else limits.max_faults,
            grace=limits.grace,
        )
        self.game = new_game(self.config)
        self._next_request_id = next_request_id
        # Without seeds from the organiser each seat gets a fresh random one: a bot's seed
        # must say nothing about the deal or the other seats (never derive it from the
        # deal seed, which a bot could then search for).
        seeds = spec.bot_seeds or [secrets.randbits(63) for _ in spec.bots]
        self.seats = [
            SeatState(seat=i, bot=name, version=link.version if link is not None else "", link=link,
                      bank=self.limits.time_bank, seed=seeds[i])
            for i, (name, link) in enumerate(zip(spec.bots, links))
        ]
        self.faults: list[FaultRecord] = []
        self.latencies_ms: list[float | None] = []
        self.finished = False
        self.finished_at: float | None = None        # monotonic
        self.end_reason = ""
        self._result_json = ""                       # encoded once, for every seat's MatchEnded
        self.record: MatchRecord | None = None
        self._changed: asyncio.Event | None = None   # created only while a spectator waits
        self.spectators = 0
        # Every logged event in its wire JSON, encoded once for every seat and spectator,
        # with the one seat that may see it (PUBLIC: everyone); the public ones again by
        # themselves, the spectators' log.
        self._event_memo = _event_memo.setdefault((self.config.variant, self.config.players), {})
        self._log_cursor = 0
        self._log_json: list[tuple[int, str]] = []
        self._public_json: list[str] = []
        # The finished rounds of every observation, encoded once a round (the round they
        # were encoded for: 0, none yet).
        self._history_round = 0
        self._history_json = json_codec.fragment([])

    # ------------------------------------------------------------------ running

    async def run(self) -> MatchRecord:
        """Play the match to the end and return its record (the caller stores it).

        The seats are taken on the links before the first ``await``, so a caller that
        awaits this right after choosing the links cannot lose them to another match.
        """
        started_at = utcnow()
        for s in self.seats:
            if s.link is not None:
                s.link.join(self, s.seat)
                s.link.send(self._match_started(s))
        status, reason = "completed", "completed"
        try:
            while not self.game.is_over:
                to_act = self.game.to_act()
                if len(to_act) == 1:
                    await self._decide(to_act[0])
                else:
                    # Hidden and secret bids: everyone decides at once.
                    async with asyncio.TaskGroup() as group:
                        for seat in to_act:
                            group.create_task(self._decide(seat))
        except Exception as error:  # an engine bug must not take the server down
            log.exception("match %s aborted", self.match_id)
            status, reason = "aborted", f"aborted: {type(error).__name__}: {error}"
        except asyncio.CancelledError:
            # The caller gave up on the match (or the server is stopping): still tell
            # the bots and give their slots back, then let the cancellation through.
            self.record = self._make_record(started_at, "aborted")
            self._end("aborted: the match was cancelled")
            raise
        finally:
            for s in self.seats:
                if s.grace_timer is not None:
                    s.grace_timer.cancel()
                if s.timer is not None:
                    s.timer.cancel()
                    s.timer = None
        self.record = self._make_record(started_at, status)
        self._end(reason)
        return self.record

    def _end(self, reason: str) -> None:
        assert self.record is not None
        self.end_reason = reason
        self._result_json = json_codec.dumps(self.record.result_json())
        for s in self.seats:
            if s.link is not None:
                s.link.send(self._match_ended(s))
                s.told_the_end = True
                s.link.leave(self, s.seat)
        self.finished = True
        self.finished_at = time.monotonic()
        self._log_json = []   # no seat asks for events any more; spectators read _public_json
        self._notify()

    def _match_ended(self, s: SeatState) -> pb.ArenaMessage:
        record = self.record
        assert record is not None
        return protocol.match_ended(
            match_id=self.match_id, seat=s.seat, totals=record.totals, places=record.places,
            result_json=self._result_json, forfeited=s.forfeited, reason=self.end_reason,
        )

    def _make_record(self, started_at: Any, status: str) -> MatchRecord:
        forfeited = [s.forfeited for s in self.seats]
        if status == "completed":
            result = self.game.result()
            totals = list(result.totals)
            places = final_places(totals, forfeited, result.higher_is_better)
        else:
            result = None
            totals = [0] * len(self.seats)
            places = [1] * len(self.seats)
        actions = [LoggedAction(seat, action) for seat, action in self.game.actions]
        latencies = self.latencies_ms + [None] * (len(actions) - len(self.latencies_ms))
        # In ms as the log's latencies; both from the same float, so an emptied bank (set
        # to exactly 0.0 by a timeout or by max(0.0, ...)) reads as used == time_bank_ms.
        bank_ms = round(self.limits.time_bank * 1000, 3)
        bank_used = [round(self.limits.time_bank * 1000 - s.bank * 1000, 3) for s in self.seats]
        return MatchRecord(
            match_id=self.match_id, variant=self.config.variant, config=self.config,
            seed=self.config.seed, bots=list(self.spec.bots), bot_versions=[s.version for s in self.seats],
            totals=totals, places=places, forfeited=forfeited, result=result, actions=actions,
            latencies_ms=latencies, faults=list(self.faults), tournament_id=self.spec.tournament_id,
            game_index=self.spec.game_index, status=status, started_at=started_at, finished_at=utcnow(),
            time_bank_ms=bank_ms, bank_used_ms=bank_used, private=self.spec.private,
        )

    async def _decide(self, seat: int) -> None:
        """Get one decision of ``seat`` (the bot's, or the fallback) and apply it."""
        decision = self.game.decision(seat)
        action, latency_ms, request_id = await self._ask(self.seats[seat], decision)
        if action is not None:
            try:
                self._apply(seat, action, latency_ms)
                return
            except IllegalAction as error:
                self._fault(self.seats[seat], "illegal", str(error), request_id)
        self._apply(seat, decision.default, None)

    def _apply(self, seat: int, action: Action, latency_ms: float | None) -> None:
        index = len(self.game.actions)
        self.game.apply(seat, action)
        # The engine may log automatic actions too; keep latencies parallel to its log.
        pad = len(self.game.actions) - len(self.latencies_ms)
        self.latencies_ms.extend([None] * pad)
        self.latencies_ms[index] = latency_ms
        self._notify()

    async def _ask(self, s: SeatState, decision: Decision) -> tuple[Action | None, float | None, int | None]:
        """Send the request and wait for a usable answer.

        Returns ``(action, latency_ms, request_id)``; ``action`` is ``None`` when the
        fallback must be played (the fault, if any, is already recorded). A well-shaped
        action may still be illegal: the caller finds out when it applies it.
        """
        request_id = self._next_request_id()
        limits = self.limits
        while True:
            if s.forfeited:
                return None, None, request_id
            link = s.link
            if link is None:
                # Disconnected: wait for the bot to come back, or for the grace timer
                # to forfeit the seat. The request is then re-sent under the same id.
                s.wake.clear()
                await s.wake.wait()
                continue
            loop = asyncio.get_running_loop()
            request = OpenRequest(self, s.seat, request_id, loop.create_future())
            message = self._request_message(s, decision, request_id, link.events_only)
            s.pending = request
            link.open_request(request)
            sent_at = time.monotonic()
            link.send(message)
            limit = limits.move_time + s.bank
            s.deadline = sent_at + limit
            self._arm(s)
            try:
                answer, received_at = await request.answer
            finally:
                link.close_request(request)
                s.pending = None
            if answer is TIMED_OUT:
                s.bank = 0.0
                self._fault(s, "timeout", f"no answer within {limit * 1000:.0f} ms", request_id)
                return None, None, request_id
            elapsed = received_at - sent_at
            # What went past the limit comes out of the bank, also when the connection
            # dropped (then seat_disconnected counted the fault and the request is re-sent).
            s.bank = max(0.0, s.bank - max(0.0, elapsed - limits.move_time))
            if answer is None:
                continue
            action = self._check_answer(s, answer, decision, request_id)
            return action, round(elapsed * 1000, 3), request_id

    def _arm(self, s: SeatState) -> None:
        """Have the seat's timer fire by its deadline.

        One loop timer per seat, moved only when it would fire after the deadline, not
        one per request: a seat's deadlines never move back (the next request goes out
        after the answer, and its bank shrinks by no more than that answer's time past
        the limit), so with a 1 s limit the timer is made about once a second instead of
        at every decision. Each one is a Python ``TimerHandle`` pushed on and later
        popped off the loop's heap, every comparison a Python call."""
        timer = s.timer
        if timer is None or timer.when() > s.deadline:
            if timer is not None:
                timer.cancel()
            s.timer = asyncio.get_running_loop().call_at(s.deadline, self._deadline_reached, s)

    def _deadline_reached(self, s: SeatState) -> None:
        """The seat's timer fired: its pending request, if the time is up, expires;
        a request sent since then has a later deadline, which the timer moves to."""
        s.timer = None
        request = s.pending
        if request is None:
            return
        if time.monotonic() >= s.deadline:
            request.expire()
        else:
            self._arm(s)

    def _request_message(self, s: SeatState, decision: Decision, request_id: int,
                         events_only: bool) -> pb.ArenaMessage:
        # Without the observation a decision costs the referee about a fifth less CPU
        # (measured with 64 matches at once): building and encoding it is the biggest
        # part of a request.
        return protocol.decision_request(
            match_id=self.match_id, seat=s.seat, request_id=request_id, decision=decision,
            observation=None if events_only else self._observation_json(s.seat),
            encoded_events=self._new_events_json(s),
            deadline_ms=int(self.limits.move_time * 1000), time_bank_ms=int(s.bank * 1000),
        )

    def _observation_json(self, seat: int) -> str:
        """The seat's observation in its wire form, the same text as encoding
        ``game.observe(seat)``. Its finished rounds, the same for every seat and a third
        of the engine's work for a late observation, are built and encoded once a round
        for all seats (at a decision they are the rounds before ``round``)."""
        # A plain dict here: its round_history becomes the encoded fragment.
        observation = cast("dict[str, Any]", self.game.observe(seat, round_history=False))
        if observation["round"] != self._history_round:
            self._history_round = observation["round"]
            self._history_json = json_codec.fragment(self.game.observe(None)["round_history"])
        observation["round_history"] = self._history_json   # in the place observe() gave it
        return json_codec.dumps(observation)

    def _new_events_json(self, s: SeatState) -> list[str]:
        """The events the seat has not been sent yet, as wire JSON; moves its cursor:
        the public ones and its own private ones (its hand, its hidden bid)."""
        self._sync_events()
        start, seat = s.event_cursor, s.seat
        s.event_cursor = len(self._log_json)
        return [text for viewer, text in self._log_json[start:] if viewer == PUBLIC or viewer == seat]

    def _sync_events(self) -> None:
        """Encode the events the engine logged since the last call, each once."""
        events, self._log_cursor = self.game.logged_events(self._log_cursor)
        memo = self._event_memo
        for event in events:   # tuples of ints, strings and tuples (engine.events): keys
            public = event[0] == PUBLIC
            text = memo.get(event) if public else None
            if text is None:
                text = json_codec.dumps(self.game.event_dict(event))
                if public and len(memo) < EVENT_MEMO_SIZE:
                    memo[event] = text
            self._log_json.append((event[0], text))
            if public:
                self._public_json.append(text)

    def _check_answer(self, s: SeatState, message: pb.BotMessage, decision: Decision,
                      request_id: int) -> Action | None:
        """The engine action in the bot's message, or ``None`` after recording the fault."""
        which = message.WhichOneof("msg")
        if which != "action":
            what = "Hello again" if which == "hello" else "an empty message"
            self._fault(s, "unexpected", f"expected an Action for request {request_id}, got {what}", request_id)
            return None
        if message.action.request_id != request_id:
            self._fault(s, "unexpected", f"answer names request {message.action.request_id}, "
                        f"but the open request is {request_id}", request_id)
            return None
        try:
            action = protocol.parse_answer(message.action, decision, self.config.variant)
        except protocol.Malformed as error:
            self._fault(s, "malformed", str(error), request_id)
            return None
        if message.action.bot_error:
            # The bot's own code failed and its SDK answered for it: applied, but recorded
            # (the text as the connection cleaned it: protocol.bot_message_from_wire).
            self._fault(s, "bot_error", message.action.bot_error, request_id)
        return action

    # ------------------------------------------------------------------ faults, links

    def _fault(self, s: SeatState, kind: str, message: str, request_id: int | None) -> None:
        self.faults.append(FaultRecord(seat=s.seat, bot=s.bot, kind=kind, message=message, request_id=request_id))
        s.faults += 1
        if s.faults >= self.limits.max_faults and not s.forfeited:
            self._forfeit(s)
        log.info("match %s seat %d (%s): %s fault: %s", self.match_id, s.seat, s.bot, kind, message)
        if s.link is not None:
            s.link.send(protocol.fault(match_id=self.match_id, request_id=request_id, kind=kind, message=message,
                                       faults=s.faults, forfeited=s.forfeited))

    def _forfeit(self, s: SeatState) -> None:
        s.forfeited = True
        if s.grace_timer is not None:
            s.grace_timer.cancel()
            s.grace_timer = None
        s.wake.set()

    def seat_disconnected(self, seat: int, link: BotLink, why: str = "the connection was lost",
                          closed_by_arena: bool = False) -> bool:
        """The connection holding ``seat`` is gone. Returns True if the seat wants its bot
        back: to play on (within the grace period), or, once forfeited, to be told the
        end of the match when it reconnects. A bot leaving after it forfeited is no
        further fault; the arena closing its stream (a flood) is always recorded."""
        s = self.seats[seat]
        if self.finished or s.link is not link:
            return False
        s.link = None
        if s.forfeited:     # nothing left to play; only the ending to tell
            if closed_by_arena:
                self._fault(s, "disconnect", why, None)
            return True
        self._fault(s, "disconnect", why, s.pending.request_id if s.pending else None)
        if s.pending is not None:
            s.pending.deliver(None, time.monotonic())
        if s.forfeited:
            return True
        s.grace_timer = asyncio.get_running_loop().call_later(self.limits.grace, self._grace_over, s)
        return True

    def seat_absent(self, seat: int, why: str, final: bool) -> None:
        """The seat's bot has no connection as the match starts (its process is being
        restarted, or is gone for good): the disconnect rule from the first decision.
        The absence is a ``disconnect`` fault; the seat then waits ``grace`` seconds for
        its bot (which gets it back on connecting), or forfeits at once when ``final``."""
        s = self.seats[seat]
        s.link = None
        self._fault(s, "disconnect", why, None)
        if final and not s.forfeited:
            self._forfeit(s)
        if not s.forfeited:
            s.grace_timer = asyncio.get_running_loop().call_later(self.limits.grace, self._grace_over, s)

    def _grace_over(self, s: SeatState) -> None:
        s.grace_timer = None
        if s.link is None and not s.forfeited and not self.finished:
            log.info("match %s seat %d (%s) did not reconnect: forfeited", self.match_id, s.seat, s.bot)
            self._forfeit(s)

    def seat_reconnected(self, seat: int, link: BotLink) -> bool:
        """The seat's bot is back on ``link``. It gets ``MatchStarted`` again, a ``Fault``
        recalling the disconnect, and (from :meth:`_ask`) its pending request with the
        current observation and every event of the match so far.

        A seat that forfeited gets ``MatchStarted`` and then ``MatchEnded``: at once if
        the match is over, else when it ends (until then it holds one of the
        connection's slots, as any seat does). Returns False if there was nothing to
        give back."""
        s = self.seats[seat]
        if s.link is not None or s.told_the_end:
            return False
        if self.finished or s.forfeited:
            link.send(self._match_started(s))
            if self.finished:
                link.send(self._match_ended(s))
                s.told_the_end = True
            else:
                s.link = link
                link.join(self, seat)
            return True
        if s.grace_timer is not None:
            s.grace_timer.cancel()
            s.grace_timer = None
        s.link = link
        s.version = link.version
        s.event_cursor = 0
        link.join(self, seat)
        link.send(self._match_started(s))
        link.send(protocol.fault(match_id=self.match_id, request_id=None, kind="disconnect",
                                 message="reconnected; the disconnect counted as a fault",
                                 faults=s.faults, forfeited=False))
        s.wake.set()
        return True

    def _match_started(self, s: SeatState) -> pb.ArenaMessage:
        # The game options without the deal seed: from the seed and the (importable)
        # engine a bot could compute every hand.
        return protocol.match_started(
            match_id=self.match_id, variant=self.config.variant, seat=s.seat, bot_names=self.spec.bots,
            options=self.config.options(), seed=s.seed,
            move_time_ms=int(self.limits.move_time * 1000), time_bank_ms=int(self.limits.time_bank * 1000),
        )

    # ------------------------------------------------------------------ spectators

    def public_json(self, start: int) -> tuple[list[str], int]:
        """Public events (JSON) from position ``start`` of the public log, and the next
        position: what a spectator may see. Each event is encoded once for all."""
        self._sync_events()
        return self._public_json[start:], len(self._public_json)

    async def wait_for_change(self) -> None:
        """Return after the next applied action (or the end of the match)."""
        if self.finished:
            return
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    # ------------------------------------------------------------------ summaries

    @property
    def variant(self) -> str:
        return self.config.variant

    def running_totals(self) -> list[int]:
        """Scores so far, from the public observation."""
        return [int(score) for score in self.game.observe(None).get("scores", [])]
