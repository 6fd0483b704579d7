"""How fast the rules engine plays: full games of uniformly random legal decisions.

    >>> from arena.bench_engine import bench_engine
    >>> figures = bench_engine(games=3, seed=1)
    >>> figures["variant"], figures["players"], figures["games"]
    ('classic', 4, 3)

From the shell::

    python -c "from arena.bench_engine import bench_engine; print(bench_engine(games=2000))"

The loop is the one a referee runs, minus the bots: ask who acts, pick a random
legal action, apply it. No observations and no event dicts are built, so this
measures the engine's hot path (legality, state update, the event log).
"""

from __future__ import annotations

import random
import time

from engine import GameConfig, new_game


def bench_engine(variant: str = "classic", players: int = 4, games: int = 1000, seed: int = 0) -> dict:
    """Play ``games`` full random games in-process and return the figures.

    Game ``i`` uses ``seed + i`` as its deal seed; all decisions come from one
    ``random.Random(seed)``, so a run is reproducible. Returns ``variant``,
    ``players``, ``games``, ``decisions`` (applied actions), ``seconds`` (wall
    clock), ``games_per_s`` and ``decisions_per_s``.
    """
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for i in range(games):
        game = new_game(GameConfig(variant=variant, players=players, seed=seed + i))
        while not game.is_over:
            for seat in game.to_act():
                game.apply(seat, game.random_action(seat, rng))
        decisions += len(game.actions)
    seconds = time.perf_counter() - start
    return {
        "variant": variant,
        "players": players,
        "games": games,
        "decisions": decisions,
        "seconds": round(seconds, 3),
        "games_per_s": round(games / seconds, 1) if seconds else float("inf"),
        "decisions_per_s": round(decisions / seconds) if seconds else float("inf"),
    }


if __name__ == "__main__":
    import sys

    print(bench_engine(*(sys.argv[1:2] or ["classic"]), games=int(sys.argv[2]) if len(sys.argv) > 2 else 1000))
