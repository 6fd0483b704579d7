"""What a view reads in one transaction: a board's snapshot (Store.board_snapshot) and a
bot's (Store.bot_snapshot), each the same as the store's single reads of its parts."""

from __future__ import annotations

import pytest
from factories.records import classic_record as classic
from factories.records import extreme_record as extreme

from arena.store import NotStored, Store
from engine import GameConfig


def test_a_boards_snapshot_holds_its_tournament_its_options_and_asked_for_elo(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, master_seed=1)
    store.save_match(classic("m1", [("ann", 10, 1, 1), ("bob", 0, 2, 0)], tournament_id=tid, game_index=0))
    store.save_match(classic("m2", [("ann", 0, 2, 1), ("bob", 9, 1, 0)]))
    whole = store.board_snapshot("classic")
    assert whole.tournament is None and whole.tournaments == [tid] and whole.ratings.bots == ["ann", "bob"]
    assert whole.game_options == {tid: GameConfig(variant="classic", players=3).options()}   # the defaults filled
    assert sorted(whole.outcomes) == [([("ann", 1), ("bob", 2)], 1), ([("ann", 2), ("bob", 1)], 1)]
    assert whole.elo_limit is None and whole.elo_tracks == [] and whole.elo_steps == []   # not asked for
    assert [track.bot for track in store.board_snapshot("classic", elo_limit=10).elo_tracks] == ["ann", "bob"]
    # A tournament's board: its own games, its variant found when none is given, its Elo changes.
    own = store.board_snapshot(None, tid, elo_limit=10)
    assert own.variant == "classic" and own.tournament is not None and own.tournament.id == tid
    assert own.outcomes == [([("ann", 1), ("bob", 2)], 1)] and own.ratings.games_by_tournament == {tid: 1}
    assert [step.bot for step in own.elo_steps] == ["ann", "bob"] and own.elo_tracks == []


def test_a_boards_snapshot_of_an_unknown_tournament_is_not_stored(store: Store) -> None:
    with pytest.raises(NotStored, match="no tournament 't-nosuch'"):
        store.board_snapshot("classic", "t-nosuch")


def test_a_bots_snapshot_is_what_its_page_reads(store: Store) -> None:
    store.save_match(classic("m1", [("ann", 10, 1, 1), ("bob", 0, 2, 0)]))
    store.save_match(classic("m2", [("ann", 0, 2, 1), ("bob", 9, 1, 0)]))
    store.save_match(extreme("x1", [("ann", 3, 1), ("cy", 9, 2)]))
    bot = store.bot_snapshot("ann", recent=2, classic_limit=1)
    assert len(bot.games.seats) == 3 and bot.crashes == {}
    assert bot.completed == {"classic": 2, "extreme": 1}
    assert {variant: agg.games if agg else 0 for variant, agg in bot.aggregates.items()} == {"classic": 2,
                                                                                              "extreme": 1}
    assert [m.match_id for m in bot.recent] == ["x1", "m2"] and bot.recent == store.list_matches(bot="ann", limit=2)
    assert bot.classic_limit == 1 and bot.newest_classic == store.newest_classic("ann", 1)
    nobody = store.bot_snapshot("nobody", recent=2, classic_limit=1)
    assert nobody.games.seats == [] and nobody.aggregates == {} and nobody.recent == []
