"""A worked example: train a small policy for classic Wizard in the PettingZoo
environment with plain NumPy, save it, and enter it in a tournament as a bot.

    python -m arena.envs.example train --seconds 120 --out policy.npz
    arena tournament --bot learned="python -m arena.envs.example bot --policy $PWD/policy.npz" --rounds 15

The policy is linear, for one table size (4 players, the arena's default): one score
per action, ``weights @ vector + bias``, over the observation vector of
:mod:`arena.wire.encoding`, and a softmax over the legal actions (the mask). Training
is REINFORCE with a baseline: the learner sits at one seat of each game (a different
seat each game), the other seats play uniformly random legal actions, and every
decision of a round is credited with that round's score (the environment's reward at
the round's end) less the average score of the rounds of that number so far, scaled
by the scores' spread. One Adam step a game.

In the arena the policy plays greedily (the legal action of the highest score) through
:class:`arena.sdk.PolicyBot`, which encodes the referee's observation exactly as the
environment did during training. The bot process needs NumPy: the ``train`` extra.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arena.envs import wizard_v0
from arena.wire.encoding import action_layout, observation_layout
from engine import variant

VARIANT = "classic"
PLAYERS = 4
LEARNING_RATE = 0.01
BETAS = (0.9, 0.999)


@dataclass
class LinearPolicy:
    """Action scores ``weights @ vector + bias``; called as a policy it answers the legal
    action of the highest score (the form :class:`arena.sdk.PolicyBot` and the environment take)."""

    weights: np.ndarray          # (actions, features)
    bias: np.ndarray             # (actions,)

    @classmethod
    def zeros(cls, players: int = PLAYERS) -> LinearPolicy:
        features = observation_layout(VARIANT, players).size
        actions = action_layout(VARIANT).size
        return cls(np.zeros((actions, features), dtype=np.float64), np.zeros(actions, dtype=np.float64))

    def probabilities(self, vector: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The softmax of the legal actions' scores (0 for the illegal ones)."""
        scores = self.weights @ vector + self.bias
        scores = np.where(mask > 0, scores, -np.inf)
        scores -= scores.max()
        exp = np.exp(scores)
        return exp / exp.sum()

    def __call__(self, vector: Sequence[float], mask: Sequence[int]) -> int:
        if len(vector) != self.weights.shape[1]:    # the vector's length is the table size's
            raise ValueError(f"the policy was trained on vectors of {self.weights.shape[1]} values "
                             f"(a table of another size): this one has {len(vector)}")
        scores = self.weights @ np.asarray(vector, dtype=np.float64) + self.bias
        return int(np.argmax(np.where(np.asarray(mask) > 0, scores, -np.inf)))

    def save(self, path: Path) -> None:
        with open(path, "wb") as out:       # np.savez would add ".npz" to a name without it
            np.savez(out, weights=self.weights, bias=self.bias)

    @classmethod
    def load(cls, path: Path) -> LinearPolicy:
        with np.load(path) as saved:
            return cls(saved["weights"], saved["bias"])


@dataclass
class Trainer:
    """REINFORCE with a per-round baseline and Adam, one update per game."""

    policy: LinearPolicy
    rng: np.random.Generator
    rounds: int
    baseline: np.ndarray = field(init=False)
    spread: float = 50.0
    steps: int = 0
    _moments: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.baseline = np.zeros(self.rounds + 1)
        self._moments = [np.zeros_like(p) for p in (self.policy.weights, self.policy.weights,
                                                     self.policy.bias, self.policy.bias)]

    def play_game(self, env: Any, deal: int, learner: str, opponents: random.Random) -> float:
        """One game with the learner at seat ``learner``; its final total."""
        env.reset(seed=deal)
        vectors: list[np.ndarray] = []
        chosen: list[int] = []
        probabilities: list[np.ndarray] = []
        rounds: list[int] = []
        returns: list[float] = []
        current: list[int] = []            # indices of this round's decisions
        total = 0.0
        round_slice = observation_layout(VARIANT, len(env.possible_agents)).slices["round"]
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            if agent != learner:
                if terminated or truncated:
                    env.step(None)
                else:
                    legal = np.flatnonzero(observation["action_mask"])
                    env.step(int(legal[int(opponents.random() * len(legal))]))
                continue
            vector = observation["observation"].astype(np.float64)
            number = round(float(vector[round_slice][0]) * self.rounds)
            if current and (terminated or truncated or number != rounds[current[0]]):
                returns.extend([reward] * len(current))      # the round just scored
                total += reward
                current = []
            if terminated or truncated:
                env.step(None)
                continue
            p = self.policy.probabilities(vector, observation["action_mask"])
            action = int(self.rng.choice(len(p), p=p))
            current.append(len(vectors))
            vectors.append(vector)
            chosen.append(action)
            probabilities.append(p)
            rounds.append(number)
            env.step(action)
        self._update(np.array(vectors), np.array(chosen), np.array(probabilities), np.array(rounds),
                     np.array(returns))
        return total

    def _update(self, x: np.ndarray, actions: np.ndarray, p: np.ndarray, rounds: np.ndarray,
                returns: np.ndarray) -> None:
        advantage = (returns - self.baseline[rounds]) / self.spread
        for number in np.unique(rounds):       # the baselines follow the scores slowly
            seen = returns[rounds == number][0]
            self.baseline[number] += 0.02 * (seen - self.baseline[number])
        self.spread += 0.01 * (float(np.abs(returns - self.baseline[rounds]).mean()) + 1.0 - self.spread)
        direction = -p
        direction[np.arange(len(actions)), actions] += 1.0           # d log p(a) / d scores
        direction *= advantage[:, None]
        gradients = [direction.T @ x / len(actions), direction.sum(axis=0) / len(actions)]
        self.steps += 1
        b1, b2 = BETAS
        for i, (parameter, gradient) in enumerate(zip((self.policy.weights, self.policy.bias), gradients)):
            m, v = self._moments[2 * i], self._moments[2 * i + 1]
            m *= b1
            m += (1 - b1) * gradient
            v *= b2
            v += (1 - b2) * gradient * gradient
            step = LEARNING_RATE * (m / (1 - b1 ** self.steps)) / (np.sqrt(v / (1 - b2 ** self.steps)) + 1e-8)
            parameter += step                    # ascent: a higher score


def train(seconds: float, players: int = PLAYERS, seed: int = 0, rounds: int | None = None,
          report: bool = False) -> tuple[LinearPolicy, int]:
    """Train for about ``seconds``; the policy and the number of games played."""
    env = wizard_v0.env(players=players, rounds=rounds) if rounds else wizard_v0.env(players=players)
    length = variant(VARIANT).rounds(env.unwrapped.config)
    trainer = Trainer(LinearPolicy.zeros(players), np.random.default_rng(seed), rounds=length)
    opponents = random.Random(seed)
    started = time.perf_counter()
    games = 0
    totals: list[float] = []
    while time.perf_counter() - started < seconds:
        learner = env.possible_agents[games % players]
        totals.append(trainer.play_game(env, seed * 1_000_003 + games, learner, opponents))
        games += 1
        if report and games % 200 == 0:
            print(f"{games} games, {time.perf_counter() - started:.0f} s: the learner's mean total over the "
                  f"last 200 {np.mean(totals[-200:]):.1f}", flush=True)
    return trainer.policy, games


def evaluate(policy: Callable[[Any, Any], int], games: int, players: int = PLAYERS, seed: int = 10**6) -> float:
    """The mean final total of ``policy`` (a callable policy) at one seat against random
    legal opponents, over ``games`` games at rotating seats."""
    env = wizard_v0.env(players=players)
    opponents = random.Random(seed)
    totals = []
    for game in range(games):
        learner = env.possible_agents[game % players]
        env.reset(seed=seed + game)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                if agent == learner:
                    totals.append(info["total"])
                env.step(None)
                continue
            mask = observation["action_mask"]
            if agent == learner:
                env.step(int(policy(observation["observation"], mask)))
            else:
                legal = np.flatnonzero(mask)
                env.step(int(legal[int(opponents.random() * len(legal))]))
    return float(np.mean(totals))


def _random_policy(seed: int) -> Callable[[Any, Any], int]:
    rng = random.Random(seed)
    return lambda vector, mask: rng.choice(np.flatnonzero(mask).tolist())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m arena.envs.example",
                                     description="Train a linear policy for classic Wizard, or play one as a bot.")
    commands = parser.add_subparsers(dest="command", required=True)
    training = commands.add_parser("train", help="train a policy and save it")
    training.add_argument("--seconds", type=float, default=120.0, help="training time (default 120)")
    training.add_argument("--out", type=Path, default=Path("policy.npz"), help="where to save it (policy.npz)")
    training.add_argument("--seed", type=int, default=0)
    training.add_argument("--rounds", type=int, default=None, help="rounds a game (default: the full game)")
    training.add_argument("--evaluate", type=int, default=40, metavar="GAMES",
                          help="games against random seats after training, for the policy and for a random one")
    bot = commands.add_parser("bot", help="play a saved policy in the arena (the SDK's command line follows)")
    bot.add_argument("--policy", type=Path, required=True, help="the saved policy (.npz)")
    args, rest = parser.parse_known_args(argv)
    if args.command == "bot":
        from arena.sdk import PolicyBot, run

        try:
            policy = LinearPolicy.load(args.policy)
        except (OSError, ValueError, KeyError) as error:
            parser.exit(2, f"{parser.prog}: error: cannot read the policy {args.policy}: {error}\n")
        run(PolicyBot(policy, name="learned"), rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.seconds <= 0 or args.evaluate < 0:
        parser.error("--seconds must be positive and --evaluate 0 or more")
    started = time.perf_counter()
    policy, games = train(args.seconds, seed=args.seed, rounds=args.rounds, report=True)
    policy.save(args.out)
    print(f"trained on {games} games in {time.perf_counter() - started:.0f} s; saved {args.out}")
    if args.evaluate:
        print(f"mean final total at one seat against random seats over {args.evaluate} games: "
              f"learned {evaluate(policy, args.evaluate):.1f}, random {evaluate(_random_policy(1), args.evaluate):.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
