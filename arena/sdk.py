"""The Python bot SDK: write a few methods, get a bot that plays in the arena.

A bot is a subclass of :class:`Bot` with one method per decision kind::

    from arena.sdk import Bot, run

    class MyBot(Bot):
        name = "my-bot"

        def bid(self, obs, options):          # classic: options are ints 0..r
            return options[0]

        def play(self, obs, options):         # both: options are card codes
            return self.rng.choice(options)

    if __name__ == "__main__":
        run(MyBot)

and is started with the standard command line::

    python my_bot.py --arena 127.0.0.1:50051 --token T [--name N] [--max-matches N] [--seed S]

(the token may come from the ``ARENA_TOKEN`` environment variable instead).

What the SDK does for you:

* connects with ``grpc.aio`` (keepalive and message limits matching the arena),
  authenticates with ``authorization: Bearer <token>`` and says Hello;
* answers every ``DecisionRequest`` with its ``request_id``, calling your method
  with the parsed observation (a dict, see ``docs/engine.md``) and the options
  already converted (ints for bids, strings otherwise);
* plays several matches at once when ``--max-matches`` > 1: with a bot *class*
  every seat gets its own instance, so instance attributes are per-match state;
  with a bot *instance* all seats share it;
* gives every seat a ``self.rng`` (``random.Random``) seeded from
  ``MatchStarted.seed`` (mixed with ``--seed`` when given), so a tournament replays;
* survives its own bugs: an exception (or an answer that is not among the options)
  is logged to stderr and the first option (or an empty prediction) is sent instead;
* reconnects with backoff when the connection drops (the arena keeps the seat for a
  grace period) and exits cleanly on SIGTERM/SIGINT or when the arena ends the stream.

Exit codes of :func:`run`: 0 clean exit, 1 gave up reconnecting, 2 refused by the
arena (bad token, name mismatch, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Mapping

import grpc
import orjson

from arena.pb.wizard_arena.v1 import arena_pb2, arena_pb2_grpc
from engine.core import Prediction

__all__ = [
    "Bot", "BotClient", "FaultInfo", "MatchInfo", "MatchResult", "Prediction",
    "CHANNEL_OPTIONS", "ask", "main", "parse_args", "run",
]

log = logging.getLogger("arena.sdk")

# The arena may send up to 32 MiB (arena/server.py); a bot's answers are tiny.
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

# Status codes that mean "the arena will not take this bot": retrying cannot help.
FATAL_CODES = frozenset({
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
})

_KIND_NAMES = {
    arena_pb2.BID: "bid",
    arena_pb2.PLAY: "play",
    arena_pb2.TRUMP: "trump",
    arena_pb2.PREDICT: "predict",
    arena_pb2.PAY: "pay",
}


# ---------------------------------------------------------------- values handed to bots


@dataclass(frozen=True)
class MatchInfo:
    """A match the bot was seated in (from ``MatchStarted``)."""

    match_id: str
    variant: str            # "classic" or "extreme"
    seat: int
    players: int
    bot_names: tuple[str, ...]
    options: dict[str, Any]  # the game configuration (rounds, bidding, ...)
    seed: int
    move_time_ms: int
    time_bank_ms: int


@dataclass(frozen=True)
class MatchResult:
    """How a match ended for one seat (from ``MatchEnded``)."""

    match_id: str
    seat: int
    totals: tuple[int, ...]   # points (classic) or penalties (extreme), by seat
    places: tuple[int, ...]   # 1 = best, by seat
    result: dict[str, Any]    # the full result with the per-round breakdown
    forfeited: bool
    reason: str

    @property
    def place(self) -> int:
        return self.places[self.seat] if self.seat < len(self.places) else 0


@dataclass(frozen=True)
class FaultInfo:
    """An answer the arena did not accept (from ``Fault``)."""

    match_id: str
    request_id: int
    kind: str        # "timeout", "illegal", "malformed", "unexpected", "disconnect"
    message: str
    faults: int      # faults of this seat in this match so far
    forfeited: bool  # the seat now plays by the fallback to the end


# ---------------------------------------------------------------- the class bots extend


class Bot:
    """Base class of a bot. Override the decision methods you care about.

    The defaults play uniformly at random among the legal options and predict
    nothing, so a half-written bot is still a legal one. During a decision
    ``self.rng`` is the seat's seeded ``random.Random`` and ``self.match`` its
    :class:`MatchInfo`.
    """

    name: str = "bot"
    version: str = "0.1"
    variants: tuple[str, ...] = ("classic", "extreme")

    def __init__(self) -> None:
        self.rng: random.Random = random.Random(0)
        self.match: MatchInfo | None = None

    # -- decisions: return one of ``options`` (a Prediction or dict for predict)

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        """Classic: how many tricks this seat will win."""
        return self.rng.choice(options)

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        """Both variants: the card to play (a card code)."""
        return self.rng.choice(options)

    def trump(self, obs: dict[str, Any], options: list[str]) -> str:
        """Classic, a Wizard was turned up: the trump suit the dealer chooses."""
        return self.rng.choice(options)

    def predict(self, obs: dict[str, Any]) -> Prediction | Mapping[str, Any] | None:
        """Extreme: take the destroyer or tokens. ``None`` means take nothing."""
        return Prediction()

    def pay(self, obs: dict[str, Any], options: list[str]) -> str:
        """Extreme: the token (a colour, or "white") returned for a won trick."""
        return self.rng.choice(options)

    # -- optional hooks

    def on_match_start(self, info: MatchInfo) -> None:
        """Called when the bot is seated; ``self.rng`` is already seeded."""

    def on_match_end(self, result: MatchResult) -> None:
        """Called when a match this seat played has ended."""

    def on_fault(self, fault: FaultInfo) -> None:
        """Called when the arena did not accept an answer."""

    def on_events(self, events: list[dict[str, Any]]) -> None:
        """Events since this seat's previous decision, oldest first.

        Only parsed when a subclass overrides this method, so bots that do not care
        pay nothing for them.
        """


def ask(bot: Bot, kind: str, obs: dict[str, Any], options: list[Any] | None) -> Any:
    """Call the bot's method for a decision kind ("bid", "play", "trump", "predict", "pay").

    The one place that maps kinds to methods: the connection uses it, and so can code
    that plays bots in-process against the engine (see ``sample_bots/evaluate.py``).
    """
    if kind == "predict":
        return bot.predict(obs)
    if kind == "bid":
        return int(bot.bid(obs, options or []))
    if kind in ("play", "trump", "pay"):
        return getattr(bot, kind)(obs, options or [])
    raise ValueError(f"unknown decision kind {kind!r}")


# ---------------------------------------------------------------- the connection


@dataclass
class _Seat:
    """One seat the bot holds: which bot object plays it and with what randomness."""

    info: MatchInfo
    bot: Bot
    rng: random.Random


@dataclass
class _SessionEnd:
    """How one connection ended."""

    code: grpc.StatusCode | None  # None: the connection was never made / broke locally
    details: str
    welcomed: bool


def _mix_seed(match_seed: int, user_seed: int | None) -> int:
    """The seat's rng seed: the arena's seed, mixed with ``--seed`` when one was given."""
    return match_seed if user_seed is None else (user_seed << 64) | match_seed


def _prediction_message(answer: Any) -> arena_pb2.Prediction:
    """Turn what ``predict`` returned into the wire message (``ValueError`` if malformed)."""
    if answer is None:
        return arena_pb2.Prediction()
    pred = Prediction.from_json(answer)
    return arena_pb2.Prediction(
        destroyer=pred.destroyer,
        tokens={colour: n for colour, n in pred.tokens.items() if n},
        take_from=[arena_pb2.TakeFrom(colour=c, seat=s) for c, s in pred.take_from],
    )


def launcher_gone() -> bool:
    """True when the arena process that started this bot (``ARENA_PARENT_PID``) is gone:
    then there is nothing to reconnect to, and an orphaned bot should not linger."""
    launcher = os.environ.get("ARENA_PARENT_PID", "")
    return launcher.isdigit() and os.getppid() != int(launcher)


@dataclass
class BotClient:
    """Plays one bot on one arena connection, reconnecting when it drops.

    ``bot`` is a :class:`Bot` subclass (one instance per seat) or an instance
    (shared by every seat). Use :func:`run` for the command line; use this class
    directly to embed a bot in another program (``await client.run()``,
    ``client.stop()``).
    """

    bot: type[Bot] | Bot
    arena: str
    token: str
    name: str | None = None
    version: str | None = None
    max_matches: int = 1
    seed: int | None = None
    give_up_after: float = 60.0   # seconds without a connection before exiting
    channel_options: tuple[tuple[str, Any], ...] = CHANNEL_OPTIONS
    seats: dict[tuple[str, int], _Seat] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The token says which bot this is: Hello names one only when it was given
        # (--name, $ARENA_BOT_NAME), and then it must be the token's. The class's name
        # is for logs until the Welcome tells the registered one.
        self._hello_name = self.name or ""
        # name/version/variants are class attributes: readable on a class or an instance.
        self.name = self.name or self.bot.name
        self.version = self.version or self.bot.version
        self._stopping = False
        self._session_task: asyncio.Task | None = None
        self._wake: asyncio.Event | None = None
        # Jitter for reconnect delays: never drawn from a bot's seeded rng.
        self._jitter = random.Random()

    # -- lifecycle

    def stop(self) -> None:
        """Leave: end the current connection and do not reconnect."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._session_task is not None:
            self._session_task.cancel()

    async def run(self) -> int:
        """Connect and play until stopped, refused or unable to reconnect; return an exit code."""
        self._wake = asyncio.Event()
        delay = 0.1
        disconnected_since = time.monotonic()
        while not self._stopping:
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
                log.info("%s: the arena closed the connection; exiting", self.name)
                return 0
            if end.code in FATAL_CODES:
                log.error("%s: refused by the arena: %s %s", self.name, end.code.name, end.details)
                return 2
            if launcher_gone():
                log.info("%s: the arena that started this bot has exited; exiting", self.name)
                return 0
            if end.welcomed:
                disconnected_since = time.monotonic()
                delay = 0.1
            elif time.monotonic() - disconnected_since > self.give_up_after:
                log.error("%s: no connection to %s for %.0f s; giving up (%s)",
                          self.name, self.arena, self.give_up_after, end.details)
                return 1
            # Jitter spreads the reconnects of many bots after an arena restart.
            wait = delay * (0.5 + self._jitter.random())
            code_name = end.code.name if end.code else "no status"
            log.warning("%s: %s (%s: %s); retrying in %.1f s", self.name,
                        "connection lost" if end.welcomed else "cannot connect to " + self.arena,
                        code_name, end.details, wait)
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except asyncio.TimeoutError:
                pass
            delay = min(delay * 2, 5.0)
        log.info("%s: stopped", self.name)
        return 0

    async def _session(self) -> _SessionEnd:
        """One connection: Hello, then answer messages until the stream ends."""
        welcomed = False
        channel = grpc.aio.insecure_channel(self.arena, options=self.channel_options)
        try:
            stub = arena_pb2_grpc.ArenaStub(channel)
            call = stub.Play(metadata=(("authorization", f"Bearer {self.token}"),))
            try:
                await call.write(arena_pb2.BotMessage(hello=arena_pb2.Hello(
                    name=self._hello_name, version=self.version,
                    variants=list(self.bot.variants), max_matches=max(1, self.max_matches),
                )))
                while True:
                    message = await call.read()
                    if message is grpc.aio.EOF:
                        break
                    if message.HasField("welcome"):
                        welcomed = True
                        self.name = message.welcome.bot_name or self.name
                        log.info("%s: connected to %s as %s (server %s)", self.name, self.arena,
                                 message.welcome.bot_id, message.welcome.server_version)
                    reply = self._handle(message)
                    if reply is not None:
                        await call.write(reply)
            except grpc.aio.AioRpcError as err:
                return _SessionEnd(err.code(), err.details() or "", welcomed)
            except asyncio.InvalidStateError:
                pass  # a write after the call ended: its status says why, below
            code = await call.code()
            return _SessionEnd(code, await call.details() or "", welcomed)
        finally:
            await channel.close()

    # -- messages

    def _handle(self, message: arena_pb2.ArenaMessage) -> arena_pb2.BotMessage | None:
        """React to one arena message; return the reply to send, if any."""
        which = message.WhichOneof("msg")
        if which == "request":
            return self._answer(message.request)
        if which == "match_started":
            self._start_match(message.match_started)
        elif which == "match_ended":
            self._end_match(message.match_ended)
        elif which == "fault":
            self._fault(message.fault)
        return None

    def _new_seat(self, info: MatchInfo) -> _Seat:
        bot = self.bot if isinstance(self.bot, Bot) else self.bot()
        return _Seat(info=info, bot=bot, rng=random.Random(_mix_seed(info.seed, self.seed)))

    def _start_match(self, started: arena_pb2.MatchStarted) -> None:
        try:
            options = json.loads(started.options_json) if started.options_json else {}
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
        self._call_hook(seat, "on_match_start", info)

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
            result_data = json.loads(ended.result_json) if ended.result_json else {}
        except ValueError:
            result_data = {}
        result = MatchResult(
            match_id=ended.match_id, seat=ended.seat, totals=tuple(ended.totals),
            places=tuple(ended.places), result=result_data, forfeited=ended.forfeited,
            reason=ended.reason,
        )
        log.info("%s: match %s ended (%s): place %s of %d, totals %s", self.name, ended.match_id,
                 ended.reason or "completed", result.place, len(result.places), list(result.totals))
        self._call_hook(seat, "on_match_end", result)

    def _fault(self, fault: arena_pb2.Fault) -> None:
        log.warning("%s: fault in match %s (request %d): %s: %s%s", self.name, fault.match_id,
                    fault.request_id, fault.kind, fault.message,
                    " - seat forfeited" if fault.forfeited else "")
        info = FaultInfo(match_id=fault.match_id, request_id=fault.request_id, kind=fault.kind,
                         message=fault.message, faults=fault.faults, forfeited=fault.forfeited)
        for (match_id, _), seat in list(self.seats.items()):
            if match_id == fault.match_id:
                self._call_hook(seat, "on_fault", info)

    def _call_hook(self, seat: _Seat, hook: str, arg: Any) -> None:
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        try:
            getattr(bot, hook)(arg)
        except Exception:  # a bug in a hook must not end the bot
            log.error("%s: %s raised:\n%s", self.name, hook, traceback.format_exc())

    def _answer(self, request: arena_pb2.DecisionRequest) -> arena_pb2.BotMessage:
        """Ask the bot, falling back to the first option (or no prediction) if it fails."""
        seat = self._seat_for(request.match_id, request.seat)
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        kind = _KIND_NAMES.get(request.kind, "")
        options = list(request.options)
        try:
            obs = orjson.loads(request.observation_json)      # every decision: the fast parser
            if request.events_json and type(bot).on_events is not Bot.on_events:
                bot.on_events([orjson.loads(e) for e in request.events_json])
            if kind == "predict":
                prediction = _prediction_message(bot.predict(obs))
                return arena_pb2.BotMessage(action=arena_pb2.Action(
                    request_id=request.request_id, prediction=prediction))
            choices: list[Any] = [int(o) for o in options] if kind == "bid" else options
            answer = str(ask(bot, kind, obs, choices))
            if answer not in options:
                raise ValueError(f"{kind} answer {answer!r} is not among the options {options}")
        except Exception:  # the bot's bug: log it, answer something legal-looking
            log.error("%s: %s decision failed in match %s; sending the fallback:\n%s",
                      self.name, kind or request.kind, request.match_id, traceback.format_exc())
            if kind == "predict" or not options:
                return arena_pb2.BotMessage(action=arena_pb2.Action(
                    request_id=request.request_id, prediction=arena_pb2.Prediction()))
            answer = options[0]
        return arena_pb2.BotMessage(action=arena_pb2.Action(request_id=request.request_id, option=answer))


# ---------------------------------------------------------------- the command line


def parse_args(argv: list[str] | None = None, *, default_name: str = "bot") -> argparse.Namespace:
    """The standard bot command line."""
    parser = argparse.ArgumentParser(description=f"Wizard Arena bot {default_name!r}")
    parser.add_argument("--arena", default=os.environ.get("ARENA_ADDRESS", "127.0.0.1:50051"),
                        help="the arena's HOST:PORT (default: $ARENA_ADDRESS or 127.0.0.1:50051)")
    parser.add_argument("--token", default=os.environ.get("ARENA_TOKEN"),
                        help="the bot's token (default: $ARENA_TOKEN)")
    parser.add_argument("--name", default=os.environ.get("ARENA_BOT_NAME"),
                        help="the registered bot name, checked against the token's (default: "
                             "$ARENA_BOT_NAME, else none: the token says which bot this is)")
    parser.add_argument("--max-matches", type=int, default=int(os.environ.get("ARENA_MAX_MATCHES") or 1),
                        help="matches to play at once (default: $ARENA_MAX_MATCHES or 1)")
    parser.add_argument("--seed", type=int, default=None,
                        help="mixed into every match's seed (default: the arena's seeds only)")
    parser.add_argument("--give-up-after", type=float, default=60.0,
                        help="seconds without a connection before exiting (default 60)")
    parser.add_argument("--verbose", "-v", action="store_true", help="log more to stderr")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("a token is needed: --token T or ARENA_TOKEN")
    if args.max_matches < 1:
        parser.error("--max-matches must be at least 1")
    return args


async def main(bot: type[Bot] | Bot, args: argparse.Namespace) -> int:
    """Run a bot until it is stopped; SIGTERM and SIGINT stop it cleanly."""
    client = BotClient(bot=bot, arena=args.arena, token=args.token, name=args.name,
                       max_matches=args.max_matches, seed=args.seed, give_up_after=args.give_up_after)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, client.stop)
        except (NotImplementedError, RuntimeError):  # not the main thread / not POSIX
            pass
    return await client.run()


def run(bot: type[Bot] | Bot, argv: list[str] | None = None) -> None:
    """Parse the standard command line, play, and exit with :meth:`BotClient.run`'s code."""
    args = parse_args(argv, default_name=bot.name)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    sys.exit(asyncio.run(main(bot, args)))
