"""What the public calls list: the matches (running, then finished) and the leaderboard."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from arena.referee.match import Referee
from arena.wire import calls
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import variant as variant_of

if TYPE_CHECKING:
    from arena.results.leaderboard import LeaderboardRow
    from arena.store import Store

MAX_LIST_MATCHES = 500


async def list_matches(running: Iterable[Referee], recent: Iterable[Referee], store: Store | None,
                       variant: str, limit: int) -> list[pb.MatchSummary]:
    """Running matches first, then finished ones (from the store, or else from memory:
    ``recent``, oldest first); ``variant`` ``""`` for both."""
    out = [calls.match_summary(match_id=referee.match_id, variant=referee.variant, status="running",
                               bots=referee.spec.bots, totals=referee.running_totals(),
                               tournament_id=referee.spec.tournament_id, config=referee.spec.config.to_dict(),
                               private=referee.spec.private)
           for referee in list(running) if not variant or referee.variant == variant]
    # Store summaries and in-memory records share the attributes used here.
    finished: list[Any]
    if store is not None:
        finished = await asyncio.to_thread(store.list_matches, variant=variant or None, limit=limit)
    else:
        finished = [r.record for r in reversed(list(recent))
                    if r.record is not None and (not variant or r.variant == variant)]
    out += [calls.match_summary(match_id=record.match_id, variant=record.variant, status=record.status,
                                bots=record.bots, totals=record.totals, places=record.places,
                                tournament_id=record.tournament_id, private=record.private)
            for record in finished]
    return out[:limit]


async def leaderboard(store: Store, variant: str, min_games: int) -> list[pb.LeaderboardRow]:
    """The leaderboard of ``variant`` (``arena.results.leaderboard``), read off the event loop."""
    from arena.results.leaderboard import leaderboard

    rows = await asyncio.to_thread(leaderboard, store, variant, min_games=min_games)
    return [leaderboard_row(row, variant) for row in rows]


def leaderboard_row(row: LeaderboardRow, variant: str) -> pb.LeaderboardRow:
    """The wire form of a row of ``arena.results.leaderboard.leaderboard`` (here, not in
    ``arena.wire``, because the wire sits below the results that define the row)."""
    return pb.LeaderboardRow(
        rank=row.rank, bot=row.bot, rating=row.rating, interval=row.interval,
        elo=row.elo if row.elo is not None else 0.0, games=row.games, average_score=row.avg_score,
        average_place=row.avg_place, exact_bid_rate=row.exact_bid_rate or 0.0, faults=row.faults,
        think_p50_ms=row.think_p50_ms or 0.0, think_p99_ms=row.think_p99_ms or 0.0, timeouts=row.timeouts,
        lower_score_is_better=not variant_of(variant).higher_is_better,
    )
