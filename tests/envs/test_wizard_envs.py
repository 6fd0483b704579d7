"""arena.envs: both games pass PettingZoo's own checks (api_test, seed_test) at several
table sizes and options; rewards add up to each game's totals; options are the
engine's; render prints a table.

Short games (one to three rounds) so the checks reach the end of a game and stay fast.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pettingzoo", reason="the train extra is not installed: pip install -e '.[train]'")

import numpy as np
from pettingzoo.test import api_test, seed_test

from arena.envs import wizard_extreme_v0, wizard_v0
from engine import ConfigError, IllegalAction, Prediction

CLASSIC = [
    {"players": 3, "rounds": 3},
    {"players": 6, "rounds": 2},
    {"players": 4, "rounds": 2, "bidding": "hidden"},
    {"players": 5, "rounds": 2, "bidding": "secret"},
    {"players": 4, "rounds": 3, "plus_minus_one": True},
]
EXTREME = [
    {"players": 3, "rounds": 1},
    {"players": 5, "rounds": 1, "destroyer_penalty": 7},
]
GAMES = [(wizard_v0, options) for options in CLASSIC] + [(wizard_extreme_v0, options) for options in EXTREME]
IDS = [f"{module.__name__.rsplit('.', 1)[1]}-{'-'.join(f'{k}={v}' for k, v in options.items())}"
       for module, options in GAMES]


@pytest.mark.parametrize(("module", "options"), GAMES, ids=IDS)
def test_api_test(module: Any, options: dict[str, Any]) -> None:
    api_test(module.env(**options), num_cycles=60)


@pytest.mark.parametrize(("module", "options"), GAMES, ids=IDS)
def test_seed_test(module: Any, options: dict[str, Any]) -> None:
    seed_test(lambda: module.env(**options), num_cycles=60)


def play(env: Any, rng: random.Random) -> dict[str, float]:
    """One game of random legal actions; each agent's rewards summed."""
    returns: dict[str, float] = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        returns[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return returns


@pytest.mark.parametrize(("module", "options", "sign"), [
    (wizard_v0, {"players": 4, "rounds": 4, "bidding": "secret"}, 1),
    (wizard_extreme_v0, {"players": 4, "rounds": 2}, -1),
], ids=["classic-secret", "extreme"])
def test_rewards_add_up_to_the_final_totals(module: Any, options: dict[str, Any], sign: int) -> None:
    env = module.env(**options)
    env.reset(seed=5)
    returns = play(env, random.Random(1))
    raw = env.unwrapped
    result = raw.game.result()
    totals = {agent: result.totals[seat] for seat, agent in enumerate(raw.possible_agents)}
    assert returns == {agent: sign * total for agent, total in totals.items()}
    assert env.agents == []


def test_infos_at_the_end_hold_each_total_and_place() -> None:
    env = wizard_v0.env(players=3, rounds=1)
    env.reset(seed=3)
    infos: dict[str, dict[str, Any]] = {}
    for agent in env.agent_iter():
        obs, _, terminated, _, info = env.last()
        if terminated:
            infos[agent] = info
            env.step(None)
        else:
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    result = env.unwrapped.game.result()
    assert infos == {f"player_{s}": {"total": result.totals[s], "place": result.places[s]} for s in range(3)}


def test_env_without_options_is_the_default_four_player_game() -> None:
    for module, variant, rounds in ((wizard_v0, "classic", 15), (wizard_extreme_v0, "extreme", 4)):
        env = module.env()
        env.reset(seed=0)
        assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
        assert env.unwrapped.game.config.variant == variant
        assert env.unwrapped.game.observe(0)["rounds"] == rounds


def test_reset_seed_is_the_deal_seed() -> None:
    env = wizard_v0.raw_env(players=4, rounds=2)
    env.reset(seed=12345)
    assert env.game.config.seed == 12345
    first = env.game.snapshot()
    env.reset()
    assert env.game.snapshot() != first
    env.reset(seed=12345)
    assert env.game.snapshot() == first


def test_options_are_the_engines_and_checked_by_it() -> None:
    with pytest.raises(ConfigError, match="for 3 to 6 players"):
        wizard_v0.env(players=7)
    with pytest.raises(ConfigError, match="destroyer"):
        wizard_v0.env(destroyer_penalty=3)
    with pytest.raises(ConfigError, match="bidding options are classic options"):
        wizard_extreme_v0.env(bidding="hidden")
    with pytest.raises(TypeError, match="reset"):
        wizard_v0.env(seed=3)
    env = wizard_v0.raw_env(players=5, length="amigo", bidding="open", plus_minus_one=True)
    assert env.game.config.length == "amigo" and env.game.config.plus_minus_one


def test_the_raw_env_refuses_an_illegal_action_and_the_wrapped_one_ends_the_game() -> None:
    raw = wizard_v0.raw_env(players=3, rounds=2)
    raw.reset(seed=1)
    agent = raw.agent_selection
    illegal = int(np.flatnonzero(raw.observe(agent)["action_mask"] == 0)[0])
    with pytest.raises(IllegalAction):
        raw.step(illegal)
    assert raw.agent_selection == agent and raw.game.actions == []

    env = wizard_v0.env(players=3, rounds=2)
    env.reset(seed=1)
    agent = env.agent_selection
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards[agent] == env.unwrapped.illegal_reward == -2 * (20 + 10 * 20)   # 2 rounds, hands up to 20


@pytest.mark.parametrize("bidding", ["hidden", "secret"])
def test_hidden_bids_do_not_leak_in_turn_order(bidding: str) -> None:
    """Each bidder's vector at its turn equals its vector before anyone bid this round:
    the bids made before its turn in the AEC order change nothing it sees."""
    env = wizard_v0.raw_env(players=5, rounds=4, bidding=bidding)
    env.reset(seed=8)
    rng = random.Random(2)
    before: dict[str, np.ndarray] = {}
    checked = 0
    while not all(env.terminations.values()):
        agent = env.agent_selection
        obs = env.observe(agent)
        if env.game.decision(env.possible_agents.index(agent)).kind == "bid":
            if len(env.game.to_act()) == env.game.players:           # nobody has bid yet this round
                before = {a: env.observe(a)["observation"] for a in env.possible_agents}
            assert np.array_equal(obs["observation"], before[agent])
            checked += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked == 5 * 4


def test_extreme_predictions_take_several_steps_of_one_agent() -> None:
    env = wizard_extreme_v0.raw_env(players=3, rounds=1)
    env.reset(seed=2)
    agent = env.agent_selection
    slices = {"supply": range(75, 80), "done": 100}
    env.step(slices["supply"][0])                       # a red token from the supply
    assert env.agent_selection == agent and env.game.actions == []
    env.step(slices["supply"][3])                       # then a blue one
    env.step(slices["done"])
    assert env.game.actions == [(1, Prediction(tokens={"red": 1, "blue": 1}))]
    assert env.agent_selection != agent


def test_render_ansi_prints_the_table() -> None:
    env = wizard_extreme_v0.env(players=3, rounds=1, render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    assert text.startswith("extreme, round 1 of 1, dealer seat 0")
    assert text.count("\n  seat ") == 3
    with pytest.raises(ValueError, match="render_mode"):
        wizard_v0.env(render_mode="human")


def test_import_arena_loads_no_training_library() -> None:
    import subprocess
    import sys
    code = ("import sys, arena, arena.wire.encoding, engine; "
            "print(sorted(m for m in ('pettingzoo', 'gymnasium', 'numpy', 'arena.envs') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
