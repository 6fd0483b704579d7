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


def test_a_tournaments_snapshot_is_its_board_and_its_newest_matches(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, master_seed=1)
    for index, match_id in enumerate(("m1", "m2", "m3")):
        store.save_match(classic(match_id, [("ann", 10, 1, 1), ("bob", 0, 2, 0)], tournament_id=tid, game_index=index))
    store.save_match(classic("other", [("ann", 0, 2, 1), ("bob", 9, 1, 0)]))
    snapshot = store.tournament_snapshot(tid, match_limit=2)
    board = store.board_snapshot("classic", tid)
    assert snapshot.board.tournament == board.tournament and snapshot.board.variant == "classic"
    assert snapshot.board.outcomes == board.outcomes
    assert snapshot.board.ratings.bots == board.ratings.bots == ["ann", "bob"]
    assert snapshot.matches == store.list_matches(tournament_id=tid, limit=2)
    assert [m.match_id for m in snapshot.matches] == ["m3", "m2"]
    # Settings that name no variant: the engine's default variant's board.
    sparse = store.create_tournament({"games": 4}, master_seed=2)
    assert store.tournament_snapshot(sparse, match_limit=10).board.variant == "classic"
    with pytest.raises(NotStored, match="no tournament 't-nosuch'"):
        store.tournament_snapshot("t-nosuch", match_limit=1)


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
