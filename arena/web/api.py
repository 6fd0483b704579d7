"""The data behind every page, as JSON-ready dicts: what ``/api/...`` answers and the pages draw.

Each function takes the store and raises :class:`NotFound` for an unknown variant,
tournament or match; the app turns that into a 404 (page or JSON).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from arena.results import crosstable as ct
from arena.results import elo_history
from arena.results import leaderboard as lb
from arena.results.render import render_board
from arena.store import BoardSnapshot, MatchSummary, NotStored, Store, StoreError, TournamentInfo
from arena.tournament.lock import resume_command, shown_status
from arena.web import disclosure
from arena.web.bots import Boards, NoSuchBot, bot_json
from arena.web.viewer import match_json
from engine import VARIANTS


class NotFound(Exception):
    """An unknown variant, tournament or match: a 404, with a one-line message."""


class Withheld(Exception):
    """A private match whose cards may not be shown yet (``arena.web.disclosure``): a 403,
    with a one-line message."""



@contextlib.contextmanager
def not_found_as_404() -> Iterator[None]:
    """The store's "no such tournament/match" (``NotStored``) as NotFound (a 404); any
    other store error (a locked database...) passes on, to become a 503."""
    try:
        yield
    except NotStored as error:
        raise NotFound(f"{error.what} in this database") from None

def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise NotFound(f"no variant {variant!r} (choose {', '.join(VARIANTS)})")


def board_snapshot(store: Store, variant: str, tournament_id: str | None = None,
                   elo_limit: int | None = None) -> BoardSnapshot:
    """The store's snapshot of a board (``Store.board_snapshot``; its Elo plot's too with
    ``elo_limit``): NotFound for an unknown variant or tournament, or a tournament played
    in another variant."""
    check_variant(variant)
    with not_found_as_404():
        snapshot = store.board_snapshot(variant, tournament_id, elo_limit)
    played = snapshot.tournament.typed_settings.named_variant if snapshot.tournament is not None else None
    if played not in (None, variant):
        raise NotFound(f"tournament {tournament_id} is {played}, not {variant}")
    return snapshot


def leaderboard(store: Store, variant: str, tournament_id: str | None = None) -> dict[str, Any]:
    """The same JSON as ``arena leaderboard --variant V [--tournament ID] --format json``."""
    return board_json(board_snapshot(store, variant, tournament_id))


def board_json(snapshot: BoardSnapshot) -> dict[str, Any]:
    """A board's JSON (:func:`leaderboard`) from its snapshot."""
    text = render_board(lb.board(snapshot), "json")
    assert isinstance(text, str)    # only the console table is rich
    return dict(json.loads(text))


def elo(store: Store, variant: str, tournament_id: str | None = None) -> dict[str, Any]:
    """Each bot's online Elo over its games (``arena.results.elo_history``, at most
    ``LIMIT`` points a bot), in the board's order."""
    return elo_json(board_snapshot(store, variant, tournament_id, elo_history.LIMIT))


def elo_json(snapshot: BoardSnapshot, order: list[str] | None = None) -> dict[str, Any]:
    """:func:`elo` from a board's snapshot read with its Elo, in ``order`` (default: the board's)."""
    if order is None:
        # The order is the fit's ratings alone: no bootstrap needed for it (half the time).
        order = [row.bot for row in lb.rows_of(snapshot, samples=0)]
    tournament_id = snapshot.tournament.id if snapshot.tournament is not None else None
    return elo_history.to_json(snapshot.variant, tournament_id, elo_history.lines_of(snapshot, order=order))


def crosstable(store: Store, variant: str, tournament_id: str | None = None) -> dict[str, Any]:
    """The same JSON as ``arena crosstable --variant V [--tournament ID] --format json``."""
    return ct.to_json(ct.crosstable_of(board_snapshot(store, variant, tournament_id)))


def master_seed(info: TournamentInfo) -> int | None:
    """The master seed of ``info`` as shown: once it has finished (``arena.web.disclosure``), else None."""
    return info.master_seed if disclosure.seeds_shown(info) else None


def tournaments(store: Store, db: str | None = None) -> list[dict[str, Any]]:
    """Every stored tournament, newest first: id, creation date, variant, status, matches,
    master seed (None until it has finished) and the public settings (``arena.web.disclosure``).

    With ``db`` (the database as ``arena web --db`` was given it) the status is the one
    ``arena tournaments`` shows (``shown_status``: a dead run is ``interrupted``); without, as stored.
    """
    found = sorted(store.list_tournaments(), key=lambda t: t.created_at, reverse=True)
    return [{"id": t.id, "created_at": t.created_at.isoformat(), "variant": t.typed_settings.named_variant,
             "status": t.status if db is None else shown_status(t, db), "matches": t.matches,
             "master_seed": master_seed(t), "settings": disclosure.public_settings(t)} for t in found]


def match(store: Store, match_id: str, tournaments: dict[str, TournamentInfo | None] | None = None) -> dict[str, Any]:
    """The stored record of ``match_id`` and the viewer's steps (see ``arena.web.viewer``);
    the record's deal seed only where ``arena.web.disclosure`` allows it, and Withheld
    for a private match whose deal is not played out. ``tournaments`` keeps the
    tournaments already read, for a caller that asks for many matches."""
    with not_found_as_404():
        record = store.load_match(match_id)
    info = None
    if record.tournament_id is not None:
        known = {} if tournaments is None else tournaments
        if record.tournament_id not in known:
            try:
                known[record.tournament_id] = store.get_tournament(record.tournament_id)
            except StoreError:      # not in this database: its seeds stay hidden
                known[record.tournament_id] = None
        info = known[record.tournament_id]
    if record.private:
        progress = (store.deal_progress(record.tournament_id, record.game_index)
                    if record.tournament_id is not None and record.game_index is not None else None)
        if not disclosure.cards_shown(True, info, progress):
            raise Withheld(disclosure.withheld_message(match_id, progress))
    data = match_json(record)
    data["record"] = disclosure.public_record(data["record"], disclosure.match_seed_shown(record.tournament_id, info))
    return data


def matches(store: Store, variant: str | None = None, tournament_id: str | None = None,
            limit: int = 200) -> list[dict[str, Any]]:
    """The newest stored matches (at most ``limit``), one line each, for the index and tournament pages."""
    return [match_line(m) for m in store.list_matches(variant=variant, tournament_id=tournament_id, limit=limit)]


def match_line(m: MatchSummary) -> dict[str, Any]:
    return {"match_id": m.match_id, "tournament_id": m.tournament_id, "game_index": m.game_index,
            "variant": m.variant, "status": m.status, "finished_at": m.finished_at.isoformat(),
            "bots": m.bots, "totals": m.totals, "places": m.places}


def tournament(store: Store, db: str, tournament_id: str, with_matches: bool = True) -> dict[str, Any]:
    """One tournament: its public settings and its master seed once it has finished
    (``arena.web.disclosure``), dates, progress, status as ``arena tournaments`` shows
    it (``shown_status``: stored as running with nobody holding its run lock is
    ``interrupted``), the resume command when it is unfinished, its board rows and its
    matches. ``db`` is the database as ``arena web --db`` was given it (the run lock
    lives beside it; the resume command names it by ``disclosure.public_database``).
    ``with_matches=False`` (what the page polls) leaves out the matches and
    ``first_game_at``: a few rows to read however long the tournament."""
    with not_found_as_404():     # one read: the board (of the settings' variant) and the matches
        snapshot = store.tournament_snapshot(tournament_id, match_limit=1_000_000 if with_matches else 1)
    info = snapshot.board.tournament
    assert info is not None
    status = shown_status(info, db)
    settings = info.typed_settings
    variant = snapshot.board.variant      # the engine's default when not stored
    found = [match_line(m) for m in snapshot.matches]
    finished = sorted(m["finished_at"] for m in found)
    board = lb.rows_of(snapshot.board, samples=100)
    return {
        "id": info.id, "created_at": info.created_at.isoformat(), "variant": variant, "status": status,
        "stored_status": info.status, "games_stored": info.matches,
        "games_scheduled": None if settings.organised_elsewhere else settings.games,
        "first_game_at": finished[0] if finished and with_matches else None,
        "last_game_at": finished[-1] if finished else None,    # without matches: the last one stored
        "resume_command": resume_command(info.id, disclosure.public_database(db)) if status == "interrupted" else None,
        "master_seed": master_seed(info), "settings": disclosure.public_settings(info),
        "bots": settings.bot_names(),
        "code": disclosure.code_stamps(info),
        "board": [{"rank": r.rank, "bot": r.bot, "rating": r.rating, "interval": r.interval, "games": r.games,
                   "avg_score": r.avg_score, "avg_place": r.avg_place, "faults": r.faults, "bound": r.bound,
                   "group": r.group} for r in board],
        **({"matches": found} if with_matches else {}),
    }


def bot(store: Store, name: str, boards: Boards | None = None) -> dict[str, Any]:
    """A bot's page data (see ``arena.web.bots.bot_json``; ``boards`` keeps the boards' rows)."""
    try:
        return bot_json(store, name, boards)
    except NoSuchBot as error:
        raise NotFound(str(error)) from None
