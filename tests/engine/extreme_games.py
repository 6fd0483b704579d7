"""Wizard Extreme games built from a fixed deal, and the steps the rule tests take on them.

Hands are written as colour ranges, e.g. ``"r1-9 y1-6"`` (:func:`cards`), and games are
built with :meth:`ExtremeGame.from_deal`. The three-player deal :data:`DEAL_A` is used a lot:

    seat 0: all reds (1-9) and yellow 1-6
    seat 1: yellow 7-9, all greens, blue 1-3
    seat 2: blue 4-9, all purples

With seat 2 dealing, seat 0 predicts and leads first. :func:`game4` is a four-player game
with a plain deal. The tests of the deal and predictions (``test_extreme_deal_and_predictions.py``)
and of the tricks and scoring (``test_extreme_tricks_and_scoring.py``) both use them.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine.core import GameConfig, IllegalAction, Prediction
from engine.extreme import ExtremeGame
from engine.extreme_cards import CODES, deck_for


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
