"""What each variant is, one record per variant, and the records by name.

Every fact about a variant that code outside the rules needs is stated here, once:
its name, its table sizes, its standard length, which way its totals rank, its
decision kinds, its cards, its options and their checks. The rest of the arena asks
a record and never tests a variant's name. As python-chess states its variants' facts
as class attributes and keeps a list of them, each record is a class whose
attributes are the facts; :data:`VARIANT_RECORDS` holds one instance of each, in
:data:`VARIANTS` order::

    >>> from engine import VARIANTS, variant
    >>> VARIANTS
    ('classic', 'extreme')
    >>> classic = variant("classic")
    >>> classic.players, classic.higher_is_better, classic.decision_kinds, classic.bids
    ((3, 4, 5, 6), True, ('bid', 'play', 'trump'), True)
    >>> classic.default_rounds(5), classic.trump, classic.special_cards[:2]
    (12, None, ('W1', 'W2'))
    >>> extreme = variant("extreme")
    >>> extreme.default_rounds(3), extreme.score_order, extreme.options
    (6, 'lower_is_better', ('players', 'rounds', 'destroyer_penalty'))
    >>> extreme.cards_in_words
    'r1..r15, y1..y15, g1..g15, b1..b15, p1..p15'
    >>> variant("chess")
    Traceback (most recent call last):
    ...
    engine.core.ConfigError: unknown variant 'chess'; allowed: classic, extreme

A new variant is its rules module (a class satisfying :class:`engine.game.Game`) and a
record here, added to :data:`VARIANT_RECORDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from engine import classic, classic_cards, extreme, extreme_cards
from engine.classic import ClassicGame, hand_sizes
from engine.core import BID, PAY, PLAY, PREDICT, TRUMP, VARIANT_CHECKS, ConfigError, GameConfig
from engine.extreme import DEFAULT_ROUNDS, HAND_SIZE, ExtremeGame
from engine.game import Game


class Variant:
    """A variant's facts (class attributes, set by each variant's record) and the
    functions of a table size or a config that its rules define."""

    name: ClassVar[str]
    """The variant's name, as in ``GameConfig.variant``, on the wire and in the store."""
    players: ClassVar[tuple[int, ...]]
    """The table sizes the rules allow, smallest first."""
    higher_is_better: ClassVar[bool]
    """True when the highest total wins (points); False when the lowest does (penalties)."""
    decision_kinds: ClassVar[tuple[str, ...]]
    """The kinds of :class:`~engine.core.Decision` a game of this variant asks for, in
    ``engine.DECISION_KINDS`` order."""
    suits: ClassVar[tuple[str, ...]]
    """The suits (colours) of the numbered cards, in card order."""
    ranks: ClassVar[tuple[int, ...]]
    """The ranks of the numbered cards in the full deck (a table may use fewer: :meth:`top_rank`)."""
    special_cards: ClassVar[tuple[str, ...]]
    """The codes of the cards that have no suit (classic's Wizards and Jesters)."""
    cards: ClassVar[tuple[str, ...]]
    """Every card code of the full deck, in card order."""
    trump: ClassVar[str | None]
    """The suit that is always trump; None when each round's deal decides it."""
    action_colours: ClassVar[tuple[str, ...]]
    """The colour names an action may carry: a trump choice, a token returned or predicted."""
    options: ClassVar[tuple[str, ...]]
    """The ``GameConfig`` fields that mean something in this variant (besides ``variant``
    and ``seed``); the others must keep their defaults."""
    token_supply: ClassVar[tuple[tuple[str, int], ...]] = ()
    """The tokens on the table at the start, (colour, count) per colour; none without tokens."""

    @property
    def min_players(self) -> int:
        return self.players[0]

    @property
    def max_players(self) -> int:
        return self.players[-1]

    @property
    def score_order(self) -> str:
        """``"higher_is_better"`` or ``"lower_is_better"``: how the boards and lists name the order."""
        return "higher_is_better" if self.higher_is_better else "lower_is_better"

    @property
    def bids(self) -> bool:
        """Whether players bid a number of tricks (so a round can be bid exactly)."""
        return BID in self.decision_kinds

    @property
    def cards_in_words(self) -> str:
        """The card codes in short, as error messages list them: ``b1..b13, ..., J1..J4``."""
        runs: dict[str, list[str]] = {}
        for code in self.cards:
            runs.setdefault(code[0], []).append(code)
        return ", ".join(f"{run[0]}..{run[-1]}" for run in runs.values())

    def default_rounds(self, players: int) -> int:
        """The number of rounds of the standard length at a table of ``players``."""
        raise NotImplementedError

    def rounds(self, config: GameConfig) -> int:
        """The number of rounds a game of ``config`` plays (``KeyError`` for a table size
        whose length the rules do not state)."""
        raise NotImplementedError

    def hand_sizes(self, config: GameConfig) -> tuple[int, ...]:
        """The hand size (the number of tricks) of every round of a game of ``config``."""
        raise NotImplementedError

    def top_rank(self, players: int) -> int:
        """The highest rank in the deck at a table of ``players``."""
        return self.ranks[-1]

    def deck(self, players: int) -> tuple[str, ...]:
        """The codes of the cards used at a table of ``players``, in card order."""
        return self.cards

    def check(self, config: GameConfig) -> None:
        """Raise :class:`~engine.core.ConfigError` for an option this variant does not
        allow in ``config`` (the message names the allowed values). ``GameConfig.validate``
        calls it after checking what every variant shares."""
        raise NotImplementedError

    def new_game(self, config: GameConfig) -> Game:
        """A new game of ``config`` (already validated), at its first decision."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"variant({self.name!r})"


class Classic(Variant):
    """Classic Wizard (``docs/rules.md`` section 1): bid your tricks, score points."""

    name = "classic"
    players = (3, 4, 5, 6)
    higher_is_better = classic.HIGHER_IS_BETTER
    decision_kinds = (BID, PLAY, TRUMP)
    suits = classic_cards.SUITS
    ranks = tuple(range(1, classic_cards.RANKS + 1))
    special_cards = tuple(code for code in classic_cards.CODES if code[0] in "WJ")
    cards = classic_cards.CODES
    trump = None            # the turned-up card's suit, or the dealer's choice on a Wizard
    action_colours = classic_cards.SUITS
    options = ("players", "rounds", "length", "bidding", "plus_minus_one")
    lengths = ("standard", "amigo")
    biddings = ("open", "hidden", "secret")

    def default_rounds(self, players: int) -> int:
        return classic_cards.NUM_CARDS // players       # until one round deals every card

    def rounds(self, config: GameConfig) -> int:
        return len(hand_sizes(config))

    def hand_sizes(self, config: GameConfig) -> tuple[int, ...]:
        return hand_sizes(config)

    def check(self, config: GameConfig) -> None:
        if config.players not in self.players:
            raise ConfigError(f"{self.name} is for {self.min_players} to {self.max_players} players "
                              f"(got {config.players})")
        if config.length not in self.lengths:
            raise ConfigError(f"unknown game length {config.length!r}; allowed: {', '.join(self.lengths)}")
        if config.bidding not in self.biddings:
            raise ConfigError(f"unknown bidding {config.bidding!r}; allowed: {', '.join(self.biddings)}")
        if config.plus_minus_one and config.bidding != "open":
            raise ConfigError(f"plus-minus-one needs open bidding (got bidding {config.bidding!r})")
        if config.destroyer_penalty != 4:
            raise ConfigError("destroyer penalty is a Wizard Extreme option; classic has no destroyer")
        max_rounds = self.default_rounds(config.players)
        if config.rounds is not None:
            if config.length == "amigo":
                raise ConfigError("choose either a number of rounds or the amigo length, not both")
            if not 1 <= config.rounds <= max_rounds:
                raise ConfigError(
                    f"classic with {config.players} players allows at most {max_rounds} rounds (got {config.rounds})"
                    if config.rounds > max_rounds
                    else f"rounds must be between 1 and {max_rounds} (got {config.rounds})"
                )

    def new_game(self, config: GameConfig) -> Game:
        return ClassicGame(config)


class Extreme(Variant):
    """Wizard Extreme (``docs/rules.md`` section 2): predict with tokens, count penalties."""

    name = "extreme"
    players = (3, 4, 5)
    higher_is_better = extreme.HIGHER_IS_BETTER
    decision_kinds = (PLAY, PREDICT, PAY)
    suits = extreme_cards.COLOURS
    ranks = tuple(range(1, extreme_cards.RANKS + 1))
    special_cards = ()
    cards = extreme_cards.CODES
    trump = extreme_cards.COLOURS[extreme_cards.RED]
    action_colours = extreme_cards.TOKEN_COLOURS
    options = ("players", "rounds", "destroyer_penalty")
    token_supply = tuple(zip(extreme_cards.TOKEN_COLOURS, extreme_cards.SUPPLY_START, strict=True))

    def default_rounds(self, players: int) -> int:
        return DEFAULT_ROUNDS[players]

    def rounds(self, config: GameConfig) -> int:
        return config.rounds if config.rounds is not None else DEFAULT_ROUNDS[config.players]

    def hand_sizes(self, config: GameConfig) -> tuple[int, ...]:
        return (HAND_SIZE,) * self.rounds(config)     # every round shares out the whole deck

    def top_rank(self, players: int) -> int:
        return extreme_cards.MAX_RANK[players]

    def deck(self, players: int) -> tuple[str, ...]:
        return tuple(extreme_cards.CODES[c] for c in extreme_cards.deck_for(players))

    def check(self, config: GameConfig) -> None:
        if config.players not in self.players:
            raise ConfigError(f"{self.name} is for {self.min_players} to {self.max_players} players "
                              f"(got {config.players})")
        if config.length != "standard":
            raise ConfigError(f"game length {config.length!r} is a classic option; extreme uses rounds")
        if config.bidding != "open" or config.plus_minus_one:
            raise ConfigError("bidding options are classic options; extreme predicts with tokens")
        if config.rounds is not None and config.rounds < 1:
            raise ConfigError(f"extreme needs at least 1 round (got {config.rounds})")
        if config.rounds is not None and config.rounds > extreme.MAX_ROUNDS:
            raise ConfigError(f"extreme allows at most {extreme.MAX_ROUNDS} rounds (got {config.rounds})")
        if isinstance(config.destroyer_penalty, bool) or not isinstance(config.destroyer_penalty, int) \
                or not 0 <= config.destroyer_penalty <= extreme.MAX_DESTROYER_PENALTY:
            raise ConfigError(f"destroyer penalty must be a whole number from 0 to {extreme.MAX_DESTROYER_PENALTY} "
                              f"(got {config.destroyer_penalty!r})")

    def new_game(self, config: GameConfig) -> Game:
        return ExtremeGame(config)


# The records by name, in VARIANTS order (read-only).
VARIANT_RECORDS: Mapping[str, Variant] = MappingProxyType({record.name: record for record in (Classic(), Extreme())})
# The variants' names: what GameConfig.variant, the wire and the store accept.
VARIANTS: tuple[str, ...] = tuple(VARIANT_RECORDS)
VARIANT_CHECKS.update((name, record.check) for name, record in VARIANT_RECORDS.items())


def variant(name: str) -> Variant:
    """The record of the variant called ``name``; :class:`~engine.core.ConfigError` (a
    ``ValueError``) naming the allowed ones for any other name."""
    if name not in VARIANTS:       # a tuple: any value, hashable or not, gets the error
        raise ConfigError(f"unknown variant {name!r}; allowed: {', '.join(VARIANTS)}")
    return VARIANT_RECORDS[name]
