"""What a saved match adds to the ratings and summaries (arena.stats.elo, arena.stats.summaries):
pure functions, tested here without a database."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.records import FaultRecord, MatchRecord
from arena.stats.elo import START_ELO, elo_deltas, k_factor, rate_matches
from arena.stats.matches import NewMatch
from arena.stats.summaries import BotSums, SeatFacts, seat_facts, summarize
from arena.stats.think_times import BUCKETS, LatencyHistogram, add_counts, bucket_of


def match(pk: int, bots: list[str], places: list[int], *, variant: str = "classic", status: str = "completed",
          tournament_id: str | None = None, faults: list[FaultRecord] | None = None,
          latencies: list[float | None] | None = None, rounds: list[list[dict[str, int]]] | None = None) -> NewMatch:
    """A new match as the store hands it over: bot ids are the names' positions in "abcdefgh"."""
    latencies = latencies if latencies is not None else [1.0] * len(bots)
    record = MatchRecord(
        match_id=f"m{pk}", variant=variant, config={}, seed=pk, bots=bots, bot_versions=["1"] * len(bots),
        totals=[100 - 10 * p for p in places], places=places, forfeited=[False] * len(bots),
        result={"variant": variant, "totals": [100 - 10 * p for p in places], "places": places,
                "higher_is_better": True, "rounds": rounds or []},
        actions=[[i % len(bots), 0] for i in range(len(latencies))],
        latencies_ms=latencies, faults=faults or [], tournament_id=tournament_id, status=status,
    )
    return NewMatch(pk, record, ["abcdefgh".index(b) for b in bots],
                    np.array([math.nan if x is None else x for x in latencies]),
                    np.array([i % len(bots) for i in range(len(latencies))]))


# --------------------------------------------------------------------------------------
# Online Elo over new matches
# --------------------------------------------------------------------------------------


def test_new_bots_start_at_the_start_rating_and_move_by_the_pairwise_update() -> None:
    changes = rate_matches({}, [match(1, ["a", "b", "c"], [1, 2, 2]).rated()])
    deltas = elo_deltas([START_ELO] * 3, [1, 2, 2], [k_factor(0)] * 3)
    assert [(c.match_pk, c.bot_id, c.variant, c.elo_before, c.games) for c in changes] == [
        (1, 0, "classic", START_ELO, 1), (1, 1, "classic", START_ELO, 1), (1, 2, "classic", START_ELO, 1)]
    assert [c.elo_after - c.elo_before for c in changes] == pytest.approx(deltas)


def test_matches_are_rated_in_order_from_the_current_ratings() -> None:
    ratings = {(0, "classic"): (1600.0, 30), (1, "classic"): (1400.0, 3), (0, "extreme"): (1000.0, 1)}
    first, second = match(1, ["a", "b"], [2, 1]).rated(), match(2, ["a", "b"], [1, 2]).rated()
    changes = rate_matches(ratings, [first, second])
    one = elo_deltas([1600.0, 1400.0], [2, 1], [k_factor(30), k_factor(3)])      # K 16 and 32
    a_after, b_after = 1600.0 + one[0], 1400.0 + one[1]
    two = elo_deltas([a_after, b_after], [1, 2], [k_factor(31), k_factor(4)])
    assert [(c.match_pk, c.bot_id, c.games) for c in changes] == [(1, 0, 31), (1, 1, 4), (2, 0, 32), (2, 1, 5)]
    assert [c.elo_after for c in changes] == pytest.approx([a_after, b_after, a_after + two[0], b_after + two[1]])
    assert changes[2].elo_before == changes[0].elo_after
    assert ratings[(0, "classic")] == (1600.0, 30), "the caller's ratings are left alone"


def test_a_bot_in_two_seats_moves_once_by_both_seats() -> None:
    (a, b) = rate_matches({}, [match(1, ["a", "b", "a"], [1, 2, 3]).rated()])
    deltas = elo_deltas([START_ELO] * 3, [1, 2, 3], [32.0] * 3, owners=[0, 1, 0])
    assert (a.bot_id, a.games, b.bot_id) == (0, 1, 1)
    assert a.elo_after - START_ELO == pytest.approx(deltas[0] + deltas[2])


def test_aborted_matches_and_a_bot_alone_are_not_rated() -> None:
    aborted, alone = match(1, ["a", "b"], [1, 2], status="aborted"), match(2, ["a", "a"], [1, 2])
    assert rate_matches({}, [aborted.rated(), alone.rated()]) == []


# --------------------------------------------------------------------------------------
# Seats, outcome counts and per-bot sums
# --------------------------------------------------------------------------------------


def test_seat_facts_count_faults_timeouts_and_classic_bids() -> None:
    faults = [FaultRecord(1, "b", "timeout", "late"), FaultRecord(1, "b", "illegal", "x"),
              FaultRecord(0, "a", "timeout", "late"), FaultRecord(7, "a", "timeout", "no such seat")]
    rounds = [[{"score": 11, "bid": 1, "tricks": 1}, {"score": -10, "bid": 0, "tricks": 1}],
              [{"score": 40, "bid": 2, "tricks": 2}, {"score": 5}]]
    classic = match(1, ["a", "b"], [1, 2], faults=faults, rounds=rounds).record
    assert seat_facts(classic) == [SeatFacts(1, 1, 2, 2), SeatFacts(2, 1, 1, 0)]
    extreme = match(2, ["a", "b"], [1, 2], variant="extreme", faults=faults).record
    assert seat_facts(extreme) == [SeatFacts(1, 1, None, None), SeatFacts(2, 1, None, None)]


def test_summaries_count_completed_matches_per_variant_and_tournament() -> None:
    matches = [
        match(1, ["a", "b", "c"], [1, 2, 2], tournament_id="t-1"),
        match(2, ["c", "b", "a"], [2, 2, 1], tournament_id="t-1"),        # the same outcome, other seats
        match(3, ["a", "b"], [2, 1]),
        match(4, ["a", "b"], [1, 2], status="aborted", faults=[FaultRecord(0, "a", "disconnect", "gone")]),
        match(5, ["a", "a", "d"], [1, 2, 3], variant="extreme"),
    ]
    summary = summarize(matches)
    assert [len(seats) for seats in summary.seats] == [3, 3, 2, 2, 3]     # aborted ones too
    assert summary.seats[3][0].faults == 1
    assert summary.outcomes == {("classic", "t-1", "0:1,1:2,2:2"): 2, ("classic", "", "0:2,1:1"): 1,
                                ("extreme", "", "0:1,0:2,3:3"): 1}
    assert summary.totals[(0, "classic", "t-1")] == BotSums(games=2, seats=2, score_sum=180, place_sum=2, rounds=0,
                                                           exact_bids=0, faults=0, forfeits=0, timeouts=0)
    assert (0, "classic", "") in summary.totals and summary.totals[(0, "classic", "")].games == 1   # not the aborted
    # A bot in two seats plays one game with two seats.
    assert (summary.totals[(0, "extreme", "")].games, summary.totals[(0, "extreme", "")].seats) == (1, 2)


def test_think_counts_leave_out_fallbacks_and_empty_keys() -> None:
    answered = match(1, ["a", "b"], [1, 2], latencies=[1.0, None, 10.0, None])        # b never answered
    counts = summarize([answered]).think_counts
    assert list(counts) == [(0, "classic", "")]
    assert counts[(0, "classic", "")].shape == (BUCKETS,)
    assert np.flatnonzero(counts[(0, "classic", "")]).tolist() == bucket_of(np.array([1.0, 10.0])).tolist()


def test_a_batch_sums_what_its_matches_add_one_by_one() -> None:
    matches = [match(i, ["a", "b", "c"], [1 + i % 3, 1 + (i + 1) % 3, 1 + (i + 2) % 3], latencies=[0.5 * i + 1] * 6,
                     faults=[FaultRecord(i % 3, "abc"[i % 3], "timeout", "late")]) for i in range(6)]
    batch = summarize(matches)
    singles = [summarize([m]) for m in matches]
    for key, sums in batch.totals.items():
        assert sums.score_sum == sum(s.totals[key].score_sum for s in singles)
        assert sums.timeouts == sum(s.totals[key].timeouts for s in singles) == 2
        assert np.array_equal(batch.think_counts[key], sum(s.think_counts[key] for s in singles))


def test_think_times_merge_in_their_stored_form() -> None:
    counts = summarize([match(1, ["a", "b"], [1, 2], latencies=[1.0, 2.0, 3.0, 4.0])]).think_counts
    stored = add_counts(None, counts[(0, "classic", "")])
    merged = add_counts(stored, counts[(1, "classic", "")])
    assert LatencyHistogram.merge([merged, None]).decisions == 4
    assert LatencyHistogram.merge([stored]).percentile(100) == pytest.approx(3.0, rel=0.02)
