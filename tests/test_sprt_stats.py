"""The duplicate SPRT's statistics (arena.results.sprt) and their simulation (arena.bench.sprt_sim)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bench.sprt_sim import (
    SimModel,
    calibrate_gap,
    expected_unit,
    llr_path,
    mc_expected_unit,
    run_sprts,
    simulate_units,
)
from arena.results.sprt import MIN_UNITS, SprtBounds, game_score, llr_exact, llr_normal, logistic, set_unit, sprt_status

S20 = 0.5287505638922686   # 1 / (1 + 10 ** (-20 / 400)), fishtest's L_(20)
# A pentanomial-like sample: counts of the units 0, 1/4, 1/2, 3/4, 1.
PENTA = (3, 12, 30, 14, 5)
PENTA_UNITS = [i / 4 for i, count in enumerate(PENTA) for _ in range(count)]


# ------------------------------------------------------------------ bounds

def test_bounds_are_walds() -> None:
    b = SprtBounds(0, 20, alpha=0.05, beta=0.1)
    assert b.lower == pytest.approx(math.log(0.1 / 0.95))
    assert b.upper == pytest.approx(math.log(0.9 / 0.05))
    assert b.scores == pytest.approx((0.5, S20))
    b.check()


@pytest.mark.parametrize("kwargs, word", [
    ({"elo0": 10, "elo1": 10}, "elo0"),
    ({"elo0": 10, "elo1": 0}, "elo0"),
    ({"elo0": 0, "elo1": 10, "alpha": 0.0}, "alpha"),
    ({"elo0": 0, "elo1": 10, "alpha": 0.5}, "alpha"),
    ({"elo0": 0, "elo1": 10, "beta": -0.1}, "beta"),
    ({"elo0": 0, "elo1": 10, "beta": 0.7}, "beta"),
    ({"elo0": math.nan, "elo1": 10}, "elo0"),
    ({"elo0": 0, "elo1": 10, "min_units": 1}, "min_units"),
])
def test_bad_bounds_raise_one_line(kwargs: dict[str, float], word: str) -> None:
    with pytest.raises(ValueError, match=word) as raised:
        SprtBounds(**kwargs).check()   # type: ignore[arg-type]
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError):
        sprt_status([0.5] * 40, SprtBounds(**kwargs))   # type: ignore[arg-type]


# ------------------------------------------------------------------ scores and units

def test_game_score_counts_ties_half() -> None:
    assert game_score([1, 2, 3, 4], 0) == 1.0
    assert game_score([1, 2, 3, 4], 2) == pytest.approx(1 / 3)
    assert game_score([1, 1, 3], 0) == 0.75          # level with seat 1, ahead of seat 2
    assert game_score([2, 2, 2, 2, 2], 3) == 0.5     # everyone shares the place
    assert game_score([3, 1, 1, 3, 5, 6], 3) == pytest.approx((0.5 + 2) / 5)
    for bad_seat in (-1, 4):
        with pytest.raises(ValueError):
            game_score([1, 2, 3, 4], bad_seat)
    with pytest.raises(ValueError):
        game_score([1], 0)


def test_set_unit() -> None:
    assert set_unit([0.5] * 4, [0.5] * 4) == 0.5
    assert set_unit([1.0] * 4, [0.0] * 4) == 1.0
    assert set_unit([0.0] * 3, [1.0] * 3) == 0.0
    assert set_unit([1.0, 2 / 3, 1 / 3], [2 / 3, 1 / 3, 0.0]) == pytest.approx(0.5 + (2 / 3 - 1 / 3) / 2)
    with pytest.raises(ValueError):
        set_unit([], [0.5])
    with pytest.raises(ValueError):
        set_unit([1.5], [0.5])


# ------------------------------------------------------------------ the LLR and the status

def test_llr_matches_a_hand_computation() -> None:
    units = [0.5] * 15 + [0.6] * 15                  # n 30, mean 0.55, variance 0.0025
    hand = 30 * (S20 - 0.5) * (2 * 0.55 - 0.5 - S20) / (2 * 0.0025)
    status = sprt_status(units, SprtBounds(0, 20))
    assert status.llr == pytest.approx(hand, rel=1e-9)
    assert llr_normal(30, 0.55, 0.0025, 0.5, S20) == pytest.approx(hand, rel=1e-9)
    assert status.decision == "H1" and hand > math.log(0.95 / 0.05)


def test_llr_matches_fishtest() -> None:
    # fishtest server/fishtest/stats/LLRcalc.py (commit b8eecff2), run on PENTA with elo0 0, elo1 20:
    # N * LLR_alt2(pdf, s0, s1) and LLR_logistic(0, 20, PENTA); no bucket is empty, so no regularization.
    bounds = SprtBounds(0, 20)
    assert sprt_status(PENTA_UNITS, bounds).llr == pytest.approx(0.2972797156012775, rel=1e-9)
    assert llr_exact(PENTA_UNITS, bounds) == pytest.approx(0.2965376527321375, rel=1e-6)


def test_exact_and_normal_llr_agree_near_the_bounds() -> None:
    rng = np.random.default_rng(5)
    bounds = SprtBounds(0, 10)
    for mean in (0.49, 0.5, 0.507, 0.515, 0.52):
        units = np.clip(rng.normal(mean, 0.15, 400), 0, 1)
        normal, exact = sprt_status(list(units), bounds).llr, llr_exact(list(units), bounds)
        assert abs(normal - exact) <= 0.05 * abs(exact) + 0.05, (mean, normal, exact)


def test_no_decision_before_min_units_or_without_variance() -> None:
    bounds = SprtBounds(0, 20)
    strong = [0.9, 1.0] * 50
    assert sprt_status(strong[:MIN_UNITS - 1], bounds).llr == 0.0
    assert sprt_status(strong[:MIN_UNITS - 1], bounds).decision is None
    assert sprt_status(strong[:MIN_UNITS], bounds).decision == "H1"
    assert sprt_status(strong[:6], SprtBounds(0, 20, min_units=5)).decision == "H1"
    flat = sprt_status([0.75] * 100, bounds)
    assert (flat.llr, flat.decision, flat.los) == (0.0, None, 1.0)
    assert math.isnan(flat.elo_low) and math.isnan(flat.elo_high)
    assert flat.elo == pytest.approx(400 * math.log10(3))


def test_decisions_both_ways() -> None:
    bounds = SprtBounds(0, 20)
    assert sprt_status([0.45, 0.55] * 200, bounds).decision == "H0"      # mean 0.5: elo 0 holds
    assert sprt_status([0.5, 0.6] * 200, bounds).decision == "H1"
    assert sprt_status([0.4, 0.6] * 20, bounds).decision is None


def test_elo_interval_and_los_by_hand() -> None:
    units = [0.4, 0.5, 0.6, 0.7] * 10                 # mean 0.55, variance 0.0125
    s = sprt_status(units, SprtBounds(0, 20))
    se = math.sqrt(0.0125 / 40)

    def elo(x: float) -> float:
        return -400 * math.log10(1 / x - 1)

    assert s.units == 40 and s.lower == pytest.approx(-2.944439) and s.upper == pytest.approx(2.944439)
    assert s.elo == pytest.approx(elo(0.55))
    assert s.elo_low == pytest.approx(elo(0.55 - 1.959964 * se), rel=1e-5)
    assert s.elo_high == pytest.approx(elo(0.55 + 1.959964 * se), rel=1e-5)
    assert s.los == pytest.approx(0.5 * math.erfc(-(0.05 / se) / math.sqrt(2)))
    empty = sprt_status([], SprtBounds(0, 20))
    assert empty.units == 0 and empty.decision is None and math.isnan(empty.elo) and empty.los == 0.5
    assert math.isnan(sprt_status([1.0, 1.0, 0.8], SprtBounds(0, 20)).elo_high)   # beyond a score of 1


def test_units_must_be_scores() -> None:
    for bad in ([0.5, 1.2], [math.nan], [-0.1]):
        with pytest.raises(ValueError):
            sprt_status(bad, SprtBounds(0, 20))


# ------------------------------------------------------------------ the simulation

def test_calibration_is_exact_and_the_simulation_agrees() -> None:
    model = SimModel(players=5, opponents=(0.3, -0.2, 0.0, 0.5))
    for elo in (-15.0, 0.0, 20.0):
        gap = calibrate_gap(model, elo)
        assert expected_unit(model, gap) == pytest.approx(logistic(elo), abs=1e-12)
        mean, se = mc_expected_unit(model, gap, 100_000, np.random.default_rng(int(elo) + 100))
        assert abs(mean - logistic(elo)) < 4 * se
    with pytest.raises(ValueError):
        calibrate_gap(SimModel(), 400.0)     # the best a candidate can do here is a unit of 0.75


def test_simulated_units_share_the_luck_only_in_duplicate() -> None:
    model, rng = SimModel(luck=2.0, noise=0.5), np.random.default_rng(9)
    duplicate = simulate_units(model, 0.0, (20_000,), True, rng)
    independent = simulate_units(model, 0.0, (20_000,), False, rng)
    assert duplicate.var() < 0.6 * independent.var()
    assert abs(duplicate.mean() - 0.5) < 0.005 and abs(independent.mean() - 0.5) < 0.005


def test_the_simulated_llr_is_sprt_status_llr() -> None:
    units = simulate_units(SimModel(), 0.2, (3, 80), True, np.random.default_rng(4))
    bounds = SprtBounds(0, 20)
    path = llr_path(units, bounds)
    for row in range(3):
        for k in (1, MIN_UNITS - 1, MIN_UNITS, 57, 80):
            assert path[row, k - 1] == pytest.approx(sprt_status(list(units[row, :k]), bounds).llr, rel=1e-9, abs=1e-12)


def error_rates(model: SimModel, bounds: SprtBounds, tests: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    gap0, gap1 = calibrate_gap(model, bounds.elo0), calibrate_gap(model, bounds.elo1)
    figures: dict[str, float] = {}
    for name, duplicate in (("duplicate", True), ("independent", False)):
        at0 = run_sprts(model, gap0, bounds, tests, duplicate, rng)
        at1 = run_sprts(model, gap1, bounds, tests, duplicate, rng)
        assert (at0.decisions != 0).all() and (at1.decisions != 0).all()
        figures[f"{name} alpha"] = at0.h1_rate
        figures[f"{name} power"] = at1.h1_rate
        figures[f"{name} sets"] = (at0.mean_sets + at1.mean_sets) / 2
    figures["ratio"] = figures["duplicate sets"] / figures["independent sets"]
    return figures


def test_the_sprt_keeps_its_error_rates_and_duplicate_deals_save_games() -> None:
    bounds = SprtBounds(0, 20)
    figures = error_rates(SimModel(), bounds, tests=2000, seed=1)
    for name in ("duplicate", "independent"):
        assert figures[f"{name} alpha"] <= bounds.alpha + 0.02, figures
        assert figures[f"{name} power"] >= 1 - bounds.beta - 0.02, figures
    # Luck and play as spread as each other: duplicate sets need ~0.62 as many games.
    assert figures["ratio"] <= 0.7, figures
    # Luck the larger part of a game (as in a card game): at most 0.6.
    assert error_rates(SimModel(luck=1.5), bounds, tests=1000, seed=2)["ratio"] <= 0.6


@pytest.mark.slow
@pytest.mark.parametrize("players, elo0, elo1", [(3, 0, 20), (6, 0, 20), (4, 0, 10), (5, -10, 10)])
def test_the_error_rates_hold_elsewhere(players: int, elo0: float, elo1: float) -> None:
    bounds = SprtBounds(elo0, elo1)
    figures = error_rates(SimModel(players=players), bounds, tests=3000, seed=players)
    for name in ("duplicate", "independent"):
        assert figures[f"{name} alpha"] <= bounds.alpha + 0.02, figures
        assert figures[f"{name} power"] >= 1 - bounds.beta - 0.02, figures
