"""How fast the rules engine plays: full games of uniformly random legal decisions.

    >>> from arena.bench.engine import bench_engine
    >>> figures = bench_engine(games=3, seed=1)
    >>> figures["variant"], figures["players"], figures["games"]
    ('classic', 4, 3)

From the shell::

    python -c "from arena.bench.engine import bench_engine; print(bench_engine(games=2000))"
    python -m arena.bench.engine classic 2000     # the same, plus the bare-bones reference

The loop is the one a referee runs, minus the bots: ask who acts, pick a random
legal action, apply it. No observations and no event dicts are built, so this
measures the engine's hot path (legality, state update, the event log).

The machine is shared, so a figure alone says little. :func:`bench_bare` plays
random classic games in one plain function on the engine's own rule functions
(:func:`engine.classic.legal_plays`, ``trick_winner``, ``score``, bit-mask hands) with
no interface, no log and no checks: run both at the same moment and compare.
"""

from __future__ import annotations

import random
import time

from engine import GameConfig, new_game
from engine.classic import lead_suit, legal_plays, score, trick_winner
from engine.classic_cards import JESTER, NO_SUIT, NUM_CARDS, SUIT_MASKS, SUIT_OF, WIZARD
from engine.masks import mask_of, pick


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
        decisions += random_game(variant, players, seed + i, rng)
    seconds = time.perf_counter() - start
    return _figures(variant, players, games, decisions, seconds)


def random_game(variant: str, players: int, deal: int, rng: random.Random) -> int:
    """One game of the deal ``deal`` played to its end on the engine alone, every decision
    a random legal action from ``rng``; returns the decisions taken. The engine-alone
    yardstick of :func:`bench_engine` and of ``arena bench env``."""
    game = new_game(GameConfig(variant=variant, players=players, seed=deal))
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    return len(game.actions)


# The variant the bare playout plays: it is written on classic's rule functions.
BARE_VARIANT = "classic"


def bench_bare(players: int = 4, games: int = 1000, seed: int = 0) -> dict:
    """The reference: random classic games (:data:`BARE_VARIANT`) played by one bare function, for comparison.

    The engine's own rule functions (following suit, the lead, the trick winner,
    scoring) on int cards and bit-mask hands, but nothing else: no decision
    interface, no legality checks on input, no event log, no action list. Returns
    the same fields as :func:`bench_engine` with ``variant`` ``"classic-bare"``.
    """
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for i in range(games):
        decisions += _bare_game(players, random.Random(seed + i), rng)
    seconds = time.perf_counter() - start
    return _figures("classic-bare", players, games, decisions, seconds)


def bench_against_bare(players: int = 4, games: int = 1000, seed: int = 0, chunks: int = 10) -> dict:
    """The engine and the bare playout on the same classic games, interleaved.

    The games are split into ``chunks`` slices and each slice is played by the
    engine, then by the bare function, so both see the same machine load (on a shared
    machine a run seconds later can be 40% faster or slower). Returns the engine's
    figures plus ``bare_games_per_s``, ``bare_decisions_per_s`` and ``ratio_engine_to_bare``.

    >>> figures = bench_against_bare(games=4, chunks=2)
    >>> figures["games"], 0 < figures["ratio_engine_to_bare"]
    (4, True)
    """
    engine_seconds = bare_seconds = 0.0
    engine_decisions = bare_decisions = 0
    size = -(-games // chunks)
    for first in range(0, games, size):
        count = min(size, games - first)
        part = bench_engine(BARE_VARIANT, players, count, seed + first)
        engine_seconds += part["seconds"]
        engine_decisions += part["decisions"]
        part = bench_bare(players, count, seed + first)
        bare_seconds += part["seconds"]
        bare_decisions += part["decisions"]
    figures = _figures(BARE_VARIANT, players, games, engine_decisions, engine_seconds)
    bare = _figures("classic-bare", players, games, bare_decisions, bare_seconds)
    figures["bare_games_per_s"] = bare["games_per_s"]
    figures["bare_decisions_per_s"] = bare["decisions_per_s"]
    figures["ratio_engine_to_bare"] = round(bare_seconds / engine_seconds, 3)
    return figures


def first_option_games_per_s(configs: list[GameConfig]) -> float:
    """Games per second of a bare loop through the engine: every game of ``configs`` played
    to its end, each seat taking its first legal option (a prediction: the default). The
    yardstick of ``arena bench referee``'s tournament: the same deals without the arena."""
    started = time.perf_counter()
    for config in configs:
        game = new_game(config)
        while not game.is_over:
            for seat in game.to_act():
                decision = game.decision(seat)
                game.apply(seat, decision.options[0] if decision.options else decision.default)
    return len(configs) / (time.perf_counter() - started)


def _figures(variant: str, players: int, games: int, decisions: int, seconds: float) -> dict:
    return {
        "variant": variant,
        "players": players,
        "games": games,
        "decisions": decisions,
        "seconds": round(seconds, 3),
        "games_per_s": round(games / seconds, 1) if seconds else float("inf"),
        "decisions_per_s": round(decisions / seconds) if seconds else float("inf"),
    }


def _bare_game(players: int, deal_rng: random.Random, rng: random.Random) -> int:
    """One random game on the engine's own rule functions (int cards, bit-mask hands),
    with nothing around them; returns the number of decisions taken."""
    rnd = rng.random
    totals = [0] * players
    decisions = 0
    for r in range(1, NUM_CARDS // players + 1):
        dealer = (r - 1) % players
        deck = list(range(NUM_CARDS))
        deal_rng.shuffle(deck)
        hands = [mask_of(deck[i * r:(i + 1) * r]) for i in range(players)]
        suit = SUIT_OF[deck[players * r]] if players * r < NUM_CARDS else JESTER  # nothing left: as a Jester
        trump = suit if suit < 4 else NO_SUIT
        if suit == WIZARD:
            trump = int(rnd() * 4)
            decisions += 1
        bids = [int(rnd() * (r + 1)) for _ in range(players)]
        decisions += players
        won = [0] * players
        leader = (dealer + 1) % players
        for _ in range(r):
            lead_cards = 0
            cards: list[int] = []
            for k in range(players):
                seat = (leader + k) % players
                card = pick(legal_plays(hands[seat], lead_cards), rng)
                hands[seat] ^= 1 << card
                cards.append(card)
                if not lead_cards:
                    lead = lead_suit(cards)
                    if lead != NO_SUIT:
                        lead_cards = SUIT_MASKS[lead]
            leader = (leader + trick_winner(cards, trump)) % players
            won[leader] += 1
            decisions += players
        for s in range(players):
            totals[s] += score(bids[s], won[s])
    return decisions


if __name__ == "__main__":
    import sys

    variant = sys.argv[1] if len(sys.argv) > 1 else "classic"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    print(bench_engine(variant, games=n))
    if variant == BARE_VARIANT:
        print(bench_bare(games=n))
