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

``arena bench deals --coverage`` (:func:`bench_interval_coverage`) asks another question:
how often the leaderboard's 95% interval holds a bot's true rating in a small
tournament, of 3, 5, 10 and 50 deals. No bot plays: the tournaments are simulated with
four bots of known strength (``arena.bench.coverage.play``: a seat's result is its
bot's strength, plus the deal's luck, plus noise) and rated with the board's own
function (``arena.stats.ratings.rate``). Two kinds of deal luck: ``seat``, tied to a
seat's cards, favours every bot alike over a deal's rotations; ``bot`` favours
particular bots for the whole deal, independently of each other. From the same
bootstrap draws it counts both intervals: the board's (t with n − 1 degrees of freedom
times √(n/(n−1)) bootstrap standard deviations, n the deals; "after") and the plain
1.96 standard deviations the board showed before ("before").

    >>> result = interval_coverage("bot", deals=3, tournaments=4, seed=1)
    >>> result.deals, 0.0 <= result.plain <= 1.0, result.corrected is not None
    (3, True, True)
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.bench.coverage import SETTINGS, STRENGTHS, play, truth
from arena.stats.ratings import ELO_SCALE, MIN_UNITS, pairwise_from_tables, rate
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


# --------------------------------------------------------------------------------------
# --coverage: the interval's coverage in small tournaments
# --------------------------------------------------------------------------------------

COVERAGE_DEALS = (3, 5, 10, 50)
COVERAGE_LUCK = ("seat", "bot")       # a deal favours all bots alike / particular bots
COVERAGE_TOURNAMENTS = 250            # per luck and deal count: 25-35 s in all on one core
_Z95 = statistics.NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class IntervalCoverage:
    """How often the 95% interval held the truth in ``tournaments`` simulated tournaments
    of ``deals`` deals: the share of (tournament, bot) pairs, and its standard error over
    tournaments (a tournament's four bots are not independent of each other)."""

    luck: str
    deals: int
    tournaments: int
    plain: float                     # before: ±1.96 bootstrap standard deviations
    plain_se: float
    plain_half_width: float          # mean, Elo points
    corrected: float | None          # after: the board's interval; None: not known (< MIN_UNITS deals)
    corrected_se: float | None
    corrected_half_width: float | None


def _share(values: np.ndarray) -> tuple[float, float]:
    """The mean of per-tournament shares and its standard error."""
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan
    return float(values.mean()), se


def interval_coverage(luck: str, deals: int, tournaments: int = COVERAGE_TOURNAMENTS, seed: int = 1,
                      samples: int = 100, true: np.ndarray | None = None) -> IntervalCoverage:
    """Simulate ``tournaments`` duplicate tournaments of ``deals`` deals with ``luck``
    (``arena.bench.coverage.SETTINGS``), rate each as the board does, and count how often
    each bot's true rating (``true``; default ``arena.bench.coverage.truth(luck, seed)``)
    fell inside its interval."""
    if luck not in SETTINGS:
        raise ValueError(f"luck must be one of {', '.join(SETTINGS)} (got {luck!r})")
    if deals < 1 or tournaments < 1:
        raise ValueError("deals and tournaments must be at least 1")
    true = truth(luck, seed) if true is None else true
    rng = np.random.default_rng([seed, SETTINGS.index(luck), 3, deals])
    plain, corrected = np.empty(tournaments), np.empty(tournaments)
    plain_width, corrected_width = np.empty(tournaments), np.empty(tournaments)
    for t in range(tournaments):
        bots, places, deal = play(luck, deals, rng)
        fit = rate(pairwise_from_tables([], n_bots=len(STRENGTHS), deals=[(bots, places, deal)]),
                   samples=samples, seed=t)
        error = np.abs(fit.ratings - true)
        plain[t] = np.mean(error <= _Z95 * fit.spreads)
        corrected[t] = np.mean(error <= fit.half_widths)        # NaN (not known) holds nothing
        plain_width[t], corrected_width[t] = _Z95 * fit.spreads.mean(), fit.half_widths.mean()
    known = deals >= MIN_UNITS
    plain_share, plain_se = _share(plain)
    corrected_share, corrected_se = _share(corrected)
    return IntervalCoverage(
        luck=luck, deals=deals, tournaments=tournaments, plain=plain_share, plain_se=plain_se,
        plain_half_width=float(plain_width.mean()), corrected=corrected_share if known else None,
        corrected_se=corrected_se if known else None,
        corrected_half_width=float(corrected_width.mean()) if known else None)


def bench_interval_coverage(tournaments: int = COVERAGE_TOURNAMENTS, seed: int = 1,
                            deal_counts: tuple[int, ...] = COVERAGE_DEALS,
                            lucks: tuple[str, ...] = COVERAGE_LUCK) -> dict[str, Any]:
    """The figures of ``arena bench deals --coverage``: per luck and deal count, the
    coverage before (z, uncorrected) and after (the board's corrected interval), in %,
    with standard errors and mean half-widths."""
    started = time.perf_counter()
    figures: dict[str, Any] = {
        "tournaments per luck and deal count": tournaments,
        "bots (one 4-seat table, 4 rotations a deal)": len(STRENGTHS),
        "strengths (Elo)": ", ".join(f"{s * ELO_SCALE:+.0f}" for s in STRENGTHS),
    }
    for luck in lucks:
        true = truth(luck, seed)
        for deals in deal_counts:
            result = interval_coverage(luck, deals, tournaments, seed, true=true)
            key = f"{luck} luck, {deals} deals"
            figures[f"{key}: coverage % before (z)"] = round(100 * result.plain, 1)
            figures[f"{key}: coverage % after (t, corrected)"] = (
                None if result.corrected is None else round(100 * result.corrected, 1))
            figures[f"{key}: ± standard error % (before / after)"] = (
                f"{100 * result.plain_se:.1f} / "
                + ("-" if result.corrected_se is None else f"{100 * result.corrected_se:.1f}"))
            figures[f"{key}: mean half-width (before / after)"] = (
                f"{result.plain_half_width:.0f} / "
                + ("not known" if result.corrected_half_width is None else f"{result.corrected_half_width:.0f}"))
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures
