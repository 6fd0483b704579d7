"""Storage: bots, tournaments, matches with their full decision logs, faults, ratings and bot crashes.

One :class:`Store` wraps one database: a SQLite file (WAL mode) or, given a
``postgresql://`` URL, a PostgreSQL database (``pip install 'wizard-arena[postgres]'``). Apart
from the SQLite connection setup and the parameter marker of the save path's driver
SQL the SQL is the same. A Store may be used from any thread: every call opens its own
session or connection on the shared engine, which is how the asyncio referee uses it
(``asyncio.to_thread``).

How a match changes the ratings and summaries is computed by the statistics room below
(``arena.stats``: pure functions, tested without a database), which the save path runs
inside the match's own transaction (see ``save.py``). Every SQL statement of the arena is
in this room: the rooms above read through a Store's methods, which return plain values
(dataclasses), never rows::

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
              ``discard_tournament(id)`` (one that never got going, with its schedule and crashes),
              ``finished_game_indexes(id) -> set[int]`` (what ``--resume`` skips)
matches       ``save_match(record) -> bool`` (one transaction, idempotent),
              ``save_matches(records) -> int`` (the same, many at once),
              ``load_match(match_id) -> MatchRecord``, ``list_matches(...)``, ``match_count(...)``
workers       ``put_schedule(tournament_id, games)``, ``scheduled_games(tournament_id)``,
              ``claim_unit(worker, lease_seconds, tournament_id=None) -> WorkUnit | None``,
              ``renew_lease(unit, worker, lease_seconds)``, ``release_unit(unit, worker)``,
              ``unit_progress(tournament_id)`` (see ``leases.py``)
boards        ``board_snapshot(variant, tournament_id=None, elo_limit=None) -> BoardSnapshot``:
              all a board, its crosstable and its Elo plot are computed from, in one
              transaction (see ``snapshots.py``)
ratings       ``current_elo(variant)``, ``rating_history(bot, variant)``,
              ``seat_aggregates(variant, tournament_id=None)`` (per-bot sums)
tournaments   ``tournament_snapshot(tournament_id, match_limit) -> TournamentSnapshot``: its
              board and its newest matches, in one transaction (see ``snapshots.py``)
bot pages     ``bot_snapshot(name, recent, classic_limit) -> BotSnapshot``: all a bot's page
              reads but the boards, in one transaction (see ``snapshots.py``)
reports       ``newest_classic(bot, limit)`` (its exact bids by hand size; see ``reports.py``)
crashes       ``save_crash(crash)`` (an ``arena.records.BotCrash``),
              ``crashes(variant=None, tournament_id=None) -> {bot: CrashSummary}`` (see
              ``crashes.py``; a bot's per variant are in its ``bot_snapshot``)

The room, module by module:

``schema.py``     the tables, the schema version, opening checks and upgrades
``codec.py``      the stored forms of a decision log and of times
``registry.py``   bots and tournaments
``save.py``       the save path of matches (in the driver's own SQL: the fast path), one
                  match per tournament slot, Elo in schedule order
``leases.py``     stored schedules and the leases workers hold on their deals
``crashes.py``    bot crashes: one row each, read summed up per bot
``queries.py``    reads: matches, ratings, leaderboard inputs
``snapshots.py``  what a board, a tournament's page or a bot's page reads, in one transaction
                  (``BoardSnapshot``, ``TournamentSnapshot``, ``BotSnapshot``)
``probes.py``     the benchmarks' own interface (``Probes(store)``): the yardsticks, samples
                  of what the server waits on; not part of ``Store``, imported by ``arena.bench`` only
``reports.py``    reads for the other reports: a bot's page, exact bids by hand size, the Elo plot
``errors.py``     ``StoreError``

Every write holds the database's write lock from its first statement (see
``Store._write``), so read-modify-write steps such as the Elo update never interleave.
Claiming and renewing leases is the exception on PostgreSQL: row locks serialise those,
so that a worker's claim never waits for another worker's save (see ``leases.py``).
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self

from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine, make_url
from sqlmodel import Session, create_engine

from arena.records import BotCrash, MatchRecord
from arena.stats.summaries import outcome_key, parse_outcome
from arena.store import crashes, leases, queries, registry, reports, snapshots
from arena.store.codec import LOG_FORMAT, decode_log, encode_log
from arena.store.crashes import CrashSummary
from arena.store.errors import NotStored, StoreError, StoreUnavailable, driver_errors_translated
from arena.store.leases import DealProgress, ScheduledGameLike, WorkUnit
from arena.store.queries import (
    AbTestGames,
    LeaderboardInputs,
    MatchSummary,
    RatingChange,
    SeatAggregate,
    outcome_tables,
)
from arena.store.registry import BotInfo, TournamentInfo, hash_token
from arena.store.reports import BotEloStep, BotFault, BotGames, BotSeat, ClassicGame, EloStep, EloTrack, NewestClassic
from arena.store.save import MatchSaver
from arena.store.schema import SCHEMA_VERSION, TAKE_WRITE_LOCK, is_current, open_schema
from arena.store.snapshots import BoardSnapshot, BotSnapshot, TournamentSnapshot

__all__ = [
    "LOG_FORMAT", "SCHEMA_VERSION", "AbTestGames", "BoardSnapshot", "BotEloStep", "BotFault", "BotGames", "BotInfo",
    "BotSeat", "BotSnapshot", "ClassicGame",
    "CrashSummary", "DealProgress", "EloStep", "EloTrack", "LeaderboardInputs", "MatchSummary", "NewestClassic",
    "NotStored", "RatingChange", "SeatAggregate", "ScheduledGameLike", "Store", "StoreError",
    "StoreUnavailable", "TournamentInfo", "TournamentSnapshot", "WorkUnit",
    "decode_log", "encode_log", "hash_token", "outcome_key", "outcome_tables", "parse_outcome",
]


# How long a SQLite statement waits for another process's write lock before the store
# gives up (StoreUnavailable, "database is locked"), in seconds.
BUSY_TIMEOUT = 30.0

# How to get the PostgreSQL driver: the extra of the installed distribution, or of a checkout.
INSTALL_POSTGRES = "pip install 'wizard-arena[postgres]' (in a checkout: pip install -e '.[postgres]')"


@driver_errors_translated
class Store:
    """The arena's database: ``Store("arena.db")`` or ``Store("postgresql://...")``.

    Opening creates the schema in a new or empty database, and refuses (``StoreError``)
    a database of another schema version, a SQLite file with someone else's tables, and a
    file that is not a database. A database that cannot be read or written (locked past
    the busy timeout, its server gone) is :class:`StoreUnavailable`, a ``StoreError`` too.
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
        connect_args = {"check_same_thread": False, "timeout": BUSY_TIMEOUT} if self.is_sqlite else {}
        try:
            self.engine: Engine = create_engine(url, connect_args=connect_args)
        except ImportError as error:
            raise StoreError(f"no driver for {backend} ({error}): {INSTALL_POSTGRES}") from None
        except sa_exc.ArgumentError as error:
            raise StoreError(f"{self.name!r} is not a usable database URL ({error})") from None
        self._saver = MatchSaver(self.engine.dialect)
        database = self.engine.url.database or ""
        new_file = self.is_sqlite and (not os.path.exists(database) or os.path.getsize(database) == 0)
        if self.is_sqlite:
            _setup_sqlite(self.engine)
        try:
            if new_file:
                _use_wal(self.engine)   # a new database is in WAL from its first write
            # A database of this schema version is only read; any other is looked at again
            # in a write transaction from its start (see open_schema); no write lock to take
            # on PostgreSQL yet: a new database has no schema-version row.
            with self.engine.connect() as conn, conn.begin():
                current = is_current(conn)
            if not current:
                with self.engine.connect() as conn, conn.execution_options(arena_write=True).begin():
                    open_schema(conn, self.name)
        except (sa_exc.DatabaseError, self.engine.dialect.loaded_dbapi.Error) as error:   # raw_connection: unwrapped
            self.engine.dispose()
            reason = str(getattr(error, "orig", error)).strip()
            if "not a database" in reason:
                raise StoreError(f"{self.name} is not a database file ({reason})") from None
            raise StoreError(f"cannot open {self.name}: {reason}") from None
        except StoreError:
            self.engine.dispose()
            raise
        if self.is_sqlite and not new_file:
            _use_wal(self.engine)
        self._closed = False
        # The file, however it was named (relative, absolute, a sqlite:/// URL).
        self._file = os.path.abspath(self.engine.url.database or "") if self.is_sqlite else None
        if self.is_sqlite:
            with _OPEN_LOCK:
                _OPEN_SQLITE.add(self)

    def close(self) -> None:
        """Close the store's connections. The last SQLite store of a file open in this
        process first checkpoints the WAL into the file (see :meth:`_checkpoint`), so that
        the database is whole in its one file once a command ends. Closing twice does
        nothing; a store still open when the process exits is closed then."""
        with _OPEN_LOCK:
            if self._closed:
                return
            self._closed = True
            _OPEN_SQLITE.discard(self)
            last = self.is_sqlite and not any(other._file == self._file for other in _OPEN_SQLITE)
        if last and self._file is not None and os.path.exists(self._file):   # never make a file anew
            self._checkpoint()
        self.engine.dispose()

    def _checkpoint(self) -> None:
        """Copy the WAL into the database file and empty it (``wal_checkpoint(TRUNCATE)``).

        Why: until then the latest writes live only in ``NAME-wal``; whoever copies the
        database file alone would copy an old or an empty database. Another process reading
        the file meanwhile (``arena web``) is not disturbed: the checkpoint waits at most
        CHECKPOINT_WAIT_MS for its readers and otherwise reports busy and leaves the WAL
        as it is, still valid for them. When no other process has the file open, closing
        the connections just after (dispose) also removes the emptied ``-wal`` and
        ``-shm`` files: SQLite does so at the file's last close."""
        try:
            raw = self.engine.raw_connection()
        except sa_exc.DBAPIError:
            return
        try:
            cursor = raw.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cursor.close()
        except self.engine.dialect.loaded_dbapi.Error:
            pass    # busy or locked: the WAL stays, as valid as before
        finally:
            raw.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions -------------------------------------------------------------------

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
                conn.execute(TAKE_WRITE_LOCK)
            yield session
            session.commit()

    @contextmanager
    def _write_core(self) -> Iterator[Connection]:
        """Like _write, but a plain connection: the match-saving path skips the ORM session."""
        with self.engine.connect() as conn:
            conn.execution_options(arena_write=True)
            with conn.begin():
                if not self.is_sqlite:
                    conn.execute(TAKE_WRITE_LOCK)
                yield conn

    @contextmanager
    def _lease_write(self) -> Iterator[Connection]:
        """A writing transaction for leases: SQLite's write lock (``BEGIN IMMEDIATE``), but on
        PostgreSQL no store-wide lock, only the row locks the statements take (see leases.py)."""
        with self.engine.connect() as conn:
            conn.execution_options(arena_write=True)
            with conn.begin():
                yield conn

    # -- bots ---------------------------------------------------------------------------

    def register_bot(self, name: str, rotate: bool = False) -> str:
        """Register a bot and return its token; the token is shown once and only its hash is kept.

        An existing name is refused unless ``rotate=True``, which replaces its token.
        """
        with self._write() as session:
            return registry.register_bot(session, name, rotate)

    def ensure_bot(self, name: str) -> None:
        """Create a token-less bot row (a bot the arena runs itself) if the name is new."""
        with self._write() as session:
            self._saver.bot_ids(session.connection(), [name])

    def bot_for_token(self, token: str) -> str | None:
        """The name of the bot this token belongs to, or None."""
        with self._read() as session:
            return registry.bot_for_token(session, token)

    def bots_for_tokens(self, tokens: Iterable[str]) -> dict[str, str]:
        """The bot name of each token that belongs to a bot (one query; unknown ones left out)."""
        with self._read() as session:
            return registry.bots_for_tokens(session, tokens)

    def remove_bot(self, name: str) -> None:
        """Take a bot's token away: it can no longer connect (a running arena ends its
        streams), while its matches and ratings stay. ``register_bot(name, rotate=True)``
        gives it a new token."""
        with self._write() as session:
            registry.remove_bot(session, name)

    def list_bots(self) -> list[BotInfo]:
        with self._read() as session:
            return registry.list_bots(session)

    # -- tournaments --------------------------------------------------------------------

    def create_tournament(self, settings: dict[str, Any], master_seed: int, status: str = "running") -> str:
        """Store a tournament's settings and master seed; return its short id such as ``t-k3x9qa``."""
        with self._write() as session:
            return registry.create_tournament(session, settings, master_seed, status)

    def get_tournament(self, tournament_id: str) -> TournamentInfo:
        with self._read() as session:
            return registry.get_tournament(session, tournament_id, self.name)

    def list_tournaments(self) -> list[TournamentInfo]:
        with self._read() as session:
            return registry.list_tournaments(session)

    def set_tournament_status(self, tournament_id: str, status: str) -> None:
        """Set a tournament's status. Once it is not ``running``, its stored matches still
        waiting for online Elo (behind a slot whose game was never stored) count, in
        schedule order (see save.py, "Elo in schedule order")."""
        with self._write() as session:
            registry.set_tournament_status(session, tournament_id, status, self.name)
            if status != "running":
                session.flush()
                self._saver.count_waiting_elo(session.connection(), tournament_id)

    def update_tournament_settings(self, tournament_id: str, settings: dict[str, Any]) -> None:
        """Replace a tournament's settings: only before its first match (a sample bot that
        could not start is taken out of the lineup), never once games are stored."""
        with self._write() as session:
            registry.update_tournament_settings(session, tournament_id, settings, self.name)

    def discard_tournament(self, tournament_id: str) -> None:
        """Delete a tournament that never got going (its bots could not start): it has no
        matches, and resuming it would fail the same way. Its stored schedule and the
        crashes recorded for it go with it."""
        with self._write() as session:
            registry.discard_tournament(session, tournament_id)

    def finished_game_indexes(self, tournament_id: str) -> set[int]:
        """Schedule slots that already have a stored match (of any status): resume skips these."""
        with self._read() as session:
            return registry.finished_game_indexes(session, tournament_id)

    # -- workers (leases.py) ----------------------------------------------------------------

    def put_schedule(self, tournament_id: str, games: Sequence[ScheduledGameLike]) -> None:
        """Store a tournament's schedule (one row per game) and its deals as units of work.
        Idempotent: rows already stored stay as they are; a game stored with other values
        is refused (``StoreError``)."""
        with self._lease_write() as conn:
            leases.put_schedule(conn, tournament_id, games, self.name)

    def release_worker(self, tournament_id: str, worker: str) -> int:
        """Give back every lease a worker that is known to be gone holds in the tournament."""
        with self._lease_write() as conn:
            return leases.release_worker(conn, tournament_id, worker)

    def replace_schedule(self, tournament_id: str, games: Sequence[ScheduledGameLike]) -> None:
        """A new schedule in place of the stored one; only before any game is stored
        (``StoreError`` after)."""
        with self._lease_write() as conn:
            leases.replace_schedule(conn, tournament_id, games, self.name)

    def scheduled_games(self, tournament_id: str) -> list[dict[str, Any]]:
        """The stored schedule in game order, one dict per game: ``tournament_id``,
        ``game_index``, ``deal``, ``rotation``, ``bots``, ``seed``, ``bot_seeds``, ``table``."""
        with self.engine.connect() as conn:
            return leases.scheduled_games(conn, tournament_id)

    def deal_progress(self, tournament_id: str, game_index: int) -> DealProgress | None:
        """How many games of the deal of ``game_index`` are stored, of how many scheduled
        (None: the stored schedule has no such game)."""
        with self.engine.connect() as conn:
            return leases.deal_progress(conn, tournament_id, game_index)

    def claim_unit(self, worker: str, lease_seconds: float, tournament_id: str | None = None) -> WorkUnit | None:
        """Lease the lowest deal with a game not stored and no live lease, of ``tournament_id``
        or (None) of any running tournament, to ``worker`` for ``lease_seconds``; None: no work."""
        with self._lease_write() as conn:
            return leases.claim_unit(conn, worker, lease_seconds, tournament_id)

    def renew_lease(self, unit: WorkUnit, worker: str, lease_seconds: float) -> WorkUnit | None:
        """The unit with its lease extended to ``lease_seconds`` from now; None when the lease
        was lost (it ran out and the deal was claimed again): stop playing it."""
        with self._lease_write() as conn:
            return leases.renew_lease(conn, unit, worker, lease_seconds)

    def release_unit(self, unit: WorkUnit, worker: str) -> None:
        """Give a claimed unit back now (a worker stopping, or lacking a bot command)."""
        with self._lease_write() as conn:
            leases.release_unit(conn, unit, worker)

    def unit_progress(self, tournament_id: str) -> dict[str, Any]:
        """``deals``, ``deals_done``, ``deals_leased``, ``deals_pending``, ``games_scheduled``,
        ``games_stored`` and ``workers`` (the names holding live leases)."""
        with self.engine.connect() as conn:
            return leases.unit_progress(conn, tournament_id)

    # -- matches ------------------------------------------------------------------------

    def save_match(self, record: MatchRecord) -> bool:
        """Store a finished match, its seats, log and faults, and update online Elo — all in
        one transaction. Saving a match id that is already stored, or into a tournament slot
        (``tournament_id``, ``game_index``) that already holds a match, does nothing
        (returns False), also when two processes save at once.
        """
        return self.save_matches([record]) == 1

    def save_matches(self, records: Sequence[MatchRecord]) -> int:
        """Store many matches in one transaction, exactly as ``save_match`` one after the other
        would (Elo counts them in list order, a tournament's in schedule order: see save.py);
        returns how many were new.
        """
        try:
            with self._write_core() as conn:
                return self._saver.save(conn, records)
        except (sa_exc.IntegrityError, self.engine.dialect.loaded_dbapi.IntegrityError) as error:
            # A single match gets here when its id or its tournament slot is already stored
            # (it skips the checks a batch makes), or on a concurrent writer's clash.
            if len(records) == 1 and self._has_match_or_slot(records[0]):
                return 0
            raise StoreError(f"could not save match: {getattr(error, 'orig', error)}") from None

    def _has_match_or_slot(self, record: MatchRecord) -> bool:
        with self._read() as session:
            return queries.has_match(session, record.match_id) or (
                record.tournament_id is not None and record.game_index is not None
                and queries.has_slot(session, record.tournament_id, record.game_index))

    def load_match(self, match_id: str) -> MatchRecord:
        """The stored match as the MatchRecord that was saved (times come back in UTC)."""
        with self._read() as session:
            return queries.load_match(session, match_id, self.name)

    def list_matches(
        self, variant: str | None = None, tournament_id: str | None = None, bot: str | None = None, limit: int = 50
    ) -> list[MatchSummary]:
        """The newest matches first, optionally only one variant, tournament or bot."""
        with self._read() as session:
            return queries.list_matches(session, variant, tournament_id, bot, limit)

    def tournament_matches(self, tournament_id: str, game_indexes: Iterable[int]) -> list[MatchSummary]:
        """The stored matches of these slots of a tournament (read a thousand slots at a time)."""
        wanted = sorted(set(game_indexes))
        found: list[MatchSummary] = []
        with self._read() as session:
            for start in range(0, len(wanted), 1000):
                chunk = wanted[start:start + 1000]
                found += queries.list_matches(session, None, tournament_id, None, len(chunk), game_indexes=chunk)
        return found

    def match_count(self, variant: str | None = None, status: str | None = "completed") -> int:
        with self._read() as session:
            return queries.match_count(session, variant, status)

    def variants(self) -> list[str]:
        """Variants that have completed matches."""
        with self._read() as session:
            return queries.variants(session)

    # -- bot crashes (crashes.py) ---------------------------------------------------------

    def save_crash(self, crash: BotCrash) -> None:
        """Record a bot process that exited, crashed or was killed while it should have
        been playing. A new bot name gets a token-less row (as ``ensure_bot``); a crash
        without a variant takes its tournament's; an unknown tournament is refused
        (``StoreError``)."""
        with self._write() as session:
            crashes.save_crash(session, crash, self._saver.bot_ids, self.name)

    def crashes(self, variant: str | None = None, tournament_id: str | None = None) -> dict[str, CrashSummary]:
        """Per bot that crashed, in name order: how many crashes of ``variant`` and of
        ``tournament_id`` (None: any), and the last one's reason and time."""
        with self._read() as session:
            return crashes.crash_summaries(session, variant, tournament_id)

    # -- ratings and leaderboard data ---------------------------------------------------

    def rating_history(self, bot: str, variant: str) -> list[RatingChange]:
        """Every online-Elo change of a bot in a variant, oldest first."""
        with self._read() as session:
            return queries.rating_history(session, bot, variant)

    def current_elo(self, variant: str) -> dict[str, tuple[float, int]]:
        """Each bot's latest online Elo in a variant and how many rated matches it has."""
        with self._read() as session:
            return queries.current_elo(session, variant)

    def seat_aggregates(self, variant: str, tournament_id: str | None = None) -> list[SeatAggregate]:
        """Per-bot sums over the completed matches of a variant (optionally one tournament)."""
        with self._read() as session:
            return queries.seat_aggregates(session, variant, tournament_id)

    def board_snapshot(self, variant: str | None, tournament_id: str | None = None,
                       elo_limit: int | None = None) -> BoardSnapshot:
        """Everything a board of ``variant`` (only ``tournament_id``'s games, when given), its
        crosstable and, with ``elo_limit``, its Elo plot are computed from, read in one
        transaction (see ``snapshots.py``). ``variant`` None: the tournament's. An unknown
        tournament is ``NotStored``."""
        with self._read() as session:
            return snapshots.board_snapshot(session, variant, tournament_id, elo_limit, self.name)

    def tournament_snapshot(self, tournament_id: str, match_limit: int) -> TournamentSnapshot:
        """Everything a tournament's page is computed from, read in one transaction (see
        ``snapshots.py``): its board and its ``match_limit`` newest matches. An unknown
        tournament is ``NotStored``."""
        with self._read() as session:
            return snapshots.tournament_snapshot(session, tournament_id, match_limit, self.name)

    def bot_snapshot(self, name: str, recent: int, classic_limit: int) -> BotSnapshot:
        """Everything a bot's page is computed from, but the boards it shows its place on,
        read in one transaction (see ``snapshots.py``): its seats and faults, crashes,
        sums per variant, its ``recent`` newest matches and its ``classic_limit`` newest
        classic results."""
        with self._read() as session:
            return snapshots.bot_snapshot(session, name, recent, classic_limit)

    # -- reports (reports.py) -----------------------------------------------------------

    def newest_classic(self, bot: str, limit: int) -> NewestClassic:
        """A bot's ``limit`` newest completed classic matches: config, result and its seats, in one snapshot."""
        with self.engine.connect() as conn:
            return reports.newest_classic(conn, bot, limit)


# The SQLite stores of this process not closed yet (weakly: a store dropped unclosed is
# not kept alive), so that closing the last one of a file checkpoints it and the process's
# exit closes the rest.
_OPEN_SQLITE: weakref.WeakSet[Store] = weakref.WeakSet()
_OPEN_LOCK = threading.Lock()
# How long a checkpoint at close waits for another process's readers (they are quick).
CHECKPOINT_WAIT_MS = 200


@atexit.register
def _close_open_stores() -> None:
    """At exit, close every store still open (the CLI's commands leave theirs to this):
    each database ends whole in its one file."""
    with _OPEN_LOCK:
        still_open = list(_OPEN_SQLITE)
    for store in still_open:
        store.close()


def _use_wal(engine: Engine) -> None:
    """Switch the file to the WAL journal (readers never wait for the writer), which it
    keeps for every later connection. A new file is switched before its schema is
    written; an existing one only after ``open_schema`` accepted it, so a file the store
    refuses (someone else's tables, another schema version) keeps its own journal mode,
    with no ``-wal`` file beside it.

    The switch needs the file to itself for a moment. When another process holds it
    (a reader of a database still in the rollback journal, or a second process making
    the same new file), SQLite waits its busy timeout and answers "database is locked".
    The switch waits only CHECKPOINT_WAIT_MS (with the store's 30 s, opening beside a
    reader took 30 s); the store then carries on in the rollback journal, which is as
    correct, only with readers waiting for the writer, and a later open switches it."""
    raw = engine.raw_connection()     # the driver's own connection: no BEGIN around a PRAGMA
    try:
        cursor = raw.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
        finally:     # the pooled connection keeps the store's own wait for its writes
            cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            cursor.close()
    except engine.dialect.loaded_dbapi.OperationalError as error:
        if "locked" not in str(error) and "busy" not in str(error):
            raise
    finally:
        raw.close()


def _setup_sqlite(engine: Engine) -> None:
    """NORMAL sync, foreign keys on, and real transactions (see below); the WAL journal
    is switched on by :func:`_use_wal` once the file is known to be an arena database."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Python's sqlite3 would otherwise open transactions only before INSERT/UPDATE/DELETE,
        # so reads and DDL ran outside them; SQLAlchemy emits BEGIN itself instead (its
        # documented recipe), which makes the schema creation and every read consistent.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A writing transaction takes the write lock at once (see Store._write).
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("arena_write") else "BEGIN")
