"""``arena bench deals``: what the independent format costs in games for the same confidence.

The sample bots' strategies (heuristic, cautious, greedy, random) play the very
schedules a tournament of them would play, in-process on the engine
(:func:`sample_bots.evaluate.play_game`), the same number of games in each format:
the same tables, seat rotations and bot seeds, only the deals differ (see
arena.tournament.schedule). For a pair of bots the measure is their mean place difference (and
score difference); its standard error is computed over the tables' sets of
rotations, the unit that is independent in both formats (in the duplicate format
one set is one deal played from every seat). The ratio of the two variances is how
many times more independent games give the same confidence.

Differences are the pair's first bot minus its second: a negative place difference
means the first places better. Scores are classic points (higher is better) or
extreme penalties (lower is better).
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any

from arena.tournament.schedule import DEAL_FORMATS, make_schedule, round_games
from engine import GameConfig
from sample_bots.evaluate import bot_factory, play_game

BOTS = ("heuristic", "cautious", "greedy", "random")
PAIR = ("heuristic", "cautious")   # the two strongest, the closest call


@dataclass
class Played:
    """One format's games: by set of rotations, each bot's places and scores."""

    deals: str
    places: list[list[dict[str, int]]]   # set -> game -> bot -> place
    scores: list[list[dict[str, int]]]   # set -> game -> bot -> total


def play_format(variant: str, games: int, seed: int, deals: str) -> Played:
    """Play the schedule of ``games`` games of the sample bots in format ``deals``."""
    players = len(BOTS)
    factories = {name: bot_factory(name) for name in BOTS}
    played = Played(deals, [], [])
    for game in make_schedule(list(BOTS), players, games, seed, deals):
        if game.rotation == 0:
            played.places.append([])
            played.scores.append([])
        config = GameConfig(variant=variant, players=players, seed=game.seed)
        totals, places, _, _ = play_game([factories[name]() for name in game.bots], config, game.bot_seeds)
        played.places[-1].append(dict(zip(game.bots, places)))
        played.scores[-1].append(dict(zip(game.bots, totals)))
    return played


def set_differences(sets: list[list[dict[str, int]]], a: str, b: str) -> list[float]:
    """Per set of rotations: the mean of ``a``'s value minus ``b``'s."""
    return [statistics.fmean(game[a] - game[b] for game in games) for games in sets]


def standard_error(values: list[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values))


def variance_ratio(independent: list[float], duplicate: list[float], rng: random.Random,
                   resamples: int = 2000) -> tuple[float | None, float, float]:
    """Var(independent) / Var(duplicate) of the set means, with a 95% bootstrap interval
    (both formats' sets resampled); ``None`` when the duplicate sets did not vary at all.

    >>> variance_ratio([0.0, 2.0, 4.0], [1.0, 2.0, 3.0], random.Random(1), resamples=10)[0]
    4.0
    """
    if statistics.variance(duplicate) == 0:
        return None, math.nan, math.nan
    ratio = statistics.variance(independent) / statistics.variance(duplicate)
    draws = []
    for _ in range(resamples):
        i = rng.choices(independent, k=len(independent))
        d = rng.choices(duplicate, k=len(duplicate))
        vd = statistics.variance(d)
        if vd > 0:
            draws.append(statistics.variance(i) / vd)
    draws.sort()
    if not draws:
        return ratio, math.nan, math.nan
    return ratio, draws[int(0.025 * len(draws))], draws[min(len(draws) - 1, int(0.975 * len(draws)))]


def bench_deals(variant: str = "classic", games: int = 640, seed: int = 1) -> dict[str, Any]:
    """Figures for both formats; ``games`` (per format) is rounded up to whole rotations."""
    games = round_games(games, len(BOTS), len(BOTS))
    started = time.perf_counter()
    played = {deals: play_format(variant, games, seed, deals) for deals in DEAL_FORMATS}
    seconds = time.perf_counter() - started
    rng = random.Random(seed)
    a, b = PAIR
    figures: dict[str, Any] = {
        "variant": variant,
        "bots (4 seats)": ", ".join(BOTS),
        "games per format": games,
        "pair": f"{a} - {b}",
    }
    for measure in ("place", "score"):
        diffs = {deals: set_differences(getattr(played[deals], measure + "s"), a, b) for deals in DEAL_FORMATS}
        for deals in DEAL_FORMATS:
            figures[f"{measure} difference, {deals}: mean"] = statistics.fmean(diffs[deals])
            figures[f"{measure} difference, {deals}: standard error"] = standard_error(diffs[deals])
        ratio, low, high = variance_ratio(diffs["independent"], diffs["duplicate"], rng)
        figures[f"{measure}: independent games per duplicate game"] = ratio
        figures[f"{measure}: 95% interval (bootstrap)"] = "n/a" if math.isnan(low) else f"{low:.2f} - {high:.2f}"
    every_pair = []
    for x, y in itertools.combinations(BOTS, 2):
        dup = set_differences(played["duplicate"].places, x, y)
        ind = set_differences(played["independent"].places, x, y)
        if statistics.variance(dup) > 0:
            every_pair.append(statistics.variance(ind) / statistics.variance(dup))
    figures["place: ratio over all 6 pairs (min - max)"] = (f"{min(every_pair):.2f} - {max(every_pair):.2f}"
                                                             if every_pair else "n/a")
    figures["games/s"] = 2 * games / seconds
    figures["seconds"] = seconds
    return figures
