"""Property tests for classic Wizard: random legal games checked against invariants and
against a small, slow, independent re-statement of the rules written from docs/rules.md.

Bounded (few examples, short games) so the whole file runs in a few seconds.
"""

from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.classic import ClassicGame
from engine.classic_cards import CODES, INDEX, SUITS, codes_of
from engine.core import GameConfig, IllegalAction

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw: st.DrawFn) -> GameConfig:
    players = draw(st.sampled_from([3, 4, 5, 6]))
    bidding = draw(st.sampled_from(["open", "hidden", "secret"]))
    plus_minus_one = bidding == "open" and draw(st.booleans())
    rounds = draw(st.integers(1, 4))
    return GameConfig(variant="classic", players=players, seed=draw(st.integers(0, 2**32)), rounds=rounds,
                      bidding=bidding, plus_minus_one=plus_minus_one)


# ---------------------------------------------------------------------------
# An independent statement of the rules, on card codes


def ref_lead_suit(trick: list[str]) -> str | None:
    """The lead suit letter of a (partial) trick, or None."""
    for card in trick:
        if card[0] == "W":
            return None
        if card[0] in "bgry":
            return card[0]
    return None


def ref_legal(hand: list[str], trick: list[str]) -> set[str]:
    lead = ref_lead_suit(trick)
    if lead is not None and any(c[0] == lead for c in hand):
        return {c for c in hand if c[0] in (lead, "W", "J")}
    return set(hand)


def ref_winner(trick: list[str], trump: str | None) -> int:
    for i, card in enumerate(trick):
        if card[0] == "W":
            return i
    numbered = [(int(c[1:]), i, c[0]) for i, c in enumerate(trick) if c[0] in "bgry"]
    if not numbered:
        return 0
    trumps = [(rank, i) for rank, i, suit in numbered if trump and suit == trump[0]]
    if trumps:
        return max(trumps)[1]
    lead = numbered[0][2]
    return max((rank, i) for rank, i, suit in numbered if suit == lead)[1]


def ref_score(bid: int, tricks: int) -> int:
    return 20 + 10 * tricks if bid == tricks else -10 * abs(bid - tricks)


# ---------------------------------------------------------------------------
# Checks on a running game


def check_cards_accounted(game: ClassicGame) -> None:
    played = game.observe(None)["played"]
    in_hands = [c for s in range(game.players) for c in game.observe(s)["hand"]]
    undealt = list(codes_of(game._undealt))
    everything = in_hands + undealt + played
    assert len(everything) == 60 and set(everything) == set(CODES)


def check_observation_hides_other_cards(game: ClassicGame, rng: random.Random) -> None:
    """Swap a hidden card of another seat with an undealt card or another hidden card:
    no seat's observation or events may change, except the two whose hands changed."""
    p = game.players
    holders = [s for s in range(p) if game._hands[s]]
    if not holders:
        return
    a = rng.choice(holders)
    card_a = rng.choice([INDEX[c] for c in game.observe(a)["hand"]])
    turned = 1 << game._trump_card if game._trump_card >= 0 else 0
    hidden_deck = [INDEX[c] for c in codes_of(game._undealt & ~turned)]
    others = [s for s in holders if s != a]
    use_deck = bool(hidden_deck) and (not others or rng.random() < 0.5)
    viewers = [None] + [s for s in range(p) if s != a]
    if not use_deck:
        if not others:
            return
        b = rng.choice(others)
        viewers = [v for v in viewers if v != b]
    before = {v: (game.observe(v), game.events_for(v, 0)) for v in viewers}
    saved_hands, saved_undealt = list(game._hands), game._undealt
    if use_deck:
        card_b = rng.choice(hidden_deck)
        game._undealt ^= (1 << card_a) | (1 << card_b)
        game._hands[a] ^= (1 << card_a) | (1 << card_b)
    else:
        card_b = rng.choice([INDEX[c] for c in game.observe(b)["hand"]])
        game._hands[a] ^= (1 << card_a) | (1 << card_b)
        game._hands[b] ^= (1 << card_a) | (1 << card_b)
    try:
        for v in viewers:
            assert (game.observe(v), game.events_for(v, 0)) == before[v], v
    finally:
        game._hands, game._undealt = saved_hands, saved_undealt


def check_legality(game: ClassicGame, seat: int, full: bool) -> None:
    """legal_actions matches the reference; everything else is refused without a trace."""
    obs = game.observe(seat)
    legal = game.legal_actions(seat)
    assert len(set(legal)) == len(legal)
    if obs["phase"] == "play":
        assert set(legal) == ref_legal(obs["hand"], [t["card"] for t in obs["trick"]])
        assert list(legal) == sorted(legal, key=CODES.index)
    elif obs["phase"] == "bid":
        expected = set(range(obs["hand_size"] + 1))
        known = [b for b in obs["bids"] if b is not None]
        if game.config.plus_minus_one and len(known) == game.players - 1:
            expected.discard(obs["hand_size"] - sum(known))
        assert set(legal) == expected and list(legal) == sorted(legal)
    else:
        assert legal == SUITS
    candidates = list(CODES) + list(range(-1, obs["hand_size"] + 2)) + list(SUITS) + [True, None, "no trump", "x"]
    state = (game.snapshot(), game.observe(seat))
    for action in candidates:
        if action in legal and type(action) is type(legal[0]):
            if full:
                copy.deepcopy(game).apply(seat, action)  # accepted
            continue
        try:
            game.apply(seat, action)
        except IllegalAction as err:
            assert err.kind == obs["phase"] and err.legal == legal
        else:
            raise AssertionError(f"{action!r} accepted but not in {legal}")
    assert (game.snapshot(), game.observe(seat)) == state
    for other in [*range(game.players), -1, None, game.players]:
        if other not in game.to_act():
            try:
                game.apply(other, legal[0])
            except IllegalAction as err:
                assert err.kind is None
            else:
                raise AssertionError("a seat that is not to act was allowed to act")


def play_checked(config: GameConfig, rng: random.Random, every: int = 7) -> ClassicGame:
    game = ClassicGame(config)
    step = 0
    while not game.is_over:
        seats = list(game.to_act())
        rng.shuffle(seats)  # simultaneous bids may come in any order
        for seat in seats:
            if step % every == 0:
                check_cards_accounted(game)
                check_observation_hides_other_cards(game, rng)
                check_legality(game, seat, full=step % (every * 3) == 0)
            game.apply(seat, game.random_action(seat, rng))
            step += 1
    check_cards_accounted(game)
    return game


# ---------------------------------------------------------------------------
# Properties


@SETTINGS
@given(config=configs(), play_seed=st.integers(0, 2**16))
def test_random_games_keep_every_invariant(config: GameConfig, play_seed: int) -> None:
    play_checked(config, random.Random(play_seed))


@SETTINGS
@given(config=configs(), play_seed=st.integers(0, 2**16))
def test_tricks_and_scores_match_a_recomputation_from_the_event_log(config: GameConfig, play_seed: int) -> None:
    game = ClassicGame(config)
    rng = random.Random(play_seed)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    p = game.players
    totals = [0] * p
    trump: str | None = None
    won = [0] * p
    leader = None
    rounds_seen = 0
    for event in game.events_for(None, 0)[0]:
        kind = event["type"]
        if kind == "round_start":
            won = [0] * p
            leader = (event["dealer"] + 1) % p
            assert event["hand_size"] == event["round"]
        elif kind in ("trump", "trump_chosen"):
            trump = event["suit"]
        elif kind == "trick":
            cards = [t["card"] for t in event["cards"]]
            seats = [t["seat"] for t in event["cards"]]
            assert len(cards) == p and seats == [(leader + i) % p for i in range(p)]
            winner = seats[ref_winner(cards, trump)]
            assert event["winner"] == winner
            lead = ref_lead_suit(cards)
            assert event["lead_suit"] == (None if lead is None else SUITS["bgry".index(lead)])
            won[winner] += 1
            leader = winner
        elif kind == "round_end":
            rounds_seen += 1
            assert event["tricks"] == won and sum(won) == event["round"]
            points = [ref_score(b, t) for b, t in zip(event["bids"], won)]
            assert event["scores"] == points
            totals = [t + x for t, x in zip(totals, points)]
            assert event["totals"] == totals
    result = game.result()
    assert rounds_seen == len(result.rounds) == config.rounds
    assert list(result.totals) == totals
    assert [[r.score for r in rnd] for rnd in result.rounds] == [
        [ref_score(r.bid, r.tricks) for r in rnd] for rnd in result.rounds]
    order = sorted(totals, reverse=True)
    assert list(result.places) == [1 + order.index(t) for t in totals]


@SETTINGS
@given(config=configs(), play_seed=st.integers(0, 2**16), stop=st.floats(0, 1))
def test_replay_reaches_the_identical_snapshot(config: GameConfig, play_seed: int, stop: float) -> None:
    game = ClassicGame(config)
    rng = random.Random(play_seed)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    cut = int(stop * len(game.actions))
    partial = ClassicGame(config)
    for seat, action in game.actions[:cut]:
        partial.apply(seat, action)
    again = ClassicGame(config)
    for seat, action in game.actions:
        again.apply(seat, action)
    assert again.snapshot() == game.snapshot()
    assert again.result() == game.result()
    assert partial.actions == game.actions[:cut]
    # The same seed always deals the same cards, whatever is played.
    fresh = ClassicGame(config)
    first_hands = [[e["cards"] for e in game.events_for(s, 0)[0] if e["type"] == "hand"][0]
                   for s in range(config.players)]
    assert [fresh.observe(s)["hand"] for s in range(config.players)] == first_hands


@settings(max_examples=15, deadline=None)
@given(players=st.sampled_from([3, 4, 5, 6]), seed=st.integers(0, 2**32))
def test_whole_standard_games_stay_consistent(players: int, seed: int) -> None:
    game = play_checked(GameConfig(players=players, seed=seed, bidding="secret"), random.Random(seed), every=97)
    result = game.result()
    assert len(result.rounds) == 60 // players
    assert [[r.score for r in rnd] for rnd in result.rounds] == [
        [ref_score(r.bid, r.tricks) for r in rnd] for rnd in result.rounds]
    assert list(result.totals) == [sum(rnd[s].score for rnd in result.rounds) for s in range(players)]


@SETTINGS
@given(config=configs(), play_seed=st.integers(0, 2**16))
def test_random_action_is_the_uniform_pick_from_legal_actions(config: GameConfig, play_seed: int) -> None:
    game = ClassicGame(config)
    rng = random.Random(play_seed)
    while not game.is_over:
        for seat in game.to_act():
            legal = game.legal_actions(seat)
            k = rng.randrange(2**30)
            expected = legal[int(random.Random(k).random() * len(legal))]
            assert game.random_action(seat, random.Random(k)) == expected
            game.apply(seat, game.random_action(seat, rng))
