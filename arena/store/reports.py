"""Reads for the reports above the store that the leaderboard's inputs do not cover: one
bot's stored seats and faults and its newest crash (the bot page), its newest classic
results (exact bids by hand size), and the rating history the Elo plot draws.

Each function reads in the one transaction (one snapshot) the ``Store`` opens for it, and
returns plain values (the dataclasses below), never rows: the rooms above the store see
no table. The SQL is the one SQLite and PostgreSQL share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlmodel import col

from arena.records import BotCrash
from arena.store.codec import as_utc
from arena.store.schema import BotCrashRow, BotRow, EloRow, FaultRow, MatchRow, MatchSeatRow, RatingHistoryRow
from arena.wire.json_codec import loads
from engine import VARIANT_RECORDS

# -- one bot's seats and faults (arena.web.bots) ------------------------------------------


@dataclass(frozen=True)
class BotSeat:
    """One seat a bot held in a stored match (of any status), with what its match says."""

    seat: int
    bot_version: str | None
    place: int
    rounds: int | None              # classic: rounds scored; None for extreme
    exact_bids: int | None          # classic: rounds bid exactly; None for extreme
    variant: str
    status: str
    players: int
    think_max_ms: float | None      # the seat's slowest answer
    bank_used_ms: float | None      # the seat's time-bank use (None: not known)
    time_bank_ms: float | None      # the match's time bank (None: not known)


@dataclass(frozen=True)
class BotFault:
    """One fault charged to a bot, and the match it was charged in."""

    kind: str
    match_id: str


@dataclass(frozen=True)
class BotGames:
    """Every stored seat of one bot (in no particular order) and its faults, newest match first."""

    seats: list[BotSeat]
    faults: list[BotFault]


def bot_games(conn: Connection, name: str) -> BotGames:
    """The bot's seats and faults, in the caller's one transaction."""
    seats = conn.execute(
        sa.select(col(MatchSeatRow.seat), col(MatchSeatRow.bot_version), col(MatchSeatRow.place),
                  col(MatchSeatRow.rounds), col(MatchSeatRow.exact_bids), col(MatchRow.variant),
                  col(MatchRow.status), col(MatchRow.players), col(MatchSeatRow.think_max_ms),
                  col(MatchSeatRow.bank_used_ms), col(MatchRow.time_bank_ms))
        .join(MatchRow, col(MatchRow.id) == col(MatchSeatRow.match_pk))
        .join(BotRow, col(BotRow.id) == col(MatchSeatRow.bot_id))
        .where(col(BotRow.name) == name)
    ).all()
    faults = conn.execute(
        sa.select(col(FaultRow.kind), col(MatchRow.match_id))
        .join(MatchRow, col(MatchRow.id) == col(FaultRow.match_pk))
        .join(BotRow, col(BotRow.id) == col(FaultRow.bot_id))
        .where(col(BotRow.name) == name)
        .order_by(col(MatchRow.id).desc())
    ).all()
    return BotGames([BotSeat(*row) for row in seats], [BotFault(kind, match_id) for kind, match_id in faults])


def last_crash(conn: Connection, name: str) -> BotCrash | None:
    """The bot's newest stored crash (by time, then by the order stored), whatever its
    variant or tournament, as it was recorded; None when it never crashed."""
    row = conn.execute(
        sa.select(col(BotCrashRow.reason), col(BotCrashRow.exit_code), col(BotCrashRow.tournament_id),
                  col(BotCrashRow.variant), col(BotCrashRow.worker), col(BotCrashRow.restarted),
                  col(BotCrashRow.at))
        .join(BotRow, col(BotRow.id) == col(BotCrashRow.bot_id))
        .where(col(BotRow.name) == name)
        .order_by(col(BotCrashRow.at).desc(), col(BotCrashRow.id).desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    reason, exit_code, tournament_id, variant, worker, restarted, at = row
    return BotCrash(name, reason, exit_code, tournament_id, variant, worker, bool(restarted), as_utc(at))


# -- a bot's newest classic results (arena.results.browse.hand_size_bids) ----------------------


@dataclass(frozen=True)
class ClassicGame:
    """One completed classic match of a bot: its stored config and result, and the bot's seats in it."""

    config: dict[str, Any]
    result: dict[str, Any]
    seats: list[int]                # ascending


@dataclass(frozen=True)
class NewestClassic:
    """A bot's newest completed classic matches, at most ``limit`` of them, oldest first."""

    matches: int                    # how many were found (``limit`` when it may have more)
    games: list[ClassicGame]


def newest_classic(conn: Connection, bot: str, limit: int) -> NewestClassic:
    """The ``limit`` newest completed classic matches of ``bot`` (every seat it held in them),
    in the caller's one transaction: no decision log is read. Classic: the variants whose
    record says players bid (``engine.Variant.bids``)."""
    bidding = [name for name, record in VARIANT_RECORDS.items() if record.bids]     # classic
    mine = (col(BotRow.name) == bot, col(MatchRow.variant).in_(bidding), col(MatchRow.status) == "completed")
    seats = (sa.select(col(MatchRow.id)).join(MatchSeatRow, col(MatchSeatRow.match_pk) == col(MatchRow.id))
             .join(BotRow, col(BotRow.id) == col(MatchSeatRow.bot_id)).where(*mine))
    newest = [i for i in conn.execute(seats.distinct().order_by(col(MatchRow.id).desc()).limit(limit)).scalars()
              if i is not None]
    rows = conn.execute(
        sa.select(col(MatchRow.id), col(MatchRow.config_json), col(MatchRow.result_json), col(MatchSeatRow.seat))
        .join(MatchSeatRow, col(MatchSeatRow.match_pk) == col(MatchRow.id))
        .join(BotRow, col(BotRow.id) == col(MatchSeatRow.bot_id))
        .where(*mine, col(MatchRow.id) >= newest[-1]).order_by(col(MatchRow.id), col(MatchSeatRow.seat))
    ).all() if newest else []
    by_match: dict[int | None, tuple[str, str, list[int]]] = {}
    for match_pk, config_json, result_json, seat in rows:
        by_match.setdefault(match_pk, (config_json, result_json, []))[2].append(int(seat))
    return NewestClassic(len(newest), [ClassicGame(loads(config_json), loads(result_json), seat_list)
                                       for config_json, result_json, seat_list in by_match.values()])


# -- the rating history the Elo plot draws (arena.results.elo_history) ---------------------------

_H = RatingHistoryRow.__tablename__
_E = EloRow.__tablename__
_B = BotRow.__tablename__
_M = MatchRow.__tablename__


@dataclass(frozen=True)
class EloStep:
    """One ``rating_history`` row of a bot: its ``games``-th rated game and its Elo before and after."""

    games: int
    elo_before: float
    elo_after: float


@dataclass(frozen=True)
class EloTrack:
    """A bot's online Elo in a variant now, and some of its history (see :func:`elo_tracks`)."""

    bot: str
    games: int                      # its rated games in the variant (elo_ratings.games)
    elo: float                      # its Elo now
    steps: list[EloStep]            # ascending by games


@dataclass(frozen=True)
class BotEloStep:
    """One ``rating_history`` row, named by its bot."""

    bot: str
    elo_before: float
    elo_after: float


def elo_tracks(conn: Connection, variant: str, limit: int) -> list[EloTrack]:
    """Every bot rated in ``variant``, with its first rated game and every ``stride``-th one,
    ``stride`` being ``ceil(games / (limit - 4))`` for a bot of ``games`` (so about
    ``limit - 4`` of them: a line of at most ``limit`` points keeps two more for its first
    and last and two for its extremes). The database does the thinning, so a 100,000-match
    arena's 400,000 history rows are never all read. In the caller's one transaction."""
    latest = conn.execute(sa.text(
        f"SELECT e.bot_id, b.name, e.elo, e.games FROM {_E} e JOIN {_B} b ON b.id = e.bot_id "
        "WHERE e.variant = :variant AND e.games > 0"), {"variant": variant}).all()
    if not latest:
        return []
    # The stride is a CASE over the bots rather than a join with elo_ratings: 64 ms instead
    # of 96 ms over 400,000 rows (a join looks a row up per history row).
    params: dict[str, Any] = {"variant": variant}
    cases = []
    for i, (bot_id, _, _, games) in enumerate(latest):
        params[f"b{i}"], params[f"s{i}"] = bot_id, max(1, -(-games // max(limit - 4, 1)))
        cases.append(f"WHEN :b{i} THEN :s{i}")
    rows = conn.execute(sa.text(
        f"SELECT bot_id, games, elo_before, elo_after FROM {_H} WHERE variant = :variant "
        f"AND (games = 1 OR games % (CASE bot_id {' '.join(cases)} ELSE 1 END) = 0)"), params).all()
    by_bot: dict[int, list[tuple[int, float, float]]] = {}
    for bot_id, games, before, after in rows:
        by_bot.setdefault(bot_id, []).append((int(games), float(before), float(after)))
    return [EloTrack(name, int(games), float(elo), [EloStep(*step) for step in sorted(by_bot.get(bot_id, []))])
            for bot_id, name, elo, games in latest]


def tournament_elo_steps(conn: Connection, variant: str, tournament_id: str) -> list[BotEloStep]:
    """Every ``rating_history`` row of ``variant`` from the tournament's matches, in the order
    the games counted (the rows' order)."""
    rows = conn.execute(sa.text(
        f"SELECT b.name, h.elo_before, h.elo_after FROM {_H} h JOIN {_B} b ON b.id = h.bot_id "
        f"WHERE h.variant = :variant AND h.match_pk IN (SELECT id FROM {_M} WHERE tournament_id = :tournament) "
        "ORDER BY h.id"), {"variant": variant, "tournament": tournament_id}).all()
    return [BotEloStep(name, float(before), float(after)) for name, before, after in rows]
