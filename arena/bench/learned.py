"""The learned bot's time a decision, in-process on the engine, beside the heuristic bot's
in the same games (the yardstick: the plainest sample bot, a few integer operations a card).

Every seat plays the learned bot for half of the games and the heuristic bot for the
other half, so both answer the same kinds of decisions::

    arena bench learned --variant classic --games 20
"""

from __future__ import annotations

import statistics
import time

from arena.sdk import Bot, ask
from engine import GameConfig, new_game
from sample_bots.evaluate import seat_bots
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.learned_bot import LearnedBot


def _times(bot_type: type[Bot], variant: str, players: int, games: int, seed: int) -> list[tuple[float, bool]]:
    """Each decision's time, and whether it had a choice (more than one option, or a prediction)."""
    out: list[tuple[float, bool]] = []
    for g in range(games):
        config = GameConfig(variant=variant, players=players, seed=seed + g)
        game = new_game(config)
        bots = [bot_type() for _ in range(players)]
        seat_bots(bots, config, [seed + g * 31 + s for s in range(players)])
        while not game.is_over:
            for seat in game.to_act():
                decision = game.decision(seat)
                options = None if decision.options is None else list(decision.options)
                obs = game.observe(seat)
                started = time.perf_counter()
                action = ask(bots[seat], decision.kind, obs, options)
                out.append((time.perf_counter() - started, options is None or len(options) > 1))
                game.apply(seat, action)
    return out


def bench_learned(variant: str = "classic", players: int = 4, games: int = 20, seed: int = 1) -> dict[str, float]:
    """Median and 99th percentile of the learned bot's decision times (ms), the heuristic's,
    the medians over the decisions with a choice (a single option is answered at once), and
    their ratios."""
    _times(LearnedBot, variant, players, 1, seed)     # load the weights and warm up first
    learned = _times(LearnedBot, variant, players, games, seed)
    heuristic = _times(HeuristicBot, variant, players, games, seed)

    def q(values: list[float], share: float) -> float:
        return 1000 * statistics.quantiles(values, n=100)[int(share * 100) - 1] if share < 1 else 0.0

    figures = {"decisions": float(len(learned)), "with_a_choice": float(sum(choice for _, choice in learned))}
    for name, times in (("learned", learned), ("heuristic", heuristic)):
        every = [t for t, _ in times]
        chosen = [t for t, choice in times if choice]
        figures[f"{name}_p50_ms"] = 1000 * statistics.median(every)
        figures[f"{name}_p99_ms"] = q(every, 0.99)
        figures[f"{name}_choice_p50_ms"] = 1000 * statistics.median(chosen)
    figures["p50_over_heuristic"] = figures["learned_p50_ms"] / figures["heuristic_p50_ms"]
    figures["choice_p50_over_heuristic"] = figures["learned_choice_p50_ms"] / figures["heuristic_choice_p50_ms"]
    return figures
