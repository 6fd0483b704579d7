"""What a seat sees: the observation of each game, typed.

:meth:`engine.game.Game.observe` returns one of these, and the arena sends it to a bot as
JSON (``DecisionRequest.observation_json``), which the SDK parses back into the same
shape: a bot's decision methods receive a :class:`ClassicObservation` or an
:class:`ExtremeObservation`. They are ``TypedDict`` s, so at run time an observation is a
plain ``dict``, the wire's JSON stays as it is, and a type checker knows every field::

    >>> from engine import GameConfig, new_game
    >>> obs: Observation = new_game(GameConfig(variant="classic", players=3, seed=1)).observe(0)
    >>> if obs["variant"] == "classic":      # narrows the type to ClassicObservation
    ...     print(obs["hand_size"], obs["bids"])
    1 [None, None, None]

Token holdings (``tokens``, ``supply``, ``can_take``, a finished round's ``tokens``) are
plain ``dict[str, int]`` keyed by colour name, so that a bot may index them with a
colour it computed. ``docs/engine.md`` and ``docs/engine-extreme.md`` have examples.
"""

from __future__ import annotations

from typing import Literal, TypedDict


class TrickCard(TypedDict):
    """One card of a trick: ``seat`` played ``card`` (a card code, ``"r7"``, ``"W1"``)."""

    seat: int
    card: str


class LastTrick(TypedDict):
    """The last finished trick of this round: its ``cards`` in play order and the seat
    that won it (``winner``)."""

    cards: list[TrickCard]
    winner: int


class ClassicRound(TypedDict):
    """One finished round of classic Wizard, the same for every viewer; each list has one
    entry per seat.

    - ``round``: the round's number, 1-based.
    - ``bids``: the seats' bids (secret bids too: they are revealed at the round's end).
    - ``tricks``: the tricks each seat won.
    - ``scores``: the points each seat scored in the round (not the running totals).
    """

    round: int
    bids: list[int]
    tricks: list[int]
    scores: list[int]


class ClassicObservation(TypedDict):
    """What a seat of classic Wizard may know now (``docs/engine.md``, "Observation").
    Every field is always present; per-seat lists have one entry per seat, seat 0 first.

    - ``variant``: ``"classic"``.
    - ``players``: the number of seats, 3 to 6; seats are ``0..players-1``, clockwise.
    - ``seat``: the viewer's seat; ``None`` for a spectator.
    - ``round``, ``rounds``: the current round (1-based; the last one once the game is
      over) and how many rounds the game has.
    - ``hand_size``: the cards dealt to each seat this round.
    - ``dealer``: this round's dealer.
    - ``phase``: what the game waits for: ``"trump"``, ``"bid"``, ``"play"``, or ``"over"``.
    - ``to_act``: the seats that must decide now (``[]`` once the game is over).
    - ``decision``: the viewer's own decision kind now (``"trump"``, ``"bid"``,
      ``"play"``), ``None`` when it has none.
    - ``hand``: the viewer's cards, in card order; ``[]`` for a spectator.
    - ``hand_sizes``: the cards each seat holds now (public).
    - ``trump_card``: the card turned up this round; ``None`` when every card was dealt.
    - ``trump``: this round's trump suit; ``None`` for no trump, and while the dealer
      is still choosing it.
    - ``bidding``: the game's bidding rule: ``"open"``, ``"hidden"`` or ``"secret"``.
    - ``plus_minus_one``: whether the plus-minus-one rule is on.
    - ``bids``: this round's bids; ``None`` for a seat that has not bid, or whose bid this
      viewer may not know yet (hidden and secret bidding).
    - ``tricks_won``: the tricks each seat has won this round.
    - ``leader``: the seat that led (or will lead) the current trick.
    - ``lead_suit``: the current trick's lead suit; ``None`` while it has none (no card
      yet, or only Jesters, or a Wizard led).
    - ``trick``: the current trick so far, in play order.
    - ``last_trick``: the previous trick of this round; ``None`` before the first ends.
    - ``played``: every card played this round, in order, the current trick's included.
    - ``scores``: the running game totals (points: the most wins).
    - ``round_history``: the finished rounds, ``round - 1`` of them; ``None`` only when
      the caller asked for the observation without them
      (``observe(seat, round_history=False)``, which a bot never gets).
    """

    variant: Literal["classic"]
    players: int
    seat: int | None
    round: int
    rounds: int
    hand_size: int
    dealer: int
    phase: str
    to_act: list[int]
    decision: str | None
    hand: list[str]
    hand_sizes: list[int]
    trump_card: str | None
    trump: str | None
    bidding: str
    plus_minus_one: bool
    bids: list[int | None]
    tricks_won: list[int]
    leader: int
    lead_suit: str | None
    trick: list[TrickCard]
    last_trick: LastTrick | None
    played: list[str]
    scores: list[int]
    round_history: list[ClassicRound] | None


class ExtremeRound(TypedDict):
    """One finished round of Wizard Extreme, the same for every viewer.

    - ``round``: the round's number, 1-based.
    - ``scores``: each seat's penalty for the round (not the running totals).
    - ``destroyer``: the seat that held the destroyer, ``None`` if nobody took it.
    - ``tokens``: per seat, the tokens it held at the round's end, by colour name,
      non-zero counts only.
    """

    round: int
    scores: list[int]
    destroyer: int | None
    tokens: list[dict[str, int]]


class PayDecision(TypedDict):
    """The trick just won, whose winner chooses a token to return (present while the
    phase is ``"pay"``; the trick's cards are in ``last_trick``).

    - ``seat``: the winner, the seat to decide.
    - ``lead_suit``: the trick's lead colour.
    - ``winning_card``: the card that won it.
    - ``options``: the token colours the winner may return.
    """

    seat: int
    lead_suit: str
    winning_card: str
    options: list[str]


class ExtremeObservation(TypedDict):
    """What a seat of Wizard Extreme may know now (``docs/engine-extreme.md``,
    "Observation"). Every field is always present; per-seat lists have one entry per
    seat, seat 0 first. Token counts are by colour name (``red``, ``yellow``, ``green``,
    ``blue``, ``purple``, and for holdings also ``white`` and ``black``).

    - ``variant``: ``"extreme"``.
    - ``players``: the number of seats, 3 to 5; seats are ``0..players-1``, clockwise.
    - ``seat``: the viewer's seat; ``None`` for a spectator.
    - ``round``, ``rounds``: the current round (1-based; the last one once the game is
      over) and how many rounds the game has.
    - ``dealer``: this round's dealer.
    - ``phase``: what the game waits for: ``"predict"``, ``"play"``, ``"pay"``, or ``"over"``.
    - ``to_act``: the seat to decide, one at a time (``[]`` once the game is over).
    - ``decision``: the viewer's own decision kind now, ``None`` when it has none.
    - ``hand``: the viewer's cards, sorted red, yellow, green, blue, purple, then by
      rank; ``[]`` for a spectator.
    - ``hand_sizes``: the cards each seat holds now (public).
    - ``trump``: always ``"red"``.
    - ``tricks_won``: the tricks each seat has won this round (the destroyer's too).
    - ``leader``: the seat that led (or will lead) the current trick.
    - ``lead_suit``: the current trick's lead colour; ``None`` before its first card.
    - ``trick``: the current trick so far, in play order.
    - ``last_trick``: the previous trick of this round; ``None`` before the first ends.
    - ``played``: every card played this round, in order, the current trick's included.
    - ``scores``: the running penalty totals (the fewest wins).
    - ``round_history``: the finished rounds, ``round - 1`` of them; ``None`` only when
      the caller asked for the observation without them
      (``observe(seat, round_history=False)``, which a bot never gets).
    - ``tokens``: each seat's holding, all seven colours, zeros included (public).
    - ``supply``: the tokens left in the supply, all seven colours.
    - ``destroyer``: the seat holding the destroyer this round, ``None`` if nobody does.
    - ``destroyer_free``: whether the destroyer may still be taken (while predicting).
    - ``predicted``: whether each seat has predicted (or taken the destroyer) this round.
    - ``destroyer_penalty``: the destroyer's base penalty (a game option, 4 by default).
    - ``black_taken``: the black tokens taken this round (each lowers the destroyer's
      penalty by 1, down to 0).
    - ``can_take``: while predicting, how many tokens of each of the five colours the
      seat to predict could take, each colour on its own; ``None`` in other phases.
    - ``pay``: the pay decision while the phase is ``"pay"``; ``None`` otherwise.
    """

    variant: Literal["extreme"]
    players: int
    seat: int | None
    round: int
    rounds: int
    dealer: int
    phase: str
    to_act: list[int]
    decision: str | None
    hand: list[str]
    hand_sizes: list[int]
    trump: str
    tricks_won: list[int]
    leader: int
    lead_suit: str | None
    trick: list[TrickCard]
    last_trick: LastTrick | None
    played: list[str]
    scores: list[int]
    round_history: list[ExtremeRound] | None
    tokens: list[dict[str, int]]
    supply: dict[str, int]
    destroyer: int | None
    destroyer_free: bool
    predicted: list[bool]
    destroyer_penalty: int
    black_taken: int
    can_take: dict[str, int] | None
    pay: PayDecision | None


# Either game's observation; ``obs["variant"]`` tells which (and narrows the type).
Observation = ClassicObservation | ExtremeObservation
