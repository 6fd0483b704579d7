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

A set's unit is :func:`arena.results.sprt.set_unit` of the seat's
:func:`~arena.results.sprt.game_score` s. Its expectation is the same in both
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

from arena.results.sprt import SprtBounds, logistic, phi

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

    def __post_init__(self) -> None:
        if not 3 <= self.players <= 6:
            raise ValueError(f"players must be 3..6, not {self.players}")
        if self.luck < 0 or self.noise <= 0:
            raise ValueError("luck must be >= 0 and noise > 0")
        if self.opponents and len(self.opponents) != self.players - 1:
            raise ValueError(f"opponents: {self.players - 1} skills needed, got {len(self.opponents)}")

    @property
    def opponent_skills(self) -> np.ndarray:
        return np.asarray(self.opponents or (0.0,) * (self.players - 1), dtype=float)

    @property
    def tau(self) -> float:
        """Spread of the difference of two seats' performances in one game."""
        return math.sqrt(2.0 * (self.luck**2 + self.noise**2))


def expected_unit(model: SimModel, gap: float) -> float:
    """E[unit] for a candidate ``gap`` stronger than the baseline (closed form).

    >>> expected_unit(SimModel(), 0.0)
    0.5
    >>> round(expected_unit(SimModel(), 100.0), 6)    # beats everyone; the baseline half
    0.75
    """
    o = model.opponent_skills
    cand = np.mean([phi((gap - x) / model.tau) for x in o])
    base = np.mean([phi(-x / model.tau) for x in o])
    return float(0.5 + (cand - base) / 2.0)


def calibrate_gap(model: SimModel, elo: float) -> float:
    """The skill gap whose expected unit is ``logistic(elo)`` (bisection; E[unit] rises with the gap).

    >>> model = SimModel()
    >>> abs(expected_unit(model, calibrate_gap(model, 20.0)) - logistic(20.0)) < 1e-12
    True
    """
    target = logistic(elo)
    low, high = -50.0 * model.tau, 50.0 * model.tau
    if not expected_unit(model, low) < target < expected_unit(model, high):
        raise ValueError(f"elo {elo:g} is out of this model's reach (expected unit {target:.4f})")
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if expected_unit(model, mid) < target:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def simulate_units(model: SimModel, gap: float, shape: tuple[int, ...], duplicate: bool,
                   rng: np.random.Generator) -> np.ndarray:
    """Units of ``shape`` independent sets (e.g. (tests, sets)).

    >>> u = simulate_units(SimModel(), 0.0, (3, 5), True, np.random.default_rng(1))
    >>> u.shape, bool(((u >= 0) & (u <= 1)).all())
    ((3, 5), True)
    """
    p = model.players
    # skills[b, r, pos]: bot b (0 candidate, 1 baseline) in the seat under test, which
    # sits at position r in rotation r; the opponents follow it round the table.
    skills = np.empty((2, p, p))
    opponents = model.opponent_skills
    for r in range(p):
        skills[:, r, r] = (gap, 0.0)
        for j, skill in enumerate(opponents):
            skills[:, r, (r + 1 + j) % p] = skill
    luck_shape = (*shape, 1, 1, p) if duplicate else (*shape, 2, p, p)
    perf = skills + model.luck * rng.standard_normal(luck_shape) + model.noise * rng.standard_normal((*shape, 2, p, p))
    rotation = np.arange(p)
    tested = perf[..., rotation, rotation]                    # (..., 2, p): the seat under test, by rotation
    ahead = (tested[..., None] > perf).sum(axis=-1) + 0.5 * ((tested[..., None] == perf).sum(axis=-1) - 1)
    scores = ahead / (p - 1)                                  # game_score of the seat, (..., 2, p)
    means = scores.mean(axis=-1)
    return np.asarray(0.5 + (means[..., 0] - means[..., 1]) / 2.0)


def mc_expected_unit(model: SimModel, gap: float, sets: int, rng: np.random.Generator) -> tuple[float, float]:
    """Monte Carlo mean unit and its standard error, to check :func:`expected_unit`."""
    units = simulate_units(model, gap, (sets,), True, rng)
    return float(units.mean()), float(units.std() / math.sqrt(sets))


def llr_path(units: np.ndarray, bounds: SprtBounds, n0: int = 0, sum0: np.ndarray | float = 0.0,
             sumsq0: np.ndarray | float = 0.0) -> np.ndarray:
    """The LLR of :func:`arena.results.sprt.sprt_status` after each unit of every row of
    ``units`` (tests, sets), continuing running sums of ``n0`` earlier units per row.

    >>> from arena.results.sprt import sprt_status
    >>> u = simulate_units(SimModel(), 0.3, (1, 40), True, np.random.default_rng(2))
    >>> bool(np.isclose(llr_path(u, SprtBounds(0, 20))[0, 29], sprt_status(u[0, :30], SprtBounds(0, 20)).llr))
    True
    """
    s0, s1 = bounds.scores
    n = n0 + np.arange(1, units.shape[1] + 1)
    sums = np.asarray(sum0)[..., None] + np.cumsum(units, axis=1)
    sumsqs = np.asarray(sumsq0)[..., None] + np.cumsum(units**2, axis=1)
    mean = sums / n
    var = np.maximum(sumsqs / n - mean**2, 0.0)
    ok = (n >= bounds.min_units) & (var > 1e-12)
    llr = n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * np.where(ok, var, 1.0))
    return np.where(ok, llr, 0.0)


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
    sums, sumsqs = np.zeros(tests), np.zeros(tests)
    active = np.arange(tests)
    n = 0
    while active.size and n < max_sets:
        k = min(chunk, max_sets - n)
        units = simulate_units(model, gap, (active.size, k), duplicate, rng)
        llr = llr_path(units, bounds, n, sums[active], sumsqs[active])
        crossed = (llr >= bounds.upper) | (llr <= bounds.lower)
        hit = crossed.any(axis=1)
        first = crossed.argmax(axis=1)
        stopped = active[hit]
        decisions[stopped] = np.where(llr[hit, first[hit]] >= bounds.upper, 1, -1)
        used[stopped] = n + first[hit] + 1
        sums[active] += units.sum(axis=1)
        sumsqs[active] += (units**2).sum(axis=1)
        n += k
        active = active[~hit]
        # Tests that last long run many more sets: bigger chunks, fewer numpy calls.
        chunk = min(4 * chunk, 1024) if n >= 4 * chunk else chunk
    used[active] = n
    return Runs(decisions, used)


def bench_sprt(tests: int = 1000, seed: int = 1, players: int = 4, elo0: float = 0.0, elo1: float = 20.0,
               luck: float = 1.0, noise: float = 1.0, alpha: float = 0.05, beta: float = 0.05) -> dict[str, Any]:
    """The figures of ``arena bench sprt``: error rate at elo0, power at elo1, sets needed, both formats."""
    started = time.perf_counter()
    model = SimModel(players=players, luck=luck, noise=noise)
    bounds = SprtBounds(elo0, elo1, alpha, beta)
    bounds.check()
    rng = np.random.default_rng(seed)
    gaps = {elo: calibrate_gap(model, elo) for elo in (elo0, elo1)}
    check_mean, check_se = mc_expected_unit(model, gaps[elo1], 200_000, rng)
    # The fixed-sample view of the same saving: how much less a duplicate unit varies.
    spread = {duplicate: float(simulate_units(model, gaps[elo0], (200_000,), duplicate, rng).var())
              for duplicate in (True, False)}
    figures: dict[str, Any] = {
        "model": f"{players} seats, luck sd {luck:g}, noise sd {noise:g}, opponents of the baseline's skill",
        "test": f"elo0 {elo0:g}, elo1 {elo1:g}, alpha {alpha:g}, beta {beta:g}",
        "tests per case": tests,
        "seed": seed,
        "skill gap at elo0": round(gaps[elo0], 9) + 0.0,   # + 0.0: no "-0.0" from the bisection's last bit
        "skill gap at elo1": round(gaps[elo1], 9) + 0.0,
        "expected unit at elo1": logistic(elo1),
        "simulated unit at elo1 (200000 sets)": check_mean,
        "its standard error": check_se,
    }
    mean_sets: dict[str, float] = {}
    for name, duplicate in (("duplicate", True), ("independent", False)):
        at0 = run_sprts(model, gaps[elo0], bounds, tests, duplicate, rng)
        at1 = run_sprts(model, gaps[elo1], bounds, tests, duplicate, rng)
        figures[f"{name}: H1 accepted at elo0 (alpha)"] = at0.h1_rate
        figures[f"{name}: H1 accepted at elo1 (power)"] = at1.h1_rate
        figures[f"{name}: undecided at {MAX_SETS} sets"] = int((at0.decisions == 0).sum() + (at1.decisions == 0).sum())
        figures[f"{name}: mean sets at elo0"] = at0.mean_sets
        figures[f"{name}: mean sets at elo1"] = at1.mean_sets
        mean_sets[name] = (at0.mean_sets + at1.mean_sets) / 2.0
        figures[f"{name}: mean games (both hypotheses)"] = mean_sets[name] * 2 * players
    figures["duplicate / independent games"] = mean_sets["duplicate"] / mean_sets["independent"]
    figures["unit variance, duplicate / independent (200000 sets)"] = spread[True] / spread[False]
    figures["seconds"] = time.perf_counter() - started
    return figures
