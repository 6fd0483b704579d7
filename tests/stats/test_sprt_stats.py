"""The duplicate SPRT's statistics (arena.stats.sprt) and their simulation (arena.bench.sprt_sim)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bench.sprt_sim import (
    SimModel,
    board_elo,
    calibrate_gap,
    expected_scores,
    expected_unit,
    fitted_board_elo,
    llr_path,
    mc_expected_unit,
    run_sprts,
    simulate_sets,
    simulate_units,
)
from arena.stats.sprt import (
    MIN_UNITS,
    SprtBounds,
    SprtMonitor,
    SprtSettings,
    bounds_of,
    default_min_units,
    game_score,
    llr_exact,
    llr_normal,
    set_unit,
    sprt_status,
    unit_elo,
    unit_score,
)

S20 = 0.5287505638922686   # 1 / (1 + 10 ** (-20 / 400)), fishtest's L_(20)
# A pentanomial-like sample: counts of the units 0, 1/4, 1/2, 3/4, 1.
PENTA = (3, 12, 30, 14, 5)
PENTA_UNITS = [i / 4 for i, count in enumerate(PENTA) for _ in range(count)]


# ------------------------------------------------------------------ bounds

def test_bounds_are_walds() -> None:
    b = SprtBounds(0, 20, alpha=0.05, beta=0.1)
    assert b.lower == pytest.approx(math.log(0.1 / 0.95))
    assert b.upper == pytest.approx(math.log(0.9 / 0.05))
    assert b.scores() == pytest.approx((0.5, 0.5 + (S20 - 0.5) / 2))     # the leaderboard's Elo, baseline 0.5
    assert b.min_units == MIN_UNITS
    b.check()


def test_the_minimum_of_sets_is_smaller_for_wide_tests() -> None:
    assert [default_min_units(0, w) for w in (10, 20, 33, 50, 100, 400)] == [30, 30, 30, 20, 10, 10]
    assert SprtBounds(0, 100).min_units == 10 and SprtBounds(0, 100, min_units=30).min_units == 30


# ------------------------------------------------------------------ one Elo scale

def test_unit_scores_are_the_leaderboards_elo() -> None:
    """A candidate d above a baseline whose mean game score is b beats the opponents
    logistic(d + elo_of(b)) of the time, as the leaderboard's Bradley–Terry model says."""
    for b in (0.3, 0.5, 0.62):
        for d in (-40.0, 0.0, 20.0, 100.0):
            assert unit_elo(unit_score(d, b), b) == pytest.approx(d, abs=1e-9)
    assert unit_score(20.0) == pytest.approx(0.25 + S20 / 2)


@pytest.mark.parametrize("model", [SimModel(), SimModel(players=5, opponents=(0.3, -0.2, 0.0, 0.5)),
                                   SimModel(players=3, luck=2.0, noise=0.5)])
def test_the_sprt_estimate_is_the_boards_difference_on_the_same_games(model: SimModel) -> None:
    """Simulated A/B test games rated by the leaderboard's own Bradley–Terry fit: the
    test's Elo estimate on the same sets is the board's difference, within 1.5 Elo."""
    board, estimate = fitted_board_elo(model, calibrate_gap(model, 30.0), 20_000, np.random.default_rng(3))
    assert estimate == pytest.approx(board, abs=1.5)
    assert board == pytest.approx(30.0, abs=6.0)     # and what the calibration aimed at


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
    units = [0.52] * 15 + [0.58] * 15                # n 30, mean 0.55, variance 0.0009
    s1 = unit_score(20.0)
    hand = 30 * (s1 - 0.5) * (2 * 0.55 - 0.5 - s1) / (2 * 0.0009)
    status = sprt_status(units, SprtBounds(0, 20))
    assert status.llr == pytest.approx(hand, rel=1e-9)
    assert llr_normal(30, 0.55, 0.0009, 0.5, s1) == pytest.approx(hand, rel=1e-9)
    assert status.decision == "H1" and hand > math.log(0.95 / 0.05)


def test_llr_matches_fishtest() -> None:
    # fishtest server/fishtest/stats/LLRcalc.py (commit b8eecff2), run on PENTA with elo0 0, elo1 20:
    # N * LLR_alt2(pdf, s0, s1) and LLR_logistic(0, 20, PENTA); no bucket is empty, so no regularization.
    # The formulas are fishtest's; the scores are fishtest's (a unit of logistic(elo)).
    units = np.asarray(PENTA_UNITS)
    normal = llr_normal(len(units), float(units.mean()), float(units.var()), 0.5, S20)
    assert normal == pytest.approx(0.2972797156012775, rel=1e-9)
    assert llr_exact(PENTA_UNITS, SprtBounds(0, 20), scores=(0.5, S20)) == pytest.approx(0.2965376527321375, rel=1e-6)


def test_exact_and_normal_llr_agree_near_the_bounds() -> None:
    rng = np.random.default_rng(5)
    bounds = SprtBounds(0, 10)
    for mean in (0.49, 0.5, 0.504, 0.507, 0.51):
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
    flat = sprt_status([0.6] * 100, bounds)      # no spread: the mean is exact, H1's side
    assert (flat.llr, flat.decision, flat.los) == (bounds.upper, "H1", 1.0)
    assert math.isnan(flat.elo_low) and math.isnan(flat.elo_high)
    assert flat.elo == pytest.approx(400 * math.log10(0.7 / 0.3))


def test_identical_bots_accept_h0_and_mostly_alike_sets_wait() -> None:
    bounds = SprtBounds(0, 20)
    assert sprt_status([0.5] * (MIN_UNITS - 1), bounds).decision is None
    identical = sprt_status([0.5] * MIN_UNITS, bounds)
    assert (identical.decision, identical.llr, identical.alike) == ("H0", bounds.lower, MIN_UNITS)
    # 29 sets alike and one not: the spread rests on one set, so the test waits for 30 that differ.
    assert sprt_status([0.5] * 29 + [0.7], bounds).decision is None
    differing = [0.4, 0.6, 0.55, 0.45] * 8
    assert sprt_status([0.5] * 90 + differing[:29], bounds).llr == 0.0
    assert sprt_status([0.5] * 90 + differing[:30], bounds).llr != 0.0


def test_decisions_both_ways() -> None:
    bounds = SprtBounds(0, 20)
    assert sprt_status([0.45, 0.55] * 200, bounds).decision == "H0"      # mean 0.5: elo 0 holds
    assert sprt_status([0.5, 0.6] * 200, bounds).decision == "H1"
    assert sprt_status([0.4, 0.6] * 20, bounds).decision is None


def test_elo_interval_and_los_by_hand() -> None:
    units = [0.4, 0.5, 0.6, 0.7] * 10                 # mean 0.55, variance 0.0125
    s = sprt_status(units, SprtBounds(0, 20))
    se = math.sqrt(0.0125 / 40)

    def elo(x: float) -> float:     # the leaderboard's Elo of a mean unit, the baseline at 0.5
        return -400 * math.log10(1 / (2 * x - 0.5) - 1)

    assert s.units == 40 and s.lower == pytest.approx(-2.944439) and s.upper == pytest.approx(2.944439)
    assert s.elo == pytest.approx(elo(0.55))
    assert s.elo_low == pytest.approx(elo(0.55 - 1.959964 * se), rel=1e-5)
    assert s.elo_high == pytest.approx(elo(0.55 + 1.959964 * se), rel=1e-5)
    assert s.los == pytest.approx(0.5 * math.erfc(-(0.05 / se) / math.sqrt(2)))
    empty = sprt_status([], SprtBounds(0, 20))
    assert empty.units == 0 and empty.decision is None and math.isnan(empty.elo) and empty.los == 0.5
    assert math.isnan(sprt_status([0.75, 0.75, 0.7], SprtBounds(0, 20)).elo_high)   # beyond a game score of 1


def test_units_must_be_scores() -> None:
    for bad in ([0.5, 1.2], [math.nan], [-0.1]):
        with pytest.raises(ValueError):
            sprt_status(bad, SprtBounds(0, 20))


# ------------------------------------------------------------------ the simulation

def test_calibration_is_exact_and_the_simulation_agrees() -> None:
    model = SimModel(players=5, opponents=(0.3, -0.2, 0.0, 0.5))
    for elo in (-15.0, 0.0, 20.0):
        gap = calibrate_gap(model, elo)
        assert board_elo(model, gap) == pytest.approx(elo, abs=1e-9)
        assert expected_unit(model, gap) == pytest.approx(unit_score(elo, expected_scores(model, gap)[1]), abs=1e-12)
        mean, se = mc_expected_unit(model, gap, 100_000, np.random.default_rng(int(elo) + 100))
        assert abs(mean - expected_unit(model, gap)) < 4 * se
    with pytest.raises(ValueError):
        calibrate_gap(SimModel(), 1000.0)     # beyond a game score of 0.99


def test_simulated_units_share_the_luck_only_in_duplicate() -> None:
    model, rng = SimModel(luck=2.0, noise=0.5), np.random.default_rng(9)
    duplicate = simulate_units(model, 0.0, (20_000,), True, rng)
    independent = simulate_units(model, 0.0, (20_000,), False, rng)
    assert duplicate.var() < 0.6 * independent.var()
    assert abs(duplicate.mean() - 0.5) < 0.005 and abs(independent.mean() - 0.5) < 0.005


@pytest.mark.parametrize("model", [SimModel(), SimModel(alike=0.6), SimModel(alike=1.0),
                                   SimModel(players=5, opponents=(0.3, -0.2, 0.0, 0.5))])
def test_the_simulated_llr_is_sprt_status_llr(model: SimModel) -> None:
    units, baseline = simulate_sets(model, 0.1, (3, 120), True, np.random.default_rng(4))
    bounds = SprtBounds(0, 20)
    path = llr_path(units, bounds, baseline)
    for row in range(3):
        for k in (1, MIN_UNITS - 1, MIN_UNITS, 57, 80, 120):
            expected = sprt_status(list(units[row, :k]), bounds, float(baseline[row, :k].mean())).llr
            assert path[row, k - 1] == pytest.approx(expected, rel=1e-9, abs=1e-12)


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
@pytest.mark.parametrize("players, elo0, elo1", [(3, 0, 20), (6, 0, 40), (4, 0, 50), (4, 0, 100), (5, -20, 20)])
def test_the_error_rates_hold_elsewhere(players: int, elo0: float, elo1: float) -> None:
    bounds = SprtBounds(elo0, elo1)
    figures = error_rates(SimModel(players=players), bounds, tests=2000, seed=players)
    for name in ("duplicate", "independent"):
        assert figures[f"{name} alpha"] <= bounds.alpha + 0.02, figures
        assert figures[f"{name} power"] >= 1 - bounds.beta - 0.02, figures


@pytest.mark.slow
def test_the_error_rates_hold_when_most_sets_are_alike_or_luck_is_not_shared() -> None:
    bounds = SprtBounds(0, 20)
    for model in (SimModel(alike=0.75), SimModel(shared_luck=0.0)):
        figures = error_rates(model, bounds, tests=1000, seed=7)
        assert figures["duplicate alpha"] <= bounds.alpha + 0.02, figures
        assert figures["duplicate power"] >= 1 - bounds.beta - 0.02, figures


def test_identical_bots_always_accept_h0_at_the_minimum() -> None:
    runs = run_sprts(SimModel(alike=1.0), 0.0, SprtBounds(0, 20), 200, True, np.random.default_rng(8))
    assert (runs.decisions == -1).all() and (runs.sets == MIN_UNITS).all()


# ------------------------------------------------------------------ a stored test

def test_an_aborted_game_leaves_its_set_out_and_the_test_goes_on() -> None:
    """An aborted match is stored with every seat first; its slot is never played again.
    Its set is left out (not half a point), and the sets after it still count."""
    players, bots = 3, ["new", "x", "y"]
    monitor = SprtMonitor("new", "old", players, SprtBounds(0, 20))
    for index in range(3 * 2 * players):               # three sets, every game the tested seat wins
        seated = ["new" if index % 2 == 0 else "old", "x", "y"]
        aborted = index == 7                             # in set 1
        monitor.add(index, seated, [1, 1, 1] if aborted else [1, 2, 3], completed=not aborted)
    assert len(monitor.units()) == 2 and monitor.void == {7}
    assert monitor.units() == [0.5, 0.5] and bots


def test_a_stored_test_of_the_old_scale_keeps_its_meaning() -> None:
    old = bounds_of(SprtSettings.from_json({"candidate": "a", "baseline": "b", "elo0": 0, "elo1": 10,
                                            "alpha": 0.05, "beta": 0.05}))
    assert old.scores()[1] == pytest.approx(1 / (1 + 10 ** (-10 / 400)))      # the unit it meant
    new = bounds_of(SprtSettings("a", "b", 0, 10))
    assert new.elo1 == 10
