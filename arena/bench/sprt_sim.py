"""``arena bench sprt``: the duplicate SPRT (arena.results.sprt) simulated, its error rates measured.

No engine and no processes: a game is a model of one (numpy, thousands of SPRTs in
seconds). At a table of P seats each seat's performance is

    skill[bot] + luck[the seat's cards] + noise

and the places follow the performances (highest first). ``luck`` is one normal draw
per card position of a deal, ``noise`` one per seat and game. The seat under test
holds the candidate or the baseline; the P - 1 other seats hold fixed opponents.

- *duplicate*: a set is one deal played in every seat rotation, once with the
  candidate and once with the baseline in the seat under test: the candidate's and
  the baseline's games share every card, as in ``arena sprt``.
- *independent*: the same 2P games, each with its own deal (the arena's independent
  format).

A set's unit is :func:`arena.stats.sprt.set_unit` of the seat's
:func:`~arena.stats.sprt.game_score` s. Its expectation is the same in both
formats (each game's luck has the same distribution) and has a closed form, since a
game score is the mean of pairwise wins and a pairwise difference of performances
is normal: with ``tau = sqrt(2 (luck^2 + noise^2))``,

    E[unit] = 0.5 + mean_j (Phi((gap - o_j) / tau) - Phi(-o_j / tau)) / 2

for a candidate ``gap`` stronger than the baseline and opponents of skill ``o_j``
(the baseline's 0). :func:`calibrate_gap` bisects it so that E[unit] is exactly
``logistic(elo)``: the test's own model, so "the rate of accepting H1 at elo0" is
the real alpha; :func:`mc_expected_unit` checks the closed form by simulation.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena.stats.ratings import fit_bradley_terry, pairwise_games
from arena.stats.sprt import ALIKE, SCORE_EDGE, SprtBounds, elo_of, phi, sprt_status

MAX_SETS = 50_000    # a test still undecided here counts as undecided (never reached at the defaults)


@dataclass(frozen=True)
class SimModel:
    """The game model: P seats, the spread of a card position's luck and of a seat's
    play in one game, the opponents' skills (the baseline's is 0).

    >>> SimModel().tau
    2.0
    """

    players: int = 4
    luck: float = 1.0
    noise: float = 1.0
    opponents: tuple[float, ...] = field(default=())   # P - 1 skills; () means all 0
    # The share of a card position's luck that the candidate and the baseline feel alike
    # (1: the cards favour both versions the same; 0: independently).
    shared_luck: float = 1.0
    # The share of sets the two play exactly alike (two versions of one bot): unit 0.5.
    alike: float = 0.0

    def __post_init__(self) -> None:
        if not 3 <= self.players <= 6:
            raise ValueError(f"players must be 3..6, not {self.players}")
        if self.luck < 0 or self.noise <= 0:
            raise ValueError("luck must be >= 0 and noise > 0")
        if not 0.0 <= self.shared_luck <= 1.0 or not 0.0 <= self.alike <= 1.0:
            raise ValueError("shared_luck and alike must be in [0, 1]")
        if self.opponents and len(self.opponents) != self.players - 1:
            raise ValueError(f"opponents: {self.players - 1} skills needed, got {len(self.opponents)}")

    @property
    def opponent_skills(self) -> np.ndarray:
        return np.asarray(self.opponents or (0.0,) * (self.players - 1), dtype=float)

    @property
    def tau(self) -> float:
        """Spread of the difference of two seats' performances in one game."""
        return math.sqrt(2.0 * (self.luck**2 + self.noise**2))


def expected_scores(model: SimModel, gap: float) -> tuple[float, float]:
    """The candidate's and the baseline's expected game scores (mean pairwise wins) for
    a candidate ``gap`` stronger than the baseline, the alike sets included.

    >>> expected_scores(SimModel(), 0.0)
    (0.5, 0.5)
    """
    o = model.opponent_skills
    cand = float(np.mean([phi((gap - x) / model.tau) for x in o]))
    base = float(np.mean([phi(-x / model.tau) for x in o]))
    return (1.0 - model.alike) * cand + model.alike * base, base


def expected_unit(model: SimModel, gap: float) -> float:
    """E[unit] for a candidate ``gap`` stronger than the baseline (closed form).

    >>> expected_unit(SimModel(), 0.0)
    0.5
    >>> round(expected_unit(SimModel(), 100.0), 6)    # beats everyone; the baseline half
    0.75
    """
    cand, base = expected_scores(model, gap)
    return 0.5 + (cand - base) / 2.0


def board_elo(model: SimModel, gap: float) -> float:
    """The Elo difference a leaderboard of these games shows between candidate and
    baseline: both met the same opponents, so it is elo_of(their mean pairwise score)
    apart (the Bradley–Terry fit, :func:`fitted_board_elo`, checks it).

    >>> board_elo(SimModel(), 0.0)
    0.0
    """
    cand, base = expected_scores(model, gap)
    return elo_of(min(max(cand, SCORE_EDGE), 1 - SCORE_EDGE)) - elo_of(min(max(base, SCORE_EDGE), 1 - SCORE_EDGE))


def calibrate_gap(model: SimModel, elo: float) -> float:
    """The skill gap at which the board shows the candidate ``elo`` above the baseline
    (bisection; :func:`board_elo` rises with the gap).

    >>> model = SimModel()
    >>> abs(board_elo(model, calibrate_gap(model, 20.0)) - 20.0) < 1e-9
    True
    """
    low, high = -50.0 * model.tau, 50.0 * model.tau
    if not board_elo(model, low) < elo < board_elo(model, high):
        raise ValueError(f"elo {elo:g} is out of this model's reach")
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if board_elo(model, mid) < elo:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def _performances(model: SimModel, gap: float, shape: tuple[int, ...], duplicate: bool,
                  rng: np.random.Generator) -> np.ndarray:
    """Every seat's performance in every game of ``shape`` sets: (..., 2, p, p) by
    side (0 candidate, 1 baseline), rotation r and table position; the seat under test
    sits at position r in rotation r, the opponents follow it round the table."""
    p = model.players
    skills = np.empty((2, p, p))
    opponents = model.opponent_skills
    for r in range(p):
        skills[:, r, r] = (gap, 0.0)
        for j, skill in enumerate(opponents):
            skills[:, r, (r + 1 + j) % p] = skill
    luck_shape = (*shape, 1, 1, p) if duplicate else (*shape, 2, p, p)
    luck = model.luck * rng.standard_normal(luck_shape)
    perf = skills + luck + model.noise * rng.standard_normal((*shape, 2, p, p))
    if model.shared_luck < 1.0:
        # The seat under test feels only part of its cards' luck alike on both sides.
        rotation = np.arange(p)
        own = model.luck * rng.standard_normal((*shape, 2, p))
        tested_luck = np.broadcast_to(luck, (*shape, 2, p, p))[..., rotation, rotation]
        perf[..., rotation, rotation] += ((math.sqrt(model.shared_luck) - 1.0) * tested_luck
                                          + math.sqrt(1.0 - model.shared_luck) * own)
    return perf


def _seat_scores(perf: np.ndarray) -> np.ndarray:
    """The game score of the seat under test in each game, (..., 2, p)."""
    p = perf.shape[-1]
    rotation = np.arange(p)
    tested = perf[..., rotation, rotation]
    ahead = (tested[..., None] > perf).sum(axis=-1) + 0.5 * ((tested[..., None] == perf).sum(axis=-1) - 1)
    return np.asarray(ahead / (p - 1))


def simulate_sets(model: SimModel, gap: float, shape: tuple[int, ...], duplicate: bool,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Units of ``shape`` independent sets (e.g. (tests, sets)) and the baseline's mean
    game score in each. A share ``model.alike`` of the sets is played alike (unit 0.5).

    >>> u, b = simulate_sets(SimModel(), 0.0, (3, 5), True, np.random.default_rng(1))
    >>> u.shape, b.shape, bool(((u >= 0) & (u <= 1)).all())
    ((3, 5), (3, 5), True)
    """
    means = _seat_scores(_performances(model, gap, shape, duplicate, rng)).mean(axis=-1)
    units = 0.5 + (means[..., 0] - means[..., 1]) / 2.0
    if model.alike > 0.0:
        units = np.where(rng.random(shape) < model.alike, 0.5, units)
    return np.asarray(units), np.asarray(means[..., 1])


def simulate_units(model: SimModel, gap: float, shape: tuple[int, ...], duplicate: bool,
                   rng: np.random.Generator) -> np.ndarray:
    """The units of :func:`simulate_sets` alone.

    >>> u = simulate_units(SimModel(), 0.0, (3, 5), True, np.random.default_rng(1))
    >>> u.shape, bool(((u >= 0) & (u <= 1)).all())
    ((3, 5), True)
    """
    return simulate_sets(model, gap, shape, duplicate, rng)[0]


def fitted_board_elo(model: SimModel, gap: float, sets: int, rng: np.random.Generator) -> tuple[float, float]:
    """A simulated A/B test of ``sets`` duplicate sets (alike sets left out of the
    model), rated as the leaderboard rates any games (Bradley–Terry on pairwise places),
    and the test's own estimate on the same sets: (board Elo difference candidate −
    baseline, the SPRT's Elo estimate)."""
    p = model.players
    perf = _performances(model, gap, (sets,), True, rng)          # (sets, 2, p, p)
    # Places by position: 1 + how many seats did better (ties share the better place).
    places = 1 + (perf[..., None, :] > perf[..., :, None]).sum(axis=-1)
    bots = np.empty((2, p, p), dtype=np.int64)                    # 0 candidate, 1 baseline, 2.. opponents
    for r in range(p):
        bots[:, r, r] = (0, 1)
        for j in range(p - 1):
            bots[:, r, (r + 1 + j) % p] = 2 + j
    keys = np.arange(sets * 2 * p).reshape(sets, 2, p, 1).repeat(p, axis=-1)
    games = pairwise_games(keys.ravel(), np.broadcast_to(bots, perf.shape).ravel(), places.ravel(), n_bots=p + 1)
    ratings = fit_bradley_terry(games.wins(), prior_games=0.0)
    scores = _seat_scores(perf).mean(axis=-1)
    units = 0.5 + (scores[:, 0] - scores[:, 1]) / 2.0
    estimate = sprt_status(list(units), SprtBounds(0, 1), float(scores[:, 1].mean())).elo
    return float(ratings[0] - ratings[1]), estimate


def mc_expected_unit(model: SimModel, gap: float, sets: int, rng: np.random.Generator) -> tuple[float, float]:
    """Monte Carlo mean unit and its standard error, to check :func:`expected_unit`."""
    units = simulate_units(model, gap, (sets,), True, rng)
    return float(units.mean()), float(units.std() / math.sqrt(sets))


def unit_scores(bounds: SprtBounds, baseline: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`SprtBounds.scores` for an array of baseline mean game scores."""
    b = np.clip(baseline, SCORE_EDGE, 1.0 - SCORE_EDGE)
    edge = -400.0 * np.log10(1.0 / b - 1.0)
    s0 = 0.5 + (1.0 / (1.0 + 10.0 ** (-(bounds.elo0 + edge) / 400.0)) - b) / 2.0
    s1 = 0.5 + (1.0 / (1.0 + 10.0 ** (-(bounds.elo1 + edge) / 400.0)) - b) / 2.0
    return s0, s1


@dataclass
class Sums:
    """Running sums of each test's sets: units, squared units, baseline scores, alike sets."""

    n: int
    units: np.ndarray
    squares: np.ndarray
    baseline: np.ndarray
    alike: np.ndarray

    @classmethod
    def empty(cls, tests: int) -> Sums:
        return cls(0, np.zeros(tests), np.zeros(tests), np.zeros(tests), np.zeros(tests))

    def rows(self, rows: np.ndarray) -> Sums:
        return Sums(self.n, self.units[rows], self.squares[rows], self.baseline[rows], self.alike[rows])


def llr_path(units: np.ndarray, bounds: SprtBounds, baseline: np.ndarray | None = None,
             before: Sums | None = None) -> np.ndarray:
    """The LLR of :func:`arena.stats.sprt.sprt_status` after each unit of every row of
    ``units`` (tests, sets), the baseline's mean game scores beside them (None: 0.5),
    continuing the running sums ``before`` of earlier sets of each row.

    >>> from arena.stats.sprt import sprt_status
    >>> u, b = simulate_sets(SimModel(), 0.3, (1, 40), True, np.random.default_rng(2))
    >>> path = llr_path(u, SprtBounds(0, 20), b)
    >>> bool(np.isclose(path[0, 29], sprt_status(u[0, :30], SprtBounds(0, 20), b[0, :30].mean()).llr))
    True
    """
    if baseline is None:
        baseline = np.full(units.shape, 0.5)
    start = before or Sums.empty(units.shape[0])
    n = start.n + np.arange(1, units.shape[1] + 1)
    sums = start.units[:, None] + np.cumsum(units, axis=1)
    squares = start.squares[:, None] + np.cumsum(units**2, axis=1)
    base = (start.baseline[:, None] + np.cumsum(baseline, axis=1)) / n
    alike = start.alike[:, None] + np.cumsum(np.abs(units - 0.5) <= ALIKE, axis=1)
    s0, s1 = unit_scores(bounds, base)
    mean = sums / n
    var = np.maximum(squares / n - mean**2, 0.0)
    spread = var > 1e-12
    llr = n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * np.where(spread, var, 1.0))
    llr = np.where(n - alike >= bounds.min_units, llr, 0.0)
    # No spread: the mean is exact, the nearer hypothesis holds (arena.results.sprt.test_llr).
    middle = (s0 + s1) / 2.0
    flat = np.where(mean > middle, bounds.upper, np.where(mean < middle, bounds.lower, 0.0))
    return np.where(n >= bounds.min_units, np.where(spread, llr, flat), 0.0)


@dataclass
class Runs:
    """Many SPRTs' outcomes: +1 H1, -1 H0, 0 undecided at MAX_SETS; the sets each used."""

    decisions: np.ndarray
    sets: np.ndarray

    @property
    def h1_rate(self) -> float:
        return float(np.mean(self.decisions == 1))

    @property
    def mean_sets(self) -> float:
        return float(self.sets.mean())


def run_sprts(model: SimModel, gap: float, bounds: SprtBounds, tests: int, duplicate: bool,
              rng: np.random.Generator, chunk: int = 64, max_sets: int = MAX_SETS) -> Runs:
    """Run ``tests`` SPRTs to their decision, all at once (a chunk of sets per active test at a time).

    >>> runs = run_sprts(SimModel(), 0.0, SprtBounds(0, 40), 20, True, np.random.default_rng(3))
    >>> bool((runs.decisions != 0).all()), bool((runs.sets >= 5).all())
    (True, True)
    """
    bounds.check()
    decisions = np.zeros(tests, dtype=int)
    used = np.zeros(tests, dtype=int)
    sums = Sums.empty(tests)
    active = np.arange(tests)
    while active.size and sums.n < max_sets:
        k = min(chunk, max_sets - sums.n)
        units, baseline = simulate_sets(model, gap, (active.size, k), duplicate, rng)
        llr = llr_path(units, bounds, baseline, sums.rows(active))
        crossed = (llr >= bounds.upper) | (llr <= bounds.lower)
        hit = crossed.any(axis=1)
        first = crossed.argmax(axis=1)
        stopped = active[hit]
        decisions[stopped] = np.where(llr[hit, first[hit]] >= bounds.upper, 1, -1)
        used[stopped] = sums.n + first[hit] + 1
        sums.units[active] += units.sum(axis=1)
        sums.squares[active] += (units**2).sum(axis=1)
        sums.baseline[active] += baseline.sum(axis=1)
        sums.alike[active] += (np.abs(units - 0.5) <= ALIKE).sum(axis=1)
        sums.n += k
        active = active[~hit]
        # Tests that last long run many more sets: bigger chunks, fewer numpy calls.
        chunk = min(4 * chunk, 1024) if sums.n >= 4 * chunk else chunk
    used[active] = sums.n
    return Runs(decisions, used)


def error_rates(model: SimModel, bounds: SprtBounds, tests: int, duplicate: bool,
                rng: np.random.Generator) -> dict[str, float]:
    """H1 accepted at elo0 (alpha) and at elo1 (power), sets needed at each, undecided tests."""
    at0 = run_sprts(model, calibrate_gap(model, bounds.elo0), bounds, tests, duplicate, rng)
    at1 = run_sprts(model, calibrate_gap(model, bounds.elo1), bounds, tests, duplicate, rng)
    return {"alpha": at0.h1_rate, "power": at1.h1_rate, "sets at elo0": at0.mean_sets,
            "sets at elo1": at1.mean_sets, "mean sets": (at0.mean_sets + at1.mean_sets) / 2.0,
            "undecided": int((at0.decisions == 0).sum() + (at1.decisions == 0).sum()),
            "stopped at the minimum": float(np.mean(np.r_[at0.sets, at1.sets] == bounds.min_units))}


def bench_sprt(tests: int = 1000, seed: int = 1, players: int = 4, elo0: float = 0.0, elo1: float = 20.0,
               luck: float = 1.0, noise: float = 1.0, alpha: float = 0.05, beta: float = 0.05,
               shared_luck: float = 1.0, alike: float = 0.0) -> dict[str, Any]:
    """The figures of ``arena bench sprt``: error rate at elo0, power at elo1, sets needed, both
    formats; and the scale check: the SPRT's Elo beside the leaderboard's on the same games."""
    started = time.perf_counter()
    model = SimModel(players=players, luck=luck, noise=noise, shared_luck=shared_luck, alike=alike)
    bounds = SprtBounds(elo0, elo1, alpha, beta)
    bounds.check()
    rng = np.random.default_rng(seed)
    gaps = {elo: calibrate_gap(model, elo) for elo in (elo0, elo1)}
    # The fixed-sample view of the same saving: how much less a duplicate unit varies.
    spread = {duplicate: float(simulate_units(model, gaps[elo0], (200_000,), duplicate, rng).var())
              for duplicate in (True, False)}
    board, estimate = fitted_board_elo(SimModel(players=players, luck=luck, noise=noise, shared_luck=shared_luck),
                                       calibrate_gap(SimModel(players=players, luck=luck, noise=noise), elo1),
                                       20_000, rng)
    figures: dict[str, Any] = {
        "model": (f"{players} seats, luck sd {luck:g} ({shared_luck:.0%} of it alike for both versions), "
                  f"noise sd {noise:g}, {alike:.0%} of sets played alike, opponents of the baseline's skill"),
        "test": f"elo0 {elo0:g}, elo1 {elo1:g}, alpha {alpha:g}, beta {beta:g} (the leaderboard's Elo)",
        "tests per case": tests,
        "seed": seed,
        "skill gap at elo0": round(gaps[elo0], 9) + 0.0,   # + 0.0: no "-0.0" from the bisection's last bit
        "skill gap at elo1": round(gaps[elo1], 9) + 0.0,
        "20000 sets at elo1: the board's Elo difference (Bradley-Terry fit)": board,
        "20000 sets at elo1: the SPRT's Elo estimate": estimate,
    }
    mean_sets: dict[str, float] = {}
    for name, duplicate in (("duplicate", True), ("independent", False)):
        rates = error_rates(model, bounds, tests, duplicate, rng)
        figures[f"{name}: H1 accepted at elo0 (alpha)"] = rates["alpha"]
        figures[f"{name}: H1 accepted at elo1 (power)"] = rates["power"]
        figures[f"{name}: undecided at {MAX_SETS} sets"] = rates["undecided"]
        figures[f"{name}: mean sets at elo0"] = rates["sets at elo0"]
        figures[f"{name}: mean sets at elo1"] = rates["sets at elo1"]
        mean_sets[name] = rates["mean sets"]
        figures[f"{name}: mean games (both hypotheses)"] = mean_sets[name] * 2 * players
    figures["duplicate / independent games"] = mean_sets["duplicate"] / mean_sets["independent"]
    figures["unit variance, duplicate / independent (200000 sets)"] = spread[True] / spread[False]
    figures["seconds"] = time.perf_counter() - started
    return figures


# The cases `arena bench sprt --cases` runs: (name, model options, elo1), elo0 0.
CASES: tuple[tuple[str, dict[str, float], float], ...] = (
    ("0/10", {}, 10.0),
    ("0/20", {}, 20.0),
    ("0/50", {}, 50.0),
    ("0/100", {}, 100.0),
    ("0/20, 75% of sets played alike", {"alike": 0.75}, 20.0),
    ("0/20, the cards favour the two versions independently", {"shared_luck": 0.0}, 20.0),
)


def bench_sprt_cases(tests: int = 500, seed: int = 1, players: int = 4) -> dict[str, Any]:
    """Error rates, sets needed and the duplicate saving in each of :data:`CASES`, and
    identical bots (every set alike): how they decide, and after how many sets."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    figures: dict[str, Any] = {"tests per case": tests, "seed": seed, "players": players}
    for name, options, elo1 in CASES:
        model = SimModel(players=players, **options)   # type: ignore[arg-type]
        bounds = SprtBounds(0.0, elo1)
        dup = error_rates(model, bounds, tests, True, rng)
        ind = error_rates(model, bounds, tests, False, rng)
        figures[f"{name}: alpha, power (duplicate)"] = f"{dup['alpha']:.3f}, {dup['power']:.3f}"
        figures[f"{name}: alpha, power (independent)"] = f"{ind['alpha']:.3f}, {ind['power']:.3f}"
        figures[f"{name}: mean sets duplicate / independent"] = (f"{dup['mean sets']:.1f} / {ind['mean sets']:.1f}"
                                                                 f" = {dup['mean sets'] / ind['mean sets']:.2f}")
        figures[f"{name}: duplicate tests stopped at the minimum ({bounds.min_units} sets)"] = \
            f"{dup['stopped at the minimum']:.2f}"
    identical = run_sprts(SimModel(players=players, alike=1.0), 0.0, SprtBounds(0.0, 20.0), tests, True, rng)
    figures["identical bots (every set alike), 0/20: H0 accepted"] = float(np.mean(identical.decisions == -1))
    figures["identical bots: sets to the decision"] = identical.mean_sets
    figures["seconds"] = time.perf_counter() - started
    return figures
