"""Wizard Extreme rules before a round's first card, one test (or a few) per sentence of
docs/rules.md section 2 and 3: the cards used, the configuration and rounds, the dealer,
and the predictions (the destroyer and the tokens taken).

Specific situations are built with :meth:`ExtremeGame.from_deal` and the deals and steps of
``extreme_games.py`` (the three-player :data:`DEAL_A`, the four-player :func:`game4`).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from extreme_games import (
    assert_illegal,
    game4,
    game_a,
    new_events,
    nothing,
    play_out,
    position,
    predict,
    supply,
    tokens,
)

from engine.core import ConfigError, EngineError, GameConfig, Prediction
from engine.extreme import ExtremeGame, next_dealer
from engine.extreme_cards import CODES, INDEX

# ---------------------------------------------------------------------------
# Material, players, cards used


@pytest.mark.parametrize("players, count, top", [(3, 45, 9), (4, 60, 12), (5, 75, 15)])
def test_cards_used_and_fifteen_each(players: int, count: int, top: int) -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=players, seed=11))
    hands = [game.observe(s)["hand"] for s in range(players)]
    assert all(len(h) == 15 for h in hands)
    dealt = [c for h in hands for c in h]
    assert len(dealt) == len(set(dealt)) == count
    expected = {f"{letter}{r}" for letter in "rygbp" for r in range(1, top + 1)}
    assert set(dealt) == expected  # the whole deck is dealt, and only ranks 1..top


def test_75_card_codes_five_colours() -> None:
    assert len(CODES) == 75
    assert CODES[0] == "r1" and CODES[14] == "r15" and CODES[-1] == "p15"
    assert {c[0] for c in CODES} == set("rygbp")


def test_deal_is_seeded_and_changes_between_rounds() -> None:
    config = GameConfig(variant="extreme", players=4, seed=5)
    a, b = ExtremeGame(config), ExtremeGame(config)
    assert a.snapshot() == b.snapshot()
    c = ExtremeGame(GameConfig(variant="extreme", players=4, seed=6))
    assert a.observe(0)["hand"] != c.observe(0)["hand"]
    first_hand = a.observe(0)["hand"]
    while a.observe(None)["round"] == 1:
        seat = a.to_act()[0]
        a.apply(seat, a.decision(seat).default)
    assert a.observe(0)["hand"] != first_hand and len(a.observe(0)["hand"]) == 15


def test_hand_is_sorted_and_spectator_has_none() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=5, seed=2))
    hand = game.observe(3)["hand"]
    assert hand == sorted(hand, key=INDEX.__getitem__)
    assert game.observe(None)["hand"] == []


def test_red_is_always_trump() -> None:
    for seed in range(5):
        game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=seed))
        assert game.observe(0)["trump"] == "red"


def test_supply_starts_with_27_tokens() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=3))
    assert supply(game) == {"red": 5, "yellow": 3, "green": 3, "blue": 3, "purple": 3, "white": 4, "black": 6}


# ---------------------------------------------------------------------------
# Configuration and rounds


@pytest.mark.parametrize("options, match", [
    ({"players": 2}, "3 to 5"),
    ({"players": 6}, "3 to 5"),
    ({"rounds": 0}, "at least 1 round"),
    ({"rounds": -2}, "at least 1 round"),
    ({"length": "amigo"}, "classic option"),
    ({"bidding": "hidden"}, "classic options"),
    ({"plus_minus_one": True}, "classic options"),
    ({"destroyer_penalty": -1}, "destroyer penalty"),
    ({"rounds": 101}, "at most 100 rounds"),
    ({"rounds": 2**64}, "at most 100 rounds"),
    ({"destroyer_penalty": 1001}, "from 0 to 1000"),
    ({"destroyer_penalty": 2**64}, "from 0 to 1000"),
])
def test_bad_config_is_refused(options: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ExtremeGame(GameConfig(variant="extreme", **options))


def test_classic_config_is_refused() -> None:
    with pytest.raises(EngineError):
        ExtremeGame(GameConfig(variant="classic", players=4))


@pytest.mark.parametrize("players, rounds", [(3, 6), (4, 4), (5, 5)])
def test_default_rounds_one_per_player_doubled_for_three(players: int, rounds: int) -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=players, seed=1))
    assert game.observe(0)["rounds"] == rounds
    play_out(game)
    ends = [e for e in game.events_for(None, 0)[0] if e["type"] == "round_end"]
    assert len(ends) == rounds == len(game.result().rounds)


def test_chosen_rounds() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=1, rounds=2))
    play_out(game)
    assert len(game.result().rounds) == 2


def test_a_round_is_fifteen_tricks() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=4, seed=3, rounds=1))
    play_out(game, random.Random(1))
    events = game.events_for(None, 0)[0]
    assert sum(e["type"] == "trick" for e in events) == 15
    assert sum(e["type"] == "play" for e in events) == 60


# ---------------------------------------------------------------------------
# Dealer


def test_first_dealer_is_seat_0_and_left_of_dealer_predicts_and_leads() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=4, seed=4))
    assert game.observe(None)["dealer"] == 0
    order = []
    while game.observe(None)["phase"] == "predict":
        seat = game.to_act()[0]
        order.append(seat)
        game.apply(seat, Prediction())
    assert order == [1, 2, 3, 0]
    assert game.to_act() == (1,) and game.observe(None)["leader"] == 1


def test_next_dealer_rule() -> None:
    assert next_dealer([5, 2, 7], dealer=0) == 1           # lowest penalty
    assert next_dealer([3, 0, 5, 0], dealer=1) == 3        # tie: from seat 2 clockwise, 3 comes first
    assert next_dealer([3, 0, 5, 0], dealer=3) == 1        # from seat 0 clockwise, 1 comes first
    assert next_dealer([0, 4, 0], dealer=0) == 2           # from seat 1: seat 2 before seat 0
    assert next_dealer([0, 0, 0], dealer=2) == 0           # all tied: the dealer's left
    assert next_dealer([0, 0, 0], dealer=0) == 1


def test_winner_of_a_round_deals_next_including_ties() -> None:
    """Over many random games, each new round's dealer is the previous round's winner,
    ties going to the first tied seat clockwise from the previous dealer's left."""
    ties_that_mattered = 0
    for seed in range(12):
        game = ExtremeGame(GameConfig(variant="extreme", players=3 + seed % 3, seed=seed, rounds=3))
        play_out(game, random.Random(seed))
        events = game.events_for(None, 0)[0]
        dealer = 0
        for e in events:
            if e["type"] == "round_start":
                assert e["dealer"] == dealer
            if e["type"] == "round_end":
                pens = e["penalties"]
                players = len(pens)
                tied = [s for s in range(players) if pens[s] == min(pens)]
                expected = min(tied, key=lambda s: (s - dealer - 1) % players)
                ties_that_mattered += len(tied) > 1 and expected != min(tied)
                assert e["dealer_next"] == expected
                dealer = expected
    assert ties_that_mattered > 0  # the sample exercises the tie rule


# ---------------------------------------------------------------------------
# Prediction: destroyer


def test_destroyer_is_optional_and_predicts_nothing() -> None:
    game = game_a()
    predict(game, Prediction(), {"destroyer": True}, Prediction())
    obs = game.observe(0)
    assert obs["destroyer"] == 1 and obs["predicted"] == [True, True, True]
    assert tokens(game, 1) == {}
    assert {"type": "destroyer", "seat": 1} in new_events(game, 0)
    # Nobody has to take it.
    other = game_a()
    predict(other, *nothing(3))
    assert other.observe(0)["destroyer"] is None and other.observe(0)["phase"] == "play"


def test_destroyer_only_once_per_round() -> None:
    game = game_a()
    predict(game, Prediction(destroyer=True))
    assert game.observe(1)["destroyer_free"] is False
    assert_illegal(game, 1, Prediction(destroyer=True), "predict", "destroyer is taken")
    predict(game, Prediction(tokens={"red": 1}))


def test_destroyer_with_tokens_is_illegal() -> None:
    game = game_a()
    assert game.observe(0)["destroyer_free"] is True
    assert_illegal(game, 0, Prediction(destroyer=True, tokens={"red": 1}), "predict", "predicts nothing")


def test_destroyer_is_free_again_next_round() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=8, rounds=2))
    game.apply(1, Prediction(destroyer=True))
    while game.observe(None)["round"] == 1:
        seat = game.to_act()[0]
        game.apply(seat, game.decision(seat).default)
    obs = game.observe(None)
    assert obs["destroyer"] is None and obs["destroyer_free"] is True


# ---------------------------------------------------------------------------
# Prediction: tokens


def test_taking_tokens_from_the_supply() -> None:
    game = game4()
    predict(game, Prediction(tokens={"red": 2, "blue": 1}))
    assert tokens(game, 1) == {"red": 2, "blue": 1}
    assert supply(game)["red"] == 3 and supply(game)["blue"] == 2
    assert {"type": "prediction", "seat": 1, "tokens": {"red": 2, "blue": 1}, "take_from": []} in new_events(game, 0)


def test_zero_tokens_is_a_legal_prediction_and_the_default() -> None:
    game = game4()
    decision = game.decision(1)
    assert decision.kind == "predict" and decision.options is None and game.legal_actions(1) == ()
    game.apply(1, decision.default)
    assert tokens(game, 1) == {} and game.to_act() == (2,)


def test_prediction_as_json_dict() -> None:
    game = game4()
    game.apply(1, {"destroyer": False, "tokens": {"green": 2}, "take_from": []})
    assert tokens(game, 1) == {"green": 2}
    assert game.actions[-1] == (1, Prediction(tokens={"green": 2}))
    assert game.snapshot()["actions"][-1] == [1, {"destroyer": False, "tokens": {"green": 2}, "take_from": []}]


def test_the_log_keeps_a_prediction_as_its_json_form_reads_back() -> None:
    """A zero count is no part of the logged prediction, and changing the dict a caller's
    prediction holds after it was applied leaves the log as it was."""
    game = game4()
    held = {"green": 2, "red": 0}
    game.apply(1, Prediction(tokens=held))
    held["red"] = 1
    assert game.actions[-1] == (1, Prediction(tokens={"green": 2}))
    assert game.snapshot()["actions"][-1] == [1, {"destroyer": False, "tokens": {"green": 2}, "take_from": []}]


def test_exhausted_colour_is_taken_from_another_player_for_a_white() -> None:
    game = game4()
    predict(game, Prediction(tokens={"yellow": 3}))
    assert game.observe(2)["can_take"]["yellow"] == 3  # 0 in the supply + 3 from seat 1
    start = position(game)
    predict(game, Prediction(tokens={"yellow": 1}))
    assert tokens(game, 1) == {"yellow": 2, "white": 1}
    assert tokens(game, 2) == {"yellow": 1}
    assert supply(game)["white"] == 3 and supply(game)["yellow"] == 0
    events = new_events(game, start)
    assert events[0] == {"type": "prediction", "seat": 2, "tokens": {"yellow": 1}, "take_from": [["yellow", 1]]}
    assert events[1] == {"type": "token_exchange", "from_seat": 1, "to_seat": 2, "colour": "yellow"}


def test_supply_first_then_other_players() -> None:
    game = game4()
    predict(game, Prediction(tokens={"red": 4}), Prediction(tokens={"red": 2}))
    assert tokens(game, 1) == {"red": 3, "white": 1}
    assert tokens(game, 2) == {"red": 2}
    assert supply(game)["red"] == 0 and supply(game)["white"] == 3


def test_predictor_chooses_whom_to_take_from() -> None:
    game = game4()
    predict(game, Prediction(tokens={"yellow": 2}), Prediction(tokens={"yellow": 1}))
    predict(game, Prediction(tokens={"yellow": 1}, take_from=(("yellow", 2),)))
    assert tokens(game, 1) == {"yellow": 2}
    assert tokens(game, 2) == {"white": 1}
    assert tokens(game, 3) == {"yellow": 1}


def test_default_takes_from_holders_clockwise_from_predictors_left() -> None:
    game = game4(dealer=2)  # predicting order 3, 0, 1, 2
    predict(game, Prediction(tokens={"yellow": 2}), Prediction(tokens={"yellow": 1}))
    # Seat 1 needs one yellow: from its left, seat 2 holds none, seat 3 does (before seat 0).
    predict(game, Prediction(tokens={"yellow": 1}))
    assert tokens(game, 3) == {"yellow": 1, "white": 1}
    assert tokens(game, 0) == {"yellow": 1}


def test_default_empties_one_holder_before_the_next() -> None:
    game = game4(dealer=2)
    predict(game, Prediction(tokens={"yellow": 2}), Prediction(tokens={"yellow": 1}))
    predict(game, Prediction(tokens={"yellow": 3}))
    assert tokens(game, 3) == {"white": 2}
    assert tokens(game, 0) == {"white": 1}
    assert tokens(game, 1) == {"yellow": 3}


def test_white_supply_limits_taking_from_others() -> None:
    game = game4()
    predict(game, Prediction(tokens={"red": 5, "yellow": 3}))
    assert game.observe(2)["can_take"] == {"red": 4, "yellow": 3, "green": 3, "blue": 3, "purple": 3}
    # Five exchanges, but the supply has only four white tokens.
    error = assert_illegal(game, 2, Prediction(tokens={"red": 2, "yellow": 3}), "predict", "can be had")
    assert "4 white" in str(error)
    predict(game, Prediction(tokens={"red": 1, "yellow": 3}))
    assert supply(game)["white"] == 0
    assert tokens(game, 1) == {"red": 4, "white": 4}
    assert game.observe(3)["can_take"]["yellow"] == 0 and game.observe(3)["can_take"]["green"] == 3
    assert_illegal(game, 3, Prediction(tokens={"yellow": 1}), "predict", "cannot have yellow 1")
    predict(game, Prediction(tokens={"green": 3}))
    assert sum(supply(game).values()) + sum(sum(t.values()) for t in game.observe(None)["tokens"]) == 27


def test_prediction_that_cannot_be_had_is_illegal() -> None:
    game = game4()
    error = assert_illegal(game, 1, Prediction(tokens={"red": 6}), "predict", "can be had red 5")
    assert error.legal is None
    assert_illegal(game, 1, Prediction(tokens={"blue": 4}), "predict", "blue 3")


@pytest.mark.parametrize("bad, match", [
    ({"tokens": {"white": 1}}, "only coloured tokens"),
    ({"tokens": {"black": 1}}, "only coloured tokens"),
    ({"tokens": {"orange": 1}}, "only coloured tokens"),
    ({"tokens": {"red": -1}}, "0 or more"),
    ({"tokens": {"red": "two"}}, "whole numbers"),
    ({"tokens": {"red": 1.0}}, "whole numbers"),
    ({"tokens": ["red"]}, "object"),
    ({"destroyer": "yes"}, "boolean"),
    ("red", "prediction is an object"),
    (3, "prediction is an object"),
    ({"take_from": "yellow"}, "pairs"),
])
def test_malformed_predictions_are_illegal(bad: Any, match: str) -> None:
    game = game4()
    assert_illegal(game, 1, bad, "predict", match)


def test_take_from_validation() -> None:
    game = game4()
    predict(game, Prediction(tokens={"yellow": 2}), Prediction(tokens={"yellow": 1}))
    want = {"yellow": 1}
    assert_illegal(game, 3, Prediction(tokens=want, take_from=(("yellow", 3),)), "predict", "another player")
    assert_illegal(game, 3, Prediction(tokens=want, take_from=(("yellow", 7),)), "predict", "another player")
    assert_illegal(game, 3, Prediction(tokens=want, take_from=(("yellow", 0),)), "predict", "holds no more")
    assert_illegal(game, 3, Prediction(tokens={"yellow": 1, "red": 1}, take_from=(("red", 1),)),
                   "predict", "supply has")
    assert_illegal(game, 3, Prediction(tokens=want, take_from=(("yellow", 1), ("yellow", 2))),
                   "predict", "names 2")
    assert_illegal(game, 3, Prediction(tokens={"yellow": 2}, take_from=(("yellow", 2),)), "predict", "names 1")
    assert_illegal(game, 3, Prediction(tokens={"yellow": 2}, take_from=(("yellow", 2), ("yellow", 2))),
                   "predict", "holds no more")
    assert_illegal(game, 3, Prediction(tokens=want, take_from=(("white", 1),)), "predict", "coloured tokens only")
    predict(game, Prediction(tokens={"yellow": 2}, take_from=(("yellow", 1), ("yellow", 2))))
    assert tokens(game, 1) == {"yellow": 1, "white": 1} and tokens(game, 2) == {"white": 1}


def test_holdings_and_destroyer_are_public() -> None:
    game = game4()
    predict(game, Prediction(tokens={"purple": 2}), Prediction(destroyer=True))
    for viewer in (None, 0, 1, 3):
        obs = game.observe(viewer)
        assert obs["tokens"][1]["purple"] == 2 and obs["destroyer"] == 2
        assert obs["predicted"] == [False, True, True, False]
