"""Play sample bots against each other in-process, straight on the engine (no network).

Fast enough for tests and for tuning: a 4-player classic game of 15 rounds takes a few
tens of milliseconds. Seats rotate from game to game so no bot keeps a lucky seat::

    python -m sample_bots.evaluate --variant classic --games 200 heuristic random random random
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.sdk import Bot, MatchInfo, ask
from engine import GameConfig, new_game, variant


@dataclass
class Standing:
    """One bot's results over a series of games."""

    name: str
    games: int = 0
    total: int = 0          # sum of scores (classic points, extreme penalties)
    place_sum: int = 0
    wins: int = 0           # first places, shared ones included
    decide_seconds: float = 0.0
    decisions: int = 0

    @property
    def average_score(self) -> float:
        return self.total / max(1, self.games)

    @property
    def average_place(self) -> float:
        return self.place_sum / max(1, self.games)

    @property
    def ms_per_decision(self) -> float:
        return 1000 * self.decide_seconds / max(1, self.decisions)


@dataclass
class Series:
    """The outcome of :func:`play_series`, by bot position in the line-up."""

    variant: str
    standings: list[Standing] = field(default_factory=list)

    def table(self) -> str:
        better = "higher" if variant(self.variant).higher_is_better else "lower"
        lines = [f"{'bot':<14}{'games':>6}{'avg score':>11}{'avg place':>11}{'firsts':>8}{'ms/dec':>8}"
                 f"   ({self.variant}: {better} score is better)"]
        for s in self.standings:
            lines.append(f"{s.name:<14}{s.games:>6}{s.average_score:>11.1f}{s.average_place:>11.2f}"
                         f"{s.wins:>8}{s.ms_per_decision:>8.2f}")
        return "\n".join(lines)


def seat_bots(bots: Sequence[Bot], config: GameConfig, bot_seeds: Sequence[int], match_id: str = "") -> None:
    """Ready ``bots`` (by seat) for a game of ``config`` played in-process: each its random
    generator from its seed and the match's description, as the SDK gives them in the arena."""
    for seat, bot in enumerate(bots):
        bot.rng = random.Random(bot_seeds[seat])
        bot.match = MatchInfo(match_id=match_id or f"local-{config.seed}", variant=config.variant, seat=seat,
                              players=config.players, bot_names=tuple(b.name for b in bots),
                              options=config.to_dict(), seed=bot_seeds[seat], move_time_ms=0, time_bank_ms=0)


def play_game(bots: Sequence[Bot], config: GameConfig,
              bot_seeds: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], list[float], list[int]]:
    """One game; returns totals, places (by seat), decision seconds and counts (by seat)."""
    game = new_game(config)
    seconds = [0.0] * len(bots)
    counts = [0] * len(bots)
    seat_bots(bots, config, bot_seeds)
    while not game.is_over:
        for seat in game.to_act():
            decision = game.decision(seat)
            options = None if decision.options is None else list(decision.options)
            bot = bots[seat]
            started = time.perf_counter()
            action = ask(bot, decision.kind, game.observe(seat), options)
            seconds[seat] += time.perf_counter() - started
            counts[seat] += 1
            game.apply(seat, action)
    result = game.result()
    return result.totals, result.places, seconds, counts


def play_series(factories: Sequence[Callable[[], Bot]], variant: str, games: int, *, seed: int = 1,
                rounds: int | None = None) -> Series:
    """``games`` games between fresh bots from ``factories`` (one per seat), rotating seats."""
    players = len(factories)
    series = Series(variant, [Standing(f().name) for f in factories])
    for g in range(games):
        shift = g % players
        # Position i of the line-up sits in seat (i + shift) % players.
        order = [(i - shift) % players for i in range(players)]  # seat -> line-up position
        bots = [factories[pos]() for pos in order]
        config = GameConfig(variant=variant, players=players, seed=seed * 100_003 + g, rounds=rounds)
        totals, places, seconds, counts = play_game(bots, config, [seed * 7919 + g * 31 + s for s in range(players)])
        for seat, pos in enumerate(order):
            st = series.standings[pos]
            st.games += 1
            st.total += totals[seat]
            st.place_sum += places[seat]
            st.wins += places[seat] == 1
            st.decide_seconds += seconds[seat]
            st.decisions += counts[seat]
    return series


def bot_factory(name: str) -> Callable[[], Bot]:
    """A sample bot class by its module name (``random``, ``heuristic``, ...)."""
    import importlib

    module = importlib.import_module(f"sample_bots.{name}_bot")
    classes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, Bot) and v is not Bot and v.__module__ == module.__name__]
    return classes[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Play sample bots against each other in-process.")
    parser.add_argument("bots", nargs="+", help="bot module names, one per seat (e.g. heuristic random random random)")
    parser.add_argument("--variant", default="classic", choices=("classic", "extreme"))
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    series = play_series([bot_factory(b) for b in args.bots], args.variant, args.games,
                         seed=args.seed, rounds=args.rounds)
    print(series.table())
    print(f"{args.games} games in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
