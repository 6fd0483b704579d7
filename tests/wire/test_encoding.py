"""arena.wire.encoding: the vector stays in its layout's bounds, the mask is exactly the
legal options, and a Wizard Extreme prediction built step by step reaches exactly the
predictions the engine accepts, each by one sequence of steps.

Random games of the engine at several table sizes and options (hypothesis draws the
configs and seeds); bounded so the file runs in a few seconds.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.wire.encoding import (
    action_layout,
    action_mask,
    decode,
    encode,
    encode_sparse,
    legal_indices,
    observation_layout,
    prediction_of,
)
from engine import PREDICT, ExtremeGame, Game, GameConfig, IllegalAction, Prediction, new_game, replay
from engine.extreme_cards import COLOURS, TOKEN_COLOURS
from engine.extreme_tokens import plan_prediction

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw: st.DrawFn) -> GameConfig:
    if draw(st.booleans()):
        bidding = draw(st.sampled_from(["open", "hidden", "secret"]))
        return GameConfig(variant="classic", players=draw(st.sampled_from([3, 4, 5, 6])),
                          seed=draw(st.integers(0, 2**32)), rounds=draw(st.integers(1, 4)), bidding=bidding,
                          plus_minus_one=bidding == "open" and draw(st.booleans()))
    return GameConfig(variant="extreme", players=draw(st.sampled_from([3, 4, 5])), seed=draw(st.integers(0, 2**32)),
                      rounds=1, destroyer_penalty=draw(st.integers(0, 12)))


def decisions(game: Game, rng: random.Random) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every (seat, observation) at which a seat decides, playing random legal actions."""
    while not game.is_over:
        for seat in game.to_act():
            yield seat, game.observe(seat)
        seat = game.to_act()[0]
        game.apply(seat, game.random_action(seat, rng))


@SETTINGS
@given(config=configs(), choice_seed=st.integers(0, 1000))
def test_vectors_fit_their_layout_and_masks_are_the_legal_options(config: GameConfig, choice_seed: int) -> None:
    game = new_game(config)
    layout = observation_layout(config.variant, config.players)
    size = action_layout(config.variant).size
    for seat, obs in decisions(game, random.Random(choice_seed)):
        vector = encode(obs)
        assert len(vector) == layout.size
        assert all(lo <= x <= hi for x, lo, hi in zip(vector, layout.low, layout.high))
        indices, values = encode_sparse(obs)
        assert len(set(indices)) == len(indices) and 0.0 not in values
        if game.decision(seat).kind == PREDICT:
            continue
        options = game.legal_actions(seat)
        mask = action_mask(obs, options)
        assert len(mask) == size
        legal = [i for i, bit in enumerate(mask) if bit]
        assert legal == legal_indices(obs, options)
        decoded = [decode(obs, i) for i in legal]
        assert len(decoded) == len(options) and set(decoded) == set(options)


def test_the_vector_of_a_seat_not_deciding_has_no_decision_and_no_mask() -> None:
    game = new_game(GameConfig(players=4, seed=2, rounds=3))
    seat = game.to_act()[0]
    other = (seat + 1) % 4
    obs = game.observe(other)
    assert legal_indices(obs, game.legal_actions(other)) == []
    layout = observation_layout("classic", 4)
    assert encode(obs)[layout.slices["my_decision"]] == [0.0]
    assert encode(game.observe(seat))[layout.slices["my_decision"]] == [1.0]


def test_decode_refuses_an_index_of_another_kind() -> None:
    game = new_game(GameConfig(players=4, seed=2, rounds=3))
    obs = game.observe(game.to_act()[0])           # a bid
    with pytest.raises(ValueError, match="no bid action"):
        decode(obs, action_layout("classic").slices["card"].start)


# ------------------------------------------------------------------ Wizard Extreme's predictions


def outcome(prediction: Prediction, seat: int, players: int) -> Any:
    """What a legal prediction does: the destroyer, or the tokens per colour and the
    (colour, holder) of every token taken from another seat."""
    if prediction.destroyer:
        return "destroyer"
    counts = tuple(prediction.tokens.get(colour, 0) for colour in COLOURS)
    return counts, tuple(sorted((COLOURS.index(colour), holder) for colour, holder in prediction.take_from))


def reachable(obs: dict[str, Any]) -> list[Any]:
    """Every prediction the steps can build, one entry per sequence of steps."""
    found: list[Any] = []

    def walk(pending: tuple[tuple[int, int], ...]) -> None:
        for index in legal_indices(obs, None, pending):
            step = decode(obs, index, pending)
            if isinstance(step, Prediction):
                found.append(outcome(step, obs["seat"], obs["players"]))
            else:
                walk(step)

    walk(())
    return found


def engine_legal(game: ExtremeGame, obs: dict[str, Any]) -> set[Any]:
    """Every prediction the engine accepts, found by asking it about a superset: every
    count per colour up to what the supply and the other seats hold, with every choice
    of seats to take each missing token from among those holding it (up to one more
    token than the white ones allow, so the engine's refusal of those is tested too).
    The engine's own check
    (``plan_prediction``, what ``apply`` runs before it changes anything) judges."""
    seat, p = obs["seat"], obs["players"]
    supply = [obs["supply"][c] for c in COLOURS]
    white = obs["supply"]["white"]
    held = {s: [obs["tokens"][s][c] for c in COLOURS] for s in range(p) if s != seat}
    holdings = [[t[c] for c in TOKEN_COLOURS] for t in obs["tokens"]]
    legal: set[Any] = set()
    if obs["destroyer_free"]:
        legal.add("destroyer")
    tops = [supply[c] + sum(h[c] for h in held.values()) for c in range(5)]
    for counts in itertools.product(*(range(top + 1) for top in tops)):
        shorts = [max(0, counts[c] - supply[c]) for c in range(5)]
        if sum(shorts) > white + 1:
            continue
        per_colour = [
            [tuple((c, s) for s in combo) for combo in itertools.combinations_with_replacement(sorted(held), shorts[c])
             if all(combo.count(s) <= held[s][c] for s in set(combo))]
            for c in range(5)
        ]
        for choice in itertools.product(*per_colour):
            pairs = tuple(pair for colour_pairs in choice for pair in colour_pairs)
            prediction = Prediction(tokens={COLOURS[c]: n for c, n in enumerate(counts) if n},
                                    take_from=tuple((COLOURS[c], s) for c, s in pairs))
            try:
                plan_prediction(prediction, seat, [obs["supply"][c] for c in TOKEN_COLOURS], holdings,
                                obs["destroyer"])
            except IllegalAction:
                continue
            legal.add(outcome(prediction, seat, p))
    return legal


@pytest.mark.parametrize("players", [3, 4, 5])
def test_reachable_predictions_are_the_engines_legal_predictions(players: int) -> None:
    """At every prediction of a few rounds, the earlier seats predicting by random steps
    (so supplies run out and rivals hold tokens to take)."""
    rng = random.Random(players)
    states = taking = 0
    for seed in range(24 // players):
        game = ExtremeGame(GameConfig(variant="extreme", players=players, seed=seed, rounds=1))
        while game.decision(seat := game.to_act()[0]).kind == PREDICT:
            obs = game.observe(seat)
            found = reachable(obs)
            assert len(found) == len(set(found)), "one sequence of steps per prediction"
            assert set(found) == engine_legal(game, obs)
            states += 1
            taking += any(outcome != "destroyer" and outcome[1] for outcome in found)
            pending: tuple[tuple[int, int], ...] = ()
            while not isinstance(step := decode(obs, rng.choice(legal_indices(obs, None, pending)), pending),
                                 Prediction):
                pending = step
            game.apply(seat, step)
    assert states == players * (24 // players)
    assert taking >= states // 2, "states where tokens can be taken from rivals"


def test_a_prediction_built_by_steps_plays_in_the_engine() -> None:
    # Seat 1 takes every red from the supply; seat 2 then takes a red from seat 1 (a
    # white token in exchange) by naming it, two steps and "done".
    game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=4, rounds=1))
    game.apply(1, {"tokens": {"red": 5}})
    obs = game.observe(2)
    slices = action_layout("extreme").slices
    rival_red = slices["rival"].start + (2 - 1) * 5 + 0           # seat 1 is two places left of seat 2
    assert slices["supply"].start not in legal_indices(obs, None)  # no red left in the supply
    pending = decode(obs, rival_red)
    assert pending == ((0, 2),)
    assert rival_red in legal_indices(obs, None, pending)           # seat 1 has 4 more, 3 whites remain
    done = decode(obs, slices["done"].start, pending)
    assert done == prediction_of(((0, 2),), seat=2, players=3)
    assert isinstance(done, Prediction) and done.take_from == (("red", 1),)
    game.apply(2, done)
    tokens = game.observe(0)["tokens"]
    assert (tokens[1]["red"], tokens[1]["white"], tokens[2]["red"]) == (4, 1, 1)
    assert replay(game.config, game.actions).snapshot() == game.snapshot()
