"""How much of the rivals' true hands the search bot's sampled worlds hold, with and
without policy-based inference: a direct measure of inference, apart from the games.

Search bots play full games on the engine (uniform worlds, a few a decision, so
the games are quick). At each decision of the observing seat (seat 0) after a rival has
decided something this round, worlds are drawn twice from the same observation: uniformly
(``--inference none``) and by inference (``policy``: uniform worlds weighed by the rivals'
bids and cards, :func:`sample_bots.search_bot.inferred_sampler`). For each rival the figure
is the share of its true hidden hand that a sampled world gives it, averaged over the
worlds (by weight under inference, as the search averages them);
the table averages it over rivals and decisions, by trick of the round and by round::

    arena bench worlds --games 20 --seed 1
    arena bench worlds --variant extreme --games 20 --seed 1
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.sdk import ask
from engine import Game, GameConfig, new_game
from engine import variant as variant_of
from sample_bots.evaluate import seat_bots
from sample_bots.learned.inference import Evidence
from sample_bots.learned.policy import RIVALS, Policy
from sample_bots.search_bot import bot_class, deal_sampler, inferred_sampler

GAME_WORLDS = 16         # worlds a decision for the bots playing the games
TRICK_BANDS = ((0, 0), (1, 1), (2, 2), (3, 3), (4, 5), (6, 8), (9, 20))   # 0: bidding
ROUND_BANDS = ((1, 5), (6, 10), (11, 15), (16, 20))


@dataclass
class Cell:
    """The figures of one row: per rival and decision, the share found uniformly and by inference."""

    uniform: list[float] = field(default_factory=list)
    inferred: list[float] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.uniform)

    def mean(self, values: list[float]) -> float:
        return sum(values) / len(values) if values else float("nan")

    @property
    def gain(self) -> float:
        return self.mean(self.inferred) - self.mean(self.uniform)

    @property
    def gain_interval(self) -> float:
        """About 95 % of the paired differences' mean (1.96 standard errors)."""
        diffs = [b - a for a, b in zip(self.uniform, self.inferred)]
        if len(diffs) < 2:
            return float("nan")
        m = sum(diffs) / len(diffs)
        var = sum((d - m) ** 2 for d in diffs) / (len(diffs) - 1)
        return 1.96 * math.sqrt(var / len(diffs))


@dataclass
class WorldsFigures:
    """The table of :func:`bench_worlds`."""

    variant: str
    games: int
    worlds: int
    by_trick: dict[tuple[int, int], Cell] = field(default_factory=lambda: defaultdict(Cell))
    by_round: dict[tuple[int, int], Cell] = field(default_factory=lambda: defaultdict(Cell))

    def table(self) -> str:
        lines = [f"{self.variant}, 4 players, {self.games} games, {self.worlds} worlds a decision: "
                 "the share of a rival's true hand in a sampled world's hand for it"]
        first = "bidding" if self.variant == "classic" else "predicting"
        for title, rows, bands in (("trick of the round", self.by_trick, TRICK_BANDS),
                                   ("round", self.by_round, ROUND_BANDS)):
            lines.append(f"{title:<20}{'rivals':>8}{'uniform':>10}{'inference':>11}{'gain':>16}")
            for band in bands:
                cell = rows.get(band)
                if cell is None or not cell.count:
                    continue
                low, high = band
                name = first if high == 0 else str(low) if low == high else f"{low}-{high}"
                lines.append(f"{name:<20}{cell.count:>8}{100 * cell.mean(cell.uniform):>9.1f}%"
                             f"{100 * cell.mean(cell.inferred):>10.1f}%"
                             f"{100 * cell.gain:>+9.1f} ± {100 * cell.gain_interval:.1f}")
        return "\n".join(lines)


def _band(value: int, bands: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    return next(b for b in bands if b[0] <= value <= b[1])


def _found(world_hand: int, true_hand: int) -> float:
    return (world_hand & true_hand).bit_count() / true_hand.bit_count()


def bench_worlds(variant: str = "classic", games: int = 20, seed: int = 1, worlds: int = 100,
                 players: int = 4) -> WorldsFigures:
    """Play ``games`` games and measure each of seat 0's decisions (see the module docstring)."""
    figures = WorldsFigures(variant, games, worlds)
    policy = Policy.load(variant, RIVALS)
    bot_type = bot_class(1e9, max_worlds=GAME_WORLDS, inference="none")
    for g in range(games):
        config = GameConfig(variant=variant, players=players, seed=seed * 100_003 + g)
        game = new_game(config)
        bots = [bot_type() for _ in range(players)]
        seat_bots(bots, config, [seed * 7919 + g * 31 + s for s in range(players)], f"worlds-{g}")
        rng = random.Random(seed * 31 + g)
        views: dict[int, Mapping[str, Any]] = {}     # Wizard Extreme: seat 0's view of each trick
        while not game.is_over:
            for seat in game.to_act():
                obs = game.observe(seat)
                if seat == 0:
                    if obs["phase"] in ("bid", "predict"):
                        views = {}
                    elif obs["phase"] == "play":
                        views[len(obs["played"]) // players] = obs
                    _measure(figures, game, obs, policy, rng, worlds, views)
                decision = game.decision(seat)
                options = None if decision.options is None else list(decision.options)
                game.apply(seat, ask(bots[seat], decision.kind, obs, options))
    return figures


def _measure(figures: WorldsFigures, game: Game, obs: Mapping[str, Any], policy: Policy, rng: random.Random,
             worlds: int, views: dict[int, Mapping[str, Any]]) -> None:
    evidence = Evidence(obs, policy, views)
    if not evidence.decisions:
        return
    index = {code: i for i, code in enumerate(variant_of(obs["variant"]).cards)}
    truth = [sum(1 << index[c] for c in game.observe(s)["hand"]) for s in range(obs["players"])]
    uniform = deal_sampler(obs, rng)
    inferred = inferred_sampler(deal_sampler(obs, rng), evidence)
    drawn_uniform = [uniform().hands for _ in range(worlds)]
    weighed = [inferred() for _ in range(worlds)]
    mass = sum(w.weight for w in weighed)
    trick = 0 if obs["phase"] in ("bid", "predict") else len(obs["played"]) // obs["players"] + 1
    for rival in range(1, obs["players"]):
        if not truth[rival]:
            continue
        a = sum(_found(h[rival], truth[rival]) for h in drawn_uniform) / worlds
        b = sum(w.weight * _found(w.hands[rival], truth[rival]) for w in weighed) / mass
        for cell in (figures.by_trick[_band(trick, TRICK_BANDS)], figures.by_round[_band(obs["round"], ROUND_BANDS)]):
            cell.uniform.append(a)
            cell.inferred.append(b)
