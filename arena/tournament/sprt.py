"""The duplicate A/B test's schedule (``arena sprt``).

A *set* is one deal played by the same opponents in the same seats, in every seat
rotation, once with the candidate and once with the baseline in the seat under test:
``2 × players`` games. Whatever luck the deal holds, both met it in the same seats
against the same opponents (who get the same bot seeds on both sides), so the
difference of their results is the evidence: one unit per set. The test over the
stored games is :class:`arena.stats.sprt.SprtMonitor`.

>>> games = sprt_schedule("new", "old", ["a", "b", "c"], players=3, sets=2, master_seed=7)
>>> len(games), [g.bots for g in games[:2]] == [("new", *games[0].bots[1:]), ("old", *games[0].bots[1:])]
(12, True)
>>> games[0].bot_seeds == games[1].bot_seeds and games[0].seed == games[1].seed
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.stats.sprt import games_per_set
from arena.tournament.schedule import (
    ScheduledGame,
    ScheduleError,
    bot_seed,
    bot_seed_key,
    derive_seed,
    draw_tables,
)

UNDER_TEST = "\0under-test"   # the seat the candidate or the baseline takes, in a drawn table


def sprt_schedule(candidate: str, baseline: str, opponents: Sequence[str], players: int, sets: int,
                  master_seed: int) -> list[ScheduledGame]:
    """``sets`` duplicate sets: set ``k`` is deal ``k`` (game indexes ``k*2P`` ..), its
    opponents drawn from ``opponents`` so that each plays and meets the others equally
    often, the seat under test in every rotation, the candidate's game first."""
    if len(opponents) < players - 1:
        raise ScheduleError(f"{players}-player tables need at least {players - 1} opponents "
                            f"(got {len(opponents)})")
    if len({candidate, baseline, *opponents}) != 2 + len(opponents):
        raise ScheduleError("the candidate, the baseline and every opponent need their own names")
    rng = random.Random(derive_seed(master_seed, "sprt tables"))
    tables = draw_tables(list(opponents), players - 1, sets, rng)
    key = bot_seed_key(master_seed)
    per_set = games_per_set(players)
    schedule = []
    for k, opponents_at_table in enumerate(tables):
        seed = derive_seed(master_seed, "deal", k)
        table = (UNDER_TEST, *opponents_at_table)
        for rotation in range(players):
            seated = table[rotation:] + table[:rotation]
            first = k * per_set + 2 * rotation
            # The same seeds on both sides: an opponent that draws on its seed plays both alike.
            bot_seeds = tuple(bot_seed(key, first, seat) for seat in range(players))
            for side, bot in enumerate((candidate, baseline)):
                bots = tuple(bot if name == UNDER_TEST else name for name in seated)
                schedule.append(ScheduledGame(first + side, k, rotation, bots, seed, bot_seeds, k))
    return schedule
