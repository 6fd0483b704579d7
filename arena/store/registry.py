"""Bots and tournaments: who may connect, and what was organised.

A bot is a name and the sha256 of its token (never the token itself; bots the arena
launches itself have none). A tournament is a short id such as ``t-k3x9qa``, its
settings and master seed, and a status. Each function works in the session the
``Store`` opens for it (a write session holds the write lock, see ``Store._write``);
``where`` names the database in messages.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from sqlalchemy import delete, func
from sqlmodel import Session, col, select

from arena.settings import TournamentSettings
from arena.store.codec import as_utc
from arena.store.errors import NotStored, StoreError
from arena.store.schema import (
    BotCrashRow,
    BotRow,
    MatchRow,
    ScheduledGameRow,
    TournamentRow,
    WorkUnitRow,
    check_seed,
    chunks,
)
from arena.wire.json_codec import dumps, loads

_TOKEN_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"   # tournament ids: no 0/o, 1/l/i


@dataclass
class BotInfo:
    name: str
    has_token: bool
    created_at: datetime


@dataclass
class TournamentInfo:
    """A stored tournament. ``settings`` is its settings' JSON as stored, key for key (the
    web shows them so, arena.web.disclosure); :attr:`typed_settings` reads them."""

    id: str
    created_at: datetime
    settings: dict[str, Any]
    master_seed: int
    status: str
    matches: int = 0           # matches stored so far

    @cached_property
    def typed_settings(self) -> TournamentSettings:
        """The settings as the typed value, with the defaults of what older versions (or a
        server's stub for a tournament organised elsewhere) did not store."""
        return TournamentSettings.from_dict(self.settings)


def hash_token(token: str) -> str:
    """The stored form of a bot token.

    >>> hash_token("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode()).hexdigest()


# -- bots -------------------------------------------------------------------------------


def register_bot(session: Session, name: str, rotate: bool) -> str:
    """See ``Store.register_bot``."""
    if not name or not name.strip():
        raise StoreError("a bot needs a name")
    token = secrets.token_hex(24)
    bot = session.exec(select(BotRow).where(BotRow.name == name)).first()
    if bot is None:
        session.add(BotRow(name=name, token_hash=hash_token(token), created_at=datetime.now(UTC)))
    elif bot.token_hash is not None and not rotate:
        raise StoreError(f"bot {name!r} is already registered "
                         f"(arena bot register {name} --rotate issues a new token)")
    else:
        bot.token_hash = hash_token(token)
    return token


def bot_for_token(session: Session, token: str) -> str | None:
    return session.exec(select(BotRow.name).where(BotRow.token_hash == hash_token(token))).first()


def bots_for_tokens(session: Session, tokens: Iterable[str]) -> dict[str, str]:
    by_hash = {hash_token(token): token for token in tokens}
    if not by_hash:
        return {}
    rows = session.exec(select(BotRow.token_hash, BotRow.name).where(col(BotRow.token_hash).in_(list(by_hash)))).all()
    return {by_hash[token_hash]: name for token_hash, name in rows if token_hash is not None}


def remove_bot(session: Session, name: str) -> None:
    bot = session.exec(select(BotRow).where(BotRow.name == name)).first()
    if bot is None or bot.token_hash is None:
        raise StoreError(f"no bot {name!r} with a token is registered")
    bot.token_hash = None


def list_bots(session: Session) -> list[BotInfo]:
    rows = session.exec(select(BotRow).order_by(col(BotRow.name))).all()
    return [BotInfo(r.name, r.token_hash is not None, as_utc(r.created_at)) for r in rows]


# -- tournaments ------------------------------------------------------------------------


def create_tournament(session: Session, settings: dict[str, Any], master_seed: int, status: str) -> str:
    check_seed(master_seed, "master seed")
    while True:
        tournament_id = "t-" + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(6))
        if session.get(TournamentRow, tournament_id) is None:
            break
    session.add(TournamentRow(
        id=tournament_id, created_at=datetime.now(UTC), settings_json=dumps(settings),
        master_seed=master_seed, status=status,
    ))
    return tournament_id


def get_tournament(session: Session, tournament_id: str, where: str) -> TournamentInfo:
    return _tournament_info(_tournament(session, tournament_id, where), _match_count_of(session, tournament_id))


def list_tournaments(session: Session) -> list[TournamentInfo]:
    counts = dict(session.exec(select(MatchRow.tournament_id, func.count()).group_by(MatchRow.tournament_id)).all())
    rows = session.exec(select(TournamentRow).order_by(col(TournamentRow.created_at))).all()
    return [_tournament_info(r, counts.get(r.id, 0)) for r in rows]


def set_tournament_status(session: Session, tournament_id: str, status: str, where: str) -> None:
    _tournament(session, tournament_id, where).status = status


def update_tournament_settings(session: Session, tournament_id: str, settings: dict[str, Any], where: str) -> None:
    row = _tournament(session, tournament_id, where)
    if _match_count_of(session, tournament_id):
        raise StoreError(f"tournament {tournament_id} has stored matches; its settings are fixed")
    row.settings_json = dumps(settings)


def discard_tournament(session: Session, tournament_id: str) -> None:
    row = session.get(TournamentRow, tournament_id)
    if row is None or _match_count_of(session, tournament_id):
        raise StoreError(f"tournament {tournament_id} has stored matches; it is kept")
    # A schedule put for workers, and the crashes of the bots that could not start.
    for table in (WorkUnitRow.__table__, ScheduledGameRow.__table__, BotCrashRow.__table__):
        session.connection().execute(delete(table).where(table.c.tournament_id == tournament_id))
    session.delete(row)


def finished_game_indexes(session: Session, tournament_id: str) -> set[int]:
    rows = session.exec(select(MatchRow.game_index).where(MatchRow.tournament_id == tournament_id)).all()
    return {i for i in rows if i is not None}


def stored_settings(session: Session, tournament_ids: Sequence[str]) -> dict[str, TournamentSettings]:
    """The typed settings of each of these tournaments that is stored (read a chunk at a time)."""
    found: dict[str, TournamentSettings] = {}
    for chunk in chunks(sorted(set(tournament_ids))):
        for tournament_id, settings_json in session.exec(
                select(TournamentRow.id, TournamentRow.settings_json).where(col(TournamentRow.id).in_(chunk))):
            found[tournament_id] = TournamentSettings.from_dict(loads(settings_json))
    return found


def game_options(session: Session, settings_by_id: Mapping[str, TournamentSettings],
                 tournament_ids: Sequence[str]) -> dict[str, dict[str, Any] | None]:
    """The engine game options each tournament was played with, as stored: its settings'
    ``game`` (a GameConfig as a dict, possibly only the non-default options), or, when
    its settings (``settings_by_id``) do not have them (a tournament organised
    elsewhere), the config of its first stored match. None when neither is known."""
    options: dict[str, dict[str, Any] | None] = {}
    for tournament_id in sorted(set(tournament_ids)):
        stored = settings_by_id.get(tournament_id)
        if stored is not None and stored.game and not stored.organised_elsewhere:
            options[tournament_id] = stored.game.options()
            continue
        config = session.exec(select(MatchRow.config_json).where(MatchRow.tournament_id == tournament_id)
                              .order_by(col(MatchRow.id)).limit(1)).first()
        options[tournament_id] = loads(config) if config is not None else None
    return options


def _tournament(session: Session, tournament_id: str, where: str) -> TournamentRow:
    row = session.get(TournamentRow, tournament_id)
    if row is None:
        raise NotStored(f"no tournament {tournament_id!r}", where)
    return row


def _match_count_of(session: Session, tournament_id: str) -> int:
    return session.exec(select(func.count()).select_from(MatchRow).where(MatchRow.tournament_id == tournament_id)).one()


def _tournament_info(row: TournamentRow, matches: int) -> TournamentInfo:
    return TournamentInfo(row.id, as_utc(row.created_at), loads(row.settings_json), row.master_seed, row.status,
                          matches)
