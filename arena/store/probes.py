"""Probes for the benchmarks: what the database server itself costs and what it waits on.

The benchmarks' own interface to a store's database, apart from :class:`Store`, whose
methods are what the arena's users of the store need: ``arena bench`` imports this
module, and nothing else does.

``arena bench claims`` measures many workers claiming and saving at once. Its figures
mean something only beside what the same server does with nothing of the arena in the
way, and beside what the server's own sessions are waiting for while the workers run:

- :meth:`Probes.round_trip`: ``SELECT 1``, one statement's round trip (the network and the
  server's per-statement cost);
- :meth:`Probes.bare_write`: a write transaction that takes the store's write lock and commits,
  nothing else: what every save pays before it writes a row (on PostgreSQL a durable
  commit: a WAL flush with ``fsync`` on);
- :meth:`Probes.server_waits`: one sample of ``pg_stat_activity``: how many of the database's
  other sessions are running a statement, and how many of those wait, on what
  (``Lock``: a row or transaction lock another session holds, which is where the
  store's serialised saves wait);
- :meth:`Probes.server_settings`: the settings that decide the cost of a commit;
- :meth:`Probes.slot_counts`: the stored matches per slot of a tournament (a slot stored twice
  would show as 2), for checking that every game is stored exactly once.

None of them changes what is stored (the write lock is an update of the schema-version
row to itself, as every writer takes it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.engine import Engine

from arena.store import Store
from arena.store.errors import driver_errors_translated
from arena.store.schema import TAKE_WRITE_LOCK, MatchRow

_MATCHES = MatchRow.__table__

# The other client sessions of this database that are running a statement, and what they
# wait for (NULL: not waiting, on the CPU).
_ACTIVITY = sa.text(
    "SELECT wait_event_type, wait_event FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND backend_type = 'client backend' AND state = 'active'")

_SETTINGS = ("server_version", "fsync", "synchronous_commit", "wal_sync_method", "max_connections")


@dataclass(frozen=True)
class ServerWaits:
    """One sample of the server's other sessions in this database that run a statement.

    ``active`` counts them; ``lock`` those waiting for a heavyweight lock (a row or a
    transaction another session holds: ``wait_event_type = 'Lock'``); ``events`` every
    wait seen, as ``"TYPE:EVENT"`` (``"LWLock:WALWrite"``, ``"IO:WALSync"``, ...) to count.
    """

    active: int
    lock: int
    events: dict[str, int] = field(default_factory=dict)


@driver_errors_translated
class Probes:
    """The probes on one store's database, each call on a pooled connection of its own:
    ``probes = Probes(store)``, then ``probes.round_trip()`` and so on. A driver's error
    is a :class:`~arena.store.errors.StoreUnavailable`, as from the store's own methods."""

    def __init__(self, store: Store) -> None:
        self._engine: Engine = store.engine

    def round_trip(self) -> None:
        """One ``SELECT 1``: the yardstick of a statement's round trip."""
        with self._engine.connect() as conn:
            conn.execute(sa.text("SELECT 1")).scalar()

    def bare_write(self) -> None:
        """One write transaction that takes the store's write lock (the schema-version row
        updated to itself, after SQLite's ``BEGIN IMMEDIATE``) and commits, nothing else:
        the yardstick of what every save pays before its rows."""
        with self._engine.connect() as conn:
            conn.execution_options(arena_write=True)
            with conn.begin():
                conn.execute(TAKE_WRITE_LOCK)

    def server_waits(self) -> ServerWaits | None:
        """What the other sessions of this database running a statement wait for now (one
        sample of ``pg_stat_activity``); None on SQLite (one file, no server to ask)."""
        with self._engine.connect() as conn:
            if conn.dialect.name != "postgresql":
                return None
            rows = conn.execute(_ACTIVITY).all()
        events = Counter(f"{kind}:{event}" for kind, event in rows if kind is not None)
        return ServerWaits(active=len(rows), lock=sum(1 for kind, _ in rows if kind == "Lock"), events=dict(events))

    def server_settings(self) -> dict[str, str]:
        """The server's version and the settings a commit's cost depends on; on SQLite its
        library version and journal settings."""
        with self._engine.connect() as conn:
            if conn.dialect.name != "postgresql":
                return {"sqlite_version": str(conn.execute(sa.text("SELECT sqlite_version()")).scalar()),
                        "journal_mode": str(conn.execute(sa.text("PRAGMA journal_mode")).scalar()),
                        "synchronous": str(conn.execute(sa.text("PRAGMA synchronous")).scalar())}
            return {name: str(conn.execute(sa.text(f"SHOW {name}")).scalar()) for name in _SETTINGS}

    def slot_counts(self, tournament_id: str) -> dict[int, int]:
        """Stored matches per game index of a tournament (slots without a match are absent):
        a slot stored twice shows as 2."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(_MATCHES.c.game_index, func.count())
                                .where(_MATCHES.c.tournament_id == tournament_id,
                                       _MATCHES.c.game_index.is_not(None))
                                .group_by(_MATCHES.c.game_index)).all()
        return {int(index): int(count) for index, count in rows}
