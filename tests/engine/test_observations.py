"""The typed observations (engine/observations.py) say what observe() returns: every field
of every observation of whole random games, for each seat and a spectator, has the type
its TypedDict declares, and no field is missing or extra (in the order observe() writes
them)."""

from __future__ import annotations

import random
import types
import typing
from typing import Any, Literal

import pytest

from engine import GameConfig, new_game
from engine.observations import ClassicObservation, ExtremeObservation, Observation


def check(value: Any, hint: Any, where: str) -> None:
    """Fail unless ``value`` has the type ``hint`` (the forms the observations use)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(hint):
            try:
                check(value, option, where)
                return
            except AssertionError as error:
                errors.append(str(error))
        raise AssertionError(f"{where}: {value!r} is none of {hint}: {errors}")
    if origin is Literal:
        assert value in typing.get_args(hint), f"{where}: {value!r} not in {hint}"
    elif origin is list:
        assert type(value) is list, f"{where}: {value!r} is no list"
        for i, item in enumerate(value):
            check(item, typing.get_args(hint)[0], f"{where}[{i}]")
    elif origin is dict:
        assert type(value) is dict, f"{where}: {value!r} is no dict"
        key_type, value_type = typing.get_args(hint)
        for key, item in value.items():
            check(key, key_type, f"{where} key")
            check(item, value_type, f"{where}[{key!r}]")
    elif typing.is_typeddict(hint):
        assert type(value) is dict, f"{where}: {value!r} is no dict"
        hints = typing.get_type_hints(hint)
        assert list(value) == list(hints), f"{where}: fields {list(value)}, declared {list(hints)}"
        for key, field_hint in hints.items():
            check(value[key], field_hint, f"{where}.{key}")
    elif hint is type(None):
        assert value is None, f"{where}: {value!r} is not None"
    else:
        assert type(value) is hint, f"{where}: {value!r} is no {hint.__name__}"


def observations(config: GameConfig, seed: int) -> typing.Iterator[Observation]:
    """Every seat's and a spectator's observation at every decision of one random game, and
    at its end."""
    game = new_game(config)
    rng = random.Random(seed)
    while True:
        for seat in [None, *range(config.players)]:
            yield game.observe(seat)
        if game.is_over:
            return
        seat = game.to_act()[0]
        game.apply(seat, game.random_action(seat, rng))


@pytest.mark.parametrize("config,declared", [
    (GameConfig(variant="classic", players=3, seed=1, rounds=4), ClassicObservation),
    (GameConfig(variant="classic", players=5, seed=2, rounds=3, bidding="secret"), ClassicObservation),
    (GameConfig(variant="classic", players=4, seed=7, rounds=3, plus_minus_one=True), ClassicObservation),
    (GameConfig(variant="classic", players=6, seed=3, bidding="hidden"), ClassicObservation),
    (GameConfig(variant="extreme", players=3, seed=4, rounds=2), ExtremeObservation),
    (GameConfig(variant="extreme", players=5, seed=5, rounds=1, destroyer_penalty=7), ExtremeObservation),
])
def test_every_observation_has_its_declared_fields_and_types(config: GameConfig, declared: Any) -> None:
    seen = set()
    for obs in observations(config, config.seed):
        check(obs, declared, obs["variant"])
        seen.add(obs["phase"])
    assert "over" in seen and "play" in seen


def test_an_observation_without_round_history_leaves_that_field_none() -> None:
    game = new_game(GameConfig(variant="extreme", players=4, seed=6, rounds=1))
    obs = game.observe(0, round_history=False)
    check(obs, ExtremeObservation, "extreme")
    assert obs["round_history"] is None
