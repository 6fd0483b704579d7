"""Storage: bots, tournaments, matches with their full decision logs, faults and ratings.

One :class:`Store` wraps one database: a SQLite file (WAL mode) or, given a
``postgresql://`` URL, a PostgreSQL database (``pip install -e '.[postgres]'``). Apart
from the SQLite connection setup and the parameter marker of the save path's driver
SQL (see ``_DriverSQL``) the SQL is the same. A Store may be used from any thread:
every call opens its own session or connection on the shared engine, which is how the
asyncio referee uses it (``asyncio.to_thread``)::

    >>> import tempfile, os
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "arena.db"))
    >>> token = store.register_bot("alice")
    >>> store.bot_for_token(token)
    'alice'
    >>> store.bot_for_token("wrong") is None
    True

The API, by topic:

bots          ``register_bot(name, rotate=False) -> token``, ``ensure_bot(name)``,
              ``bot_for_token(token) -> name | None``, ``list_bots()``
tournaments   ``create_tournament(settings, master_seed) -> id``, ``get_tournament(id)``,
              ``list_tournaments()``, ``set_tournament_status(id, status)``,
              ``finished_game_indexes(id) -> set[int]`` (what ``--resume`` skips),
              ``tournament_game_options(ids)`` (the game options each was played with)
matches       ``save_match(record) -> bool`` (one transaction, idempotent),
              ``save_matches(records) -> int`` (the same, many at once),
              ``load_match(match_id) -> MatchRecord``, ``list_matches(...)``, ``match_count(...)``
ratings       ``current_elo(variant)``, ``rating_history(bot, variant)``,
              ``leaderboard_inputs(variant, tournament_id)`` (outcome counts, per-bot sums
              and Elo in one snapshot: what arena.results.leaderboard reads)

Tables (``SCHEMA_VERSION`` 2; a version-1 database is upgraded when opened, see
``_upgrade_from_1``):

``arena_meta``       key/value; ``schema_version`` marks the file as ours
``bots``             name, sha256 of the token (never the token), created
``tournaments``      short id, settings JSON, master seed, status
``matches``          one row per match: variant, config, seed, status, times, result JSON,
                     decision latency figures; ``match_id`` is the referee's id
``match_seats``      one row per seat: bot, version, total, place, forfeit, faults, timeouts,
                     and for classic the rounds played and exact bids
``match_logs``       the decision log: zlib-compressed JSON actions, float64 latencies
``faults``           one row per fault
``elo_ratings``      the current online Elo of each bot per variant
``rating_history``   every Elo change: match, bot, before, after, games played
``outcome_counts``   how many completed matches ended in each outcome (bots and places)
``bot_totals``       per bot, variant and tournament: running sums for the leaderboard, and a
                     histogram of the bot's think times (arena.results.think_times)

Every write holds the database's write lock from its first statement (see
``Store._write``), so read-modify-write steps such as the Elo update never interleave.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import secrets
import sys
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timezone
from itertools import chain
from typing import Any

import numpy as np
import orjson
from sqlalchemy import BigInteger, DateTime, LargeBinary, Text, UniqueConstraint, bindparam, event, func, inspect
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.schema import CreateColumn
from sqlmodel import Field, Session, SQLModel, create_engine, insert, select, update

from arena.records import FaultRecord, MatchRecord
from arena.results.ratings import START_ELO, elo_deltas, k_factor
from arena.results.think_times import LatencyHistogram, add_counts, encode_counts, seat_bucket_counts

SCHEMA_VERSION = 2    # 2: timeouts and think-time histograms (see _upgrade_from_1)
LOG_FORMAT = 1        # match_logs.format, see encode_log
log = logging.getLogger(__name__)
_TOKEN_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"   # tournament ids: no 0/o, 1/l/i


class StoreError(Exception):
    """Anything the store refuses or cannot do, with a one-line message for the user."""


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def _utc_column(nullable: bool = False) -> Any:
    return Field(sa_type=DateTime(timezone=True), nullable=nullable)


class MetaRow(SQLModel, table=True):
    __tablename__ = "arena_meta"
    key: str = Field(primary_key=True)
    value: str


class BotRow(SQLModel, table=True):
    __tablename__ = "bots"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    # sha256 hex of the token; None for bots the arena launches itself with a one-run token.
    token_hash: str | None = Field(default=None, unique=True)
    created_at: datetime = _utc_column()


class TournamentRow(SQLModel, table=True):
    __tablename__ = "tournaments"
    id: str = Field(primary_key=True)
    created_at: datetime = _utc_column()
    settings_json: str = Field(sa_type=Text)
    master_seed: int = Field(sa_type=BigInteger)
    status: str


class MatchRow(SQLModel, table=True):
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


class MatchSeatRow(SQLModel, table=True):
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


class MatchLogRow(SQLModel, table=True):
    __tablename__ = "match_logs"
    match_pk: int = Field(foreign_key="matches.id", primary_key=True)
    format: int
    actions: bytes = Field(sa_type=LargeBinary)       # zlib-compressed JSON list of [seat, action]
    latencies: bytes = Field(sa_type=LargeBinary)     # float64 little-endian per action, NaN = no answer


class FaultRow(SQLModel, table=True):
    __tablename__ = "faults"
    id: int | None = Field(default=None, primary_key=True)
    match_pk: int = Field(foreign_key="matches.id", index=True)
    seat: int
    bot_id: int = Field(foreign_key="bots.id")
    kind: str
    request_id: int | None = Field(default=None, sa_type=BigInteger)
    message: str = Field(sa_type=Text)
    at: datetime = _utc_column()


class EloRow(SQLModel, table=True):
    __tablename__ = "elo_ratings"
    __table_args__ = {"sqlite_with_rowid": False}    # keyed by its primary key alone: one B-tree
    bot_id: int = Field(foreign_key="bots.id", primary_key=True)
    variant: str = Field(primary_key=True)
    elo: float
    games: int


class RatingHistoryRow(SQLModel, table=True):
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


class OutcomeCountRow(SQLModel, table=True):
    """How many matches ended with exactly these bots in exactly these places."""

    __tablename__ = "outcome_counts"
    __table_args__ = {"sqlite_with_rowid": False}
    variant: str = Field(primary_key=True)
    tournament_key: str = Field(primary_key=True)
    outcome: str = Field(primary_key=True)     # "bot_id:place" per seat, sorted: "3:1,5:2,7:2,9:4"
    matches: int


class BotTotalsRow(SQLModel, table=True):
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
    # Think times of the decisions the bot answered, as stored by arena.results.think_times
    # (None: none yet). Merged in Python when a match is saved: SQL cannot add two of them.
    think_histogram: bytes | None = Field(default=None, sa_type=LargeBinary)


def outcome_key(bot_ids: Sequence[int], places: Sequence[int]) -> str:
    """The stored form of a match outcome, independent of who sat where.

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


class _SQL:
    """The SQLAlchemy statements of the write path that are not run for every match, built once."""

    _matches, _bots = MatchRow.__table__, BotRow.__table__
    _keys = bindparam("keys", expanding=True)         # an IN (...) list given at execution
    take_write_lock = (update(MetaRow.__table__).where(MetaRow.__table__.c.key == "schema_version")
                       .values(value=MetaRow.__table__.c.value))
    stored_match_ids = select(_matches.c.match_id).where(_matches.c.match_id.in_(_keys))
    known_tournaments = select(TournamentRow.__table__.c.id).where(TournamentRow.__table__.c.id.in_(_keys))
    bot_ids = select(_bots.c.name, _bots.c.id).where(_bots.c.name.in_(_keys))
    insert_bots = insert(_bots)


@dataclass(frozen=True)
class _DriverStatement:
    """One statement in the driver's own SQL, and the columns its parameters come from."""

    sql: str
    columns: tuple[str, ...]
    # (position, the column type's bind processor): SQLite keeps datetimes as text, and
    # these write them exactly as SQLAlchemy does, so each side reads the other's rows.
    converters: tuple[tuple[int, Callable[[Any], Any]], ...]

    def params(self, row: dict[str, Any]) -> list[Any]:
        values = [row[name] for name in self.columns]
        for position, convert in self.converters:
            values[position] = convert(values[position])
        return values


class _DriverSQL:
    """The per-match save path in the driver's own SQL, run on the DB-API cursor.

    Why not SQLAlchemy here: each of a save's ten statements cost about 0.1 ms of
    SQLAlchemy's bookkeeping, more than SQLite takes to run it, and that held recording
    under its 500 matches/s target (``arena bench store``). The SQL is plain enough to
    read the same on SQLite and PostgreSQL (``RETURNING`` and ``ON CONFLICT ... DO
    UPDATE`` included); only the parameter marker differs.
    """

    def __init__(self, dialect: Any) -> None:
        self.dialect = dialect
        self.mark = "?" if dialect.paramstyle == "qmark" else "%s"
        self.insert_match = self._insert(MatchRow.__table__, returning="id")
        self.insert_seats = self._insert(MatchSeatRow.__table__)
        self.insert_logs = self._insert(MatchLogRow.__table__)
        self.insert_faults = self._insert(FaultRow.__table__)
        self.insert_history = self._insert(RatingHistoryRow.__table__)
        self.insert_elo = self._insert(EloRow.__table__)
        self.update_elo = self._statement(
            f"UPDATE {EloRow.__tablename__} SET elo = {self.mark}, games = {self.mark} "
            f"WHERE bot_id = {self.mark} AND variant = {self.mark}",
            EloRow.__table__, ("elo", "games", "bot_id", "variant"))
        self.add_outcomes = self._adding_upsert(OutcomeCountRow.__table__, ["matches"])
        self.add_totals = self._adding_upsert(BotTotalsRow.__table__, [
            "games", "seats", "score_sum", "place_sum", "rounds", "exact_bids", "faults", "forfeits", "timeouts"],
            replaced=["think_histogram"])

    def elo_of_bots(self, count: int) -> str:
        marks = ", ".join([self.mark] * count)
        return f"SELECT bot_id, variant, elo, games FROM {EloRow.__tablename__} WHERE bot_id IN ({marks})"

    def histograms_of(self, bots: int, variants: int, tournaments: int) -> str:
        """The stored think-time histograms of some bots, variants and tournament keys
        (every combination: the caller keeps the ones it asked for)."""
        def marks(count: int) -> str:
            return ", ".join([self.mark] * count)

        return (f"SELECT bot_id, variant, tournament_key, think_histogram FROM {BotTotalsRow.__tablename__} "
                f"WHERE bot_id IN ({marks(bots)}) AND variant IN ({marks(variants)}) "
                f"AND tournament_key IN ({marks(tournaments)}) AND think_histogram IS NOT NULL")

    def _statement(self, sql: str, table: Any, columns: Sequence[str]) -> _DriverStatement:
        converters = []
        for position, name in enumerate(columns):
            convert = table.c[name].type.dialect_impl(self.dialect).bind_processor(self.dialect)
            if convert is not None:
                converters.append((position, convert))
        return _DriverStatement(sql, tuple(columns), tuple(converters))

    def _insert(self, table: Any, returning: str | None = None) -> _DriverStatement:
        # An autoincrement key is left to the database.
        columns = [c.name for c in table.columns if c is not table.autoincrement_column]
        sql = (f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join([self.mark] * len(columns))})"
               + (f" RETURNING {returning}" if returning else ""))
        return self._statement(sql, table, columns)

    def _adding_upsert(self, table: Any, counters: list[str], replaced: Sequence[str] = ()) -> _DriverStatement:
        """``INSERT ... ON CONFLICT (primary key) DO UPDATE SET counter = counter + new value``;
        a ``replaced`` column takes the new value, unless that is NULL."""
        columns = [c.name for c in table.columns]
        keys = ", ".join(c.name for c in table.primary_key.columns)
        adds = ", ".join([f"{name} = {table.name}.{name} + excluded.{name}" for name in counters]
                         + [f"{name} = COALESCE(excluded.{name}, {table.name}.{name})" for name in replaced])
        sql = (f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join([self.mark] * len(columns))}) "
               f"ON CONFLICT ({keys}) DO UPDATE SET {adds}")
        return self._statement(sql, table, columns)


_TABLES = [
    MetaRow.__table__, BotRow.__table__, TournamentRow.__table__, MatchRow.__table__,
    MatchSeatRow.__table__, MatchLogRow.__table__, FaultRow.__table__, EloRow.__table__,
    RatingHistoryRow.__table__, OutcomeCountRow.__table__, BotTotalsRow.__table__,
]


# --------------------------------------------------------------------------------------
# What the API returns
# --------------------------------------------------------------------------------------


@dataclass
class BotInfo:
    name: str
    has_token: bool
    created_at: datetime


@dataclass
class TournamentInfo:
    id: str
    created_at: datetime
    settings: dict[str, Any]
    master_seed: int
    status: str
    matches: int = 0           # matches stored so far


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
    timeouts: int = 0          # faults of kind "timeout"
    # Latencies of the decisions the bot answered (fallbacks played for it are not think time).
    think_times: LatencyHistogram = LatencyHistogram()


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def hash_token(token: str) -> str:
    """The stored form of a bot token.

    >>> hash_token("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode()).hexdigest()


def _utc(moment: datetime) -> datetime:
    """Store every time in UTC; a naive time is taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _loaded(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; ours are always UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _json(value: Any) -> str:
    """Compact JSON text, as ``json.dumps(value, separators=(",", ":"))`` writes it (up to
    the escaping of non-ASCII characters).

    >>> _json({"a": [1, None], 2: 2**70})
    '{"a":[1,null],"2":1180591620717411303424}'
    """
    return _json_bytes(value).decode()


def _json_bytes(value: Any) -> bytes:
    # orjson is 10-15 times faster than json on the save path's logs and results (about
    # 0.1 ms of a match's save); what it refuses (integers beyond 64 bits) goes to json.
    # Its text can differ from json's (non-ASCII unescaped): both read back the same.
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), check_circular=False).encode()


def encode_log(actions: Sequence[Sequence[Any]], latencies_ms: Sequence[float | None]) -> tuple[bytes, bytes]:
    """The compact stored log (about 5.5 KB for a 4-player classic game of 540 decisions).

    Actions: zlib-compressed JSON of one flat list ``[seat, action, seat, action, ...]``
    (a flat list encodes twice as fast as a list of pairs). Latencies: raw float64,
    little-endian, NaN where the referee played the fallback (exact, and much faster
    than writing 540 floats as text). zlib level 1: level 6 saves 20% of the bytes but
    costs three times the time.

    >>> decode_log(*encode_log([[0, 1], [1, "b7"]], [2.5, None]))
    ([[0, 1], [1, 'b7']], [2.5, None])
    """
    packed_actions, latencies, _ = _pack_log(actions, latencies_ms)
    return packed_actions, latencies.tobytes()


def _pack_log(actions: Sequence[Sequence[Any]],
              latencies_ms: Sequence[float | None]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """:func:`encode_log`'s compressed actions, the latencies as a little-endian float64
    array (None becomes NaN), and the seat of each action: the save path needs all three."""
    flat = list(chain.from_iterable(actions))      # twice as fast as unpacking each pair
    if len(flat) != 2 * len(actions):
        raise StoreError(f"every logged action must be a [seat, action] pair ({len(actions)} actions "
                         f"hold {len(flat)} items)")
    packed_actions = zlib.compress(_json_bytes(flat), 1)
    latencies = np.array(latencies_ms, dtype="<f8")
    return packed_actions, latencies, np.array(flat[0::2], dtype=np.int64)


def decode_log(actions: bytes, latencies: bytes) -> tuple[list[list[Any]], list[float | None]]:
    """The inverse of :func:`encode_log`: ``([[seat, action], ...], latencies)``."""
    flat = json.loads(zlib.decompress(actions))
    packed = array("d")
    packed.frombytes(latencies)
    if sys.byteorder != "little":
        packed.byteswap()
    return [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)], [None if math.isnan(x) else x for x in packed]


def _classic_bid_counts(result: dict[str, Any], seats: int) -> tuple[list[int | None], list[int | None]]:
    """Rounds played and exact bids per seat, from an engine result's ``rounds``."""
    rounds: list[int | None] = [0] * seats
    exact: list[int | None] = [0] * seats
    for round_lines in result.get("rounds", []):
        for seat, line in enumerate(round_lines[:seats]):
            if "bid" in line and "tricks" in line:
                rounds[seat] = (rounds[seat] or 0) + 1
                exact[seat] = (exact[seat] or 0) + (line["bid"] == line["tricks"])
    return rounds, exact


def _latency_figures(latencies: np.ndarray) -> tuple[float | None, float | None]:
    """Median and maximum of the known latencies (NaN: unknown), as matches stores them.

    >>> _latency_figures(np.array([3.0, math.nan, 1.0, 2.0, 10.0]))
    (2.5, 10.0)
    """
    known = np.sort(latencies[~np.isnan(latencies)])      # np.median takes several times longer
    if known.size == 0:
        return None, None
    middle = known.size // 2
    median = float(known[middle]) if known.size % 2 else (float(known[middle - 1]) + float(known[middle])) / 2
    return median, float(known[-1])


def _count_timeouts(record: MatchRecord) -> list[int]:
    """Faults of kind "timeout" per seat."""
    timeouts = [0] * len(record.bots)
    for fault in record.faults:
        if fault.kind == "timeout" and 0 <= fault.seat < len(timeouts):
            timeouts[fault.seat] += 1
    return timeouts


def _run(cursor: Any, statement: _DriverStatement, rows: list[dict[str, Any]]) -> None:
    if rows:
        cursor.executemany(statement.sql, [statement.params(row) for row in rows])


def _chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    # SQLite limits the number of bound parameters per statement.
    for start in range(0, len(items), size):
        yield items[start:start + size]


# --------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------


class Store:
    """The arena's database. ``Store("arena.db")`` or ``Store("postgresql://...")``.

    Opening creates the schema in a new or empty database, and refuses (``StoreError``)
    a database of another schema version, a SQLite file with someone else's tables, and a
    file that is not a database.
    """

    def __init__(self, url_or_path: str) -> None:
        if "://" in url_or_path:
            url, self.name = url_or_path, url_or_path.split("@")[-1]
        else:
            self.name = url_or_path
            url = "sqlite:///" + os.path.abspath(url_or_path)
        try:
            backend = make_url(url).get_backend_name()
        except sa_exc.ArgumentError:
            raise StoreError(f"{self.name!r} is not a database URL") from None
        if backend not in ("sqlite", "postgresql"):
            raise StoreError(f"unsupported database {backend!r}: use a SQLite file or a postgresql:// URL")
        self.is_sqlite = backend == "sqlite"
        connect_args = {"check_same_thread": False, "timeout": 30} if self.is_sqlite else {}
        try:
            self.engine: Engine = create_engine(url, connect_args=connect_args)
        except ImportError as error:
            raise StoreError(f"no driver for {backend} ({error}): pip install -e '.[postgres]'") from None
        except sa_exc.ArgumentError as error:
            raise StoreError(f"{self.name!r} is not a usable database URL ({error})") from None
        self._bot_id_cache: dict[str, int] = {}
        self._known_tournaments: set[str] = set()
        self._driver_sql = _DriverSQL(self.engine.dialect)
        if self.is_sqlite:
            _setup_sqlite(self.engine)
        try:
            self._open_schema()
        except sa_exc.DatabaseError as error:
            self.engine.dispose()
            reason = str(getattr(error, "orig", error)).strip()
            if "not a database" in reason:
                raise StoreError(f"{self.name} is not a database file ({reason})") from None
            raise StoreError(f"cannot open {self.name}: {reason}") from None
        except StoreError:
            self.engine.dispose()
            raise

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema -------------------------------------------------------------------------

    def _open_schema(self) -> None:
        # A write transaction from the start: two processes opening a new file at once
        # would otherwise both read "no tables" and then fail to upgrade to writing.
        with self.engine.connect() as conn, conn.execution_options(arena_write=True).begin():
            tables = set(inspect(conn).get_table_names())
            if not tables:
                SQLModel.metadata.create_all(conn, tables=_TABLES)
                conn.execute(insert(MetaRow).values(key="schema_version", value=str(SCHEMA_VERSION)))
                return
            if MetaRow.__tablename__ not in tables:
                raise StoreError(f"{self.name} is not an arena database (no schema version table)")
            version = conn.execute(select(MetaRow.value).where(MetaRow.key == "schema_version")).scalar()
            if version is None:
                raise StoreError(f"{self.name} is not an arena database (no schema version)")
            if version == "1" and not self.is_sqlite:
                # SQLite's BEGIN IMMEDIATE already excludes other writers; on PostgreSQL two
                # processes must not both upgrade: lock, then look again.
                conn.execute(_SQL.take_write_lock)
                version = conn.execute(select(MetaRow.value).where(MetaRow.key == "schema_version")).scalar()
            if version == "1":
                _upgrade_from_1(conn, self.name)
                conn.execute(update(MetaRow.__table__).where(MetaRow.__table__.c.key == "schema_version")
                             .values(value=str(SCHEMA_VERSION)))
            elif version != str(SCHEMA_VERSION):
                raise StoreError(
                    f"{self.name} has schema version {version}; this arena understands {SCHEMA_VERSION}"
                )

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session

    @contextmanager
    def _write(self) -> Iterator[Session]:
        """A session whose transaction holds the database's write lock from its start.

        Why: a write that first reads (current Elo, existing rows) must not interleave with
        another writer. SQLite gets ``BEGIN IMMEDIATE`` (see _setup_sqlite), which takes its
        single write lock at once, waiting up to the busy timeout; other databases lock the
        schema-version row, which serialises writers the same way.
        """
        with Session(self.engine) as session:
            conn = session.connection(execution_options={"arena_write": True})
            if not self.is_sqlite:
                conn.execute(_SQL.take_write_lock)
            yield session
            session.commit()

    @contextmanager
    def _write_core(self) -> Iterator[Connection]:
        """Like _write, but a plain connection: the match-saving path skips the ORM session."""
        with self.engine.connect() as conn:
            conn.execution_options(arena_write=True)
            with conn.begin():
                if not self.is_sqlite:
                    conn.execute(_SQL.take_write_lock)
                yield conn

    # -- bots ---------------------------------------------------------------------------

    def register_bot(self, name: str, rotate: bool = False) -> str:
        """Register a bot and return its token; the token is shown once and only its hash is kept.

        An existing name is refused unless ``rotate=True``, which replaces its token.
        """
        if not name or not name.strip():
            raise StoreError("a bot needs a name")
        token = secrets.token_hex(24)
        with self._write() as session:
            bot = session.exec(select(BotRow).where(BotRow.name == name)).first()
            if bot is None:
                session.add(BotRow(name=name, token_hash=hash_token(token), created_at=datetime.now(UTC)))
            elif bot.token_hash is not None and not rotate:
                raise StoreError(f"bot {name!r} is already registered "
                                 f"(arena bot register {name} --rotate issues a new token)")
            else:
                bot.token_hash = hash_token(token)
        return token

    def ensure_bot(self, name: str) -> None:
        """Create a token-less bot row (a bot the arena runs itself) if the name is new."""
        with self._write() as session:
            self._bot_ids(session.connection(), [name])

    def bot_for_token(self, token: str) -> str | None:
        """The name of the bot this token belongs to, or None."""
        with self._read() as session:
            return session.exec(select(BotRow.name).where(BotRow.token_hash == hash_token(token))).first()

    def bots_for_tokens(self, tokens: Iterable[str]) -> dict[str, str]:
        """The bot name of each token that belongs to a bot (one query; unknown ones left out)."""
        by_hash = {hash_token(token): token for token in tokens}
        if not by_hash:
            return {}
        with self._read() as session:
            rows = session.exec(select(BotRow.token_hash, BotRow.name)
                                .where(BotRow.token_hash.in_(list(by_hash)))).all()  # type: ignore[union-attr]
        return {by_hash[token_hash]: name for token_hash, name in rows}

    def remove_bot(self, name: str) -> None:
        """Take a bot's token away: it can no longer connect (a running arena ends its
        streams), while its matches and ratings stay. ``register_bot(name, rotate=True)``
        gives it a new token."""
        with self._write() as session:
            bot = session.exec(select(BotRow).where(BotRow.name == name)).first()
            if bot is None or bot.token_hash is None:
                raise StoreError(f"no bot {name!r} with a token is registered")
            bot.token_hash = None

    def list_bots(self) -> list[BotInfo]:
        with self._read() as session:
            rows = session.exec(select(BotRow).order_by(BotRow.name)).all()
            return [BotInfo(r.name, r.token_hash is not None, _loaded(r.created_at)) for r in rows]

    def _bot_ids(self, conn: Connection, names: Sequence[str]) -> dict[str, int]:
        """Bot ids by name, creating token-less rows for new names (inside a write transaction).

        Ids never change, so those read from the database are cached; ids created here
        are not, until a later call reads them back (this transaction may still roll back).
        """
        wanted = set(names)
        ids = {n: self._bot_id_cache[n] for n in wanted if n in self._bot_id_cache}
        unknown = sorted(wanted - set(ids))
        for chunk in _chunks(unknown):
            found = dict(conn.execute(_SQL.bot_ids, {"keys": list(chunk)}).all())
            self._bot_id_cache.update(found)
            ids.update(found)
        missing = [n for n in unknown if n not in ids]
        if missing:
            now = datetime.now(UTC)
            conn.execute(_SQL.insert_bots, [{"name": n, "token_hash": None, "created_at": now} for n in missing])
            for chunk in _chunks(missing):
                ids.update(conn.execute(_SQL.bot_ids, {"keys": list(chunk)}).all())
        return ids

    # -- tournaments --------------------------------------------------------------------

    def create_tournament(self, settings: dict[str, Any], master_seed: int, status: str = "running") -> str:
        """Store a tournament's settings and master seed; return its short id such as ``t-k3x9qa``."""
        _check_seed(master_seed, "master seed")
        with self._write() as session:
            while True:
                tournament_id = "t-" + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(6))
                if session.get(TournamentRow, tournament_id) is None:
                    break
            session.add(TournamentRow(
                id=tournament_id, created_at=datetime.now(UTC), settings_json=_json(settings),
                master_seed=master_seed, status=status,
            ))
        return tournament_id

    def get_tournament(self, tournament_id: str) -> TournamentInfo:
        with self._read() as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise StoreError(f"no tournament {tournament_id!r} in {self.name}")
            count = session.exec(
                select(func.count()).select_from(MatchRow).where(MatchRow.tournament_id == tournament_id)
            ).one()
            return _tournament_info(row, count)

    def list_tournaments(self) -> list[TournamentInfo]:
        with self._read() as session:
            counts = dict(session.exec(
                select(MatchRow.tournament_id, func.count()).group_by(MatchRow.tournament_id)
            ).all())
            rows = session.exec(select(TournamentRow).order_by(TournamentRow.created_at)).all()
            return [_tournament_info(r, counts.get(r.id, 0)) for r in rows]

    def set_tournament_status(self, tournament_id: str, status: str) -> None:
        with self._write() as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise StoreError(f"no tournament {tournament_id!r} in {self.name}")
            row.status = status

    def update_tournament_settings(self, tournament_id: str, settings: dict[str, Any]) -> None:
        """Replace a tournament's settings: only before its first match (a sample bot that
        could not start is taken out of the lineup), never once games are stored."""
        with self._write() as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise StoreError(f"no tournament {tournament_id!r} in {self.name}")
            if self._match_count_of(session, tournament_id):
                raise StoreError(f"tournament {tournament_id} has stored matches; its settings are fixed")
            row.settings_json = _json(settings)

    def discard_tournament(self, tournament_id: str) -> None:
        """Delete a tournament that never got going (its bots could not start): it has no
        matches, and resuming it would fail the same way."""
        with self._write() as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None or self._match_count_of(session, tournament_id):
                raise StoreError(f"tournament {tournament_id} has stored matches; it is kept")
            session.delete(row)

    @staticmethod
    def _match_count_of(session: Session, tournament_id: str) -> int:
        return session.exec(
            select(func.count()).select_from(MatchRow).where(MatchRow.tournament_id == tournament_id)
        ).one()

    def finished_game_indexes(self, tournament_id: str) -> set[int]:
        """Schedule slots that already have a stored match (of any status): resume skips these."""
        with self._read() as session:
            rows = session.exec(
                select(MatchRow.game_index).where(MatchRow.tournament_id == tournament_id)
            ).all()
            return {i for i in rows if i is not None}

    def tournament_game_options(self, tournament_ids: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """The engine game options each tournament was played with, as stored: its
        settings' ``game`` (a GameConfig as a dict, possibly only the non-default options),
        or, when the settings do not have them (a tournament organised elsewhere), the
        config of its first stored match. None when neither is known."""
        wanted = sorted(set(tournament_ids))
        options: dict[str, dict[str, Any] | None] = {}
        with self._read() as session:
            for chunk in _chunks(wanted):
                for tournament_id, settings_json in session.exec(
                        select(TournamentRow.id, TournamentRow.settings_json).where(TournamentRow.id.in_(chunk))):
                    settings = json.loads(settings_json)
                    game = settings.get("game") if isinstance(settings, dict) else None
                    if isinstance(game, dict) and not settings.get("organised_elsewhere"):
                        options[tournament_id] = game
            for tournament_id in wanted:
                if tournament_id not in options:
                    config = session.exec(select(MatchRow.config_json).where(MatchRow.tournament_id == tournament_id)
                                          .order_by(MatchRow.id).limit(1)).first()
                    options[tournament_id] = json.loads(config) if config is not None else None
        return options

    # -- matches ------------------------------------------------------------------------

    def save_match(self, record: MatchRecord) -> bool:
        """Store a finished match, its seats, log and faults, and update online Elo — all in
        one transaction. Saving a match id that is already stored does nothing (returns False).
        """
        return self.save_matches([record]) == 1

    def save_matches(self, records: Sequence[MatchRecord]) -> int:
        """Store many matches in one transaction, exactly as ``save_match`` one after the other
        would (Elo is updated in list order); returns how many were new.
        """
        try:
            with self._write_core() as conn:
                return self._insert_matches(conn, records)
        except (sa_exc.IntegrityError, self.engine.dialect.loaded_dbapi.IntegrityError) as error:
            # Only a clash the checks could not see gets here: a tournament slot already
            # taken by another match id, or a concurrent writer on PostgreSQL.
            if len(records) == 1 and self._has_match(records[0].match_id):
                return 0
            raise StoreError(f"could not save match: {getattr(error, 'orig', error)}") from None

    def _has_match(self, match_id: str) -> bool:
        with self._read() as session:
            return session.exec(select(MatchRow.id).where(MatchRow.match_id == match_id)).first() is not None

    def _insert_matches(self, conn: Connection, records: Sequence[MatchRecord]) -> int:
        stored: set[str] = set()
        if len(records) > 1:
            # A single match skips this query: inserting a stored match id violates the
            # unique index, and save_matches turns that into "already stored".
            for chunk in _chunks([r.match_id for r in records]):
                stored.update(conn.execute(_SQL.stored_match_ids, {"keys": list(chunk)}).scalars())
        fresh: list[MatchRecord] = []
        for record in records:
            if record.match_id not in stored:
                stored.add(record.match_id)     # a repeated id within the batch counts once too
                fresh.append(record)
        if not fresh:
            return 0
        for record in fresh:
            _check_record(record)
        # Tournaments are never deleted, so one seen once needs no second look.
        tournament_ids = sorted({r.tournament_id for r in fresh if r.tournament_id is not None}
                                - self._known_tournaments)
        if tournament_ids:
            known = set(conn.execute(_SQL.known_tournaments, {"keys": tournament_ids}).scalars())
            if unknown := [t for t in tournament_ids if t not in known]:
                # A tournament organised elsewhere: `arena tournament --server` keeps its
                # settings in the organiser's database and has this server run its matches.
                variants = {r.tournament_id: r.variant for r in fresh}
                conn.execute(insert(TournamentRow.__table__), [
                    {"id": t, "created_at": datetime.now(UTC), "master_seed": 0, "status": "remote",
                     "settings_json": _json({"organised_elsewhere": True, "game": {"variant": variants[t]}})}
                    for t in unknown])
            self._known_tournaments.update(known)

        bot_ids = self._bot_ids(conn, [name for r in fresh for name in r.bots + [f.bot for f in r.faults]])
        with closing(conn.connection.cursor()) as cursor:   # the rows go through the driver (see _DriverSQL)
            return self._insert_rows(cursor, fresh, bot_ids)

    def _insert_rows(self, cursor: Any, fresh: list[MatchRecord], bot_ids: dict[str, int]) -> int:
        """Every row of the new matches: match, seats, log, faults, summaries, Elo."""
        sql = self._driver_sql
        pks = []
        logs = []
        for record in fresh:
            packed_actions, latencies, seats = _pack_log(record.actions, record.latencies_ms)
            # NaN latencies are the referee's fallbacks, which are no think time.
            logs.append((packed_actions, latencies.tobytes(), seat_bucket_counts(latencies, seats, len(record.bots))))
            median, highest = _latency_figures(latencies)
            row = {
                "match_id": record.match_id, "tournament_id": record.tournament_id,
                "game_index": record.game_index, "variant": record.variant, "players": len(record.bots),
                "config_json": _json(record.config), "seed": record.seed, "status": record.status,
                "started_at": _utc(record.started_at), "finished_at": _utc(record.finished_at),
                "result_json": _json(record.result), "decisions": len(record.actions),
                "median_latency_ms": median, "max_latency_ms": highest,
            }
            cursor.execute(sql.insert_match.sql, sql.insert_match.params(row))
            pks.append(cursor.fetchone()[0])

        seat_rows, log_rows, fault_rows = [], [], []
        for pk, record, (packed_actions, packed_latencies, think_counts) in zip(pks, fresh, logs):
            faults_by_seat = [0] * len(record.bots)
            timeouts = _count_timeouts(record)
            for fault in record.faults:
                if 0 <= fault.seat < len(faults_by_seat):
                    faults_by_seat[fault.seat] += 1
                fault_rows.append({
                    "match_pk": pk, "seat": fault.seat, "bot_id": bot_ids[fault.bot], "kind": fault.kind,
                    "request_id": fault.request_id, "message": fault.message, "at": _utc(fault.at),
                })
            if record.variant == "classic":
                rounds, exact = _classic_bid_counts(record.result, len(record.bots))
            else:
                rounds = exact = [None] * len(record.bots)
            for seat, bot in enumerate(record.bots):
                seat_rows.append({
                    "match_pk": pk, "seat": seat, "bot_id": bot_ids[bot], "bot_version": record.bot_versions[seat],
                    "total": record.totals[seat], "place": record.places[seat],
                    "forfeited": record.forfeited[seat], "faults": faults_by_seat[seat],
                    "rounds": rounds[seat], "exact_bids": exact[seat], "timeouts": timeouts[seat],
                    # Not a column: the seat's think-time bucket counts, for bot_totals.
                    "think_counts": think_counts[seat],
                })
            log_rows.append({"match_pk": pk, "format": LOG_FORMAT, "actions": packed_actions,
                             "latencies": packed_latencies})
        _run(cursor, sql.insert_seats, seat_rows)
        _run(cursor, sql.insert_logs, log_rows)
        _run(cursor, sql.insert_faults, fault_rows)
        self._add_to_summaries(cursor, fresh, seat_rows)
        self._update_elo(cursor, list(zip(pks, fresh)), bot_ids)
        return len(fresh)

    def _add_to_summaries(self, cursor: Any, records: list[MatchRecord], seat_rows: list[dict[str, Any]]) -> None:
        """Add the completed matches to outcome_counts and bot_totals (summed in Python
        first, so a bulk save sends one upsert per key).

        The think-time histograms cannot be added up in SQL: the stored ones are read,
        merged with the new counts and written back whole. The write lock every save
        holds (see _write) keeps another writer from merging into the same row meanwhile.
        """
        outcomes: dict[tuple[str, str, str], int] = {}
        totals: dict[tuple[int, str, str], dict[str, int]] = {}
        think_counts: dict[tuple[int, str, str], np.ndarray] = {}
        seats = iter(seat_rows)
        for record in records:
            rows = [next(seats) for _ in record.bots]
            if record.status != "completed":
                continue
            tournament_key = record.tournament_id or ""
            key = (record.variant, tournament_key, outcome_key([r["bot_id"] for r in rows], record.places))
            outcomes[key] = outcomes.get(key, 0) + 1
            seen: set[int] = set()
            for row in rows:
                totals_key = (row["bot_id"], record.variant, tournament_key)
                sums = totals.setdefault(totals_key, dict.fromkeys(
                    ("games", "seats", "score_sum", "place_sum", "rounds", "exact_bids", "faults", "forfeits",
                     "timeouts"), 0))
                sums["games"] += row["bot_id"] not in seen
                seen.add(row["bot_id"])
                sums["seats"] += 1
                sums["score_sum"] += row["total"]
                sums["place_sum"] += row["place"]
                sums["rounds"] += row["rounds"] or 0
                sums["exact_bids"] += row["exact_bids"] or 0
                sums["faults"] += row["faults"]
                sums["forfeits"] += bool(row["forfeited"])
                sums["timeouts"] += row["timeouts"]
                counts = row["think_counts"]
                earlier = think_counts.get(totals_key)
                think_counts[totals_key] = counts if earlier is None else earlier + counts
        histograms = self._merged_histograms(cursor, {k: c for k, c in think_counts.items() if c.any()})
        _run(cursor, self._driver_sql.add_outcomes, [
            {"variant": v, "tournament_key": t, "outcome": o, "matches": n} for (v, t, o), n in outcomes.items()
        ])
        # A bot without a new think time gets NULL, which leaves its stored histogram as it was.
        _run(cursor, self._driver_sql.add_totals, [
            {"bot_id": b, "variant": v, "tournament_key": t, **sums, "think_histogram": histograms.get((b, v, t))}
            for (b, v, t), sums in totals.items()
        ])

    def _merged_histograms(self, cursor: Any, counts: dict[tuple[int, str, str], np.ndarray]
                           ) -> dict[tuple[int, str, str], bytes | None]:
        """The stored think-time histogram of each bot_totals key plus its new ``counts``,
        in the stored form (one query; usually four keys of one variant and tournament)."""
        stored: dict[tuple[int, str, str], bytes] = {}
        bots = sorted({b for b, _, _ in counts})
        variants = sorted({v for _, v, _ in counts})
        tournaments = sorted({t for _, _, t in counts})
        for bot_chunk in _chunks(bots, 200):
            for tournament_chunk in _chunks(tournaments, 200):
                cursor.execute(self._driver_sql.histograms_of(len(bot_chunk), len(variants), len(tournament_chunk)),
                               [*bot_chunk, *variants, *tournament_chunk])
                for bot_id, variant, tournament_key, blob in cursor.fetchall():
                    if (bot_id, variant, tournament_key) in counts:
                        stored[(bot_id, variant, tournament_key)] = blob
        return {key: add_counts(stored.get(key), new) for key, new in counts.items()}

    def _update_elo(self, cursor: Any, matches: list[tuple[int, MatchRecord]], bot_ids: dict[str, int]) -> None:
        """Online Elo for the completed matches, in order; writes history and current ratings."""
        rated = [(pk, r) for pk, r in matches if r.status == "completed" and len(set(r.bots)) >= 2]
        if not rated:
            return
        ids = sorted({bot_ids[name] for _, r in rated for name in r.bots})
        current: dict[tuple[int, str], tuple[float, int]] = {}
        for chunk in _chunks(ids):
            cursor.execute(self._driver_sql.elo_of_bots(len(chunk)), list(chunk))
            for bot_id, variant, elo, games in cursor.fetchall():
                current[(bot_id, variant)] = (elo, games)
        existing = set(current)
        history = []
        for pk, record in rated:
            seat_ids = [bot_ids[name] for name in record.bots]
            before = [current.get((b, record.variant), (START_ELO, 0)) for b in seat_ids]
            deltas = elo_deltas(
                [elo for elo, _ in before], record.places, [k_factor(games) for _, games in before], owners=seat_ids
            )
            change: dict[int, float] = {}
            for bot_id, delta in zip(seat_ids, deltas):     # one bot in two seats: both seats count
                change[bot_id] = change.get(bot_id, 0.0) + delta
            for bot_id, delta in change.items():
                elo, games = current.get((bot_id, record.variant), (START_ELO, 0))
                current[(bot_id, record.variant)] = (elo + delta, games + 1)
                history.append({"match_pk": pk, "bot_id": bot_id, "variant": record.variant,
                                "elo_before": elo, "elo_after": elo + delta, "games": games + 1})
        _run(cursor, self._driver_sql.insert_history, history)
        touched = sorted({(h["bot_id"], h["variant"]) for h in history})
        ratings = [{"bot_id": b, "variant": v, "elo": current[(b, v)][0], "games": current[(b, v)][1]}
                   for b, v in touched]
        _run(cursor, self._driver_sql.insert_elo, [r for r in ratings if (r["bot_id"], r["variant"]) not in existing])
        _run(cursor, self._driver_sql.update_elo, [r for r in ratings if (r["bot_id"], r["variant"]) in existing])

    def load_match(self, match_id: str) -> MatchRecord:
        """The stored match as the MatchRecord that was saved (times come back in UTC)."""
        with self._read() as session:
            row = session.exec(select(MatchRow).where(MatchRow.match_id == match_id)).first()
            if row is None:
                raise StoreError(f"no match {match_id!r} in {self.name}")
            seats = session.exec(
                select(MatchSeatRow, BotRow.name).join(BotRow, BotRow.id == MatchSeatRow.bot_id)
                .where(MatchSeatRow.match_pk == row.id).order_by(MatchSeatRow.seat)
            ).all()
            log = session.get(MatchLogRow, row.id)
            faults = session.exec(
                select(FaultRow, BotRow.name).join(BotRow, BotRow.id == FaultRow.bot_id)
                .where(FaultRow.match_pk == row.id).order_by(FaultRow.id)
            ).all()
            actions, latencies = decode_log(log.actions, log.latencies) if log is not None else ([], [])
            return MatchRecord(
                match_id=row.match_id, variant=row.variant, config=json.loads(row.config_json), seed=row.seed,
                bots=[name for _, name in seats], bot_versions=[s.bot_version for s, _ in seats],
                totals=[s.total for s, _ in seats], places=[s.place for s, _ in seats],
                forfeited=[bool(s.forfeited) for s, _ in seats], result=json.loads(row.result_json),
                actions=actions, latencies_ms=latencies,
                faults=[FaultRecord(seat=f.seat, bot=name, kind=f.kind, message=f.message,
                                    request_id=f.request_id, at=_loaded(f.at)) for f, name in faults],
                tournament_id=row.tournament_id, game_index=row.game_index, status=row.status,
                started_at=_loaded(row.started_at), finished_at=_loaded(row.finished_at),
            )

    def list_matches(
        self, variant: str | None = None, tournament_id: str | None = None, bot: str | None = None, limit: int = 50
    ) -> list[MatchSummary]:
        """The newest matches first, optionally only one variant, tournament or bot."""
        with self._read() as session:
            query = select(MatchRow)
            if variant is not None:
                query = query.where(MatchRow.variant == variant)
            if tournament_id is not None:
                query = query.where(MatchRow.tournament_id == tournament_id)
            if bot is not None:
                query = query.where(MatchRow.id.in_(
                    select(MatchSeatRow.match_pk).join(BotRow, BotRow.id == MatchSeatRow.bot_id)
                    .where(BotRow.name == bot)
                ))
            rows = session.exec(query.order_by(MatchRow.id.desc()).limit(limit)).all()
            pks = [r.id for r in rows]
            seats: dict[int, list[tuple[MatchSeatRow, str]]] = {pk: [] for pk in pks}
            for seat, name in session.exec(
                select(MatchSeatRow, BotRow.name).join(BotRow, BotRow.id == MatchSeatRow.bot_id)
                .where(MatchSeatRow.match_pk.in_(pks)).order_by(MatchSeatRow.match_pk, MatchSeatRow.seat)
            ).all():
                seats[seat.match_pk].append((seat, name))
            return [
                MatchSummary(
                    match_id=r.match_id, tournament_id=r.tournament_id, game_index=r.game_index,
                    variant=r.variant, status=r.status, started_at=_loaded(r.started_at),
                    finished_at=_loaded(r.finished_at), bots=[n for _, n in seats[r.id]],
                    totals=[s.total for s, _ in seats[r.id]], places=[s.place for s, _ in seats[r.id]],
                    forfeited=[bool(s.forfeited) for s, _ in seats[r.id]],
                    faults=sum(s.faults for s, _ in seats[r.id]), decisions=r.decisions,
                    median_latency_ms=r.median_latency_ms, max_latency_ms=r.max_latency_ms,
                )
                for r in rows
            ]

    def match_count(self, variant: str | None = None, status: str | None = "completed") -> int:
        with self._read() as session:
            query = select(func.count()).select_from(MatchRow)
            if variant is not None:
                query = query.where(MatchRow.variant == variant)
            if status is not None:
                query = query.where(MatchRow.status == status)
            return session.exec(query).one()

    def variants(self) -> list[str]:
        """Variants that have completed matches."""
        with self._read() as session:
            return sorted(session.exec(
                select(MatchRow.variant).where(MatchRow.status == "completed").distinct()
            ).all())

    # -- ratings and leaderboard data ---------------------------------------------------

    def rating_history(self, bot: str, variant: str) -> list[RatingChange]:
        """Every online-Elo change of a bot in a variant, oldest first."""
        with self._read() as session:
            rows = session.exec(
                select(RatingHistoryRow, MatchRow.match_id, MatchRow.finished_at)
                .join(MatchRow, MatchRow.id == RatingHistoryRow.match_pk)
                .join(BotRow, BotRow.id == RatingHistoryRow.bot_id)
                .where(BotRow.name == bot, RatingHistoryRow.variant == variant)
                .order_by(RatingHistoryRow.id)
            ).all()
            return [RatingChange(match_id, _loaded(finished), h.elo_before, h.elo_after, h.games)
                    for h, match_id, finished in rows]

    def current_elo(self, variant: str) -> dict[str, tuple[float, int]]:
        """Each bot's latest online Elo in a variant and how many rated matches it has."""
        with self._read() as session:
            return _current_elo(session, variant)

    def outcomes(self, variant: str, tournament_id: str | None = None) -> list[tuple[list[tuple[str, int]], int]]:
        """The raw material of the Bradley–Terry fit: every distinct outcome of the completed
        matches, as ``([(bot, place) per seat], how many matches ended so)``.
        """
        with self._read() as session:
            return _outcomes(session, variant, tournament_id)

    def seat_aggregates(self, variant: str, tournament_id: str | None = None) -> list[SeatAggregate]:
        """Per-bot sums over the completed matches of a variant (optionally one tournament)."""
        with self._read() as session:
            return _seat_aggregates(session, variant, tournament_id)

    def leaderboard_inputs(self, variant: str, tournament_id: str | None = None) -> LeaderboardInputs:
        """Outcome counts, per-bot sums and current Elo read in one transaction, so a match
        saved meanwhile cannot show up in one and not in the others."""
        with self._read() as session:
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
            aggregates = _seat_aggregates(session, variant, tournament_id)
            elo = _current_elo(session, variant) if tournament_id is None else _elo_after(session, variant,
                                                                                         tournament_id)
        tables = outcome_tables([key for key, _, _ in rows], [count for _, count, _ in rows])
        ids = np.unique(np.concatenate([bots.ravel() for bots, _, _ in tables])) if tables else np.zeros(0, np.int64)
        # Bots are indexed in name order, not by their ids in this database, so the same
        # matches give the same leaderboard (bootstrap draws included) in any database.
        ordered = sorted(names[int(i)] for i in ids)
        position = {name: i for i, name in enumerate(ordered)}
        index_of_id = np.array([position[names[int(i)]] for i in ids], dtype=np.int64)
        indexed = [(index_of_id[np.searchsorted(ids, bots)], places, counts) for bots, places, counts in tables]
        return LeaderboardInputs(ordered, indexed, aggregates, elo, games)


@dataclass
class LeaderboardInputs:
    """What a leaderboard is computed from (see arena.results.leaderboard)."""

    bots: list[str]            # bot names; the arrays below hold indexes into this list
    tables: list[tuple[np.ndarray, np.ndarray, np.ndarray]]   # per table size: bots, places, counts
    aggregates: list[SeatAggregate]
    elo: dict[str, tuple[float, int]]
    # Completed matches per tournament id ("": matches outside any tournament).
    games_by_tournament: dict[str, int] = field(default_factory=dict)


def outcome_tables(keys: Sequence[str], counts: Sequence[int]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Outcome keys as arrays, one entry per table size: ``(bot ids, places, counts)``
    with bot ids and places of shape (outcomes, seats). Parsed in one pass by numpy:
    100,000 keys one by one in Python would take most of the leaderboard's time.

    >>> [(b.tolist(), p.tolist(), c.tolist()) for b, p, c in outcome_tables(["3:1,5:2", "3:2,5:1", "1:1,2:2,3:3"], [4, 1, 2])]
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


def _current_elo(session: Session, variant: str) -> dict[str, tuple[float, int]]:
    rows = session.exec(
        select(BotRow.name, EloRow.elo, EloRow.games).join(BotRow, BotRow.id == EloRow.bot_id)
        .where(EloRow.variant == variant)
    ).all()
    return {name: (elo, games) for name, elo, games in rows}


def _elo_after(session: Session, variant: str, tournament_id: str) -> dict[str, tuple[float, int]]:
    """Each bot's online Elo after its last match of this tournament (what the board of a
    finished tournament should show, whatever was played since)."""
    h = RatingHistoryRow
    rows = session.exec(
        select(BotRow.name, h.elo_after, h.games).join(MatchRow, MatchRow.id == h.match_pk)
        .join(BotRow, BotRow.id == h.bot_id)
        .where(MatchRow.tournament_id == tournament_id, h.variant == variant).order_by(h.match_pk)
    ).all()
    return {name: (elo, games) for name, elo, games in rows}     # later matches overwrite earlier ones


def _outcomes(session: Session, variant: str, tournament_id: str | None) -> list[tuple[list[tuple[str, int]], int]]:
    query = (select(OutcomeCountRow.outcome, func.sum(OutcomeCountRow.matches))
             .where(OutcomeCountRow.variant == variant).group_by(OutcomeCountRow.outcome))
    if tournament_id is not None:
        query = query.where(OutcomeCountRow.tournament_key == tournament_id)
    rows = session.exec(query).all()
    names = dict(session.exec(select(BotRow.id, BotRow.name)).all())
    # Sorted by name, so the same outcome reads the same in any database.
    return [(sorted((names[b], p) for b, p in parse_outcome(key)), int(count)) for key, count in rows]


def _seat_aggregates(session: Session, variant: str, tournament_id: str | None) -> list[SeatAggregate]:
    t = BotTotalsRow
    query = (
        select(BotRow.name, func.sum(t.games), func.sum(t.seats), func.sum(t.score_sum),
               func.sum(t.place_sum), func.sum(t.rounds), func.sum(t.exact_bids), func.sum(t.faults),
               func.sum(t.forfeits), func.sum(t.timeouts))
        .join(BotRow, BotRow.id == t.bot_id).where(t.variant == variant).group_by(BotRow.name)
    )
    # The histograms are summed here, one row per bot and tournament: SQL cannot add them.
    histograms_query = (select(BotRow.name, t.think_histogram).join(BotRow, BotRow.id == t.bot_id)
                        .where(t.variant == variant, t.think_histogram.is_not(None)))  # type: ignore[union-attr]
    if tournament_id is not None:
        query = query.where(t.tournament_key == tournament_id)
        histograms_query = histograms_query.where(t.tournament_key == tournament_id)
    histograms: dict[str, list[bytes]] = {}
    for name, blob in session.exec(histograms_query).all():
        histograms.setdefault(name, []).append(blob)
    classic = variant == "classic"
    return [SeatAggregate(name, int(games), int(seats), int(score), int(place),
                          int(rounds) if classic else None, int(exact) if classic else None,
                          int(faults), int(forfeits), int(timeouts),
                          LatencyHistogram.merge(histograms.get(name, [])))
            for name, games, seats, score, place, rounds, exact, faults, forfeits, timeouts
            in session.exec(query).all()]


def _tournament_info(row: TournamentRow, matches: int) -> TournamentInfo:
    return TournamentInfo(row.id, _loaded(row.created_at), json.loads(row.settings_json), row.master_seed,
                          row.status, matches)


def _check_seed(seed: int, what: str) -> None:
    # Seeds are stored as 64-bit integers, the widest both SQLite and PostgreSQL have.
    if not -(2**63) <= seed < 2**63:
        raise StoreError(f"{what} {seed} does not fit in 64 bits")


def _check_record(record: MatchRecord) -> None:
    _check_seed(record.seed, f"match {record.match_id}: seed")
    seats = len(record.bots)
    for name in ("bot_versions", "totals", "places", "forfeited"):
        if len(getattr(record, name)) != seats:
            raise StoreError(f"match {record.match_id}: {name} has {len(getattr(record, name))} entries "
                             f"for {seats} seats")
    if len(record.latencies_ms) != len(record.actions):
        raise StoreError(f"match {record.match_id}: {len(record.actions)} actions but "
                         f"{len(record.latencies_ms)} latencies")


def _upgrade_from_1(conn: Connection, name: str) -> None:
    """Schema 1 to 2: add the timeout counts and think-time histograms, and fill them in
    from what the database already holds, in the caller's transaction (all or nothing).

    Timeouts come from the faults table. Think times need every completed match's log:
    the seat of each action is in its (compressed JSON) actions and the latencies beside
    them, so each log is decoded once here, a page of matches at a time to keep memory
    flat (about 100 MB). Measured: 13 s for 100,000 full-size matches (a 1 GB file).
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
            select(matches.c.id, matches.c.variant, matches.c.tournament_id, matches.c.players,
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
                flat = json.loads(zlib.decompress(actions))
                counts = seat_bucket_counts(np.frombuffer(latencies, dtype="<f8"),
                                            np.array(flat[0::2], dtype=np.int64), players)
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
                "b_histogram": encode_counts(histograms[key]) if key in histograms else None}
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


def _setup_sqlite(engine: Engine) -> None:
    """WAL journal, NORMAL sync, foreign keys on, and real transactions (see below)."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Python's sqlite3 would otherwise open transactions only before INSERT/UPDATE/DELETE,
        # so reads and DDL ran outside them; SQLAlchemy emits BEGIN itself instead (its
        # documented recipe), which makes the schema creation and every read consistent.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A writing transaction takes the write lock at once (see Store._write).
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("arena_write") else "BEGIN")
