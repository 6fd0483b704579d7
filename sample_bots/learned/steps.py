"""A Wizard Extreme prediction as the steps of :mod:`arena.wire.encoding`'s action space:
the tokens one at a time in the encoding's fixed order, then ``done`` (or the destroyer,
alone). The training data keeps a prediction this way, and inference scores a rival's
prediction step by step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.wire.encoding import NO_PENDING, Pending, action_layout
from engine import Prediction
from engine.extreme_cards import COLOURS


def prediction_steps(obs: Mapping[str, Any], prediction: Prediction) -> list[tuple[Pending, int]]:
    """``(steps so far, action index)`` for each step of ``prediction`` by the seat of ``obs``.

    Tokens come from the supply first; the rest from the seats ``take_from`` names, or
    else from the holders clockwise from the predictor's left (the engine's default).

    >>> from engine import GameConfig, new_game
    >>> obs = new_game(GameConfig(variant="extreme", players=3, seed=1)).observe(1)
    >>> prediction_steps(obs, Prediction(tokens={"red": 1, "blue": 2}))
    [((), 75), (((0, 0),), 78), (((0, 0), (3, 0)), 78), (((0, 0), (3, 0), (3, 0)), 100)]
    """
    slices = action_layout("extreme").slices
    if prediction.destroyer:
        return [(NO_PENDING, slices["destroyer"].start)]
    p, seat = obs["players"], obs["seat"]
    held = [[obs["tokens"][(seat + k) % p][c] for c in COLOURS] for k in range(p)]
    named: dict[int, list[int]] = {}
    for colour, owner in prediction.take_from:
        named.setdefault(COLOURS.index(colour), []).append((owner - seat) % p)
    steps: list[tuple[int, int]] = []
    for c, colour in enumerate(COLOURS):
        count = prediction.tokens.get(colour, 0)
        from_supply = min(count, obs["supply"][colour])
        steps += [(c, 0)] * from_supply
        rest = count - from_supply
        sources = sorted(named.get(c, []))
        if len(sources) < rest:
            sources = []
            for k in range(1, p):
                sources += [k] * min(held[k][c], rest - len(sources))
        steps += [(c, k) for k in sources[:rest]]
    steps.sort()
    out: list[tuple[Pending, int]] = []
    for i, (c, source) in enumerate(steps):
        action = slices["supply"].start + c if source == 0 else slices["rival"].start + (source - 1) * 5 + c
        out.append((tuple(steps[:i]), action))
    out.append((tuple(steps), slices["done"].start))
    return out
