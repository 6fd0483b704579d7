"""The duplicate schedule: rotations, balance, determinism."""

import itertools
from collections import Counter

import pytest

from arena.schedule import ScheduleError, games_unit, make_schedule, round_games


def test_every_deal_is_played_once_per_cyclic_rotation() -> None:
    schedule = make_schedule(["a", "b", "c", "d"], players=4, games=12, master_seed=5)
    for deal in range(3):
        games = [g for g in schedule if g.deal == deal]
        assert len(games) == 4 and len({g.seed for g in games}) == 1
        base = games[0].bots
        assert [g.bots for g in games] == [base[r:] + base[:r] for r in range(4)]
        # every bot sits in every seat once for this deal
        for bot in base:
            assert sorted(g.bots.index(bot) for g in games) == [0, 1, 2, 3]
    assert len({g.seed for g in schedule}) == 3


@pytest.mark.parametrize("bots,players", [(5, 4), (6, 4), (7, 4), (6, 3), (5, 5), (8, 6)])
def test_every_bot_plays_equally_and_meets_others_about_equally(bots: int, players: int) -> None:
    names = [f"bot{i}" for i in range(bots)]
    games = round_games(60, bots, players)
    assert games % games_unit(bots, players) == 0
    schedule = make_schedule(names, players, games, master_seed=11)
    per_bot = Counter(b for g in schedule for b in g.bots)
    assert len(set(per_bot.values())) == 1 and set(per_bot) == set(names)
    meetings = Counter(pair for g in schedule[::players] for pair in itertools.combinations(sorted(g.bots), 2))
    assert len(meetings) == bots * (bots - 1) // 2
    assert max(meetings.values()) - min(meetings.values()) <= 2


def test_schedule_is_reproducible_from_the_master_seed() -> None:
    names = ["a", "b", "c", "d", "e"]
    assert make_schedule(names, 4, 20, 99) == make_schedule(names, 4, 20, 99)
    assert make_schedule(names, 4, 20, 99) != make_schedule(names, 4, 20, 100)


def test_bot_seeds_differ_per_game_and_seat() -> None:
    schedule = make_schedule(["a", "b", "c"], 3, 6, 1)
    seeds = [s for g in schedule for s in g.bot_seeds]
    assert len(set(seeds)) == len(seeds)


def test_round_games_rounds_up_to_whole_duplicate_sets() -> None:
    assert round_games(40, 4, 4) == 40
    assert round_games(41, 4, 4) == 44
    assert round_games(1, 5, 4) == 20
    assert round_games(0, 3, 3) == 3


def test_impossible_lineups_are_clear_errors() -> None:
    with pytest.raises(ScheduleError, match="need at least 4 bots"):
        make_schedule(["a", "b", "c"], 4, 4, 0)
    with pytest.raises(ScheduleError, match="own name"):
        make_schedule(["a", "a", "b"], 3, 3, 0)
