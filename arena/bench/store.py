"""The store benchmark: how fast matches are recorded, and how fast the leaderboard appears.

Targets: at least 500 matches/s recorded through ``save_match`` (each match its own
transaction, full-size logs), and the leaderboard over 100,000 stored matches in under
2 seconds. Run it with ``python -m arena.bench.store`` (or the CLI the lead wires)::

    >>> figures = bench_store(matches=20, leaderboard_matches=200)
    >>> figures["matches"], figures["leaderboard_matches"], figures["matches_per_s"] > 0
    (20, 200, True)

The synthetic matches are 4-player classic games of 15 rounds: 60 bids and 480 card
plays (540 actions, the real size and shape), with a latency for each decision, a full
per-round result and a fault now and then. They are not legal games: the store never
replays them, and making them legal would cost more than storing them.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from arena.records import FaultRecord, MatchRecord
from arena.results.leaderboard import leaderboard
from arena.store import Store, encode_log

_CARDS = [f"{suit}{rank}" for suit in "bgry" for rank in range(1, 14)] + [f"W{i}" for i in range(1, 5)] + [
    f"J{i}" for i in range(1, 5)
]


def synthetic_match(
    rng: random.Random,
    match_id: str,
    bots: list[str],
    rounds: int = 15,
    strength: dict[str, float] | None = None,
    tournament_id: str | None = None,
    game_index: int | None = None,
) -> MatchRecord:
    """A plausibly shaped classic match record (see the module docstring).

    ``strength`` biases the places so that the ratings have something to find.

    >>> record = synthetic_match(random.Random(1), "m1", ["a", "b", "c", "d"])
    >>> len(record.actions), len(record.latencies_ms), sorted(record.places)
    (540, 540, [1, 2, 3, 4])
    """
    players = len(bots)
    actions: list[list[Any]] = []
    rounds_result = []
    totals = [0] * players
    for round_number in range(1, rounds + 1):
        dealer = (round_number - 1) % players
        bids = [rng.randint(0, min(round_number, 3)) for _ in range(players)]
        for k in range(players):
            seat = (dealer + 1 + k) % players
            actions.append([seat, bids[seat]])
        cards = rng.sample(_CARDS, round_number * players)
        for trick in range(round_number):
            for k in range(players):
                actions.append([(dealer + 1 + k) % players, cards[trick * players + k]])
        tricks = [0] * players
        for _ in range(round_number):
            tricks[rng.randrange(players)] += 1
        line = []
        for seat in range(players):
            score = 20 + 10 * bids[seat] if bids[seat] == tricks[seat] else -10 * abs(bids[seat] - tricks[seat])
            totals[seat] += score
            line.append({"score": score, "bid": bids[seat], "tricks": tricks[seat]})
        rounds_result.append(line)
    if strength:
        # Places from noisy strengths; the totals are only decoration here.
        performance = [strength.get(b, 0.0) + rng.gauss(0.0, 1.0) for b in bots]
        order = sorted(range(players), key=lambda s: -performance[s])
    else:
        order = sorted(range(players), key=lambda s: -totals[s])
    places = [0] * players
    for place, seat in enumerate(order, start=1):
        places[seat] = place
    latencies = [rng.lognormvariate(-0.5, 0.6) for _ in actions]
    faults = []
    if rng.random() < 0.05:
        seat = rng.randrange(players)
        faults.append(FaultRecord(seat, bots[seat], "timeout", "no answer within 1.0 s", rng.randrange(1, 600)))
        latencies[rng.randrange(len(latencies))] = None
    start = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(10**7))
    config = {"variant": "classic", "players": players, "seed": rng.getrandbits(62), "rounds": rounds,
              "length": "standard", "bidding": "open", "plus_minus_one": False, "destroyer_penalty": 4}
    return MatchRecord(
        match_id=match_id, variant="classic", config=config, seed=config["seed"], bots=list(bots),
        bot_versions=["1.0"] * players, totals=totals, places=places, forfeited=[False] * players,
        result={"variant": "classic", "totals": totals, "places": places, "higher_is_better": True,
                "rounds": rounds_result},
        actions=actions, latencies_ms=latencies, faults=faults, tournament_id=tournament_id,
        game_index=game_index, started_at=start, finished_at=start + timedelta(seconds=3),
    )


def _table(rng: random.Random, pool: list[str], players: int) -> list[str]:
    return rng.sample(pool, players)


def bench_store(
    matches: int = 2000,
    leaderboard_matches: int = 100_000,
    path: str | None = None,
    bots: int = 12,
    seed: int = 1,
) -> dict[str, Any]:
    """Measure recording and leaderboard speed; return the figures as a dict.

    1. ``matches`` full-size records are saved one by one with ``save_match`` (one
       transaction each) into a fresh SQLite file: ``matches_per_s``, ``record_seconds``.
    2. A second fresh file is filled with ``leaderboard_matches`` matches through the
       bulk path (``save_matches`` in batches; its logs are 1-round ones, as the
       leaderboard never reads logs) and ``leaderboard(store, "classic")`` is timed,
       bootstrap included: ``leaderboard_seconds``.

    ``path`` is a directory for the two database files (default: a temporary one, removed
    afterwards). ``bots`` sit at random 4-player tables.
    """
    rng = random.Random(seed)
    pool = [f"bot{i:02d}" for i in range(bots)]
    strength = {name: rng.gauss(0.0, 0.7) for name in pool}
    with tempfile.TemporaryDirectory() as scratch:
        directory = path or scratch
        os.makedirs(directory, exist_ok=True)
        record_path = os.path.join(directory, "bench-record.db")
        board_path = os.path.join(directory, "bench-leaderboard.db")
        for stale in (record_path, board_path):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(stale + suffix):
                    os.remove(stale + suffix)

        records = [synthetic_match(rng, f"rec-{i}", _table(rng, pool, 4), strength=strength) for i in range(matches)]
        log_bytes = sum(sum(map(len, encode_log(r.actions, r.latencies_ms))) for r in records) / max(matches, 1)
        store = Store(record_path)
        load_before = os.getloadavg()[0]
        started, cpu_started = time.perf_counter(), time.process_time()
        for record in records:
            store.save_match(record)
        record_seconds = time.perf_counter() - started
        record_cpu = time.process_time() - cpu_started
        store.close()
        record_file_mb = os.path.getsize(record_path) / 1e6

        store = Store(board_path)
        started = time.perf_counter()
        batch = 5000
        for first in range(0, leaderboard_matches, batch):
            store.save_matches([
                synthetic_match(rng, f"lb-{i}", _table(rng, pool, 4), rounds=1, strength=strength)
                for i in range(first, min(first + batch, leaderboard_matches))
            ])
        fill_seconds = time.perf_counter() - started
        started = time.perf_counter()
        rows = leaderboard(store, "classic")
        leaderboard_seconds = time.perf_counter() - started
        store.close()

    return {
        "matches": matches,
        "matches_per_s": round(matches / record_seconds, 1),
        "record_seconds": round(record_seconds, 3),
        "actions_per_match": round(sum(len(r.actions) for r in records) / max(matches, 1), 1),
        "stored_log_bytes_per_match": round(log_bytes),
        "record_cpu_ms_per_match": round(1000 * record_cpu / max(matches, 1), 3),
        "load_average_before": round(load_before, 2),
        "record_file_mb": round(record_file_mb, 1),
        "leaderboard_matches": leaderboard_matches,
        "leaderboard_fill_seconds": round(fill_seconds, 2),
        "leaderboard_seconds": round(leaderboard_seconds, 3),
        "bots": len(rows),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.bench.store [matches] [leaderboard_matches]``: print the figures."""
    args = sys.argv[1:] if argv is None else argv
    figures = bench_store(*(int(a) for a in args[:2]))
    for key, value in figures.items():
        print(f"{key:26} {value}")


if __name__ == "__main__":
    main()
