"""RemoteArena, the organiser's side of ``RunMatch``: a real arena on 127.0.0.1 with random
bot processes, with and without a database; the record comes back typed, and whether the
arena stored it decides what the organiser counts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bots.harness import ADMIN_TOKEN

from arena.records import MatchRecord, MatchSpec
from arena.store import Store
from arena.tournament.runner import RemoteArena
from engine import GameConfig, replay_record

BOTS = ["alpha", "beta", "gamma"]


def spec(match_id: str, tournament_id: str | None = None, game_index: int | None = None) -> MatchSpec:
    return MatchSpec(config=GameConfig(variant="classic", players=3, seed=11, rounds=2), bots=list(BOTS),
                     match_id=match_id, tournament_id=tournament_id, game_index=game_index)


def played(address: str, *specs: MatchSpec) -> list[tuple[MatchRecord, bool]]:
    """Play ``specs`` one after another through one RemoteArena: each record and what the
    arena said of it."""

    async def play() -> list[tuple[MatchRecord, bool]]:
        async with RemoteArena(address, ADMIN_TOKEN) as remote:
            answers = []
            for one in specs:
                record = await remote.run_match(one)
                answers.append((record, remote.stored_there(record.match_id)))
            return answers

    return asyncio.run(play())


def test_the_arena_says_which_matches_it_stored(arena_server: Any, tmp_path: Path) -> None:
    with Store(str(tmp_path / "arena.db")) as store:
        tournament_id = store.create_tournament({}, 1)
        arena = arena_server(bots=BOTS, store=store, move_time=0.5, time_bank=1.0)
        (first, first_stored), (again, again_stored) = played(
            arena.address, spec("slot-0", tournament_id, 0), spec("slot-0-again", tournament_id, 0))
        assert first_stored
        assert store.load_match("slot-0") == first       # the record sent back is the one stored
        assert not again_stored                          # its slot held a match already
        assert replay_record(again.config, again.actions).is_over


def test_an_arena_without_a_database_stores_nothing(arena_server: Any) -> None:
    arena = arena_server(bots=BOTS, move_time=0.5, time_bank=1.0)
    ((record, stored),) = played(arena.address, spec("no-db"))
    assert not stored
    assert record.status == "completed" and record.result is not None
    assert record.result.totals == tuple(record.totals)
