"""Rule tests for classic Wizard: one or more tests per sentence of docs/rules.md section 1.

Specific situations are built with stacked decks (``ClassicGame(config, decks=...)``):
the helper :func:`stacked` turns "seat -> cards" into a deck in deal order.
"""

from __future__ import annotations

import copy
import json
import pickle
import random

import pytest

from engine.classic import AMIGO_HAND_SIZES, ClassicGame, hand_sizes, legal_plays, score, trick_winner
from engine.classic_cards import CODES, INDEX, NO_SUIT, SUIT_MASKS, SUITS, codes_of
from engine.core import (
    BID,
    PLAY,
    TRUMP,
    ConfigError,
    EngineError,
    GameConfig,
    IllegalAction,
    SeatRound,
    places_from_totals,
)
from engine.masks import mask_of

# ---------------------------------------------------------------------------
# Helpers


def stacked(players: int, hands: dict[int, list[str]], turned: str | None, round_no: int = 1) -> list[str]:
    """A deck that deals ``hands[seat]`` to every seat in round ``round_no`` and turns up ``turned``.

    The seat left of the dealer gets the first cards (see ClassicGame's docstring).
    ``turned=None`` only makes sense when the hands use all 60 cards.
    """
    dealer = (round_no - 1) % players
    order = [(dealer + 1 + i) % players for i in range(players)]
    deck = [card for seat in order for card in hands[seat]]
    return deck + ([turned] if turned else [])


def new(players: int = 4, *, decks: dict | None = None, **options) -> ClassicGame:
    return ClassicGame(GameConfig(variant="classic", players=players, **options), decks=decks)


def play_defaults(game: ClassicGame, until_round: int | None = None) -> None:
    """Play every seat's first legal option until round ``until_round`` starts (or the end)."""
    while not game.is_over and (until_round is None or game.observe(None)["round"] < until_round):
        for seat in game.to_act():
            game.apply(seat, game.legal_actions(seat)[0])


def at_round(players: int, round_no: int, hands: dict[int, list[str]], turned: str | None,
             **options) -> ClassicGame:
    """A game at the start of round ``round_no`` with the given hands (earlier rounds played by default)."""
    options.setdefault("rounds", round_no)
    game = new(players, decks={round_no: stacked(players, hands, turned, round_no)}, **options)
    play_defaults(game, until_round=round_no)
    return game


def bid_all(game: ClassicGame, bid: int = 0) -> None:
    while game.observe(None)["phase"] == BID:
        for seat in game.to_act():
            game.apply(seat, bid)


def one_trick(cards_in_play_order: list[str], turned: str) -> int:
    """The winner of a round-1 trick among 4 players; seat 1 leads, so cards go to seats 1, 2, 3, 0."""
    hands = {(1 + i) % 4: [card] for i, card in enumerate(cards_in_play_order)}
    game = new(4, decks={1: stacked(4, hands, turned)}, rounds=1)
    if game.observe(None)["phase"] == TRUMP:
        game.apply(0, "blue")
    bid_all(game)
    for i, card in enumerate(cards_in_play_order):
        game.apply((1 + i) % 4, card)
    return game.observe(None)["last_trick"]["winner"]


def events_of(game: ClassicGame, seat: int | None, kind: str) -> list[dict]:
    return [e for e in game.events_for(seat, 0)[0] if e["type"] == kind]


# ---------------------------------------------------------------------------
# Cards


def test_sixty_cards_four_suits_of_thirteen_four_wizards_four_jesters():
    assert len(CODES) == len(set(CODES)) == 60
    for letter in "bgry":
        assert [c for c in CODES if c[0] == letter] == [f"{letter}{r}" for r in range(1, 14)]
    assert [c for c in CODES if c[0] in "WJ"] == ["W1", "W2", "W3", "W4", "J1", "J2", "J3", "J4"]
    assert SUITS == ("blue", "green", "red", "yellow")


def test_codes_of_mask_round_trip():
    cards = [INDEX[c] for c in ("J1", "y13", "b1", "W2")]
    assert codes_of(mask_of(cards)) == ("b1", "y13", "W2", "J1")


# ---------------------------------------------------------------------------
# Players and length


@pytest.mark.parametrize("players, rounds", [(3, 20), (4, 15), (5, 12), (6, 10)])
def test_standard_length_is_60_over_players_and_round_r_deals_r_cards(players, rounds):
    assert hand_sizes(GameConfig(players=players)) == tuple(range(1, rounds + 1))
    game = new(players)
    seen = []
    while not game.is_over:
        obs = game.observe(0)
        if not seen or seen[-1] != obs["round"]:
            seen.append(obs["round"])
            assert obs["hand_size"] == obs["round"]
            assert all(len(game.observe(s)["hand"]) == obs["round"] for s in range(players))
        for seat in game.to_act():
            game.apply(seat, game.legal_actions(seat)[0])
    assert seen == list(range(1, rounds + 1))
    assert len(game.result().rounds) == rounds


def test_rounds_n_plays_rounds_1_to_n():
    game = new(5, rounds=3)
    play_defaults(game)
    assert [e["hand_size"] for e in events_of(game, None, "round_start")] == [1, 2, 3]
    assert game.observe(None)["rounds"] == 3


@pytest.mark.parametrize("players, most", [(3, 20), (4, 15), (5, 12), (6, 10)])
def test_rounds_n_bounds(players, most):
    GameConfig(players=players, rounds=1).validate()
    GameConfig(players=players, rounds=most).validate()
    with pytest.raises(ConfigError, match=f"classic with {players} players allows at most {most} rounds"):
        GameConfig(players=players, rounds=most + 1).validate()
    with pytest.raises(ConfigError, match=f"rounds must be between 1 and {most}"):
        GameConfig(players=players, rounds=0).validate()


def test_rounds_error_message_example_from_the_rules():
    with pytest.raises(ConfigError, match="classic with 5 players allows at most 12 rounds"):
        new(5, rounds=13)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_amigo_hand_sizes(players):
    expected = {
        3: [2, 4, 6, 8, 10, 12, 14, 16, 18, 20],
        4: [1, 3, 5, 7, 9, 11, 12, 13, 14, 15],
        5: [2, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        6: list(range(1, 11)),
    }[players]
    assert list(AMIGO_HAND_SIZES[players]) == expected
    game = new(players, length="amigo")
    play_defaults(game)
    assert [e["hand_size"] for e in events_of(game, None, "round_start")] == expected
    assert len(game.result().rounds) == 10


@pytest.mark.parametrize("players", [2, 7, 0])
def test_players_out_of_range(players):
    with pytest.raises(ConfigError, match="classic is for 3 to 6 players"):
        new(players)


@pytest.mark.parametrize("options, message", [
    ({"variant": "poker"}, "unknown variant 'poker'"),
    ({"length": "amigo", "rounds": 3}, "either a number of rounds or the amigo length"),
    ({"length": "short"}, "unknown game length 'short'"),
    ({"bidding": "loud"}, "unknown bidding 'loud'"),
    ({"bidding": "hidden", "plus_minus_one": True}, "plus-minus-one needs open bidding"),
    ({"bidding": "secret", "plus_minus_one": True}, "plus-minus-one needs open bidding"),
    ({"destroyer_penalty": 5}, "classic has no destroyer"),
    ({"rounds": True}, "rounds must be a whole number"),
])
def test_bad_configs_are_clear_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        ClassicGame(GameConfig(**{"variant": "classic", "players": 4, **options}))


# ---------------------------------------------------------------------------
# Dealer and trump


def test_first_dealer_is_seat_0_and_the_deal_passes_clockwise():
    game = new(4, rounds=6)
    play_defaults(game)
    assert [e["dealer"] for e in events_of(game, None, "round_start")] == [0, 1, 2, 3, 0, 1]


def test_numbered_card_turned_sets_trump():
    game = new(3, decks={1: stacked(3, {0: ["b1"], 1: ["b2"], 2: ["b3"]}, "r7")}, rounds=1)
    obs = game.observe(None)
    assert (obs["trump_card"], obs["trump"], obs["phase"]) == ("r7", "red", BID)
    assert events_of(game, None, "trump") == [{"type": "trump", "card": "r7", "suit": "red"}]


def test_jester_turned_means_no_trump():
    game = new(3, decks={1: stacked(3, {0: ["b1"], 1: ["b2"], 2: ["b3"]}, "J2")}, rounds=1)
    obs = game.observe(None)
    assert (obs["trump_card"], obs["trump"], obs["phase"]) == ("J2", None, BID)
    # A high off-suit card cannot win by being "trump": blue led, yellow 13 loses.
    game = new(3, decks={1: stacked(3, {1: ["b2"], 2: ["y13"], 0: ["b5"]}, "J2")}, rounds=1)
    bid_all(game)
    for seat, card in ((1, "b2"), (2, "y13"), (0, "b5")):
        game.apply(seat, card)
    assert game.observe(None)["last_trick"]["winner"] == 0


def test_wizard_turned_dealer_chooses_trump_after_seeing_the_hand():
    game = new(4, decks={2: stacked(4, {0: ["b1", "b2"], 1: ["g1", "g2"], 2: ["r1", "r2"], 3: ["y1", "y2"]},
                                    "W3", round_no=2)}, rounds=2)
    play_defaults(game, until_round=2)
    dealer = 1
    assert game.to_act() == (dealer,)
    decision = game.decision(dealer)
    assert decision.kind == TRUMP and decision.options == SUITS and decision.default == "blue"
    obs = game.observe(dealer)
    assert (obs["phase"], obs["decision"], obs["hand"], obs["trump_card"], obs["trump"]) == \
        (TRUMP, TRUMP, ["g1", "g2"], "W3", None)
    assert game.observe(2)["decision"] is None
    with pytest.raises(IllegalAction):
        game.decision(2)
    for no_trump in ("none", None, "no trump", "", 0):
        with pytest.raises(IllegalAction) as err:
            game.apply(dealer, no_trump)
        assert err.value.kind == TRUMP and err.value.legal == SUITS
    with pytest.raises(IllegalAction):
        game.apply(2, "red")  # only the dealer chooses
    game.apply(dealer, "yellow")
    obs = game.observe(None)
    assert (obs["trump"], obs["phase"], obs["to_act"]) == ("yellow", BID, [2])
    assert events_of(game, None, "trump_chosen") == [{"type": "trump_chosen", "seat": 1, "suit": "yellow"}]


def test_last_round_deals_all_60_cards_and_has_no_trump():
    game = new(6, rounds=10)
    play_defaults(game, until_round=10)
    obs = game.observe(None)
    assert (obs["round"], obs["hand_size"], obs["trump_card"], obs["trump"], obs["phase"]) == \
        (10, 10, None, None, BID)
    all_cards = [c for s in range(6) for c in game.observe(s)["hand"]]
    assert sorted(all_cards) == sorted(CODES)
    assert events_of(game, None, "trump")[-1] == {"type": "trump", "card": None, "suit": None}


# ---------------------------------------------------------------------------
# Bidding


def test_bidding_starts_left_of_dealer_and_goes_clockwise():
    game = new(4, rounds=2)
    order = []
    while game.observe(None)["phase"] == BID:
        seat = game.to_act()[0]
        order.append(seat)
        game.apply(seat, 0)
    assert order == [1, 2, 3, 0]
    play_defaults(game, until_round=2)
    if game.observe(None)["phase"] == TRUMP:
        game.apply(1, "red")
    order = []
    while game.observe(None)["phase"] == BID:
        seat = game.to_act()[0]
        order.append(seat)
        game.apply(seat, 0)
    assert order == [2, 3, 0, 1]


def test_bids_are_0_to_r_and_nothing_else():
    game = at_round(3, 3, {0: ["b1", "b2", "b3"], 1: ["g1", "g2", "g3"], 2: ["r1", "r2", "r3"]}, "y1")
    seat = game.to_act()[0]
    assert game.legal_actions(seat) == (0, 1, 2, 3)
    for bad in (4, -1, True, False, "1", 1.0, None):
        with pytest.raises(IllegalAction) as err:
            game.apply(seat, bad)
        assert err.value.kind == BID and err.value.legal == (0, 1, 2, 3)
    game.apply(seat, 3)


def test_open_bids_are_seen_by_later_bidders():
    game = new(4, rounds=2, seed=3)
    game.apply(1, 1)
    for viewer in (None, 0, 1, 2, 3):
        assert game.observe(viewer)["bids"] == [None, 1, None, None]
    assert events_of(game, None, "bid") == [{"type": "bid", "seat": 1, "bid": 1}]


def test_hidden_bids_are_simultaneous_and_revealed_when_all_have_bid():
    game = new(4, rounds=1, bidding="hidden")
    assert game.to_act() == (1, 2, 3, 0)
    assert all(game.decision(s).kind == BID for s in range(4))
    game.apply(2, 1)
    assert game.to_act() == (1, 3, 0)
    assert game.observe(2)["bids"] == [None, None, 1, None]
    for viewer in (None, 0, 1, 3):
        assert game.observe(viewer)["bids"] == [None] * 4
    assert events_of(game, 0, "bid") == []
    assert events_of(game, 2, "bid") == [{"type": "bid", "seat": 2, "bid": 1}]
    assert events_of(game, None, "bid_made") == [{"type": "bid_made", "seat": 2}]
    with pytest.raises(IllegalAction):
        game.apply(2, 0)  # already bid
    game.apply(0, 0)
    game.apply(3, 1)
    assert game.observe(1)["bids"] == [None] * 4  # seat 1 has not bid yet: it sees nothing
    game.apply(1, 0)
    for viewer in (None, 0, 1, 2, 3):
        assert game.observe(viewer)["bids"] == [0, 0, 1, 1]
    assert events_of(game, None, "bids_revealed") == [{"type": "bids_revealed", "bids": [0, 0, 1, 1]}]
    assert game.observe(None)["phase"] == PLAY and game.to_act() == (1,)


def test_hidden_bid_of_a_seat_is_not_seen_by_the_others_before_all_have_bid():
    game = new(4, rounds=1, bidding="hidden")
    game.apply(0, 1)
    game.apply(3, 0)
    assert game.observe(1)["bids"] == [None, None, None, None]
    assert game.observe(0)["bids"] == [1, None, None, None]
    assert game.observe(3)["bids"] == [None, None, None, 0]


def test_secret_bids_stay_secret_until_the_round_is_scored():
    game = new(3, rounds=2, bidding="secret")
    bids = {1: 1, 2: 0, 0: 1}
    for seat, bid in bids.items():
        game.apply(seat, bid)
    assert game.observe(None)["phase"] == PLAY
    for viewer in (0, 1, 2):
        assert game.observe(viewer)["bids"] == [bids[s] if s == viewer else None for s in range(3)]
    assert game.observe(None)["bids"] == [None, None, None]
    assert events_of(game, None, "bids_revealed") == []
    # Play out round 1; the bids come out with the scoring.
    for seat in (1, 2, 0):
        game.apply(seat, game.legal_actions(seat)[0])
    assert events_of(game, None, "bids_revealed") == [{"type": "bids_revealed", "bids": [1, 1, 0]}]
    history = game.observe(2)["round_history"]
    assert history[0]["bids"] == [1, 1, 0]
    # Round 2: fresh secret bids, nobody's known.
    assert game.observe(None)["round"] == 2 and game.observe(0)["bids"] == [None, None, None]
    play_defaults(game)
    assert [sr.bid for sr in game.result().rounds[1]] == game.observe(None)["bids"]


def test_plus_minus_one_last_bidder_may_not_make_the_sum_equal_r():
    game = at_round(4, 3, {0: ["b1", "b2", "b3"], 1: ["g1", "g2", "g3"], 2: ["r1", "r2", "r3"],
                           3: ["y1", "y2", "y3"]}, "J1", plus_minus_one=True)
    # Round 3: dealer is seat 2, bidding 3, 0, 1, 2.
    assert game.to_act() == (3,)
    game.apply(3, 1)
    assert game.legal_actions(0) == (0, 1, 2, 3)  # not the last bidder: no restriction
    game.apply(0, 1)
    game.apply(1, 0)
    assert game.legal_actions(2) == (0, 2, 3)  # 1 would make 1 + 1 + 0 + 1 = 3
    with pytest.raises(IllegalAction) as err:
        game.apply(2, 1)
    assert err.value.kind == BID and err.value.legal == (0, 2, 3) and "0, 2, 3" in str(err.value)
    game.apply(2, 2)


def test_plus_minus_one_nothing_forbidden_when_the_sum_already_exceeds_r():
    game = new(4, rounds=1, plus_minus_one=True)
    game.apply(1, 1)
    game.apply(2, 1)
    game.apply(3, 0)
    assert game.legal_actions(0) == (0, 1)


def test_plus_minus_one_is_an_error_with_hidden_or_secret():
    for bidding in ("hidden", "secret"):
        with pytest.raises(ConfigError, match="plus-minus-one needs open bidding"):
            new(4, bidding=bidding, plus_minus_one=True)


# ---------------------------------------------------------------------------
# Play


def test_left_of_dealer_leads_the_first_trick_and_the_winner_leads_the_next():
    hands = {0: ["b1", "g1", "r1"], 1: ["b2", "g2", "r2"], 2: ["b3", "g3", "r13"], 3: ["b4", "g4", "r4"]}
    game = at_round(4, 3, hands, "J1")
    bid_all(game)
    # Dealer seat 2, so seat 3 leads.
    assert game.observe(None)["leader"] == 3 and game.to_act() == (3,)
    for seat, card in ((3, "r4"), (0, "r1"), (1, "r2"), (2, "r13")):
        game.apply(seat, card)
    assert game.observe(None)["last_trick"]["winner"] == 2
    assert game.observe(None)["leader"] == 2 and game.to_act() == (2,)


def test_winner_leads_next_in_a_random_game():
    game = new(5, seed=11, rounds=6)
    rng = random.Random(1)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    tricks = events_of(game, None, "trick")
    starts = [e["dealer"] for e in events_of(game, None, "round_start")]
    i = 0
    for rnd, size in enumerate(range(1, 7)):
        first = tricks[i]
        assert first["cards"][0]["seat"] == (starts[rnd] + 1) % 5
        for k in range(1, size):
            assert tricks[i + k]["cards"][0]["seat"] == tricks[i + k - 1]["winner"]
        i += size


def _follow_game(hand1: list[str], led: str, turned: str = "J1") -> ClassicGame:
    """Round 2 of a 4-player game: seat 2 leads ``led``, seat 3 holds ``hand1``."""
    rest = [c for c in CODES if c not in hand1 and c != led and c != turned]
    hands = {2: [led, rest[0]], 3: hand1, 0: rest[1:3], 1: rest[3:5]}
    game = at_round(4, 2, hands, turned)
    bid_all(game)
    game.apply(2, led)
    return game


def test_must_follow_the_lead_suit():
    game = _follow_game(["b5", "g9"], "b2")
    assert game.legal_actions(3) == ("b5",)
    with pytest.raises(IllegalAction) as err:
        game.apply(3, "g9")
    assert err.value.kind == PLAY and err.value.legal == ("b5",)


def test_wizard_and_jester_may_always_be_played():
    game = _follow_game(["b5", "W1"], "b2")
    assert game.legal_actions(3) == ("b5", "W1")
    game = _follow_game(["b5", "J4"], "b2")
    assert game.legal_actions(3) == ("b5", "J4")
    game.apply(3, "J4")


def test_void_in_the_lead_suit_may_play_anything():
    game = _follow_game(["g5", "r9"], "b2")
    assert game.legal_actions(3) == ("g5", "r9")


def test_trump_need_not_be_played():
    game = _follow_game(["g5", "r9"], "b2", turned="r1")  # red trump, void in blue
    assert game.observe(None)["trump"] == "red"
    game.apply(3, "g5")  # discarding instead of trumping is fine


def test_jester_led_the_next_card_sets_the_lead_suit():
    game = _follow_game(["b5", "g9"], "J2")
    assert game.observe(None)["lead_suit"] is None
    assert game.legal_actions(3) == ("b5", "g9")
    game.apply(3, "g9")
    assert game.observe(None)["lead_suit"] == "green"
    assert game.observe(0)["decision"] == PLAY


def test_jester_jester_number_sets_the_lead_suit():
    hands = {1: ["J1"], 2: ["J2"], 3: ["r4"], 0: ["r9"]}
    game = new(4, decks={1: stacked(4, hands, "b1")}, rounds=1)
    bid_all(game)
    game.apply(1, "J1")
    game.apply(2, "J2")
    assert game.observe(None)["lead_suit"] is None
    game.apply(3, "r4")
    assert game.observe(None)["lead_suit"] == "red"


def test_jester_then_wizard_frees_the_trick():
    hands = {2: ["J3", "b13"], 3: ["W2", "g4"], 0: ["b3", "g5"], 1: ["b4", "g6"]}
    game = at_round(4, 2, hands, "r1")
    bid_all(game)  # dealer 1, seat 2 leads
    game.apply(2, "J3")
    game.apply(3, "W2")
    obs = game.observe(None)
    assert obs["lead_suit"] is None
    assert game.legal_actions(0) == ("b3", "g5")
    game.apply(0, "g5")
    assert game.observe(None)["lead_suit"] is None  # a numbered card after the Wizard sets nothing
    assert game.legal_actions(1) == ("b4", "g6")


def test_wizard_led_frees_the_trick():
    hands = {2: ["W1", "b13"], 3: ["b2", "g4"], 0: ["b3", "g5"], 1: ["b4", "g6"]}
    game = at_round(4, 2, hands, "r1")
    bid_all(game)
    game.apply(2, "W1")
    assert game.legal_actions(3) == ("b2", "g4")
    game.apply(3, "b2")
    assert game.legal_actions(0) == ("b3", "g5")  # blue was not set as lead by b2


def test_legal_plays_function():
    hand = mask_of([INDEX[c] for c in ("b2", "r5", "W1", "J3")])
    assert codes_of(legal_plays(hand, SUIT_MASKS[2])) == ("r5", "W1", "J3")
    assert codes_of(legal_plays(hand, SUIT_MASKS[0])) == ("b2", "W1", "J3")
    assert codes_of(legal_plays(hand, SUIT_MASKS[1])) == ("b2", "r5", "W1", "J3")
    assert codes_of(legal_plays(hand, 0)) == ("b2", "r5", "W1", "J3")  # no lead suit


# ---------------------------------------------------------------------------
# Winning a trick


@pytest.mark.parametrize("cards, turned, winner_index", [
    (["b3", "W2", "W1", "r13"], "r1", 1),     # the first Wizard wins, even over trump
    (["W4", "W1", "W2", "W3"], "r1", 0),      # several Wizards: the first
    (["J1", "W3", "b2", "W1"], "r1", 1),      # Jester then Wizard: the Wizard
    (["J2", "J4", "J1", "J3"], "r1", 0),      # only Jesters: the first Jester
    (["J2", "J4", "g2", "J3"], "r1", 2),      # Jester, Jester, number: the number
    (["b3", "r2", "b13", "J1"], "r1", 1),     # lowest trump beats the highest lead card
    (["b3", "r2", "r9", "r4"], "r1", 2),      # the highest trump
    (["b3", "g13", "b9", "y12"], "r1", 2),    # no trump played: the highest of the lead suit
    (["b3", "g13", "b9", "y12"], "J1", 2),    # no trump this round
    (["r3", "r12", "b13", "J1"], "r1", 1),    # trump led: the highest trump
    (["J1", "b5", "g13", "b6"], "y1", 3),     # Jester led: the next card sets blue
    (["g1", "J1", "J2", "J3"], "r1", 0),      # one number among Jesters wins
])
def test_trick_winner(cards, turned, winner_index):
    trump = SUITS.index({"b": "blue", "g": "green", "r": "red", "y": "yellow"}[turned[0]]) \
        if turned[0] in "bgry" else NO_SUIT
    assert trick_winner([INDEX[c] for c in cards], trump) == winner_index
    assert one_trick(cards, turned) == (1 + winner_index) % 4


# ---------------------------------------------------------------------------
# Scoring and results


def test_score_formula():
    assert score(0, 0) == 20
    assert score(3, 3) == 50
    assert score(1, 0) == -10
    assert score(0, 3) == -30
    assert score(5, 2) == -30
    assert score(7, 2) == -50
    assert score(12, 12) == 140
    assert score(0, 15) == -150


def test_round_scores_and_totals_in_a_game():
    # Seat 1 holds the Wizard: it wins the single trick.
    game = new(3, decks={1: stacked(3, {1: ["W1"], 2: ["J1"], 0: ["b2"]}, "g5"),
                         2: stacked(3, {2: ["g1", "g2"], 0: ["b1", "b2"], 1: ["W1", "W2"]}, "J1", 2)},
               rounds=2)
    for seat, bid in ((1, 1), (2, 1), (0, 0)):
        game.apply(seat, bid)
    for seat, card in ((1, "W1"), (2, "J1"), (0, "b2")):
        game.apply(seat, card)
    obs = game.observe(None)
    assert obs["round_history"] == [{"round": 1, "bids": [0, 1, 1], "tricks": [0, 1, 0], "scores": [20, 30, -10]}]
    assert obs["scores"] == [20, 30, -10]
    # Round 2 (dealer 1): seat 1 takes both tricks with its Wizards.
    for seat, bid in ((2, 0), (0, 1), (1, 2)):
        game.apply(seat, bid)
    for seat, card in ((2, "g1"), (0, "b1"), (1, "W1"), (1, "W2"), (2, "g2"), (0, "b2")):
        game.apply(seat, card)
    result = game.result()
    assert result.totals == (20 - 10, 30 + 40, -10 + 20)
    assert result.places == (2, 1, 2)  # equal totals share the place
    assert result.higher_is_better is True
    assert result.rounds[1] == (SeatRound(score=-10, bid=1, tricks=0), SeatRound(score=40, bid=2, tricks=2),
                                SeatRound(score=20, bid=0, tricks=0))
    assert events_of(game, None, "game_over") == [{"type": "game_over", "totals": [10, 70, 10], "places": [2, 1, 2]}]


def test_equal_totals_share_the_place():
    game = new(3, decks={1: stacked(3, {1: ["W1"], 2: ["J1"], 0: ["J2"]}, "g5")}, rounds=1)
    for seat in (1, 2, 0):
        game.apply(seat, 1 if seat == 1 else 0)
    for seat, card in ((1, "W1"), (2, "J1"), (0, "J2")):
        game.apply(seat, card)
    assert game.result().totals == (20, 30, 20)
    assert game.result().places == (2, 1, 2)
    assert places_from_totals([10, 10, 10, 0], higher_is_better=True) == (1, 1, 1, 4)


def test_result_before_the_end_is_an_error():
    with pytest.raises(EngineError, match="not over"):
        new(4).result()


# ---------------------------------------------------------------------------
# Illegal actions, the interface, determinism


def test_illegal_action_leaves_the_state_unchanged_and_names_kind_and_options():
    game = _follow_game(["b5", "g9"], "b2")
    before = game.snapshot()
    obs_before = game.observe(3)
    for bad in ("g9", "b2", "x1", 7, None, ["b5"], "B5"):
        with pytest.raises(IllegalAction) as err:
            game.apply(3, bad)
        assert err.value.kind == PLAY and err.value.legal == ("b5",) and err.value.seat == 3
        assert "play" in str(err.value) and "b5" in str(err.value)
        assert game.snapshot() == before and game.observe(3) == obs_before
    game.apply(3, "b5")


def test_wrong_seat_and_game_over_are_illegal_with_no_kind():
    game = new(4, rounds=1)
    before = game.snapshot()
    with pytest.raises(IllegalAction) as err:
        game.apply(2, 0)
    assert err.value.kind is None and "waiting for seat 1" in str(err.value)
    assert game.snapshot() == before
    with pytest.raises(IllegalAction) as err:
        game.decision(0)
    assert err.value.kind is None
    for not_a_seat in (-1, None, 4, "1"):
        with pytest.raises(IllegalAction) as err:
            game.apply(not_a_seat, 0)
        assert err.value.kind is None
        with pytest.raises(IllegalAction):
            game.random_action(not_a_seat, random.Random(0))
    bid_all(game)
    for not_a_seat in (-1, None, 4, "1", 0):  # seat 1 is to play
        with pytest.raises(IllegalAction) as err:
            game.apply(not_a_seat, game.legal_actions(1)[0])
        assert err.value.kind is None
    assert game.snapshot()["hands"] == before["hands"]
    assert game.legal_actions(0) == ()
    with pytest.raises(IllegalAction):
        game.random_action(0, random.Random(0))
    play_defaults(game)
    with pytest.raises(IllegalAction) as err:
        game.apply(1, 0)
    assert err.value.kind is None and "over" in str(err.value)
    assert game.to_act() == () and game.observe(None)["phase"] == "over"


def test_random_action_covers_every_legal_option():
    hands = {2: ["J3", "b13", "g1"], 3: ["W2", "g4", "y5"], 0: ["b3", "g5", "b7"], 1: ["b4", "g6", "J1"]}
    game = at_round(4, 3, hands, "r1")
    bid_all(game)
    rng = random.Random(0)
    for seat in (3, 0, 1, 2):  # dealer 2: seat 3 leads
        picks = {game.random_action(seat, rng) for _ in range(200)}
        assert picks == set(game.legal_actions(seat))
        game.apply(seat, game.legal_actions(seat)[-1])


def test_decision_default_is_the_first_option():
    game = new(4, rounds=3)
    d = game.decision(1)
    assert d.kind == BID and d.options == (0, 1) and d.default == 0


def test_actions_log_and_replay_reach_the_same_state():
    game = new(5, seed=9, rounds=5, bidding="hidden")
    rng = random.Random(3)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    again = new(5, seed=9, rounds=5, bidding="hidden")
    for seat, action in game.actions:
        again.apply(seat, action)
    assert again.snapshot() == game.snapshot()
    assert again.result() == game.result()


def test_a_copied_or_pickled_game_plays_on_identically():
    game = new(4, seed=4, rounds=3)
    rng = random.Random(4)
    game.apply(1, 0)  # mid-bidding, when nobody is to play a card
    copies = [copy.deepcopy(game), pickle.loads(pickle.dumps(game))]
    while not game.is_over:
        for seat in game.to_act():
            action = game.random_action(seat, rng)
            for g in [game, *copies]:
                g.apply(seat, action)
    assert all(g.snapshot() == game.snapshot() for g in copies)


def test_same_seed_same_deals_different_seeds_differ():
    def deals(seed: int) -> list:
        game = new(4, seed=seed, rounds=4)
        play_defaults(game)
        return [e["cards"] for s in range(4) for e in events_of(game, s, "hand")]

    assert deals(5) == deals(5)
    assert len({json.dumps(deals(seed)) for seed in range(8)}) == 8


def test_deals_are_pinned():
    # The shuffle is part of the recorded games: a change to it must be deliberate.
    game = new(4, seed=0, rounds=3)
    assert [game.observe(s)["hand"] for s in range(4)] == [["J3"], ["b5"], ["r10"], ["y10"]]
    assert game.observe(None)["trump_card"] == "b10"
    game = new(4, seed=12345)
    assert [game.observe(s)["hand"] for s in range(4)] == [["y12"], ["g3"], ["y6"], ["r13"]]


def test_observation_is_json_and_spectator_sees_no_hand():
    game = new(4, seed=2, rounds=3)
    rng = random.Random(2)
    while not game.is_over:
        for seat in (None, 0, 1, 2, 3):
            json.dumps(game.observe(seat))
        spectator = game.observe(None)
        assert spectator["hand"] == [] and spectator["seat"] is None and spectator["decision"] is None
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    json.dumps(game.events_for(None, 0)[0])


def test_private_hand_events_go_to_their_owner_only():
    game = new(4, seed=2, rounds=2)
    for seat in range(4):
        hands = events_of(game, seat, "hand")
        assert hands == [{"type": "hand", "cards": game.observe(seat)["hand"]}]
    assert events_of(game, None, "hand") == []


def test_events_for_start_position():
    game = new(4, seed=2, rounds=2)
    first, pos = game.events_for(1, 0)
    game.apply(1, 0)
    more, pos2 = game.events_for(1, pos)
    assert more == [{"type": "bid", "seat": 1, "bid": 0}] and pos2 == pos + 1
    assert game.events_for(1, pos2) == ([], pos2)
    with pytest.raises(ValueError):
        game.events_for(1, pos2 + 1)


def test_observation_fields_during_play():
    hands = {0: ["b1", "g1", "r1"], 1: ["b2", "g2", "r2"], 2: ["b3", "g3", "r13"], 3: ["b4", "g4", "r4"]}
    game = at_round(4, 3, hands, "g7")
    bid_all(game, 1)
    game.apply(3, "r4")
    game.apply(0, "r1")
    obs = game.observe(1)
    assert obs["trick"] == [{"seat": 3, "card": "r4"}, {"seat": 0, "card": "r1"}]
    assert obs["lead_suit"] == "red" and obs["leader"] == 3 and obs["played"] == ["r4", "r1"]
    assert obs["hand"] == ["b2", "g2", "r2"] and obs["decision"] == PLAY and obs["to_act"] == [1]
    assert obs["hand_sizes"] == [2, 3, 3, 2] and obs["hand_size"] == 3
    assert obs["trump"] == "green" and obs["trump_card"] == "g7" and obs["bids"] == [1, 1, 1, 1]
    game.apply(1, "r2")
    game.apply(2, "r13")
    obs = game.observe(0)
    assert obs["trick"] == [] and obs["tricks_won"] == [0, 0, 1, 0]
    assert obs["last_trick"] == {"winner": 2, "cards": [{"seat": 3, "card": "r4"}, {"seat": 0, "card": "r1"},
                                                         {"seat": 1, "card": "r2"}, {"seat": 2, "card": "r13"}]}
    assert events_of(game, None, "trick")[-1] == {
        "type": "trick", "winner": 2, "leader": 3, "lead_suit": "red", "cards": obs["last_trick"]["cards"]}
