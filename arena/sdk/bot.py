"""What a bot author writes against: the :class:`Bot` base class, the values its hooks
receive (:class:`MatchInfo`, :class:`MatchResult`, :class:`FaultInfo`), and :func:`ask`.

:func:`ask` (and :func:`ask_async`, for an ``async def`` method) is the one place that maps
a decision kind to the bot's method and types its answer as the engine does. It needs no
connection: the client uses it, and so can code that plays bots in-process against the
engine (``sample_bots/evaluate.py``). Nothing here imports grpc.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import DECISION_KINDS as ENGINE_DECISION_KINDS
from engine import VARIANTS, Prediction

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
    kind: str        # "timeout", "illegal", "malformed", "unexpected", "disconnect", "bot_error"
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

    Any of the methods may be ``async def``: the SDK then awaits it on its event loop
    instead of calling it on the match's thread (see :class:`BotClient`). Either way one
    seat's methods are never called twice at once.
    """

    name: str = "bot"
    version: str = "0.1"
    variants: tuple[str, ...] = VARIANTS
    # True: the arena sends no observation (Hello.events_only) and the decision methods
    # get an empty ``obs``; the bot keeps its own state from ``on_events`` (every event
    # its seat may see, its cards in each round's "hand" event) and ``on_match_start``.
    # It saves the arena building the observation and this SDK parsing it.
    events_only: bool = False
    # The current request's limits, set before each decision (0 when unknown, e.g. in-process):
    # the per-decision limit and what is left of the match's time bank, in ms.
    deadline_ms: int = 0
    time_bank_ms: int = 0

    def __init__(self) -> None:
        self.rng: random.Random = random.Random(0)
        self.match: MatchInfo | None = None

    # -- decisions: return one of ``options`` (a Prediction or dict for predict)
    #
    # ``obs`` is what this seat sees: the engine's observation as the arena sent it, a
    # plain dict whose fields ``ClassicObservation`` and ``ExtremeObservation`` (from
    # ``arena.sdk``) type and document; ``obs["variant"]`` tells which. A bot annotates
    # its methods with them (``def bid(self, obs: ClassicObservation, options: list[int])``)
    # or with ``dict[str, Any]``: here ``obs`` is ``Any``, so either overrides cleanly.
    # With ``events_only`` it is empty.

    def bid(self, obs: Any, options: list[int]) -> int:
        """Classic: how many tricks this seat will win."""
        return self.rng.choice(options)

    def play(self, obs: Any, options: list[str]) -> str:
        """Both variants: the card to play (a card code)."""
        return self.rng.choice(options)

    def trump(self, obs: Any, options: list[str]) -> str:
        """Classic, a Wizard was turned up: the trump suit the dealer chooses."""
        return self.rng.choice(options)

    def predict(self, obs: Any) -> Prediction | Mapping[str, Any] | None:
        """Extreme: take the destroyer or tokens. ``None`` means take nothing."""
        return Prediction()

    def pay(self, obs: Any, options: list[str]) -> str:
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


class BadAnswer(ValueError):
    """What a bot's method returned cannot be an answer (``ask``): the bot's mistake."""


# The decision kinds; each is answered by the Bot method of the same name.
DECISION_KINDS = frozenset(ENGINE_DECISION_KINDS)


def ask(bot: Bot, kind: str, obs: Mapping[str, Any], options: list[Any] | None) -> Any:
    """Call the bot's method for a decision kind ("bid", "play", "trump", "predict", "pay")
    and return its answer as the engine types an action: an int for a bid, a string for
    a card or a colour, and for a prediction whatever ``predict`` returned.

    The one place that maps kinds to methods: the connection uses it, and so can code
    that plays bots in-process against the engine (see ``sample_bots/evaluate.py``).
    A method that is a coroutine (``async def``) needs :func:`ask_async`.
    """
    answer = _call_method(bot, kind, obs, options)
    if inspect.isawaitable(answer):
        if inspect.iscoroutine(answer):
            answer.close()   # never awaited: say so here, not in a RuntimeWarning at exit
        raise TypeError(f"{kind} returned an awaitable (an async def method): use ask_async")
    return _typed(kind, answer)


async def ask_async(bot: Bot, kind: str, obs: Mapping[str, Any], options: list[Any] | None) -> Any:
    """:func:`ask` for a method that may be ``async def``: its answer is awaited."""
    answer = _call_method(bot, kind, obs, options)
    if inspect.isawaitable(answer):
        answer = await answer
    return _typed(kind, answer)


def _call_method(bot: Bot, kind: str, obs: Mapping[str, Any], options: list[Any] | None) -> Any:
    if kind == "predict":
        return bot.predict(obs)
    if kind in DECISION_KINDS:
        return getattr(bot, kind)(obs, options or [])
    raise ValueError(f"unknown decision kind {kind!r}")


def _typed(kind: str, answer: Any) -> Any:
    """A method's answer as the engine types the action (``BadAnswer`` for a bid that is no number)."""
    if kind == "bid":
        try:
            return int(answer)
        except (TypeError, ValueError):
            raise BadAnswer(f"bid returned {answer!r}, which is no whole number") from None
    if kind == "predict":
        return answer
    return str(answer)


def _is_async(function: Any) -> bool:
    """Whether a bot's method is ``async def`` (then the SDK awaits it on the event loop)."""
    return inspect.iscoroutinefunction(function)
