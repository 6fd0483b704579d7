"""Sampling a world for search: deal the cards a seat cannot see, consistently with what it saw.

A search bot (perfect-information Monte Carlo, IS-MCTS) needs complete game states that
agree with everything its seat has observed. :func:`sample_world` takes the seat's
observation — the dict ``game.observe(seat)`` returns, which is also what a bot receives
on the wire — and returns a :class:`~engine.game.Game` of the right variant, positioned at
the same decision point, with the unseen cards dealt at random::

    >>> import random
    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(variant="classic", players=4, seed=3, rounds=5))
    >>> rng = random.Random(1)
    >>> while game.observe(0)["round"] < 4 or len(game.observe(0)["played"]) < 6:
    ...     seat = game.to_act()[0]
    ...     game.apply(seat, game.random_action(seat, rng))
    >>> obs = game.observe(game.to_act()[0])
    >>> world = sample_world(obs, rng)
    >>> world.observe(obs["seat"])["hand"] == obs["hand"], world.to_act() == game.to_act()
    (True, True)
    >>> while not world.is_over:                      # the engine plays on
    ...     seat = world.to_act()[0]
    ...     world.apply(seat, world.random_action(seat, rng))
    >>> len(world.result().totals)
    4

What the sample is conditioned on (hard constraints only; how opponents bid or play is
not used to weight hands):

* the seat's own hand, the cards played this round (``played``), the turned-up trump
  card (classic), every other seat's hand size (``hand_sizes``);
* the suits (classic) or colours (Extreme) a seat has shown void in by not following:
  derived from the round's trick history, which the observation determines (``played``
  in order, the first leader left of the dealer, every trick's winner from the rules).
  Classic: a seat that played a numbered card of another suit while the trick had a
  lead suit is void in it; Wizards and Jesters may always be played, so they show
  nothing, and neither does a card played before the lead suit was set (a Jester
  lead) or after a Wizard freed the trick. Extreme: a card of another colour than the
  first card's shows a void in the lead colour (red included);
* Extreme: the public tokens, supply, destroyer and black tokens are copied as they are.

Every placement of the unseen cards that satisfies these constraints is equally likely
(exactly: rejection sampling, with an exact counting sampler as fallback when rejection
is slow). Within those constraints the sample is therefore the posterior of a uniformly
random deal. The lower-level :func:`sample_deal` returns just the hands (bit masks), for
bots that run their own fast playouts; :func:`void_suits` and :func:`round_tricks` expose
the constraints.

Later rounds of the returned game are shuffled from a seed drawn from ``rng`` (they are
unknown anyway). With hidden or secret bidding, bids the seat has not seen are guessed:
by ``guess_bid(seat, hand_codes, observation)`` if given, else uniformly at random.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import factorial
from typing import Any, cast

from engine import classic as _classic
from engine import classic_cards as _cc
from engine import extreme as _extreme
from engine import extreme_cards as _xc
from engine.classic import ClassicGame
from engine.core import EngineError, GameConfig
from engine.extreme import ExtremeGame
from engine.game import Game
from engine.masks import cards_of
from engine.observations import ExtremeObservation

GuessBid = Callable[[int, list[str], Mapping[str, Any]], int]

# Rejection sampling is exact and cheap while most random deals are consistent; after this
# many misses the exact counting sampler takes over (a mixture of exact samplers is exact).
_REJECTION_TRIES = 24


@dataclass(frozen=True)
class Deal:
    """One sampled placement of the cards: every seat's current hand and (classic) the
    cards left undealt, not counting the turned-up trump card. Cards are ``int`` bit
    masks in the variant's card order (:mod:`engine.classic_cards`, :mod:`engine.extreme_cards`).
    """

    hands: tuple[int, ...]
    undealt: int

    def codes(self, variant: str) -> list[list[str]]:
        """The hands as card codes, e.g. ``[["b3", "W1"], ...]``."""
        codes_of = _cc.codes_of if variant == "classic" else _xc.codes_of
        return [list(codes_of(h)) for h in self.hands]


# ---------------------------------------------------------------- what the seat has seen


def round_tricks(observation: Mapping[str, Any]) -> list[list[tuple[int, int]]]:
    """This round's tricks as ``(seat, card)`` lists in play order, the trick in progress
    last (if started). Rebuilt from ``played``: the first trick is led left of the dealer,
    every later one by the previous trick's winner.

    >>> obs = {"variant": "extreme", "players": 3, "dealer": 2, "played": ["b1", "b5", "r1", "y2"]}
    >>> [[(s, _xc.CODES[c]) for s, c in t] for t in round_tricks(obs)]
    [[(0, 'b1'), (1, 'b5'), (2, 'r1')], [(2, 'y2')]]
    """
    players = observation["players"]
    classic = observation["variant"] == "classic"
    index = _cc.INDEX if classic else _xc.INDEX
    trump = _suit_index(observation.get("trump")) if classic else 0
    cards = [index[code] for code in observation["played"]]
    leader = (observation["dealer"] + 1) % players
    tricks: list[list[tuple[int, int]]] = []
    for start in range(0, len(cards), players):
        chunk = cards[start:start + players]
        trick = [((leader + i) % players, c) for i, c in enumerate(chunk)]
        tricks.append(trick)
        if len(chunk) == players:
            if classic:
                leader = trick[_classic.trick_winner(chunk, trump)][0]
            else:
                leader = trick[_extreme.trick_winner(trick)][0]
    return tricks


def void_suits(observation: Mapping[str, Any]) -> list[frozenset[int]]:
    """Per seat, the suits (classic, 0..3 = blue, green, red, yellow) or colours (Extreme,
    0..4 = red, yellow, green, blue, purple) it has shown void in this round.

    >>> obs = {"variant": "classic", "players": 3, "dealer": 2, "trump": "red",
    ...        "played": ["b5", "g2", "J1", "W1", "y3", "r4"]}
    >>> void_suits(obs)   # seat 1 did not follow blue; the Jester and the Wizard show nothing
    [frozenset(), frozenset({0}), frozenset()]
    """
    players = observation["players"]
    voids: list[set[int]] = [set() for _ in range(players)]
    classic = observation["variant"] == "classic"
    for trick in round_tricks(observation):
        cards = [c for _, c in trick]
        for i, (seat, card) in enumerate(trick):
            if classic:
                lead = _classic.lead_suit(cards[:i])
                suit = _cc.SUIT_OF[card]
                # Wizards and Jesters may always be played: they prove nothing.
                if lead != _cc.NO_SUIT and suit < 4 and suit != lead:
                    voids[seat].add(lead)
            elif i:
                lead = _xc.COLOUR_OF[cards[0]]
                if _xc.COLOUR_OF[card] != lead:
                    voids[seat].add(lead)
    return [frozenset(v) for v in voids]


def _suit_index(name: str | None) -> int:
    return _cc.SUITS.index(name) if name else _cc.NO_SUIT


def _unseen_and_bins(observation: Mapping[str, Any]) -> tuple[int, list[int], list[int], list[frozenset[int]]]:
    """The unseen cards (mask), the bins (other seats, then classic's undealt pile) with
    their sizes, and per bin the suits it may not receive."""
    seat = observation["seat"]
    if seat is None:
        raise EngineError("sample_world needs a seat's observation, not a spectator's")
    if observation["phase"] == "over":
        raise EngineError("the game is over: there is nothing to search")
    players = observation["players"]
    classic = observation["variant"] == "classic"
    index = _cc.INDEX if classic else _xc.INDEX
    deck = (1 << _cc.NUM_CARDS) - 1 if classic else sum(1 << c for c in _xc.deck_for(players))
    seen = 0
    for code in observation["hand"]:
        seen |= 1 << index[code]
    for code in observation["played"]:
        seen |= 1 << index[code]
    if classic and observation.get("trump_card"):
        seen |= 1 << index[observation["trump_card"]]
    unseen = deck & ~seen
    voids = void_suits(observation)
    bins = [s for s in range(players) if s != seat]
    sizes = [observation["hand_sizes"][s] for s in bins]
    forbidden = [voids[s] for s in bins]
    rest = unseen.bit_count() - sum(sizes)
    if classic:
        bins.append(-1)  # the undealt pile: no constraint
        sizes.append(rest)
        forbidden.append(frozenset())
    elif rest:
        raise EngineError("observation inconsistent: unseen cards do not fill the other hands")
    if rest < 0:
        raise EngineError("observation inconsistent: fewer unseen cards than the other hands hold")
    return unseen, bins, sizes, forbidden


# ---------------------------------------------------------------- sampling the hands


def sample_deal(observation: Mapping[str, Any], rng: random.Random) -> Deal:
    """The hidden cards placed at random, uniformly among the placements consistent with
    the observation (see the module docstring); the seat's own hand as observed.

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(variant="extreme", players=3, seed=4, rounds=1))
    >>> obs = game.observe(1)
    >>> deal = sample_deal(obs, random.Random(0))
    >>> deal.codes("extreme")[1] == obs["hand"], [h.bit_count() for h in deal.hands]
    (True, [15, 15, 15])
    """
    unseen, bins, sizes, forbidden = _unseen_and_bins(observation)
    classic = observation["variant"] == "classic"
    suit_masks = _cc.SUIT_MASKS if classic else _xc.COLOUR_MASKS
    placed = _place(unseen, sizes, forbidden, suit_masks, rng)
    index = _cc.INDEX if classic else _xc.INDEX
    hands = [0] * observation["players"]
    hands[observation["seat"]] = sum(1 << index[c] for c in observation["hand"])
    undealt = 0
    for b, mask in zip(bins, placed):
        if b < 0:
            undealt = mask
        else:
            hands[b] = mask
    return Deal(tuple(hands), undealt)


def _deal_out(cards: list[int], sizes: Sequence[int], rng: random.Random) -> list[int]:
    """Shuffle ``cards`` and cut them into bins of ``sizes``: a uniformly random placement."""
    rng.shuffle(cards)
    out, start = [], 0
    for n in sizes:
        out.append(sum(1 << c for c in cards[start:start + n]))
        start += n
    return out


def _place(unseen: int, sizes: list[int], forbidden: list[frozenset[int]], suit_masks: Sequence[int],
           rng: random.Random) -> list[int]:
    """Masks, one per bin, of a uniformly random placement of ``unseen`` respecting the voids."""
    # Only suits some bin may not receive constrain the deal; every other card is free.
    constrained = sorted({s for f in forbidden for s in f})
    groups = [(unseen & suit_masks[s], tuple(b for b, f in enumerate(forbidden) if s not in f))
              for s in constrained]
    groups = [(m, allowed) for m, allowed in groups if m]
    if not groups:
        return _deal_out(cards_of(unseen), sizes, rng)
    cards = cards_of(unseen)
    for _ in range(_REJECTION_TRIES):
        masks = _deal_out(cards, sizes, rng)
        if all(not masks[b] & suit_masks[s] for b, f in enumerate(forbidden) for s in f):
            return masks
    return _place_exact(unseen, sizes, groups, rng)


def _place_exact(unseen: int, sizes: list[int], groups: list[tuple[int, tuple[int, ...]]],
                 rng: random.Random) -> list[int]:
    """Exact uniform sampling by counting: choose how many cards of each constrained suit
    every bin gets, weighted by the number of placements that choice leaves, then the
    cards themselves at random."""
    free = unseen
    for m, _ in groups:
        free &= ~m
    counts = tuple(m.bit_count() for m, _ in groups)
    alloweds = tuple(a for _, a in groups)
    caps = tuple(sizes)
    total = _count(counts, alloweds, caps)
    if total == 0:
        raise EngineError("no deal is consistent with this observation")
    masks = [0] * len(sizes)
    for g, (m, allowed) in enumerate(groups):
        rest_counts, rest_allowed = counts[g + 1:], alloweds[g + 1:]
        pick_at = rng.randrange(total)
        for comp in _compositions(counts[g], allowed, caps):
            left = list(caps)
            for b, n in zip(allowed, comp):
                left[b] -= n
            weight = _multinomial(counts[g], comp) * _count(rest_counts, rest_allowed, tuple(left))
            if pick_at < weight:
                break
            pick_at -= weight
        cut = _deal_out(cards_of(m), comp, rng)
        for b, mask in zip(allowed, cut):
            masks[b] |= mask
        caps = tuple(left)
        total = weight // _multinomial(counts[g], comp)
    for b, mask in enumerate(_deal_out(cards_of(free), caps, rng)):
        masks[b] |= mask
    return masks


def _multinomial(n: int, parts: Sequence[int]) -> int:
    out = factorial(n)
    for k in parts:
        out //= factorial(k)
    return out


def _compositions(n: int, allowed: tuple[int, ...], caps: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every way to split ``n`` cards over the ``allowed`` bins within their capacities."""
    limits = [caps[b] for b in allowed]
    out: list[tuple[int, ...]] = []

    def walk(i: int, left: int, prefix: tuple[int, ...]) -> None:
        if i == len(limits) - 1:
            if left <= limits[i]:
                out.append(prefix + (left,))
            return
        room_after = sum(limits[i + 1:])
        for k in range(max(0, left - room_after), min(left, limits[i]) + 1):
            walk(i + 1, left - k, prefix + (k,))

    if limits:
        walk(0, n, ())
    elif n == 0:
        out.append(())
    return out


@lru_cache(maxsize=100_000)
def _count(counts: tuple[int, ...], alloweds: tuple[tuple[int, ...], ...], caps: tuple[int, ...]) -> int:
    """The number of placements of the constrained groups ``counts`` (each only into its
    allowed bins) and of the free cards (the rest of the capacity, anywhere)."""
    if not counts:
        return _multinomial(sum(caps), caps)
    total = 0
    allowed = alloweds[0]
    for comp in _compositions(counts[0], allowed, caps):
        left = list(caps)
        for b, n in zip(allowed, comp):
            left[b] -= n
        total += _multinomial(counts[0], comp) * _count(counts[1:], alloweds[1:], tuple(left))
    return total


# ---------------------------------------------------------------- the world as a game


def config_of(observation: Mapping[str, Any], seed: int = 0) -> GameConfig:
    """The game configuration an observation implies (with ``seed`` for later rounds).

    Classic's amigo length shows only once a hand size differs from the round number;
    pass the match's real configuration to :func:`sample_world` when you have it.

    >>> config_of({"variant": "extreme", "players": 3, "rounds": 2, "destroyer_penalty": 4}).rounds
    2
    """
    players = observation["players"]
    if observation["variant"] == "extreme":
        return GameConfig(variant="extreme", players=players, seed=seed, rounds=observation["rounds"],
                          destroyer_penalty=observation.get("destroyer_penalty", 4))
    rounds = observation["rounds"]
    amigo = observation.get("hand_size", observation["round"]) != observation["round"]
    return GameConfig(
        variant="classic", players=players, seed=seed,
        rounds=None if amigo or rounds == 60 // players else rounds,
        length="amigo" if amigo else "standard",
        bidding=observation.get("bidding", "open"), plus_minus_one=observation.get("plus_minus_one", False),
    )


def sample_world(observation: Mapping[str, Any], rng: random.Random, *, config: GameConfig | None = None,
                 guess_bid: GuessBid | None = None) -> Game:
    """A complete game state consistent with ``observation`` (a seat's ``game.observe(seat)``
    dict), at the same decision point: the same seats to act, the same legal options for
    the observing seat, the same scores, bids, tricks, tokens. The engine can play it on
    to the end (``legal_actions``, ``apply``, ``random_action``, ``result``).

    ``config``: the match's configuration if known (only the seed is replaced, by one
    drawn from ``rng``); otherwise it is inferred by :func:`config_of`. ``guess_bid``:
    see the module docstring. The returned game's ``actions`` and event log begin at the
    sampled round, so :func:`engine.replay` cannot rebuild it.
    """
    deal = sample_deal(observation, rng)
    seed = rng.getrandbits(32)
    if config is None:
        config = config_of(observation, seed)
    else:
        config = GameConfig.from_dict({**config.to_dict(), "seed": seed})
    if observation["variant"] == "extreme":
        return ExtremeGame.from_observation(config, cast(ExtremeObservation, observation), list(deal.hands))
    return _classic_world(config, observation, deal, rng, guess_bid)


def _classic_world(config: GameConfig, obs: Mapping[str, Any], deal: Deal, rng: random.Random,
                   guess_bid: GuessBid | None) -> ClassicGame:
    players = obs["players"]
    hands = list(deal.hands)
    for trick in round_tricks(obs):
        for seat, card in trick:  # back to the hands as dealt: the world replays the round
            hands[seat] |= 1 << card
    trump_card = obs.get("trump_card")
    game = ClassicGame.from_deal(
        config, [list(_cc.codes_of(h)) for h in hands], round=obs["round"],
        trump_card=trump_card, undealt=list(_cc.codes_of(deal.undealt)), totals=obs["scores"],
        history=[(tuple(r["bids"]), tuple(r["tricks"]), tuple(r["scores"])) for r in obs["round_history"]],
    )
    if game.decision(game.to_act()[0]).kind == "trump":
        if obs["phase"] == "trump":
            return game
        game.apply(obs["dealer"], obs["trump"])
    # Bids: the ones seen, in bidding order; with hidden/secret bidding the others that
    # were made (their seats no longer to act) are guessed.
    first = (obs["dealer"] + 1) % players
    waiting = set(obs["to_act"]) if obs["phase"] == "bid" else set()
    for k in range(players):
        seat = (first + k) % players
        bid = obs["bids"][seat]
        if bid is None:
            if seat in waiting or (obs["bidding"] == "open" and obs["phase"] == "bid"):
                continue
            codes = list(_cc.codes_of(hands[seat]))
            bid = guess_bid(seat, codes, obs) if guess_bid else int(rng.random() * (obs["hand_size"] + 1))
        game.apply(seat, bid)
    for code in obs["played"]:
        game.apply(game.to_act()[0], code)
    return game
