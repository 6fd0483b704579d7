"""The schedule in both formats: rotations, balance, determinism, the seeds."""

import itertools
from collections import Counter

import pytest

from arena.tournament.schedule import (
    ScheduleError,
    derive_seed,
    games_unit,
    make_schedule,
    new_master_seed,
    round_games,
)


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


def test_independent_deals_give_every_game_its_own_deal_on_the_same_tables() -> None:
    names = ["a", "b", "c", "d", "e"]
    duplicate = make_schedule(names, 4, 20, master_seed=8)
    independent = make_schedule(names, 4, 20, master_seed=8, deals="independent")
    assert len({g.seed for g in independent}) == len({g.deal for g in independent}) == 20
    assert not {g.seed for g in independent} & {g.seed for g in duplicate}
    # only the deal differs: the same tables, seats, rotations and bots' seeds
    assert [(g.index, g.table, g.rotation, g.bots, g.bot_seeds) for g in independent] == \
        [(g.index, g.table, g.rotation, g.bots, g.bot_seeds) for g in duplicate]
    assert make_schedule(names, 4, 20, 8, "independent") == independent


def test_duplicate_deals_give_one_seed_per_deal_across_its_rotations() -> None:
    schedule = make_schedule(["a", "b", "c", "d", "e", "f"], 3, 18, master_seed=4, deals="duplicate")
    by_deal: dict[int, set[int]] = {}
    for g in schedule:
        by_deal.setdefault(g.deal, set()).add(g.seed)
        assert g.deal == g.table == g.index // 3
    assert len(by_deal) == 6 and all(len(seeds) == 1 for seeds in by_deal.values())
    assert len({seed for seeds in by_deal.values() for seed in seeds}) == 6


def test_an_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(ScheduleError, match="duplicate or independent"):
        make_schedule(["a", "b", "c"], 3, 3, 0, deals="bogus")


@pytest.mark.parametrize("deals", ["duplicate", "independent"])
def test_bot_seeds_are_keyed_by_the_master_seed_and_unrelated_to_the_deals(deals: str) -> None:
    master = 123_456_789
    schedule = make_schedule(["a", "b", "c", "d", "e"], 4, 20, master, deals)
    bot_seeds = [s for g in schedule for s in g.bot_seeds]
    assert len(set(bot_seeds)) == len(bot_seeds)                       # per game and seat
    assert all(0 <= s < 2**63 for s in bot_seeds)
    assert [g.bot_seeds for g in make_schedule(["a", "b", "c", "d", "e"], 4, 20, master, deals)] == \
        [g.bot_seeds for g in schedule]                                # reproducible
    assert not set(bot_seeds) & {s for g in make_schedule(["a", "b", "c", "d", "e"], 4, 20, master + 1, deals)
                                 for s in g.bot_seeds}                 # and the master seed's own
    deal_seeds = {g.seed for g in schedule}
    old_formula = {derive_seed(master, "bot", g.index, seat) for g in schedule for seat in range(4)}
    from_deals = {derive_seed(d, *parts) for d in deal_seeds for g in schedule for seat in range(4)
                  for parts in (("bot", g.index, seat), (g.index, seat))}
    assert not set(bot_seeds) & (deal_seeds | old_formula | from_deals)


def test_the_default_master_seed_has_63_bits_of_range() -> None:
    seeds = [new_master_seed() for _ in range(200)]
    assert all(0 <= s < 2**63 for s in seeds)
    assert max(seeds) >= 2**62          # with 63 random bits this fails with probability 2**-200
    assert sum(s < 2**32 for s in seeds) <= 1   # a 32-bit seed (the old default) is a 2**-31 event
    assert len(set(seeds)) == 200
