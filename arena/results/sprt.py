"""The statistics of a duplicate A/B test: a sequential probability ratio test (SPRT).

A candidate bot and a baseline bot each play the same duplicate sets (one deal, every
seat rotation, the same opponents). Each set gives one *unit* of evidence ``x`` in
[0, 1], the candidate's score against the baseline on that set
(:func:`set_unit`), read like a chess game pair's score in fishtest or fastchess:
0.5 is a tie, and a logistic Elo difference ``elo`` means an expected unit of
``1 / (1 + 10 ** (-elo / 400))``.

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

Pure: math and numpy, no I/O.

    >>> bounds = SprtBounds(elo0=0, elo1=20)
    >>> units = [0.5, 0.6, 0.55, 0.45, 0.6, 0.5, 0.65, 0.4] * 5
    >>> status = sprt_status(units[:6], bounds)      # too few units to decide on
    >>> status.units, status.llr, status.decision, round(status.elo, 1)
    (6, 0.0, None, 23.2)
    >>> status = sprt_status(units, bounds)
    >>> status.units, round(status.llr, 3), status.decision, round(status.elo, 1)
    (40, 3.125, 'H1', 21.7)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Before this many units the variance is too poor an estimate to act on: with 5, a lucky
# run of alike units early stops the test (alpha 0.09 instead of 0.05, measured in
# docs/sprt.md); from 30 the error rates hold. Overridable per test (SprtBounds.min_units).
MIN_UNITS = 30
Z95 = 1.959963984540054   # two-sided 95% normal quantile
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
    # Keyword only: SprtBounds(*four numbers) stays the four numbers.
    min_units: int = field(default=MIN_UNITS, kw_only=True)   # no decision (llr 0) before this many units

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

    @property
    def scores(self) -> tuple[float, float]:
        """The expected units (s0, s1) under H0 and H1.

        >>> SprtBounds(0, 400).scores[0]
        0.5
        """
        return logistic(self.elo0), logistic(self.elo1)


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
    elo: float          # Elo difference on the duplicate-set score (nan when undefined)
    elo_low: float      # its 95% interval (nan when undefined)
    elo_high: float
    los: float          # likelihood of superiority, 0..1
    decision: str | None   # "H0", "H1" or None (keep going)


def llr_normal(n: int, mean: float, var: float, s0: float, s1: float, min_units: int = MIN_UNITS) -> float:
    """The GSPRT's log-likelihood ratio in its normal approximation, from the units'
    count, mean and variance (divided by n); 0 before ``min_units`` or without variance.

    >>> round(llr_normal(100, 0.53, 0.01, 0.5, 0.52), 6)     # 100 * 0.02 * 0.04 / 0.02
    4.0
    """
    if n < min_units or not var > 1e-12:
        return 0.0
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


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


def sprt_status(units: Sequence[float], bounds: SprtBounds) -> SprtStatus:
    """The test after these units (one per finished duplicate set, in [0, 1]).

    >>> s = sprt_status([0.5, 0.6, 0.55, 0.45, 0.6, 0.5, 0.65, 0.4] * 5, SprtBounds(0, 20))
    >>> s.decision, round(s.llr, 2), round(s.elo_low, 1), round(s.elo_high, 1), round(s.los, 3)
    ('H1', 3.12, 4.7, 38.8, 0.994)
    >>> sprt_status([], SprtBounds(0, 20)).decision is None
    True
    """
    bounds.check()
    values = np.asarray(units, dtype=float)
    if values.ndim != 1 or np.any(~np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError("sprt_status: units must be numbers in [0, 1]")
    n = len(values)
    s0, s1 = bounds.scores
    if n == 0:
        return SprtStatus(0, 0.0, bounds.lower, bounds.upper, math.nan, math.nan, math.nan, 0.5, None)
    mean = float(values.mean())
    var = float(np.mean((values - mean) ** 2))
    llr = llr_normal(n, mean, var, s0, s1, bounds.min_units)
    if n < 2:
        low = high = math.nan
        los = 0.5     # one unit says nothing about its own spread
    elif var > 1e-12:
        se = math.sqrt(var / n)
        low, high = elo_of(mean - Z95 * se), elo_of(mean + Z95 * se)
        los = phi((mean - 0.5) / se)
    else:
        # Every unit equal: no spread to estimate, so no interval; the sign is all there is.
        low = high = math.nan
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return SprtStatus(n, llr, bounds.lower, bounds.upper, elo_of(mean), low, high, los, decide(llr, bounds))


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


def llr_exact(units: Sequence[float], bounds: SprtBounds) -> float:
    """The exact GSPRT log-likelihood ratio on the units' empirical distribution
    (fishtest ``LLRcalc.LLR_logistic``, fastchess ``getLLR_logistic``), for comparison:
    the most likely distribution on the observed values with mean s1, against the one
    with mean s0 (empirical likelihood). 0 before ``bounds.min_units`` or without
    variance, like :func:`sprt_status`.

    >>> round(llr_exact([0.5, 0.6, 0.55, 0.45, 0.6, 0.5, 0.65, 0.4] * 5, SprtBounds(0, 20)), 2)
    3.05
    """
    bounds.check()
    values = np.asarray(units, dtype=float)
    n = len(values)
    if n < bounds.min_units or not float(values.var()) > 1e-12:
        return 0.0
    s0, s1 = bounds.scores
    support, weights = values, np.ones(n)
    low, high = float(values.min()), float(values.max())
    if not (low < s0 < high and low < s1 < high):
        # A mean outside the observed range has no likelihood on it: add fishtest's tiny
        # weights at the ends of [0, 1], only then, as they would otherwise soak up the
        # shift of the mean almost for free on tightly spread units.
        support = np.concatenate([values, [0.0, 1.0]])
        weights = np.concatenate([weights, [REGULARIZE, REGULARIZE]])
    total = 0.0
    for s, sign in zip(bounds.scores, (-1.0, 1.0)):
        theta = _mle_theta(support, weights, s)
        # log p_s(a_i) = log(phat_i) - log(1 + theta (a_i - s)); phat cancels in the ratio.
        total += sign * -float(np.sum(weights * np.log1p(theta * (support - s))))
    return total


# -- the test over a stored A/B test's games (arena sprt) ----------------------------------


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
    status: SprtStatus | None = None
    _tested_sets: int = 0          # the sets whose prefix was tested and left undecided

    def add(self, index: int, bots: Sequence[str], places: Sequence[int]) -> None:
        """Game ``index`` ended with ``places`` (by seat) for ``bots`` (by seat)."""
        tested = self.candidate if index % 2 == 0 else self.baseline
        if tested in bots:
            self.scores[index] = game_score(places, list(bots).index(tested))
        if self.status is not None and self.status.decision is None:
            self.status = None     # a decided test stays where it was decided

    def units(self) -> list[float]:
        """One unit per set, for the sets from the first up to the first incomplete one."""
        per_set = games_per_set(self.players)
        units = []
        k = 0
        while all(k * per_set + i in self.scores for i in range(per_set)):
            first = k * per_set
            units.append(set_unit([self.scores[first + 2 * r] for r in range(self.players)],
                                  [self.scores[first + 2 * r + 1] for r in range(self.players)]))
            k += 1
        return units

    def current(self) -> SprtStatus:
        """The test at the first set where it crossed a bound, else on every complete set.

        Sets that ended after the deciding one (they were in flight) do not move it: the
        decision is the one a run with any concurrency, or resumed, would reach."""
        if self.status is None:
            units = self.units()
            for k in range(max(self._tested_sets, 1), len(units) + 1):
                status = sprt_status(units[:k], self.bounds)
                if status.decision is not None:
                    self.status = status
                    return status
            self._tested_sets = len(units)
            self.status = sprt_status(units, self.bounds)
        return self.status

    def decided(self) -> bool:
        return self.current().decision is not None

    def line(self) -> str:
        """The progress line: LLR and bounds, sets, Elo with its interval, LOS."""
        return status_line(self.current(), self.players)


def status_line(status: SprtStatus, players: int) -> str:
    """``LLR 1.23 [-2.94, 2.94] · 40 sets (240 games) · Elo +12.3 [-4.0, +28.9] · LOS 93.1%``."""
    games = status.units * games_per_set(players)
    elo = "Elo –" if status.elo != status.elo else (f"Elo {status.elo:+.1f} "
                                                   f"[{status.elo_low:+.1f}, {status.elo_high:+.1f}]")
    return (f"LLR {status.llr:.2f} [{status.lower:.2f}, {status.upper:.2f}] · {status.units} sets ({games} games)"
            f" · {elo} · LOS {100 * status.los:.1f}%")


def monitor_from(settings_sprt: dict[str, object], players: int,
                 games: Iterable[tuple[int | None, Sequence[str], Sequence[int]]]) -> SprtMonitor:
    """A monitor for a stored test: its ``sprt`` settings and its stored games
    (game index, bots, places)."""
    bounds = SprtBounds(float(settings_sprt["elo0"]), float(settings_sprt["elo1"]),  # type: ignore[arg-type]
                        float(settings_sprt["alpha"]), float(settings_sprt["beta"]))  # type: ignore[arg-type]
    monitor = SprtMonitor(str(settings_sprt["candidate"]), str(settings_sprt["baseline"]), players, bounds)
    for index, bots, places in games:
        if index is not None:
            monitor.add(index, bots, places)
    return monitor


def verdict(status: SprtStatus, sprt: dict[str, object], finished: bool) -> str:
    """The result in words, from the test's ``sprt`` settings.

    >>> from arena.results.sprt import SprtStatus
    >>> s = SprtStatus(9, 3.1, -2.94, 2.94, 60.0, 20.0, 100.0, 0.99, "H1")
    >>> verdict(s, {"candidate": "new", "baseline": "old", "elo0": 0.0, "elo1": 10.0}, True)
    'H1 accepted: new is stronger than old (Elo >= 10 is likelier than Elo <= 0)'
    """
    candidate, baseline, elo0, elo1 = sprt["candidate"], sprt["baseline"], sprt["elo0"], sprt["elo1"]
    if status.decision == "H1":
        return (f"H1 accepted: {candidate} is stronger than {baseline} "
                f"(Elo >= {elo1:g} is likelier than Elo <= {elo0:g})")
    if status.decision == "H0":
        return (f"H0 accepted: {candidate} is not stronger than {baseline} by {elo1:g} "
                f"(Elo <= {elo0:g} is likelier than Elo >= {elo1:g})")
    return "undecided: " + ("the game limit was reached" if finished else "the test was stopped before the end")


def stored_monitor(store: Any, tournament_id: str, sprt: dict[str, Any], players: int, games: int) -> SprtMonitor:
    """The monitor of a stored A/B test (its ``sprt`` settings, table size and game
    limit) over the games stored so far."""
    stored = store.list_matches(tournament_id=tournament_id, limit=games + 1)
    return monitor_from(sprt, players, ((m.game_index, m.bots, m.places) for m in stored))


def ab_test_result(store: Any, tournament_id: str, settings: dict[str, Any]) -> dict[str, Any]:
    """A stored A/B test's result as data (the leaderboards' metadata carries it): the
    bots, the bounds, the decision and the figures at it, and ``summary`` in words."""
    sprt = settings["sprt"]
    from engine import GameConfig

    players = GameConfig.from_dict({**(settings.get("game") or {}), "seed": 0}).players
    status = stored_monitor(store, tournament_id, sprt, players, int(settings.get("games") or 0)).current()

    def number(x: float) -> float | None:
        return None if x != x else round(x, 4)     # nan (undefined) as null

    return {**{k: sprt[k] for k in ("candidate", "baseline", "elo0", "elo1", "alpha", "beta")},
            "decision": status.decision, "sets": status.units, "games": status.units * games_per_set(players),
            "llr": number(status.llr), "elo": number(status.elo), "elo_low": number(status.elo_low),
            "elo_high": number(status.elo_high), "los": number(status.los),
            "summary": f"{sprt['candidate']} vs {sprt['baseline']}: {status.decision or 'undecided'} · "
                       + status_line(status, players)}


def summary(store: Any, tournament_id: str, settings: dict[str, Any]) -> str | None:
    """An A/B test in one line for ``arena tournaments`` (None for any other tournament):
    ``new vs old: H1 · LLR 3.02 [...] · ...``."""
    return str(ab_test_result(store, tournament_id, settings)["summary"]) if settings.get("sprt") else None
