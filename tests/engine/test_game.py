"""Conformance: every variant satisfies the declared interface, engine.game.Game.

One random-simulation test runs over every variant (as OpenSpiel runs one over every
game): random playouts from many seeds, checking at every decision what the protocol
promises, whatever the rules, and that the games keep what their variant's record
(``engine.variant``) states. A new variant gets these checks by being listed in
``engine.VARIANTS``.
"""

from __future__ import annotations

import ast
import copy
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    DECISION_KINDS,
    PAY,
    PLAY,
    PREDICT,
    TRUMP,
    VARIANT_RECORDS,
    VARIANTS,
    ClassicGame,
    ConfigError,
    EngineError,
    ExtremeGame,
    Game,
    GameConfig,
    IllegalAction,
    new_game,
    places_from_totals,
    replay,
    replay_record,
    variant,
)
from engine.describe import describe_event

# Never legal: wrong values, and right values of the wrong type (True == 1, 0.0 == 0).
NOT_AN_ACTION: list[Any] = [None, True, False, 0.0, 1.5, -1, 10**6, "", "1", "x9", [0], {"tokens": "many"}]


@st.composite
def configs(draw: st.DrawFn) -> GameConfig:
    name = draw(st.sampled_from(VARIANTS))
    players = draw(st.sampled_from(variant(name).players))
    options: dict[str, Any] = {}
    if name == "classic":
        options["bidding"] = draw(st.sampled_from(["open", "hidden", "secret"]))
        options["rounds"] = draw(st.integers(1, 3))
    else:
        options["rounds"] = 1  # one round is 15 tricks
    return GameConfig(variant=name, players=players, seed=draw(st.integers(0, 2**32 - 1)), **options)


def test_both_variants_declare_the_protocol() -> None:
    assert Game in ClassicGame.__mro__ and Game in ExtremeGame.__mro__   # declared, so mypy checks them
    for name in VARIANTS:
        game = new_game(GameConfig(variant=name, players=4))
        assert isinstance(game, Game)
        assert isinstance(game.is_over, bool) and not game.is_over   # an attribute in both, not a method


# A value other than the default for each option a variant may not have.
NOT_DEFAULT = {"length": "amigo", "bidding": "hidden", "plus_minus_one": True, "destroyer_penalty": 5}


def test_the_records_state_what_the_games_do() -> None:
    assert tuple(VARIANT_RECORDS) == VARIANTS and all(variant(name).name == name for name in VARIANTS)
    for bad in ("chess", "", None, ["classic"]):
        with pytest.raises(ConfigError, match="unknown variant"):
            variant(bad)  # type: ignore[arg-type]
    for record in VARIANT_RECORDS.values():
        assert set(record.decision_kinds) <= set(DECISION_KINDS) and set(record.special_cards) <= set(record.cards)
        for players in record.players:
            config = GameConfig(variant=record.name, players=players)
            game = new_game(config)
            assert record.rounds(config) == record.default_rounds(players) == len(record.hand_sizes(config))
            assert game.observe(None)["hand_sizes"] == [record.hand_sizes(config)[0]] * players
            deck = record.deck(players)
            assert max(int(code[1:]) for code in deck if code not in record.special_cards) == record.top_rank(players)
        for players in (record.min_players - 1, record.max_players + 1):
            with pytest.raises(ConfigError, match=f"{record.name} is for"):
                GameConfig(variant=record.name, players=players).validate()
        for option, value in NOT_DEFAULT.items():
            if option not in record.options:
                with pytest.raises(ConfigError):
                    GameConfig(variant=record.name, **{option: value}).validate()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), play_seed=st.integers(0, 2**32 - 1))
def test_random_playouts_keep_the_protocol(config: GameConfig, play_seed: int) -> None:
    game: Game = new_game(config)
    record = variant(config.variant)
    rng = random.Random(play_seed)
    assert game.config == config and game.players == config.players
    seen = 0   # log position up to which the spectator has read
    public: list[dict[str, Any]] = []
    sizes: dict[int, int] = {}   # cards in hands + cards played, per round: constant within a round
    while not game.is_over:
        with pytest.raises(EngineError):
            game.result()
        to_act = game.to_act()
        assert to_act, "a running game waits for somebody"
        check_observations(game, sizes)
        new, seen = game.events_for(None, seen)
        public += new
        for seat in to_act:
            decision = game.decision(seat)
            assert decision.kind in record.decision_kinds
            legal = game.legal_actions(seat)
            if decision.kind == PLAY:
                assert set(legal) <= set(record.deck(game.players)) <= set(record.cards)
            elif decision.kind in (TRUMP, PAY):
                assert set(legal) <= set(record.action_colours)
            assert decision.seat == seat and decision.options == (None if decision.kind == PREDICT else legal)
            assert legal or decision.kind == PREDICT, "legal actions are non-empty until the game is over"
            for action in legal or [decision.default]:
                copy.deepcopy(game).apply(seat, action)   # every legal action applies
            check_refused(game, seat)
            before = len(game.actions)
            game.apply(seat, game.random_action(seat, rng))
            assert len(game.actions) == before + 1
    assert game.to_act() == ()
    for seat in range(game.players):
        with pytest.raises(IllegalAction) as refused:
            game.apply(seat, 0)
        assert refused.value.kind is None
    result = game.result()
    assert len(result.totals) == game.players
    assert result.places == places_from_totals(result.totals, result.higher_is_better)
    assert result.higher_is_better == record.higher_is_better and result.variant == record.name
    assert len(result.rounds) == record.rounds(config) == len(record.hand_sizes(config))
    assert list(sizes.values()) == [size * game.players for size in record.hand_sizes(config)]
    new, seen = game.events_for(None, seen)
    assert game.events_for(None, 0) == (public + new, seen), "reading the log in parts gives the whole"
    assert public + new and (public + new)[-1]["type"] == "game_over"
    bots = [f"bot{seat}" for seat in range(game.players)]
    assert all(isinstance(describe_event(event, bots), str) for event in public + new)
    again = replay(config, game.actions)
    assert again.snapshot() == game.snapshot() and again.result() == result
    assert replay_record(config.to_dict(), game.actions).snapshot() == game.snapshot()


def check_observations(game: Game, sizes: dict[int, int]) -> None:
    """A seat sees its own hand and no card of another hand; the cards are conserved."""
    hands = [set(game.observe(seat)["hand"]) for seat in range(game.players)]
    spectator = game.observe(None)
    assert spectator["hand"] == [] and spectator["hand_sizes"] == [len(hand) for hand in hands]
    played = spectator["played"]
    cards = [card for hand in hands for card in hand] + played
    assert len(set(cards)) == len(cards), "no card is in two places"
    assert sizes.setdefault(spectator["round"], len(cards)) == len(cards), "no card appears or vanishes in a round"
    for viewer in [None, *range(game.players)]:
        hidden = set().union(*(hand for seat, hand in enumerate(hands) if seat != viewer))
        observation = game.observe(viewer)
        shown = strings(observation)
        assert not shown & hidden, f"seat {viewer} sees another seat's cards {sorted(shown & hidden)}"
        # The finished rounds: the same for every viewer, the rounds before this one, and
        # left out (None, in their place) on request.
        assert observation["round_history"] == spectator["round_history"]
        assert len(observation["round_history"]) == observation["round"] - 1
        without = game.observe(viewer, round_history=False)
        assert list(without) == list(observation) and without["round_history"] is None
        assert without == {**observation, "round_history": None}


def check_refused(game: Game, seat: int) -> None:
    """Illegal actions and seats that are not to act are refused, and change nothing."""
    before = game.snapshot()
    legal = game.legal_actions(seat)
    for action in NOT_AN_ACTION:
        with pytest.raises(IllegalAction) as refused:
            game.apply(seat, action)
        assert refused.value.seat == seat
    for other in range(game.players):
        if other not in game.to_act():
            with pytest.raises(IllegalAction) as refused:
                game.apply(other, legal[0] if legal else None)
            assert refused.value.kind is None
    assert game.snapshot() == before


def strings(value: Any) -> set[str]:
    """Every string in a JSON value, keys excluded."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*map(strings, value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*map(strings, value)) if value else set()
    return set()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), play_seed=st.integers(0, 2**32 - 1))
def test_the_seat_taking_a_trick_so_far_is_its_leader_first_and_the_winner_or_the_last_to_play(
        config: GameConfig, play_seed: int) -> None:
    """``winning_seat()``: the leader after the first card; a trick's winner is the seat
    taking it before its last card, or the seat that played that card; None between tricks."""
    game = new_game(config)
    rng = random.Random(play_seed)
    played: list[int] = []          # seats of the trick in progress, in play order
    before_last: int | None = None
    seen = 0
    while not game.is_over:
        seat = game.to_act()[0]
        kind = game.decision(seat).kind
        if kind == PLAY:
            before_last = game.winning_seat()
        game.apply(seat, game.random_action(seat, rng))
        if kind == PLAY:
            played.append(seat)
        events, seen = game.events_for(None, seen)
        ended = [e for e in events if e["type"] == "trick"]
        if ended:
            assert ended[0]["winner"] in (before_last, played[-1]) and game.winning_seat() is None
            played = []
        elif kind == PLAY:
            assert game.winning_seat() is not None
            if len(played) == 1:
                assert game.winning_seat() == played[0]


def test_engine_tests_import_nothing_from_arena() -> None:
    """The engine's tests run with the engine alone (docs/architecture.md)."""
    for path in Path(__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n == "arena" or n.startswith("arena.")], f"{path.name} imports {names}"
