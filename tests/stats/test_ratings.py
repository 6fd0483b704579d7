"""Online Elo (arena.stats.elo) and the Bradley–Terry fit with its bootstrap (arena.stats.ratings)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.stats.elo import elo_deltas, elo_update, k_factor, pair_score
from arena.stats.ratings import (
    ELO_SCALE,
    _fit_strengths,
    _log_likelihood,
    fit_bradley_terry,
    pairwise_from_outcomes,
    pairwise_games,
    rate,
)

# --------------------------------------------------------------------------------------
# Online Elo
# --------------------------------------------------------------------------------------


def test_two_player_known_values() -> None:
    after = elo_update([1200.0, 1000.0], places=[1, 2], ks=[32.0, 32.0])
    assert after == pytest.approx([1207.688, 992.312], abs=1e-3)


def test_n_player_update_is_pairwise_with_k_over_n_minus_1() -> None:
    ratings = [1600.0, 1500.0, 1400.0, 1450.0]
    places = [2, 1, 4, 3]
    ks = [32.0, 16.0, 32.0, 32.0]
    deltas = elo_deltas(ratings, places, ks)
    for a in range(4):
        expected = sum(
            pair_score(places[a], places[b]) - 1 / (1 + 10 ** ((ratings[b] - ratings[a]) / 400))
            for b in range(4) if b != a
        ) * ks[a] / 3
        assert deltas[a] == pytest.approx(expected)
    # Equal K everywhere: what one seat wins the others lose.
    equal = elo_deltas(ratings, places, [32.0] * 4)
    assert sum(equal) == pytest.approx(0.0, abs=1e-9)


def test_shared_places_count_half() -> None:
    assert pair_score(2, 2) == 0.5
    assert elo_update([1500.0, 1500.0], [1, 1], [32.0, 32.0]) == [1500.0, 1500.0]
    # First alone, two sharing second: 16 for the winner, -8 each for the others.
    assert elo_deltas([1500.0] * 3, [1, 2, 2], [32.0] * 3) == pytest.approx([16.0, -8.0, -8.0])


def test_k_switches_after_30_games() -> None:
    assert [k_factor(g) for g in (0, 1, 29)] == [32.0, 32.0, 32.0]
    assert [k_factor(g) for g in (30, 31, 500)] == [16.0, 16.0, 16.0]


def test_one_bot_in_two_seats_does_not_play_itself() -> None:
    deltas = elo_deltas([1500.0] * 3, [1, 2, 3], [32.0] * 3, owners=["a", "a", "b"])
    # Seat 0 is compared only with seat 2 (b), seat 1 only with seat 2.
    assert deltas[0] == pytest.approx(32 / 2 * 0.5)
    assert deltas[1] == pytest.approx(32 / 2 * 0.5)
    assert deltas[2] == pytest.approx(32 / 2 * -1.0)


# --------------------------------------------------------------------------------------
# Bradley–Terry
# --------------------------------------------------------------------------------------


def test_bradley_terry_known_values() -> None:
    # A beats B 75%, B beats C 75%, A beats C 90%: ln 3 and ln 9 apart, i.e. ±190.849 Elo.
    wins = np.array([[0, 75, 90], [25, 0, 75], [10, 25, 0]], dtype=float)
    ratings = fit_bradley_terry(wins, prior_games=0)
    relative = ratings - ratings[1]
    assert relative == pytest.approx([190.849, 0.0, -190.849], abs=0.01)
    assert ratings.mean() == pytest.approx(0.0, abs=1e-9)


def test_bradley_terry_from_matches_matches_the_matrix() -> None:
    # The same results as two-player matches, seat order mixed.
    keys, bots, places = [], [], []
    key = 0
    for winner, loser, count in ((0, 1, 75), (1, 0, 25), (1, 2, 75), (2, 1, 25), (0, 2, 90), (2, 0, 10)):
        for _ in range(count):
            pair = [(winner, 1), (loser, 2)] if key % 2 else [(loser, 2), (winner, 1)]
            for bot, place in pair:
                keys.append(key)
                bots.append(bot)
                places.append(place)
            key += 1
    games = pairwise_games(keys, bots, places, n_bots=3)
    assert games.matches == 300
    ratings = fit_bradley_terry(games.wins(), prior_games=0)
    assert ratings - ratings[1] == pytest.approx([190.849, 0.0, -190.849], abs=0.01)


def test_outcomes_and_seat_rows_give_the_same_games() -> None:
    rng = random.Random(3)
    keys, bots, places = [], [], []
    for match in range(200):
        table = rng.sample(range(6), 4)
        finish = [1, 2, 2, 4] if match % 5 == 0 else [1, 2, 3, 4]
        rng.shuffle(finish)
        for bot, place in zip(table, finish):
            keys.append(match)
            bots.append(bot)
            places.append(place)
    from_rows = pairwise_games(keys, bots, places, n_bots=6)
    outcomes: dict[tuple[tuple[int, int], ...], int] = {}
    for match in range(200):
        seats = tuple(sorted((bots[i], places[i]) for i in range(len(keys)) if keys[i] == match))
        outcomes[seats] = outcomes.get(seats, 0) + 1
    from_outcomes = pairwise_from_outcomes([(list(k), n) for k, n in outcomes.items()], n_bots=6)
    assert from_outcomes.matches == from_rows.matches == 200
    assert np.array_equal(from_outcomes.wins(), from_rows.wins())
    # Every match adds 6 pairwise games in total.
    assert from_rows.wins().sum() == pytest.approx(200 * 6)


def test_fit_is_independent_of_match_order() -> None:
    rng = random.Random(5)
    rows = []
    for match in range(300):
        table = rng.sample(range(5), 3)
        rows += [(match, bot, place) for bot, place in zip(table, rng.sample([1, 2, 3], 3))]
    shuffled = rows[:]
    rng.shuffle(shuffled)
    first = fit_bradley_terry(pairwise_games(*zip(*rows), n_bots=5).wins())
    second = fit_bradley_terry(pairwise_games(*zip(*shuffled), n_bots=5).wins())
    assert first == pytest.approx(second, abs=1e-9)


def test_prior_keeps_perfect_records_finite() -> None:
    wins = np.array([[0, 20, 20], [0, 0, 10], [0, 10, 0]], dtype=float)   # bot 0 never lost
    ratings = fit_bradley_terry(wins)
    assert np.all(np.isfinite(ratings))
    assert ratings[0] > 300 > 0 > ratings[1]
    # A bot with no games at all sits at the mean... of the prior: 0 before centring.
    lonely = fit_bradley_terry(np.array([[0, 5, 0], [5, 0, 0], [0, 0, 0]], dtype=float))
    assert lonely == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)


def _simulated_games(matches: int, seed: int) -> tuple[np.ndarray, list[float]]:
    """Four bots of known strength at 4-player tables; places by noisy performance."""
    rng = np.random.default_rng(seed)
    strength = np.array([0.6, 0.2, -0.2, -0.6])
    performance = strength + rng.gumbel(size=(matches, 4))
    places = np.argsort(np.argsort(-performance, axis=1), axis=1) + 1
    keys = np.repeat(np.arange(matches), 4)
    bots = np.tile(np.arange(4), matches)
    return pairwise_games(keys, bots, places.ravel(), n_bots=4), list(strength)


def test_bootstrap_interval_shrinks_with_more_games() -> None:
    few, _ = _simulated_games(100, seed=1)
    many, _ = _simulated_games(1600, seed=2)
    small = rate(few, samples=100, seed=0)
    large = rate(many, samples=100, seed=0)
    assert np.all(small.half_widths > 0)
    # Sixteen times the games: about a quarter of the width (allow for bootstrap noise).
    ratio = large.half_widths / small.half_widths
    assert np.all(ratio < 0.45) and np.all(ratio > 0.12)
    # And the fit finds the order of the strengths.
    assert list(np.argsort(-large.ratings)) == [0, 1, 2, 3]


def test_bootstrap_is_seeded() -> None:
    games, _ = _simulated_games(200, seed=3)
    first = rate(games, samples=50, seed=7)
    again = rate(games, samples=50, seed=7)
    other = rate(games, samples=50, seed=8)
    assert np.array_equal(first.half_widths, again.half_widths)
    assert not np.array_equal(first.half_widths, other.half_widths)


def test_interval_covers_the_truth_on_a_large_sample() -> None:
    games, strength = _simulated_games(3000, seed=4)
    result = rate(games, samples=100, seed=0)
    # Places follow the Gumbel (Plackett–Luce) model, whose pairwise odds are exactly
    # Bradley–Terry's: the fitted ratings estimate the true strengths on the Elo scale.
    truth = (np.array(strength) - np.mean(strength)) * ELO_SCALE
    assert np.all(np.abs(result.ratings - truth) < 3 * result.half_widths + 5)


def test_no_games_at_all() -> None:
    empty = pairwise_games([], [], [], n_bots=0)
    result = rate(empty)
    assert result.matches == 0 and len(result.ratings) == 0


def test_many_bots_use_the_iterative_solver_and_still_converge() -> None:
    # 80 bots (above the direct-solve size): at the fit, the gradient of the penalised
    # log-likelihood must vanish.
    rng = np.random.default_rng(6)
    n = 80
    strength = rng.normal(0, 0.5, n)
    wins = np.zeros((n, n))
    for _ in range(4000):
        a, b = rng.choice(n, 2, replace=False)
        if rng.random() < 1 / (1 + np.exp(strength[b] - strength[a])):
            wins[a, b] += 1
        else:
            wins[b, a] += 1
    theta = _fit_strengths(wins, prior_games=1.0)          # natural-log scale, not centred
    games = wins + wins.T
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    gradient = (wins - games * p).sum(axis=1) + 1.0 * (0.5 - 1 / (1 + np.exp(-theta)))
    assert np.abs(gradient).max() < 1e-6
    assert np.corrcoef(theta, strength)[0, 1] > 0.8


def test_the_likelihood_of_no_fits_is_empty() -> None:
    # The step-halving loop asks for it once every fit it was halving has given up (scale
    # under 1e-6): a leaderboard of 20,000 matches did, and the reshape it used raised.
    assert _log_likelihood(np.zeros((0, 4, 4)), np.zeros((0, 4)), 1.0).shape == (0,)
    wins = np.array([[[0.0, 3.0], [1.0, 0.0]]])
    assert _log_likelihood(wins, np.zeros((1, 2)), 0.0) == pytest.approx([4 * np.log(0.5)])
