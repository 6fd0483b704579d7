"""How fast the training environments are, beside what they stand on: ``arena bench env``.

Three comparisons, each of two things measured in the same run:

* **The AEC environment against the engine.** Random legal actions in
  ``wizard_v0.env()`` (or ``wizard_extreme_v0``) as a training loop drives it
  (``agent_iter``, ``last``, an index drawn from the action mask, ``step``), against
  random legal actions applied straight to the engine (``game.random_action``) on the
  same games (deal seeds ``seed``, ``seed + 1``, ...). The games are played in slices,
  the environment's then the engine's, so a busy moment of the shared machine hits
  both. The figures are the environment's steps per second, the engine's decisions
  per second and their ratio (the issue's target: at least 0.5). A Wizard Extreme
  prediction is one engine decision and several steps (a token at a time, then done).
* **The OpenSpiel game against OpenSpiel's own Oh Hell** (when ``pyspiel`` and
  ``arena.envs.openspiel`` import; else a note says why not): random playouts (chance
  outcomes by their probabilities, actions uniform among the legal ones) of
  ``python_wizard(players=P,rounds=R)`` against ``oh_hell(players=P,num_tricks_fixed=h)``
  for each hand size ``h`` of 1..R in turn, the hands the Wizard game deals, with R the
  largest hand both decks allow at P players. One Wizard playout against one set of R
  Oh Hell playouts; also each one's actions per second.
* **A policy's decisions in the arena against a sample bot's.** A referee in this process
  (``LoopbackReferee``) and two bot processes of this module: a :class:`arena.sdk.PolicyBot`
  playing a random legal policy (it encodes every observation into the vector and mask and
  decodes the index it gets back) and the sample random bot, in the same classic matches
  (seats alternating); each one's think time as the referee stores it (p50, p99) and the ratio.

    >>> figures = env_against_engine(games=2)
    >>> figures["env_steps"] == figures["engine_decisions"], figures["env_over_engine"] > 0
    (True, True)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import random
import subprocess
import sys
import time
from typing import Any

from arena.bench.engine import random_game
from engine import GameConfig
from engine.classic_cards import NUM_CARDS as CLASSIC_CARDS

CHUNKS = 10
ARENA_MATCHES = 6
ARENA_ROUNDS = 6
OPENSPIEL_MODULE = "arena.envs.openspiel"    # the train extra's OpenSpiel games (the openspiel extra)
OH_HELL_DECK = 52        # OpenSpiel's oh_hell: 4 suits of 13 cards, one card turned up for trump


def env_against_engine(variant_name: str = "classic", players: int = 4, games: int = 200, seed: int = 0,
                       chunks: int = CHUNKS) -> dict[str, Any]:
    """The environment's steps/s and the engine's decisions/s on the same ``games`` games
    (see the module's docstring), and ``env_over_engine``, the ratio of the two rates."""
    from arena.envs import wizard_extreme_v0, wizard_v0

    module = wizard_v0 if variant_name == "classic" else wizard_extreme_v0
    env = module.env(players=players)
    rng_env, rng_engine = random.Random(seed), random.Random(seed)
    env_seconds = engine_seconds = 0.0
    steps = decisions = 0
    size = -(-games // chunks)
    for first in range(0, games, size):
        deals = range(seed + first, seed + min(first + size, games))
        started = time.perf_counter()
        for deal in deals:
            steps += _env_game(env, deal, rng_env)
        env_seconds += time.perf_counter() - started
        started = time.perf_counter()
        for deal in deals:
            decisions += random_game(variant_name, players, deal, rng_engine)
        engine_seconds += time.perf_counter() - started
    env_rate, engine_rate = steps / env_seconds, decisions / engine_seconds
    return {"variant": variant_name, "players": players, "games": games,
            "env_steps": steps, "env_steps_per_s": round(env_rate),
            "engine_decisions": decisions, "engine_decisions_per_s": round(engine_rate),
            "env_over_engine": round(env_rate / engine_rate, 3)}


def _env_game(env: Any, deal: int, rng: random.Random) -> int:
    """One game of random legal actions through the AEC interface; the steps taken."""
    import numpy as np

    env.reset(seed=deal)
    steps = 0
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[int(rng.random() * len(legal))]))
        steps += 1
    return steps


# ------------------------------------------------------------------ OpenSpiel


def openspiel_problem() -> str | None:
    """Why the OpenSpiel comparison cannot run here, or None when it can."""
    try:
        importlib.import_module("pyspiel")
    except ImportError:
        return "pyspiel is not installed (pip install 'wizard-arena[openspiel]')"
    try:
        importlib.import_module(OPENSPIEL_MODULE)
    except ImportError as error:
        return f"{OPENSPIEL_MODULE} does not import ({error})"
    return None


def openspiel_against_oh_hell(players: int = 4, playouts: int = 20, seed: int = 0) -> dict[str, Any]:
    """Random playouts per second of ``python_wizard`` and of the matching Oh Hell hands
    (see the module's docstring); ``wizard_over_oh_hell`` is the ratio of the playout rates."""
    pyspiel = importlib.import_module("pyspiel")
    importlib.import_module(OPENSPIEL_MODULE)      # registers python_wizard

    rounds = min(CLASSIC_CARDS // players, (OH_HELL_DECK - 1) // players)
    wizard = pyspiel.load_game(f"python_wizard(players={players},rounds={rounds})")
    hands = [pyspiel.load_game(f"oh_hell(players={players},num_tricks_fixed={h})") for h in range(1, rounds + 1)]
    rng = random.Random(seed)
    wizard_seconds = oh_hell_seconds = 0.0
    wizard_actions = oh_hell_actions = 0
    for _ in range(playouts):
        started = time.perf_counter()
        wizard_actions += _playout(wizard, rng)
        wizard_seconds += time.perf_counter() - started
        started = time.perf_counter()
        for game in hands:
            oh_hell_actions += _playout(game, rng)
        oh_hell_seconds += time.perf_counter() - started
    wizard_rate, oh_hell_rate = playouts / wizard_seconds, playouts / oh_hell_seconds
    return {"players": players, "rounds": rounds, "playouts": playouts,
            "wizard_playouts_per_s": round(wizard_rate, 2),
            "wizard_actions_per_s": round(wizard_actions / wizard_seconds),
            "oh_hell_playouts_per_s": round(oh_hell_rate, 2),
            "oh_hell_actions_per_s": round(oh_hell_actions / oh_hell_seconds),
            "wizard_over_oh_hell": round(wizard_rate / oh_hell_rate, 3)}


def _playout(game: Any, rng: random.Random) -> int:
    """One random playout of an OpenSpiel game; the actions applied (chance outcomes included)."""
    state = game.new_initial_state()
    actions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, weights = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, weights)[0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
        actions += 1
    return actions


# ------------------------------------------------------------------ in the arena


def policy_bot_in_the_arena(matches: int = ARENA_MATCHES, rounds: int = ARENA_ROUNDS) -> dict[str, Any]:
    """The think times (ms, as the referee stores them) of a :class:`~arena.sdk.PolicyBot`
    and of the sample random bot, seated alternately in ``matches`` classic 4-player matches."""
    return asyncio.run(_arena_matches(matches, rounds))


async def _arena_matches(matches: int, rounds: int) -> dict[str, Any]:
    import numpy as np

    from arena.records import MatchSpec
    from arena.referee.loopback import LoopbackReferee

    referee = LoopbackReferee(move_time=30.0, time_bank=0.0)    # nothing times out here
    address = await referee.start()
    server = referee.server
    bots = []
    for name in ("policy", "random"):
        token = referee.admit(name)
        bots.append(await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena.bench.env", "--bot", name, "--arena", address, "--token", token,
            "--max-matches", "2", env={**os.environ, "GRPC_VERBOSITY": "ERROR"}, stderr=subprocess.DEVNULL))
    think: dict[str, list[float]] = {"policy": [], "random": []}
    faults = 0
    try:
        await server.host.wait_connected(["policy", "random"], 60)
        for i in range(matches):
            seats = ["policy", "random", "policy", "random"] if i % 2 == 0 else ["random", "policy", "random", "policy"]
            record = await server.host.run_match(MatchSpec(
                config=GameConfig(variant="classic", players=4, seed=2000 + i, rounds=rounds),
                bots=seats, match_id=f"bench-env-{i}"))
            faults += len(record.faults)
            for (seat, _), ms in zip(record.actions, record.latencies_ms):
                if ms is not None:
                    think[seats[seat]].append(ms)
    finally:
        for bot in bots:
            if bot.returncode is None:
                bot.terminate()
            await bot.wait()
        await referee.stop()
    policy, sample = np.array(think["policy"]), np.array(think["random"])
    return {"matches": matches, "faults": faults,
            "policy_decisions": len(policy), "policy_think_p50_ms": round(float(np.percentile(policy, 50)), 3),
            "policy_think_p99_ms": round(float(np.percentile(policy, 99)), 3),
            "random_decisions": len(sample), "random_think_p50_ms": round(float(np.percentile(sample, 50)), 3),
            "random_think_p99_ms": round(float(np.percentile(sample, 99)), 3),
            "policy_over_random_p50": round(float(np.percentile(policy, 50) / np.percentile(sample, 50)), 3)}


def random_legal_policy(seed: int = 0) -> Any:
    """A policy of a uniformly random legal index (what the bench's policy bot plays)."""
    rng = random.Random(seed)

    def policy(vector: list[float], mask: list[int]) -> int:
        legal = [i for i, allowed in enumerate(mask) if allowed]
        return legal[int(rng.random() * len(legal))]

    return policy


def _bot_main() -> None:
    """``python -m arena.bench.env --bot policy|random ...``: one of the bench's bot processes."""
    from arena.sdk import PolicyBot, run
    from sample_bots.random_bot import RandomBot

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--bot", choices=("policy", "random"), required=True)
    which, rest = parser.parse_known_args()
    if which.bot == "policy":
        run(PolicyBot(random_legal_policy(), name="policy"), rest)
    run(RandomBot, rest)


if __name__ == "__main__":
    _bot_main()
