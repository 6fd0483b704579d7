"""arena.envs.openspiel: both games pass OpenSpiel's random_sim_test at several table
sizes and options; their tensors are the shared encoding of the seat's observation,
equal to the PettingZoo environment's on the same deal; OpenSpiel's IS-MCTS plays
legal full games on them; ``import arena.envs`` does not load pyspiel; the example of
docs/training.md runs as written, from an empty folder.

Short games (one or two rounds) so that each check reaches the end of a game and the
module stays fast.
"""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pyspiel", reason="the openspiel extra is not installed: pip install -e '.[openspiel]'")

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import arena.envs.openspiel  # noqa: F401 - registers the games
from arena.envs import wizard_extreme_v0, wizard_v0
from arena.envs.openspiel import SEED_MOVES
from arena.wire.encoding import NO_PENDING, encode
from engine import ConfigError

DOC = Path(__file__).resolve().parents[2] / "docs" / "training.md"

GAMES = [     # a game, and how many random games random_sim_test plays (the long ones once)
    ("python_wizard(players=3,rounds=2)", 2),
    ("python_wizard(players=4,rounds=2,bidding=hidden)", 2),
    ("python_wizard(players=5,rounds=1,bidding=secret)", 2),
    ("python_wizard(players=6,rounds=2,plus_minus_one=True)", 2),
    ("python_wizard(players=3,length=amigo)", 1),
    ("python_wizard_extreme(players=3,rounds=1)", 2),
    ("python_wizard_extreme(players=4,rounds=2)", 1),
    ("python_wizard_extreme(players=5,rounds=1,destroyer_penalty=7)", 2),
]


@pytest.mark.parametrize(("name", "sims"), GAMES)
def test_random_sim_test(name: str, sims: int) -> None:
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=sims, serialize=False, verbose=False)


def test_random_sim_test_serialises_through_the_history() -> None:
    """The deal is the seed's chance moves, so a history replays to the same state."""
    pyspiel.random_sim_test(pyspiel.load_game("python_wizard(players=3,rounds=1)"), num_sims=2,
                            serialize=True, verbose=False)


def test_parameters_are_the_env_options() -> None:
    game = pyspiel.load_game("python_wizard_extreme", {"players": 5, "destroyer_penalty": 7})
    assert game.num_players() == 5
    assert game.config.destroyer_penalty == 7 and game.config.rounds is None
    assert game.num_distinct_actions() == wizard_extreme_v0.env(players=5).action_space("player_0").n
    classic = pyspiel.load_game("python_wizard")
    assert classic.num_players() == 4 and classic.config.bidding == "open"
    with pytest.raises(ConfigError, match="3 to 6 players"):
        pyspiel.load_game("python_wizard(players=7)")


def _play_both(name: str, env_module: Any, options: dict[str, Any], seed: int) -> int:
    """One game through OpenSpiel and the PettingZoo environment on the same deal: at
    every decision each player's tensors equal the encoding of its observation and the
    environment's vector, and the legal actions equal the environment's mask. Returns
    the decisions checked."""
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    deal = seed.to_bytes(SEED_MOVES, "big")
    for byte in deal:
        state.apply_action(byte)
    env = env_module.raw_env(**options)
    env.reset(seed=seed)
    rng = random.Random(seed)
    players = game.num_players()
    decisions = 0
    while not state.is_terminal():
        player = state.current_player()
        assert env.agent_selection == f"player_{player}"
        engine_game = state.engine_game
        for seat in range(players):
            pending = state.pending if seat == player else NO_PENDING
            expected = np.array(encode(engine_game.observe(seat), pending), np.float32)
            np.testing.assert_array_equal(state.information_state_tensor(seat), expected)
            np.testing.assert_array_equal(state.observation_tensor(seat), expected)
            np.testing.assert_array_equal(env.observe(f"player_{seat}")["observation"], expected)
        legal = state.legal_actions()
        assert legal == list(np.flatnonzero(env.observe(f"player_{player}")["action_mask"]))
        action = rng.choice(legal)
        state.apply_action(action)
        env.step(action)
        decisions += 1
    assert state.returns() == [float(env.infos[agent]["total"]) * (1 if name.startswith("python_wizard(") else -1)
                               for agent in env.possible_agents]
    return decisions


@pytest.mark.parametrize(("name", "env_module", "options"), [
    ("python_wizard(players=4,rounds=2,bidding=hidden)", wizard_v0, {"players": 4, "rounds": 2, "bidding": "hidden"}),
    ("python_wizard(players=3,rounds=3,plus_minus_one=True)", wizard_v0,
     {"players": 3, "rounds": 3, "plus_minus_one": True}),
    ("python_wizard_extreme(players=4,rounds=1)", wizard_extreme_v0, {"players": 4, "rounds": 1}),
])
def test_tensors_are_the_encoding_and_the_env_vector(name: str, env_module: Any, options: dict[str, Any]) -> None:
    assert _play_both(name, env_module, options, seed=20261207) > 10


def test_rewards_add_up_to_the_returns() -> None:
    game = pyspiel.load_game("python_wizard(players=3,rounds=3)")
    state = game.new_initial_state()
    rng = random.Random(4)
    summed = [0.0] * 3
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        summed = [s + r for s, r in zip(summed, state.rewards())]
    assert summed == state.returns()
    assert state.returns() == [float(t) for t in state.engine_game.result().totals]


def test_hidden_bids_stay_out_of_the_others_information_state() -> None:
    """With secret bidding the second bidder's information state is the same whatever the
    first bidder bid (round 1: 0 or 1; a classic bid's action index is the bid)."""
    game = pyspiel.load_game("python_wizard(players=3,rounds=2,bidding=secret)")
    seen = set()
    for first_bid in (0, 1):
        state = game.new_initial_state()
        for byte in range(SEED_MOVES):
            state.apply_action(byte)
        if state.engine_game.decision(state.current_player()).kind == "trump":
            state.apply_action(state.legal_actions()[0])
        assert first_bid in state.legal_actions()
        state.apply_action(first_bid)
        second = state.current_player()
        seen.add((state.information_state_string(second), tuple(state.information_state_tensor(second))))
    assert len(seen) == 1


@pytest.mark.parametrize("name", ["python_wizard(players=3,rounds=3,bidding=hidden)",
                                  "python_wizard_extreme(players=3,rounds=1)"])
def test_ismcts_plays_legal_full_games(name: str) -> None:
    """OpenSpiel's IS-MCTS, with random rollouts and the games' own world resampler,
    plays every seat of a full game; each of its moves is legal."""
    game = pyspiel.load_game(name)
    rng = random.Random(7)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=8, random_state=np.random.RandomState(1))
    bot.set_resampler(lambda state, player: state.resample_world(player, rng))
    state = game.new_initial_state()
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
            continue
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        moves += 1
    assert moves > 20
    assert state.returns() == [float(t) * (1 if "extreme" not in name else -1)
                               for t in state.engine_game.result().totals]


def test_import_arena_envs_does_not_load_pyspiel() -> None:
    code = "import sys, arena, arena.envs; assert 'pyspiel' not in sys.modules, 'pyspiel loaded'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_openspiel_example_of_training_md_plays_a_game(tmp_path: Path) -> None:
    block = DOC.read_text().split("## OpenSpiel", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    run = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    returns = ast.literal_eval(run.stdout.strip())     # it prints the final scores
    assert len(returns) == 4 and all(r % 10 == 0 for r in returns)
