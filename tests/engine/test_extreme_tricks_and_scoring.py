"""Wizard Extreme rules from a round's first card on, one test (or a few) per sentence of
docs/rules.md section 2 and 3: playing a trick, paying for it with a token, scoring, and
the turn errors, observations and events a seat sees.

Specific situations are built with :meth:`ExtremeGame.from_deal` and the deals and steps of
``extreme_games.py`` (the three-player :data:`DEAL_A`, the four-player :func:`game4`).
"""

from __future__ import annotations

import json
import random

import pytest
from extreme_games import (
    DEAL_A,
    all_strings,
    assert_illegal,
    cards,
    game4,
    game_a,
    new_events,
    nothing,
    play,
    play_out,
    position,
    predict,
    supply,
    tokens,
)

from engine import replay
from engine.core import EngineError, GameConfig, IllegalAction, Prediction, places_from_totals
from engine.extreme import ExtremeGame, round_penalties, trick_winner
from engine.extreme_cards import INDEX

COST = {"red": 2, "yellow": 2, "green": 2, "blue": 2, "purple": 2, "white": 4, "black": 3}


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
    stored = json.loads(json.dumps(game.snapshot()["actions"]))   # the log's JSON form replays too
    assert replay(game.config, stored).actions == game.actions


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
