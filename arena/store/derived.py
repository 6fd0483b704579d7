"""What the store writes but does not compute: the rows the results layer derives from a match.

Saving a match writes, besides the match itself, rows that follow from it: each seat's
fault, timeout and exact-bid counts, the outcome counts and per-bot sums a leaderboard
reads, the bots' think-time histograms and their online Elo. How those follow from a
match is the results layer's business (``arena.results.summaries``, ``arena.results.elo``,
``arena.results.think_times``), as pure functions tested without a database. The store
sits below that layer and does not import it: it is handed the functions as one
:class:`Summarizer` when it is opened (``arena.results.Store`` does that), and runs them
inside the transaction that saves the match, between reading the rows they start from
and writing the rows they return.

This module holds that contract: the :class:`Summarizer` and the values that cross it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from arena.records import MatchRecord

# A bot_totals key: (bot id, variant, tournament key); the tournament key is the
# tournament id, or "" for a match outside any tournament.
TotalsKey = tuple[int, str, str]
# An elo_ratings key: (bot id, variant).
EloKey = tuple[int, str]

# The values below are made several times per saved match: slots, and not frozen (a
# frozen dataclass takes three times as long to make), on the save path's account.


@dataclass(slots=True)
class NewMatch:
    """A match being saved, as the results layer's functions see it."""

    pk: int                          # matches.id
    record: MatchRecord
    bot_ids: list[int]               # by seat
    latencies_ms: np.ndarray         # float64 per logged action; NaN: the referee played the fallback
    action_seats: np.ndarray         # int64: the seat of each logged action


@dataclass(slots=True)
class SeatFacts:
    """What ``match_seats`` stores of one seat beyond the record's own lists."""

    faults: int
    timeouts: int                    # faults of kind "timeout" (also counted in faults)
    rounds: int | None               # classic: rounds scored; None for extreme
    exact_bids: int | None           # classic: rounds where tricks == bid; None for extreme


@dataclass
class BotSums:
    """What one bot adds to its ``bot_totals`` row (the field names are its counter columns)."""

    games: int = 0                   # matches (a bot in two seats of one match counts once)
    seats: int = 0
    score_sum: int = 0
    place_sum: int = 0
    rounds: int = 0
    exact_bids: int = 0
    faults: int = 0
    forfeits: int = 0
    timeouts: int = 0


@dataclass
class Summary:
    """Everything a batch of new matches adds to the summary tables, and their seats' facts."""

    seats: list[list[SeatFacts]]                                  # per match, per seat
    # Matches by (variant, tournament key, outcome key: see schema.outcome_key).
    outcomes: dict[tuple[str, str, str], int] = field(default_factory=dict)
    totals: dict[TotalsKey, BotSums] = field(default_factory=dict)
    # New think-time bucket counts per key, only for keys with at least one answered decision.
    think_counts: dict[TotalsKey, np.ndarray] = field(default_factory=dict)


@dataclass(slots=True)
class EloChange:
    """One bot's online Elo moving after one match: a ``rating_history`` row."""

    match_pk: int
    bot_id: int
    variant: str
    elo_before: float
    elo_after: float
    games: int                       # the bot's rated matches in this variant, this one included


class ThinkTimes(Protocol):
    """A bot's think times as the leaderboard reads them (``arena.results.think_times.LatencyHistogram``)."""

    @property
    def decisions(self) -> int: ...

    def percentile(self, percent: float) -> float | None: ...


@dataclass(frozen=True)
class Summarizer:
    """The results layer's pure functions, as the store runs them.

    ``summarize(matches)``: the seats' facts, outcome counts, per-bot sums and think-time
    counts of new matches (aborted ones count only in their seats' facts).

    ``rate(ratings, matches)``: the online Elo changes of the matches, in order, from the
    bots' current ``(elo, games)`` by ``(bot id, variant)`` (a bot not in ``ratings`` is new).

    ``add_think_counts(stored, counts)``: a stored think-time histogram (None: none yet)
    plus dense bucket counts, in the stored form (None when empty).

    ``seat_think_counts(latencies_ms, action_seats, players)``: dense bucket counts per
    seat, shape ``(players, buckets)``, of a log's answered decisions.

    ``think_times(stored)``: the sum of stored histograms, as the leaderboard reads it.
    """

    summarize: Callable[[Sequence[NewMatch]], Summary]
    rate: Callable[[Mapping[EloKey, tuple[float, int]], Sequence[NewMatch]], list[EloChange]]
    add_think_counts: Callable[[bytes | None, np.ndarray], bytes | None]
    seat_think_counts: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    think_times: Callable[[Sequence[bytes | None]], ThinkTimes]
