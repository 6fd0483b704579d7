"""arena.sdk.PolicyBot: a policy (observation vector, action mask) -> action index played
as a bot. Whole engine games through its decision methods (every kind of decision,
classic and Wizard Extreme), then the bot on a real referee on 127.0.0.1 in real
matches against honest bot processes (no faults), one policy object that also plays the
PettingZoo environment, and a policy that answers illegal indices (bot_error faults,
legal fallbacks, the match finished).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from arena.sdk import BotClient, PolicyBot, ask
from arena.wire.encoding import observation_layout
from engine import PREDICT, GameConfig, new_game


class RandomLegal:
    """A seeded policy: a uniformly random legal index. It counts its calls and checks
    that every vector has the layout's length."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.calls = 0
        self.sizes: set[int] = set()

    def __call__(self, vector: Sequence[float], mask: Sequence[int]) -> int:
        self.calls += 1
        self.sizes.add(len(vector))
        return self.rng.choice([i for i, legal in enumerate(mask) if legal])


def illegal(vector: Sequence[float], mask: Sequence[int]) -> int:
    """A policy that always answers the first illegal index."""
    return list(mask).index(0)


CONFIGS = [
    {"variant": "classic", "players": 4, "rounds": 6},
    {"variant": "classic", "players": 3, "rounds": 20, "bidding": "hidden"},
    {"variant": "classic", "players": 6, "rounds": 10, "plus_minus_one": True},
    {"variant": "extreme", "players": 3, "rounds": 2},
    {"variant": "extreme", "players": 5, "rounds": 1, "destroyer_penalty": 0},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['variant']}-{c['players']}")
def test_a_policy_bot_plays_whole_engine_games_legally(config: dict[str, Any]) -> None:
    policy = RandomLegal(1)
    bot = PolicyBot(policy)
    kinds: set[str] = set()
    for seed in range(4):
        game = new_game(GameConfig(seed=seed, **config))
        while not game.is_over:
            seat = game.to_act()[0]
            kind = game.decision(seat).kind
            kinds.add(kind)
            options = list(game.legal_actions(seat))
            game.apply(seat, ask(bot, kind, game.observe(seat), None if kind == PREDICT else options))
    assert policy.sizes == {observation_layout(config["variant"], config["players"]).size}
    every = {"bid", "trump", "play"} if config["variant"] == "classic" else {"predict", "play", "pay"}
    assert {"play"} < kinds <= every


@contextmanager
def policy_bot_on(arena: Any, bot: PolicyBot, name: str) -> Iterator[None]:
    """``bot`` connected to the referee as ``name``, from this process (its own event loop
    on a thread), so the test holds the policy object it plays."""
    client = BotClient(bot=bot, arena=arena.address, token=f"tok-{name}", name=name, max_matches=4)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(client.run(),), daemon=True)
    thread.start()
    try:
        arena.call(arena.arena.host.wait_connected([name], 30))
        yield
    finally:
        loop.call_soon_threadsafe(client.stop)
        thread.join(10)
        loop.close()


def test_one_policy_object_plays_the_environment_and_real_matches_without_a_fault(arena_server: Any) -> None:
    envs = pytest.importorskip("arena.envs", reason="the train extra is not installed: pip install -e '.[train]'")
    policy = RandomLegal(7)
    for module, options in ((envs.wizard_v0, {"players": 4, "rounds": 3}),
                            (envs.wizard_extreme_v0, {"players": 3, "rounds": 1})):
        env = module.env(**options)
        env.reset(seed=5)
        places = {}
        for agent in env.agent_iter():
            observation, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                places[agent] = info.get("place")
                env.step(None)
            else:
                env.step(policy(observation["observation"].tolist(), observation["action_mask"].tolist()))
        assert sorted(places) == env.possible_agents
        assert all(place is not None for place in places.values())   # the game's end, not an illegal action's
    in_env = policy.calls

    arena = arena_server(bots=["random"], local_bots={"policy": "tok-policy"})
    with policy_bot_on(arena, PolicyBot(policy), "policy"):
        for config, seats in (({"variant": "classic", "players": 4, "seed": 3, "rounds": 5},
                               ["policy", "random", "policy", "random"]),
                              ({"variant": "extreme", "players": 3, "seed": 4, "rounds": 2},
                               ["random", "policy", "policy"])):
            record = arena.run_match(seats, config=config)
            assert record.status == "completed"
            assert record.faults == []
    assert policy.calls > in_env


def test_an_illegal_index_is_a_bot_error_answered_by_a_legal_fallback(arena_server: Any) -> None:
    arena = arena_server(bots=["random"], local_bots={"wrong": "tok-wrong"})
    with policy_bot_on(arena, PolicyBot(illegal, name="wrong"), "wrong"):
        for config in ({"variant": "classic", "players": 3, "seed": 8, "rounds": 3},
                       {"variant": "extreme", "players": 3, "seed": 9, "rounds": 1}):
            record = arena.run_match(["wrong", "random", "random"], config=config)
            assert record.status == "completed"
            assert record.faults, "every answer of the illegal policy is a fault"
            assert {fault.kind for fault in record.faults} == {"bot_error"}
            assert all(fault.seat == 0 for fault in record.faults)
            assert "the policy chose action" in record.faults[0].message
