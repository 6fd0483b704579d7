"""Does the leaderboard's 95% interval cover the truth 95% of the time? The game model of
``arena bench deals --coverage`` (arena.bench.deals uses :func:`play` and :func:`truth`),
and the deal-versus-match bootstrap comparison (:func:`bench_coverage`, docs/ratings.md).

Synthetic tournaments, no processes and no engine: four bots of known strength play
duplicate deals (each deal once per cyclic rotation of the seats, as
arena.tournament.schedule plays them), and the rating's inputs are built directly. A
seat's result in a game is its bot's strength, plus the deal's luck, plus Gumbel noise;
the best sum takes first place. Without luck, that makes P(i beats j) exactly the
Bradley–Terry curve. Three settings of the deal's luck:

- ``none``: no deal luck; the games of a deal are independent of each other.
- ``seat``: strong luck tied to a seat's cards. Every bot holds every seat's cards once
  per deal, so the luck cancels within a deal: a bootstrap over single matches counts it
  as noise and its intervals come out too wide.
- ``bot``: strong luck that favours particular bots for a whole deal (the cards suit one
  bot's style). It repeats in every rotation: a bootstrap over single matches takes the
  rotations for independent evidence and its intervals come out too narrow.

The truth is the rating the fit tends to with unlimited games of the same process (a
fit over :data:`TRUTH_DEALS` deals): the luck changes the pairwise probabilities a
little, so that, not the strengths themselves, is what an interval should cover. A
tournament's intervals cover when every bot's true rating (relative to the mean, as the
board shows it) lies within its rating ± half-width; coverage is the share of
(tournament, bot) pairs that do.

    >>> result = coverage("bot", tournaments=3, games=40, seed=1)
    >>> result.tournaments, 0.0 <= result.coverage <= 1.0
    (3, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.stats.ratings import ELO_SCALE, fit_bradley_terry, pairwise_from_tables, rate

SETTINGS = ("none", "seat", "bot")
STRENGTHS = (0.6, 0.2, -0.2, -0.6)      # natural-log strengths: about ±100 Elo points apart
SEAT_LUCK = 1.5                          # standard deviation of a seat's luck in a deal (strong)
BOT_LUCK = 1.0                           # standard deviation of a bot's luck in a deal (strong)
TRUTH_DEALS = 50_000
GAMES = 200                              # per tournament: 50 deals of 4 rotations


@dataclass
class Coverage:
    """One setting's coverage over ``tournaments`` simulated tournaments."""

    setting: str
    unit: str                    # "deal" (the leaderboard's bootstrap) or "match" (single matches)
    tournaments: int
    coverage: float              # share of (tournament, bot) pairs whose interval held the truth
    standard_error: float        # of ``coverage``, over tournaments (a tournament's bots are not independent)
    mean_half_width: float       # Elo points
    truth: list[float]           # the bots' true ratings relative to the mean, Elo points


def play(setting: str, deals: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``deals`` duplicate deals of the four bots: ``(bots, places, deal)`` per match,
    ``bots`` and ``places`` of shape (matches, seats), as ``pairwise_from_tables`` takes them."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {', '.join(SETTINGS)} (got {setting!r})")
    players = len(STRENGTHS)
    strength = np.array(STRENGTHS)
    rotation, seat = np.arange(players)[:, None], np.arange(players)[None, :]
    bots = np.broadcast_to((seat + rotation) % players, (deals, players, players))   # deal, rotation, seat
    luck = np.zeros((deals, players, players))
    if setting == "seat":
        luck += rng.normal(0.0, SEAT_LUCK, (deals, 1, players))
    elif setting == "bot":
        luck += np.take_along_axis(rng.normal(0.0, BOT_LUCK, (deals, 1, players)), bots, axis=2)
    result = strength[bots] + luck + rng.gumbel(size=(deals, players, players))
    places = np.argsort(np.argsort(-result, axis=2), axis=2) + 1
    deal = np.repeat(np.arange(deals), players)
    return bots.reshape(-1, players).copy(), places.reshape(-1, players), deal


def truth(setting: str, seed: int = 0, deals: int = TRUTH_DEALS) -> np.ndarray:
    """The ratings (relative to the mean, Elo points) the fit tends to in ``setting``."""
    bots, places, _ = play(setting, deals, np.random.default_rng([seed, SETTINGS.index(setting), 1]))
    games = pairwise_from_tables([(bots, places, np.ones(len(bots), dtype=np.int64))], n_bots=len(STRENGTHS))
    return fit_bradley_terry(games.wins(), prior_games=0)


def coverage(setting: str, tournaments: int = 500, games: int = GAMES, seed: int = 0,
             by_deal: bool = True, samples: int = 100) -> Coverage:
    """Simulate ``tournaments`` tournaments of ``games`` games in ``setting`` and rate each
    as the leaderboard does (``by_deal``: the bootstrap redraws whole deals; otherwise
    single matches, as before deals were kept)."""
    players = len(STRENGTHS)
    deals = max(1, games // players)
    true = truth(setting, seed)
    rng = np.random.default_rng([seed, SETTINGS.index(setting), 2])
    covered = np.empty(tournaments)
    widths = np.empty(tournaments)
    for t in range(tournaments):
        bots, places, deal = play(setting, deals, rng)
        unit = deal if by_deal else np.arange(len(deal))
        fit = rate(pairwise_from_tables([], n_bots=players, deals=[(bots, places, unit)]),
                   samples=samples, seed=t)
        covered[t] = np.mean(np.abs(fit.ratings - true) <= fit.half_widths)
        widths[t] = fit.half_widths.mean()
    return Coverage(
        setting=setting, unit="deal" if by_deal else "match", tournaments=tournaments,
        coverage=float(covered.mean()),
        standard_error=float(covered.std(ddof=1) / math.sqrt(tournaments)) if tournaments > 1 else math.nan,
        mean_half_width=float(widths.mean()), truth=[round(float(x), 1) for x in true],
    )


def bench_coverage(tournaments: int = 500, games: int = GAMES, seed: int = 0) -> dict[str, Any]:
    """Coverage of the leaderboard's interval (deal bootstrap) and, for comparison, of a
    bootstrap over single matches, in the three settings (the figures in docs/ratings.md)."""
    started = time.perf_counter()
    figures: dict[str, Any] = {"tournaments per setting": tournaments, "games per tournament": games,
                               "bots (one 4-seat table)": len(STRENGTHS),
                               "strengths (Elo)": ", ".join(f"{s * ELO_SCALE:+.0f}" for s in STRENGTHS)}
    for setting in SETTINGS:
        for by_deal in (True, False):
            result = coverage(setting, tournaments, games, seed, by_deal=by_deal)
            key = f"{setting} luck, {result.unit} bootstrap"
            figures[f"{key}: coverage %"] = round(100 * result.coverage, 1)
            figures[f"{key}: ± standard error %"] = round(100 * result.standard_error, 1)
            figures[f"{key}: mean half-width"] = round(result.mean_half_width, 1)
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures
