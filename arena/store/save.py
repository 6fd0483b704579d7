"""The save path: a batch of finished matches into the database, in the caller's transaction.

One save writes, in this order: the match rows, then their seats, logs and faults, then
what follows from them, as the statistics room computes it (``arena.stats``: pure
functions, tested without a database): outcome counts and per-bot sums with think-time
histograms (``arena.stats.summaries``, ``arena.stats.think_times``), then the Elo history
and current ratings (``arena.stats.elo``). Those rows start from rows already stored (a
bot's current Elo, its stored histogram), which this path reads in the same transaction,
under the store's write lock (see ``Store._write``), so that two writers never interleave
a read and a write.

The rows go through the database driver's own cursor in plain SQL (:class:`_DriverSQL`),
not through SQLAlchemy: that is the measured fast path (``arena bench store``).

A tournament's schedule slot (``tournament_id``, ``game_index``) holds one match: a
record for a slot already stored, under any match id, is skipped (``Store.save_match``
returns False), so that a game two workers both played is stored once.

Elo in schedule order. Online Elo depends on the order it counts matches in. A
tournament played by several workers (or several matches at once) stores its games in
whatever order they finish, so its matches count in schedule order instead: each
tournament has a cursor (``tournaments.elo_next``), and a saved match at the cursor's
slot counts, with every stored match after it while the slots are contiguous; one past a
gap waits for the gap's game. The same tournament thus gives the same ratings however
its games were spread and finished (as long as no other match counts in between). A
tournament whose status is not ``running`` (finished, interrupted, organised elsewhere)
has no game coming for sure, so its stored matches count at once, in slot order, gaps
or not: :meth:`MatchSaver.count_waiting_elo` (also run when a tournament stops
running). Whatever the cursor has passed counts when it is saved. Matches outside
tournaments count when they are saved. ``rating_history`` rows are written in the
order they count, which is the order every reader (history, the Elo plot) follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import bindparam, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import BindParameter

from arena.records import MatchRecord
from arena.stats.elo import EloKey, RatedMatch, rate_matches
from arena.stats.matches import NewMatch
from arena.stats.summaries import BotSums, Summary, TotalsKey, summarize
from arena.stats.think_times import add_counts
from arena.store.codec import LOG_FORMAT, as_utc, pack_log, seat_max_latencies
from arena.store.errors import StoreError
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
    TournamentRow,
    check_seed,
    chunks,
)
from arena.wire.json_codec import dumps


class _SQL:
    """The SQLAlchemy statements of the write path that are not run for every match, built once."""

    _matches, _bots = MatchRow.__table__, BotRow.__table__
    _keys: BindParameter[list[str]] = bindparam("keys", expanding=True)   # an IN (...) list given at execution
    stored_match_ids = select(_matches.c.match_id).where(_matches.c.match_id.in_(_keys))
    _slots: BindParameter[list[int]] = bindparam("slots", expanding=True)
    stored_slots = select(_matches.c.game_index).where(_matches.c.tournament_id == bindparam("tournament"),
                                                       _matches.c.game_index.in_(_slots))
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
        self.add_totals = self._adding_upsert(BotTotalsRow.__table__, [f.name for f in fields(BotSums)],
                                              replaced=["think_histogram"])
        m, t = self.mark, TournamentRow.__tablename__
        # The rows a cursor advance reads and writes (see the module docstring). The
        # tournament row is locked on PostgreSQL so that two advances never interleave
        # (the save's write lock already orders them; the row lock states it where it
        # matters). NO KEY: inserting a row that refers to the tournament stays free.
        self.lock = "" if dialect.name == "sqlite" else " FOR NO KEY UPDATE"
        self.set_cursor = f"UPDATE {t} SET elo_next = {m} WHERE id = {m}"
        self.slots_from = (f"SELECT game_index, id FROM {MatchRow.__tablename__} WHERE tournament_id = {m} "
                           f"AND game_index >= {m} ORDER BY game_index LIMIT {m}")

    def cursors_of(self, count: int) -> str:
        marks = ", ".join([self.mark] * count)
        return f"SELECT id, status, elo_next FROM {TournamentRow.__tablename__} WHERE id IN ({marks}){self.lock}"

    def rated_facts(self, count: int) -> str:
        """What rating a stored match needs: its status and variant, and each seat's bot and place."""
        marks = ", ".join([self.mark] * count)
        return (f"SELECT m.id, m.status, m.variant, s.bot_id, s.place FROM {MatchRow.__tablename__} m "
                f"JOIN {MatchSeatRow.__tablename__} s ON s.match_pk = m.id WHERE m.id IN ({marks}) "
                f"ORDER BY m.id, s.seat")

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


class MatchSaver:
    """The save path of one store: its driver SQL and the ids it has looked up."""

    def __init__(self, dialect: Any) -> None:
        self._sql = _DriverSQL(dialect)
        self._bot_id_cache: dict[str, int] = {}
        self._known_tournaments: set[str] = set()

    def bot_ids(self, conn: Connection, names: Sequence[str]) -> dict[str, int]:
        """Bot ids by name, creating token-less rows for new names (inside a write transaction).

        Ids never change, so those read from the database are cached; ids created here
        are not, until a later call reads them back (this transaction may still roll back).
        """
        wanted = set(names)
        ids = {n: self._bot_id_cache[n] for n in wanted if n in self._bot_id_cache}
        unknown = sorted(wanted - set(ids))
        for chunk in chunks(unknown):
            found = dict(conn.execute(_SQL.bot_ids, {"keys": list(chunk)}).all())
            self._bot_id_cache.update(found)
            ids.update(found)
        missing = [n for n in unknown if n not in ids]
        if missing:
            now = datetime.now(UTC)
            conn.execute(_SQL.insert_bots, [{"name": n, "token_hash": None, "created_at": now} for n in missing])
            for chunk in chunks(missing):
                ids.update(conn.execute(_SQL.bot_ids, {"keys": list(chunk)}).all())
        return ids

    def save(self, conn: Connection, records: Sequence[MatchRecord]) -> int:
        """Store the matches whose ids are new, in order; return how many were new."""
        stored: set[str] = set()
        if len(records) > 1:
            # A single match skips this query: inserting a stored match id violates the
            # unique index, and Store.save_matches turns that into "already stored".
            for chunk in chunks([r.match_id for r in records]):
                stored.update(conn.execute(_SQL.stored_match_ids, {"keys": list(chunk)}).scalars())
        taken: set[tuple[str, int]] = set()
        if len(records) > 1:
            # Likewise a single match skips this: a stored slot violates the unique index.
            taken = self._stored_slots(conn, records)
        fresh: list[MatchRecord] = []
        for record in records:
            tournament_id, index = record.tournament_id, record.game_index
            slot = (tournament_id, index) if tournament_id is not None and index is not None else None
            if record.match_id not in stored and (slot is None or slot not in taken):
                stored.add(record.match_id)     # a repeated id or slot within the batch counts once too
                if slot is not None:
                    taken.add(slot)
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
                     "settings_json": dumps({"organised_elsewhere": True, "game": {"variant": variants[t]}})}
                    for t in unknown])
            self._known_tournaments.update(known)

        bot_ids = self.bot_ids(conn, [name for r in fresh for name in r.bots + [f.bot for f in r.faults]])
        with closing(conn.connection.cursor()) as cursor:   # the rows go through the driver (see _DriverSQL)
            return self._insert_rows(cursor, fresh, bot_ids)

    def _stored_slots(self, conn: Connection, records: Sequence[MatchRecord]) -> set[tuple[str, int]]:
        """The tournament slots of ``records`` that already hold a stored match."""
        wanted: dict[str, list[int]] = {}
        for record in records:
            if record.tournament_id is not None and record.game_index is not None:
                wanted.setdefault(record.tournament_id, []).append(record.game_index)
        taken: set[tuple[str, int]] = set()
        for tournament_id, indexes in wanted.items():
            for chunk in chunks(sorted(set(indexes))):
                taken.update((tournament_id, index) for index in conn.execute(
                    _SQL.stored_slots, {"tournament": tournament_id, "slots": list(chunk)}).scalars())
        return taken

    def _insert_rows(self, cursor: Any, fresh: list[MatchRecord], bot_ids: dict[str, int]) -> int:
        """Every row of the new matches: match, seats, log, faults, summaries, Elo."""
        sql = self._sql
        matches: list[NewMatch] = []
        logs: list[tuple[bytes, bytes]] = []
        for record in fresh:
            packed_actions, latencies, seats = pack_log(record.actions, record.latencies_ms)
            logs.append((packed_actions, latencies.tobytes()))
            median, highest = _latency_figures(latencies)
            row = {
                "match_id": record.match_id, "tournament_id": record.tournament_id,
                "game_index": record.game_index, "variant": record.variant, "players": len(record.bots),
                "config_json": dumps(record.config.to_dict()), "seed": record.seed, "status": record.status,
                "started_at": as_utc(record.started_at), "finished_at": as_utc(record.finished_at),
                "result_json": dumps(record.result_json()), "decisions": len(record.actions),
                "median_latency_ms": median, "max_latency_ms": highest, "time_bank_ms": record.time_bank_ms,
                "private": record.private,
            }
            cursor.execute(sql.insert_match.sql, sql.insert_match.params(row))
            matches.append(NewMatch(cursor.fetchone()[0], record, [bot_ids[b] for b in record.bots], latencies, seats))
        summary = summarize(matches)

        seat_rows, log_rows, fault_rows = [], [], []
        for match, facts, (packed_actions, packed_latencies) in zip(matches, summary.seats, logs):
            record = match.record
            think_max = seat_max_latencies(match.latencies_ms, match.action_seats, len(record.bots))
            bank_used: Sequence[float | None] = record.bank_used_ms or [None] * len(record.bots)
            for fault in record.faults:
                fault_rows.append({
                    "match_pk": match.pk, "seat": fault.seat, "bot_id": bot_ids[fault.bot], "kind": fault.kind,
                    "request_id": fault.request_id, "message": fault.message, "at": as_utc(fault.at),
                })
            for seat, seat_facts in enumerate(facts):
                seat_rows.append({
                    "match_pk": match.pk, "seat": seat, "bot_id": match.bot_ids[seat],
                    "bot_version": record.bot_versions[seat], "total": record.totals[seat],
                    "place": record.places[seat], "forfeited": record.forfeited[seat], "faults": seat_facts.faults,
                    "rounds": seat_facts.rounds, "exact_bids": seat_facts.exact_bids, "timeouts": seat_facts.timeouts,
                    "think_max_ms": think_max[seat], "bank_used_ms": bank_used[seat],
                })
            log_rows.append({"match_pk": match.pk, "format": LOG_FORMAT, "actions": packed_actions,
                             "latencies": packed_latencies})
        _run(cursor, sql.insert_seats, seat_rows)
        _run(cursor, sql.insert_logs, log_rows)
        _run(cursor, sql.insert_faults, fault_rows)
        self._add_to_summaries(cursor, summary)
        self._update_elo(cursor, self._in_elo_order(cursor, matches))
        return len(fresh)

    def count_waiting_elo(self, conn: Connection, tournament_id: str) -> None:
        """Count for Elo every stored match of a tournament still waiting for a gap's game,
        in slot order (the tournament stops running: no game is sure to come)."""
        with closing(conn.connection.cursor()) as cursor:
            cursor.execute(self._sql.cursors_of(1), [tournament_id])
            row = cursor.fetchone()
            if row is not None:
                self._update_elo(cursor, self._advance(cursor, tournament_id, row[2], contiguous=False, new={}))

    def _in_elo_order(self, cursor: Any, matches: list[NewMatch]) -> list[RatedMatch]:
        """The matches that count for Elo now, in the order they count: the new ones outside
        tournaments or below their tournament's cursor, in the order given, then for each
        tournament the stored ones the cursor passes (see the module docstring)."""
        slotted = sorted({m.record.tournament_id for m in matches
                          if m.record.tournament_id is not None and m.record.game_index is not None})
        if not slotted:
            return [match.rated() for match in matches]
        state: dict[str, tuple[str, int]] = {}
        for chunk in chunks(slotted):
            cursor.execute(self._sql.cursors_of(len(chunk)), list(chunk))
            state.update((tournament_id, (status, elo_next)) for tournament_id, status, elo_next in cursor.fetchall())
        ordered: list[RatedMatch] = []
        waiting: dict[str, dict[int, NewMatch]] = {}
        for match in matches:
            tournament_id, index = match.record.tournament_id, match.record.game_index
            if tournament_id is None or index is None or index < state[tournament_id][1]:
                ordered.append(match.rated())
            else:
                waiting.setdefault(tournament_id, {})[index] = match
        for tournament_id, new in waiting.items():
            status, elo_next = state[tournament_id]
            ordered += self._advance(cursor, tournament_id, elo_next, contiguous=status == "running", new=new)
        return ordered

    def _advance(self, cursor: Any, tournament_id: str, elo_next: int, contiguous: bool,
                 new: dict[int, NewMatch]) -> list[RatedMatch]:
        """Move a tournament's Elo cursor from ``elo_next`` over the stored slots, while they
        are contiguous (or over all of them) and return their matches in slot order: those
        in ``new`` (by slot) as given, the others read back."""
        passed: list[tuple[int, int]] = []       # (slot, matches.id)
        page = 500
        while True:
            start = passed[-1][0] + 1 if passed else elo_next
            cursor.execute(self._sql.slots_from, [tournament_id, start, page])
            rows = cursor.fetchall()
            for index, pk in rows:
                if contiguous and index != (passed[-1][0] + 1 if passed else elo_next):
                    break
                passed.append((index, pk))
            else:
                if len(rows) == page:
                    continue
            break
        if not passed:
            return []
        cursor.execute(self._sql.set_cursor, [passed[-1][0] + 1, tournament_id])
        stored = self._stored_for_elo(cursor, [pk for index, pk in passed if index not in new])
        return [new[index].rated() if index in new else stored[pk] for index, pk in passed]

    def _stored_for_elo(self, cursor: Any, pks: list[int]) -> dict[int, RatedMatch]:
        """Stored matches as the online Elo reads them: status, variant, bot ids and places."""
        facts: dict[int, tuple[str, str, list[int], list[int]]] = {}
        for chunk in chunks(pks):
            cursor.execute(self._sql.rated_facts(len(chunk)), list(chunk))
            for pk, status, variant, bot_id, place in cursor.fetchall():
                _, _, bots, places = facts.setdefault(pk, (status, variant, [], []))
                bots.append(bot_id)
                places.append(place)
        return {pk: RatedMatch(pk, variant, status == "completed", bots, places)
                for pk, (status, variant, bots, places) in facts.items()}

    def _add_to_summaries(self, cursor: Any, summary: Summary) -> None:
        """Add the new outcome counts and per-bot sums (one upsert per key) and merge the
        new think times into the stored histograms.

        The think-time histograms cannot be added up in SQL: the stored ones are read,
        merged with the new counts and written back whole. The write lock every save
        holds (see Store._write) keeps another writer from merging into the same row meanwhile.
        """
        histograms = self._merged_histograms(cursor, summary.think_counts)
        _run(cursor, self._sql.add_outcomes, [
            {"variant": v, "tournament_key": t, "outcome": o, "matches": n} for (v, t, o), n in summary.outcomes.items()
        ])
        # A bot without a new think time gets NULL, which leaves its stored histogram as it was.
        _run(cursor, self._sql.add_totals, [
            {"bot_id": b, "variant": v, "tournament_key": t, **vars(sums), "think_histogram": histograms.get((b, v, t))}
            for (b, v, t), sums in summary.totals.items()
        ])

    def _merged_histograms(self, cursor: Any, counts: dict[TotalsKey, np.ndarray]) -> dict[TotalsKey, bytes | None]:
        """The stored think-time histogram of each bot_totals key plus its new ``counts``,
        in the stored form (one query; usually four keys of one variant and tournament)."""
        stored: dict[TotalsKey, bytes] = {}
        bots = sorted({b for b, _, _ in counts})
        variants = sorted({v for _, v, _ in counts})
        tournaments = sorted({t for _, _, t in counts})
        for bot_chunk in chunks(bots, 200):
            for tournament_chunk in chunks(tournaments, 200):
                cursor.execute(self._sql.histograms_of(len(bot_chunk), len(variants), len(tournament_chunk)),
                               [*bot_chunk, *variants, *tournament_chunk])
                for bot_id, variant, tournament_key, blob in cursor.fetchall():
                    if (bot_id, variant, tournament_key) in counts:
                        stored[(bot_id, variant, tournament_key)] = blob
        return {key: add_counts(stored.get(key), new) for key, new in counts.items()}

    def _update_elo(self, cursor: Any, matches: list[RatedMatch]) -> None:
        """Online Elo for the new matches, in order: reads the bots' current ratings, writes
        the history and the ratings ``arena.stats.elo.rate_matches`` computes from them."""
        ids = sorted({bot_id for match in matches for bot_id in match.bot_ids})
        current: dict[EloKey, tuple[float, int]] = {}
        for chunk in chunks(ids):
            cursor.execute(self._sql.elo_of_bots(len(chunk)), list(chunk))
            for bot_id, variant, elo, games in cursor.fetchall():
                current[(bot_id, variant)] = (elo, games)
        changes = rate_matches(current, matches)
        if not changes:
            return
        _run(cursor, self._sql.insert_history, [
            {"match_pk": c.match_pk, "bot_id": c.bot_id, "variant": c.variant, "elo_before": c.elo_before,
             "elo_after": c.elo_after, "games": c.games} for c in changes])
        latest = {(c.bot_id, c.variant): (c.elo_after, c.games) for c in changes}     # later changes win
        ratings = [{"bot_id": b, "variant": v, "elo": latest[(b, v)][0], "games": latest[(b, v)][1]}
                   for b, v in sorted(latest)]
        _run(cursor, self._sql.insert_elo, [r for r in ratings if (r["bot_id"], r["variant"]) not in current])
        _run(cursor, self._sql.update_elo, [r for r in ratings if (r["bot_id"], r["variant"]) in current])


def _check_record(record: MatchRecord) -> None:
    check_seed(record.seed, f"match {record.match_id}: seed")
    seats = len(record.bots)
    for name in ("bot_versions", "totals", "places", "forfeited"):
        if len(getattr(record, name)) != seats:
            raise StoreError(f"match {record.match_id}: {name} has {len(getattr(record, name))} entries "
                             f"for {seats} seats")
    if record.bank_used_ms is not None and len(record.bank_used_ms) != seats:
        raise StoreError(f"match {record.match_id}: bank_used_ms has {len(record.bank_used_ms)} entries "
                         f"for {seats} seats")
    if len(record.latencies_ms) != len(record.actions):
        raise StoreError(f"match {record.match_id}: {len(record.actions)} actions but "
                         f"{len(record.latencies_ms)} latencies")


def _latency_figures(latencies: np.ndarray) -> tuple[float | None, float | None]:
    """Median and maximum of the known latencies (NaN: unknown), as matches stores them.

    >>> import math
    >>> _latency_figures(np.array([3.0, math.nan, 1.0, 2.0, 10.0]))
    (2.5, 10.0)
    """
    known = np.sort(latencies[~np.isnan(latencies)])      # np.median takes several times longer
    if known.size == 0:
        return None, None
    middle = known.size // 2
    median = float(known[middle]) if known.size % 2 else (float(known[middle - 1]) + float(known[middle])) / 2
    return median, float(known[-1])


def _run(cursor: Any, statement: _DriverStatement, rows: list[dict[str, Any]]) -> None:
    if rows:
        cursor.executemany(statement.sql, [statement.params(row) for row in rows])
