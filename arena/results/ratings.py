"""Ratings: the leaderboard's Bradley–Terry fit, with its bootstrap interval.

Two numbers describe a bot (per variant); ``docs/ratings.md`` explains both for users.
The other one, the online Elo kept after every match, is ``arena.results.elo``.

*Bradley–Terry* is what the leaderboard sorts by: the maximum-likelihood rating for all
pairwise results at once, so the order of matches does not matter. Every match with N
seats is read as N·(N−1)/2 pairwise games (a better place wins, a shared place is half a
win each). Its 95% interval comes from a bootstrap over whole matches::

    >>> games = pairwise_games(match_keys=[0, 0, 1, 1], bots=[0, 1, 0, 1], places=[1, 2, 2, 1], n_bots=2)
    >>> games.matches, games.wins().tolist()
    (2, [[0.0, 1.0], [1.0, 0.0]])
    >>> fit_bradley_terry(games.wins()).round(6).tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)   # natural-log strength -> Elo points
DEFAULT_PRIOR_GAMES = 1.0      # one virtual drawn game against an average bot, per bot
DEFAULT_BOOTSTRAP_SAMPLES = 100


@dataclass
class PairwiseGames:
    """The pairwise results of a set of matches, ready for fitting and bootstrapping.

    Matches with the same outcome (the same bots finishing in the same places, whatever
    the seats) contribute the same pairwise results, so they are stored once as a
    *pattern* with a count. Resampling matches with replacement is then the same as
    drawing pattern counts from a multinomial, which keeps the bootstrap cheap even for
    100,000 matches.

    ``entry_*`` arrays list every pairwise game of every pattern: bot ``entry_a`` scored
    ``entry_score`` (1, 0.5 or 0) against bot ``entry_b`` in pattern ``entry_pattern``.
    """

    n_bots: int
    pattern_counts: np.ndarray      # (patterns,) matches with this outcome
    entry_pattern: np.ndarray       # (entries,)
    entry_a: np.ndarray             # (entries,)
    entry_b: np.ndarray             # (entries,)
    entry_score: np.ndarray         # (entries,)
    # A cache for wins(), built on first use: the cells and patterns of the decisive
    # games, then of the shared places.
    _cells: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = field(
        default=None, repr=False, compare=False)

    @property
    def matches(self) -> int:
        return int(self.pattern_counts.sum())

    def wins(self, pattern_weights: np.ndarray | None = None) -> np.ndarray:
        """The n×n matrix of (weighted) wins: ``W[i, j]`` = i's wins against j, halves for shares.

        ``pattern_weights`` replaces the observed pattern counts (the bootstrap uses this).
        """
        weights = (self.pattern_counts if pattern_weights is None else pattern_weights).astype(float)
        n = self.n_bots
        if self._cells is None:
            # A decisive game is one win in the winner's row; a shared place is half a win
            # in each row. Precomputed once: the bootstrap calls this hundreds of times.
            a, b, score = self.entry_a, self.entry_b, self.entry_score
            decisive = score != 0.5
            winner = np.where(score > 0.5, a, b)[decisive]
            loser = np.where(score > 0.5, b, a)[decisive]
            shared = ~decisive
            self._cells = (winner * n + loser, self.entry_pattern[decisive],
                           np.concatenate([(a * n + b)[shared], (b * n + a)[shared]]),
                           np.concatenate([self.entry_pattern[shared]] * 2))
        decisive_cells, decisive_pattern, shared_cells, shared_pattern = self._cells
        wins = np.bincount(decisive_cells, weights[decisive_pattern], n * n)
        if len(shared_cells):
            np.add(wins, 0.5 * np.bincount(shared_cells, weights[shared_pattern], n * n), out=wins)
        return wins.reshape(n, n)


# Seats are packed as bot * _PACK + place when matches are grouped into patterns.
_PACK = 64


def pairwise_games(
    match_keys: Sequence[int] | np.ndarray,
    bots: Sequence[int] | np.ndarray,
    places: Sequence[int] | np.ndarray,
    n_bots: int,
) -> PairwiseGames:
    """Group seat rows (one per seat: its match, its bot index, its final place) into
    :class:`PairwiseGames`. Rows may come in any order; matches may have any number of seats.

    >>> g = pairwise_games([7, 7, 7], [0, 1, 2], [1, 2, 2], n_bots=3)
    >>> g.wins().tolist()
    [[0.0, 1.0, 1.0], [0.0, 0.0, 0.5], [0.0, 0.5, 0.0]]
    """
    keys = np.asarray(match_keys, dtype=np.int64)
    bot_arr = np.asarray(bots, dtype=np.int64)
    place_arr = np.asarray(places, dtype=np.int64)
    if len(keys) == 0:
        return _from_patterns([], n_bots)
    if place_arr.max() >= _PACK or place_arr.min() < 0:
        raise ValueError("places must be between 0 and 63")

    order = np.argsort(keys, kind="stable")
    keys, packed = keys[order], (bot_arr * _PACK + place_arr)[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])

    groups = []
    for size in np.unique(sizes):
        rows = packed[starts[sizes == size][:, None] + np.arange(size)]
        # Sorting a row makes the pattern independent of who sat where.
        groups.append(_unique_rows(np.sort(rows, axis=1), base=n_bots * _PACK))
    return _from_patterns(groups, n_bots)


def pairwise_from_outcomes(
    outcomes: Sequence[tuple[Sequence[tuple[int, int]], int]], n_bots: int
) -> PairwiseGames:
    """:class:`PairwiseGames` from outcomes already counted: ``([(bot index, place) per
    seat], how many matches ended so)``.

    >>> pairwise_from_outcomes([([(0, 1), (1, 2)], 3), ([(0, 2), (1, 1)], 1)], n_bots=2).wins().tolist()
    [[0.0, 3.0], [1.0, 0.0]]
    """
    by_size: dict[int, tuple[list[list[int]], list[list[int]], list[int]]] = {}
    for seats, count in outcomes:
        bots, places, counts = by_size.setdefault(len(seats), ([], [], []))
        bots.append([bot for bot, _ in seats])
        places.append([place for _, place in seats])
        counts.append(count)
    return pairwise_from_tables(
        [(np.array(b, dtype=np.int64), np.array(p, dtype=np.int64), np.array(c, dtype=np.int64))
         for b, p, c in by_size.values()],
        n_bots,
    )


def pairwise_from_tables(
    tables: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_bots: int
) -> PairwiseGames:
    """:class:`PairwiseGames` from counted outcomes as arrays, one entry per table size:
    ``(bots, places, counts)`` with ``bots`` and ``places`` of shape (outcomes, seats) and
    ``counts`` how many matches ended so. This is the fast path the leaderboard uses.

    >>> bots, places = np.array([[0, 1], [0, 1]]), np.array([[1, 2], [2, 1]])
    >>> pairwise_from_tables([(bots, places, np.array([3, 1]))], n_bots=2).wins().tolist()
    [[0.0, 3.0], [1.0, 0.0]]
    """
    groups = []
    for bots, places, counts in tables:
        keep = counts > 0
        if not keep.any():
            continue
        if places.min() < 0 or places.max() >= _PACK:
            raise ValueError("places must be between 0 and 63")
        # Sorting a row makes the pattern independent of who sat where; merging equal rows
        # (in sorted order) makes the patterns independent of the order the rows came in,
        # so the seeded bootstrap draws the same for the same matches.
        rows = np.sort(bots[keep] * _PACK + places[keep], axis=1)
        groups.append(_unique_rows(rows, base=n_bots * _PACK, weights=counts[keep]))
    return _from_patterns(groups, n_bots)


def _from_patterns(groups: list[tuple[np.ndarray, np.ndarray]], n_bots: int) -> PairwiseGames:
    """Build PairwiseGames from (sorted packed seat rows, counts), one group per table size."""
    empty_i = np.zeros(0, dtype=np.int64)
    counts: list[np.ndarray] = []
    entries: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    next_pattern = 0
    for patterns, pattern_counts in groups:
        size = patterns.shape[1]
        pattern_bots, pattern_places = patterns // _PACK, patterns % _PACK
        ids = np.arange(next_pattern, next_pattern + len(patterns))
        for i in range(size):
            for j in range(i + 1, size):
                a, b = pattern_bots[:, i], pattern_bots[:, j]
                score = np.sign(pattern_places[:, j] - pattern_places[:, i]) * 0.5 + 0.5
                distinct = a != b          # a bot in two seats does not play itself
                entries.append((ids[distinct], a[distinct], b[distinct], score[distinct]))
        counts.append(pattern_counts)
        next_pattern += len(patterns)
    return PairwiseGames(
        n_bots=n_bots,
        pattern_counts=np.concatenate(counts) if counts else empty_i,
        entry_pattern=np.concatenate([e[0] for e in entries]) if entries else empty_i,
        entry_a=np.concatenate([e[1] for e in entries]) if entries else empty_i,
        entry_b=np.concatenate([e[2] for e in entries]) if entries else empty_i,
        entry_score=np.concatenate([e[3] for e in entries]).astype(float) if entries else np.zeros(0),
    )


def _unique_rows(rows: np.ndarray, base: int, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows, sorted, and how many times each occurs (with ``weights``: the sum
    of the weights of its occurrences). ``np.unique(rows, axis=0, return_counts=True)``,
    but faster when a row fits one int64."""
    size = rows.shape[1]
    if base ** size >= 2**62:
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    else:
        # Read each row as the digits of one number in the given base (unique on 1-D is ~50x faster).
        codes = rows @ (base ** np.arange(size - 1, -1, -1, dtype=np.int64))
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        unique = rows[first]
    totals = np.bincount(inverse.ravel(), weights=weights, minlength=len(unique))
    return unique, totals.astype(np.int64)


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(_log_sigmoid(x))


def _solve_positive_definite(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``matrix @ x = rhs`` for a symmetric positive definite matrix by conjugate gradients.

    Small systems go to ``np.linalg.solve``. From about 100 bots on, OpenBLAS runs that
    factorisation on several threads, and on a busy machine each call then stalls for
    milliseconds while the bootstrap makes hundreds of calls; so larger systems use
    conjugate gradients, which needs only matrix-vector products (and even a truncated
    solution is an uphill direction for the Newton step).

    >>> np.round(_solve_positive_definite(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])), 6)
    array([0.090909, 0.636364])
    """
    if len(rhs) <= 64:
        return np.linalg.solve(matrix, rhs)
    x = np.zeros_like(rhs)
    residual = rhs.copy()
    direction = residual.copy()
    norm = float(residual @ residual)
    limit = 1e-24 * max(norm, 1e-300)
    for _ in range(2 * len(rhs) + 10):
        if norm <= limit:
            break
        product = matrix @ direction
        alpha = norm / float(direction @ product)
        x += alpha * direction
        residual -= alpha * product
        new_norm = float(residual @ residual)
        direction = residual + (new_norm / norm) * direction
        norm = new_norm
    return x


def _fit_strengths(
    wins: np.ndarray, prior_games: float, start: np.ndarray | None = None, tol: float = 1e-7
) -> np.ndarray:
    """Natural-log Bradley–Terry strengths by damped Newton steps (see fit_bradley_terry)."""
    n = wins.shape[0]
    games = wins + wins.T
    theta = np.zeros(n) if start is None else start.astype(float).copy()

    def log_likelihood(t: np.ndarray) -> float:
        diff = t[:, None] - t[None, :]
        value = float(np.sum(wins * _log_sigmoid(diff)))
        # The prior: every bot drew prior_games virtual games against a fixed average bot.
        return value + 0.5 * prior_games * float(np.sum(_log_sigmoid(t) + _log_sigmoid(-t)))

    current = log_likelihood(theta)
    for _ in range(100):
        p = _sigmoid(theta[:, None] - theta[None, :])
        s = _sigmoid(theta)
        gradient = (wins - games * p).sum(axis=1) + prior_games * (0.5 - s)
        curvature = games * p * (1.0 - p)
        # The negative Hessian: a weighted graph Laplacian, plus the prior on the diagonal.
        neg_hessian = np.diag(curvature.sum(axis=1) + prior_games * s * (1.0 - s)) - curvature
        if prior_games == 0:
            # Without a prior, ratings are only defined up to a common shift and the
            # matrix is singular. The gradient then sums to zero, and adding 1/n to every
            # entry makes the matrix invertible without changing the (mean-free) step.
            neg_hessian = neg_hessian + 1.0 / n
        step = _solve_positive_definite(neg_hessian, gradient)
        # The log-likelihood is concave: halve the step until it does not go down.
        scale = 1.0
        while scale > 1e-6:
            candidate = theta + scale * step
            value = log_likelihood(candidate)
            if value >= current - 1e-12:
                break
            scale *= 0.5
        theta, current = candidate, value
        # Newton converges quadratically: once a step is this small, the next would be ~tol².
        if np.max(np.abs(scale * step), initial=0.0) < tol:
            break
    return theta


def fit_bradley_terry(
    wins: np.ndarray, prior_games: float = DEFAULT_PRIOR_GAMES, start: np.ndarray | None = None
) -> np.ndarray:
    """Maximum-likelihood Bradley–Terry ratings on the Elo scale, relative to their mean.

    ``wins[i, j]`` is how often i beat j (halves allowed). The model is
    P(i beats j) = 1 / (1 + 10^((R_j − R_i)/400)), the same curve as Elo.
    ``prior_games`` adds, for every bot, that many virtual games against an average bot
    (rating 0), half won and half lost. It keeps a bot that won or lost everything finite
    and pulls bots with few games slightly toward the mean; with ``prior_games=0`` the
    fit is the plain maximum-likelihood estimate (undefined for perfect records).

    >>> wins = np.array([[0, 75, 90], [25, 0, 75], [10, 25, 0]], dtype=float)
    >>> r = fit_bradley_terry(wins, prior_games=0)
    >>> [round(float(x - r[1]), 3) for x in r]
    [190.849, 0.0, -190.849]
    """
    wins = np.asarray(wins, dtype=float)
    if wins.shape[0] == 0:
        return np.zeros(0)
    theta = _fit_strengths(wins, prior_games, None if start is None else start / ELO_SCALE)
    return (theta - theta.mean()) * ELO_SCALE


@dataclass
class BradleyTerryRatings:
    """Ratings relative to the mean (add 1500 for display) and the 95% interval half-widths."""

    ratings: np.ndarray
    half_widths: np.ndarray
    matches: int
    samples: int


def rate(
    games: PairwiseGames,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    prior_games: float = DEFAULT_PRIOR_GAMES,
    level: float = 0.95,
) -> BradleyTerryRatings:
    """Fit the ratings and bootstrap their interval by resampling whole matches.

    Each bootstrap sample draws as many matches as were played, with replacement (a
    multinomial over outcome patterns), refits, and re-centres on the mean. The
    half-width is 1.96 standard deviations of a bot's rating over the samples (the
    normal bootstrap interval at 95%). The draws are seeded, so the output is reproducible.

    >>> g = pairwise_games([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [1, 2, 1, 2, 2, 1], n_bots=2)
    >>> result = rate(g, samples=50)
    >>> bool(result.ratings[0] > 0 > result.ratings[1]), bool(result.half_widths[0] > 0)
    (True, True)
    """
    ratings = fit_bradley_terry(games.wins(), prior_games)
    total = games.matches
    if total == 0 or samples <= 0:
        return BradleyTerryRatings(ratings, np.zeros_like(ratings), total, 0)
    rng = np.random.default_rng(seed)
    # The pattern of every match; drawing matches uniformly with replacement is the
    # bootstrap, and counting the drawn patterns gives the resampled weights.
    pattern_of_match = np.repeat(np.arange(len(games.pattern_counts)), games.pattern_counts)
    probabilities = games.pattern_counts / total
    draws = np.empty((samples, games.n_bots))
    for k in range(samples):
        # Two ways to draw the same thing, the cheaper for the data: a multinomial over
        # few outcome patterns, or drawing matches uniformly and counting their patterns.
        if len(games.pattern_counts) * 3 < total:
            weights = rng.multinomial(total, probabilities)
        else:
            drawn = pattern_of_match[rng.integers(0, total, size=total)]
            weights = np.bincount(drawn, minlength=len(games.pattern_counts))
        # Warm-starting from the full fit makes each refit a couple of Newton steps.
        draws[k] = fit_bradley_terry(games.wins(weights), prior_games, start=ratings)
    # The normal bootstrap interval: ±1.96 standard deviations of the refitted ratings
    # (for level 0.95). With 100 samples the standard deviation is known to about 7%,
    # better than the 2.5% and 97.5% quantiles would be from the same samples.
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
    return BradleyTerryRatings(ratings, z * draws.std(axis=0, ddof=1), total, samples)
