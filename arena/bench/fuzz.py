"""A seeded protocol fuzzer for the arena: random well- and ill-formed bot messages
against a real ``arena serve`` process, while honest sample bots play beside them.

Run it as ``arena bench fuzz --seconds 60 --seed 1 [--json] [--workdir DIR]`` (exit
code 1 when an invariant was violated), or from Python::

    from arena.bench.fuzz import run_fuzz
    report = run_fuzz(seconds=30, seed=7)
    assert report.ok, report.violations

What one run does:

1. registers bots in a fresh SQLite database (``fuzz-0``..``fuzz-N`` and the sample
   bots ``random``, ``greedy``, ``heuristic``, ``cautious``) and starts
   ``python -m arena.cli serve --port 0`` on 127.0.0.1 with short limits (decision
   0.2 s, bank 0.5 s, grace 1 s), the admin token in ``ARENA_ADMIN_TOKEN``;
2. starts the sample bots as their own processes (``python -m sample_bots.X``);
3. runs the fuzz bots in this process: each keeps an *anchor* stream (a valid Hello)
   and answers its decision requests with a random behaviour per request: an honest
   answer, options that do not exist (random strings, card codes not in the hand,
   ``"00"``, ``"01"``, ``"-1"``, ``"x7"``, ``"b14"``, ``"W5"``, unicode, empty, up to
   900 KB long), wrong request ids (0, 2**64-1, ids of other seats and requests,
   ids next to the newest seen), predictions for non-PREDICT requests and options
   for PREDICT, predictions with bad colours, huge counts and bad ``take_from`` seats,
   Actions with no choice, empty messages, Hello again, repeated answers, floods of
   hundreds or thousands of messages, slow answers, no answer, half-closes and
   mid-match disconnects (the call is cancelled) with reconnects using the same token,
   sometimes before the old stream is gone, and floods of near-1 MiB messages.
   Beside that, *probes* open extra streams: a bad token (or another bot's, or the
   admin's), no Hello first, Hello with another or a huge name (up to and past the
   1 MiB limit), unknown variants, a huge version, ``max_matches`` 0 or 2**32-1,
   Hello repeated, floods from a stream that holds no seat (read or never read), a
   stream that never says Hello, bursts of up to 40 streams of one bot; and calls
   beside Play: spectators of running and unknown matches (reading, slow, or never
   reading), ListMatches/GetLeaderboard with odd arguments, organiser calls with a
   wrong token or a bad config;
4. organises matches itself with the ``RunMatch`` organiser call: tables mixing fuzz
   and honest seats (short limits, ``max_faults`` 1 to 1000 so faulty seats go on to
   later decisions too) and honest-only tables (generous limits), classic and extreme,
   3-5 players, 1-4 rounds, varied bidding rules;
5. after ``seconds`` it stops fuzzing (fuzz bots answer honestly so running matches end
   soon), waits for every match, and checks the invariants.

The invariants (a violation makes ``FuzzReport.ok`` False):

1. the server process is still up and answers: health check SERVING, ListMatches works;
2. every honest-only match completed (``status == "completed"``) with 0 faults;
3. every match with a fuzz seat completed, its stored record holds the same faults as
   the record RunMatch returned, and every ``Fault`` a fuzz bot was sent (but the
   reminders after a reconnect) is among its seat's stored faults (a ``forfeited`` one
   on a forfeited seat);
4. the server's resident memory (VmRSS, sampled every 0.25 s) stayed under
   ``rss_limit_mb`` (400 MB by default).

Refusals by the server (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT,
RESOURCE_EXHAUSTED, a stream closed under a flood, ...) are normal: the fuzz bot
counts them (``stream_ends``; a stream the server closes while the fuzzer is still
writing into it often ends INTERNAL on this side) and reconnects. The report also
lists *anomalies*, not invariant violations but signs of a bug: an answer that must be
refused (an option not among the request's options, a prediction for another kind of
decision or one no rule allows, an Action with no choice; sent with the right request
id) that drew no ``Fault`` before the seat's next request, i.e. the server accepted
it (``behaviours`` counts ``check_refused_sent/ok/missed``); faults other than
timeouts charged to honest seats of fuzzed matches; and breaches of the server's side
of the contract seen on a stream (``behaviours`` counts them as ``contract: ...``): a
request or MatchEnded for a seat the stream was not told had started, a request id
sent twice, a Fault for a match the stream holds no seat in, a request without options
(not PREDICT), an observation of another seat, a bank above the match's, a seat of a
variant the Hello did not ask for, more matches at once than the stream's capacity.
The server's stderr is summarised in ``server_tracebacks`` and ``server_log``.

Every random choice comes from ``random.Random`` instances derived from ``seed`` (one
per fuzz bot, probe loop and table loop), so the match configurations and each fuzz
bot's choices repeat with the seed; what interleaves with what still depends on timing.
With ``workdir`` the database, the server's log, the bots' logs and ``trace.jsonl``
(every message the fuzz bots sent with the session, the case and the request it
answered, each match's configuration, and how each stream ended) are kept there for
reproducing a finding. ``FuzzSettings.server_command`` fuzzes another build of the
server (e.g. an older commit unpacked elsewhere, run with ``PYTHONPATH`` and ``-P``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

# ---------------------------------------------------------------------- settings

HONEST_BOTS: dict[str, str] = {
    "random": "sample_bots.random_bot",
    "greedy": "sample_bots.greedy_bot",
    "heuristic": "sample_bots.heuristic_bot",
    "cautious": "sample_bots.cautious_bot",
}
U32 = 2**32 - 1
U64 = 2**64 - 1
# The server refuses messages over 1 MiB; the fuzzer's own limits are far above anything it gets.
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 64 * 1024 * 1024),
                  ("grpc.max_send_message_length", 64 * 1024 * 1024)]
MESSAGE_LIMIT = 1024 * 1024
COLOURS = ("red", "yellow", "green", "blue", "purple")
CLASSIC_CARDS = tuple(f"{s}{r}" for s in "bgry" for r in range(1, 14)) + tuple(
    f"{k}{i}" for k in "WJ" for i in range(1, 5))
EXTREME_CARDS = tuple(f"{c}{r}" for c in "rygbp" for r in range(1, 16))
# Options a bot must never get accepted: none of them is ever in a request's options.
FIXED_BAD_OPTIONS = ("00", "01", "-1", "x7", "b14", "W5", "", " ", "J0", "W0", "r0", "-0", "+1", "1.0",
                     "1e1", "0x1", "null", "true", "[]", "{}", "\U0001F0A1", "ß", "日本", "\x00", "\ufeff1",
                     "١", "blue ", "BLUE", "pink", "white", "black", "red\n", "b7\n", "b 7", "b07")


@dataclass
class FuzzSettings:
    """Everything a run uses besides its seed and length."""

    fuzz_bots: int = 5
    fuzz_tables: int = 3           # concurrent match loops with fuzz seats
    honest_tables: int = 1         # concurrent match loops with sample bots only
    honest_slots: int = 8          # --max-matches of each sample bot process
    move_time: float = 0.2         # fuzzed matches (and the server's defaults)
    time_bank: float = 0.5
    grace: float = 1.0
    honest_move_time: float = 2.0  # honest-only matches: no timeout on a loaded machine
    honest_time_bank: float = 20.0
    rss_limit_mb: float = 400.0
    match_timeout: float = 180.0   # RunMatch deadline: a match still running then is a violation
    # The server to fuzz, before its own options; empty: this checkout's `arena serve`.
    # (E.g. ["env", "PYTHONPATH=/tmp/old", sys.executable, "-m", "arena.cli", "serve"] for another version.)
    server_command: tuple[str, ...] = ()
    drain_timeout: float = 120.0   # how long the end waits for running matches


@dataclass
class FuzzReport:
    """What a run did and found. ``ok`` is False when an invariant was violated."""

    seed: int
    seconds: float
    elapsed_s: float = 0.0
    messages_sent: dict[str, int] = field(default_factory=dict)      # by BotMessage oneof: hello, action, empty
    behaviours: dict[str, int] = field(default_factory=dict)         # what was sent, by fuzz case
    probes: dict[str, int] = field(default_factory=dict)             # extra streams, by kind
    streams: int = 0
    stream_ends: dict[str, int] = field(default_factory=dict)        # by final status (CANCELLED_BY_FUZZER, ...)
    matches_fuzzed: int = 0
    matches_honest: int = 0
    run_match_errors: dict[str, int] = field(default_factory=dict)   # by status code (not violations)
    faults_by_kind: dict[str, int] = field(default_factory=dict)     # every stored fault
    fuzz_seat_faults: dict[str, int] = field(default_factory=dict)
    honest_seat_faults_in_fuzzed: dict[str, int] = field(default_factory=dict)
    forfeits: int = 0
    faults_told: int = 0                                              # Fault messages the fuzz bots got
    stray_faults_told: int = 0                                        # ... of them with no match
    peak_rss_mb: float = 0.0
    rss_timeline_mb: list[float] = field(default_factory=list)       # every 5 s from the start of fuzzing
    final_rss_mb: float = 0.0
    server_alive: bool = False
    violations: list[str] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    server_tracebacks: list[str] = field(default_factory=list)       # "N x <summary>" from its stderr
    server_log: list[str] = field(default_factory=list)              # its other stderr lines, "N x <line>"
    workdir: str | None = None

    @property
    def ok(self) -> bool:
        return not self.violations

    def total_sent(self) -> int:
        return sum(self.messages_sent.values())

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok, "total_sent": self.total_sent()}

    def figures(self) -> dict[str, Any]:
        """Flat figures for ``arena bench fuzz`` (lists become counts; details in ``to_json``)."""
        out: dict[str, Any] = {"seed": self.seed, "fuzz_seconds": self.seconds, "elapsed_s": round(self.elapsed_s, 1),
                               "messages_sent": self.total_sent()}
        out.update({f"sent_{k}": v for k, v in sorted(self.messages_sent.items())})
        out.update({"streams": self.streams, "matches_fuzzed": self.matches_fuzzed,
                    "matches_honest": self.matches_honest, "forfeits": self.forfeits})
        out.update({f"faults_{k}": v for k, v in sorted(self.faults_by_kind.items())})
        out.update({f"run_match_error_{k}": v for k, v in sorted(self.run_match_errors.items())})
        out.update({"faults_told": self.faults_told, "peak_rss_mb": round(self.peak_rss_mb, 1),
                    "final_rss_mb": round(self.final_rss_mb, 1), "server_alive": str(self.server_alive).lower(),
                    "server_tracebacks": len(self.server_tracebacks), "anomalies": len(self.anomalies),
                    "violations": len(self.violations)})
        return out


# ---------------------------------------------------------------------- shared state


@dataclass
class Told:
    """A Fault a fuzz bot received."""

    kind: str
    request_id: int
    forfeited: bool
    faults: int              # the seat's faults so far, as the Fault said


class Tally:
    """Counters and shared knowledge of all fuzz sessions (one event loop: no locks)."""

    def __init__(self, trace: Any | None) -> None:
        self.sent: Counter[str] = Counter()
        self.behaviours: Counter[str] = Counter()
        self.probes: Counter[str] = Counter()
        self.stream_ends: Counter[str] = Counter()
        self.streams = 0
        # Request ids seen by any fuzz session: answers "for another seat or request".
        self.request_ids: deque[int] = deque(maxlen=2000)
        self.newest_id = 0
        self.options_seen: deque[str] = deque(maxlen=500)
        self.told: dict[tuple[str, str], list[Told]] = {}
        self.stray_told = 0
        self.anomalies: list[str] = []
        self._trace = trace

    @property
    def tracing(self) -> bool:
        return self._trace is not None

    def trace(self, **entry: Any) -> None:
        if self._trace is not None:
            self._trace.write(json.dumps(entry, ensure_ascii=True) + "\n")

    def anomaly(self, text: str) -> None:
        if len(self.anomalies) < 200:
            self.anomalies.append(text)


# ---------------------------------------------------------------------- message makers


def random_text(rng: random.Random, length: int) -> str:
    """Random text mixing ASCII, control characters, Latin-1/CJK and emoji (never a lone
    surrogate: protobuf strings must be valid UTF-8)."""
    ranges = ((0x20, 0x7E), (0x00, 0x1F), (0xA0, 0x2FF), (0x4E00, 0x4F00), (0x1F300, 0x1F64F))
    out = []
    for _ in range(length):
        low, high = rng.choice(ranges)
        out.append(chr(rng.randint(low, high)))
    return "".join(out)


def long_text(rng: random.Random) -> str:
    """A long string of 1 KB to 900 KB of UTF-8 (under the 1 MiB message limit)."""
    size = rng.choice((1_000, 10_000, 100_000, 900_000))
    unit = rng.choice(("9", "b7", "x", "é", "\U0001F0A1"))
    return unit * (size // len(unit.encode()))


def near_miss(rng: random.Random, request: pb.DecisionRequest, hand: list[str], variant: str) -> str:
    """An option shaped almost like a right one for this kind of decision: a legal one
    written differently, a neighbour out of range, a card or colour of the other variant."""
    options = list(request.options) or ["0"]
    legal = rng.choice(options)
    if request.kind == pb.BID:
        return rng.choice(("0" + legal, "+" + legal, " " + legal, legal + " ", legal + ".0", "-0", "00", "01",
                           str(len(options)), "-1", "١", legal + "\x00"))
    if request.kind == pb.PLAY:
        other = "p3" if variant == "classic" else rng.choice(("W1", "J1"))
        return rng.choice((legal.upper(), legal[0] + "0" + legal[1:], other, "x7", "b14", "W5", "b0",
                           rng.choice([c for c in hand if c not in options] or ["W5"])))
    return rng.choice((legal.upper(), legal.capitalize(), legal + " ", "pink",
                       "purple" if variant == "classic" else "white", legal[:3], "blue" if legal != "blue" else "red"))


def bad_option(rng: random.Random, request: pb.DecisionRequest, hand: list[str], variant: str,
               seen: deque[str]) -> str:
    """An option string that is not among ``request.options``."""
    options = set(request.options)
    deck = EXTREME_CARDS if variant == "extreme" else CLASSIC_CARDS
    makers: list[Callable[[], str]] = [
        lambda: near_miss(rng, request, hand, variant),
        lambda: near_miss(rng, request, hand, variant),
        lambda: near_miss(rng, request, hand, variant),
        lambda: rng.choice(FIXED_BAD_OPTIONS),
        lambda: random_text(rng, rng.randint(1, 24)),
        lambda: rng.choice([c for c in deck if c not in hand] or ["b14"]),   # a real card not held
        lambda: rng.choice(hand) if hand else "b14",   # held but maybe not playable now (not a lead colour)
        lambda: str(len(options) + rng.choice((0, 1, 5, 999))),               # a bid out of range
        lambda: rng.choice(list(seen)) if seen else "r1",                      # another request's option
        lambda: rng.choice(COLOURS + ("white", "black")),
        lambda: rng.choice(list(options) or ["0"]) + rng.choice((" ", "\n", "0", "x")),
        lambda: long_text(rng) if rng.random() < 0.3 else "b" + "1" * rng.randint(2, 50),
    ]
    for _ in range(20):
        option = rng.choice(makers)()
        if option not in options:
            return option
    return "\x00not-an-option"


def exchange(observation: dict[str, Any]) -> tuple[str, int, int] | None:
    """A colour the supply lacks one more token of that another seat holds, while a
    white token is left: (colour, supply count, holder); None if there is none."""
    supply = observation.get("supply") or {}
    holdings = observation.get("tokens") or []
    me = observation.get("seat")
    if not isinstance(supply, dict) or supply.get("white", 0) < 1:
        return None
    for colour in COLOURS:
        for holder, held in enumerate(holdings):
            if holder != me and isinstance(held, dict) and held.get(colour, 0) > 0:
                return colour, int(supply.get(colour, 0)), holder
    return None


def honest_prediction(rng: random.Random, observation: dict[str, Any]) -> pb.Prediction:
    """A prediction that is always legal: the destroyer while free, a token taken from
    another seat in exchange for a white one (naming it in take_from, or by default), or
    up to two tokens of colours the supply has (the sample random bot's rule)."""
    if observation.get("destroyer_free") and rng.random() < 0.1:
        return pb.Prediction(destroyer=True)
    found = exchange(observation)
    if found is not None and rng.random() < 0.3:
        colour, in_supply, holder = found
        named = [pb.TakeFrom(colour=colour, seat=holder)] if rng.random() < 0.5 else []
        return pb.Prediction(tokens={colour: in_supply + 1}, take_from=named)
    supply = observation.get("supply") or {}
    colours = [c for c in COLOURS if supply.get(c, 0) > 0]
    chosen = rng.sample(colours, min(len(colours), rng.randint(0, 2)))
    return pb.Prediction(tokens={c: 1 for c in chosen})


def bad_take_from(rng: random.Random, observation: dict[str, Any]) -> pb.Prediction | None:
    """Tokens beyond the supply with a take_from the engine must refuse: our own seat, a
    seat out of range, one pair too many or too few, or a colour the supply has."""
    supply = observation.get("supply") or {}
    if not isinstance(supply, dict):
        return None
    players = len(observation.get("scores") or [0, 0, 0])
    me = observation.get("seat", 0)
    colour = rng.choice(COLOURS)
    short = rng.randint(1, 2)
    wanted = int(supply.get(colour, 0)) + short
    others = [s for s in range(players) if s != me]
    case = rng.randrange(4)
    if case == 0:
        pairs = [(colour, rng.choice((me, players, 99, U32)))] * short
    elif case == 1:
        pairs = [(colour, rng.choice(others))] * (short + 1)
    elif case == 2 and short > 1:
        pairs = [(colour, rng.choice(others))]
    else:   # the supply has what is asked: take_from may not name it
        wanted = max(1, int(supply.get(colour, 0)))
        pairs = [(colour, rng.choice(others))]
        if not supply.get(colour):
            return None
    return pb.Prediction(tokens={colour: wanted}, take_from=[pb.TakeFrom(colour=c, seat=s) for c, s in pairs])


def bad_prediction(rng: random.Random, observation: dict[str, Any]) -> tuple[pb.Prediction, bool]:
    """A prediction that breaks the rules; returns it and whether it is surely refused
    (some shapes, such as a destroyer taken when it may be free, can be legal)."""
    players = len(observation.get("scores") or [0, 0, 0])
    if rng.random() < 0.3:
        prediction = bad_take_from(rng, observation)
        if prediction is not None:
            return prediction, True
    case = rng.randrange(8)
    if case == 0:   # no colour at all
        return pb.Prediction(tokens={rng.choice(("pink", "", "RED", "白", "red ", random_text(rng, 5))): 1}), True
    if case == 1:   # white and black are token colours, never to be predicted
        return pb.Prediction(tokens={rng.choice(("white", "black")): rng.randint(1, 3)}), True
    if case == 2:   # more than exist
        return pb.Prediction(tokens={rng.choice(COLOURS): rng.choice((16, 99, U32))}), True
    if case == 3:   # destroyer and tokens together
        return pb.Prediction(destroyer=True, tokens={rng.choice(COLOURS): 1}), True
    if case == 4:   # take_from a seat that does not exist
        colour = rng.choice(COLOURS)
        return pb.Prediction(tokens={colour: rng.randint(1, 3)}, take_from=[
            pb.TakeFrom(colour=colour, seat=rng.choice((players, 99, U32)))]), False
    if case == 5:   # take_from naming no colour
        return pb.Prediction(take_from=[pb.TakeFrom(colour=rng.choice(("pink", "", "white")), seat=0)]), True
    if case == 6:   # a long take_from list (tens of KB)
        colour = rng.choice(COLOURS)
        pairs = [pb.TakeFrom(colour=colour, seat=rng.randrange(players)) for _ in range(rng.choice((50, 5000)))]
        return pb.Prediction(tokens={colour: 1}, take_from=pairs), False
    return pb.Prediction(destroyer=True), False


def odd_hello(rng: random.Random, name: str, other_names: list[str]) -> tuple[pb.Hello, str]:
    """A Hello with odd fields, and what is odd about it."""
    case = rng.randrange(9)
    if case == 0:
        return pb.Hello(name=rng.choice(other_names), version="x"), "hello_other_name"
    if case == 1:   # just under, or just over, the 1 MiB message limit
        size = rng.choice((1_000, 100_000, MESSAGE_LIMIT - 64, MESSAGE_LIMIT + 16))
        return pb.Hello(name=name[0] * size), "hello_huge_name"
    if case == 2:
        return pb.Hello(name=random_text(rng, rng.randint(0, 40))), "hello_random_name"
    if case == 3:
        variants = rng.choice((["bogus"], ["CLASSIC"], [""], ["classic"] * 1000, [random_text(rng, 8)],
                               ["classic", "extreme", "bogus"]))
        return pb.Hello(name=name, variants=variants), "hello_odd_variants"
    if case == 4:
        return pb.Hello(name=name, version=long_text(rng)), "hello_huge_version"
    if case == 5:
        return pb.Hello(name=name, max_matches=U32), "hello_max_matches_huge"
    if case == 6:
        return pb.Hello(name=name, max_matches=0, variants=["extreme"]), "hello_max_matches_0"
    if case == 7:
        return pb.Hello(name=name, version=random_text(rng, 30), max_matches=rng.randint(1, 50)), "hello_random"
    return pb.Hello(), "hello_empty"


def hand_of(request: pb.DecisionRequest) -> tuple[dict[str, Any], list[str]]:
    """The request's observation and the seat's hand (empty if unreadable)."""
    try:
        observation = json.loads(request.observation_json)
    except ValueError:
        return {}, []
    hand = observation.get("hand") if isinstance(observation, dict) else None
    return (observation if isinstance(observation, dict) else {}), [c for c in hand or [] if isinstance(c, str)]


# ---------------------------------------------------------------------- one stream


BEHAVIOURS: tuple[tuple[str, int], ...] = (
    ("honest", 30), ("repeat", 5), ("answer_then_other", 3), ("bad_option", 13), ("wrong_id", 10),
    ("bad_prediction", 8), ("no_choice", 3), ("empty", 4), ("hello_again", 4), ("flood", 3), ("slow", 8),
    ("silent", 4), ("disconnect", 3), ("reconnect_early", 2), ("half_close", 1), ("big_flood", 1),
)


class Session:
    """One ``Play`` stream of a fuzz bot: reads everything, answers requests by behaviour."""

    def __init__(self, fuzzer: Fuzzer, agent: Agent, rng: random.Random, label: str) -> None:
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
        variant = self.variants.get(request.match_id, "extreme" if request.kind in (pb.PREDICT, pb.PAY) else "classic")
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

    def __init__(self, fuzzer: Fuzzer, name: str, token: str, rng: random.Random) -> None:
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


# ---------------------------------------------------------------------- processes


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MB (VmRSS), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def start_server(workdir: Path, settings: FuzzSettings,
                       admin_token: str) -> tuple[asyncio.subprocess.Process, str]:
    """``arena serve`` on 127.0.0.1, port 0; returns the process and the address it printed."""
    log = open(workdir / "server.log", "ab")
    try:
        command = settings.server_command or (sys.executable, "-m", "arena.cli", "serve")
        process = await asyncio.create_subprocess_exec(
            *command, "--host", "127.0.0.1", "--port", "0",
            "--db", str(workdir / "arena.db"), "--move-time", str(settings.move_time),
            "--time-bank", str(settings.time_bank), "--grace", str(settings.grace), "--quiet",
            stdout=asyncio.subprocess.PIPE, stderr=log, stdin=asyncio.subprocess.DEVNULL,
            env={**os.environ, "ARENA_ADMIN_TOKEN": admin_token, "PYTHONUNBUFFERED": "1"})
    finally:
        log.close()
    assert process.stdout is not None
    try:
        while True:
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            if not line:
                raise RuntimeError(f"arena serve exited before listening; see {workdir / 'server.log'}")
            found = re.match(r"arena listening on (\S+):(\d+)", line)
            if found:
                break
    except BaseException:
        await stop_process(process)
        raise
    # Keep draining stdout so the server never blocks on a full pipe.
    asyncio.ensure_future(_drain(process.stdout))
    return process, f"{found.group(1)}:{found.group(2)}"


async def _drain(stream: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await stream.read(65536):
            pass


async def start_honest_bot(workdir: Path, name: str, module: str, address: str, token: str,
                           slots: int) -> asyncio.subprocess.Process:
    log = open(workdir / f"bot-{name}.log", "ab")
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, "--arena", address, "--token", token, "--name", name,
            "--max-matches", str(slots), "--give-up-after", "30",
            stdout=log, stderr=log, stdin=asyncio.subprocess.DEVNULL,
            env={**os.environ, "ARENA_PARENT_PID": str(os.getpid()), "GRPC_VERBOSITY": "ERROR"})
    finally:
        log.close()


async def stop_process(process: asyncio.subprocess.Process, timeout: float = 10.0) -> int | None:
    """SIGTERM, then SIGKILL after ``timeout``; returns the exit code."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return process.returncode


def summarise_log(text: str, limit: int = 40) -> tuple[list[str], list[str]]:
    """The tracebacks and the other lines of the server's stderr, each as "N x summary"
    (ids and numbers blanked so that repeats group together)."""
    counts: Counter[str] = Counter()
    others: Counter[str] = Counter()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Traceback (most recent call last):"):
            before = lines[i - 1].strip() if i > 0 else ""
            j = i + 1
            while j < len(lines) and (lines[j].startswith(" ") or not lines[j].strip()):
                j += 1
            where = [ln.strip() for ln in lines[i + 1:j] if ln.strip().startswith("File ")]
            error = lines[j].strip() if j < len(lines) else "?"
            counts[_blank(f"{before} | {where[-1] if where else ''} | {error}")] += 1
            i = j + 1
            continue
        if line.strip() and not line.startswith(" ") and not lines[min(i + 1, len(lines) - 1)].startswith("Traceback"):
            others[_blank(line.strip())] += 1
        i += 1
    return ([f"{n} x {text}" for text, n in counts.most_common(limit)],
            [f"{n} x {text}" for text, n in others.most_common(limit)])


def _blank(text: str) -> str:
    text = re.sub(r"^\d\d:\d\d:\d\d ", "", text)
    text = re.sub(r"\b[0-9a-f]{16}\b", "<id>", text)
    return re.sub(r"\d+", "N", text)[:400]


# ---------------------------------------------------------------------- the run


@dataclass
class Played:
    """A match the organiser loops ran: what was asked and what came back."""

    match_id: str
    fuzzed: bool
    bots: list[str]
    fuzz_bots: list[str]
    record: dict[str, Any] | None = None
    error: str | None = None


class Fuzzer:
    """One run: the processes, the fuzz bots, the organiser loops and the checks."""

    def __init__(self, seconds: float, seed: int, settings: FuzzSettings, workdir: Path, trace: Any) -> None:
        self.seconds, self.seed, self.settings, self.workdir = seconds, seed, settings, workdir
        self.tally = Tally(trace)
        self.report = FuzzReport(seed=seed, seconds=seconds, workdir=str(workdir))
        self.admin_token = f"fuzz-admin-{secrets.token_hex(8)}"
        self.address = ""
        self.server: asyncio.subprocess.Process | None = None
        self.bots: list[asyncio.subprocess.Process] = []
        self.agents: list[Agent] = []
        self.names: list[str] = []
        self.tokens: dict[str, str] = {}
        self.abort = asyncio.Event()       # the server died: stop early
        self.played: list[Played] = []
        self.draining = False
        self.finished = asyncio.Event()
        self.deadline = 0.0
        self._match_serial = 0
        self._admin_channel: grpc.aio.Channel | None = None

    # -- setup

    def register(self) -> dict[str, str]:
        """Tokens for every bot, registered in a fresh database (what `arena bot register` does)."""
        from arena.results import Store

        names = [f"fuzz-{i}" for i in range(self.settings.fuzz_bots)] + list(HONEST_BOTS)
        with Store(str(self.workdir / "arena.db")) as store:
            return {name: store.register_bot(name) for name in names}

    async def start(self) -> None:
        tokens = self.tokens = await asyncio.to_thread(self.register)
        self.names = list(tokens)
        self.server, self.address = await start_server(self.workdir, self.settings, self.admin_token)
        for name, module in HONEST_BOTS.items():
            self.bots.append(await start_honest_bot(self.workdir, name, module, self.address, tokens[name],
                                                    self.settings.honest_slots))
        self._admin_channel = grpc.aio.insecure_channel(self.address, options=CLIENT_OPTIONS)
        for i in range(self.settings.fuzz_bots):
            name = f"fuzz-{i}"
            self.agents.append(Agent(self, name, tokens[name], random.Random(f"{self.seed}/agent/{i}")))
        await self.wait_connected(list(HONEST_BOTS), 60)

    def admin(self) -> tuple[pb_grpc.ArenaStub, tuple[tuple[str, str], ...]]:
        assert self._admin_channel is not None
        return pb_grpc.ArenaStub(self._admin_channel), (("authorization", f"Bearer {self.admin_token}"),)

    async def wait_connected(self, names: list[str], timeout: float) -> None:
        stub, metadata = self.admin()
        deadline = time.monotonic() + timeout
        while True:
            bots = await stub.ListBots(pb.ListBotsRequest(), metadata=metadata, timeout=10)
            missing = set(names) - {b.name for b in bots.bots}
            if not missing:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"bots not connected after {timeout:g} s: {sorted(missing)}")
            await asyncio.sleep(0.2)

    # -- probes: extra streams

    async def probe(self, agent: Agent, rng: random.Random) -> None:
        """One extra stream; an exception here is the fuzzer's own bug: counted, not raised."""
        try:
            await self._probe(agent, rng)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.tally.probes[f"fuzzer_error_{type(error).__name__}"] += 1
            self.tally.anomaly(f"fuzzer error in a probe: {error!r}"[:300])

    async def _probe(self, agent: Agent, rng: random.Random) -> None:
        kind = rng.choice(("bad_token", "no_hello_first", "odd_hello", "odd_hello", "hello_repeated",
                           "stray_flood", "stray_flood_unread", "never_hello", "duplicate_stream", "half_close",
                           "stream_burst", "spectate", "public_calls"))
        self.tally.probes[kind] += 1
        if kind == "spectate":
            await self.spectate(rng)
            return
        if kind == "public_calls":
            await self.public_calls(rng)
            return
        if kind == "stream_burst":   # past the per-bot stream limit, all at once
            sessions = [Session(self, agent, random.Random(rng.getrandbits(64)), kind)
                        for _ in range(rng.choice((5, 20, 40)))]
            await asyncio.gather(*(s.run(open_with_hello(pb.Hello(name=agent.name, version="burst"), "hello"),
                                         lifetime=rng.uniform(0.2, 2.0)) for s in sessions))
            return
        session = Session(self, agent, rng, kind)
        lifetime = rng.uniform(0.2, 3.0)
        if kind == "bad_token":
            # Metadata must be printable ASCII, or grpc refuses it on this side.
            token = rng.choice(("-", "x", "Bearer", "a" * 5000, "".join(chr(rng.randint(33, 126)) for _ in range(12)),
                                self.admin_token, self.tokens[rng.choice(self.names)]))
            await session.run(open_with_hello(pb.Hello(name=agent.name), "hello"), token=token, lifetime=lifetime)
        elif kind == "no_hello_first":
            first = rng.choice((pb.BotMessage(), pb.BotMessage(action=pb.Action(request_id=rng.choice((0, 1, U64)),
                                                                                  option="b7"))))
            await session.run(open_with_message(first, "not_hello"), lifetime=lifetime)
        elif kind == "odd_hello":
            hello, what = odd_hello(rng, agent.name, self.names)
            self.tally.probes[what] += 1
            await session.run(open_with_hello(hello, what), lifetime=lifetime)
        elif kind == "hello_repeated":
            await session.run(hellos_opening(agent.name, rng.choice((2, 5, 100))), lifetime=lifetime)
        elif kind in ("stray_flood", "stray_flood_unread"):
            count = rng.choice((100, 1000, 5000, 20000))
            await session.run(stray_flood_opening(agent.name, count, rng, self.tally),
                              lifetime=rng.uniform(2.0, 8.0) if kind.endswith("unread") else lifetime,
                              read=kind == "stray_flood")
        elif kind == "never_hello":
            await session.run(_nothing, lifetime=rng.uniform(0.5, 12.0), read=True)
        elif kind == "duplicate_stream":   # a second valid stream of the same bot: it may get seats
            await session.run(open_with_hello(agent.anchor_hello(), "hello"), lifetime=lifetime)
        else:
            await session.run(half_close_opening(agent.name), lifetime=lifetime)

    async def spectate(self, rng: random.Random) -> None:
        """Watch a running match (or an unknown one), reading everything, slowly, or nothing."""
        running = [p.match_id for p in self.played if p.record is None and p.error is None]
        match_id = rng.choice(running) if running and rng.random() < 0.8 else rng.choice(
            ("", "no-such-match", "x" * 100_000, random_text(rng, 10)))
        how = rng.choice(("read", "slow", "none"))
        assert self._admin_channel is not None
        call = pb_grpc.ArenaStub(self._admin_channel).Spectate(pb.SpectateRequest(match_id=match_id))
        self.tally.probes[f"spectate_{how}"] += 1

        async def watch() -> None:
            if how == "none":
                await asyncio.sleep(60)
            async for _ in call:
                if how == "slow":
                    await asyncio.sleep(0.5)
        try:
            await asyncio.wait_for(watch(), rng.uniform(0.5, 6.0))
        except (TimeoutError, grpc.aio.AioRpcError):
            pass
        finally:
            call.cancel()

    async def public_calls(self, rng: random.Random) -> None:
        """ListMatches, GetLeaderboard and the organiser calls with odd arguments or tokens."""
        assert self._admin_channel is not None
        stub = pb_grpc.ArenaStub(self._admin_channel)
        calls: list[Callable[[], Awaitable[Any]]] = [
            lambda: stub.ListMatches(pb.ListMatchesRequest(limit=rng.choice((0, 1, U32)),
                                                           variant=rng.choice(("", "classic", "bogus"))), timeout=10),
            lambda: stub.GetLeaderboard(pb.LeaderboardRequest(variant=rng.choice(("", "extreme", "pink")),
                                                              min_games=rng.choice((0, U32))), timeout=10),
            lambda: stub.ListBots(pb.ListBotsRequest(), metadata=(("authorization", "Bearer nope"),), timeout=10),
            lambda: stub.RunMatch(pb.RunMatchRequest(config_json=rng.choice(("{", "[]", '{"players": 99}')),
                                                     bots=["fuzz-0"]), metadata=self.admin()[1], timeout=10),
        ]
        for _ in range(rng.randint(1, 5)):
            try:
                await rng.choice(calls)()
                self.tally.probes["public_call_ok"] += 1
            except grpc.aio.AioRpcError as error:
                self.tally.probes[f"public_call_{error.code().name}"] += 1

    # -- organising matches

    def table(self, rng: random.Random, fuzzed: bool) -> tuple[dict[str, Any], int]:
        """A game config and how many fuzz seats it gets."""
        variant = rng.choice(("classic", "extreme"))
        players = rng.randint(3, 5)
        config: dict[str, Any] = {"variant": variant, "players": players, "seed": rng.getrandbits(31)}
        if variant == "classic":
            config["rounds"] = rng.randint(2, 4)
            config["bidding"] = rng.choice(("open", "open", "hidden", "secret"))
            if config["bidding"] == "open" and rng.random() < 0.3:
                config["plus_minus_one"] = True
        else:
            config["rounds"] = rng.choice((1, 1, 2))
        fuzz_seats = rng.randint(1, min(2, players - 1)) if fuzzed else 0
        return config, fuzz_seats

    async def table_loop(self, index: int, fuzzed: bool) -> None:
        rng = random.Random(f"{self.seed}/table/{'f' if fuzzed else 'h'}{index}")
        while time.monotonic() < self.deadline:
            config, fuzz_seats = self.table(rng, fuzzed)
            agents = await self._take_agents(rng, fuzz_seats)
            if agents is None:
                break
            try:
                fuzz_names = [a.name for a in agents]
                if len(agents) == 1 and config["players"] >= 4 and rng.random() < 0.15:
                    fuzz_names.append(agents[0].name)   # one fuzz bot in two seats (self-play)
                honest = [rng.choice(list(HONEST_BOTS)) for _ in range(config["players"] - len(fuzz_names))]
                bots = fuzz_names + honest
                rng.shuffle(bots)
                await self.run_match(rng, config, bots, sorted(set(fuzz_names)))
            finally:
                for agent in agents:
                    agent.in_use -= 1
            if not fuzzed:
                # Honest matches take milliseconds; a pause leaves the cores to the fuzzing.
                await asyncio.sleep(0.2)

    async def _take_agents(self, rng: random.Random, count: int) -> list[Agent] | None:
        while time.monotonic() < self.deadline:
            free = [a for a in self.agents if a.in_use < a.capacity]
            if len(free) >= count:
                chosen = rng.sample(free, count)
                for agent in chosen:
                    agent.in_use += 1
                return chosen
            await asyncio.sleep(0.05)
        return None

    async def run_match(self, rng: random.Random, config: dict[str, Any], bots: list[str],
                        fuzz_bots: list[str]) -> None:
        self._match_serial += 1
        fuzzed = bool(fuzz_bots)
        settings = self.settings
        match_id = f"fz{self.seed}{'f' if fuzzed else 'h'}{self._match_serial:05d}"
        request = pb.RunMatchRequest(
            match_id=match_id, config_json=json.dumps(config), bots=bots,
            bot_seeds=[rng.getrandbits(63) for _ in bots], game_index=-1,
            move_time_ms=int(1000 * (settings.move_time if fuzzed else settings.honest_move_time)),
            time_bank_ms=int(1000 * (settings.time_bank if fuzzed else settings.honest_time_bank)),
            max_faults=rng.choice((1, 3, 3, 20, 1000)) if fuzzed else 0,
        )
        played = Played(match_id=match_id, fuzzed=fuzzed, bots=bots, fuzz_bots=fuzz_bots)
        self.played.append(played)
        self.tally.trace(match=match_id, config=config, bots=bots, max_faults=request.max_faults)
        stub, metadata = self.admin()
        try:
            response = await stub.RunMatch(request, metadata=metadata, timeout=settings.match_timeout)
            played.record = json.loads(response.record_json)
        except grpc.aio.AioRpcError as error:
            played.error = code = error.code().name
            self.report.run_match_errors[code] = self.report.run_match_errors.get(code, 0) + 1
            if error.code() in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL,
                                grpc.StatusCode.DEADLINE_EXCEEDED):
                self.report.violations.append(f"match {match_id} ({'fuzzed' if fuzzed else 'honest'}, bots {bots}) "
                                              f"did not finish: RunMatch ended {error.code().name}: "
                                              f"{(error.details() or '')[:200]}")

    # -- watching the server

    async def watch_server(self) -> None:
        """Sample the server's memory every 0.25 s; stop the run early if it dies."""
        assert self.server is not None
        ticks = 0
        while not self.finished.is_set():
            rss = rss_mb(self.server.pid) if self.server.returncode is None else None
            if rss is None:
                self.report.violations.append(
                    f"the server process exited during the run (code {self.server.returncode}, "
                    f"after {time.monotonic() - self.deadline + self.seconds:.1f} s)")
                self.deadline = 0.0        # stop organising: nothing to play on
                self.abort.set()
                return
            self.report.peak_rss_mb = max(self.report.peak_rss_mb, rss)
            if ticks % 20 == 0:
                self.report.rss_timeline_mb.append(round(rss, 1))
            ticks += 1
            await asyncio.sleep(0.25)

    # -- the whole run

    async def run(self) -> FuzzReport:
        started = time.monotonic()
        tasks: list[asyncio.Task[Any]] = []
        try:
            await self.start()
            await self.fuzz_phase(tasks)
            await self.check_server()
        finally:
            self.finished.set()
            for task in tasks:     # after an error too: nothing of this run outlives it
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for agent in self.agents:
                agent.close()
            await self.shutdown()
        self.check_records()
        self.collect()
        self.report.elapsed_s = time.monotonic() - started
        return self.report

    async def fuzz_phase(self, tasks: list[asyncio.Task[Any]]) -> None:
        """Fuzz for ``seconds``, then let the running matches end (fuzz bots honest)."""
        self.deadline = time.monotonic() + self.seconds
        tasks.append(asyncio.ensure_future(self.watch_server()))
        anchors = [asyncio.ensure_future(a.run_anchor()) for a in self.agents]
        probes = [asyncio.ensure_future(a.run_probes()) for a in self.agents]
        tasks += anchors + probes
        await asyncio.sleep(0.3)   # let the anchors say Hello before the first table
        tables = [asyncio.ensure_future(self.table_loop(i, True)) for i in range(self.settings.fuzz_tables)]
        tables += [asyncio.ensure_future(self.table_loop(i, False)) for i in range(self.settings.honest_tables)]
        tasks += tables
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.abort.wait(), max(0.0, self.deadline - time.monotonic()))
        # Time is up: no more probes or new tables; fuzz bots answer honestly so the
        # matches still running end soon.
        self.draining = True
        await asyncio.gather(*probes, return_exceptions=True)
        done, pending = await asyncio.wait(tables, timeout=self.settings.drain_timeout)
        if pending:
            self.report.violations.append(f"{len(pending)} RunMatch call(s) still running "
                                          f"{self.settings.drain_timeout:g} s after the end of fuzzing")
        for task in done:
            if task.exception() is not None:   # the fuzzer's own bug: say so loudly
                raise task.exception()  # type: ignore[misc]
        self.finished.set()
        for task in anchors:
            task.cancel()
        await asyncio.gather(*anchors, return_exceptions=True)
        await asyncio.sleep(0.5)    # the server notices the closed streams

    async def check_server(self) -> None:
        """Invariants 1 and 4: the server answers, and its memory stayed bounded."""
        report = self.report
        assert self.server is not None and self._admin_channel is not None
        if self.server.returncode is not None:
            report.violations.append(f"the server process is gone (exit code {self.server.returncode})")
            return
        try:
            health = health_pb2_grpc.HealthStub(self._admin_channel)
            status = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
            listed = await pb_grpc.ArenaStub(self._admin_channel).ListMatches(
                pb.ListMatchesRequest(limit=5), timeout=10)
            report.server_alive = status.status == health_pb2.HealthCheckResponse.SERVING and listed is not None
            if not report.server_alive:
                report.violations.append(f"the server's health is {status.status}, not SERVING")
        except grpc.aio.AioRpcError as error:
            report.violations.append(f"the server does not answer: {error.code().name}: {error.details()}")
        final = rss_mb(self.server.pid)
        report.final_rss_mb = final or 0.0
        report.peak_rss_mb = max(report.peak_rss_mb, report.final_rss_mb)
        if report.peak_rss_mb > self.settings.rss_limit_mb:
            report.violations.append(f"the server's memory peaked at {report.peak_rss_mb:.0f} MB "
                                     f"(limit {self.settings.rss_limit_mb:.0f} MB)")

    async def shutdown(self) -> None:
        """Stop everything this run started, whatever happened before."""
        if self._admin_channel is not None:
            with contextlib.suppress(Exception):
                await self._admin_channel.close()
        await asyncio.gather(*(stop_process(p, 5) for p in self.bots), return_exceptions=True)
        if self.server is not None:
            code = await stop_process(self.server, 15)
            if code not in (0, -signal.SIGTERM) and self.report.server_alive:
                self.report.server_log.append(f"1 x the server exited with code {code} on SIGTERM")
        log = self.workdir / "server.log"
        if log.exists():
            tracebacks, others = summarise_log(log.read_text(errors="replace"))
            self.report.server_tracebacks += tracebacks
            self.report.server_log += others

    # -- invariants 2 and 3: the stored matches

    def check_records(self) -> None:
        from arena.results import Store
        from arena.store import StoreError

        report = self.report
        with Store(str(self.workdir / "arena.db")) as store:
            for played in self.played:
                if played.record is None:
                    continue
                try:
                    stored = store.load_match(played.match_id)
                except StoreError:
                    report.violations.append(f"match {played.match_id} was played but not stored")
                    continue
                self.check_match(played, stored)

    def check_match(self, played: Played, stored: Any) -> None:
        report = self.report
        record = played.record
        assert record is not None
        tag = f"match {played.match_id} ({'fuzzed' if played.fuzzed else 'honest'}, bots {played.bots})"
        if stored.status != "completed" or record["status"] != "completed":
            report.violations.append(f"{tag} ended {stored.status!r}, not 'completed'")
        kinds = Counter(f.kind for f in stored.faults)
        for kind, n in kinds.items():
            report.faults_by_kind[kind] = report.faults_by_kind.get(kind, 0) + n
        report.forfeits += sum(stored.forfeited)
        if not played.fuzzed:
            report.matches_honest += 1
            if stored.faults:
                report.violations.append(f"{tag} has {len(stored.faults)} fault(s) between honest bots: "
                                         + "; ".join(f"seat {f.seat} {f.kind}: {f.message[:80]}"
                                                     for f in stored.faults[:5]))
            return
        report.matches_fuzzed += 1
        returned = Counter((f["seat"], f["kind"]) for f in record["faults"])
        kept = Counter((f.seat, f.kind) for f in stored.faults)
        if returned != kept:
            report.violations.append(f"{tag}: the stored faults {dict(kept)} differ from the returned ones "
                                     f"{dict(returned)}")
        fuzz_seats = {seat for seat, bot in enumerate(stored.bots) if bot in played.fuzz_bots}
        for f in stored.faults:
            bucket = report.fuzz_seat_faults if f.seat in fuzz_seats else report.honest_seat_faults_in_fuzzed
            bucket[f.kind] = bucket.get(f.kind, 0) + 1
            if f.seat not in fuzz_seats and f.kind != "timeout":
                self.tally.anomaly(f"{tag}: honest seat {f.seat} ({f.bot}) got a {f.kind} fault: {f.message[:120]}")
        for bot in played.fuzz_bots:
            self.check_told(tag, bot, stored)

    def check_told(self, tag: str, bot: str, stored: Any) -> None:
        """Every Fault the fuzz bot was sent for this match is in the stored record."""
        seats = [seat for seat, name in enumerate(stored.bots) if name == bot]
        have = Counter((f.kind, f.request_id or 0) for f in stored.faults if f.seat in seats)
        told = [t for t in self.tally.told.get((bot, stored.match_id), []) if t.kind != "disconnect"]
        self.report.faults_told += len(told)
        missing = Counter((t.kind, t.request_id) for t in told) - have
        if missing:
            self.report.violations.append(f"{tag}: {bot} was sent faults that are not in the stored record: "
                                          + ", ".join(f"{k} (request {r}) x{n}" for (k, r), n in missing.items()))
        most = max((t.faults for t in self.tally.told.get((bot, stored.match_id), [])), default=0)
        if most > sum(1 for f in stored.faults if f.seat in seats):
            self.report.violations.append(f"{tag}: {bot} was told it had {most} faults, but the record holds "
                                          f"{sum(1 for f in stored.faults if f.seat in seats)}")
        if any(t.forfeited for t in told) and not any(stored.forfeited[s] for s in seats):
            self.report.violations.append(f"{tag}: {bot} was told it forfeited, but the record says it did not")

    def collect(self) -> None:
        tally, report = self.tally, self.report
        report.messages_sent = dict(tally.sent)
        report.behaviours = dict(tally.behaviours)
        report.probes = dict(tally.probes)
        report.streams = tally.streams
        report.stream_ends = dict(tally.stream_ends)
        report.stray_faults_told = tally.stray_told
        report.anomalies = list(tally.anomalies)


# ---------------------------------------------------------------------- openings of probe streams


async def _nothing(session: Session) -> bool:
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


# ---------------------------------------------------------------------- entry points


@contextlib.contextmanager
def _workdir(path: str | Path | None) -> Iterator[Path]:
    if path is not None:
        Path(path).mkdir(parents=True, exist_ok=True)
        yield Path(path)
        return
    temp = tempfile.mkdtemp(prefix="arena-fuzz-")
    try:
        yield Path(temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


async def fuzz(seconds: float, seed: int, settings: FuzzSettings | None = None,
               workdir: str | Path | None = None) -> FuzzReport:
    """The fuzzer as a coroutine (see :func:`run_fuzz`)."""
    with _workdir(workdir) as where:
        trace = open(where / "trace.jsonl", "w") if workdir is not None else None
        try:
            report = await Fuzzer(seconds, seed, settings or FuzzSettings(), where, trace).run()
        finally:
            if trace is not None:
                trace.close()
        if workdir is None:
            report.workdir = None
        return report


def run_fuzz(seconds: float, seed: int, settings: FuzzSettings | None = None,
             workdir: str | Path | None = None) -> FuzzReport:
    """Fuzz a fresh ``arena serve`` for ``seconds`` (plus start-up and the end of the
    running matches) and return the report. ``workdir`` keeps the database, logs and
    message trace there; by default everything goes to a temporary directory that is
    removed."""
    return asyncio.run(fuzz(seconds, seed, settings, workdir))
