"""The environment's vector is the one a bot computes from what the referee sends it.

Two ways: many games of random legal actions in the environment, checking at every
step that the vector and mask equal those encoded from the seat's DecisionRequest as
the referee builds it (``arena.wire.protocol.decision_request``, with the observation
the match loop encodes), serialised, parsed back and read as the SDK reads it; and a
few matches on a real referee with a bot that plays through the encoder, replayed in
the environment step by step.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pettingzoo", reason="the train extra is not installed: pip install -e '.[train]'")

import numpy as np

from arena.envs import wizard_extreme_v0, wizard_v0
from arena.wire import json_codec, protocol
from arena.wire.encoding import Pending, decode, encode, legal_indices
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import Game

CONFIGS = [
    (wizard_v0, {"players": 3, "rounds": 4, "bidding": "hidden"}),
    (wizard_v0, {"players": 4, "rounds": 4, "plus_minus_one": True}),
    (wizard_v0, {"players": 5, "rounds": 3, "bidding": "secret"}),
    (wizard_v0, {"players": 6, "length": "amigo"}),
    (wizard_extreme_v0, {"players": 3, "rounds": 2}),
    (wizard_extreme_v0, {"players": 4, "rounds": 1, "destroyer_penalty": 0}),
    (wizard_extreme_v0, {"players": 5, "rounds": 1}),
]


def referee_observation_json(game: Game, seat: int) -> str:
    """The seat's observation as the referee's match loop encodes it
    (``Match._observation_json``): without its finished rounds, which are encoded once
    a round from the spectator's view and put in their place."""
    observation = game.observe(seat, round_history=False)
    observation["round_history"] = json_codec.fragment(game.observe(None)["round_history"])
    return json_codec.dumps(observation)


def as_a_bot_reads_it(game: Game, seat: int) -> tuple[dict[str, Any], list[Any]]:
    """The seat's DecisionRequest, built, sent as bytes and read back as the SDK reads it."""
    message = protocol.decision_request(match_id="m1", seat=seat, request_id=1, decision=game.decision(seat),
                                        observation=referee_observation_json(game, seat), deadline_ms=1000,
                                        time_bank_ms=10_000)
    request = pb.ArenaMessage.FromString(message.SerializeToString()).request
    kind = protocol.kind_from_wire(request.kind)
    return protocol.observation_from_wire(request), protocol.options_from_wire(kind, request.options)


@pytest.mark.parametrize(("module", "options"), CONFIGS,
                         ids=[f"{m.__name__.rsplit('.', 1)[1]}-{o['players']}" for m, o in CONFIGS])
def test_every_vector_equals_the_one_from_the_referees_request(module: Any, options: dict[str, Any]) -> None:
    env = module.raw_env(**options)
    rng = random.Random(options["players"])
    steps = 0
    for seed in range(10):
        env.reset(seed=seed)
        pending: Pending = ()
        while not all(env.terminations.values()):
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            mine = env.observe(agent)
            obs, wire_options = as_a_bot_reads_it(env.game, seat)
            legal = legal_indices(obs, wire_options, pending)
            assert np.array_equal(mine["observation"], np.array(encode(obs, pending), dtype=np.float32))
            assert np.flatnonzero(mine["action_mask"]).tolist() == legal
            index = rng.choice(legal)
            step = decode(obs, index, pending)
            pending = step if isinstance(step, tuple) else ()
            env.step(index)
            steps += 1
    assert steps > 400


def test_matches_on_a_real_referee_replay_in_the_env_vector_for_vector(arena_server: Any, tmp_path: Path) -> None:
    report = tmp_path / "encoding.jsonl"
    arena = arena_server()
    arena.start_bot("encoding_bot.py", "enc", report=report, max_matches=6)
    for module, options, seed in ((wizard_v0, {"players": 4, "rounds": 4, "bidding": "hidden"}, 11),
                                  (wizard_v0, {"players": 5, "rounds": 3, "bidding": "secret"}, 12),
                                  (wizard_v0, {"players": 3, "rounds": 4, "plus_minus_one": True}, 13),
                                  (wizard_extreme_v0, {"players": 4, "rounds": 2}, 14)):
        config = {"variant": module.raw_env.variant, "seed": seed, **options}
        record = arena.run_match(["enc"] * options["players"], config=config)
        entries = [json.loads(line) for line in report.read_text().splitlines()]
        steps: dict[int, list[dict[str, Any]]] = {}
        for entry in entries:
            if entry["match_id"] == record.match_id:
                steps.setdefault(entry["seat"], []).append(entry)
        env = module.raw_env(**options)
        env.reset(seed=seed)
        played = 0
        while not all(env.terminations.values()):
            agent = env.agent_selection
            entry = steps[env.possible_agents.index(agent)].pop(0)
            mine = env.observe(agent)
            assert np.array_equal(mine["observation"], np.array(entry["vector"], dtype=np.float32))
            assert np.flatnonzero(mine["action_mask"]).tolist() == entry["legal"]
            env.step(entry["index"])
            played += 1
        assert all(not left for left in steps.values())
        assert env.game.actions == record.actions          # the engine's actions, as the referee logged them
        assert played >= len(record.actions) > 20
