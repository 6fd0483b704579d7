"""A stored tournament's settings, read back typed (TournamentInfo.typed_settings) beside
their JSON as stored: a tournament this arena organised, and the stub a server keeps for a
tournament organised elsewhere."""

from __future__ import annotations

from factories.records import played

from arena.settings import BotEntry, SprtSettings, TournamentSettings
from arena.store import Store
from engine import GameConfig


def test_a_tournament_reads_back_as_it_was_stored(store: Store) -> None:
    settings = TournamentSettings(game=GameConfig(variant="classic", players=3), games=6, seed=4, format="sprt",
                                  bots=[BotEntry(n, [f"./{n}"]) for n in ("new", "old", "x", "y")],
                                  sprt=SprtSettings("new", "old", 0.0, 20.0))
    tid = store.create_tournament(settings.to_dict(), master_seed=4)
    info = store.get_tournament(tid)
    assert info.settings == settings.to_dict() and info.typed_settings == settings
    assert [t.typed_settings for t in store.list_tournaments()] == [settings]


def test_the_stub_of_a_tournament_organised_elsewhere_reads_typed(store: Store) -> None:
    record = played("m1", "extreme", ["a", "b", "c"], seed=1)
    record.tournament_id, record.game_index = "t-else", 0
    assert store.save_match(record)
    stub = store.get_tournament("t-else").typed_settings
    assert stub.organised_elsewhere and stub.named_variant == "extreme" and stub.bots == [] and stub.sprt is None
    # Its game options are its first match's (the stub's game names only the variant).
    board = store.board_snapshot(None, "t-else")
    options = board.game_options["t-else"]
    assert options is not None and options["variant"] == "extreme" and options["players"] == 3
    assert board.variant == "extreme" and board.tournaments == ["t-else"]
