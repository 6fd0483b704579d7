"""Training data: the search bot plays itself on the engine, in-process, and every
decision it makes is kept as (its seat's observation, the action it chose).

A sample is what :mod:`arena.wire.encoding` makes of the observation (the sparse vector
of the table's own layout) and the index of the action in the variant's fixed action
space. A Wizard Extreme prediction is kept as the steps the encoding builds it from, one
sample a step, each with the steps before it in the observation.

Deterministic from its seed: the search bot is capped by worlds, not by time, and each
game's seed, table size and bots' random generators come from the seed and the game's
number. A chunk of games is one call, so a run can be split over processes::

    python -m sample_bots.training.train classic --games 400 --seed 1   # data, then training
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from arena.sdk import ask
from arena.wire.encoding import encode_sparse, legal_indices
from engine import PREDICT, GameConfig, Prediction, new_game, variant
from sample_bots.evaluate import seat_bots
from sample_bots.learned.advice import advice
from sample_bots.learned.steps import prediction_steps
from sample_bots.search_bot import bot_class

DATA_WORLDS = 50        # worlds a decision for the recorded search bot


@dataclass(frozen=True)
class Sample:
    """One decision: the observation's non-zero entries (indices into the layout of a
    table of ``players``), the legal actions and the chosen one."""

    players: int
    indices: tuple[int, ...]
    values: tuple[float, ...]
    legal: tuple[int, ...]
    action: int
    advice: int = -1        # the heuristic's action (:mod:`.advice`); -1: none


def table_size(variant_name: str, seed: int, game: int) -> int:
    """The table size of game ``game``: four players half of the time (the arena's
    default), the other sizes of the variant share the rest.

    >>> sorted({table_size("extreme", 1, g) for g in range(40)})
    [3, 4, 5]
    """
    sizes = variant(variant_name).players
    rng = random.Random(seed * 1_000_003 + game)
    if 4 in sizes and rng.random() < 0.5:
        return 4
    return rng.choice(sizes)


def decision_samples(obs: Mapping[str, Any], options: list[Any] | None, answer: Any) -> Iterator[Sample]:
    """The samples of one decision and its answer (several for a prediction)."""
    players = obs["players"]
    hint = advice(obs, options)
    if obs["decision"] == PREDICT:
        steps = prediction_steps(obs, Prediction.from_json(answer))
        samples = []
        for pending, action in steps:
            idx, val = encode_sparse(obs, pending)
            legal = legal_indices(obs, None, pending)
            if action not in legal:      # a prediction the steps cannot make: keep none of it
                return
            samples.append(Sample(players, tuple(idx), tuple(val), tuple(legal), action, hint.get(pending, -1)))
        yield from samples
        return
    idx, val = encode_sparse(obs)
    legal = legal_indices(obs, options)
    (action,) = legal_indices(obs, [answer])
    yield Sample(players, tuple(idx), tuple(val), tuple(legal), action, hint[()])


def self_play(variant_name: str, seed: int, games: range, worlds: int = DATA_WORLDS) -> list[Sample]:
    """The samples of ``games`` (game numbers) of the search bot against itself."""
    bot_type = bot_class(1e9, max_worlds=worlds, inference="none")
    samples: list[Sample] = []
    for g in games:
        players = table_size(variant_name, seed, g)
        config = GameConfig(variant=variant_name, players=players, seed=seed * 100_003 + g)
        game = new_game(config)
        bots = [bot_type() for _ in range(players)]
        seat_bots(bots, config, [seed * 7919 + g * 31 + s for s in range(players)], f"data-{seed}-{g}")
        while not game.is_over:
            for seat in game.to_act():
                decision = game.decision(seat)
                options = None if decision.options is None else list(decision.options)
                obs = game.observe(seat)
                answer = ask(bots[seat], decision.kind, obs, options)
                if options is None or len(options) > 1:
                    samples.extend(decision_samples(obs, options, answer))
                game.apply(seat, answer)
    return samples
