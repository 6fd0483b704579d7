"""Properties of random legal Wizard Extreme games (hypothesis), for 3, 4 and 5 players.

Each test plays whole random games and checks an invariant at every step, or
re-derives a figure from the public event log. A few tests look at the private
state (``game._hands``) to permute hidden cards; that is the point of those tests.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import replay
from engine.core import GameConfig, IllegalAction, Prediction
from engine.extreme import ExtremeGame
from engine.extreme_cards import CODES, INDEX, SUPPLY_START, TOKEN_COLOURS, deck_for

COST = {"red": 2, "yellow": 2, "green": 2, "blue": 2, "purple": 2, "white": 4, "black": 3}
PLAYERS = st.sampled_from([3, 4, 5])
SEEDS = st.integers(0, 2**32 - 1)
FAST = settings(max_examples=25, deadline=None)


def new(players: int, seed: int, rounds: int = 1, **options: Any) -> ExtremeGame:
    return ExtremeGame(GameConfig(variant="extreme", players=players, seed=seed, rounds=rounds, **options))


def step(game: ExtremeGame, rng: random.Random) -> None:
    seat = game.to_act()[0]
    game.apply(seat, game.random_action(seat, rng))


def play_out(game: ExtremeGame, rng: random.Random) -> None:
    while not game.is_over:
        step(game, rng)


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS)
def test_cards_and_tokens_are_conserved_at_every_step(players: int, seed: int, policy: int) -> None:
    game = new(players, seed, rounds=2)
    rng = random.Random(policy)
    deck = {CODES[c] for c in deck_for(players)}
    while not game.is_over:
        public = game.observe(None)
        hands = [game.observe(s)["hand"] for s in range(players)]
        in_hands = [c for h in hands for c in h]
        held = in_hands + public["played"]
        assert len(held) == len(set(held)) == len(deck) and set(held) == deck
        assert [len(h) for h in hands] == public["hand_sizes"]
        done = sum(public["tricks_won"])
        assert len(public["played"]) == done * players + len(public["trick"])
        for i, colour in enumerate(TOKEN_COLOURS):
            total = public["supply"][colour] + sum(t[colour] for t in public["tokens"])
            assert total == SUPPLY_START[i]  # so 27 in all
            assert public["supply"][colour] >= 0 and all(t[colour] >= 0 for t in public["tokens"])
        step(game, rng)


def winning_seat(cards: list[dict], lead: str) -> int:
    """The rules, written out again independently of the engine."""
    reds = [c for c in cards if c["card"][0] == "r"]
    pool = reds or [c for c in cards if c["card"][0] == lead[0]]
    return max(pool, key=lambda c: int(c["card"][1:]))["seat"]


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS)
def test_every_trick_has_one_correct_winner_and_tricks_follow_suit(players: int, seed: int, policy: int) -> None:
    game = new(players, seed)
    play_out(game, random.Random(policy))
    events = game.events_for(None, 0)[0]
    tricks = [e for e in events if e["type"] == "trick"]
    assert len(tricks) == 15
    leader = 1  # seat 0 deals the first round
    for trick in tricks:
        cards = trick["cards"]
        assert [c["seat"] for c in cards] == [(leader + i) % players for i in range(players)]
        assert trick["lead_suit"][0] == cards[0]["card"][0]
        assert trick["winner"] == winning_seat(cards, trick["lead_suit"])
        leader = trick["winner"]


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS, rounds=st.integers(1, 3), base=st.integers(0, 6))
def test_scores_equal_a_recomputation_from_the_public_log(
        players: int, seed: int, policy: int, rounds: int, base: int) -> None:
    game = new(players, seed, rounds=rounds, destroyer_penalty=base)
    play_out(game, random.Random(policy))
    totals = [0] * players
    for event in game.events_for(None, 0)[0]:
        kind = event["type"]
        if kind == "round_start":
            held = [{c: 0 for c in COST} for _ in range(players)]
            destroyer, blacks = None, 0
        elif kind == "destroyer":
            destroyer = event["seat"]
        elif kind == "prediction":
            for colour, n in event["tokens"].items():
                held[event["seat"]][colour] += n
        elif kind == "token_exchange":
            held[event["from_seat"]][event["colour"]] -= 1
            held[event["from_seat"]]["white"] += 1
        elif kind == "token_returned":
            held[event["seat"]][event["colour"]] -= 1
        elif kind == "black_taken":
            assert event["seat"] != destroyer
            held[event["seat"]]["black"] += 1
            blacks += 1
        elif kind == "round_end":
            penalties = [
                max(0, base - blacks) if seat == destroyer else sum(COST[c] * n for c, n in held[seat].items())
                for seat in range(players)
            ]
            assert event["penalties"] == penalties
            totals = [t + p for t, p in zip(totals, penalties)]
            assert event["totals"] == totals
            assert all(n >= 0 for h in held for n in h.values())
    result = game.result()
    assert list(result.totals) == totals
    ranked = sorted(totals)
    assert list(result.places) == [1 + ranked.index(t) for t in totals]


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS)
def test_replay_reaches_the_identical_snapshot(players: int, seed: int, policy: int) -> None:
    game = new(players, seed, rounds=2)
    rng = random.Random(policy)
    stop = rng.randrange(1, 200)
    for _ in range(stop):
        if game.is_over:
            break
        step(game, rng)
    assert replay(game.config, game.actions).snapshot() == game.snapshot()
    play_out(game, rng)
    again = replay(game.config, game.actions)
    assert again.snapshot() == game.snapshot() and again.result() == game.result()


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS, data=st.data())
def test_observation_ignores_other_players_hidden_cards(players: int, seed: int, policy: int, data: Any) -> None:
    game = new(players, seed)
    rng = random.Random(policy)
    for _ in range(data.draw(st.integers(0, 15 * players))):
        step(game, rng)
    seat = data.draw(st.sampled_from([None, *range(players)]))
    before = (game.observe(seat), game.events_for(seat, 0))
    # Deal the other players' unplayed cards among them again, keeping hand sizes.
    other = copy.deepcopy(game)
    seats = [s for s in range(players) if s != seat]
    pool = [c for s in seats for c in range(75) if other._hands[s] >> c & 1]
    random.Random(policy + 1).shuffle(pool)
    for s in seats:
        size = other._hands[s].bit_count()
        other._hands[s] = sum(1 << c for c in pool[:size])
        pool = pool[size:]
    after = (other.observe(seat), other.events_for(seat, 0))
    assert after == before


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS, data=st.data())
def test_legal_options_are_accepted_and_others_rejected(players: int, seed: int, policy: int, data: Any) -> None:
    game = new(players, seed)
    rng = random.Random(policy)
    for _ in range(data.draw(st.integers(0, 15 * players))):
        step(game, rng)
    seat = game.to_act()[0]
    decision = game.decision(seat)
    before = game.snapshot()
    if decision.kind == "predict":
        can = game.observe(seat)["can_take"]
        for colour, n in can.items():
            trial = copy.deepcopy(game)
            trial.apply(seat, Prediction(tokens={colour: n}))
            assert trial.observe(None)["tokens"][seat][colour] == n
            try:
                game.apply(seat, Prediction(tokens={colour: n + 1}))
            except IllegalAction as error:
                assert error.kind == "predict"
            else:
                raise AssertionError(f"{colour} {n + 1} accepted, but can_take said {n}")
    else:
        for option in decision.options:
            copy.deepcopy(game).apply(seat, option)
        everything = list(CODES) + list(TOKEN_COLOURS) + [None, 3, "", "R1"]
        for action in everything:
            if action in decision.options:
                continue
            try:
                game.apply(seat, action)
            except IllegalAction as error:
                assert error.kind == decision.kind and error.legal == decision.options
            else:
                raise AssertionError(f"{action!r} accepted, not among {decision.options}")
    for other in range(players):
        if other != seat:
            try:
                game.apply(other, decision.default)
            except IllegalAction as error:
                assert error.kind is None
            else:
                raise AssertionError(f"seat {other} acted out of turn")
    assert game.snapshot() == before


@FAST
@given(players=PLAYERS, seed=SEEDS, policy=SEEDS)
def test_random_predictions_are_legal_and_deals_use_the_whole_deck(players: int, seed: int, policy: int) -> None:
    game = new(players, seed, rounds=2)
    rng = random.Random(policy)
    while not game.is_over:
        obs = game.observe(None)
        if obs["phase"] == "predict" and not any(obs["predicted"]):
            hands = [game.observe(s)["hand"] for s in range(players)]
            assert sorted((c for h in hands for c in h), key=INDEX.__getitem__) == \
                [CODES[c] for c in deck_for(players)]
        step(game, rng)  # raises IllegalAction if random_action proposed something illegal
