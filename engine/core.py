"""Types shared by both variants: configuration, decisions, actions, results, errors.

Every game, whatever its variant, is driven the same way::

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(variant="classic", players=4, seed=7, rounds=3))
    >>> while not game.is_over:
    ...     for seat in game.to_act():
    ...         decision = game.decision(seat)
    ...         game.apply(seat, decision.options[0])
    >>> game.result().places  # doctest: +SKIP
    (1, 3, 2, 4)

An *action* is a small JSON value: an ``int`` for a bid, a card code string
such as ``"b7"`` for a card, a colour/suit name such as ``"blue"`` for a trump
choice or a returned token, and a :class:`Prediction` (or the equivalent dict)
for a Wizard Extreme prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

# Decision kinds, the same names on the wire and in the engine.
BID = "bid"
PLAY = "play"
TRUMP = "trump"
PREDICT = "predict"
PAY = "pay"
DECISION_KINDS = (BID, PLAY, TRUMP, PREDICT, PAY)


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class ConfigError(EngineError, ValueError):
    """A game configuration that the rules do not allow; the message names the allowed values."""


class IllegalAction(EngineError):
    """An action that is not legal now. The game state is unchanged when this is raised.

    ``kind`` is the decision kind that was asked for (or ``None`` when the seat had
    nothing to decide), ``legal`` the legal options (``None`` for predictions, whose
    rules the message explains).
    """

    def __init__(self, message: str, *, seat: int, kind: str | None, legal: tuple | None = None):
        super().__init__(message)
        self.seat = seat
        self.kind = kind
        self.legal = legal


# Each variant's own checks of a config, by variant name, in engine.VARIANTS order.
# engine.variants fills it when the engine is imported (the records name the game
# classes, whose modules import this one, so this module cannot import them).
VARIANT_CHECKS: dict[str, Callable[[GameConfig], None]] = {}


@dataclass(frozen=True)
class GameConfig:
    """Everything that defines a game besides the players' choices.

    ``rounds``: classic, play rounds 1..N only (hand sizes 1..N); extreme, the number
    of deals. ``None`` means the variant's standard length.
    ``length``: classic only, ``"standard"`` or ``"amigo"``.
    ``bidding``, ``plus_minus_one``: classic only. ``destroyer_penalty``: extreme only.
    """

    variant: str = "classic"
    players: int = 4
    seed: int = 0
    rounds: int | None = None
    length: str = "standard"
    bidding: str = "open"
    plus_minus_one: bool = False
    destroyer_penalty: int = 4

    def validate(self) -> GameConfig:
        """Raise :class:`ConfigError` naming the allowed values; return ``self`` when valid.
        What every variant shares is checked here, the rest by the variant's record
        (:meth:`engine.variants.Variant.check`).

        >>> GameConfig(variant="classic", players=5, rounds=13).validate()
        Traceback (most recent call last):
        ...
        engine.core.ConfigError: classic with 5 players allows at most 12 rounds (got 13)
        """
        if not isinstance(self.variant, str) or self.variant not in VARIANT_CHECKS:
            raise ConfigError(f"unknown variant {self.variant!r}; allowed: {', '.join(VARIANT_CHECKS)}")
        if isinstance(self.players, bool) or not isinstance(self.players, int):
            raise ConfigError(f"players must be a whole number (got {self.players!r})")
        if self.rounds is not None and (isinstance(self.rounds, bool) or not isinstance(self.rounds, int)):
            raise ConfigError(f"rounds must be a whole number (got {self.rounds!r})")
        VARIANT_CHECKS[self.variant](self)
        return self

    def to_dict(self) -> dict[str, Any]:
        """Every field, ``seed`` included: what a match stores as its config."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def options(self) -> dict[str, Any]:
        """The game options: :meth:`to_dict` without the deal seed (:func:`options_of`).

        >>> GameConfig(variant="extreme", players=3, seed=9).options()["players"], "seed" in GameConfig().options()
        (3, False)
        """
        return options_of(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameConfig:
        """The config of a stored dict (``to_dict``'s form; fields left out keep their
        defaults); :class:`ConfigError` for a field it does not have. Not validated."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown game option(s): {', '.join(sorted(unknown))}")
        return cls(**dict(data))

    @classmethod
    def from_options(cls, options: Mapping[str, Any], seed: int = 0) -> GameConfig:
        """The config of game options (a tournament's ``game`` settings, or a stored
        config whose seed does not matter here) dealt from ``seed``; any seed in
        ``options`` is replaced. Not validated.

        >>> GameConfig.from_options({"variant": "extreme", "seed": 5}, seed=7).seed
        7
        """
        return cls.from_dict({**options, "seed": seed})


def options_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """A game config (a ``GameConfig.to_dict()``, or a stored or sent one, whatever fields
    it holds) without its deal seed: what may be shown before the deals are public, since
    from the seed and the engine anyone could compute every hand. The other fields are
    kept as they are, in their order.

    >>> options_of({"variant": "classic", "seed": 7, "bidding": "hidden"})
    {'variant': 'classic', 'bidding': 'hidden'}
    """
    return {k: v for k, v in config.items() if k != "seed"}


@dataclass(frozen=True)
class Prediction:
    """A Wizard Extreme prediction: take the destroyer, or take coloured tokens.

    ``tokens`` maps a colour (red, yellow, green, blue, purple) to how many tokens of it
    the player takes. Tokens come from the supply first; for every token the supply
    lacks, ``take_from`` names the seat to take it from, as ``(colour, seat)`` pairs.
    When ``take_from`` is empty the engine takes from holders clockwise from the
    predictor's left (documented default).
    """

    destroyer: bool = False
    tokens: Mapping[str, int] = field(default_factory=dict)
    take_from: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "destroyer": self.destroyer,
            "tokens": {c: n for c, n in self.tokens.items() if n},
            "take_from": [[c, s] for c, s in self.take_from],
        }

    @classmethod
    def from_json(cls, data: Any) -> Prediction:
        """Build from a dict as sent by a bot; raise ``ValueError`` on a malformed one."""
        if isinstance(data, Prediction):
            return data
        if not isinstance(data, Mapping):
            raise ValueError("a prediction is an object with destroyer, tokens, take_from")
        unknown = set(data) - {"destroyer", "tokens", "take_from"}
        if unknown:
            raise ValueError(f"prediction: unknown field(s) {', '.join(sorted(map(str, unknown)))}; "
                             "expected destroyer, tokens, take_from")
        destroyer = data.get("destroyer", False)
        tokens = data.get("tokens", {}) or {}
        take_from = data.get("take_from", []) or []
        if not isinstance(destroyer, bool) or not isinstance(tokens, Mapping):
            raise ValueError("prediction: destroyer must be a boolean and tokens an object")
        clean: dict[str, int] = {}
        for colour, n in tokens.items():
            if not isinstance(colour, str) or isinstance(n, bool) or not isinstance(n, int):
                raise ValueError("prediction: tokens maps colour names to whole numbers")
            clean[colour] = n
        if not isinstance(take_from, (list, tuple)):
            raise ValueError("prediction: take_from is a list of [colour, seat] pairs")
        pairs = []
        for pair in take_from:
            if (not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], str)
                    or isinstance(pair[1], bool) or not isinstance(pair[1], int)):
                raise ValueError("prediction: take_from is a list of [colour, seat] pairs")
            pairs.append((pair[0], pair[1]))
        return cls(destroyer=destroyer, tokens=clean, take_from=tuple(pairs))


Action = int | str | Prediction

SeatAction = tuple[int, Action]
"""One entry of a game's own log, ``game.actions``: the seat and the action it played,
as the engine's value (a prediction as a :class:`Prediction`, never its JSON form,
which :func:`action_to_json` makes where a log is stored or sent). A plain pair, so
logging a card play costs one tuple."""


def action_to_json(action: Action) -> Any:
    """The JSON form of an action, as stored in logs and sent on the wire."""
    return action.to_json() if isinstance(action, Prediction) else action


def action_from_json(data: Any) -> Action:
    """The action of its JSON form (:func:`action_to_json`'s inverse): a prediction's
    object becomes a :class:`Prediction`, a bid, card or colour stays as it is.

    >>> action_from_json({"destroyer": True}), action_from_json("b7")
    (Prediction(destroyer=True, tokens={}, take_from=()), 'b7')
    """
    return Prediction.from_json(data) if isinstance(data, Mapping) else data


@dataclass(frozen=True)
class Decision:
    """What one seat must decide now.

    ``options`` lists every legal action for enumerable kinds (bid, play, trump, pay),
    in a fixed order; it is ``None`` for ``predict``, whose possibilities are described
    by the observation (``"supply"``, holdings, whether the destroyer is free).
    ``default`` is the documented fallback the referee plays for a seat that faults:
    the first option, or for a prediction "no destroyer, no tokens".
    """

    seat: int
    kind: str
    options: tuple | None

    @property
    def default(self) -> Action:
        if self.kind == PREDICT:
            return Prediction()
        assert self.options
        return self.options[0]


@dataclass(frozen=True)
class SeatRound:
    """One seat's line in one round: classic uses bid/tricks, extreme tokens/destroyer."""

    score: int
    bid: int | None = None
    tricks: int | None = None
    destroyer: bool | None = None
    tokens: Mapping[str, int] | None = None


@dataclass(frozen=True)
class GameResult:
    """The final result. ``totals`` per seat; ``places`` are 1-based and shared on equal totals
    (two seats tied for first both get place 1, the next gets 3).
    ``higher_is_better`` is True for classic (points) and False for extreme (penalties).
    """

    variant: str
    totals: tuple[int, ...]
    places: tuple[int, ...]
    rounds: tuple[tuple[SeatRound, ...], ...]
    higher_is_better: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "totals": list(self.totals),
            "places": list(self.places),
            "higher_is_better": self.higher_is_better,
            "rounds": [
                [{k: v for k, v in vars(s).items() if v is not None} for s in rnd] for rnd in self.rounds
            ],
        }


def places_from_totals(totals: tuple[int, ...] | list[int], higher_is_better: bool) -> tuple[int, ...]:
    """Competition ranking ("1224"): equal totals share a place.

    >>> places_from_totals([50, 80, 50, 10], higher_is_better=True)
    (2, 1, 2, 4)
    >>> places_from_totals([3, 3, 0], higher_is_better=False)
    (2, 2, 1)
    """
    sign = -1 if higher_is_better else 1
    keys = [sign * t for t in totals]
    return tuple(1 + sum(1 for other in keys if other < k) for k in keys)
