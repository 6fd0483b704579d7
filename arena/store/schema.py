"""The tables, the schema version, and what opening a database checks and upgrades.

Tables (``SCHEMA_VERSION`` 5; an older database is upgraded when opened, see
:func:`_upgrade_from_1`, :func:`_upgrade_from_2`, :func:`_upgrade_from_3` and
:func:`_upgrade_from_4`):

``arena_meta``       key/value; ``schema_version`` marks the file as ours
``bots``             name, sha256 of the token (never the token), created
``tournaments``      short id, settings JSON, master seed, status, the Elo cursor (the
                     first schedule slot whose match has not counted for online Elo yet)
``matches``          one row per match: variant, config, seed, status, times, result JSON,
                     decision latency figures, the seats' time bank, whether it is private
                     (its deal is played again); ``match_id`` is the referee's id
``match_seats``      one row per seat: bot, version, total, place, forfeit, faults, timeouts,
                     the seat's slowest answer and time bank used, and for classic the
                     rounds played and exact bids
``match_logs``       the decision log: zlib-compressed JSON actions, float64 latencies (codec.py)
``faults``           one row per fault
``elo_ratings``      the current online Elo of each bot per variant
``rating_history``   every Elo change: match, bot, before, after, games played
``outcome_counts``   how many completed matches ended in each outcome (bots and places)
``bot_totals``       per bot, variant and tournament: running sums for the leaderboard, and a
                     histogram of the bot's think times (arena.stats.think_times)
``scheduled_games``  a tournament's schedule for workers without its settings: one row per
                     game (deal, rotation, bots, seeds, table)
``work_units``       one row per deal of a scheduled tournament: the worker holding its
                     lease and until when (``leases.py``)
``bot_crashes``      one row per bot process the arena started that ended while it should
                     have been playing (``arena.records.BotCrash``; ``crashes.py``)
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, ClassVar

import numpy as np
import sqlalchemy as sa
from sqlalchemy import (
    BigInteger,
    DateTime,
    Index,
    LargeBinary,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    func,
    inspect,
)
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateColumn
from sqlmodel import Field, SQLModel, insert, select, update

from arena.stats.think_times import add_counts, seat_bucket_counts
from arena.store.codec import log_seats_and_latencies, seat_max_latencies
from arena.store.errors import StoreError
from arena.wire.json_codec import loads

# 2: timeouts and think-time histograms (see _upgrade_from_1);
# 3: per-seat max think time and time-bank use (see _upgrade_from_2);
# 4: schedules and leases for workers, the tournaments' Elo cursor (see _upgrade_from_3);
# 5: bot crashes, private matches (see _upgrade_from_4).
SCHEMA_VERSION = 5
# The versions opening upgrades, each step from what the one before left (see open_schema).
_OLDER_VERSIONS = ("1", "2", "3", "4")
log = logging.getLogger(__name__)


class _Table(SQLModel):
    """The base of every table: declares the ``__table__`` SQLAlchemy gives each table
    class, which SQLModel's type hints leave out."""

    __table__: ClassVar[Table]


def _utc_column(nullable: bool = False) -> Any:
    return Field(sa_type=DateTime(timezone=True), nullable=nullable)


class MetaRow(_Table, table=True):
    __tablename__ = "arena_meta"
    key: str = Field(primary_key=True)
    value: str


class BotRow(_Table, table=True):
    __tablename__ = "bots"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    # sha256 hex of the token; None for bots the arena launches itself with a one-run token.
    token_hash: str | None = Field(default=None, unique=True)
    created_at: datetime = _utc_column()


class TournamentRow(_Table, table=True):
    __tablename__ = "tournaments"
    id: str = Field(primary_key=True)
    created_at: datetime = _utc_column()
    settings_json: str = Field(sa_type=Text)
    master_seed: int = Field(sa_type=BigInteger)
    status: str
    # Online Elo counts a tournament's matches in schedule order (see save.py, "Elo in
    # schedule order"): the slots below this one have counted, a stored match at or above
    # it waits for the slots before it. Schema 4.
    elo_next: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class MatchRow(_Table, table=True):
    __tablename__ = "matches"
    # A tournament slot holds one match; standalone matches have NULLs, which never clash.
    # Few indexes on purpose: every index is one more page written per saved match.
    __table_args__ = (UniqueConstraint("tournament_id", "game_index"),)
    id: int | None = Field(default=None, primary_key=True)
    match_id: str = Field(unique=True)
    tournament_id: str | None = Field(default=None, foreign_key="tournaments.id")
    game_index: int | None = None
    variant: str
    players: int
    config_json: str = Field(sa_type=Text)
    seed: int = Field(sa_type=BigInteger)
    status: str
    started_at: datetime = _utc_column()
    finished_at: datetime = _utc_column()
    result_json: str = Field(sa_type=Text)
    decisions: int
    median_latency_ms: float | None = None
    max_latency_ms: float | None = None
    # The time bank each seat started with (MatchRecord.time_bank_ms); None: not known
    # (a record without it, or a match stored before schema 3 outside a tournament).
    time_bank_ms: float | None = None
    # Its deal is played again by other matches (MatchRecord.private): its cards are kept
    # from spectators until those are stored too (arena.web.disclosure).
    private: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})


class MatchSeatRow(_Table, table=True):
    __tablename__ = "match_seats"
    __table_args__ = {"sqlite_with_rowid": False}
    match_pk: int = Field(foreign_key="matches.id", primary_key=True)
    seat: int = Field(primary_key=True)
    bot_id: int = Field(foreign_key="bots.id")
    bot_version: str
    total: int
    place: int
    forfeited: bool
    faults: int
    rounds: int | None = None           # classic: rounds scored
    exact_bids: int | None = None       # classic: rounds where tricks == bid
    # Faults of kind "timeout" (also counted in faults). The server default lets the
    # version-1 upgrade add the column to existing rows.
    timeouts: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # The seat's own slowest answered decision (None: it answered none), and the time bank
    # it used (MatchRecord.bank_used_ms; None: not known). Bank used equal to the match's
    # time_bank_ms means the seat emptied it. Schema 3; see _upgrade_from_2 for old rows.
    think_max_ms: float | None = None
    bank_used_ms: float | None = None


class MatchLogRow(_Table, table=True):
    __tablename__ = "match_logs"
    match_pk: int = Field(foreign_key="matches.id", primary_key=True)
    format: int
    actions: bytes = Field(sa_type=LargeBinary)       # zlib-compressed JSON list of [seat, action]
    latencies: bytes = Field(sa_type=LargeBinary)     # float64 little-endian per action, NaN = no answer


class FaultRow(_Table, table=True):
    __tablename__ = "faults"
    id: int | None = Field(default=None, primary_key=True)
    match_pk: int = Field(foreign_key="matches.id", index=True)
    seat: int
    bot_id: int = Field(foreign_key="bots.id")
    kind: str
    request_id: int | None = Field(default=None, sa_type=BigInteger)
    message: str = Field(sa_type=Text)
    at: datetime = _utc_column()


class EloRow(_Table, table=True):
    __tablename__ = "elo_ratings"
    __table_args__ = {"sqlite_with_rowid": False}    # keyed by its primary key alone: one B-tree
    bot_id: int = Field(foreign_key="bots.id", primary_key=True)
    variant: str = Field(primary_key=True)
    elo: float
    games: int


class RatingHistoryRow(_Table, table=True):
    __tablename__ = "rating_history"
    # No index on (bot, variant): it would add a page write per bot to every saved match,
    # and reading one bot's history is rare and fast enough as a scan.
    id: int | None = Field(default=None, primary_key=True)
    match_pk: int = Field(foreign_key="matches.id")
    bot_id: int = Field(foreign_key="bots.id")
    variant: str
    elo_before: float
    elo_after: float
    games: int                          # the bot's rated matches in this variant, this one included


# The two summaries below are what a leaderboard reads; save_match keeps them up to date
# in its transaction. Reading 100,000 matches' seats instead would take longer than the
# 2 s a leaderboard may take. They count completed matches only. ``tournament_key`` is
# the tournament id, or "" for a match outside any tournament.


class OutcomeCountRow(_Table, table=True):
    """How many matches ended with exactly these bots in exactly these places."""

    __tablename__ = "outcome_counts"
    __table_args__ = {"sqlite_with_rowid": False}
    variant: str = Field(primary_key=True)
    tournament_key: str = Field(primary_key=True)
    outcome: str = Field(primary_key=True)     # arena.stats.summaries.outcome_key: "3:1,5:2,7:2,9:4"
    matches: int


class BotTotalsRow(_Table, table=True):
    """A bot's running sums: the leaderboard's averages, rates and counts."""

    __tablename__ = "bot_totals"
    __table_args__ = {"sqlite_with_rowid": False}
    bot_id: int = Field(foreign_key="bots.id", primary_key=True)
    variant: str = Field(primary_key=True)
    tournament_key: str = Field(primary_key=True)
    games: int                  # matches (a bot in two seats of one match counts once)
    seats: int
    score_sum: int = Field(sa_type=BigInteger)
    place_sum: int
    rounds: int                 # classic only (0 for extreme)
    exact_bids: int             # classic only (0 for extreme)
    faults: int
    forfeits: int
    timeouts: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # Think times of the decisions the bot answered, as stored by arena.stats.think_times
    # (None: none yet). Merged in Python when a match is saved: SQL cannot add two of them.
    think_histogram: bytes | None = Field(default=None, sa_type=LargeBinary)


class ScheduledGameRow(_Table, table=True):
    """One game of a tournament's schedule, as ``Store.put_schedule`` stored it."""

    __tablename__ = "scheduled_games"
    __table_args__ = {"sqlite_with_rowid": False}
    tournament_id: str = Field(foreign_key="tournaments.id", primary_key=True)
    game_index: int = Field(primary_key=True)
    deal: int
    rotation: int
    bots_json: str = Field(sa_type=Text)            # names by seat, a JSON list
    seed: int = Field(sa_type=BigInteger)
    bot_seeds_json: str = Field(sa_type=Text)       # by seat, a JSON list
    table_number: int                               # "table" is a reserved word in SQL


class WorkUnitRow(_Table, table=True):
    """One deal of a scheduled tournament as a unit of work: who holds its lease, until when.

    ``lease_id`` counts the claims, so that a worker whose lease expired and was claimed
    again (by anyone, itself included) cannot renew it. ``done`` is set once every game
    of the deal is stored, by the claim or release that finds it so (it only saves the
    next claims from looking at the deal again).
    """

    __tablename__ = "work_units"
    # Claims look for the lowest open deal: the open ones alone are indexed, so that a
    # claim late in a long tournament does not walk past every finished deal.
    __table_args__ = (Index("work_units_open", "deal", "tournament_id", sqlite_where=sa.text("NOT done"),
                            postgresql_where=sa.text("NOT done")),
                      {"sqlite_with_rowid": False})
    tournament_id: str = Field(foreign_key="tournaments.id", primary_key=True)
    deal: int = Field(primary_key=True)
    worker: str | None = None
    lease_expires_at: datetime | None = _utc_column(nullable=True)
    lease_id: int = 0
    done: bool = False


class BotCrashRow(_Table, table=True):
    """A bot process the arena started that exited, crashed or was killed for a limit
    while it should have been playing: one ``arena.records.BotCrash``.

    Boards read a variant's crashes (or a tournament's) per bot, the bot page a bot's per
    variant: hence the two indexes. ``variant`` is None only when neither the crash nor
    its tournament's settings say which (see ``crashes.save_crash``).
    """

    __tablename__ = "bot_crashes"
    __table_args__ = (Index("bot_crashes_by_tournament", "tournament_id"),
                      Index("bot_crashes_by_bot", "bot_id", "variant"))
    id: int | None = Field(default=None, primary_key=True)
    bot_id: int = Field(foreign_key="bots.id")
    tournament_id: str | None = Field(default=None, foreign_key="tournaments.id")
    variant: str | None = None
    reason: str = Field(sa_type=Text)       # in words: "killed: out of memory (limit 512 MiB)"
    exit_code: int | None = None            # None: killed by a signal, or it never exited
    worker: str                             # the arena process that saw it ("host:pid")
    restarted: bool
    at: datetime = _utc_column()


def check_seed(seed: int, what: str) -> None:
    """Seeds are stored as 64-bit integers, the widest both SQLite and PostgreSQL have."""
    if not -(2**63) <= seed < 2**63:
        raise StoreError(f"{what} {seed} does not fit in 64 bits")


def chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    """``items`` in slices of ``size``: SQLite limits the bound parameters of a statement."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


TABLES = [
    MetaRow.__table__, BotRow.__table__, TournamentRow.__table__, MatchRow.__table__,
    MatchSeatRow.__table__, MatchLogRow.__table__, FaultRow.__table__, EloRow.__table__,
    RatingHistoryRow.__table__, OutcomeCountRow.__table__, BotTotalsRow.__table__,
    ScheduledGameRow.__table__, WorkUnitRow.__table__, BotCrashRow.__table__,
]

# Updating the schema-version row to itself: how a writer on PostgreSQL takes the store's
# write lock (SQLite's BEGIN IMMEDIATE takes it instead; see Store._write).
TAKE_WRITE_LOCK = (update(MetaRow.__table__).where(MetaRow.__table__.c.key == "schema_version")
                   .values(value=MetaRow.__table__.c.value))


def _stored_version(conn: Connection) -> str | None:
    """The schema version the database's ``arena_meta`` table records, if any."""
    version: str | None = conn.execute(select(MetaRow.value).where(MetaRow.key == "schema_version")).scalar()
    return version


def is_current(conn: Connection) -> bool:
    """Whether the database already holds this version's schema: then opening it needs
    no write lock (a reader starts while a writer holds it)."""
    if MetaRow.__tablename__ not in inspect(conn).get_table_names():
        return False
    return _stored_version(conn) == str(SCHEMA_VERSION)


def open_schema(conn: Connection, name: str) -> None:
    """Create the schema in a new or empty database, upgrade a version-1 to -4 one, and refuse
    (``StoreError``) another schema version or a database with someone else's tables.

    ``conn`` must be in a writing transaction from its start: two processes opening a new
    file at once would otherwise both read "no tables" and then fail to upgrade to writing.
    """
    tables = set(inspect(conn).get_table_names())
    if not tables:
        SQLModel.metadata.create_all(conn, tables=TABLES)
        conn.execute(insert(MetaRow).values(key="schema_version", value=str(SCHEMA_VERSION)))
        return
    if MetaRow.__tablename__ not in tables:
        raise StoreError(f"{name} is not an arena database (no schema version table)")
    version = _stored_version(conn)
    if version is None:
        raise StoreError(f"{name} is not an arena database (no schema version)")
    if version in _OLDER_VERSIONS and conn.dialect.name != "sqlite":
        # SQLite's BEGIN IMMEDIATE already excludes other writers; on PostgreSQL two
        # processes must not both upgrade: lock, then look again.
        conn.execute(TAKE_WRITE_LOCK)
        version = _stored_version(conn)
    if version in _OLDER_VERSIONS:
        # One step at a time, each from what the one before left.
        if version == "1":
            _upgrade_from_1(conn, name)
        if version in ("1", "2"):
            _upgrade_from_2(conn, name)
        if version in ("1", "2", "3"):
            _upgrade_from_3(conn, name)
        _upgrade_from_4(conn, name)
        conn.execute(update(MetaRow.__table__).where(MetaRow.__table__.c.key == "schema_version")
                     .values(value=str(SCHEMA_VERSION)))
    elif version != str(SCHEMA_VERSION):
        raise StoreError(f"{name} has schema version {version}; this arena understands {SCHEMA_VERSION}")


def _upgrade_from_1(conn: Connection, name: str) -> None:
    """Schema 1 to 2: add the timeout counts and think-time histograms, and fill them in
    from what the database already holds, in the caller's transaction (all or nothing).

    Timeouts come from the faults table. Think times need every completed match's log:
    the seat of each action is in its (compressed JSON) actions and the latencies beside
    them, so each log is decoded once here, a page of matches at a time to keep memory
    flat whatever the database's size, and counted as a save counts them
    (``arena.stats.think_times``). Its time therefore grows with the number of matches.
    """
    started = time.perf_counter()
    matches, seats, logs = MatchRow.__table__, MatchSeatRow.__table__, MatchLogRow.__table__
    faults, totals = FaultRow.__table__, BotTotalsRow.__table__
    for table, column in ((seats, "timeouts"), (totals, "timeouts"), (totals, "think_histogram")):
        # ALTER TABLE ... ADD COLUMN reads the same on SQLite and PostgreSQL; the column's
        # own definition (type, NOT NULL, server default) is compiled for the database.
        definition = CreateColumn(table.c[column]).compile(dialect=conn.dialect)
        conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {definition}")

    # Timeouts per seat, then their sums per bot, variant and tournament (completed matches).
    per_seat = conn.execute(select(faults.c.match_pk, faults.c.seat, func.count())
                            .where(faults.c.kind == "timeout").group_by(faults.c.match_pk, faults.c.seat)).all()
    if per_seat:
        conn.execute(update(seats).where(seats.c.match_pk == bindparam("b_pk"), seats.c.seat == bindparam("b_seat"))
                     .values(timeouts=bindparam("b_count")),
                     [{"b_pk": pk, "b_seat": seat, "b_count": count} for pk, seat, count in per_seat])
    tournament_key = func.coalesce(matches.c.tournament_id, "")
    timeouts = {(bot_id, variant, key): int(count) for bot_id, variant, key, count in conn.execute(
        select(seats.c.bot_id, matches.c.variant, tournament_key, func.sum(seats.c.timeouts))
        .join(matches, matches.c.id == seats.c.match_pk)
        .where(matches.c.status == "completed", seats.c.timeouts > 0)
        .group_by(seats.c.bot_id, matches.c.variant, tournament_key)).all()}

    # Think-time histograms, from the logs of the completed matches.
    histograms: dict[tuple[int, str, str], np.ndarray] = {}
    after, decoded, unreadable = 0, 0, 0
    while True:
        page = conn.execute(
            sa.select(matches.c.id, matches.c.variant, matches.c.tournament_id, matches.c.players,
                   logs.c.actions, logs.c.latencies)
            .join(logs, logs.c.match_pk == matches.c.id)
            .where(matches.c.status == "completed", matches.c.id > after).order_by(matches.c.id).limit(500)
        ).all()
        if not page:
            break
        bot_of = {(pk, seat): bot_id for pk, seat, bot_id in conn.execute(
            select(seats.c.match_pk, seats.c.seat, seats.c.bot_id)
            .where(seats.c.match_pk.between(page[0].id, page[-1].id))).all()}
        for pk, variant, tournament_id, players, actions, latencies in page:
            try:
                seats_of_actions, latencies_ms = log_seats_and_latencies(actions, latencies)
                counts = seat_bucket_counts(latencies_ms, seats_of_actions, players)
                keys = [(bot_of[(pk, seat)], variant, tournament_id or "") for seat in range(players)]
            except (zlib.error, ValueError, TypeError, IndexError, KeyError):
                # A damaged log must not make the whole database unopenable: its match
                # just adds no think times (it is still rated and counted).
                unreadable += 1
                continue
            for seat, key in enumerate(keys):
                histograms[key] = counts[seat] if key not in histograms else histograms[key] + counts[seat]
            decoded += 1
        after = page[-1].id

    updates = [{"b_bot": key[0], "b_variant": key[1], "b_key": key[2], "b_timeouts": timeouts.get(key, 0),
                "b_histogram": add_counts(None, histograms[key]) if key in histograms else None}
               for key in sorted(set(timeouts) | set(histograms))]
    if updates:
        conn.execute(update(totals)
                     .where(totals.c.bot_id == bindparam("b_bot"), totals.c.variant == bindparam("b_variant"),
                            totals.c.tournament_key == bindparam("b_key"))
                     .values(timeouts=bindparam("b_timeouts"), think_histogram=bindparam("b_histogram")), updates)
    log.info("%s: upgraded to schema version 2 (think times from %d match logs) in %.1f s",
             name, decoded, time.perf_counter() - started)
    if unreadable:
        log.warning("%s: %d match logs could not be read; their think times are not counted", name, unreadable)


def _upgrade_from_2(conn: Connection, name: str) -> None:
    """Schema 2 to 3: add each seat's slowest answer and time-bank use and each match's
    time bank, and fill them in from what the database already holds, in the caller's
    transaction (all or nothing).

    The slowest answer is exact: it is in the log, decoded once per match a page of
    matches at a time as in :func:`_upgrade_from_1` (every status: a seat row is a seat
    row). The bank use was never stored, and neither were a match's time limits, so it
    is filled in only for the matches of a tournament whose stored settings give its
    ``move_time`` and ``time_bank`` (tournaments organised from this database), and there
    it is worked out from the log as the referee charges it: the time each answer took
    past ``move_time``, summed per seat and capped at the bank, and the whole bank for a
    seat with a timeout. That estimate misses what a dropped connection cost (such an
    answer is not in the log) and the rounding of the logged latencies. Every other
    match keeps NULL bank figures: not known.
    """
    started = time.perf_counter()
    matches, seats, logs = MatchRow.__table__, MatchSeatRow.__table__, MatchLogRow.__table__
    for table, column in ((matches, "time_bank_ms"), (seats, "think_max_ms"), (seats, "bank_used_ms")):
        definition = CreateColumn(table.c[column]).compile(dialect=conn.dialect)
        conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {definition}")

    # (move_time, time_bank) in ms per tournament whose settings hold both.
    limits: dict[str, tuple[float, float]] = {}
    for tournament_id, settings_json in conn.execute(
            select(TournamentRow.__table__.c.id, TournamentRow.__table__.c.settings_json)).all():
        try:
            settings = loads(settings_json)
            move_time, bank = float(settings["move_time"]), float(settings["time_bank"])
        except (ValueError, TypeError, KeyError):
            continue        # organised elsewhere (a stub without limits), or unreadable
        limits[tournament_id] = (round(move_time * 1000, 3), round(bank * 1000, 3))

    set_seat = (update(seats).where(seats.c.match_pk == bindparam("b_pk"), seats.c.seat == bindparam("b_seat"))
                .values(think_max_ms=bindparam("b_max"), bank_used_ms=bindparam("b_used")))
    set_bank = update(matches).where(matches.c.id == bindparam("b_pk")).values(time_bank_ms=bindparam("b_bank"))
    after, decoded, estimated, unreadable = 0, 0, 0, 0
    while True:
        page = conn.execute(
            sa.select(matches.c.id, matches.c.tournament_id, matches.c.players, logs.c.actions, logs.c.latencies)
            .join(logs, logs.c.match_pk == matches.c.id)
            .where(matches.c.id > after).order_by(matches.c.id).limit(500)
        ).all()
        if not page:
            break
        timeouts = {(pk, seat): count for pk, seat, count in conn.execute(
            select(seats.c.match_pk, seats.c.seat, seats.c.timeouts)
            .where(seats.c.match_pk.between(page[0].id, page[-1].id))).all()}
        seat_updates: list[dict[str, Any]] = []
        bank_updates: list[dict[str, Any]] = []
        for pk, tournament_id, players, actions, latencies in page:
            used: list[float | None] = [None] * players
            try:
                seats_of_actions, latencies_ms = log_seats_and_latencies(actions, latencies)
                highest = seat_max_latencies(latencies_ms, seats_of_actions, players)
                if tournament_id in limits:
                    move_ms, bank_ms = limits[tournament_id]
                    past = np.where(np.isnan(latencies_ms), 0.0, np.maximum(latencies_ms - move_ms, 0.0))
                    drawn = np.bincount(seats_of_actions, weights=past, minlength=players).tolist()
                    used = [bank_ms if timeouts.get((pk, seat), 0) else round(min(bank_ms, drawn[seat]), 3)
                            for seat in range(players)]
            except (zlib.error, ValueError, TypeError, IndexError):
                unreadable += 1      # as in _upgrade_from_1: its seats keep NULL figures
                continue
            if tournament_id in limits:
                bank_updates.append({"b_pk": pk, "b_bank": limits[tournament_id][1]})
                estimated += 1
            seat_updates += [{"b_pk": pk, "b_seat": seat, "b_max": highest[seat], "b_used": used[seat]}
                             for seat in range(players)]
            decoded += 1
        if seat_updates:
            conn.execute(set_seat, seat_updates)
        if bank_updates:
            conn.execute(set_bank, bank_updates)
        after = page[-1].id
    log.info("%s: upgraded to schema version 3 (think maxima from %d match logs, time-bank use estimated "
             "for %d tournament matches) in %.1f s", name, decoded, estimated, time.perf_counter() - started)
    if unreadable:
        log.warning("%s: %d match logs could not be read; their seats' think maxima are not known", name, unreadable)


def _upgrade_from_3(conn: Connection, name: str) -> None:
    """Schema 3 to 4: create the schedule and lease tables (empty: no tournament of an
    older arena had workers), and add the tournaments' Elo cursor, in the caller's
    transaction.

    Every stored match of an older database has already counted for online Elo (in the
    order it was saved), so each tournament's cursor starts past its highest stored
    slot: a match stored later into a lower slot (a resumed tournament's gap) counts
    when it is saved, as before, and one past it waits for its turn.
    """
    SQLModel.metadata.create_all(conn, tables=[ScheduledGameRow.__table__, WorkUnitRow.__table__])
    tournaments, matches = TournamentRow.__table__, MatchRow.__table__
    definition = CreateColumn(tournaments.c.elo_next).compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE {tournaments.name} ADD COLUMN {definition}")
    highest = (sa.select(func.max(matches.c.game_index) + 1).where(matches.c.tournament_id == tournaments.c.id)
               .scalar_subquery())
    conn.execute(update(tournaments).values(elo_next=func.coalesce(highest, 0)))
    log.info("%s: upgraded to schema version 4 (worker schedules and leases)", name)


def _upgrade_from_4(conn: Connection, name: str) -> None:
    """Schema 4 to 5: create the crash table with its indexes (empty: no older arena
    recorded crashes) and add ``matches.private`` (false: an older arena kept no match
    private), in the caller's transaction."""
    SQLModel.metadata.create_all(conn, tables=[BotCrashRow.__table__])
    matches = MatchRow.__table__
    definition = CreateColumn(matches.c.private).compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE {matches.name} ADD COLUMN {definition}")
    log.info("%s: upgraded to schema version 5 (bot crashes, private matches)", name)
