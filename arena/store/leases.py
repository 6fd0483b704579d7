"""Work for many workers: a tournament's stored schedule, and leases on its deals.

A worker (``arena worker``) plays a tournament from the database alone: the schedule is
stored (``scheduled_games``, :func:`put_schedule`), and each deal is a unit of work
(``work_units``): its games are played one after the other by one worker, never two at
once, as the local runner plays them (arena.tournament.runner). A worker claims a deal
with a game not stored yet under a lease (:func:`claim_unit`), renews the lease while it
plays (:func:`renew_lease`) and gives the deal back when it stops (:func:`release_unit`).
A lease that runs out (a killed worker) puts the deal back: the next claim takes it,
and the old holder's renewal then fails. A game stored twice is stored once anyway (the
save path skips a taken schedule slot), so a lease only keeps work from being done twice.

Claims on PostgreSQL lock the claimed row with ``SELECT ... FOR UPDATE SKIP LOCKED``:
workers claiming at once each take a different deal without waiting for each other,
and without the store's write lock, so claims never wait for saves. On SQLite a claim
is one write transaction (``BEGIN IMMEDIATE``): the database's single writer lock
serialises the claims of the workers on one machine.

Lease times are the database's clock on PostgreSQL (``now()``), so that the workers'
clocks need not agree; SQLite's workers share the machine's clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from arena.store.codec import as_utc
from arena.store.errors import NotStored, StoreError
from arena.store.schema import MatchRow, ScheduledGameRow, TournamentRow, WorkUnitRow, check_seed, chunks
from arena.wire.json_codec import dumps, loads

_GAMES, _UNITS = ScheduledGameRow.__table__, WorkUnitRow.__table__
_MATCHES, _TOURNAMENTS = MatchRow.__table__, TournamentRow.__table__


class ScheduledGameLike(Protocol):
    """One game of a schedule as :func:`put_schedule` reads it (``arena.tournament.schedule.
    ScheduledGame`` is one; the store sits below that room and names only the fields)."""

    @property
    def index(self) -> int: ...
    @property
    def deal(self) -> int: ...
    @property
    def rotation(self) -> int: ...
    @property
    def bots(self) -> Sequence[str]: ...
    @property
    def seed(self) -> int: ...
    @property
    def bot_seeds(self) -> Sequence[int]: ...
    @property
    def table(self) -> int: ...


@dataclass(frozen=True)
class WorkUnit:
    """One deal of a tournament, claimed: its games are played one after another by one worker.

    ``game_indexes`` are the deal's games that were not stored when it was claimed, in
    schedule order. ``lease_id`` tells this claim from any later one of the same deal
    (renewing and releasing check it).
    """

    tournament_id: str
    deal: int
    game_indexes: tuple[int, ...]
    lease_expires_at: datetime
    lease_id: int = 0


def put_schedule(conn: Connection, tournament_id: str, games: Sequence[ScheduledGameLike], where: str) -> None:
    """Store a tournament's schedule and its deals as units of work. Idempotent: rows
    already stored are left as they are, and a game stored with other values is refused
    (``StoreError``: two different schedules for one tournament)."""
    if conn.execute(sa.select(_TOURNAMENTS.c.id).where(_TOURNAMENTS.c.id == tournament_id)).first() is None:
        raise NotStored(f"no tournament {tournament_id!r}", where)
    rows: list[dict[str, Any]] = []
    for game in games:
        check_seed(game.seed, f"game {game.index}: seed")
        for seed in game.bot_seeds:
            check_seed(seed, f"game {game.index}: bot seed")
        rows.append({"tournament_id": tournament_id, "game_index": game.index, "deal": game.deal,
                     "rotation": game.rotation, "bots_json": dumps(list(game.bots)), "seed": game.seed,
                     "bot_seeds_json": dumps(list(game.bot_seeds)), "table_number": game.table})
    if len({row["game_index"] for row in rows}) != len(rows):
        raise StoreError(f"tournament {tournament_id}: the schedule repeats a game index")
    stored = {row.game_index: row._asdict() for row in conn.execute(
        sa.select(_GAMES).where(_GAMES.c.tournament_id == tournament_id)).all()}
    for row in rows:
        if row["game_index"] in stored and stored[row["game_index"]] != row:
            raise StoreError(f"tournament {tournament_id}: game {row['game_index']} is already scheduled "
                             "differently (another schedule for the same tournament?)")
    new = [row for row in rows if row["game_index"] not in stored]
    deals: list[int] = sorted({row["deal"] for row in new})
    # ON CONFLICT DO NOTHING: two workers putting the same schedule at once both succeed.
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    for chunk in chunks(new):
        conn.execute(insert(_GAMES).on_conflict_do_nothing(), list(chunk))
    for deal_chunk in chunks(deals):
        conn.execute(insert(_UNITS).on_conflict_do_nothing(), [
            {"tournament_id": tournament_id, "deal": deal, "worker": None, "lease_expires_at": None,
             "lease_id": 0, "done": False} for deal in deal_chunk])


def replace_schedule(conn: Connection, tournament_id: str, games: Sequence[ScheduledGameLike], where: str) -> None:
    """Put a new schedule in place of the stored one, for a tournament that has stored
    no game yet (its lineup shrank before it started: an optional bot failed to start)."""
    if conn.execute(sa.select(_MATCHES.c.id).where(_MATCHES.c.tournament_id == tournament_id).limit(1)).first():
        raise StoreError(f"tournament {tournament_id} has stored games: its schedule can no longer change")
    conn.execute(sa.delete(_UNITS).where(_UNITS.c.tournament_id == tournament_id))
    conn.execute(sa.delete(_GAMES).where(_GAMES.c.tournament_id == tournament_id))
    put_schedule(conn, tournament_id, games, where)


def scheduled_games(conn: Connection, tournament_id: str) -> list[dict[str, Any]]:
    """The stored schedule, in game order: one dict per game with the fields of
    ``ScheduledGame`` (``game_index`` for its index; bots and bot seeds as tuples)."""
    return [{"tournament_id": row.tournament_id, "game_index": row.game_index, "deal": row.deal,
             "rotation": row.rotation, "bots": tuple(loads(row.bots_json)), "seed": row.seed,
             "bot_seeds": tuple(loads(row.bot_seeds_json)), "table": row.table_number}
            for row in conn.execute(sa.select(_GAMES).where(_GAMES.c.tournament_id == tournament_id)
                                    .order_by(_GAMES.c.game_index)).all()]


@dataclass(frozen=True)
class DealProgress:
    """How many of the games that share a deal are stored (``played``), of ``games``."""

    played: int
    games: int

    @property
    def done(self) -> bool:
        return self.played >= self.games


def deal_progress(conn: Connection, tournament_id: str, game_index: int) -> DealProgress | None:
    """The progress of the deal of game ``game_index`` of the tournament: None when the
    stored schedule does not hold that game."""
    deal = conn.execute(sa.select(_GAMES.c.deal).where(_GAMES.c.tournament_id == tournament_id,
                                                       _GAMES.c.game_index == game_index)).scalar()
    if deal is None:
        return None
    same_deal = sa.and_(_GAMES.c.tournament_id == tournament_id, _GAMES.c.deal == deal)
    games = conn.execute(sa.select(func.count()).select_from(_GAMES).where(same_deal)).scalar_one()
    played = conn.execute(
        sa.select(func.count()).select_from(_GAMES.join(
            _MATCHES, sa.and_(_MATCHES.c.tournament_id == _GAMES.c.tournament_id,
                              _MATCHES.c.game_index == _GAMES.c.game_index))).where(same_deal)).scalar_one()
    return DealProgress(played, games)


def _now(conn: Connection) -> Any:
    """The current time as the lease columns compare it: the database's on PostgreSQL."""
    if conn.dialect.name == "postgresql":
        return func.now()
    return sa.bindparam("now", datetime.now(UTC), type_=_UNITS.c.lease_expires_at.type)


def _until(conn: Connection, lease_seconds: float) -> Any:
    if lease_seconds <= 0:
        raise StoreError(f"a lease must last more than 0 seconds (got {lease_seconds})")
    length = timedelta(seconds=lease_seconds)
    if conn.dialect.name == "postgresql":
        return func.now() + sa.bindparam("length", length, type_=sa.Interval())
    return sa.bindparam("until", datetime.now(UTC) + length, type_=_UNITS.c.lease_expires_at.type)


def _unit_key(tournament_id: str, deal: int) -> Any:
    return sa.and_(_UNITS.c.tournament_id == tournament_id, _UNITS.c.deal == deal)


def _games_left(conn: Connection, tournament_id: str, deal: int) -> list[int]:
    """The deal's games without a stored match, in schedule order."""
    stored = sa.exists().where(_MATCHES.c.tournament_id == _GAMES.c.tournament_id,
                               _MATCHES.c.game_index == _GAMES.c.game_index)
    return list(conn.execute(
        sa.select(_GAMES.c.game_index).where(_GAMES.c.tournament_id == tournament_id, _GAMES.c.deal == deal, ~stored)
        .order_by(_GAMES.c.game_index)).scalars())


def claim_unit(conn: Connection, worker: str, lease_seconds: float, tournament_id: str | None) -> WorkUnit | None:
    """Claim the lowest deal (of ``tournament_id``, or of any running tournament) that has
    a game not stored and no live lease; None when there is none. See the module docstring."""
    until = _until(conn, lease_seconds)
    free = sa.or_(_UNITS.c.lease_expires_at.is_(None), _UNITS.c.lease_expires_at < _now(conn))
    query = sa.select(_UNITS.c.tournament_id, _UNITS.c.deal).where(~_UNITS.c.done, free)
    if tournament_id is not None:
        query = query.where(_UNITS.c.tournament_id == tournament_id)
    else:
        # A subquery, not a join: FOR UPDATE would lock the tournament rows too.
        query = query.where(_UNITS.c.tournament_id.in_(
            sa.select(_TOURNAMENTS.c.id).where(_TOURNAMENTS.c.status == "running")))
    # SQLite ignores FOR UPDATE (its claims hold the database's write lock instead).
    query = query.order_by(_UNITS.c.deal, _UNITS.c.tournament_id).limit(1).with_for_update(skip_locked=True)
    while True:
        row = conn.execute(query).first()
        if row is None:
            return None
        left = _games_left(conn, row.tournament_id, row.deal)
        if not left:
            # Every game stored (by an earlier holder): no claim will look at it again.
            conn.execute(sa.update(_UNITS).where(_unit_key(row.tournament_id, row.deal)).values(done=True))
            continue
        expires, lease_id = conn.execute(
            sa.update(_UNITS).where(_unit_key(row.tournament_id, row.deal))
            .values(worker=worker, lease_expires_at=until, lease_id=_UNITS.c.lease_id + 1)
            .returning(_UNITS.c.lease_expires_at, _UNITS.c.lease_id)).one()
        return WorkUnit(row.tournament_id, row.deal, tuple(left), as_utc(expires), lease_id)


def _held(unit: WorkUnit, worker: str) -> Any:
    return sa.and_(_unit_key(unit.tournament_id, unit.deal), _UNITS.c.worker == worker,
                   _UNITS.c.lease_id == unit.lease_id)


def renew_lease(conn: Connection, unit: WorkUnit, worker: str, lease_seconds: float) -> WorkUnit | None:
    """Extend the lease from now; None if it was lost (it ran out and the deal was claimed
    again, or released). A lease that ran out but was not claimed again is renewed."""
    expires = conn.execute(sa.update(_UNITS).where(_held(unit, worker))
                           .values(lease_expires_at=_until(conn, lease_seconds))
                           .returning(_UNITS.c.lease_expires_at)).scalar()
    if expires is None:
        return None
    return WorkUnit(unit.tournament_id, unit.deal, unit.game_indexes, as_utc(expires), unit.lease_id)


def release_unit(conn: Connection, unit: WorkUnit, worker: str) -> None:
    """Give a claimed deal back at once (nothing happens if the lease was lost meanwhile);
    the next claim takes it if a game of it is still not stored."""
    released = conn.execute(sa.update(_UNITS).where(_held(unit, worker))
                            .values(worker=None, lease_expires_at=None)).rowcount
    if released and not _games_left(conn, unit.tournament_id, unit.deal):
        conn.execute(sa.update(_UNITS).where(_unit_key(unit.tournament_id, unit.deal)).values(done=True))


def release_worker(conn: Connection, tournament_id: str, worker: str) -> int:
    """Give back every lease ``worker`` holds in the tournament (a worker known to be gone:
    its process no longer exists); how many."""
    return int(conn.execute(sa.update(_UNITS).where(_UNITS.c.tournament_id == tournament_id,
                                                   _UNITS.c.worker == worker)
                            .values(worker=None, lease_expires_at=None)).rowcount)


def unit_progress(conn: Connection, tournament_id: str) -> dict[str, Any]:
    """How far the workers are: deals done (every game stored), leased (a live lease, not
    done) and pending (the rest), games stored and scheduled, and the workers holding
    live leases."""
    stored = sa.exists().where(_MATCHES.c.tournament_id == _GAMES.c.tournament_id,
                               _MATCHES.c.game_index == _GAMES.c.game_index)
    per_deal = conn.execute(
        sa.select(_GAMES.c.deal, func.count(), func.sum(sa.case((stored, 1), else_=0)))
        .where(_GAMES.c.tournament_id == tournament_id).group_by(_GAMES.c.deal)).all()
    live = {deal: worker for deal, worker in conn.execute(
        sa.select(_UNITS.c.deal, _UNITS.c.worker)
        .where(_UNITS.c.tournament_id == tournament_id, _UNITS.c.lease_expires_at >= _now(conn))).all()}
    done = {deal for deal, scheduled, saved in per_deal if int(saved or 0) == scheduled}
    leased = {deal for deal, _, _ in per_deal if deal in live and deal not in done}
    return {
        "deals": len(per_deal),
        "deals_done": len(done),
        "deals_leased": len(leased),
        "deals_pending": len(per_deal) - len(done) - len(leased),
        "games_scheduled": sum(int(scheduled) for _, scheduled, _ in per_deal),
        "games_stored": sum(int(saved or 0) for _, _, saved in per_deal),
        "workers": sorted({live[deal] for deal in leased if live[deal] is not None}),
    }
