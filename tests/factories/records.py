"""Match records: ``played``, a real engine game of random decisions as the referee
records it; ``classic_record`` and ``extreme_record``, hand-made records for the boards."""

from __future__ import annotations

import random
from typing import Any

from arena.records import FaultRecord, MatchRecord, final_places
from engine import GameConfig, new_game


def played(match_id: str, variant: str, bots: list[str], seed: int, forfeited: list[bool] | None = None,
           rounds: int | None = 3, play_seed: int | None = None, **options: Any) -> MatchRecord:
    """A real engine game of random decisions (``rounds`` rounds, None: the variant's full
    length; ``options`` as GameConfig's), wrapped as the referee would. The cards come
    from ``seed``, the decisions from ``play_seed`` (by default the same seed)."""
    config = GameConfig(variant=variant, players=len(bots), seed=seed, rounds=rounds, **options)
    game = new_game(config)
    rng = random.Random(seed if play_seed is None else play_seed)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    result = game.result()
    forfeited = forfeited or [False] * len(bots)
    return MatchRecord(
        match_id=match_id, variant=variant, config=config.to_dict(), seed=seed, bots=bots,
        bot_versions=["1"] * len(bots), totals=list(result.totals),
        places=final_places(list(result.totals), forfeited, result.higher_is_better), forfeited=forfeited,
        result=result.to_json(), actions=[list(a) for a in game.actions],
        latencies_ms=[round(rng.uniform(0.1, 3.0), 3) for _ in game.actions],
    )


def classic_record(match_id: str, seats: list[tuple[str, int, int, int]], faults: list[FaultRecord] | None = None,
                   tournament_id: str | None = None, game_index: int | None = None) -> MatchRecord:
    """A classic record from ``(bot, total, place, exact bids out of 2 rounds)`` per seat."""
    rounds = [[{"score": 0, "bid": 1, "tricks": 1 if exact > r else 0} for _, _, _, exact in seats] for r in range(2)]
    return MatchRecord(
        match_id=match_id, variant="classic", config={"variant": "classic", "players": len(seats)}, seed=0,
        bots=[s[0] for s in seats], bot_versions=["1"] * len(seats), totals=[s[1] for s in seats],
        places=[s[2] for s in seats], forfeited=[False] * len(seats),
        result={"variant": "classic", "totals": [s[1] for s in seats], "places": [s[2] for s in seats],
                "higher_is_better": True, "rounds": rounds}, actions=[], latencies_ms=[], faults=faults or [],
        tournament_id=tournament_id, game_index=game_index,
    )


def extreme_record(match_id: str, seats: list[tuple[str, int, int]]) -> MatchRecord:
    """An Extreme record from ``(bot, total, place)`` per seat."""
    return MatchRecord(
        match_id=match_id, variant="extreme", config={"variant": "extreme"}, seed=0,
        bots=[s[0] for s in seats], bot_versions=["1"] * len(seats), totals=[s[1] for s in seats],
        places=[s[2] for s in seats], forfeited=[False] * len(seats),
        result={"variant": "extreme", "totals": [s[1] for s in seats], "places": [s[2] for s in seats],
                "higher_is_better": False, "rounds": []},
        actions=[], latencies_ms=[],
    )
