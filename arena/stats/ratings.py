"""Ratings: the leaderboard's Bradley–Terry fit, with its bootstrap interval.

Two numbers describe a bot (per variant); ``docs/ratings.md`` explains both for users.
The other one, the online Elo kept after every match, is ``arena.stats.elo``.

*Bradley–Terry* is what the leaderboard sorts by: the maximum-likelihood rating for all
pairwise results at once, so the order of matches does not matter. Every match with N
seats is read as N·(N−1)/2 pairwise games (a better place wins, a shared place is half a
win each). Its 95% interval comes from a bootstrap over whole deals (the matches
played with the same cards; a match outside a tournament is a deal of its own), with a
small-sample correction (:func:`interval_multiplier`): a bot with fewer than
:data:`MIN_UNITS` deals of its own has no interval (NaN: not known)::

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
from functools import lru_cache

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)   # natural-log strength -> Elo points
DEFAULT_PRIOR_GAMES = 1.0      # one virtual drawn game against an average bot, per bot
DEFAULT_BOOTSTRAP_SAMPLES = 100
# A bot in fewer deals than this has no interval: from one deal the bootstrap redraws the
# same deal every time (±0), from two it has three distinct draws and the corrected
# interval would be wider than anything the games could say (t with 1 degree of freedom).
MIN_UNITS = 3


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
    # What the bootstrap redraws whole (see Units); None: every match is its own unit.
    units: Units | None = None
    # A cache for wins(), built on first use: the cells and patterns of the decisive
    # games, then of the shared places.
    _cells: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = field(
        default=None, repr=False, compare=False)

    @property
    def matches(self) -> int:
        return int(self.pattern_counts.sum())

    @property
    def unit_count(self) -> int:
        """How many units the bootstrap redraws: deals, and matches that are their own unit."""
        return self.matches if self.units is None else int(self.units.counts.sum())

    def bot_units(self) -> np.ndarray:
        """Per bot: how many of the bootstrap's units (deals, and matches that are their own
        unit) hold at least one pairwise game of it. These are the independent pieces of
        evidence about that bot's rating, so its interval's small-sample correction counts them.

        >>> games = pairwise_games([0, 0, 1, 1], [0, 1, 1, 2], [1, 2, 1, 2], n_bots=3)
        >>> games.bot_units().tolist()
        [1, 2, 1]
        """
        n = self.n_bots
        patterns = len(self.pattern_counts)
        in_pattern = np.zeros((patterns, n), dtype=bool)
        in_pattern[self.entry_pattern, self.entry_a] = True
        in_pattern[self.entry_pattern, self.entry_b] = True
        if self.units is None:
            return (self.pattern_counts @ in_pattern).astype(np.int64)
        in_kind = np.zeros((len(self.units.counts), n), dtype=bool)
        np.logical_or.at(in_kind, self.units.entry_kind, in_pattern[self.units.entry_pattern])
        return (self.units.counts @ in_kind).astype(np.int64)

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
        # np.bincount of no values gives integers whatever the weights: a board whose every
        # pairwise result is a shared place (every seat forfeited) would fail to add the halves.
        wins = np.bincount(decisive_cells, weights[decisive_pattern], n * n).astype(float, copy=False)
        if len(shared_cells):
            np.add(wins, 0.5 * np.bincount(shared_cells, weights[shared_pattern], n * n), out=wins)
        return wins.reshape(n, n)


@dataclass
class Units:
    """The units the bootstrap redraws whole, as *kinds* of unit with counts.

    A unit is a deal: the matches a tournament played with the same cards (in the
    duplicate format, one per rotation of the seats; see arena.tournament.schedule),
    which share that deal's luck and so are not independent of each other. A match
    outside a tournament, or in one whose every game has its own deal, is a unit alone.

    ``counts[k]`` units are of kind k, and one unit of kind k holds ``entry_matches``
    matches of outcome pattern ``entry_pattern`` for every entry with ``entry_kind == k``.
    Units holding the same matches' outcomes are one kind (so drawing units can be a
    multinomial over kinds, as drawing matches is over patterns).
    """

    counts: np.ndarray              # (kinds,)
    entry_kind: np.ndarray          # (entries,)
    entry_pattern: np.ndarray       # (entries,)
    entry_matches: np.ndarray       # (entries,)

    def pattern_weights(self, kind_weights: np.ndarray, patterns: int) -> np.ndarray:
        """How many matches of each pattern ``kind_weights`` units of each kind hold."""
        return np.bincount(self.entry_pattern, kind_weights[self.entry_kind] * self.entry_matches,
                           patterns).astype(np.int64)


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
        unique, totals, _ = _unique_rows(np.sort(rows, axis=1), base=n_bots * _PACK)
        groups.append((unique, totals))
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
    tables: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    n_bots: int,
    deals: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] = (),
) -> PairwiseGames:
    """:class:`PairwiseGames` from counted outcomes as arrays, one entry per table size:
    ``(bots, places, counts)`` with ``bots`` and ``places`` of shape (outcomes, seats) and
    ``counts`` how many matches ended so. This is the fast path the leaderboard uses.
    Each of these matches is a unit of the bootstrap on its own.

    ``deals`` adds matches one by one, with the deal each was played with, one entry per
    table size: ``(bots, places, deal)``, ``deal`` of shape (matches,). Matches with the
    same ``deal`` number shared their cards and are redrawn together (see :class:`Units`).

    >>> bots, places = np.array([[0, 1], [0, 1]]), np.array([[1, 2], [2, 1]])
    >>> pairwise_from_tables([(bots, places, np.array([3, 1]))], n_bots=2).wins().tolist()
    [[0.0, 3.0], [1.0, 0.0]]
    >>> dealt = pairwise_from_tables([], n_bots=2, deals=[(bots, places, np.array([7, 7]))])
    >>> dealt.matches, dealt.unit_count, dealt.wins().tolist()
    (2, 1, [[0.0, 1.0], [1.0, 0.0]])
    """
    rows_by_size: dict[int, tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = {}
    for bots, places, counts in tables:
        keep = counts > 0
        if keep.any():
            _add_rows(rows_by_size, bots[keep], places[keep], 0, counts[keep])
    for bots, places, deal in deals:
        if len(deal):
            _add_rows(rows_by_size, bots, places, 1, deal)
    groups = []
    counted = []        # per group: the counted matches of each of its patterns
    dealt_deals, dealt_patterns = [], []
    first_pattern = 0
    for size in sorted(rows_by_size):
        rows, counted_counts, deal_numbers = (np.concatenate(part) if part else np.zeros(0, np.int64)
                                              for part in rows_by_size[size])
        n_counted = len(counted_counts)
        weights = np.concatenate([counted_counts, np.ones(len(deal_numbers), dtype=np.int64)])
        # Sorting a row makes the pattern independent of who sat where; merging equal rows
        # (in sorted order) makes the patterns independent of the order the rows came in,
        # so the seeded bootstrap draws the same for the same matches.
        unique, totals, inverse = _unique_rows(rows.reshape(-1, size), base=n_bots * _PACK, weights=weights)
        groups.append((unique, totals))
        counted.append(np.bincount(inverse[:n_counted], weights=counted_counts, minlength=len(unique)))
        dealt_deals.append(deal_numbers)
        dealt_patterns.append(first_pattern + inverse[n_counted:])
        first_pattern += len(unique)
    games = _from_patterns(groups, n_bots)
    if dealt_deals and sum(map(len, dealt_deals)):
        games.units = _units(np.concatenate(counted).astype(np.int64), np.concatenate(dealt_deals),
                             np.concatenate(dealt_patterns))
    return games


def _add_rows(by_size: dict[int, tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]],
              bots: np.ndarray, places: np.ndarray, part: int, values: np.ndarray) -> None:
    """File packed, sorted seat rows under their table size, with their counts (``part``
    0) or deal numbers (``part`` 1). Every counted row must be filed before any dealt one:
    the rows of a size are read back counted first."""
    if places.min() < 0 or places.max() >= _PACK:
        raise ValueError("places must be between 0 and 63")
    rows = np.sort(np.asarray(bots, dtype=np.int64) * _PACK + np.asarray(places, dtype=np.int64), axis=1)
    entry = by_size.setdefault(rows.shape[1], ([], [], []))
    entry[0].append(rows)
    entry[1 + part].append(np.asarray(values, dtype=np.int64))


def _units(counted: np.ndarray, deals: np.ndarray, patterns: np.ndarray) -> Units | None:
    """The bootstrap's units: ``counted[p]`` matches of pattern p that are units alone, and
    the dealt matches (deal number, pattern) grouped by deal. None when every unit is a
    single match (the bootstrap then redraws matches, as without deals).

    >>> u = _units(np.array([2, 0]), deals=np.array([5, 5, 9]), patterns=np.array([0, 1, 1]))
    >>> u.counts.tolist(), u.entry_kind.tolist(), u.entry_pattern.tolist(), u.entry_matches.tolist()
    ([2, 1, 1], [0, 1, 2, 2], [0, 1, 0, 1], [1, 1, 1, 1])
    """
    n_patterns = len(counted)
    _, deal_index = np.unique(deals, return_inverse=True)
    cells, per_cell = np.unique(deal_index.ravel() * n_patterns + patterns, return_counts=True)
    deal_of, pattern_of = cells // n_patterns, cells % n_patterns
    # One value per (pattern, matches of it in the unit): a unit's sorted values are its kind.
    base = max(int(per_cell.max()), 1) + 1
    values = pattern_of * base + per_cell
    widths = np.bincount(deal_of)
    starts = np.r_[0, np.cumsum(widths)[:-1]]
    solo = np.flatnonzero(counted)
    kinds: list[np.ndarray] = []
    kind_counts: list[np.ndarray] = []
    for width in np.unique(np.r_[widths, 1] if len(solo) else widths):
        chosen = starts[widths == width]
        rows = values[chosen[:, None] + np.arange(width)]
        weights = np.ones(len(rows), dtype=np.int64)
        if width == 1 and len(solo):
            rows = np.concatenate([rows, (solo * base + 1)[:, None]])
            weights = np.concatenate([weights, counted[solo]])
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        kinds.append(unique)
        kind_counts.append(np.bincount(inverse.ravel(), weights=weights, minlength=len(unique)).astype(np.int64))
    if len(kinds) == 1 and kinds[0].shape[1] == 1 and np.all(kinds[0] % base == 1):
        return None
    entry_kind = np.concatenate([np.repeat(np.arange(len(k)), k.shape[1]) + offset for k, offset in
                                 zip(kinds, np.r_[0, np.cumsum([len(k) for k in kinds])[:-1]])])
    entry_values = np.concatenate([k.ravel() for k in kinds])
    return Units(np.concatenate(kind_counts), entry_kind, entry_values // base, entry_values % base)


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


def _unique_rows(rows: np.ndarray, base: int,
                 weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows, sorted, how many times each occurs (with ``weights``: the sum
    of the weights of its occurrences), and the distinct row of each row.
    ``np.unique(rows, axis=0, return_counts=True, return_inverse=True)``, but faster when a
    row fits one int64."""
    size = rows.shape[1]
    if base ** size >= 2**62:
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    else:
        # Read each row as the digits of one number in the given base (unique on 1-D is ~50x faster).
        codes = rows @ (base ** np.arange(size - 1, -1, -1, dtype=np.int64))
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        unique = rows[first]
    totals = np.bincount(inverse.ravel(), weights=weights, minlength=len(unique))
    return unique, totals.astype(np.int64), inverse.ravel()


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(_log_sigmoid(x))


def _solve_positive_definite(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``matrix @ x = rhs`` for symmetric positive definite matrices: one (n×n and n),
    or a stack of them (B×n×n and B×n), each solved alone.

    Small systems go to ``np.linalg.solve``. From about 100 bots on, OpenBLAS runs that
    factorisation on several threads, and on a busy machine each call then stalls for
    milliseconds while the bootstrap makes hundreds of calls; so larger systems use
    conjugate gradients, which needs only matrix-vector products (and even a truncated
    solution is an uphill direction for the Newton step).

    >>> np.round(_solve_positive_definite(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])), 6)
    array([0.090909, 0.636364])
    """
    if rhs.ndim == 2:
        if rhs.shape[1] <= 64:
            return np.linalg.solve(matrix, rhs[..., None])[..., 0]
        return np.stack([_solve_positive_definite(m, r) for m, r in zip(matrix, rhs)])
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


def _log_likelihood(wins: np.ndarray, theta: np.ndarray, prior_games: float) -> np.ndarray:
    """The log-likelihood of strengths ``theta`` (B×n) for the wins (B×n×n), one per row,
    with the prior: every bot drew ``prior_games`` virtual games against a fixed average bot."""
    diff = theta[:, :, None] - theta[:, None, :]
    value = (wins * _log_sigmoid(diff)).sum(axis=(1, 2))      # also for no rows at all
    return value + 0.5 * prior_games * (_log_sigmoid(theta) + _log_sigmoid(-theta)).sum(axis=1)


def _fit_strengths(
    wins: np.ndarray, prior_games: float, start: np.ndarray | None = None, tol: float = 1e-7
) -> np.ndarray:
    """Natural-log Bradley–Terry strengths by damped Newton steps (see fit_bradley_terry):
    for one n×n matrix of wins, or for a stack of them (B×n×n, the bootstrap's refits:
    one fit each, all stepped together, which costs about what one fit alone does)."""
    if wins.ndim == 2:
        return _fit_strengths(wins[None], prior_games, start, tol)[0]
    batch, n = wins.shape[0], wins.shape[1]
    games = wins + np.swapaxes(wins, 1, 2)
    theta = np.zeros((batch, n)) if start is None else np.tile(start.astype(float), (batch, 1))
    current = _log_likelihood(wins, theta, prior_games)
    on_diagonal = np.arange(n)
    active = np.arange(batch)         # the fits still stepping
    for _ in range(100):
        w, g, t = wins[active], games[active], theta[active]
        p = _sigmoid(t[:, :, None] - t[:, None, :])
        s = _sigmoid(t)
        gradient = (w - g * p).sum(axis=2) + prior_games * (0.5 - s)
        curvature = g * p * (1.0 - p)
        # The negative Hessian: a weighted graph Laplacian, plus the prior on the diagonal.
        neg_hessian = -curvature
        neg_hessian[:, on_diagonal, on_diagonal] = (curvature.sum(axis=2) + prior_games * s * (1.0 - s)
                                                    - curvature[:, on_diagonal, on_diagonal])
        if prior_games == 0:
            # Without a prior, ratings are only defined up to a common shift and the
            # matrix is singular. The gradient then sums to zero, and adding 1/n to every
            # entry makes the matrix invertible without changing the (mean-free) step.
            neg_hessian = neg_hessian + 1.0 / n
        step = _solve_positive_definite(neg_hessian, gradient)
        # The log-likelihood is concave: halve a fit's step until it does not go down.
        scale = np.ones(len(active))
        candidate = t + step
        value = _log_likelihood(w, candidate, prior_games)
        worse = np.flatnonzero(value < current[active] - 1e-12)
        while len(worse):
            scale[worse] *= 0.5
            worse = worse[scale[worse] > 1e-6]
            candidate[worse] = t[worse] + scale[worse, None] * step[worse]
            value[worse] = _log_likelihood(w[worse], candidate[worse], prior_games)
            worse = worse[value[worse] < current[active[worse]] - 1e-12]
        theta[active], current[active] = candidate, value
        # Newton converges quadratically: once a step is this small, the next would be ~tol².
        active = active[np.max(np.abs(scale[:, None] * step), axis=1, initial=0.0) >= tol]
        if not len(active):
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
    A stack of matrices (B×n×n) gives one fit per matrix (B×n), all stepped together.

    >>> wins = np.array([[0, 75, 90], [25, 0, 75], [10, 25, 0]], dtype=float)
    >>> r = fit_bradley_terry(wins, prior_games=0)
    >>> [round(float(x - r[1]), 3) for x in r]
    [190.849, 0.0, -190.849]
    """
    wins = np.asarray(wins, dtype=float)
    if wins.shape[-1] == 0:
        return np.zeros(wins.shape[:-1])
    theta = _fit_strengths(wins, prior_games, None if start is None else start / ELO_SCALE)
    return (theta - theta.mean(axis=-1, keepdims=True)) * ELO_SCALE


@dataclass
class BradleyTerryRatings:
    """Ratings relative to the mean (add 1500 for display) and the 95% interval half-widths.

    A half-width is NaN when it is not known: the bot has fewer than :data:`MIN_UNITS`
    units of its own (``bot_units``), or no bootstrap was run. ``spreads`` are the bootstrap
    standard deviations the half-widths were made from (``half_width = multiplier × spread``,
    see :func:`interval_multiplier`); NaN without a bootstrap.

    ``groups`` numbers the bots' comparison groups (see :func:`comparison_groups`): when
    there are several, each group's ratings are relative to that group's own mean.
    ``bounds`` says which ratings are only bounds (see :func:`rating_bounds`).
    """

    ratings: np.ndarray
    half_widths: np.ndarray
    matches: int
    samples: int
    units: int = 0                  # what the bootstrap redrew: deals, and matches that are units alone
    groups: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    bounds: list[str | None] = field(default_factory=list)
    spreads: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bot_units: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))   # per bot, its units


def t_quantile(level: float, df: int) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom:
    P(−t < T < t) = level. (No scipy here: exact for df ≤ 100 by inverting the closed-form
    distribution function of integer df, Abramowitz & Stegun 26.7.3-4; beyond, the
    Cornish–Fisher series 26.7.5, within 1e-9 there.)

    >>> [round(t_quantile(0.95, df), 4) for df in (1, 2, 4, 9, 49, 1000)]
    [12.7062, 4.3027, 2.7764, 2.2622, 2.0096, 1.9623]
    """
    return _t_quantile(float(level), int(df))


@lru_cache(maxsize=1024)
def _t_quantile(level: float, df: int) -> float:
    if not 0.0 < level < 1.0 or df < 1:
        raise ValueError(f"need 0 < level < 1 and df >= 1 (got {level}, {df})")
    if df > 100:
        z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
        g = ((z**3 + z) / 4, (5 * z**5 + 16 * z**3 + 3 * z) / 96,
             (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
             (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160)
        return z + sum(term / df ** (k + 1) for k, term in enumerate(g))

    def inside(theta: float) -> float:
        """P(|T| < √df·tan θ), by the finite sums of A&S 26.7.3 (odd df) and 26.7.4 (even df)."""
        c2, s = math.cos(theta) ** 2, math.sin(theta)
        if df % 2 == 0:
            term = total = 1.0
            for k in range(1, df // 2):
                term *= c2 * (2 * k - 1) / (2 * k)
                total += term
            return s * total
        if df == 1:
            return 2.0 * theta / math.pi
        term = total = math.cos(theta)
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2.0 / math.pi * (theta + s * total)

    low, high = 0.0, math.pi / 2
    for _ in range(100):               # bisection: inside() rises from 0 to 1 on [0, π/2)
        middle = (low + high) / 2
        low, high = (middle, high) if inside(middle) < level else (low, middle)
    return math.sqrt(df) * math.tan((low + high) / 2)


def interval_multiplier(units: int, level: float = 0.95) -> float | None:
    """What a bootstrap standard deviation over ``units`` units is multiplied by to give the
    ``level`` interval's half-width: Student's t with units − 1 degrees of freedom, times
    √(units / (units − 1)); None (not known) for fewer than :data:`MIN_UNITS` units.

    Why: the bootstrap's standard deviation of a mean over n units is the plug-in one,
    √((n − 1)/n) of the usual standard error, and the spread itself is estimated from
    those n units, which the t quantile allows for. The plain 1.96 (z) covered 77-82% from 3
    deals and 86-90% from 5 in ``arena bench deals --coverage``; with the correction 94.8-97.2%
    (docs/ratings.md). For many units both factors tend to 1 and z is what remains.

    >>> [interval_multiplier(n) for n in (1, 2)]
    [None, None]
    >>> [round(interval_multiplier(n), 3) for n in (3, 5, 50, 100_000)]
    [5.27, 3.104, 2.03, 1.96]
    """
    if units < MIN_UNITS:
        return None
    return t_quantile(level, units - 1) * math.sqrt(units / (units - 1))


def _reach(adjacent: np.ndarray) -> np.ndarray:
    """``reach[i, j]``: j can be reached from i along ``adjacent`` edges (or is i)."""
    step = adjacent.astype(np.float32)
    reach = np.eye(len(adjacent), dtype=bool) | adjacent
    while True:
        # One more edge per pass: as many passes as the longest shortest path (a few).
        wider = reach | ((reach.astype(np.float32) @ step) > 0)
        if np.array_equal(wider, reach):
            return reach
        reach = wider


def comparison_groups(wins: np.ndarray) -> np.ndarray:
    """The connected groups of the comparison graph: bots that played each other, directly
    or through others, share a number (0 for the group of bot 0, then in order of first
    member). Ratings in different groups say nothing about each other.

    >>> comparison_groups(np.array([[0, 1, 0], [2, 0, 0], [0, 0, 0]], dtype=float)).tolist()
    [0, 0, 1]
    """
    if len(wins) == 0:
        return np.zeros(0, dtype=np.int64)
    played = (wins + wins.T) > 0
    first = _reach(played).argmax(axis=1)       # each bot's lowest-numbered group mate
    _, groups = np.unique(first, return_inverse=True)
    return groups.ravel().astype(np.int64)


def rating_bounds(wins: np.ndarray) -> list[str | None]:
    """Per bot: ``"lower"`` when its rating is only a lower bound, ``"upper"`` when only an
    upper bound, ``"none"`` when neither, else None.

    A maximum-likelihood rating is infinite when a set of bots never lost a pairwise
    game (nor shared a place) to the rest of its comparison group: a bot that won every
    pairwise game, say. The prior keeps the shown numbers finite, but the games only say
    that the set is "at least this much" above the rest, or equally the rest "at most
    this much" below it. Of the two sides the smaller is flagged: the one bot with a
    perfect record, not everyone else. A bot of the smaller side of two such splits,
    one each way, is bounded neither way (``"none"``).

    >>> rating_bounds(np.array([[0, 3, 2], [0, 0, 1], [0, 1, 0]], dtype=float))
    ['lower', None, None]
    >>> rating_bounds(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float))
    ['lower', None, 'upper']
    >>> rating_bounds(np.array([[0, 3], [1, 0]], dtype=float))
    [None, None]
    """
    scored = wins > 0                   # scored[i, j]: i won (or shared) at least once against j
    groups = comparison_groups(wins)
    size = np.bincount(groups)[groups] if len(groups) else groups
    # above[i]: i and every bot that scored against it, and so on: the smallest set
    # holding i that nobody else in the group ever scored against. below[i]: the same the
    # other way round (i, those it scored against, ...).
    above = _reach(scored.T)
    below = above.T
    bounds: list[str | None] = []
    for i in range(len(wins)):
        high, low = int(above[i].sum()), int(below[i].sum())
        lower = high < size[i] and high <= size[i] - high
        upper = low < size[i] and low <= size[i] - low
        bounds.append("none" if lower and upper else "lower" if lower else "upper" if upper else None)
    return bounds


def _centre_groups(ratings: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``ratings`` (one row per bootstrap draw, or one vector) relative to their group's mean."""
    counts = np.bincount(groups)
    if ratings.size == 0:
        return ratings
    if len(counts) <= 1:
        return ratings - ratings.mean(axis=-1, keepdims=True)
    sums = np.stack([np.bincount(groups, weights=r, minlength=len(counts)) for r in np.atleast_2d(ratings)])
    return ratings - (sums / counts)[..., groups].reshape(ratings.shape)


def rate(
    games: PairwiseGames,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    prior_games: float = DEFAULT_PRIOR_GAMES,
    level: float = 0.95,
) -> BradleyTerryRatings:
    """Fit the ratings and bootstrap their interval by resampling whole units: deals (the
    matches played with the same cards, see :class:`Units`), and matches that are their
    own unit.

    Each bootstrap sample draws as many units as there are, with replacement (a
    multinomial over kinds of units), refits, and re-centres on the mean. The
    half-width is :func:`interval_multiplier` (1.96 for many units, more for few) times
    the standard deviation of a bot's rating over the samples, counting the units that
    hold the bot's games; NaN (not known) for a bot in fewer than :data:`MIN_UNITS`
    units, and for every bot when ``samples`` is 0. The draws are seeded, so the output
    is reproducible.

    Bots in separate comparison groups (that never met, even through others) are
    centred on their own group's mean: nothing relates one group's ratings to another's.

    >>> g = pairwise_games([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [1, 2, 1, 2, 2, 1], n_bots=2)
    >>> result = rate(g, samples=50)
    >>> bool(result.ratings[0] > 0 > result.ratings[1]), bool(result.half_widths[0] > 0)
    (True, True)
    """
    wins = games.wins()
    groups = comparison_groups(wins)
    bounds = rating_bounds(wins)
    ratings = _centre_groups(fit_bradley_terry(wins, prior_games), groups)
    total = games.matches
    bot_units = games.bot_units()
    if total == 0 or samples <= 0:
        unknown = np.full_like(ratings, np.nan)
        return BradleyTerryRatings(ratings, unknown, total, 0, games.unit_count, groups, bounds,
                                   unknown.copy(), bot_units)
    rng = np.random.default_rng(seed)
    # Units are drawn as matches were before there were deals: the same draws for the
    # same matches when every match is a unit alone.
    kind_counts = games.pattern_counts if games.units is None else games.units.counts
    units = int(kind_counts.sum())
    # The kind of every unit; drawing units uniformly with replacement is the bootstrap,
    # and counting the drawn kinds gives the resampled weights.
    kind_of_unit = np.repeat(np.arange(len(kind_counts)), kind_counts)
    probabilities = kind_counts / units
    resampled = np.empty((samples, games.n_bots, games.n_bots))
    for k in range(samples):
        # Two ways to draw the same thing, the cheaper for the data: a multinomial over
        # few kinds, or drawing units uniformly and counting their kinds.
        if len(kind_counts) * 3 < units:
            weights = rng.multinomial(units, probabilities)
        else:
            drawn = kind_of_unit[rng.integers(0, units, size=units)]
            weights = np.bincount(drawn, minlength=len(kind_counts))
        if games.units is not None:
            weights = games.units.pattern_weights(weights, len(games.pattern_counts))
        resampled[k] = games.wins(weights)
    # All refits at once, each warm-started from the full fit (a couple of Newton steps).
    draws = fit_bradley_terry(resampled, prior_games, start=ratings)
    draws = _centre_groups(draws, groups)
    # The normal bootstrap interval, corrected for few units: ±t·√(n/(n−1)) standard
    # deviations of the refitted ratings, n the bot's own units (1.96 for many, at level
    # 0.95). With 100 samples the standard deviation is known to about 7%, better than
    # the 2.5% and 97.5% quantiles would be from the same samples.
    spreads = draws.std(axis=0, ddof=1)
    multipliers = np.array([np.nan if m is None else m
                            for m in (interval_multiplier(int(n), level) for n in bot_units)])
    return BradleyTerryRatings(ratings, multipliers * spreads, total, samples, units, groups, bounds,
                               spreads, bot_units)
