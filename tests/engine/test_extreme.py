"""Wizard Extreme rules, one test (or a few) per sentence of docs/rules.md section 2 and 3.

Specific situations are built with :meth:`ExtremeGame.from_deal` and hands written as
colour ranges, e.g. ``"r1-9 y1-6"``. The three-player deal :data:`DEAL_A` is used a lot:

    seat 0: all reds (1-9) and yellow 1-6
    seat 1: yellow 7-9, all greens, blue 1-3
    seat 2: blue 4-9, all purples

With seat 2 dealing, seat 0 predicts and leads first.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine import replay
from engine.core import ConfigError, EngineError, GameConfig, IllegalAction, Prediction, places_from_totals
from engine.extreme import ExtremeGame, next_dealer, round_penalties, trick_winner
from engine.extreme_cards import CODES, INDEX, deck_for

LETTER = {"red": "r", "yellow": "y", "green": "g", "blue": "b", "purple": "p"}
COST = {"red": 2, "yellow": 2, "green": 2, "blue": 2, "purple": 2, "white": 4, "black": 3}


def cards(spec: str) -> list[str]:
    """``"r1-3 y7"`` -> ``['r1', 'r2', 'r3', 'y7']``."""
    out = []
    for part in spec.split():
        letter, ranks = part[0], part[1:]
        lo, _, hi = ranks.partition("-")
        out += [f"{letter}{r}" for r in range(int(lo), int(hi or lo) + 1)]
    return out


DEAL_A = ["r1-9 y1-6", "y7-9 g1-9 b1-3", "b4-9 p1-9"]


def game_a(dealer: int = 2, **options: Any) -> ExtremeGame:
    config = GameConfig(variant="extreme", players=3, rounds=1, **options)
    return ExtremeGame.from_deal(config, [cards(h) for h in DEAL_A], dealer=dealer)


def game4(dealer: int = 0) -> ExtremeGame:
    """A four-player game with a plain deal (seat k gets deck cards 15k..15k+14)."""
    codes = [CODES[c] for c in deck_for(4)]
    config = GameConfig(variant="extreme", players=4, rounds=1)
    return ExtremeGame.from_deal(config, [codes[15 * k:15 * k + 15] for k in range(4)], dealer=dealer)


def predict(game: ExtremeGame, *predictions: Any) -> None:
    """Apply predictions for the seats in turn order."""
    for p in predictions:
        game.apply(game.to_act()[0], p)


def play(game: ExtremeGame, *codes: str) -> None:
    """Play cards for the seats in turn order."""
    for code in codes:
        game.apply(game.to_act()[0], code)


def nothing(n: int) -> list[Prediction]:
    return [Prediction()] * n


def tokens(game: ExtremeGame, seat: int) -> dict[str, int]:
    """The non-zero token holdings of a seat."""
    return {c: n for c, n in game.observe(None)["tokens"][seat].items() if n}


def supply(game: ExtremeGame) -> dict[str, int]:
    return game.observe(None)["supply"]


def position(game: ExtremeGame) -> int:
    """The current end of the event log."""
    return game.events_for(None, 0)[1]


def new_events(game: ExtremeGame, start: int) -> list[dict]:
    return game.events_for(None, start)[0]


def assert_illegal(game: ExtremeGame, seat: int, action: Any, kind: str | None,
                   match: str | None = None) -> IllegalAction:
    """The action is refused with the right kind and the state is unchanged."""
    before = game.snapshot()
    with pytest.raises(IllegalAction, match=match) as info:
        game.apply(seat, action)
    assert info.value.kind == kind
    assert info.value.seat == seat
    assert game.snapshot() == before
    return info.value


def play_out(game: ExtremeGame, rng: random.Random | None = None) -> None:
    """Finish the game: random actions, or the first option when no rng."""
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(seat, game.random_action(seat, rng) if rng else game.decision(seat).default)


def all_strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(all_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(all_strings(v) for v in value)) if value else set()
    return set()


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
    assert game.actions[-1] == [1, {"destroyer": False, "tokens": {"green": 2}, "take_from": []}]


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


# ---------------------------------------------------------------------------
# Play


def test_must_follow_lead_colour_else_anything() -> None:
    game = game_a()
    predict(game, *nothing(3))
    assert game.to_act() == (0,)  # left of the dealer leads
    play(game, "y1")
    assert game.legal_actions(1) == ("y7", "y8", "y9")
    error = assert_illegal(game, 1, "g1", "play", "must follow")
    assert error.legal == ("y7", "y8", "y9")
    play(game, "y7")
    assert game.observe(2)["lead_suit"] == "yellow"
    assert set(game.legal_actions(2)) == set(cards("b4-9 p1-9"))  # void in yellow: anything
    play(game, "p9")
    assert game.observe(None)["last_trick"]["winner"] == 1
    assert game.to_act() == (1,)  # the winner leads next


def test_void_player_may_play_red_and_red_wins() -> None:
    game = game_a()
    predict(game, *nothing(3))
    play(game, "y1", "y7", "p1")   # seat 1 wins and leads
    play(game, "g1", "p2")
    assert "r1" in game.legal_actions(0) and "y2" in game.legal_actions(0)
    play(game, "r1")
    assert game.observe(None)["last_trick"]["winner"] == 0


def test_cards_not_in_hand_are_illegal() -> None:
    game = game_a()
    predict(game, *nothing(3))
    assert_illegal(game, 0, "g1", "play", "not a card in your hand")
    assert_illegal(game, 0, "x9", "play", "not a card")
    assert_illegal(game, 0, 17, "play")
    assert_illegal(game, 0, "r15", "play")  # not in a 3-player deck at all


def test_trick_winner_rules() -> None:
    def winner(*codes: str) -> int:
        return trick_winner([(i, INDEX[c]) for i, c in enumerate(codes)])

    assert winner("b3", "b9", "b5") == 1            # highest lead colour
    assert winner("b3", "g15", "b5") == 2           # other colours never win
    assert winner("b3", "b9", "r1") == 2            # any red beats the lead colour
    assert winner("b3", "r2", "r11", "r4") == 2     # highest red
    assert winner("r3", "b15", "r1") == 0           # red lead
    assert winner("p1", "g15", "y15") == 0          # lead wins if nobody follows


def test_played_cards_and_trick_are_public() -> None:
    game = game_a()
    predict(game, *nothing(3))
    play(game, "y1", "y7")
    obs = game.observe(2)
    assert obs["trick"] == [{"seat": 0, "card": "y1"}, {"seat": 1, "card": "y7"}]
    assert obs["played"] == ["y1", "y7"] and obs["hand_sizes"] == [14, 14, 15]


# ---------------------------------------------------------------------------
# Paying for a trick


def test_winner_returns_lead_colour_token_automatically() -> None:
    game = game_a()
    predict(game, Prediction(), Prediction(tokens={"yellow": 1}), Prediction())
    start = position(game)
    play(game, "y1", "y7", "p1")
    assert tokens(game, 1) == {} and supply(game)["yellow"] == 3
    assert {"type": "token_returned", "seat": 1, "colour": "yellow", "chosen": False} in new_events(game, start)
    assert game.observe(None)["phase"] == "play" and game.to_act() == (1,)


def test_red_win_on_other_lead_chooses_red_or_lead_colour() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"red": 1, "green": 1}), Prediction(), Prediction())
    play(game, "y1", "y7", "p1", "g1", "p2", "r1")
    obs = game.observe(0)
    assert obs["phase"] == "pay" and game.to_act() == (0,)
    assert game.decision(0).kind == "pay" and game.legal_actions(0) == ("green", "red")
    assert obs["pay"]["winning_card"] == "r1" and obs["pay"]["lead_suit"] == "green"
    assert obs["decision"] == "pay" and obs["pay"]["options"] == ["green", "red"]
    assert_illegal(game, 0, "white", "pay", "choose one of green, red")
    assert_illegal(game, 1, "red", None)
    start = position(game)
    game.apply(0, "red")
    assert tokens(game, 0) == {"green": 1} and supply(game)["red"] == 5
    # The event says it was a decision: a spectator counts it as one.
    assert new_events(game, start) == [{"type": "token_returned", "seat": 0, "colour": "red", "chosen": True}]
    assert game.to_act() == (0,) and game.observe(0)["phase"] == "play"


def test_red_win_may_pay_lead_colour() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"red": 1, "green": 1}), Prediction(), Prediction())
    play(game, "y1", "y7", "p1", "g1", "p2", "r1")
    game.apply(0, "green")
    assert tokens(game, 0) == {"red": 1}


def test_red_token_only_for_a_win_with_a_red_card() -> None:
    game = game_a()
    predict(game, Prediction(), Prediction(tokens={"red": 1}), Prediction())
    play(game, "y1", "y7", "p1")  # seat 1 wins with yellow on a yellow lead
    assert tokens(game, 1) == {"red": 1, "black": 1}


def test_red_lead_won_with_red_returns_red() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"red": 2}), Prediction(), Prediction())
    play(game, "r1", "g1", "p1")
    assert tokens(game, 0) == {"red": 1} and game.observe(0)["phase"] == "play"


def test_white_joker_by_choice() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"green": 3}), Prediction(tokens={"green": 1}), Prediction())
    assert tokens(game, 0) == {"green": 2, "white": 1}
    play(game, "y1", "y7", "p1")      # seat 1 holds green only: yellow lead -> black
    assert tokens(game, 1) == {"green": 1, "black": 1}
    play(game, "g1", "p2", "r1")      # seat 0 wins with red on green: green or white (no red held)
    assert game.legal_actions(0) == ("green", "white")
    game.apply(0, "white")
    assert tokens(game, 0) == {"green": 2} and supply(game)["white"] == 4


def test_lead_colour_or_white_is_a_choice() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"yellow": 3}), Prediction(tokens={"yellow": 1}), Prediction())
    play(game, "y1", "y7", "p1")      # seat 1 returns its yellow: its only option
    assert tokens(game, 1) == {}
    play(game, "y8", "p2", "y2")
    assert tokens(game, 1) == {"black": 1}
    play(game, "b1", "b4", "r1")      # seat 0: blue lead won by red; holds yellow 2, white 1
    assert game.to_act() == (0,) and game.observe(0)["phase"] == "play"  # white was its only option
    assert tokens(game, 0) == {"yellow": 2}


def test_white_is_forced_when_no_allowed_colour_is_held() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"purple": 3}), Prediction(tokens={"purple": 3}), Prediction())
    assert tokens(game, 0) == {"white": 3}
    start = position(game)
    play(game, "r1", "g1", "p1")
    assert game.observe(0)["phase"] == "play"  # no decision: white was the only option
    assert tokens(game, 0) == {"white": 2}
    assert {"type": "token_returned", "seat": 0, "colour": "white", "chosen": False} in new_events(game, start)


def test_black_token_when_nothing_fits() -> None:
    game = game_a()
    predict(game, *nothing(3))
    start = position(game)
    play(game, "r1", "g1", "p1")
    assert tokens(game, 0) == {"black": 1}
    assert supply(game)["black"] == 5 and game.observe(None)["black_taken"] == 1
    assert {"type": "black_taken", "seat": 0} in new_events(game, start)


def test_black_supply_runs_out() -> None:
    game = game_a()
    predict(game, *nothing(3))
    for rank in range(1, 7):
        play(game, f"r{rank}", f"g{rank}", f"p{rank}")
    assert tokens(game, 0) == {"black": 6} and supply(game)["black"] == 0
    start = position(game)
    play(game, "r7", "g7", "p7")
    assert tokens(game, 0) == {"black": 6} and game.observe(None)["black_taken"] == 6
    assert {"type": "black_exhausted", "seat": 0} in new_events(game, start)


def test_destroyer_trick_moves_no_token_and_destroyer_leads() -> None:
    game = game_a()
    predict(game, Prediction(), Prediction(), Prediction(destroyer=True))
    play(game, "y1", "y7", "p1", "b1")
    before = game.observe(None)
    start = position(game)
    play(game, "b9", "y2")
    after = game.observe(None)
    assert after["last_trick"]["winner"] == 2
    assert after["tokens"] == before["tokens"] and after["supply"] == before["supply"]
    assert [e["type"] for e in new_events(game, start)] == ["play", "play", "trick"]
    assert new_events(game, start)[-1]["destroyer_won"] is True
    assert game.to_act() == (2,)


# ---------------------------------------------------------------------------
# Scoring


def test_penalties_per_token() -> None:
    none = [0] * 7
    assert round_penalties([[1, 0, 0, 0, 0, 0, 0], none, none], None, 0, 4) == [2, 0, 0]
    assert round_penalties([[0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0, 1]], None, 0, 4) \
        == [8, 4, 3]
    assert round_penalties([[2, 0, 0, 0, 0, 1, 2], none, none], 1, 2, 4) == [14, 2, 0]
    assert round_penalties([none, none, none], 2, 5, 4) == [0, 0, 0]  # floored at 0
    assert round_penalties([none, none, none], 2, 5, 7) == [0, 0, 2]


def test_destroyer_penalty_reduced_by_black_tokens_floored_at_zero() -> None:
    game = game_a()
    predict(game, Prediction(), Prediction(), Prediction(destroyer=True))
    for rank in range(1, 7):
        play(game, f"r{rank}", f"g{rank}", f"p{rank}")   # six black tokens to seat 0
    play_out(game)
    assert game.observe(None)["black_taken"] == 6
    line = game.result().rounds[0]
    assert line[2].destroyer is True and line[2].score == 0 and line[2].tokens == {}
    assert line[0].tokens == {"black": 6}  # black ran out: seat 0 took no more
    assert line[0].score == 18


def test_destroyer_penalty_option() -> None:
    game = game_a(destroyer_penalty=10)
    assert game.observe(0)["destroyer_penalty"] == 10
    predict(game, Prediction(), Prediction(), Prediction(destroyer=True))
    for rank in range(1, 7):
        play(game, f"r{rank}", f"g{rank}", f"p{rank}")
    play_out(game)
    assert game.result().rounds[0][2].score == 10 - 6
    assert game.result().totals[2] == 4


def test_destroyer_scores_base_without_black_tokens() -> None:
    game = game_a()
    predict(game, Prediction(tokens={"red": 5, "yellow": 3, "green": 1}), Prediction(destroyer=True),
            Prediction(tokens={"purple": 3, "blue": 3, "green": 2}))
    play_out(game)
    blacks = sum(e["type"] == "black_taken" for e in game.events_for(None, 0)[0])
    assert game.result().rounds[0][1].score == max(0, 4 - blacks)


def test_round_scores_match_held_tokens() -> None:
    for seed in range(6):
        game = ExtremeGame(GameConfig(variant="extreme", players=3 + seed % 3, seed=seed, rounds=2))
        play_out(game, random.Random(seed))
        result = game.result()
        assert result.higher_is_better is False and result.variant == "extreme"
        totals = [0] * game.players
        for rnd in result.rounds:
            assert sum(s.destroyer for s in rnd) <= 1
            for seat, line in enumerate(rnd):
                if not line.destroyer:
                    assert line.score == sum(COST[c] * n for c, n in line.tokens.items())
                    assert (line.score == 0) == (not line.tokens)  # no tokens -> 0
                totals[seat] += line.score
        assert list(result.totals) == totals
        assert result.places == places_from_totals(totals, higher_is_better=False)


def test_tokens_go_back_to_the_supply_each_round() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=4, seed=2, rounds=2))
    rng = random.Random(3)
    while game.observe(None)["round"] == 1:
        seat = game.to_act()[0]
        game.apply(seat, game.random_action(seat, rng))
    obs = game.observe(None)
    assert obs["supply"]["black"] == 6 and sum(obs["supply"].values()) == 27
    assert obs["black_taken"] == 0 and obs["predicted"] == [False] * 4
    assert obs["round_history"] and len(obs["round_history"][0]) == 4


def test_lowest_total_wins_and_equal_totals_share_a_place() -> None:
    shared = 0
    for seed in range(30):
        game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=seed, rounds=1))
        play_out(game, random.Random(seed))
        result = game.result()
        best = min(result.totals)
        assert all((p == 1) == (t == best) for p, t in zip(result.places, result.totals))
        if len(set(result.totals)) < 3:
            shared += 1
            for a in range(3):
                for b in range(3):
                    if result.totals[a] == result.totals[b]:
                        assert result.places[a] == result.places[b]
    assert shared > 0


def test_result_before_the_end_is_an_error() -> None:
    with pytest.raises(EngineError):
        game_a().result()


def test_game_over_and_events() -> None:
    game = game_a()
    play_out(game)
    assert game.is_over and game.to_act() == ()
    assert game.observe(0)["phase"] == "over" and game.observe(0)["decision"] is None
    assert_illegal(game, 0, "r1", None, "over")
    with pytest.raises(IllegalAction) as info:
        game.decision(0)
    assert info.value.kind is None
    last = game.events_for(None, 0)[0][-1]
    assert last == {"type": "game_over", "totals": list(game.result().totals),
                    "places": list(game.result().places)}


# ---------------------------------------------------------------------------
# Turn errors, observation, events


def test_wrong_seat_is_illegal_with_no_kind() -> None:
    game = game4()
    assert_illegal(game, 0, Prediction(), None, "waiting for seat 1")
    assert_illegal(game, 9, Prediction(), None)
    with pytest.raises(IllegalAction) as info:
        game.decision(2)
    assert info.value.kind is None
    assert game.legal_actions(2) == ()
    with pytest.raises(IllegalAction):
        game.random_action(2, random.Random(0))


def test_observation_shows_no_other_hand() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=4, seed=9))
    hands = [set(game.observe(s)["hand"]) for s in range(4)]
    for seat in (0, 1, 2, 3, None):
        seen = all_strings(game.observe(seat))
        others = set().union(*(hands[s] for s in range(4) if s != seat))
        assert not seen & others
        events = game.events_for(seat, 0)[0]
        assert not all_strings(events) & others
        json.dumps(game.observe(seat))


def test_observation_fields() -> None:
    game = game4()
    obs = game.observe(1)
    for key in ("variant", "players", "seat", "round", "rounds", "dealer", "phase", "to_act", "decision", "hand",
                "trump", "tricks_won", "leader", "lead_suit", "trick", "last_trick", "played", "scores",
                "round_history", "tokens", "supply", "destroyer", "predicted", "destroyer_penalty",
                "black_taken", "can_take", "destroyer_free"):
        assert key in obs, key
    assert obs["variant"] == "extreme" and obs["seat"] == 1 and obs["round"] == 1
    assert obs["phase"] == "predict" and obs["decision"] == "predict"
    assert obs["to_act"] == [1] and obs["lead_suit"] is None and obs["last_trick"] is None
    assert game.observe(2)["decision"] is None


def test_events_for_private_hands_and_positions() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=4))
    public, pos = game.events_for(None, 0)
    assert [e["type"] for e in public] == ["round_start"]
    mine, pos1 = game.events_for(1, 0)
    assert pos1 == pos
    assert [e["type"] for e in mine] == ["round_start", "hand"]
    assert mine[1] == {"type": "hand", "seat": 1, "cards": game.observe(1)["hand"]}
    game.apply(1, Prediction(tokens={"red": 1}))
    later, pos2 = game.events_for(1, pos)
    assert later == [{"type": "prediction", "seat": 1, "tokens": {"red": 1}, "take_from": []}]
    assert game.events_for(1, pos2) == ([], pos2)


def test_replay_reaches_the_same_state() -> None:
    game = ExtremeGame(GameConfig(variant="extreme", players=5, seed=21, rounds=2))
    play_out(game, random.Random(4))
    again = replay(game.config, game.actions)
    assert again.snapshot() == game.snapshot()
    assert again.result() == game.result()
    json.dumps(game.actions)


def test_from_deal_keeps_the_seeded_deals_of_later_rounds() -> None:
    config = GameConfig(variant="extreme", players=3, seed=13, rounds=2)
    plain = ExtremeGame(config)
    stacked = ExtremeGame.from_deal(config, [cards(h) for h in DEAL_A], dealer=0)
    for game in (plain, stacked):
        while game.observe(None)["round"] == 1:
            seat = game.to_act()[0]
            game.apply(seat, game.decision(seat).default)
    # The same shuffled deck; who gets which packet depends on who deals.
    assert sorted(plain.observe(s)["hand"] for s in range(3)) == sorted(stacked.observe(s)["hand"] for s in range(3))


def test_from_deal_refuses_bad_hands() -> None:
    config = GameConfig(variant="extreme", players=3)
    good = [cards(h) for h in DEAL_A]
    with pytest.raises(EngineError):
        ExtremeGame.from_deal(config, good[:2])
    with pytest.raises(EngineError):
        ExtremeGame.from_deal(config, [good[0], good[0], good[2]])
    with pytest.raises(EngineError):
        ExtremeGame.from_deal(config, [good[0][:-1] + ["r15"], good[1], good[2]])  # r15 is not in a 3-player deck
