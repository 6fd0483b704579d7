"""Does the leaderboard's 95% interval cover the true rating 95% of the time, with duplicate deals?

Synthetic tournaments of 200 games (arena.bench.coverage): no processes, the rating's
inputs built directly, in three settings of the deal's luck (none, tied to a seat's
cards, favouring particular bots). The leaderboard's bootstrap redraws whole deals; a
bootstrap over single matches is known to miss both ways (too wide with seat luck, too
narrow with bot luck), which the slow run checks too.

The fast run has 200 tournaments per setting. Its coverage is a mean over tournaments of
the share of the 4 bots covered; the standard error of that mean (measured over the
tournaments, as a tournament's bots are not independent) is about 1 percentage point,
a little above the binomial one for 800 independent intervals (0.77). The fast test
accepts the 93-97% band widened by 2 standard errors (a false alarm about once in 40
runs per side if the truth sat on the band's edge; at 95% practically never); the slow
run, 300 tournaments of another seed (standard error about 0.7 points), holds the band
itself.
"""

from __future__ import annotations

import pytest

from arena.bench.coverage import SETTINGS, coverage


@pytest.mark.parametrize("setting", SETTINGS)
def test_deal_bootstrap_covers_the_truth(setting: str) -> None:
    result = coverage(setting, tournaments=200, games=200, seed=11)
    margin = 2 * result.standard_error
    assert 0.93 - margin <= result.coverage <= 0.97 + margin, result


@pytest.mark.slow
@pytest.mark.parametrize("setting", SETTINGS)
def test_deal_bootstrap_covers_the_truth_in_300_tournaments(setting: str) -> None:
    result = coverage(setting, tournaments=300, games=200, seed=12)
    assert 0.93 <= result.coverage <= 0.97, result


@pytest.mark.slow
@pytest.mark.parametrize(("setting", "wrong"), [("seat", "too wide"), ("bot", "too narrow")])
def test_a_bootstrap_over_single_matches_misses_with_deal_luck(setting: str, wrong: str) -> None:
    result = coverage(setting, tournaments=300, games=200, seed=12, by_deal=False)
    if wrong == "too wide":
        assert result.coverage > 0.97, result
    else:
        assert result.coverage < 0.93, result
