"""The hostile stream drivers: :class:`Session`, one ``Play`` stream of a fuzz bot that
answers every decision request with a behaviour drawn from :data:`BEHAVIOURS` and checks
the server's side of the contract on what it reads; :class:`Agent`, one fuzz bot (an
anchor stream kept open, reconnecting after every end, plus probe streams); and the
openings a probe stream starts with. They see the run they belong to only through
:class:`FuzzRun`, what they read of it (:class:`~fuzz.run.Fuzzer` is one), so
this module does not import the run's.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import grpc

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from arena.wire.protocol import WIRE_TO_KIND
from engine import VARIANT_RECORDS, VARIANTS
from fuzz.checks import Tally, Told
from fuzz.messages import bad_option, bad_prediction, hand_of, honest_prediction, odd_hello
from fuzz.settings import CLIENT_OPTIONS, FIXED_BAD_OPTIONS, U32, U64, FuzzSettings

BEHAVIOURS: tuple[tuple[str, int], ...] = (
    ("honest", 30), ("repeat", 5), ("answer_then_other", 3), ("bad_option", 13), ("wrong_id", 10),
    ("bad_prediction", 8), ("no_choice", 3), ("empty", 4), ("hello_again", 4), ("flood", 3), ("slow", 8),
    ("silent", 4), ("disconnect", 3), ("reconnect_early", 2), ("half_close", 1), ("big_flood", 1),
)


class FuzzRun(Protocol):
    """What a fuzz bot's streams read of the run they belong to: the server's address,
    every bot's name, the settings (the grace a reconnect waits past), the shared tally,
    whether fuzzing is over (``draining``: answer honestly now) or the whole run is
    (``finished``), and the probe to start beside an agent's anchor stream."""

    address: str
    names: list[str]
    settings: FuzzSettings
    tally: Tally
    draining: bool
    finished: asyncio.Event

    async def probe(self, agent: Agent, rng: random.Random) -> None: ...


def variant_asking(kind: int) -> str:
    """The first variant (in ``VARIANTS`` order) whose games ask for this wire decision
    kind: the guess for a request of a match whose start the stream did not see.

    >>> variant_asking(pb.PLAY), variant_asking(pb.PAY), variant_asking(pb.DECISION_KIND_UNSPECIFIED)
    ('classic', 'extreme', 'classic')
    """
    engine_kind = WIRE_TO_KIND.get(kind)
    return next((name for name, record in VARIANT_RECORDS.items() if engine_kind in record.decision_kinds),
                VARIANTS[0])


class Session:
    """One ``Play`` stream of a fuzz bot: reads everything, answers requests by behaviour."""

    def __init__(self, fuzzer: FuzzRun, agent: Agent, rng: random.Random, label: str) -> None:
        self.fuzzer, self.agent, self.rng, self.label = fuzzer, agent, rng, label
        self.tally = fuzzer.tally
        self.sid = f"{agent.name}#{agent.next_session()}"
        self.call: Any = None
        self.closed = False
        self.cancelled_by_us = False
        self.stopped = asyncio.Event()     # stop() was called: ends a stream that never reads
        self.variants: dict[str, str] = {}
        # What the server promised this stream, for the contract checks in _handle.
        self.hello: pb.Hello | None = None
        self.capacity = 1
        self.seated: set[tuple[str, int]] = set()        # (match, seat) started and not ended
        self.ended: set[tuple[str, int]] = set()
        self.ids_received: set[int] = set()
        self.banks: dict[str, int] = {}                 # MatchStarted.time_bank_ms by match
        self.tasks: set[asyncio.Task[None]] = set()
        self.own_ids: deque[int] = deque(maxlen=50)
        # Requests answered with a surely-refused answer (right id): a Fault must name
        # them before the seat's next request, else the server accepted it.
        self.expect_fault: dict[int, tuple[str, int, str]] = {}

    # -- writing

    async def send(self, message: pb.BotMessage, what: str, answers: int = 0) -> bool:
        """Write one message; False once the stream is over (the server closed it, or we did)."""
        if self.closed:
            return False
        try:
            await self.call.write(message)
        except Exception:   # AioRpcError, InvalidStateError, UsageError...: the call is over
            self.closed = True
            return False
        oneof = message.WhichOneof("msg") or "empty"
        if oneof == "hello" and self.hello is None:
            self.hello = message.hello
        self.tally.sent[oneof] += 1
        if self.tally.tracing:
            self.tally.trace(s=self.sid, what=what, req=answers, kind=oneof, size=message.ByteSize(),
                             msg=str(message).replace("\n", " ")[:160])
        return True

    def stop(self, how: str = "cancel") -> None:
        """End the stream from our side: cancel the call (a disconnect) or half-close it."""
        self.stopped.set()
        if self.call is None or self.closed:
            return
        if how == "half_close":
            self._spawn(self._half_close())
            return
        self.cancelled_by_us = True
        self.closed = True
        self.call.cancel()

    async def _half_close(self) -> None:
        with contextlib.suppress(Exception):
            await self.call.done_writing()
        self.closed = True

    # -- the stream's life

    async def run(self, opening: Callable[[Session], Awaitable[bool]], token: str | None = None,
                  lifetime: float | None = None, read: bool = True) -> str:
        """Open the stream, send ``opening``, then read and answer until it ends; returns
        how it ended (a status code name, or CANCELLED_BY_FUZZER)."""
        self.tally.streams += 1
        channel = grpc.aio.insecure_channel(self.fuzzer.address, options=CLIENT_OPTIONS)
        timer = asyncio.get_running_loop().call_later(lifetime, self.stop) if lifetime else None
        end, details = "UNKNOWN", ""
        try:
            metadata = (("authorization", f"Bearer {token or self.agent.token}"),)
            self.call = pb_grpc.ArenaStub(channel).Play(metadata=metadata)
            if await opening(self) and read:
                await self._read_all()
            elif not read and not self.closed:
                await self.stopped.wait()   # a stream that never reads: held open until its lifetime ends
            end = self._code_name(await self.call.code())
            details = await self.call.details() or ""
        except grpc.aio.AioRpcError as error:
            end, details = self._code_name(error.code()), error.details() or ""
        except asyncio.CancelledError:
            if not self.cancelled_by_us:
                raise
        finally:
            self.closed = True
            if timer is not None:
                timer.cancel()
            for task in list(self.tasks):
                task.cancel()
            if self.call is not None:
                self.call.cancel()
            await channel.close()
        end = "CANCELLED_BY_FUZZER" if self.cancelled_by_us else end
        self.tally.stream_ends[end] += 1
        self.tally.trace(s=self.sid, label=self.label, end=end, details=details[:200])
        return end

    def _code_name(self, code: Any) -> str:
        if self.cancelled_by_us:
            return "CANCELLED_BY_FUZZER"
        return code.name if code is not None else "NONE"

    async def _read_all(self) -> None:
        while True:
            try:
                message = await self.call.read()
            except asyncio.CancelledError:
                if self.cancelled_by_us:
                    return
                raise
            if message is grpc.aio.EOF:
                return
            self._handle(message)

    def _handle(self, message: pb.ArenaMessage) -> None:
        which = message.WhichOneof("msg")
        if which == "welcome":
            self.capacity = message.welcome.max_matches or max(1, self.hello.max_matches if self.hello else 1)
        elif which == "match_started":
            self._started(message.match_started)
        elif which == "match_ended":
            key = (message.match_ended.match_id, message.match_ended.seat)
            if key not in self.seated:
                self.contract("MatchEnded for a seat this stream was not told had started", key)
            self.seated.discard(key)
            self.ended.add(key)
        elif which == "fault":
            self._told(message.fault)
        elif which == "request":
            request = message.request
            key = (request.match_id, request.seat)
            if key not in self.seated:
                self.contract("a DecisionRequest for a seat this stream has no running match for "
                              + ("(it ended)" if key in self.ended else "(no MatchStarted)"), key)
            if request.request_id in self.ids_received:
                self.contract(f"request id {request.request_id} sent twice on one stream", key)
            self.ids_received.add(request.request_id)
            self._check_request(request, key)
            self._check_expected(request)
            self.tally.request_ids.append(request.request_id)
            self.tally.newest_id = max(self.tally.newest_id, request.request_id)
            self.tally.options_seen.extend(request.options[:3])
            self._spawn(self._answer(request))

    def _check_request(self, request: pb.DecisionRequest, key: tuple[str, int]) -> None:
        if request.kind != pb.PREDICT and not request.options:
            self.contract(f"a {pb.DecisionKind.Name(request.kind)} request with no options", key)
        observation, _ = hand_of(request)
        if observation.get("seat", request.seat) != request.seat:
            self.contract(f"the observation of seat {observation.get('seat')} in a request for seat {request.seat}",
                          key)
        if request.time_bank_ms > self.banks.get(request.match_id, request.time_bank_ms):
            self.contract(f"a bank of {request.time_bank_ms} ms, more than the match's "
                          f"{self.banks[request.match_id]} ms", key)

    def _started(self, started: pb.MatchStarted) -> None:
        self.banks[started.match_id] = started.time_bank_ms
        self.variants[started.match_id] = started.variant
        self.seated.add((started.match_id, started.seat))
        key = (started.match_id, started.seat)
        if self.hello is not None and self.hello.variants and started.variant not in self.hello.variants:
            self.contract(f"a seat in a match of variant {started.variant} for a stream whose Hello asked for "
                          f"{sorted(set(self.hello.variants))} only", key)
        matches = {match_id for match_id, _ in self.seated}
        if len(matches) > self.capacity:
            self.contract(f"{len(matches)} matches at once on a stream of capacity {self.capacity}", key)

    def contract(self, what: str, key: tuple[str, int]) -> None:
        """Something the protocol says the server never does: an anomaly (first few of each kind)."""
        kind = "contract: " + re.sub(r"\d+", "N", what.split(" (")[0])[:60]
        self.tally.behaviours[kind] += 1
        if self.tally.behaviours[kind] <= 3:
            self.tally.anomaly(f"{what}: match {key[0]} seat {key[1]}, session {self.sid} ({self.label})")

    def _told(self, fault: pb.Fault) -> None:
        if fault.match_id and not any(m == fault.match_id for m, _ in self.seated | self.ended):
            self.contract("a Fault for a match this stream holds no seat in", (fault.match_id, -1))
        if self.expect_fault.pop(fault.request_id, None) is not None:
            self.tally.behaviours["check_refused_ok"] += 1
        if not fault.match_id:
            self.tally.stray_told += 1
            return
        self.tally.told.setdefault((self.agent.name, fault.match_id), []).append(
            Told(kind=fault.kind, request_id=fault.request_id, forfeited=fault.forfeited, faults=fault.faults))

    def _check_expected(self, request: pb.DecisionRequest) -> None:
        """A surely-refused answer to an earlier request of this seat drew no Fault."""
        for request_id, (match_id, seat, what) in list(self.expect_fault.items()):
            if match_id == request.match_id and seat == request.seat and request_id < request.request_id:
                del self.expect_fault[request_id]
                self.tally.behaviours["check_refused_missed"] += 1
                self.tally.anomaly(f"accepted without a fault: {what} (request {request_id} of match {match_id} "
                                   f"seat {seat}, session {self.sid})")

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- answering

    def honest(self, request: pb.DecisionRequest, request_id: int | None = None) -> pb.BotMessage:
        rid = request.request_id if request_id is None else request_id
        if request.kind == pb.PREDICT:
            observation, _ = hand_of(request)
            return pb.BotMessage(action=pb.Action(request_id=rid, prediction=honest_prediction(self.rng, observation)))
        option = self.rng.choice(list(request.options)) if request.options else "0"
        return pb.BotMessage(action=pb.Action(request_id=rid, option=option))

    def wrong_id(self, request: pb.DecisionRequest) -> int:
        tally = self.tally
        choices: list[Callable[[], int]] = [
            lambda: 0, lambda: U64, lambda: 2**63, lambda: request.request_id + 1,
            lambda: max(0, request.request_id - 1),
            lambda: self.rng.choice(list(tally.request_ids)) if tally.request_ids else 7,
            lambda: self.rng.choice(list(self.own_ids)) if self.own_ids else 3,
            lambda: max(0, tally.newest_id + self.rng.randint(-40, 40)),   # likely another bot's open request
        ]
        for _ in range(10):
            rid = self.rng.choice(choices)()
            if rid != request.request_id:
                return rid
        return request.request_id + 1

    def junk(self, request: pb.DecisionRequest) -> tuple[pb.BotMessage, str]:
        """One small wrong message, for floods."""
        case = self.rng.randrange(6)
        if case == 0:
            return pb.BotMessage(), "empty"
        if case == 1:
            return pb.BotMessage(hello=pb.Hello(name=self.agent.name)), "hello"
        if case == 2:
            return self.honest(request, self.wrong_id(request)), "wrong_id"
        if case == 3:
            return self.honest(request), "duplicate"
        if case == 4:
            return pb.BotMessage(action=pb.Action(request_id=request.request_id,
                                                  option=self.rng.choice(FIXED_BAD_OPTIONS))), "bad_option"
        return pb.BotMessage(action=pb.Action(request_id=self.wrong_id(request))), "no_choice"

    async def _answer(self, request: pb.DecisionRequest) -> None:
        self.own_ids.append(request.request_id)
        if self.fuzzer.draining:
            await self.send(self.honest(request), "honest", request.request_id)
            return
        behaviour = self.rng.choices([b for b, _ in BEHAVIOURS], weights=[w for _, w in BEHAVIOURS])[0]
        self.tally.behaviours[behaviour] += 1
        await getattr(self, f"_b_{behaviour}")(request)

    async def _b_honest(self, request: pb.DecisionRequest) -> None:
        await self.send(self.honest(request), "honest", request.request_id)

    async def _b_repeat(self, request: pb.DecisionRequest) -> None:
        answer = self.honest(request)
        for _ in range(self.rng.choice((2, 2, 3, 10))):
            if not await self.send(answer, "repeat", request.request_id):
                return

    async def _b_answer_then_other(self, request: pb.DecisionRequest) -> None:
        if await self.send(self.honest(request), "honest", request.request_id):
            await asyncio.sleep(self.rng.choice((0, 0.01, 0.3)))
            await self.send(self.honest(request), "second_answer", request.request_id)

    async def _b_bad_option(self, request: pb.DecisionRequest) -> None:
        _, hand = hand_of(request)
        variant = self.variants.get(request.match_id) or variant_asking(request.kind)
        option = bad_option(self.rng, request, hand, variant, self.tally.options_seen)
        self.tally.behaviours["check_refused_sent"] += 1
        self.expect_fault[request.request_id] = (request.match_id, request.seat,
                                                 f"option {option[:20]!r} for a {pb.DecisionKind.Name(request.kind)} "
                                                 f"request with options {list(request.options)[:12]}")
        message = pb.BotMessage(action=pb.Action(request_id=request.request_id, option=option))
        if await self.send(message, "bad_option", request.request_id) and self.rng.random() < 0.3:
            await self.send(self.honest(request), "honest_after_bad", request.request_id)

    async def _b_wrong_id(self, request: pb.DecisionRequest) -> None:
        if await self.send(self.honest(request, self.wrong_id(request)), "wrong_id", request.request_id):
            if self.rng.random() < 0.5:
                await self.send(self.honest(request), "honest_after_wrong_id", request.request_id)

    async def _b_bad_prediction(self, request: pb.DecisionRequest) -> None:
        observation, _ = hand_of(request)
        if request.kind == pb.PREDICT:
            prediction, sure = bad_prediction(self.rng, observation)
            what = "bad_prediction"
        else:
            prediction, sure = honest_prediction(self.rng, observation), True
            what = "prediction_for_non_predict"
        if sure:
            self.tally.behaviours["check_refused_sent"] += 1
            self.expect_fault[request.request_id] = (request.match_id, request.seat,
                                                     f"{what} {str(prediction)[:60]!r} for a "
                                                     f"{pb.DecisionKind.Name(request.kind)} request")
        await self.send(pb.BotMessage(action=pb.Action(request_id=request.request_id, prediction=prediction)),
                        what, request.request_id)

    async def _b_no_choice(self, request: pb.DecisionRequest) -> None:
        self.tally.behaviours["check_refused_sent"] += 1
        self.expect_fault[request.request_id] = (request.match_id, request.seat, "an Action with no choice")
        await self.send(pb.BotMessage(action=pb.Action(request_id=request.request_id)), "no_choice",
                        request.request_id)

    async def _b_empty(self, request: pb.DecisionRequest) -> None:
        if await self.send(pb.BotMessage(), "empty", request.request_id) and self.rng.random() < 0.5:
            await self.send(self.honest(request), "honest_after_empty", request.request_id)

    async def _b_hello_again(self, request: pb.DecisionRequest) -> None:
        hello = pb.Hello(name=self.agent.name, version="again", max_matches=self.rng.choice((0, 1, U32)))
        if self.rng.random() < 0.3:
            hello, _ = odd_hello(self.rng, self.agent.name, self.fuzzer.names)
        if await self.send(pb.BotMessage(hello=hello), "hello_again", request.request_id) and self.rng.random() < 0.5:
            await self.send(self.honest(request), "honest_after_hello", request.request_id)

    async def _b_flood(self, request: pb.DecisionRequest) -> None:
        count = self.rng.choice((100, 300, 1000, 3000))
        for _ in range(count):
            message, what = self.junk(request)
            if not await self.send(message, f"flood_{what}", request.request_id):
                return
        if self.rng.random() < 0.5:
            await self.send(self.honest(request), "honest_after_flood", request.request_id)

    async def _b_big_flood(self, request: pb.DecisionRequest) -> None:
        # Near the 1 MiB limit each: what the server buffers and parses, not what it keeps.
        padding = "9" * self.rng.choice((200_000, 1_000_000))
        for _ in range(self.rng.choice((5, 50, 300))):
            rid = self.rng.choice((request.request_id, self.wrong_id(request)))
            if not await self.send(pb.BotMessage(action=pb.Action(request_id=rid, option=padding)), "big_flood",
                                   request.request_id):
                return

    async def _b_slow(self, request: pb.DecisionRequest) -> None:
        # Around the limit: some within it, some from the bank, some timeouts then late.
        await asyncio.sleep(self.rng.uniform(0.05, 1.2))
        await self.send(self.honest(request), "slow", request.request_id)

    async def _b_silent(self, request: pb.DecisionRequest) -> None:
        return

    async def _b_disconnect(self, request: pb.DecisionRequest) -> None:
        await asyncio.sleep(self.rng.choice((0, 0.05, 0.15)))
        self.agent.reconnect_delay = self.rng.choice((0.0, 0.2, 0.5, 2.5 * self.fuzzer.settings.grace))
        self.stop()

    async def _b_reconnect_early(self, request: pb.DecisionRequest) -> None:
        # The bot is back on a new stream before the old one is gone.
        self.agent.start_successor()
        await asyncio.sleep(self.rng.choice((0, 0.05, 0.3)))
        self.stop()

    async def _b_half_close(self, request: pb.DecisionRequest) -> None:
        self.agent.reconnect_delay = self.rng.choice((0.0, 0.3))
        self.stop("half_close")


def open_with_hello(hello: pb.Hello, what: str) -> Callable[[Session], Awaitable[bool]]:
    return open_with_message(pb.BotMessage(hello=hello), what)


# ---------------------------------------------------------------------- one fuzz bot


class Agent:
    """One fuzz bot: an anchor stream kept open (reconnecting after every end), plus probes."""

    def __init__(self, fuzzer: FuzzRun, name: str, token: str, rng: random.Random) -> None:
        self.fuzzer, self.name, self.token, self.rng = fuzzer, name, token, rng
        self.capacity = rng.choice((1, 1, 2, 3))
        self.in_use = 0                    # tables the organiser loops gave it
        self.reconnect_delay = 0.0
        self._sessions = 0
        self._successor: asyncio.Task[str] | None = None

    def next_session(self) -> int:
        self._sessions += 1
        return self._sessions

    def anchor_hello(self) -> pb.Hello:
        variants = self.rng.choice(([], ["classic", "extreme"], ["extreme", "classic", "classic"]))
        max_matches = 0 if self.capacity == 1 and self.rng.random() < 0.5 else self.capacity
        return pb.Hello(name=self.name, version=f"fuzz-{self.rng.randrange(1000)}", variants=variants,
                        max_matches=max_matches)

    def _anchor_task(self) -> asyncio.Task[str]:
        session = Session(self.fuzzer, self, random.Random(self.rng.getrandbits(64)), "anchor")

        async def opening(s: Session) -> bool:
            return await s.send(pb.BotMessage(hello=self.anchor_hello()), "hello")
        return asyncio.ensure_future(session.run(opening))

    def start_successor(self) -> None:
        if self._successor is None and not self.fuzzer.finished.is_set():
            self._successor = self._anchor_task()

    async def run_anchor(self) -> None:
        """Keep one valid stream open, so the organiser can always seat this bot."""
        while not self.fuzzer.finished.is_set():
            task, self._successor = self._successor or self._anchor_task(), None
            try:
                await task
            except asyncio.CancelledError:
                self.close()
                raise
            except Exception as error:   # the fuzzer's own bug: note it and go on
                self.fuzzer.tally.anomaly(f"fuzzer error in {self.name}'s stream: {error!r}"[:300])
            if self._successor is None and not self.fuzzer.finished.is_set():
                delay, self.reconnect_delay = self.reconnect_delay, 0.0
                # A stream the server ended (not us) comes back soon, as the SDK does.
                await asyncio.sleep(0.05 + (delay if not self.fuzzer.draining else 0.0))

    def close(self) -> None:
        if self._successor is not None:
            self._successor.cancel()

    async def run_probes(self) -> None:
        """Extra streams doing what a bot should not, one every 0.1-1.5 s."""
        running: set[asyncio.Task[None]] = set()
        while not self.fuzzer.draining:
            await asyncio.sleep(self.rng.uniform(0.1, 1.5))
            if len(running) < 3 and not self.fuzzer.draining:
                task = asyncio.ensure_future(self.fuzzer.probe(self, random.Random(self.rng.getrandbits(64))))
                running.add(task)
                task.add_done_callback(running.discard)
        for task in list(running):
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


# ---------------------------------------------------------------------- openings of probe streams


async def no_opening(session: Session) -> bool:
    return True


def open_with_message(message: pb.BotMessage, what: str) -> Callable[[Session], Awaitable[bool]]:
    async def opening(session: Session) -> bool:
        return await session.send(message, what)
    return opening


def hellos_opening(name: str, count: int) -> Callable[[Session], Awaitable[bool]]:
    async def opening(session: Session) -> bool:
        for _ in range(count):
            if not await session.send(pb.BotMessage(hello=pb.Hello(name=name, version="repeated")), "hello_repeated"):
                return False
        return True
    return opening


def stray_flood_opening(name: str, count: int, rng: random.Random,
                        tally: Tally) -> Callable[[Session], Awaitable[bool]]:
    """Hello, then ``count`` answers to requests this stream never got (ids of other
    bots' requests among them)."""
    async def opening(session: Session) -> bool:
        if not await session.send(pb.BotMessage(hello=pb.Hello(name=name, version="stray")), "hello"):
            return False
        for _ in range(count):
            rid = rng.choice((0, U64, max(0, tally.newest_id + rng.randint(-40, 40)),
                              rng.choice(list(tally.request_ids)) if tally.request_ids else 1))
            message = rng.choice((pb.BotMessage(), pb.BotMessage(action=pb.Action(request_id=rid, option="0")),
                                  pb.BotMessage(action=pb.Action(request_id=rid, prediction=pb.Prediction()))))
            if not await session.send(message, "stray"):
                return False
        return True
    return opening


def half_close_opening(name: str) -> Callable[[Session], Awaitable[bool]]:
    async def opening(session: Session) -> bool:
        if not await session.send(pb.BotMessage(hello=pb.Hello(name=name, version="half")), "hello"):
            return False
        with contextlib.suppress(Exception):
            await session.call.done_writing()
        return True
    return opening
