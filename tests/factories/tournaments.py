"""A tournament written straight into a store: ``running_tournament``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine import GameConfig
from factories.records import played

if TYPE_CHECKING:
    from arena.store import Store


def running_tournament(store: Store, stored: int, deals: str = "duplicate") -> tuple[str, list[str], list[int]]:
    """A running classic tournament of ann, bob and cy: two deals in three rotations each
    (one deal a game with ``deals="independent"``), its first ``stored`` games played and
    stored as the runner stores them; its match ids and deal seeds by game."""
    from arena.tournament.lineup import BotEntry
    from arena.tournament.runner import match_spec
    from arena.tournament.settings import TournamentSettings, schedule_of

    settings = TournamentSettings(game=GameConfig(variant="classic", players=3), games=6, seed=11, deals=deals,
                                  bots=[BotEntry(name, ["bot"]) for name in ("ann", "bob", "cy")])
    tournament = store.create_tournament(settings.to_dict(), 11, status="running")
    schedule = schedule_of(settings)
    store.put_schedule(tournament, schedule)
    ids = []
    for game in schedule:
        spec = match_spec(settings, tournament, game)
        ids.append(spec.match_id)
        if game.index < stored:
            record = played(spec.match_id, "classic", list(game.bots), game.seed)
            record.tournament_id, record.game_index, record.private = tournament, game.index, spec.private
            store.save_match(record)
    return tournament, ids, [game.seed for game in schedule]
