"""engine.worlds: sampled worlds agree with everything the seat observed, and are uniform.

* properties (hypothesis): random game prefixes of both variants and every table size;
  each sampled world keeps the seat's observation unchanged (hand, hand sizes, tricks,
  bids, tokens: ``world.observe(seat) == observation``), places every card once, gives
  no player a card of a suit it showed void in (worked out here independently, from the
  public trick events), and plays on to a result;
* uniformity: at the end of a round (few unseen cards), every consistent placement of the
  unseen cards appears and the frequencies pass a chi-square test against the uniform
  distribution (critical values at alpha = 0.001; the samples are seeded, so the test
  is deterministic). The exact counting sampler, which rejection sampling hands over to
  when voids make random deals rarely consistent, is checked the same way on its own.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import GameConfig, new_game, sample_deal, sample_world
from engine import classic_cards as cc
from engine import extreme_cards as xc
from engine.game import Game
from engine.worlds import _place_exact

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- helpers


def play_prefix(game: Game, steps: int, rng: random.Random) -> None:
    for _ in range(steps):
        if game.is_over:
            return
        seat = game.to_act()[0]
        game.apply(seat, game.random_action(seat, rng))


def independent_voids(game: Game) -> list[set[str]]:
    """Per seat, the suit/colour names it has shown void in this round, from the public
    events (trick events and the trick in progress), written without engine.worlds."""
    events, _ = game.events_for(None, 0)
    start = max(i for i, e in enumerate(events) if e["type"] == "round_start")
    voids: list[set[str]] = [set() for _ in range(game.players)]
    variant = game.config.variant
    letters = {"b": "blue", "g": "green", "r": "red", "y": "yellow", "p": "purple"}

    def check(cards: list[dict[str, Any]], lead: str | None) -> None:
        if lead is None:
            return
        for entry in cards:
            letter = entry["card"][0]
            if letter in "WJ" and variant == "classic":
                continue  # Wizards and Jesters may always be played
            if letters[letter] != lead:
                voids[entry["seat"]].add(lead)

    for event in events[start:]:
        if event["type"] == "trick":
            check(event["cards"], event["lead_suit"])
    spectator = game.observe(None)
    check(spectator["trick"], spectator["lead_suit"])
    return voids


def suit_name(code: str) -> str | None:
    return {"b": "blue", "g": "green", "r": "red", "y": "yellow", "p": "purple"}.get(code[0])


def check_world(game: Game, seat: int, rng: random.Random) -> None:
    obs = game.observe(seat)
    world = sample_world(obs, rng)
    assert type(world) is type(game)
    assert world.observe(seat) == obs  # hand, sizes, bids, tricks, tokens, trick, scores...
    assert world.to_act() == game.to_act()
    for s in game.to_act():
        if s == seat:
            assert world.legal_actions(s) == game.legal_actions(s)
    snap = world.snapshot()
    hands = snap["hands"]
    assert hands[seat] == obs["hand"]
    assert [len(h) for h in hands] == obs["hand_sizes"]
    undealt = snap.get("undealt", [])
    everything = [c for h in hands for c in h] + obs["played"] + undealt
    assert len(everything) == len(set(everything)), "a card placed twice"
    deck = cc.CODES if obs["variant"] == "classic" else tuple(xc.CODES[c] for c in xc.deck_for(game.players))
    assert sorted(everything) == sorted(deck), "every card of the deck exactly once"
    if obs["variant"] == "classic" and obs["trump_card"]:
        assert obs["trump_card"] in undealt and all(obs["trump_card"] not in h for h in hands)
    played = set(obs["played"])
    for s, (hand, void) in enumerate(zip(hands, independent_voids(game))):
        assert not played & set(hand)
        assert not {suit_name(c) for c in hand} & void, f"seat {s} got a suit it showed void in"
    # The engine plays the world on to the end.
    play_prefix(world, 10_000, rng)
    assert world.is_over and len(world.result().totals) == game.players


# ---------------------------------------------------------------- properties


@SETTINGS
@given(players=st.sampled_from([3, 4, 5, 6]), seed=st.integers(0, 2**31), steps=st.integers(0, 120),
       bidding=st.sampled_from(["open", "open", "hidden", "secret"]), rounds=st.integers(1, 6))
def test_classic_worlds_are_consistent(players: int, seed: int, steps: int, bidding: str, rounds: int) -> None:
    rounds = min(rounds * 2, 60 // players)
    game = new_game(GameConfig(variant="classic", players=players, seed=seed, rounds=rounds, bidding=bidding))
    rng = random.Random(seed)
    play_prefix(game, steps, rng)
    if game.is_over:
        return
    for seat in range(players):
        check_world(game, seat, rng)


@SETTINGS
@given(players=st.sampled_from([3, 4, 5]), seed=st.integers(0, 2**31), steps=st.integers(0, 90),
       rounds=st.integers(1, 2))
def test_extreme_worlds_are_consistent(players: int, seed: int, steps: int, rounds: int) -> None:
    game = new_game(GameConfig(variant="extreme", players=players, seed=seed, rounds=rounds))
    rng = random.Random(seed)
    play_prefix(game, steps, rng)
    if game.is_over:
        return
    for seat in range(players):
        check_world(game, seat, rng)


def test_full_classic_deal_late_in_the_round() -> None:
    """Many tricks, many voids: 3 players, 20 cards each, all 60 dealt (no trump card)."""
    for seed in range(4):
        game = new_game(GameConfig(variant="classic", players=3, seed=seed, rounds=20))
        rng = random.Random(seed)
        while game.observe(None)["round"] < 20:
            play_prefix(game, 1, rng)
        play_prefix(game, 3 + 30 + seed * 7, rng)
        for seat in range(3):
            check_world(game, seat, rng)


# ---------------------------------------------------------------- uniformity


# Chi-square critical values at alpha = 0.001 for 1..10 degrees of freedom (the usual table);
# beyond, the Wilson-Hilferty approximation, within 0.5 % there.
_CHI2_999 = (10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322, 26.124, 27.877, 29.588)


def chi2_critical(df: int) -> float:
    if df <= len(_CHI2_999):
        return _CHI2_999[df - 1]
    z = 3.0902  # the 0.999 quantile of the standard normal
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def consistent_placements(game: Game, seat: int) -> set[tuple[tuple[str, ...], ...]]:
    """Brute force: every split of the unseen cards into the other hands that respects the voids."""
    obs = game.observe(seat)
    others = [s for s in range(game.players) if s != seat]
    unseen = sorted(c for s in others for c in game.snapshot()["hands"][s])
    voids = independent_voids(game)
    sizes = [obs["hand_sizes"][s] for s in others]
    found = set()
    for perm in itertools.permutations(unseen):
        hands, start = [], 0
        for n in sizes:
            hands.append(tuple(sorted(perm[start:start + n])))
            start += n
        if all(not {suit_name(c) for c in h} & voids[s] for s, h in zip(others, hands)):
            found.add(tuple(hands))
    return found


def chi2_uniform(counts: Counter, categories: int, n: int) -> float:
    """Pearson's statistic against equal frequencies; categories never seen count too."""
    expected = n / categories
    return sum((v - expected) ** 2 / expected for v in counts.values()) + (categories - len(counts)) * expected


def check_uniform(game: Game, seat: int, per_category: int, rng: random.Random) -> int:
    """Sample the deal many times; every consistent placement appears, uniformly. Returns
    the number of placements (to let callers check the case was not trivial)."""
    obs = game.observe(seat)
    others = [s for s in range(game.players) if s != seat]
    placements = consistent_placements(game, seat)
    n = per_category * len(placements)
    counts: Counter = Counter()
    for _ in range(n):
        codes = sample_deal(obs, rng).codes(obs["variant"])
        key = tuple(tuple(sorted(codes[s])) for s in others)
        assert key in placements, f"inconsistent placement sampled: {key}"
        counts[key] += 1
    assert set(counts) == placements, "some consistent placement never appeared"
    if len(placements) > 1:
        stat = chi2_uniform(counts, len(placements), n)
        assert stat < chi2_critical(len(placements) - 1), (stat, len(placements))
    return len(placements)


def end_of_round(variant: str, players: int, rounds: int, tricks_left: int, seed: int) -> Game:
    """A game whose last round is dealt in full, played on until ``tricks_left`` tricks remain
    and one card of the next trick is down (so voids and the trick in progress both count)."""
    game = new_game(GameConfig(variant=variant, players=players, seed=seed, rounds=rounds))
    rng = random.Random(seed)
    target = (15 if variant == "extreme" else rounds) - tricks_left
    while not (game.observe(None)["round"] == rounds and game.observe(None)["phase"] == "play"
               and len(game.observe(None)["played"]) == target * players + 1):
        play_prefix(game, 1, rng)
    return game


def test_every_consistent_placement_appears_uniformly() -> None:
    rng = random.Random(2024)
    sizes = []
    cases = [("classic", 3, 20, 2), ("classic", 4, 15, 2), ("classic", 6, 10, 1),
             ("extreme", 3, 1, 2), ("extreme", 4, 1, 2), ("extreme", 5, 1, 1)]
    for variant, players, rounds, tricks_left in cases:
        for seed in range(3):
            game = end_of_round(variant, players, rounds, tricks_left, seed)
            seat = game.to_act()[0]
            sizes.append(check_uniform(game, seat, per_category=40, rng=rng))
    assert max(sizes) > 20  # some cases are not trivial


def test_exact_sampler_is_uniform_with_voids() -> None:
    """The counting sampler on its own: 7 cards (3 blue, 2 red, 2 free) into bins of 3, 2, 2
    where bin 0 is void in blue and bin 1 void in red (bit masks as in the engine)."""
    blue, red, free = [0, 1, 2], [26, 27], [52, 56]
    unseen = sum(1 << c for c in blue + red + free)
    groups = [(sum(1 << c for c in blue), (1, 2)), (sum(1 << c for c in red), (0, 2))]
    sizes = [3, 2, 2]
    expected = set()
    cards = blue + red + free
    for perm in itertools.permutations(cards):
        bins = (frozenset(perm[:3]), frozenset(perm[3:5]), frozenset(perm[5:]))
        if not bins[0] & set(blue) and not bins[1] & set(red):
            expected.add(bins)
    rng = random.Random(5)
    n = 60 * len(expected)
    counts: Counter = Counter()
    for _ in range(n):
        masks = _place_exact(unseen, sizes, groups, rng)
        key = tuple(frozenset(c for c in cards if m >> c & 1) for m in masks)
        assert key in expected
        counts[key] += 1
    assert set(counts) == expected
    assert chi2_uniform(counts, len(expected), n) < chi2_critical(len(expected) - 1)
