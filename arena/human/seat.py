"""The person's seat: a real bot connection to the referee, whose answers are a person's.

:class:`HumanSeat` is a minimal gRPC client of ``Arena.Play``, the protocol every bot
speaks (Hello, ``MatchStarted``, ``DecisionRequest``, ``Action``, ``Fault``,
``MatchEnded``). The referee treats it like any bot: the same time control, the same
faults, the same fallback. It never decides anything itself: a request waits as
:attr:`HumanSeat.pending` until :meth:`HumanSeat.answer` is called with one of its
options (the page's ``POST /api/play/answer``), and only then is the ``Action`` written.

What the seat knows is what the referee sent it: the seat's observation (never another
hand), the events the seat may see, its faults and the end of the match. :meth:`state`
is that, as the JSON the page reads. Everything runs on one event loop, so an answer
is checked and taken in one step: of two answers to the same request (two tabs) the
first counts and the second is refused.

One seat serves every match of an ``arena play`` run: :meth:`new_match` clears it for
the next one (the page's "play again"), its :attr:`version` still growing, so a page
that waits for a change sees the new match. :meth:`close` wakes every waiting page at
shutdown, so no request is left open when the server stops.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc

from arena.wire import json_codec, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2, arena_pb2_grpc
from engine import PREDICT, IllegalAction, Prediction
from engine.worlds import sample_world

# How long a state request may wait for a change (``?since=VERSION``) before it answers anyway.
LONG_POLL_SECONDS = 20.0


class AnswerRefused(Exception):
    """An answer that is not taken: ``status`` is the HTTP status (400 for an answer that
    is no option, 409 for a request that is not open); the decision stays as it was."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class MatchInfo:
    """The match the seat was given (``MatchStarted``)."""

    match_id: str
    variant: str
    seat: int
    players: int
    bots: list[str]
    options: dict[str, Any]
    move_time_ms: int
    time_bank_ms: int


@dataclass(frozen=True)
class Pending:
    """A decision the referee waits for: what the page shows as clickable."""

    request_id: int
    kind: str                  # bid, play, trump, predict, pay
    options: list[str]         # the protocol's text; empty for a prediction
    deadline_ms: int           # the per-decision limit
    time_bank_ms: int          # what is left of the bank
    asked_at: float = field(default_factory=time.monotonic, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["asked_at"]
        data["waited_ms"] = round((time.monotonic() - self.asked_at) * 1000)
        return data


@dataclass(frozen=True)
class FaultNote:
    """An answer the referee did not take (``Fault``): a timeout, say."""

    request_id: int
    kind: str
    message: str
    faults: int
    forfeited: bool


@dataclass(frozen=True)
class Ended:
    """How the match ended for the seat (``MatchEnded``)."""

    totals: list[int]
    places: list[int]
    result: dict[str, Any]
    forfeited: bool
    reason: str


@dataclass
class HumanSeat:
    """One person's seat on the referee at ``address``, with the one-run ``token``."""

    address: str
    token: str
    name: str
    variant: str
    version: int = 0
    welcome: str = ""                       # the name the referee registered
    match: MatchInfo | None = None
    observation: dict[str, Any] | None = None
    pending: Pending | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    faults: list[FaultNote] = field(default_factory=list)
    ended: Ended | None = None
    stored: dict[str, str] | None = None    # once the match is in the database: its id and viewer
    problem: str | None = None              # why there is no match (a start that failed)
    answered: set[int] = field(default_factory=set)
    game: int = 1                           # which match of this run: 1, then 2 after "play again"
    again: bool = False                     # the page asked for another match
    closed: bool = False                    # the server is stopping: nobody waits for a change

    def __post_init__(self) -> None:
        self._outbox: asyncio.Queue[arena_pb2.BotMessage | None] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._connected = asyncio.Event()
        self._again = asyncio.Event()

    def new_match(self) -> None:
        """Clear the last match for the next one (the version keeps growing)."""
        self.address = self.token = self.welcome = ""
        self.match = self.observation = self.pending = self.ended = None
        self.stored = None
        self.problem = None
        self.events, self.faults, self.answered = [], [], set()
        self.game += 1
        self.again = False
        self._outbox = asyncio.Queue()
        self._connected = asyncio.Event()
        self._again = asyncio.Event()
        self.touch()

    # -- the connection

    async def run(self) -> None:
        """Play until the referee ends the stream (after the match) or the task is cancelled."""
        async with grpc.aio.insecure_channel(self.address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            call = stub.Play(self._messages(), metadata=(("authorization", f"Bearer {self.token}"),))
            try:
                async for message in call:
                    self._handle(message)
            except grpc.aio.AioRpcError as error:
                if self.ended is None and error.code() != grpc.StatusCode.CANCELLED:
                    self.fail(f"the referee closed the seat's connection: {error.code().name}: {error.details()}")
            finally:
                await self._outbox.put(None)

    async def connected(self, timeout: float) -> None:
        """Wait until the referee has welcomed the seat (TimeoutError after ``timeout``)."""
        await asyncio.wait_for(self._connected.wait(), timeout)

    async def _messages(self) -> AsyncIterator[arena_pb2.BotMessage]:
        yield arena_pb2.BotMessage(hello=arena_pb2.Hello(name=self.name, version="person",
                                                         variants=[self.variant], max_matches=1))
        while (message := await self._outbox.get()) is not None:
            yield message

    def _handle(self, message: arena_pb2.ArenaMessage) -> None:
        which = message.WhichOneof("msg")
        if which == "welcome":
            self.welcome = message.welcome.bot_name
            self._connected.set()
        elif which == "match_started":
            started = message.match_started
            self.match = MatchInfo(started.match_id, started.variant, started.seat, started.players,
                                   list(started.bot_names), json_codec.loads(started.options_json or "{}"),
                                   started.move_time_ms, started.time_bank_ms)
        elif which == "request":
            request = message.request
            self.observation = protocol.observation_from_wire(request)
            self.events.extend(protocol.events_from_wire(request))
            self.pending = Pending(request.request_id, protocol.kind_from_wire(request.kind), list(request.options),
                                   request.deadline_ms, request.time_bank_ms)
        elif which == "fault":
            fault = message.fault
            self.faults.append(FaultNote(fault.request_id, fault.kind, fault.message, fault.faults, fault.forfeited))
            if self.pending is not None and self.pending.request_id == fault.request_id:
                self.pending = None      # the referee played the fallback for it
        elif which == "match_ended":
            ended = message.match_ended
            self.pending = None
            self.ended = Ended(list(ended.totals), list(ended.places), json_codec.loads(ended.result_json or "{}"),
                               ended.forfeited, ended.reason or "completed")
        self.touch()

    # -- the person's answers

    def answer(self, request_id: Any, option: Any = None, prediction: Any = None) -> None:
        """Take the person's answer to the open request, or raise :class:`AnswerRefused`
        (nothing changes then: the decision stays pending)."""
        if isinstance(request_id, bool) or not isinstance(request_id, int):
            raise AnswerRefused(400, "request_id must be the whole number of the open request")
        pending = self.pending
        if pending is None or pending.request_id != request_id:
            if request_id in self.answered:
                why = f"request {request_id} was answered already (in another tab?)"
            else:
                why = f"request {request_id} is not open"
            now = f"the open request is {pending.request_id}" if pending else "no decision is pending now"
            raise AnswerRefused(409, f"{why}; {now}")
        if pending.kind == PREDICT:
            action: Any = self._checked_prediction(option, prediction)
        else:
            if prediction is not None or not isinstance(option, str):
                raise AnswerRefused(400, f"a {pending.kind} is answered with \"option\": one of "
                                    f"{', '.join(pending.options)}")
            if option not in pending.options:
                raise AnswerRefused(400, f"{protocol.clip(option)} is not an option of this {pending.kind}; "
                                    f"choose one of {', '.join(pending.options)}")
            action = option
        self._outbox.put_nowait(protocol.answer_message(request_id, pending.kind, action))
        self.answered.add(request_id)
        self.pending = None
        self.touch()

    def _checked_prediction(self, option: Any, prediction: Any) -> Prediction:
        """A prediction the engine would take from this seat now, or AnswerRefused (400).

        Legality is the engine's: a world consistent with the seat's observation (the
        other hands dealt at random, which a prediction does not depend on) is asked to
        apply it, so the person gets the engine's reason instead of a fault."""
        if option is not None or prediction is None:
            raise AnswerRefused(400, 'a prediction is answered with "prediction": '
                                '{"destroyer": false, "tokens": {"red": 1}, "take_from": []}')
        try:
            value = Prediction.from_json(prediction)
        except ValueError as error:
            raise AnswerRefused(400, str(error)) from None
        if self.observation is not None and self.match is not None:
            try:
                world = sample_world(self.observation, random.Random(0))
            except Exception:   # no world to check against: the referee decides alone
                return value
            try:
                world.apply(self.match.seat, value)
            except IllegalAction as error:
                raise AnswerRefused(400, str(error)) from None
        return value

    # -- what the page reads

    def fail(self, problem: str) -> None:
        """The match cannot be played (a bot did not start, the referee went away)."""
        self.problem = problem
        self.pending = None
        self.touch()

    def finish_events(self, events: list[dict[str, Any]]) -> None:
        """The match is over: ``events`` are all the seat may see of it (its own and the
        public events, from the stored record), the plays after its last decision
        included, which no request carried."""
        if events[:len(self.events)] == self.events:
            self.events.extend(events[len(self.events):])
            self.touch()

    def mark_stored(self, match_id: str, command: str) -> None:
        self.stored = {"match_id": match_id, "viewer": f"/matches/{match_id}", "command": command}
        self.touch()

    def touch(self) -> None:
        """Something changed: wake the pages waiting for it."""
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed_since(self, version: int, timeout: float = LONG_POLL_SECONDS) -> None:
        """Return once :attr:`version` is past ``version``, or after ``timeout``, or at
        once when the seat is closed."""
        while self.version <= version and not self.closed:
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except TimeoutError:
                return

    def close(self) -> None:
        """The server stops: answer every page that waits for a change, now and later."""
        self.closed = True
        self.touch()

    def ask_again(self) -> None:
        """The page asks for another match: taken once the last one is stored, else
        :class:`AnswerRefused` (409)."""
        if self.stored is None:
            raise AnswerRefused(409, "a new match starts once this one is over and stored")
        if self.closed:
            raise AnswerRefused(409, "the play server is stopping")
        self.again = True
        self._again.set()
        self.touch()

    async def wait_again(self) -> None:
        """Return once the page has asked for another match."""
        await self._again.wait()

    def status(self) -> str:
        if self.closed:
            return "closed"
        if self.problem is not None:
            return "failed"
        if self.ended is not None:
            return "over"
        if self.pending is not None:
            return "your_turn"
        return "waiting" if self.match is not None else "starting"

    def state(self, events_from: int = 0) -> dict[str, Any]:
        """The seat's view as JSON: ``docs/play.md`` lists the fields. ``events`` holds
        the events from ``events_from`` on (a page that has the others)."""
        return {
            "version": self.version,
            "status": self.status(),
            "game": self.game,
            "again": self.again,
            "name": self.welcome or self.name,
            "match": asdict(self.match) if self.match is not None else None,
            "observation": self.observation,
            "decision": self.pending.to_json() if self.pending is not None else None,
            "events_from": min(events_from, len(self.events)),
            "events": self.events[events_from:],
            "faults": [asdict(fault) for fault in self.faults],
            "over": self.ended is not None,
            "result": asdict(self.ended) if self.ended is not None else None,
            "stored": self.stored,
            "problem": self.problem,
        }
