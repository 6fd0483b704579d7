"""What a saved match adds to the summaries a leaderboard reads, as pure functions.

For each new match: its seats' facts (faults, timeouts and, in classic, rounds and
exact bids), and, for a completed match, one more count for its outcome (which bots
finished in which places) and each bot's sums and think-time bucket counts, per
variant and tournament. The store writes them in the transaction that saves the match
(``arena.store.save``), with an outcome as :func:`outcome_key` writes it.
:func:`band_bid_counts` splits a classic match's exact bids by hand size (read at
display time, not kept in the summaries).

    >>> from datetime import UTC, datetime
    >>> import numpy as np
    >>> from arena.records import FaultRecord, MatchRecord
    >>> record = MatchRecord(
    ...     match_id="m1", variant="extreme", config={}, seed=1, bots=["a", "b"], bot_versions=["1", "1"],
    ...     totals=[3, 9], places=[1, 2], forfeited=[False, False], result={}, actions=[[0, "x"], [1, "y"]],
    ...     latencies_ms=[2.0, None], faults=[FaultRecord(1, "b", "timeout", "late")])
    >>> summary = summarize([NewMatch(1, record, [7, 9], np.array([2.0, np.nan]), np.array([0, 1]))])
    >>> summary.seats[0][1]
    SeatFacts(faults=1, timeouts=1, rounds=None, exact_bids=None)
    >>> summary.outcomes
    {('extreme', '', '7:1,9:2'): 1}
    >>> summary.totals[(9, "extreme", "")].timeouts, sorted(summary.think_counts)
    (1, [(7, 'extreme', '')])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena.records import MatchRecord
from arena.stats.matches import NewMatch
from arena.stats.think_times import seat_bucket_counts
from engine import ConfigError, GameConfig, variant
from engine.classic import hand_sizes

# A bot_totals key: (bot id, variant, tournament key); the tournament key is the
# tournament id, or "" for a match outside any tournament.
TotalsKey = tuple[int, str, str]


@dataclass(slots=True)
class SeatFacts:
    """What ``match_seats`` stores of one seat beyond the record's own lists (slots, not
    frozen: made for every seat of every saved match, see ``arena.stats.matches``)."""

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
    # Matches by (variant, tournament key, outcome key: see outcome_key).
    outcomes: dict[tuple[str, str, str], int] = field(default_factory=dict)
    totals: dict[TotalsKey, BotSums] = field(default_factory=dict)
    # New think-time bucket counts per key, only for keys with at least one answered decision.
    think_counts: dict[TotalsKey, np.ndarray] = field(default_factory=dict)


def outcome_key(bot_ids: Sequence[int], places: Sequence[int]) -> str:
    """The stored form of a match outcome (``outcome_counts.outcome``), independent of who sat where.

    >>> outcome_key([9, 3, 7, 5], [4, 1, 2, 2])
    '3:1,5:2,7:2,9:4'
    """
    return ",".join(f"{b}:{p}" for b, p in sorted(zip(bot_ids, places)))


def parse_outcome(key: str) -> list[tuple[int, int]]:
    """The seats of an outcome key as ``(bot_id, place)`` pairs.

    >>> parse_outcome('3:1,5:2')
    [(3, 1), (5, 2)]
    """
    return [(int(b), int(p)) for b, p in (pair.split(":") for pair in key.split(","))]


def seat_facts(record: MatchRecord) -> list[SeatFacts]:
    """Faults and timeouts per seat, and where players bid (classic) the rounds scored and bid exactly."""
    seats = len(record.bots)
    faults, timeouts = [0] * seats, [0] * seats
    for fault in record.faults:
        if 0 <= fault.seat < seats:
            faults[fault.seat] += 1
            timeouts[fault.seat] += fault.kind == "timeout"
    if variant(record.variant).bids:
        rounds, exact = classic_bid_counts(record.result_json(), seats)
    else:
        rounds = exact = [None] * seats
    return [SeatFacts(faults[s], timeouts[s], rounds[s], exact[s]) for s in range(seats)]


def classic_bid_counts(result: dict[str, Any], seats: int) -> tuple[list[int | None], list[int | None]]:
    """Rounds played and exact bids per seat, from a classic result's ``rounds``.

    >>> classic_bid_counts({"rounds": [[{"bid": 1, "tricks": 1}, {"bid": 0, "tricks": 1}]]}, 2)
    ([1, 1], [1, 0])
    """
    rounds: list[int | None] = [0] * seats
    exact: list[int | None] = [0] * seats
    for round_lines in result.get("rounds", []):
        for seat, line in enumerate(round_lines[:seats]):
            if "bid" in line and "tricks" in line:
                rounds[seat] = (rounds[seat] or 0) + 1
                exact[seat] = (exact[seat] or 0) + (line["bid"] == line["tricks"])
    return rounds, exact


# The hand-size bands of the per-band exact-bid rate: a classic hand holds 1 to 20 cards
# (60 cards, at least 3 players), and exact bids get much rarer as hands grow.
HAND_SIZE_BANDS: tuple[tuple[int, int], ...] = ((1, 5), (6, 10), (11, 15), (16, 20))


@dataclass
class BandBids:
    """Rounds played and bid exactly with ``low`` to ``high`` cards a hand (both included)."""

    low: int
    high: int
    rounds: int = 0
    exact: int = 0

    @property
    def cards(self) -> str:
        return f"{self.low}-{self.high}"

    @property
    def rate(self) -> float | None:
        """The share of these rounds bid exactly; None when there were none."""
        return self.exact / self.rounds if self.rounds else None


def empty_bands() -> list[BandBids]:
    return [BandBids(low, high) for low, high in HAND_SIZE_BANDS]


def band_bid_counts(config: dict[str, Any], result: dict[str, Any], seats: Sequence[int],
                    bands: list[BandBids] | None = None) -> list[BandBids]:
    """Add the rounds and exact bids of ``seats`` in one classic match to ``bands`` (new
    ones when None), by the hand size of each round. The stored game config gives the
    hand sizes (``engine.classic.hand_sizes``: the standard or amigo length, or a set
    number of rounds) and the result's ``rounds`` the bid and tricks per seat: no
    decision log is read. A config the engine cannot read adds nothing.

    >>> config = {"variant": "classic", "players": 3, "rounds": 7}
    >>> lines = [[{"bid": 1, "tricks": 1}, {"bid": 0, "tricks": 1}, {"bid": 0, "tricks": 0}]] * 7
    >>> [(b.cards, b.rounds, b.exact) for b in band_bid_counts(config, {"rounds": lines}, [0, 1])]
    [('1-5', 10, 5), ('6-10', 4, 2), ('11-15', 0, 0), ('16-20', 0, 0)]
    """
    bands = empty_bands() if bands is None else bands
    try:
        game = GameConfig.from_dict(config)
        game.validate()
        sizes = hand_sizes(game)
    except (ConfigError, TypeError, ValueError):
        return bands
    for size, round_lines in zip(sizes, result.get("rounds", [])):
        band = next((b for b in bands if b.low <= size <= b.high), None)
        if band is None:
            continue
        for seat in seats:
            line = round_lines[seat] if 0 <= seat < len(round_lines) else {}
            if "bid" in line and "tricks" in line:
                band.rounds += 1
                band.exact += line["bid"] == line["tricks"]
    return bands


def summarize(matches: Sequence[NewMatch]) -> Summary:
    """The seats' facts of every match, and what the completed ones add to the outcome
    counts and to each bot's sums and think times (summed over the batch, so a bulk save
    writes one row per key). A bot in two seats of a match plays one game with two seats."""
    summary = Summary(seats=[])
    think_counts: dict[TotalsKey, np.ndarray] = {}
    for match in matches:
        record = match.record
        facts = seat_facts(record)
        summary.seats.append(facts)
        if record.status != "completed":
            continue
        tournament_key = record.tournament_id or ""
        outcome = (record.variant, tournament_key, outcome_key(match.bot_ids, record.places))
        summary.outcomes[outcome] = summary.outcomes.get(outcome, 0) + 1
        # NaN latencies are the referee's fallbacks, which are no think time.
        counts = seat_bucket_counts(match.latencies_ms, match.action_seats, len(record.bots))
        seen: set[int] = set()
        for seat, bot_id in enumerate(match.bot_ids):
            key = (bot_id, record.variant, tournament_key)
            sums = summary.totals.get(key)
            if sums is None:
                sums = summary.totals[key] = BotSums()
            sums.games += bot_id not in seen
            seen.add(bot_id)
            sums.seats += 1
            sums.score_sum += record.totals[seat]
            sums.place_sum += record.places[seat]
            sums.rounds += facts[seat].rounds or 0
            sums.exact_bids += facts[seat].exact_bids or 0
            sums.faults += facts[seat].faults
            sums.forfeits += bool(record.forfeited[seat])
            sums.timeouts += facts[seat].timeouts
            earlier = think_counts.get(key)
            think_counts[key] = counts[seat] if earlier is None else earlier + counts[seat]
    summary.think_counts = {key: c for key, c in think_counts.items() if c.any()}
    return summary
