"""The data behind every page, as JSON-ready dicts: what ``/api/...`` answers and the pages draw.

Each function takes the store and raises :class:`NotFound` for an unknown variant,
tournament or match; the app turns that into a 404 (page or JSON).
"""

from __future__ import annotations

import json
from typing import Any

from arena.results import Store
from arena.results import leaderboard as lb
from arena.store import StoreError
from arena.web.viewer import match_json
from engine import VARIANTS


class NotFound(Exception):
    """An unknown variant, tournament or match: a 404, with a one-line message."""


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise NotFound(f"no variant {variant!r} (choose {', '.join(VARIANTS)})")


def check_tournament(store: Store, variant: str, tournament_id: str | None) -> None:
    """NotFound unless the tournament exists and was played in ``variant``."""
    if tournament_id is None:
        return
    try:
        info = store.get_tournament(tournament_id)
    except StoreError as error:
        if str(error).startswith("no tournament"):
            raise NotFound(str(error)) from None
        raise
    played = info.settings.get("game", {}).get("variant")
    if played not in (None, variant):
        raise NotFound(f"tournament {tournament_id} is {played}, not {variant}")


def leaderboard(store: Store, variant: str, tournament_id: str | None = None) -> dict[str, Any]:
    """The same JSON as ``arena leaderboard --variant V [--tournament ID] --format json``."""
    check_variant(variant)
    check_tournament(store, variant, tournament_id)
    board = lb.board(store, variant, tournament_id=tournament_id)
    text = lb.render_board(board, "json")
    assert isinstance(text, str)    # only the console table is rich
    return dict(json.loads(text))


def tournaments(store: Store) -> list[dict[str, Any]]:
    """Every stored tournament, newest first: id, creation date, variant, status, matches, settings."""
    found = sorted(store.list_tournaments(), key=lambda t: t.created_at, reverse=True)
    return [{"id": t.id, "created_at": t.created_at.isoformat(), "variant": t.settings.get("game", {}).get("variant"),
             "status": t.status, "matches": t.matches, "settings": t.settings} for t in found]


def match(store: Store, match_id: str) -> dict[str, Any]:
    """The stored record of ``match_id`` and the viewer's steps (see ``arena.web.viewer``)."""
    try:
        record = store.load_match(match_id)
    except StoreError as error:
        if str(error).startswith("no match"):
            raise NotFound(str(error)) from None
        raise
    return match_json(record)


def matches(store: Store, variant: str | None = None, tournament_id: str | None = None,
            limit: int = 200) -> list[dict[str, Any]]:
    """The newest stored matches (at most ``limit``), one line each, for the index and tournament pages."""
    return [{"match_id": m.match_id, "tournament_id": m.tournament_id, "game_index": m.game_index,
             "variant": m.variant, "status": m.status, "finished_at": m.finished_at.isoformat(),
             "bots": m.bots, "totals": m.totals, "places": m.places}
            for m in store.list_matches(variant=variant, tournament_id=tournament_id, limit=limit)]
