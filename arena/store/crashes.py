"""Bot crashes: the bot processes the arena started that ended while they should have been playing.

One row per :class:`arena.records.BotCrash` (the ``bot_crashes`` table). Boards and the
bot page read them summed up per bot: how many, and the last one's reason and time
(:class:`CrashSummary`). Each function works in the session the ``Store`` opens for it
(a write session holds the write lock, see ``Store._write``); ``where`` names the
database in messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.engine import Connection
from sqlmodel import Session

from arena.records import BotCrash
from arena.settings import TournamentSettings
from arena.store.codec import as_utc
from arena.store.errors import NotStored
from arena.store.schema import BotCrashRow, BotRow, TournamentRow
from arena.wire.json_codec import loads

# Bot ids by name, creating rows for new names (``MatchSaver.bot_ids``).
BotIds = Callable[[Connection, Sequence[str]], dict[str, int]]

_CRASHES, _BOTS = BotCrashRow.__table__, BotRow.__table__


@dataclass
class CrashSummary:
    """A bot's crashes on a board (a variant, a tournament): how many, and the last one."""

    bot: str
    count: int
    last_reason: str
    last_at: datetime


def save_crash(session: Session, crash: BotCrash, bot_ids: BotIds, where: str) -> None:
    """Store one crash. A crash without a variant takes its tournament's (the settings'
    ``game.variant``), so that the variant's boards count it; an unknown tournament is
    refused (``StoreError``): the arena records crashes of tournaments it runs."""
    variant = crash.variant
    if crash.tournament_id is not None:
        tournament = session.get(TournamentRow, crash.tournament_id)
        if tournament is None:
            raise NotStored(f"no tournament {crash.tournament_id!r}", where)
        if variant is None:
            variant = _variant_of(tournament.settings_json)
    conn = session.connection()
    bot_id = bot_ids(conn, [crash.bot])[crash.bot]
    conn.execute(sa.insert(_CRASHES).values(
        bot_id=bot_id, tournament_id=crash.tournament_id, variant=variant, reason=crash.reason,
        exit_code=crash.exit_code, worker=crash.worker, restarted=crash.restarted, at=as_utc(crash.at)))


def crash_summaries(session: Session, variant: str | None, tournament_id: str | None) -> dict[str, CrashSummary]:
    """Per bot (in name order), its crashes of ``variant`` and of ``tournament_id`` (None: any)."""
    filters: list[sa.ColumnElement[bool]] = []
    if variant is not None:
        filters.append(_CRASHES.c.variant == variant)
    if tournament_id is not None:
        filters.append(_CRASHES.c.tournament_id == tournament_id)
    return {summary.bot: summary for _, summary in _summaries(session, filters, per_variant=False)}


def crashes_per_variant(session: Session, bot: str) -> dict[str | None, CrashSummary]:
    """One bot's crashes per variant (None: a crash whose variant is not known), in variant order."""
    found = _summaries(session, [_BOTS.c.name == bot], per_variant=True)
    return dict(sorted(found, key=lambda item: (item[0] is None, item[0] or "")))


def _summaries(session: Session, filters: Sequence[sa.ColumnElement[bool]],
               per_variant: bool) -> list[tuple[str | None, CrashSummary]]:
    """``(variant or None, summary)`` per bot, or per bot and variant, of the crashes
    matching ``filters`` (on ``bot_crashes`` and ``bots``), in one query: the count over
    each group and its latest row (by time, then by the order stored)."""
    group: list[Any] = [_CRASHES.c.bot_id, _CRASHES.c.variant] if per_variant else [_CRASHES.c.bot_id]
    ranked = (
        sa.select(_BOTS.c.name, _CRASHES.c.variant, _CRASHES.c.reason, _CRASHES.c.at,
                  func.count().over(partition_by=group).label("crashes"),
                  func.row_number().over(partition_by=group,
                                         order_by=(_CRASHES.c.at.desc(), _CRASHES.c.id.desc())).label("latest"))
        .join(_BOTS, _BOTS.c.id == _CRASHES.c.bot_id).where(*filters)
        .subquery()
    )
    rows = session.connection().execute(
        sa.select(ranked.c.name, ranked.c.variant, ranked.c.crashes, ranked.c.reason, ranked.c.at)
        .where(ranked.c.latest == 1).order_by(ranked.c.name)).all()
    return [(variant if per_variant else None, CrashSummary(name, int(count), reason, as_utc(at)))
            for name, variant, count, reason, at in rows]


def _variant_of(settings_json: str) -> str | None:
    """The variant a tournament's stored settings name (``game.variant``), or None."""
    try:
        return TournamentSettings.from_dict(loads(settings_json)).named_variant
    except (ValueError, TypeError, KeyError):   # not JSON, or not settings this version can read
        return None
