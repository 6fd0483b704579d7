"""Read queries: stored matches, ratings, and what a leaderboard is computed from.

Each function reads in the session the ``Store`` opens for it; ``where`` names the
database in messages. A leaderboard never reads match logs: it reads the summary
tables the save path keeps (``outcome_counts``, ``bot_totals``), the current Elo and
the bots' crashes (``crashes.py``), in one transaction (:func:`leaderboard_inputs`; a board reads
it with the rest of its snapshot, ``snapshots.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy import func
from sqlmodel import Session, col, select

from arena.records import FaultRecord, MatchRecord, game_result
from arena.settings import TournamentSettings
from arena.stats.summaries import parse_outcome
from arena.stats.think_times import LatencyHistogram
from arena.store.codec import as_utc, decode_log
from arena.store.crashes import CrashSummary, crash_summaries
from arena.store.errors import NotStored, StoreError
from arena.store.schema import (
    BotRow,
    BotTotalsRow,
    EloRow,
    FaultRow,
    MatchLogRow,
    MatchRow,
    MatchSeatRow,
    OutcomeCountRow,
    RatingHistoryRow,
)
from arena.wire.json_codec import loads
from engine import VARIANT_RECORDS, GameConfig

# Wizard is played by 3 to 6 (engine.core); the store packs at most this many seats per match.
_MAX_SEATS = 6


@dataclass
class MatchSummary:
    """One line of ``arena matches``: everything but the log."""

    match_id: str
    tournament_id: str | None
    game_index: int | None
    variant: str
    status: str
    started_at: datetime
    finished_at: datetime
    bots: list[str]
    totals: list[int]
    places: list[int]
    forfeited: list[bool]
    faults: int
    decisions: int
    median_latency_ms: float | None
    max_latency_ms: float | None
    private: bool = False


@dataclass
class RatingChange:
    match_id: str
    finished_at: datetime
    elo_before: float
    elo_after: float
    games: int


@dataclass
class SeatAggregate:
    """One bot's sums over the matches a leaderboard covers."""

    bot: str
    games: int                 # matches played (a bot in two seats of a match counts once)
    seats: int
    score_sum: int
    place_sum: int
    rounds: int | None
    exact_bids: int | None
    faults: int
    forfeits: int
    timeouts: int              # faults of kind "timeout"
    # Latencies of the decisions the bot answered (fallbacks played for it are not think
    # time): the sum of its stored histograms.
    think_times: LatencyHistogram


@dataclass
class LeaderboardInputs:
    """What a leaderboard is computed from (see arena.results.leaderboard)."""

    bots: list[str]            # bot names; the arrays below hold indexes into this list
    # Matches outside any tournament, counted: per table size, bots, places, counts.
    tables: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    aggregates: list[SeatAggregate]
    elo: dict[str, tuple[float, int]]
    # Completed matches per tournament id ("": matches outside any tournament).
    games_by_tournament: dict[str, int] = field(default_factory=dict)
    # Tournament matches one by one, per table size: bots, places, and the deal of each
    # match (a number; equal numbers: the same tournament and engine seed, i.e. the same
    # cards, as the rotations of a duplicate deal). The bootstrap redraws deals whole.
    deals: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    # The crashes of the board's variant (and tournament), per bot that crashed at all.
    crashes: dict[str, CrashSummary] = field(default_factory=dict)


@dataclass
class AbTestGames:
    """An A/B test among a board's tournaments: its stored settings and its stored games
    (newest first, at most its game limit and one more); ``snapshots.py`` reads them."""

    settings: TournamentSettings
    games: list[MatchSummary]


# -- matches ----------------------------------------------------------------------------


def load_match(session: Session, match_id: str, where: str) -> MatchRecord:
    row = session.exec(select(MatchRow).where(MatchRow.match_id == match_id)).first()
    if row is None:
        raise NotStored(f"no match {match_id!r}", where)
    seats = session.exec(
        select(MatchSeatRow, BotRow.name).join(BotRow, col(BotRow.id) == col(MatchSeatRow.bot_id))
        .where(MatchSeatRow.match_pk == row.id).order_by(col(MatchSeatRow.seat))
    ).all()
    log = session.get(MatchLogRow, row.id)
    faults = session.exec(
        select(FaultRow, BotRow.name).join(BotRow, col(BotRow.id) == col(FaultRow.bot_id))
        .where(FaultRow.match_pk == row.id).order_by(col(FaultRow.id))
    ).all()
    actions, latencies = decode_log(log.actions, log.latencies) if log is not None else ([], [])
    bank_used = [s.bank_used_ms for s, _ in seats]
    return MatchRecord(
        match_id=row.match_id, variant=row.variant, config=GameConfig.from_dict(loads(row.config_json)), seed=row.seed,
        bots=[name for _, name in seats], bot_versions=[s.bot_version for s, _ in seats],
        totals=[s.total for s, _ in seats], places=[s.place for s, _ in seats],
        forfeited=[bool(s.forfeited) for s, _ in seats], result=game_result(loads(row.result_json)),
        actions=actions, latencies_ms=latencies,
        faults=[FaultRecord(seat=f.seat, bot=name, kind=f.kind, message=f.message,
                            request_id=f.request_id, at=as_utc(f.at)) for f, name in faults],
        tournament_id=row.tournament_id, game_index=row.game_index, status=row.status,
        started_at=as_utc(row.started_at), finished_at=as_utc(row.finished_at),
        # A record has the bank use of every seat or none (see MatchRecord).
        time_bank_ms=row.time_bank_ms,
        bank_used_ms=None if None in bank_used else [float(u) for u in bank_used if u is not None],
        private=bool(row.private),
    )


def has_match(session: Session, match_id: str) -> bool:
    return session.exec(select(MatchRow.id).where(MatchRow.match_id == match_id)).first() is not None


def has_slot(session: Session, tournament_id: str, game_index: int) -> bool:
    return session.exec(select(MatchRow.id).where(MatchRow.tournament_id == tournament_id,
                                                  MatchRow.game_index == game_index)).first() is not None


def list_matches(session: Session, variant: str | None, tournament_id: str | None, bot: str | None,
                 limit: int, game_indexes: Sequence[int] | None = None) -> list[MatchSummary]:
    """The newest ``limit`` matches first (``game_indexes``: only those slots of the tournament)."""
    filters: list[sa.ColumnElement[bool]] = []
    if variant is not None:
        filters.append(col(MatchRow.variant) == variant)
    if tournament_id is not None:
        filters.append(col(MatchRow.tournament_id) == tournament_id)
    if game_indexes is not None:
        filters.append(col(MatchRow.game_index).in_(game_indexes))
    if bot is not None:
        # For each match, newest first, whether one of its seats is the bot's: the seats'
        # key (match, seat) answers that, and the newest few matches come without reading
        # every seat of the bot (an IN over all of them took 80 ms with 100,000 matches).
        bot_id = select(BotRow.id).where(col(BotRow.name) == bot).scalar_subquery()
        theirs = MatchSeatRow.__table__.alias("theirs")   # apart from the seats read below
        filters.append(sa.exists().where(theirs.c.match_pk == col(MatchRow.id), theirs.c.bot_id == bot_id)
                       .correlate(MatchRow))
    rows = session.exec(select(MatchRow).where(*filters).order_by(col(MatchRow.id).desc()).limit(limit)).all()
    seats: dict[int | None, list[tuple[MatchSeatRow, str]]] = {r.id: [] for r in rows}
    if rows:
        # The seats by the range of those matches' ids, not a list of them: a list is one
        # bound parameter per match, and PostgreSQL takes at most 65,535 in a statement.
        low, high = rows[-1].id, rows[0].id
        for seat, name in session.exec(
            select(MatchSeatRow, BotRow.name).join(BotRow, col(BotRow.id) == col(MatchSeatRow.bot_id))
            .join(MatchRow, col(MatchRow.id) == col(MatchSeatRow.match_pk))
            .where(*filters, col(MatchRow.id) >= low, col(MatchRow.id) <= high)
            .order_by(col(MatchSeatRow.match_pk), col(MatchSeatRow.seat))
        ).all():
            if seat.match_pk in seats:   # one stored since the first read is not in rows
                seats[seat.match_pk].append((seat, name))
    return [
        MatchSummary(
            match_id=r.match_id, tournament_id=r.tournament_id, game_index=r.game_index,
            variant=r.variant, status=r.status, started_at=as_utc(r.started_at),
            finished_at=as_utc(r.finished_at), bots=[n for _, n in seats[r.id]],
            totals=[s.total for s, _ in seats[r.id]], places=[s.place for s, _ in seats[r.id]],
            forfeited=[bool(s.forfeited) for s, _ in seats[r.id]],
            faults=sum(s.faults for s, _ in seats[r.id]), decisions=r.decisions,
            median_latency_ms=r.median_latency_ms, max_latency_ms=r.max_latency_ms, private=bool(r.private),
        )
        for r in rows
    ]


def match_count(session: Session, variant: str | None, status: str | None) -> int:
    query = select(func.count()).select_from(MatchRow)
    if variant is not None:
        query = query.where(MatchRow.variant == variant)
    if status is not None:
        query = query.where(MatchRow.status == status)
    return session.exec(query).one()


def variants(session: Session) -> list[str]:
    return sorted(session.exec(select(MatchRow.variant).where(MatchRow.status == "completed").distinct()).all())


# -- ratings and leaderboard data -------------------------------------------------------


def rating_history(session: Session, bot: str, variant: str) -> list[RatingChange]:
    rows = session.exec(
        select(RatingHistoryRow, MatchRow.match_id, MatchRow.finished_at)
        .join(MatchRow, col(MatchRow.id) == col(RatingHistoryRow.match_pk))
        .join(BotRow, col(BotRow.id) == col(RatingHistoryRow.bot_id))
        .where(BotRow.name == bot, RatingHistoryRow.variant == variant)
        .order_by(col(RatingHistoryRow.id))
    ).all()
    return [RatingChange(match_id, as_utc(finished), h.elo_before, h.elo_after, h.games)
            for h, match_id, finished in rows]


def current_elo(session: Session, variant: str) -> dict[str, tuple[float, int]]:
    rows = session.exec(
        select(BotRow.name, EloRow.elo, EloRow.games).join(BotRow, col(BotRow.id) == col(EloRow.bot_id))
        .where(EloRow.variant == variant)
    ).all()
    return {name: (elo, games) for name, elo, games in rows}


def outcomes(session: Session, variant: str, tournament_id: str | None) -> list[tuple[list[tuple[str, int]], int]]:
    query = (select(OutcomeCountRow.outcome, func.sum(OutcomeCountRow.matches))
             .where(OutcomeCountRow.variant == variant).group_by(OutcomeCountRow.outcome))
    if tournament_id is not None:
        query = query.where(OutcomeCountRow.tournament_key == tournament_id)
    rows = session.exec(query).all()
    names = dict(session.exec(select(BotRow.id, BotRow.name)).all())
    # Sorted by name, so the same outcome reads the same in any database.
    return [(sorted((names[b], p) for b, p in parse_outcome(key)), int(count)) for key, count in rows]


def seat_aggregates(session: Session, variant: str, tournament_id: str | None) -> list[SeatAggregate]:
    t = BotTotalsRow
    # Ten columns: more than SQLModel's select() is typed for, so SQLAlchemy's, on the session's connection.
    query = (
        sa.select(BotRow.__table__.c.name, *(func.sum(t.__table__.c[name]) for name in (
            "games", "seats", "score_sum", "place_sum", "rounds", "exact_bids", "faults", "forfeits", "timeouts")))
        .join(BotRow, col(BotRow.id) == col(t.bot_id)).where(col(t.variant) == variant)
        .group_by(BotRow.__table__.c.name)
    )
    # The histograms are summed here, one row per bot and tournament: SQL cannot add them.
    histograms_query = (select(BotRow.name, t.think_histogram).join(BotRow, col(BotRow.id) == col(t.bot_id))
                        .where(t.variant == variant, col(t.think_histogram).is_not(None)))
    if tournament_id is not None:
        query = query.where(col(t.tournament_key) == tournament_id)
        histograms_query = histograms_query.where(t.tournament_key == tournament_id)
    histograms: dict[str, list[bytes | None]] = {}
    for name, blob in session.exec(histograms_query).all():
        histograms.setdefault(name, []).append(blob)
    record = VARIANT_RECORDS.get(variant)
    bids = record is not None and record.bids     # rounds bid exactly: where players bid (classic)
    return [SeatAggregate(name, int(games), int(seats), int(score), int(place),
                          int(rounds) if bids else None, int(exact) if bids else None,
                          int(faults), int(forfeits), int(timeouts), LatencyHistogram.merge(histograms.get(name, [])))
            for name, games, seats, score, place, rounds, exact, faults, forfeits, timeouts
            in session.connection().execute(query).all()]


def leaderboard_inputs(session: Session, variant: str, tournament_id: str | None) -> LeaderboardInputs:
    """Outcome counts, per-bot sums, Elo and crashes, read in the caller's one transaction."""
    query = (select(OutcomeCountRow.outcome, OutcomeCountRow.matches, OutcomeCountRow.tournament_key)
             .where(OutcomeCountRow.variant == variant))
    if tournament_id is not None:
        query = query.where(OutcomeCountRow.tournament_key == tournament_id)
    # One row per tournament and outcome; equal outcomes from different tournaments
    # need no summing here, as the fit treats them as separate counted patterns.
    rows = session.exec(query).all()
    # Every completed match adds 1 to exactly one outcome row: these are game counts.
    games: dict[str, int] = {}
    for _, count, tournament_key in rows:
        games[tournament_key] = games.get(tournament_key, 0) + count
    names = dict(session.exec(select(BotRow.id, BotRow.name)).all())
    aggregates = seat_aggregates(session, variant, tournament_id)
    elo = current_elo(session, variant) if tournament_id is None else _elo_after(session, variant, tournament_id)
    # Matches outside tournaments are each their own deal: their counted outcomes say all
    # the rating needs. A tournament's matches are read one by one, with their deal.
    tables = outcome_tables([key for key, _, key_of in rows if key_of == ""],
                            [count for _, count, key_of in rows if key_of == ""])
    dealt = (dealt_matches(session, variant, tournament_id, max((i for i in names if i is not None), default=0))
             if any(key_of != "" for _, _, key_of in rows) else [])
    every = [bots.ravel() for bots, _, _ in tables + dealt]
    ids = np.unique(np.concatenate(every)) if every else np.zeros(0, np.int64)
    # Bots are indexed in name order, not by their ids in this database, so the same
    # matches give the same leaderboard (bootstrap draws included) in any database.
    ordered = sorted(names[int(i)] for i in ids)
    position = {name: i for i, name in enumerate(ordered)}
    index_of_id = np.array([position[names[int(i)]] for i in ids], dtype=np.int64)
    indexed = [(index_of_id[np.searchsorted(ids, bots)], places, counts) for bots, places, counts in tables]
    deals = [(index_of_id[np.searchsorted(ids, bots)], places, deal) for bots, places, deal in dealt]
    crashes = crash_summaries(session, variant, tournament_id)
    return LeaderboardInputs(ordered, indexed, aggregates, elo, games, deals, crashes)


def dealt_matches(session: Session, variant: str, tournament_id: str | None,
                  max_bot_id: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The completed tournament matches of a variant (or of one tournament), one by one,
    per table size: ``(bot ids, places, deal)``, ``deal`` numbering the distinct
    (tournament, seed) pairs (in no meaningful order).

    Read from the stored columns, no summary table: about 0.25 s for 100,000 matches
    (``arena bench store``). To keep that short, SQL packs each match's seats into a few
    integers (``bot id * 64 + place`` per seat, as many seats per 63 bits as fit), so
    Python sees one row per match rather than one per seat.
    """
    matches, seats = MatchRow.__table__, MatchSeatRow.__table__
    bits = max(max_bot_id, 1).bit_length() + 6          # places are below 64
    per_column = 63 // bits
    columns = -(-_MAX_SEATS // per_column)
    packed = (sa.cast(seats.c.bot_id, sa.BigInteger) * 64 + seats.c.place).self_group()
    if columns == 1:
        words = [func.sum(packed.op("<<")(bits * seats.c.seat))]
    else:
        words = [func.sum(sa.case(((seats.c.seat >= c * per_column) & (seats.c.seat < (c + 1) * per_column),
                                   packed.op("<<")(bits * (seats.c.seat - c * per_column))), else_=0))
                 for c in range(columns)]
    query = (
        sa.select(matches.c.tournament_id, matches.c.seed, func.count(), *(w.cast(sa.BigInteger) for w in words))
        .join(seats, seats.c.match_pk == matches.c.id)
        .where(matches.c.variant == variant, matches.c.status == "completed", matches.c.tournament_id.is_not(None))
        .group_by(matches.c.id)
    )
    if tournament_id is not None:
        query = query.where(matches.c.tournament_id == tournament_id)
    rows = _fetch_plain(session, query)
    if not rows:
        return []
    tournament_ids, seeds, sizes, *packed_columns = zip(*rows)
    _, tournament = np.unique(np.array(tournament_ids), return_inverse=True)
    seed = np.array(seeds, dtype=np.int64)
    size = np.array(sizes, dtype=np.int64)
    if size.max() > _MAX_SEATS:
        raise StoreError(f"a stored match has {size.max()} seats; the leaderboard reads at most {_MAX_SEATS}")
    packed_words = np.stack([np.array(c, dtype=np.int64) for c in packed_columns], axis=1)
    # Deals numbered in (tournament, seed) order: a new number wherever either changes.
    order = np.lexsort((seed, tournament.ravel()))
    changed = np.r_[True, (np.diff(tournament.ravel()[order]) != 0) | (np.diff(seed[order]) != 0)]
    deal = np.empty(len(rows), dtype=np.int64)
    deal[order] = np.cumsum(changed) - 1
    result = []
    for players in np.unique(size):
        chosen = size == players
        seat = np.arange(players)
        values = (packed_words[chosen][:, seat // per_column] >> (bits * (seat % per_column))) & ((1 << bits) - 1)
        result.append((values >> 6, values & 63, deal[chosen]))
    return result


def _fetch_plain(session: Session, query: sa.Select[Any]) -> list[tuple[Any, ...]]:
    """Every row of ``query`` as the database driver returns it (plain tuples), on the
    session's connection and transaction: SQLAlchemy's own rows cost more than the query
    when there are 100,000 of them."""
    connection = session.connection()
    compiled = query.compile(dialect=connection.dialect)
    params = compiled.construct_params()
    arguments: Any = tuple(params[name] for name in compiled.positiontup or ()) if compiled.positional else params
    cursor = connection.connection.cursor()
    try:
        cursor.execute(str(compiled), arguments)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def outcome_tables(keys: Sequence[str], counts: Sequence[int]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Outcome keys as arrays, one entry per table size: ``(bot ids, places, counts)``
    with bot ids and places of shape (outcomes, seats). Parsed in one pass by numpy:
    100,000 keys one by one in Python would take most of the leaderboard's time.

    >>> tables = outcome_tables(["3:1,5:2", "3:2,5:1", "1:1,2:2,3:3"], [4, 1, 2])
    >>> [(b.tolist(), p.tolist(), c.tolist()) for b, p, c in tables]
    [([[3, 5], [3, 5]], [[1, 2], [2, 1]], [4, 1]), ([[1, 2, 3]], [[1, 2, 3]], [2])]
    """
    by_size: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        by_size.setdefault(key.count(",") + 1, []).append(i)
    tables = []
    for size, picked in sorted(by_size.items()):
        text = " ".join(keys[i] for i in picked).replace(":", " ").replace(",", " ")
        numbers = np.fromstring(text, dtype=np.int64, sep=" ").reshape(len(picked), size, 2)
        tables.append((numbers[:, :, 0], numbers[:, :, 1], np.array([counts[i] for i in picked], dtype=np.int64)))
    return tables


def _elo_after(session: Session, variant: str, tournament_id: str) -> dict[str, tuple[float, int]]:
    """Each bot's online Elo after its last match of this tournament (what the board of a
    finished tournament should show, whatever was played since)."""
    h = RatingHistoryRow
    rows = session.exec(
        select(BotRow.name, h.elo_after, h.games).join(MatchRow, col(MatchRow.id) == col(h.match_pk))
        .join(BotRow, col(BotRow.id) == col(h.bot_id))
        .where(MatchRow.tournament_id == tournament_id, h.variant == variant).order_by(col(h.id))
    ).all()
    # In the order the games counted (a tournament's: its slots'), not the order they were
    # stored: later ones overwrite earlier ones.
    return {name: (elo, games) for name, elo, games in rows}
