"""A seat's observation as numbers: a fixed-length float vector and a mask over a fixed
action space, computed from exactly what a bot receives.

The input is the observation dict of a ``DecisionRequest`` (``game.observe(seat)``, as
the referee sends it and :func:`arena.wire.protocol.observation_from_wire` reads it
back) and the request's options as the engine types them
(:func:`arena.wire.protocol.options_from_wire`). The training environments
(``arena.envs``) encode ``game.observe(seat)`` with these same functions, so nothing a
seat may not know can enter a vector, and a policy trained on the vectors sees the
same numbers in the arena. Pure Python on the engine's variant records (no numpy):
the SDK may import it.

One classic decision, from the observation to an action and back::

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(players=4, seed=3, rounds=2))
    >>> seat = game.to_act()[0]
    >>> obs, options = game.observe(seat), game.legal_actions(seat)
    >>> vector = encode(obs)
    >>> len(vector) == observation_layout("classic", 4).size == 465
    True
    >>> mask = action_mask(obs, options)
    >>> [decode(obs, i) for i, legal in enumerate(mask) if legal] == list(options)
    True

The observation vector (``P`` players; seats *relative*: slot ``k`` of a per-seat
segment is the seat ``k`` places to the observer's left, ``k = 0`` the observer
itself). :func:`observation_layout` names every segment's slice; each value lies in
its segment's bounds (``low``, ``high``: 0..1, scores -1..1).

Classic (``D`` = 60 cards in card order, ``H`` = 60 // P the largest hand)::

    phase          4     one-hot: bid, trump, play, over
    my_decision    1     1 when this seat is to decide now
    round          1     round / rounds
    hand_size      1     this round's hand size / H
    dealer         P     one-hot, relative
    bidding        3     one-hot: open, hidden, secret
    plus_minus_one 1
    hand           D     the seat's cards
    trump_card     D     the turned-up card (none: all 0)
    trump          5     one-hot: blue, green, red, yellow, no trump (or not yet chosen)
    bid_known      P     1 where the seat's bid is known to the observer
    bid            P     the bid / H (0 where unknown)
    tricks_won     P     tricks won this round / H
    leader         P     one-hot: the seat that led (or leads) the trick in progress
    lead_suit      5     one-hot: the four suits, none
    trick          P*D   per seat, the card it put on the trick in progress
    played         D     every card played this round, the trick in progress included
    scores         P     totals / the largest total a game of this length can reach

Wizard Extreme (``D`` = the table's deck: 45, 60 or 75 cards in card order)::

    phase          4     one-hot: predict, play, pay, over
    my_decision    1
    round          1     round / rounds
    dealer         P     one-hot, relative
    hand           D
    played         D     this round's cards so far
    trick          P*D   per seat, its card in the trick in progress
    leader         P
    lead_suit      6     one-hot: red, yellow, green, blue, purple, none
    tricks_won     P     / 15
    tokens         P*7   per seat, held tokens per colour (red..purple, white, black),
                         each / that colour's number in the game
    supply         7     the supply, the same way
    destroyer      P+1   one-hot: the seat holding the destroyer, or none (last)
    destroyer_free 1
    predicted      P
    destroyer_penalty 1  penalty / (penalty + 4)
    black_taken    1     / 6
    scores         P     totals / the largest total a game of this length can reach
    pending_supply 5     this prediction so far: tokens taken from the supply, per colour
    pending_rival  (P-1)*5  and from each rival (seats 1..P-1 to the left), per colour

Fields the vector leaves out: ``to_act`` (with hidden or secret bids the referee asks
every bidder at once, so who has bid already depends on timing, not on the game),
``round_history`` (its totals are ``scores``), ``hand_sizes``, ``last_trick`` and
``can_take`` (implied by the rest).

The action space, fixed per variant (:func:`action_layout`):

* classic, 85 actions: ``bid`` 0..20 (bids 0 to the largest hand of any table),
  ``trump`` 21..24 (blue, green, red, yellow), ``card`` 25..84 (the 60 cards in card order);
* Wizard Extreme, 108 actions: ``card`` 0..74 (the 75 cards in card order), then the
  prediction, built one token at a time: ``supply`` 75..79 (take a red, yellow, green,
  blue or purple token from the supply), ``rival`` 80..99 (take a token of colour ``c``
  from the seat ``k`` places to the left: ``80 + (k - 1) * 5 + c``), ``done`` 100
  (predict the tokens taken so far, none included), ``destroyer`` 101 (only as the
  first step, while the destroyer is free); then ``pay`` 102..107 (return a red,
  yellow, green, blue, purple or white token).

A prediction's steps are kept by the caller as a :data:`Pending` tuple of ``(colour,
source)`` pairs (source 0 the supply, ``k`` the seat ``k`` to the left), and
:func:`decode` returns the longer tuple for a token step, a :class:`engine.Prediction`
for ``done`` or ``destroyer``. The steps come in one fixed order, ``(colour, source)``
never decreasing, so every legal prediction has exactly one sequence: a colour's
supply tokens first, then rivals from the nearest on; a rival's token only once the
supply has none of that colour left and a white token remains to give in exchange.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from engine import BID, PAY, PLAY, PREDICT, TRUMP, Action, Prediction, variant
from engine.classic_cards import NUM_CARDS as CLASSIC_CARDS
from engine.classic_cards import SUITS as CLASSIC_SUITS
from engine.extreme_cards import COLOURS, SUPPLY_START, TOKEN_COLOURS, TOKEN_PENALTY

__all__ = ["ActionLayout", "Layout", "Pending", "action_layout", "action_mask", "decode", "encode",
           "encode_sparse", "legal_indices", "observation_layout",
           "prediction_of", "score_scale"]

Pending = tuple[tuple[int, int], ...]
"""The steps of a Wizard Extreme prediction so far: ``(colour, source)`` pairs, colour an
index into ``COLOURS``, source 0 for the supply or ``k`` for the seat ``k`` to the left."""

NO_PENDING: Pending = ()
_HAND = 15                                   # Wizard Extreme: every hand, every round
_MAX_RIVALS = 4                              # Wizard Extreme's largest table less the observer
_EXTREME_CODES = variant("extreme").cards    # the 75 cards, card order
_CLASSIC_CODES = variant("classic").cards
_CLASSIC_INDEX = {code: i for i, code in enumerate(_CLASSIC_CODES)}
_EXTREME_ACTION_INDEX = {code: i for i, code in enumerate(_EXTREME_CODES)}
_CLASSIC_PHASES = {BID: 0, TRUMP: 1, PLAY: 2, "over": 3}
_EXTREME_PHASES = {PREDICT: 0, PLAY: 1, PAY: 2, "over": 3}
_BIDDINGS = {"open": 0, "hidden": 1, "secret": 2}
_CLASSIC_SUIT = {suit: i for i, suit in enumerate(CLASSIC_SUITS)}
_EXTREME_COLOUR = {colour: i for i, colour in enumerate(COLOURS)}
_PAY_COLOURS = COLOURS + ("white",)
# The largest penalty one seat can hold in one round: every token of the game.
_MOST_TOKEN_PENALTY = sum(n * p for n, p in zip(SUPPLY_START, TOKEN_PENALTY))


# ------------------------------------------------------------------ layouts


@dataclass(frozen=True)
class Layout:
    """The observation vector of one variant and table size: its length, each
    segment's slice by name (in vector order), and every value's bounds."""

    variant: str
    players: int
    size: int
    slices: Mapping[str, slice]
    low: tuple[float, ...]
    high: tuple[float, ...]


@dataclass(frozen=True)
class ActionLayout:
    """The action space of one variant: its size and each kind of action's slice."""

    variant: str
    size: int
    slices: Mapping[str, slice]


def _layout(variant_name: str, players: int, segments: Sequence[tuple[str, int, float]]) -> Layout:
    slices: dict[str, slice] = {}
    low: list[float] = []
    start = 0
    for name, length, lowest in segments:
        slices[name] = slice(start, start + length)
        low += [lowest] * length
        start += length
    return Layout(variant_name, players, start, slices, tuple(low), (1.0,) * start)


@cache
def observation_layout(variant_name: str, players: int) -> Layout:
    """The vector layout of ``variant_name`` at a table of ``players``
    (``ValueError`` for a table size the variant does not have)."""
    record = variant(variant_name)
    if players not in record.players:
        raise ValueError(f"{variant_name} is for {record.min_players} to {record.max_players} players (got {players})")
    p = players
    if variant_name == "classic":
        d = CLASSIC_CARDS
        return _layout(variant_name, p, [
            ("phase", 4, 0.0), ("my_decision", 1, 0.0), ("round", 1, 0.0), ("hand_size", 1, 0.0),
            ("dealer", p, 0.0), ("bidding", 3, 0.0), ("plus_minus_one", 1, 0.0), ("hand", d, 0.0),
            ("trump_card", d, 0.0), ("trump", 5, 0.0), ("bid_known", p, 0.0), ("bid", p, 0.0),
            ("tricks_won", p, 0.0), ("leader", p, 0.0), ("lead_suit", 5, 0.0), ("trick", p * d, 0.0),
            ("played", d, 0.0), ("scores", p, -1.0),
        ])
    d = len(record.deck(p))
    return _layout(variant_name, p, [
        ("phase", 4, 0.0), ("my_decision", 1, 0.0), ("round", 1, 0.0), ("dealer", p, 0.0), ("hand", d, 0.0),
        ("played", d, 0.0), ("trick", p * d, 0.0), ("leader", p, 0.0), ("lead_suit", 6, 0.0),
        ("tricks_won", p, 0.0), ("tokens", p * 7, 0.0), ("supply", 7, 0.0), ("destroyer", p + 1, 0.0),
        ("destroyer_free", 1, 0.0), ("predicted", p, 0.0), ("destroyer_penalty", 1, 0.0),
        ("black_taken", 1, 0.0), ("scores", p, 0.0), ("pending_supply", 5, 0.0), ("pending_rival", (p - 1) * 5, 0.0),
    ])


@cache
def action_layout(variant_name: str) -> ActionLayout:
    """The fixed action space of ``variant_name`` (the same at every table size).

    >>> action_layout("classic").size, action_layout("extreme").slices["done"]
    (85, slice(100, 101, None))
    """
    variant(variant_name)
    if variant_name == "classic":
        bids = CLASSIC_CARDS // min(variant("classic").players) + 1
        sizes = [("bid", bids), ("trump", 4), ("card", CLASSIC_CARDS)]
    else:
        sizes = [("card", len(_EXTREME_CODES)), ("supply", 5), ("rival", 5 * _MAX_RIVALS), ("done", 1),
                 ("destroyer", 1), ("pay", len(_PAY_COLOURS))]
    slices: dict[str, slice] = {}
    start = 0
    for name, length in sizes:
        slices[name] = slice(start, start + length)
        start += length
    return ActionLayout(variant_name, start, slices)


def score_scale(obs: Mapping[str, Any]) -> float:
    """The largest total (in absolute value) any seat can reach in the game ``obs`` is
    from: the scores are divided by it, so they stay within -1..1.

    >>> score_scale({"variant": "classic", "players": 4, "rounds": 15})
    2550.0
    """
    players, rounds = obs["players"], obs["rounds"]
    if obs["variant"] == "classic":
        return float(rounds * (20 + 10 * (CLASSIC_CARDS // players)))
    return float(rounds * max(obs["destroyer_penalty"], _MOST_TOKEN_PENALTY))


# ------------------------------------------------------------------ observations


@cache
def _extreme_card_slots(players: int) -> dict[str, int]:
    return {code: i for i, code in enumerate(variant("extreme").deck(players))}


def encode_sparse(obs: Mapping[str, Any], pending: Pending = NO_PENDING) -> tuple[list[int], list[float]]:
    """The non-zero entries of :func:`encode`'s vector: ``(indices, values)``, indices
    ascending within each segment. Cheaper to copy into an array than the dense list."""
    if obs["variant"] == "classic":
        return _classic_sparse(obs)
    return _extreme_sparse(obs, pending)


def encode(obs: Mapping[str, Any], pending: Pending = NO_PENDING) -> list[float]:
    """The observation vector of ``obs`` (the layout of :func:`observation_layout`);
    ``pending``, for a Wizard Extreme prediction in progress, the steps taken so far."""
    indices, values = encode_sparse(obs, pending)
    vector = [0.0] * observation_layout(obs["variant"], obs["players"]).size
    for i, value in zip(indices, values):
        vector[i] = value
    return vector


def _classic_sparse(obs: Mapping[str, Any]) -> tuple[list[int], list[float]]:
    p = obs["players"]
    s = observation_layout("classic", p).slices
    seat = obs["seat"]
    most = CLASSIC_CARDS // p
    card = _CLASSIC_INDEX
    idx: list[int] = [s["phase"].start + _CLASSIC_PHASES[obs["phase"]]]
    val: list[float] = [1.0]
    if obs["decision"] is not None:
        idx.append(s["my_decision"].start)
        val.append(1.0)
    idx += [s["round"].start, s["hand_size"].start, s["dealer"].start + (obs["dealer"] - seat) % p,
            s["bidding"].start + _BIDDINGS[obs["bidding"]]]
    val += [obs["round"] / obs["rounds"], obs["hand_size"] / most, 1.0, 1.0]
    if obs["plus_minus_one"]:
        idx.append(s["plus_minus_one"].start)
        val.append(1.0)
    base = s["hand"].start
    hand = sorted(base + card[c] for c in obs["hand"])
    idx += hand
    val += [1.0] * len(hand)
    if obs["trump_card"] is not None:
        idx.append(s["trump_card"].start + card[obs["trump_card"]])
        val.append(1.0)
    trump = obs["trump"]
    idx.append(s["trump"].start + (4 if trump is None else _CLASSIC_SUIT[trump]))
    val.append(1.0)
    bids, tricks = obs["bids"], obs["tricks_won"]
    known, bid_at = s["bid_known"].start, s["bid"].start
    for k in range(p):
        b = bids[(seat + k) % p]
        if b is not None:
            idx.append(known + k)
            val.append(1.0)
    for k in range(p):
        b = bids[(seat + k) % p]
        if b:
            idx.append(bid_at + k)
            val.append(b / most)
    won = s["tricks_won"].start
    for k in range(p):
        t = tricks[(seat + k) % p]
        if t:
            idx.append(won + k)
            val.append(t / most)
    trick = obs["trick"]
    lead = obs["lead_suit"]
    idx += [s["leader"].start + (obs["leader"] - seat) % p,
            s["lead_suit"].start + (4 if lead is None else _CLASSIC_SUIT[lead])]
    val += [1.0, 1.0]
    if trick:
        base = s["trick"].start
        cards = sorted(base + ((e["seat"] - seat) % p) * CLASSIC_CARDS + card[e["card"]] for e in trick)
        idx += cards
        val += [1.0] * len(cards)
    base = s["played"].start
    played = sorted(base + card[c] for c in obs["played"])
    idx += played
    val += [1.0] * len(played)
    _scores(obs, s["scores"].start, seat, p, idx, val)
    return idx, val


def _scores(obs: Mapping[str, Any], start: int, seat: int, p: int, idx: list[int], val: list[float]) -> None:
    scale = score_scale(obs)
    scores = obs["scores"]
    for k in range(p):
        total = scores[(seat + k) % p]
        if total:
            idx.append(start + k)
            val.append(total / scale)


def _extreme_sparse(obs: Mapping[str, Any], pending: Pending) -> tuple[list[int], list[float]]:
    p = obs["players"]
    s = observation_layout("extreme", p).slices
    seat = obs["seat"]
    slot = _extreme_card_slots(p)
    d = len(slot)
    idx: list[int] = [s["phase"].start + _EXTREME_PHASES[obs["phase"]]]
    val: list[float] = [1.0]
    if obs["decision"] is not None:
        idx.append(s["my_decision"].start)
        val.append(1.0)
    idx += [s["round"].start, s["dealer"].start + (obs["dealer"] - seat) % p]
    val += [obs["round"] / obs["rounds"], 1.0]
    base = s["hand"].start
    hand = sorted(base + slot[c] for c in obs["hand"])
    idx += hand
    val += [1.0] * len(hand)
    base = s["played"].start
    played = sorted(base + slot[c] for c in obs["played"])
    idx += played
    val += [1.0] * len(played)
    trick = obs["trick"]
    if trick:
        base = s["trick"].start
        cards = sorted(base + ((e["seat"] - seat) % p) * d + slot[e["card"]] for e in trick)
        idx += cards
        val += [1.0] * len(cards)
    lead = obs["lead_suit"]
    idx += [s["leader"].start + (obs["leader"] - seat) % p,
            s["lead_suit"].start + (5 if lead is None else _EXTREME_COLOUR[lead])]
    val += [1.0, 1.0]
    won, tricks = s["tricks_won"].start, obs["tricks_won"]
    for k in range(p):
        t = tricks[(seat + k) % p]
        if t:
            idx.append(won + k)
            val.append(t / _HAND)
    held_at, tokens = s["tokens"].start, obs["tokens"]
    for k in range(p):
        held = tokens[(seat + k) % p]
        for c, colour in enumerate(TOKEN_COLOURS):
            n = held[colour]
            if n:
                idx.append(held_at + 7 * k + c)
                val.append(n / SUPPLY_START[c])
    supply_at, supply = s["supply"].start, obs["supply"]
    for c, colour in enumerate(TOKEN_COLOURS):
        n = supply[colour]
        if n:
            idx.append(supply_at + c)
            val.append(n / SUPPLY_START[c])
    destroyer = obs["destroyer"]
    idx.append(s["destroyer"].start + (p if destroyer is None else (destroyer - seat) % p))
    val.append(1.0)
    if obs["destroyer_free"]:
        idx.append(s["destroyer_free"].start)
        val.append(1.0)
    predicted_at, predicted = s["predicted"].start, obs["predicted"]
    for k in range(p):
        if predicted[(seat + k) % p]:
            idx.append(predicted_at + k)
            val.append(1.0)
    penalty = obs["destroyer_penalty"]
    if penalty:
        idx.append(s["destroyer_penalty"].start)
        val.append(penalty / (penalty + 4))
    if obs["black_taken"]:
        idx.append(s["black_taken"].start)
        val.append(obs["black_taken"] / SUPPLY_START[-1])
    _scores(obs, s["scores"].start, seat, p, idx, val)
    if pending:
        counts: dict[int, int] = {}
        for c, source in pending:
            key = c if source == 0 else 5 + (source - 1) * 5 + c
            counts[key] = counts.get(key, 0) + 1
        start = s["pending_supply"].start
        for key in sorted(counts):
            idx.append(start + key)
            val.append(counts[key] / SUPPLY_START[key % 5])
    return idx, val


# ------------------------------------------------------------------ actions


def legal_indices(obs: Mapping[str, Any], options: Sequence[Any] | None,
                  pending: Pending = NO_PENDING) -> list[int]:
    """The indices of the legal actions, ascending; ``[]`` when the observer has nothing
    to decide. ``options`` are the decision's options as the engine types them (a
    request's, through :func:`arena.wire.protocol.options_from_wire`); a prediction has
    none, and its legal steps come from the observation and ``pending``."""
    kind = obs["decision"]
    if kind is None:
        return []
    slices = action_layout(obs["variant"]).slices
    if kind == PLAY:
        base = slices["card"].start
        index = _CLASSIC_INDEX if obs["variant"] == "classic" else _EXTREME_ACTION_INDEX
        return sorted(base + index[c] for c in options or ())
    if kind == BID:
        base = slices["bid"].start
        return sorted(base + b for b in options or ())
    if kind == TRUMP:
        base = slices["trump"].start
        return sorted(base + _CLASSIC_SUIT[c] for c in options or ())
    if kind == PAY:
        base = slices["pay"].start
        return sorted(base + _PAY_COLOURS.index(c) for c in options or ())
    return _prediction_steps(obs, pending, slices)


def _prediction_steps(obs: Mapping[str, Any], pending: Pending, slices: Mapping[str, slice]) -> list[int]:
    p, seat = obs["players"], obs["seat"]
    supply = [obs["supply"][c] for c in COLOURS]
    white = obs["supply"]["white"]
    held = [[obs["tokens"][(seat + k) % p][c] for c in COLOURS] for k in range(p)]
    for colour, source in pending:
        if source == 0:
            supply[colour] -= 1
        else:
            held[source][colour] -= 1
            white -= 1
    last = pending[-1] if pending else (0, 0)
    legal: list[int] = []
    supply_at, rival_at = slices["supply"].start, slices["rival"].start
    for colour in range(5):
        if (colour, 0) >= last and supply[colour] > 0:
            legal.append(supply_at + colour)
    for k in range(1, p):
        for colour in range(5):
            if (colour, k) >= last and supply[colour] == 0 and white > 0 and held[k][colour] > 0:
                legal.append(rival_at + (k - 1) * 5 + colour)
    legal.append(slices["done"].start)
    if not pending and obs["destroyer_free"]:
        legal.append(slices["destroyer"].start)
    return sorted(legal)


def action_mask(obs: Mapping[str, Any], options: Sequence[Any] | None, pending: Pending = NO_PENDING) -> list[int]:
    """1 for each legal action of the fixed action space, 0 for the rest (see :func:`legal_indices`)."""
    mask = [0] * action_layout(obs["variant"]).size
    for i in legal_indices(obs, options, pending):
        mask[i] = 1
    return mask


def decode(obs: Mapping[str, Any], index: int, pending: Pending = NO_PENDING) -> Action | Pending:
    """What action ``index`` means for the seat of ``obs`` at its decision: the engine's
    action (a bid, a card code, a colour, a :class:`engine.Prediction`), or for a
    prediction's token step the longer :data:`Pending`. It does not check legality
    (:func:`legal_indices` does); ``ValueError`` for an index of another kind of decision."""
    return decode_action(obs["variant"], obs["decision"], index, obs["seat"], obs["players"], pending)


def decode_action(variant_name: str, kind: str | None, index: int, seat: int, players: int,
                  pending: Pending = NO_PENDING) -> Action | Pending:
    """:func:`decode` from the parts of the observation it needs (for a caller that has
    the decision but has not built the observation)."""
    slices = action_layout(variant_name).slices

    def offset(name: str) -> int:
        part = slices.get(name)
        if part is None or not part.start <= index < part.stop:
            raise ValueError(f"action {index} is no {name} action of {variant_name}")
        return index - part.start

    if kind == PLAY:
        return (_CLASSIC_CODES if variant_name == "classic" else _EXTREME_CODES)[offset("card")]
    if kind == BID:
        return offset("bid")
    if kind == TRUMP:
        return CLASSIC_SUITS[offset("trump")]
    if kind == PAY:
        return _PAY_COLOURS[offset("pay")]
    if kind != PREDICT:
        raise ValueError(f"nothing to decide (decision {kind!r})")
    if index == slices["done"].start:
        return prediction_of(pending, seat, players)
    if index == slices["destroyer"].start:
        return Prediction(destroyer=True)
    if slices["supply"].start <= index < slices["supply"].stop:
        return pending + ((index - slices["supply"].start, 0),)
    step = offset("rival")
    return pending + ((step % 5, step // 5 + 1),)


def prediction_of(pending: Pending, seat: int, players: int) -> Prediction:
    """The engine's :class:`~engine.Prediction` for a prediction's steps: the tokens
    counted per colour, and one ``take_from`` pair (absolute seat) per rival's token.

    >>> prediction_of(((0, 0), (0, 1), (3, 0)), seat=2, players=4).to_json()
    {'destroyer': False, 'tokens': {'red': 2, 'blue': 1}, 'take_from': [['red', 3]]}
    """
    counts = [0] * 5
    take_from: list[tuple[str, int]] = []
    for colour, source in pending:
        counts[colour] += 1
        if source:
            take_from.append((COLOURS[colour], (seat + source) % players))
    return Prediction(tokens={COLOURS[c]: n for c, n in enumerate(counts) if n}, take_from=tuple(take_from))

