"""The store benchmark: how fast matches are recorded, and how fast the leaderboard appears.

Targets: at least 500 matches/s recorded through ``save_match`` (each match its own
transaction, full-size logs), and the leaderboard over 100,000 stored matches in under
2 seconds. Run it with ``arena bench store`` or ``python -m arena.bench.store``::

    >>> figures = bench_store(matches=20, leaderboard_matches=200)
    >>> figures["matches"], figures["leaderboard_matches"], figures["matches_per_s"] > 0
    (20, 200, True)
    >>> figures["leaderboard_duplicate_seconds"] > 0, figures["worker_sqlite_games"]
    (True, 24)

The matches are real engine games of uniformly random legal decisions (``engine.new_game``
with a seeded RNG): 4-player classic games of 15 rounds, 60 bids and 480 card plays
(about 540 actions), with a latency for each decision and a timeout now and then. The
leaderboard's matches are 1-round games (a leaderboard never reads logs) whose shared
places are broken by the bots' strengths (see :func:`played_match`). Playing the games
is not part of any timed figure. The leaderboard is timed twice: over matches outside
any tournament (read as counted outcomes), and over as many matches of one duplicate
tournament (read one by one with their deal, the bootstrap's unit: see
``arena.store.queries.dealt_matches``).

The workers' path (``arena worker``: see ``arena.store.leases``) is timed too, as the
database time it adds per game: one tournament's full-size games saved one by one as the
local runner saves them (``save_ms_per_game``), and the same games of a second
tournament played as workers do: claim a deal, renew the lease before each game, save
it, release the deal (``worker_ms_per_game``; the lease calls alone:
``lease_ms_per_game``). Target: under 5 ms per game for claiming and saving, on SQLite
and on PostgreSQL (``worker_db``: a ``postgresql://`` URL of a scratch database).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from arena.records import FaultRecord, LoggedAction, MatchRecord
from arena.results.leaderboard import leaderboard
from arena.store import Store, encode_log
from arena.tournament.schedule import make_schedule, round_games
from engine import GameConfig, new_game

BANK_MS = 10000.0       # the referee's default time bank (arena.referee.limits), in ms


def played_match(
    rng: random.Random,
    match_id: str,
    bots: list[str],
    rounds: int = 15,
    strength: dict[str, float] | None = None,
    tournament_id: str | None = None,
    game_index: int | None = None,
    strict_places: bool = False,
) -> MatchRecord:
    """A classic game of random legal decisions, recorded as the referee records one.

    ``strength`` seats the bots after the game is played: the stronger a bot (plus
    noise), the better the place of its seat, so that the ratings have something to
    find while the record stays the engine's own game (it replays and verifies).

    ``strict_places`` breaks shared places in favour of the seat listed first (with
    ``strength``: the stronger bot). A 1-round game always has a shared place, a
    full-length one seldom does, and a leaderboard's time depends on how many different
    outcomes its matches have: the leaderboard's 1-round matches use it to end as
    full-length ones do. (The record then no longer verifies: its places differ.)

    >>> record = played_match(random.Random(1), "m1", ["a", "b", "c", "d"], strength={"a": 9.0})
    >>> len(record.actions) >= 540, len(record.latencies_ms) == len(record.actions)
    (True, True)
    >>> record.places[record.bots.index("a")]
    1
    """
    players = len(bots)
    config = GameConfig(variant="classic", players=players, seed=rng.getrandbits(62), rounds=rounds)
    game = new_game(config)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    result = game.result()
    better_seats_first = sorted(range(players), key=lambda seat: result.places[seat])
    if strength:
        stronger_first = sorted(bots, key=lambda bot: -(strength.get(bot, 0.0) + rng.gauss(0.0, 1.0)))
        bots = list(bots)
        for bot, seat in zip(stronger_first, better_seats_first):
            bots[seat] = bot
    places = list(result.places)
    if strict_places:
        for place, seat in enumerate(better_seats_first, start=1):
            places[seat] = place
    actions = [LoggedAction(seat, action) for seat, action in game.actions]
    latencies: list[float | None] = [rng.lognormvariate(-0.5, 0.6) for _ in actions]
    faults = []
    bank_used = [0.0] * players              # the answers are all within the 1 s limit
    if rng.random() < 0.05:
        # A timeout: the referee played the fallback for one of the seat's decisions.
        seat = rng.randrange(players)
        faults.append(FaultRecord(seat, bots[seat], "timeout", "no answer within 1.0 s", rng.randrange(1, 600)))
        latencies[rng.choice([i for i, (acting, _) in enumerate(actions) if acting == seat])] = None
        bank_used[seat] = BANK_MS            # a timeout empties the bank
    start = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(10**7))
    return MatchRecord(
        match_id=match_id, variant="classic", config=config, seed=config.seed, bots=list(bots),
        bot_versions=["1.0"] * players, totals=list(result.totals), places=places,
        forfeited=[False] * players, result=result, actions=actions, latencies_ms=latencies,
        faults=faults, tournament_id=tournament_id, game_index=game_index,
        started_at=start, finished_at=start + timedelta(seconds=3), time_bank_ms=BANK_MS, bank_used_ms=bank_used,
    )


def _table(rng: random.Random, pool: list[str], players: int) -> list[str]:
    return rng.sample(pool, players)


def fill_leaderboard(store: Store, matches: int, rng: random.Random, pool: list[str],
                     strength: dict[str, float], batch: int = 5000) -> float:
    """Store ``matches`` leaderboard matches (``lb-0``, ``lb-1``, ...: 1-round games with strict
    places, at random 4-player tables of ``pool``) through ``save_matches`` in batches of
    ``batch``; return the seconds spent saving (playing the games is not timed)."""
    fill_seconds = 0.0
    for first in range(0, matches, batch):
        played = [played_match(rng, f"lb-{i}", _table(rng, pool, 4), rounds=1, strength=strength,
                               strict_places=True)
                  for i in range(first, min(first + batch, matches))]
        started = time.perf_counter()
        store.save_matches(played)
        fill_seconds += time.perf_counter() - started
    return fill_seconds


def fill_duplicate_tournament(store: Store, matches: int, rng: random.Random, pool: list[str],
                              strength: dict[str, float], batch: int = 5000) -> float:
    """Store ``matches`` matches of one duplicate tournament (``dup-0``, ...): tables of 4 of
    ``pool``, each deal played in the 4 rotations of its table (the same engine seed), as
    :func:`fill_leaderboard`'s 1-round games with strict places. Return the seconds spent
    saving. The leaderboard then reads every match with its deal (the bootstrap's unit)."""
    tournament_id = store.create_tournament({"deals": "duplicate"}, master_seed=rng.getrandbits(62))
    fill_seconds = 0.0
    for first in range(0, matches, batch):
        played = []
        for index in range(first, min(first + batch, matches)):
            if index % 4 == 0:
                table, deal_seed = _table(rng, pool, 4), rng.getrandbits(62)
            seated = table[index % 4:] + table[:index % 4]
            record = played_match(rng, f"dup-{index}", seated, rounds=1, strength=strength, strict_places=True)
            record.seed, record.tournament_id, record.game_index = deal_seed, tournament_id, index
            played.append(record)
        started = time.perf_counter()
        store.save_matches(played)
        fill_seconds += time.perf_counter() - started
    return fill_seconds


WORKER_TARGET_MS = 5.0          # database time a worker's claim and save may add per game


def bench_workers(location: str, games: int, rng: random.Random, pool: list[str],
                  strength: dict[str, float]) -> dict[str, Any]:
    """Time the workers' path against plain saving on the database at ``location`` (a
    SQLite path or a URL; two new tournaments are added to it): ``games`` full-size games
    (rounded up to whole rotations of ``pool``'s 4-player tables) saved one by one, then
    the same games of a second tournament claimed, renewed, saved and released as a
    worker does. Returns the figures per game, in ms."""
    count = round_games(games, len(pool), 4)
    schedule = make_schedule(pool, players=4, games=count, master_seed=rng.getrandbits(62))
    played = {g.index: played_match(rng, f"g{g.index}", list(g.bots), strength=strength) for g in schedule}
    with Store(location) as store:
        alone = store.create_tournament({"bench": "save alone"}, master_seed=1)
        records = [replace(played[g.index], match_id=f"{alone}-{g.index}", tournament_id=alone, game_index=g.index)
                   for g in schedule]
        started = time.perf_counter()
        for record in records:
            store.save_match(record)
        save_seconds = time.perf_counter() - started

        worked = store.create_tournament({"bench": "workers"}, master_seed=2)
        store.put_schedule(worked, schedule)
        lease_seconds, saved = 0.0, 0
        started = time.perf_counter()
        while True:
            lease_started = time.perf_counter()
            unit = store.claim_unit("bench-worker", 60.0, tournament_id=worked)
            lease_seconds += time.perf_counter() - lease_started
            if unit is None:
                break
            for index in unit.game_indexes:
                lease_started = time.perf_counter()
                renewed = store.renew_lease(unit, "bench-worker", 60.0)
                lease_seconds += time.perf_counter() - lease_started
                assert renewed is not None
                saved += store.save_match(replace(played[index], match_id=f"{worked}-{index}",
                                                  tournament_id=worked, game_index=index))
            lease_started = time.perf_counter()
            store.release_unit(unit, "bench-worker")
            lease_seconds += time.perf_counter() - lease_started
        worker_seconds = time.perf_counter() - started
        assert saved == count, (saved, count)
        backend = "sqlite" if store.is_sqlite else store.engine.dialect.name
    return {
        "database": backend,
        "games": count,
        "save_ms_per_game": round(1000 * save_seconds / count, 3),
        "worker_ms_per_game": round(1000 * worker_seconds / count, 3),
        "lease_ms_per_game": round(1000 * lease_seconds / count, 3),
        "added_ms_per_game": round(1000 * (worker_seconds - save_seconds) / count, 3),
        "target_ms_per_game": WORKER_TARGET_MS,
    }


MATCHES = 2000                  # recorded one by one
WORKER_GAMES = 480              # played through the workers' path
LEADERBOARD_MATCHES = 100_000   # stored in bulk for the leaderboard


def bench_store(
    matches: int = MATCHES,
    leaderboard_matches: int = LEADERBOARD_MATCHES,
    path: str | None = None,
    bots: int = 12,
    seed: int = 1,
    worker_db: str | None = None,
) -> dict[str, Any]:
    """Measure recording and leaderboard speed; return the figures as a dict.

    1. ``matches`` full-size records are saved one by one with ``save_match`` (one
       transaction each) into a fresh SQLite file: ``matches_per_s``, ``record_seconds``.
    2. A second fresh file is filled with ``leaderboard_matches`` matches through the
       bulk path (``save_matches`` in batches of 5,000; 1-round games, as the leaderboard
       never reads logs): ``leaderboard_fill_seconds``; then ``leaderboard(store,
       "classic")`` is timed, bootstrap included: ``leaderboard_seconds``.
    3. A third fresh file gets as many matches of one duplicate tournament
       (:func:`fill_duplicate_tournament`), and its leaderboard is timed the same way:
       ``leaderboard_duplicate_seconds``.

    4. The workers' path (:func:`bench_workers`, ``min(matches, 480)`` games) on a fourth
       fresh SQLite file: ``worker_sqlite_*``, and on ``worker_db`` if given (a
       ``postgresql://`` URL of a scratch database: two tournaments are added to it):
       ``worker_postgresql_*``.

    ``path`` is a directory for the database files (default: a temporary one, removed
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
        duplicate_path = os.path.join(directory, "bench-duplicate.db")
        worker_path = os.path.join(directory, "bench-workers.db")
        for stale in (record_path, board_path, duplicate_path, worker_path):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(stale + suffix):
                    os.remove(stale + suffix)

        records = [played_match(rng, f"rec-{i}", _table(rng, pool, 4), strength=strength) for i in range(matches)]
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
        fill_seconds = fill_leaderboard(store, leaderboard_matches, rng, pool, strength)
        started = time.perf_counter()
        rows = leaderboard(store, "classic")
        leaderboard_seconds = time.perf_counter() - started
        store.close()

        store = Store(duplicate_path)
        fill_duplicate_tournament(store, leaderboard_matches, rng, pool, strength)
        started = time.perf_counter()
        leaderboard(store, "classic")
        duplicate_seconds = time.perf_counter() - started
        store.close()

        worker_games = min(matches, WORKER_GAMES)
        workers = {f"worker_sqlite_{k}": v for k, v in
                   bench_workers(worker_path, worker_games, rng, pool, strength).items() if k != "database"}
        if worker_db is not None:
            workers.update({f"worker_{figures['database']}_{k}": v for figures in
                            [bench_workers(worker_db, worker_games, rng, pool, strength)]
                            for k, v in figures.items() if k != "database"})

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
        "leaderboard_duplicate_seconds": round(duplicate_seconds, 3),
        "bots": len(rows),
        **workers,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.bench.store [matches] [leaderboard_matches] [worker_db]``: print the figures."""
    args = sys.argv[1:] if argv is None else argv
    sizes = [int(a) for a in args[:2]] + [MATCHES, LEADERBOARD_MATCHES][len(args[:2]):]
    figures = bench_store(matches=sizes[0], leaderboard_matches=sizes[1], worker_db=args[2] if len(args) > 2 else None)
    for key, value in figures.items():
        print(f"{key:34} {value}")


if __name__ == "__main__":
    main()
