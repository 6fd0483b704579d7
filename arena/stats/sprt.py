"""The statistics of a duplicate A/B test: a sequential probability ratio test (SPRT).

A candidate bot and a baseline bot each play the same duplicate sets (one deal, every
seat rotation, the same opponents). Each set gives one *unit* of evidence ``x`` in
[0, 1], the candidate's score against the baseline on that set
(:func:`set_unit`), read like a chess game pair's score in fishtest or fastchess:
0.5 is a tie.

Elo is the leaderboard's: under its Bradley–Terry model a bot ``d`` Elo above another
finishes ahead of it with probability ``logistic(d)``, so a candidate ``elo`` above a
baseline whose mean game score is ``b`` has an expected unit of
``0.5 + (logistic(elo + elo_of(b)) - b) / 2`` (:func:`unit_score`; 0.25 +
logistic(elo) / 2 when the opponents are the baseline's equals). The hypotheses, the
estimate and its interval all go through it, ``b`` being the baseline's mean game score
in the sets so far: a candidate N points above the baseline on a board of the same
games is about N points here (docs/sprt.md has the assumptions and the check).

The test is the generalized SPRT of Michel Van den Bergh (the one fishtest and
fastchess run) on the empirical distribution of the units, in its normal
approximation (fishtest ``LLRcalc.LLR_alt2``; "GSPRT_approximation.pdf")::

    LLR = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)

with ``s0, s1`` the expected units at ``elo0, elo1`` and ``var`` the units' variance
(divided by n, as fishtest's ``stats``). Why this one and not the exact empirical
likelihood ratio (:func:`llr_exact`, fishtest ``LLR_logistic``): our units are
continuous, not 3 or 5 outcomes, so the exact form is a root search over every
distinct unit at each update, while this one needs two running sums; for the small
Elo gaps an SPRT is used for the two agree closely (tested), and the simulation in
``arena.bench.sprt_sim`` measures the error rates of this very formula. docs/sprt.md
has the sources and the measured figures.

Pure: math and numpy, no I/O. The test over a stored A/B test's games as they end is
:class:`SprtMonitor`; reading those games from a store is ``arena.results.sprt``'s.

    >>> bounds = SprtBounds(elo0=0, elo1=40)
    >>> units = [0.5, 0.6, 0.55, 0.45, 0.6, 0.5, 0.65, 0.4] * 5
    >>> status = sprt_status(units[:6], bounds)      # too few units to decide on
    >>> status.units, status.llr, status.decision, round(status.elo, 1)
    (6, 0.0, None, 46.6)
    >>> status = sprt_status(units, bounds)
    >>> status.units, round(status.llr, 3), status.decision, round(status.elo, 1)
    (40, 3.123, 'H1', 43.7)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from arena.settings import LEADERBOARD_SCALE, SprtSettings

# Before this many units the variance is too poor an estimate to act on: with 5, a lucky
# run of alike units early stops the test (alpha 0.09 instead of 0.05, measured in
# docs/sprt.md); from 30 the error rates hold at 0/20. A wide test (0/50, 0/100) would
# mostly have decided before 30, and then stops at 30 far past its bound (alpha 0.005
# at 0/100), so its minimum is smaller (default_min_units). Overridable per test.
MIN_UNITS = 30
MIN_UNITS_WIDE = 10
MIN_UNITS_ELO = 1000.0     # default_min_units: the minimum is this over the width, in [10, 30]
Z95 = 1.959963984540054   # two-sided 95% normal quantile
SCORE_EDGE = 0.01      # unit_score/unit_elo: a baseline mean game score is taken in [0.01, 0.99]
ALIKE = 1e-12          # a unit this close to 0.5 is a set both bots played alike
MAX_ELO = 2000.0       # BaselineScores.elo searches in [-2000, 2000]
REGULARIZE = 1e-3      # llr_exact: weight put at 0 and 1, fishtest's regularize()


def logistic(elo: float) -> float:
    """Expected score at a logistic Elo difference.

    >>> logistic(0.0), round(logistic(400.0), 4)
    (0.5, 0.9091)
    """
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of(score: float) -> float:
    """Logistic Elo difference of an expected score; nan outside (0, 1).

    >>> round(elo_of(0.75), 1), elo_of(1.0)
    (190.8, nan)
    """
    if not 0.0 < score < 1.0 or math.isnan(score):
        return math.nan
    return -400.0 * math.log10(1.0 / score - 1.0)


def _inside(score: float) -> float:
    """A mean game score kept off 0 and 1, where the logistic scale ends."""
    return min(max(score, SCORE_EDGE), 1.0 - SCORE_EDGE)


@dataclass(frozen=True)
class BaselineScores:
    """How the baseline fared against each opponent it met in the seat under test: its
    mean pairwise score against that opponent (a better place 1, a shared one ½) and
    the number of those comparisons (the weight). The opponents of an A/B test may be
    far apart (the random bot among them): the map from Elo to a unit goes through
    each opponent, not through the mean score alone.

    >>> BaselineScores.even(0.5).scores
    ((1.0, 0.5),)
    """

    scores: tuple[tuple[float, float], ...]    # (weight, mean pairwise score) per opponent

    @classmethod
    def even(cls, score: float) -> BaselineScores:
        """One mean score for all opponents (opponents alike)."""
        return cls(((1.0, score),))

    def expected_unit(self, elo: float) -> float:
        """The expected set unit of a candidate ``elo`` above the baseline: against an
        opponent the baseline scores ``b`` on, it scores ``logistic(elo + elo_of(b))``."""
        total = math.fsum(w for w, _ in self.scores)
        gain = math.fsum(w * (logistic(elo + elo_of(_inside(b))) - _inside(b)) for w, b in self.scores)
        return 0.5 + gain / total / 2.0

    def elo(self, unit: float) -> float:
        """The Elo difference whose expected unit is ``unit`` (the inverse, by
        bisection); nan outside the units a candidate can reach against these opponents."""
        if not self.expected_unit(-MAX_ELO) < unit < self.expected_unit(MAX_ELO):
            return math.nan
        low, high = -MAX_ELO, MAX_ELO
        for _ in range(100):
            mid = 0.5 * (low + high)
            if self.expected_unit(mid) < unit:
                low = mid
            else:
                high = mid
        return 0.5 * (low + high)


def _baseline(baseline: float | BaselineScores) -> BaselineScores:
    return baseline if isinstance(baseline, BaselineScores) else BaselineScores.even(baseline)


def unit_score(elo: float, baseline: float | BaselineScores = 0.5) -> float:
    """The expected set unit of a candidate ``elo`` above the baseline on the
    leaderboard's scale (its Bradley–Terry model: a bot ``d`` above another finishes
    ahead of it with probability ``logistic(d)``), given how the baseline fared
    against the opponents (its mean game score, or :class:`BaselineScores`).

    >>> unit_score(0.0), round(unit_score(20.0), 6), round(unit_score(20.0, 0.3), 6)
    (0.5, 0.514375, 0.51236)
    >>> round(unit_score(20.0, BaselineScores(((1, 0.9), (1, 0.4)))), 6)    # a weak opponent and a strong one
    0.509454
    """
    return _baseline(baseline).expected_unit(elo)


def unit_elo(unit: float, baseline: float | BaselineScores = 0.5) -> float:
    """The leaderboard-scale Elo difference a mean set unit stands for (the inverse of
    :func:`unit_score`); nan where no candidate reaches it.

    >>> round(unit_elo(unit_score(35.0, 0.4), 0.4), 6), unit_elo(0.5)
    (35.0, 0.0)
    >>> mixed = BaselineScores(((1, 0.9), (1, 0.4)))
    >>> round(unit_elo(unit_score(-25.0, mixed), mixed), 6), unit_elo(0.99)
    (-25.0, nan)
    """
    if isinstance(baseline, BaselineScores) and len(baseline.scores) > 1:
        return baseline.elo(unit)
    b = _inside(baseline.scores[0][1] if isinstance(baseline, BaselineScores) else baseline)
    return elo_of(b + 2.0 * (unit - 0.5)) - elo_of(b)     # the closed form of the same inverse


def default_min_units(elo0: float, elo1: float) -> int:
    """The sets a test waits for before it may decide: 30 for 0/10 to 0/33, fewer for
    wider tests, down to 10 from 0/100 (``MIN_UNITS_ELO / width``, in [10, 30]); the
    error rates this keeps are measured in docs/sprt.md.

    >>> default_min_units(0, 20), default_min_units(0, 50), default_min_units(0, 100)
    (30, 20, 10)
    """
    width = elo1 - elo0
    if not width > 0 or not math.isfinite(width):
        return MIN_UNITS
    return max(MIN_UNITS_WIDE, min(MIN_UNITS, round(MIN_UNITS_ELO / width)))


def phi(z: float) -> float:
    """Standard normal distribution function.

    >>> phi(0.0), round(phi(1.959963984540054), 3)
    (0.5, 0.975)
    """
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@dataclass(frozen=True)
class SprtBounds:
    """The two hypotheses (H0: elo = elo0, H1: elo = elo1) and the error rates wanted:
    alpha, accepting H1 when H0 holds; beta, accepting H0 when H1 holds.

    >>> b = SprtBounds(elo0=0, elo1=10)
    >>> round(b.lower, 3), round(b.upper, 3)
    (-2.944, 2.944)
    >>> SprtBounds(elo0=5, elo1=5).check()
    Traceback (most recent call last):
    ...
    ValueError: SPRT: elo0 (5) must be less than elo1 (5)
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    # Keyword only: SprtBounds(*four numbers) stays the four numbers. No decision (llr 0)
    # before this many units; 0 means default_min_units(elo0, elo1).
    min_units: int = field(default=0, kw_only=True)

    def __post_init__(self) -> None:
        if self.min_units == 0:
            object.__setattr__(self, "min_units", default_min_units(self.elo0, self.elo1))

    def check(self) -> None:
        """Raise ValueError (one line) on hypotheses or error rates the test cannot use."""
        for name, value in (("elo0", self.elo0), ("elo1", self.elo1)):
            if not math.isfinite(value):
                raise ValueError(f"SPRT: {name} must be a finite number, not {value}")
        if self.elo0 >= self.elo1:
            raise ValueError(f"SPRT: elo0 ({self.elo0:g}) must be less than elo1 ({self.elo1:g})")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            # Above 0.5 the bounds swap sides of zero and the test stops meaning anything.
            if not 0.0 < value < 0.5:
                raise ValueError(f"SPRT: {name} must be between 0 and 0.5 (exclusive), not {value:g}")
        if self.min_units < 2:
            raise ValueError(f"SPRT: min_units must be at least 2 (a variance needs two units), not {self.min_units}")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: log(beta / (1 - alpha))."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: log((1 - beta) / alpha)."""
        return math.log((1.0 - self.beta) / self.alpha)

    def scores(self, baseline: float | BaselineScores = 0.5) -> tuple[float, float]:
        """The expected units (s0, s1) under H0 and H1 (:func:`unit_score`), given how
        the baseline fared against the opponents (see there).

        >>> s0, s1 = SprtBounds(0, 20).scores()
        >>> s0, round(s1, 6)
        (0.5, 0.514375)
        """
        return unit_score(self.elo0, baseline), unit_score(self.elo1, baseline)


def game_score(places: Sequence[int], seat: int) -> float:
    """The seat's share of opponents it finished ahead of, a shared place counting half: in [0, 1].

    ``places`` by seat, 1 the best (shared places repeat).

    >>> game_score([1, 2, 3, 4], 0), game_score([1, 2, 3, 4], 3)
    (1.0, 0.0)
    >>> game_score([2, 1, 2, 4], 0)    # ahead of seat 3, level with seat 2
    0.5
    """
    if len(places) < 2:
        raise ValueError(f"game_score: a game needs at least 2 seats, got {len(places)}")
    if not 0 <= seat < len(places):
        raise ValueError(f"game_score: seat {seat} is not one of 0..{len(places) - 1}")
    mine = places[seat]
    ahead = sum(1.0 if mine < other else 0.5 if mine == other else 0.0
                for i, other in enumerate(places) if i != seat)
    return ahead / (len(places) - 1)


def set_unit(candidate_scores: Sequence[float], baseline_scores: Sequence[float]) -> float:
    """One duplicate set's unit of evidence in [0, 1]: 0.5 + (mean candidate score - mean baseline score) / 2.

    The scores are :func:`game_score` of the seat under test in each game of the set,
    once with the candidate in it and once with the baseline.

    >>> set_unit([1.0, 0.5, 0.5], [0.5, 0.5, 0.0])    # 0.5 + (2/3 - 1/3) / 2
    0.6666666666666666
    >>> set_unit([0.0], [1.0])
    0.0
    """
    if not candidate_scores or not baseline_scores:
        raise ValueError("set_unit: both the candidate's and the baseline's scores are needed")
    for score in (*candidate_scores, *baseline_scores):
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"set_unit: a game score must be in [0, 1], not {score}")
    candidate = math.fsum(candidate_scores) / len(candidate_scores)
    baseline = math.fsum(baseline_scores) / len(baseline_scores)
    return 0.5 + (candidate - baseline) / 2.0


@dataclass(frozen=True)
class SprtStatus:
    """Where a test stands after ``units`` duplicate sets."""

    units: int
    llr: float
    lower: float
    upper: float
    elo: float          # the leaderboard-scale Elo difference (unit_elo; nan when undefined)
    elo_low: float      # its 95% interval (nan when undefined)
    elo_high: float
    los: float          # likelihood of superiority, 0..1
    decision: str | None   # "H0", "H1" or None (keep going)
    alike: int = 0      # sets the two bots played alike (a unit of exactly 0.5)


def llr_normal(n: int, mean: float, var: float, s0: float, s1: float, min_units: int = MIN_UNITS) -> float:
    """The GSPRT's log-likelihood ratio in its normal approximation, from the units'
    count, mean and variance (divided by n); 0 before ``min_units`` or without variance.

    >>> round(llr_normal(100, 0.53, 0.01, 0.5, 0.52), 6)     # 100 * 0.02 * 0.04 / 0.02
    4.0
    """
    if n < min_units or not var > 1e-12:
        return 0.0
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


def test_llr(n: int, mean: float, var: float, alike: int, s0: float, s1: float, bounds: SprtBounds) -> float:
    """The LLR the test acts on: :func:`llr_normal`, with the two cases its variance
    estimate cannot carry.

    - **No spread at all** (every unit equal, e.g. two bots that play alike on every
      set): the mean is known exactly, so the hypothesis whose unit it is nearer to
      holds; the LLR is that side's bound (0 exactly between them).
    - **Mostly alike sets** (two versions of one bot): the variance rests on the few
      sets that differ, and a handful of them underestimate it. So the test also waits
      for ``min_units`` sets that differ (``n - alike``), as it waits for ``min_units`` sets.

    >>> b = SprtBounds(0, 20)
    >>> test_llr(30, 0.5, 0.0, 30, *b.scores(), b) == b.lower     # 30 sets played alike: H0
    True
    >>> test_llr(30, 0.5067, 0.0013, 29, *b.scores(), b)          # 1 set of 30 differs: wait
    0.0
    """
    if n < bounds.min_units:
        return 0.0
    if not var > 1e-12:
        middle = (s0 + s1) / 2.0
        return bounds.upper if mean > middle else bounds.lower if mean < middle else 0.0
    if n - alike < bounds.min_units:
        return 0.0
    return llr_normal(n, mean, var, s0, s1, bounds.min_units)


def decide(llr: float, bounds: SprtBounds) -> str | None:
    """ "H1" at or above the upper bound, "H0" at or below the lower one, else None.

    >>> decide(3.0, SprtBounds(0, 10)), decide(-3.0, SprtBounds(0, 10)), decide(0.0, SprtBounds(0, 10))
    ('H1', 'H0', None)
    """
    if llr >= bounds.upper:
        return "H1"
    if llr <= bounds.lower:
        return "H0"
    return None


def sprt_status(units: Sequence[float], bounds: SprtBounds, baseline: float | BaselineScores = 0.5) -> SprtStatus:
    """The test after these units (one per finished duplicate set, in [0, 1]), given
    how the baseline fared against the opponents on those sets (its mean game score, or
    :class:`BaselineScores`): the hypotheses and the estimate are on the leaderboard's
    Elo scale (:func:`unit_score`).

    >>> s = sprt_status([0.5, 0.6, 0.55, 0.45, 0.6, 0.5, 0.65, 0.4] * 5, SprtBounds(0, 40))
    >>> s.decision, round(s.llr, 2), round(s.elo_low, 1), round(s.elo_high, 1), round(s.los, 3)
    ('H1', 3.12, 9.5, 78.7, 0.994)
    >>> sprt_status([], SprtBounds(0, 20)).decision is None
    True
    """
    bounds.check()
    values = np.asarray(units, dtype=float)
    if values.ndim != 1 or np.any(~np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError("sprt_status: units must be numbers in [0, 1]")
    n = len(values)
    s0, s1 = bounds.scores(baseline)
    if n == 0:
        return SprtStatus(0, 0.0, bounds.lower, bounds.upper, math.nan, math.nan, math.nan, 0.5, None)
    mean = float(values.mean())
    var = float(np.mean((values - mean) ** 2))
    alike = int(np.sum(np.abs(values - 0.5) <= ALIKE))
    llr = test_llr(n, mean, var, alike, s0, s1, bounds)
    if n < 2:
        low = high = math.nan
        los = 0.5     # one unit says nothing about its own spread
    elif var > 1e-12:
        se = math.sqrt(var / n)
        low, high = unit_elo(mean - Z95 * se, baseline), unit_elo(mean + Z95 * se, baseline)
        los = phi((mean - 0.5) / se)
    else:
        # Every unit equal: no spread to estimate, so no interval; the sign is all there is.
        low = high = math.nan
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return SprtStatus(n, llr, bounds.lower, bounds.upper, unit_elo(mean, baseline), low, high, los,
                      decide(llr, bounds), alike)


def _mle_theta(values: np.ndarray, weights: np.ndarray, s: float) -> float:
    """Solve sum w_i (a_i - s) / (1 + theta (a_i - s)) = 0 for theta (Van den Bergh,
    "support_MLE_multinomial.pdf", Proposition 1.1); the function falls in theta, so bisect."""
    d = values - s
    low, high = -1.0 / d.max(), -1.0 / d.min()
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if float(np.sum(weights * d / (1.0 + mid * d))) > 0.0:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def llr_exact(units: Sequence[float], bounds: SprtBounds, scores: tuple[float, float] | None = None) -> float:
    """The exact GSPRT log-likelihood ratio on the units' empirical distribution
    (fishtest ``LLRcalc.LLR_logistic``, fastchess ``getLLR_logistic``), for comparison:
    the most likely distribution on the observed values with mean s1, against the one
    with mean s0 (empirical likelihood; ``scores``: s0 and s1, by default
    ``bounds.scores()``). 0 before ``bounds.min_units`` or without variance.

    >>> round(llr_exact([0.5, 0.6, 0.55, 0.45, 0.6, 0.5, 0.65, 0.4] * 5, SprtBounds(0, 40)), 2)
    3.05
    """
    bounds.check()
    values = np.asarray(units, dtype=float)
    n = len(values)
    if n < bounds.min_units or not float(values.var()) > 1e-12:
        return 0.0
    s0, s1 = scores if scores is not None else bounds.scores()
    support, weights = values, np.ones(n)
    low, high = float(values.min()), float(values.max())
    if not (low < s0 < high and low < s1 < high):
        # A mean outside the observed range has no likelihood on it: add fishtest's tiny
        # weights at the ends of [0, 1], only then, as they would otherwise soak up the
        # shift of the mean almost for free on tightly spread units.
        support = np.concatenate([values, [0.0, 1.0]])
        weights = np.concatenate([weights, [REGULARIZE, REGULARIZE]])
    total = 0.0
    for s, sign in zip((s0, s1), (-1.0, 1.0)):
        theta = _mle_theta(support, weights, s)
        # log p_s(a_i) = log(phat_i) - log(1 + theta (a_i - s)); phat cancels in the ratio.
        total += sign * -float(np.sum(weights * np.log1p(theta * (support - s))))
    return total


# -- the test over an A/B test's games as they end (arena sprt; arena.results.sprt reads them) --


def games_per_set(players: int) -> int:
    """Every rotation once for each side."""
    return 2 * players


@dataclass
class SprtMonitor:
    """The test over the games stored so far: :meth:`add` each game as it ends;
    :attr:`status` is the test on the complete sets, in order."""

    candidate: str
    baseline: str
    players: int
    bounds: SprtBounds
    scores: dict[int, float] = field(default_factory=dict)   # game index -> the tested seat's score
    # game index of a baseline game -> its pairwise results against each opponent
    pairs: dict[int, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    void: set[int] = field(default_factory=set)              # aborted games: their sets are left out
    status: SprtStatus | None = None
    _tested_sets: int = 0          # the sets whose prefix was tested and left undecided

    def add(self, index: int, bots: Sequence[str], places: Sequence[int], completed: bool = True) -> None:
        """Game ``index`` ended with ``places`` (by seat) for ``bots`` (by seat);
        ``completed=False`` for an aborted game, whose places say nothing."""
        tested = self.candidate if index % 2 == 0 else self.baseline
        if not completed:
            self.void.add(index)
        elif tested in bots:
            seat = list(bots).index(tested)
            self.scores[index] = game_score(places, seat)
            if tested == self.baseline:
                mine = places[seat]
                self.pairs[index] = tuple((bot, 1.0 if mine < place else 0.5 if mine == place else 0.0)
                                          for i, (bot, place) in enumerate(zip(bots, places)) if i != seat)
        if self.status is not None and self.status.decision is None:
            self.status = None     # a decided test stays where it was decided

    def sets(self) -> list[tuple[float, list[tuple[str, float]]]]:
        """(unit, the baseline's pairwise results against the opponents) of each set
        counted, in order, up to the first incomplete one. A set with an aborted game is
        left out: its slot is never played again, and its places (every seat first) are
        no evidence."""
        per_set = games_per_set(self.players)
        counted: list[tuple[float, list[tuple[str, float]]]] = []
        k = 0
        while True:
            games = range(k * per_set, (k + 1) * per_set)
            if not any(i in self.void for i in games):
                if not all(i in self.scores for i in games):
                    return counted
                candidate = [self.scores[games[2 * r]] for r in range(self.players)]
                baseline = [self.scores[games[2 * r + 1]] for r in range(self.players)]
                pairs = [pair for r in range(self.players) for pair in self.pairs.get(games[2 * r + 1], ())]
                counted.append((set_unit(candidate, baseline), pairs))
            k += 1

    def units(self) -> list[float]:
        """One unit per set counted (:meth:`sets`)."""
        return [unit for unit, _ in self.sets()]

    def current(self) -> SprtStatus:
        """The test at the first set where it crossed a bound, else on every set counted.

        Sets that ended after the deciding one (they were in flight) do not move it: the
        decision is the one a run with any concurrency, or resumed, would reach."""
        if self.status is None:
            counted = self.sets()
            units = [unit for unit, _ in counted]
            totals: dict[str, list[float]] = {}      # opponent -> [score sum, comparisons]
            for k, (_, pairs) in enumerate(counted, start=1):
                for opponent, score in pairs:
                    total = totals.setdefault(opponent, [0.0, 0.0])
                    total[0] += score
                    total[1] += 1.0
                if k < self._tested_sets:
                    continue
                status = sprt_status(units[:k], self.bounds, _baseline_scores(totals))
                if status.decision is not None:
                    self.status = status
                    return status
            self._tested_sets = len(units)
            self.status = sprt_status(units, self.bounds, _baseline_scores(totals))
        return self.status

    def decided(self) -> bool:
        return self.current().decision is not None

    def line(self) -> str:
        """The progress line: LLR and bounds, sets, Elo with its interval, LOS."""
        return status_line(self.current(), self.players)


def _baseline_scores(totals: dict[str, list[float]]) -> BaselineScores:
    """:class:`BaselineScores` from [score sum, comparisons] per opponent (none yet: even)."""
    if not totals:
        return BaselineScores.even(0.5)
    return BaselineScores(tuple((count, score / count) for score, count in totals.values()))


def status_line(status: SprtStatus, players: int) -> str:
    """``LLR 1.23 [-2.94, 2.94] · 40 sets (240 games) · Elo +12.3 [-4.0, +28.9] · LOS 93.1%``."""
    games = status.units * games_per_set(players)
    elo = "Elo –" if status.elo != status.elo else (f"Elo {status.elo:+.1f} "
                                                   f"[{status.elo_low:+.1f}, {status.elo_high:+.1f}]")
    return (f"LLR {status.llr:.2f} [{status.lower:.2f}, {status.upper:.2f}] · {status.units} sets ({games} games)"
            f" · {elo} · LOS {100 * status.los:.1f}%")


def bounds_of(settings: SprtSettings) -> SprtBounds:
    """The bounds of a stored A/B test on the leaderboard's Elo scale: a test stored before
    the scale was (``scale`` None) gave them as Elo on the set score, a unit of
    ``logistic(elo)``, read here as the leaderboard Elo of that same unit.

    >>> old = SprtSettings.from_json({"candidate": "new", "baseline": "old", "elo0": 0, "elo1": 10,
    ...                               "alpha": 0.05, "beta": 0.05})
    >>> b = bounds_of(old)
    >>> b.elo0, round(b.elo1, 2)
    (0.0, 20.02)
    """
    elo0, elo1 = settings.elo0, settings.elo1
    if settings.scale != LEADERBOARD_SCALE:
        elo0, elo1 = unit_elo(logistic(elo0)), unit_elo(logistic(elo1))
    return SprtBounds(elo0, elo1, settings.alpha, settings.beta)


def monitor_from(settings: SprtSettings, players: int,
                 games: Iterable[tuple[int | None, Sequence[str], Sequence[int]]],
                 aborted: Iterable[int] = ()) -> SprtMonitor:
    """A monitor for a stored test: its settings, its stored games (game index, bots,
    places) and the indexes of the aborted ones among them."""
    monitor = SprtMonitor(settings.candidate, settings.baseline, players, bounds_of(settings))
    void = set(aborted)
    for index, bots, places in games:
        if index is not None:
            monitor.add(index, bots, places, completed=index not in void)
    return monitor


def verdict(status: SprtStatus, settings: SprtSettings, finished: bool) -> str:
    """The result in words.

    >>> s = SprtStatus(9, 3.1, -2.94, 2.94, 60.0, 20.0, 100.0, 0.99, "H1")
    >>> verdict(s, SprtSettings("new", "old", 0.0, 20.0), True)
    'H1 accepted: new is stronger than old (Elo >= 20 is likelier than Elo <= 0)'
    """
    bounds = bounds_of(settings)
    candidate, baseline, elo0, elo1 = settings.candidate, settings.baseline, bounds.elo0, bounds.elo1
    if status.decision == "H1":
        return (f"H1 accepted: {candidate} is stronger than {baseline} "
                f"(Elo >= {elo1:g} is likelier than Elo <= {elo0:g})")
    if status.decision == "H0":
        return (f"H0 accepted: {candidate} is not stronger than {baseline} by {elo1:g} "
                f"(Elo <= {elo0:g} is likelier than Elo >= {elo1:g})")
    return "undecided: " + ("the game limit was reached" if finished else "the test was stopped before the end")
