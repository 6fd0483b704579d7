"""Many workers, one tournament: stored schedules, leases on deals, one match per slot, and
online Elo in schedule order (arena.store.leases, arena.store.save), on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arena.records import MatchRecord
from arena.results.elo_history import elo_history
from arena.store import SCHEMA_VERSION, Store, StoreError, WorkUnit
from arena.tournament.schedule import ScheduledGame, make_schedule

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LONG = 600.0        # a lease that does not run out during a test


def url_of(store: Store) -> str:
    return store.engine.url.render_as_string(hide_password=False)


def schedule(bots: Sequence[str] = ("a", "b", "c", "d"), games: int = 16, seed: int = 1) -> list[ScheduledGame]:
    """4 duplicate deals of 4 games each by default."""
    return make_schedule(list(bots), players=4, games=games, master_seed=seed)


def result_of(tournament_id: str, game: ScheduledGame, match_id: str | None = None) -> MatchRecord:
    """A small record of a scheduled game whose places follow from its index (so that
    every order of saving stores the same results)."""
    rng = random.Random(game.index)
    places = [1, 2, 3, 4]
    rng.shuffle(places)
    totals = [100 - 10 * p for p in places]
    return MatchRecord(
        match_id=match_id or f"{tournament_id}-{game.index:05d}", variant="classic",
        config={"variant": "classic", "players": 4, "seed": game.seed}, seed=game.seed, bots=list(game.bots),
        bot_versions=["1"] * 4, totals=totals, places=places, forfeited=[False] * 4,
        result={"variant": "classic", "totals": totals, "places": places, "higher_is_better": True, "rounds": []},
        actions=[[0, 1]], latencies_ms=[0.5], tournament_id=tournament_id, game_index=game.index,
        started_at=T0, finished_at=T0 + timedelta(seconds=game.index),
    )


# --------------------------------------------------------------------------------------
# The stored schedule
# --------------------------------------------------------------------------------------


def test_put_schedule_is_idempotent_and_reads_back(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    games = schedule()
    store.put_schedule(tid, games[:6])
    store.put_schedule(tid, games)            # the rest is added, the first six stay
    store.put_schedule(tid, games)
    rows = store.scheduled_games(tid)
    assert [ScheduledGame(r["game_index"], r["deal"], r["rotation"], r["bots"], r["seed"], r["bot_seeds"],
                          r["table"]) for r in rows] == games
    assert {r["tournament_id"] for r in rows} == {tid}
    assert store.unit_progress(tid) == {"deals": 4, "deals_done": 0, "deals_leased": 0, "deals_pending": 4,
                                        "games_scheduled": 16, "games_stored": 0, "workers": []}
    with pytest.raises(StoreError, match="already scheduled differently"):
        store.put_schedule(tid, [replace(games[3], seed=games[3].seed + 1)])
    with pytest.raises(StoreError, match="no tournament 't-nope'"):
        store.put_schedule("t-nope", games)
    assert store.scheduled_games("t-nope") == []
    store.discard_tournament(tid)            # never got going: its schedule goes with it
    assert store.scheduled_games(tid) == [] and store.list_tournaments() == []


# --------------------------------------------------------------------------------------
# Claims and leases
# --------------------------------------------------------------------------------------


def test_claims_take_the_lowest_free_deal_with_games_left(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    games = schedule()
    store.put_schedule(tid, games)
    store.save_match(result_of(tid, games[0]))          # deal 0, game 0 already stored
    first = store.claim_unit("w1", LONG)
    assert first is not None and (first.tournament_id, first.deal, first.game_indexes) == (tid, 0, (1, 2, 3))
    assert first.lease_expires_at > datetime.now(UTC) + timedelta(seconds=LONG - 60)
    second = store.claim_unit("w2", LONG, tournament_id=tid)
    assert second is not None and (second.deal, second.game_indexes) == (1, (4, 5, 6, 7))
    progress = store.unit_progress(tid)
    assert (progress["deals_leased"], progress["deals_pending"], progress["workers"]) == (2, 2, ["w1", "w2"])

    # Deal 2 stored whole by someone else: the next claim passes it by for good.
    store.save_matches([result_of(tid, g) for g in games if g.deal == 2])
    third = store.claim_unit("w3", LONG)
    assert third is not None and third.deal == 3
    assert store.claim_unit("w4", LONG) is None
    assert store.unit_progress(tid)["deals_done"] == 1

    # Released: claimable again at once; the release of a unit no longer held does nothing.
    store.release_unit(second, "w2")
    store.release_unit(second, "w2")
    again = store.claim_unit("w4", LONG)
    assert again is not None and again.deal == 1 and again.lease_id == second.lease_id + 1
    store.release_unit(second, "w2")             # w4 holds it now: nothing happens
    assert store.claim_unit("w5", LONG) is None


def test_only_running_tournaments_are_claimed_without_an_id(store: Store) -> None:
    stopped = store.create_tournament({}, master_seed=1, status="interrupted")
    store.put_schedule(stopped, schedule())
    assert store.claim_unit("w1", LONG) is None
    unit = store.claim_unit("w1", LONG, tournament_id=stopped)     # named: a worker may still play it
    assert unit is not None and unit.deal == 0
    running = store.create_tournament({}, master_seed=2)
    store.put_schedule(running, schedule(seed=2))
    unit = store.claim_unit("w2", LONG)
    assert unit is not None and (unit.tournament_id, unit.deal) == (running, 0)


def test_an_expired_lease_goes_back_and_its_renewal_fails(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    store.put_schedule(tid, schedule(games=4))
    unit = store.claim_unit("w1", 0.2)
    assert unit is not None and store.claim_unit("w2", LONG) is None
    renewed = store.renew_lease(unit, "w1", 0.2)           # still held: renewed
    assert renewed is not None and renewed.lease_expires_at >= unit.lease_expires_at
    assert renewed.game_indexes == unit.game_indexes
    assert store.renew_lease(unit, "w2", LONG) is None    # not w2's
    time.sleep(0.4)
    assert store.unit_progress(tid)["deals_pending"] == 1
    late = store.renew_lease(unit, "w1", 0.2)              # ran out, but nobody took it: renewed
    assert late is not None
    time.sleep(0.4)
    taken = store.claim_unit("w2", LONG)
    assert taken is not None and taken.deal == 0
    assert store.renew_lease(unit, "w1", LONG) is None      # lost
    # The same worker claiming again (another of its slots) still cannot renew the old claim.
    store.release_unit(taken, "w2")
    mine = store.claim_unit("w1", LONG)
    assert mine is not None and store.renew_lease(unit, "w1", LONG) is None
    assert store.renew_lease(mine, "w1", LONG) is not None
    with pytest.raises(StoreError, match="more than 0 seconds"):
        store.claim_unit("w1", 0)


def test_racing_workers_never_share_a_deal(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    store.put_schedule(tid, schedule(games=48))      # 12 deals
    url = url_of(store)
    claimed: list[WorkUnit] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def worker(name: str) -> None:
        try:
            with Store(url) as own:                 # each worker its own connections
                start.wait()
                while (unit := own.claim_unit(name, LONG)) is not None:
                    claimed.append(unit)
        except BaseException as error:             # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(u.deal for u in claimed) == list(range(12))


def _worker_process(url: str, name: str, tournament_id: str, start: Any, results: Any) -> None:
    """A worker as ``arena worker`` runs one: claim, renew before each game, save, release;
    every worker also saves game 0 first (all at once), as if they had all played it."""
    with Store(url) as store:
        games = {row["game_index"]: ScheduledGame(row["game_index"], row["deal"], row["rotation"], row["bots"],
                                                  row["seed"], row["bot_seeds"], row["table"])
                 for row in store.scheduled_games(tournament_id)}
        start.wait()
        saved = [0] if store.save_match(result_of(tournament_id, games[0], match_id=f"{name}-first")) else []
        deals = []
        while (unit := store.claim_unit(name, LONG, tournament_id)) is not None:
            deals.append(unit.deal)
            for index in unit.game_indexes:
                assert store.renew_lease(unit, name, LONG) is not None
                if store.save_match(result_of(tournament_id, games[index], match_id=f"{name}-{index}")):
                    saved.append(index)
            store.release_unit(unit, name)
        results.put((name, deals, saved))


def test_worker_processes_play_every_game_once(store: Store) -> None:
    import multiprocessing

    tid = store.create_tournament({}, master_seed=1)
    games = schedule(bots=("a", "b", "c", "d", "e"), games=40)        # 10 deals
    store.put_schedule(tid, games)
    context = multiprocessing.get_context("spawn")     # fresh processes, as separate machines would be
    start, results = context.Barrier(3), context.Queue()
    workers = [context.Process(target=_worker_process, args=(url_of(store), f"w{n}", tid, start, results))
               for n in range(3)]
    for worker in workers:
        worker.start()
    reports = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert sorted(deal for _, deals, _ in reports for deal in deals) == list(range(10))
    assert sorted(index for _, _, saved in reports for index in saved) == list(range(40))
    assert store.unit_progress(tid) == {"deals": 10, "deals_done": 10, "deals_leased": 0, "deals_pending": 0,
                                        "games_scheduled": 40, "games_stored": 40, "workers": []}
    assert store.get_tournament(tid).matches == 40
    # Whatever order the workers finished in, Elo counted the games in schedule order.
    assert {games for _, games in store.current_elo("classic").values()} == {32}
    assert [c.match_id.split("-")[-1] for c in store.rating_history("a", "classic")] == [
        str(g.index) if g.index else "first" for g in games if "a" in g.bots]


# --------------------------------------------------------------------------------------
# One match per slot
# --------------------------------------------------------------------------------------


def test_a_slot_is_saved_exactly_once_under_a_race(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    games = schedule(games=8)
    url = url_of(store)
    outcomes: dict[tuple[int, int], bool] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def worker(number: int) -> None:
        try:
            with Store(url) as own:
                own.save_match(result_of(tid, games[7], match_id=f"warm-{number}"))   # connections made
                start.wait()
                for game in games[:4]:
                    outcomes[(number, game.index)] = own.save_match(
                        result_of(tid, game, match_id=f"w{number}-{game.index}"))
        except BaseException as error:             # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for index in range(4):
        assert sum(outcomes[(n, index)] for n in range(4)) == 1
    assert store.finished_game_indexes(tid) == {0, 1, 2, 3, 7}
    assert len(store.list_matches(tournament_id=tid)) == 5
    assert {n for _, n in store.current_elo("classic").values()} == {4}     # game 7 waits for 4 to 6


# --------------------------------------------------------------------------------------
# Online Elo in schedule order
# --------------------------------------------------------------------------------------


def _interleaved(games: list[ScheduledGame]) -> list[ScheduledGame]:
    """Two workers, each playing whole deals, their saves taking turns: A's deals 0, 2,
    ... and B's deals 1, 3, ..., B finishing its games first."""
    deals = sorted({g.deal for g in games})
    mine = [[g for g in games if g.deal in deals[k::2]] for k in (1, 0)]
    out: list[ScheduledGame] = []
    for pair in zip(*mine):
        out += pair
    return out


ORDERS: dict[str, Callable[[list[ScheduledGame]], list[ScheduledGame]]] = {
    "in order": lambda games: games,
    "reversed": lambda games: games[::-1],
    "interleaved": _interleaved,
    "shuffled": lambda games: random.Random(5).sample(games, len(games)),
}


def _elo_run(store: Store, order: str, save: Callable[[Store, list[MatchRecord]], None]) -> dict[str, Any]:
    """Play one tournament's games into ``store`` in ``order`` with bots of their own
    (suffixed by the order), and read back Elo, history and the plot with the suffix dropped."""
    suffix = "-" + order.replace(" ", "")
    bots = [name + suffix for name in ("ann", "bob", "cat", "dan", "eve")]
    games = make_schedule(bots, players=4, games=40, master_seed=3)
    tid = store.create_tournament({}, master_seed=3)
    save(store, [result_of(tid, g) for g in ORDERS[order](games)])

    def plain(name: str) -> str:
        return name.removesuffix(suffix)

    return {
        "elo": {plain(b): v for b, v in store.current_elo("classic").items() if b.endswith(suffix)},
        "history": {plain(b): [(c.match_id.split("-", 2)[-1], c.elo_before, c.elo_after, c.games)
                               for c in store.rating_history(b, "classic")] for b in bots},
        "plot": [(plain(line.bot), line.points) for line in elo_history(store, "classic", tid)],
    }


@pytest.mark.parametrize("batch", [False, True], ids=["one by one", "in one batch"])
def test_elo_is_the_same_whatever_order_the_games_are_saved_in(store: Store, batch: bool) -> None:
    def save(target: Store, records: list[MatchRecord]) -> None:
        if batch:
            target.save_matches(records)
        else:
            for record in records:
                assert target.save_match(record)

    runs = {order: _elo_run(store, order, save) for order in ORDERS}
    first = runs["in order"]
    assert len(first["elo"]) == 5 and all(games == 32 for _, games in first["elo"].values())
    for order, run in runs.items():
        assert run["elo"] == first["elo"], order          # the same sums in the same order: exactly
        assert run["history"] == first["history"], order
        assert run["plot"] == first["plot"], order


def test_two_workers_saving_through_their_own_stores_give_the_same_elo(store: Store) -> None:
    def save(target: Store, records: list[MatchRecord]) -> None:
        with Store(url_of(target)) as other:
            for number, record in enumerate(records):
                assert (target if number % 2 else other).save_match(record)

    assert _elo_run(store, "interleaved", save)["elo"] == _elo_run(
        store, "in order", lambda s, records: s.save_matches(records))["elo"]


def test_a_match_past_a_gap_waits_for_it(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    games = schedule(games=8)
    store.save_match(result_of(tid, games[1]))
    store.save_match(result_of(tid, games[2]))
    assert store.current_elo("classic") == {}
    assert store.board_snapshot("classic", tid).outcomes         # on the board meanwhile
    store.save_match(result_of(tid, games[0]))
    assert {n for _, n in store.current_elo("classic").values()} == {3}
    assert [c.match_id for c in store.rating_history("a", "classic")] == [f"{tid}-{i:05d}" for i in range(3)]

    # A match outside the tournament counts at once, whatever waits.
    store.save_match(result_of(tid, games[5]))
    store.save_match(replace(result_of(tid, games[4]), match_id="free", tournament_id=None, game_index=None))
    assert {n for _, n in store.current_elo("classic").values()} == {4}

    # The tournament stops running: what waited counts, in slot order; later saves at once.
    store.set_tournament_status(tid, "interrupted")
    history = [c.match_id for c in store.rating_history("a", "classic")]
    assert history[3:] == ["free", f"{tid}-00005"]
    store.save_match(result_of(tid, games[3]))
    store.set_tournament_status(tid, "running")
    store.save_match(result_of(tid, games[7]))               # running again: waits for game 6
    assert [c.match_id for c in store.rating_history("a", "classic")][5:] == [f"{tid}-00003"]
    store.save_match(result_of(tid, games[6]))
    assert [c.match_id for c in store.rating_history("a", "classic")][5:] == [f"{tid}-0000{i}" for i in (3, 6, 7)]
    assert {n for _, n in store.current_elo("classic").values()} == {8}


def test_a_tournament_organised_elsewhere_counts_in_arrival_order(store: Store) -> None:
    games = schedule(games=4)
    for index in (2, 0):
        assert store.save_match(result_of("t-else", games[index]))
    assert store.get_tournament("t-else").status == "remote"
    assert [c.match_id for c in store.rating_history("a", "classic")] == ["t-else-00002", "t-else-00000"]


# --------------------------------------------------------------------------------------
# Upgrading a version-3 database
# --------------------------------------------------------------------------------------


def _as_schema_3(store: Store) -> str:
    url = url_of(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE bot_crashes")                   # schema 5
        conn.exec_driver_sql("ALTER TABLE matches DROP COLUMN private")  # schema 5
        conn.exec_driver_sql("DROP TABLE work_units")
        conn.exec_driver_sql("DROP TABLE scheduled_games")
        conn.exec_driver_sql("ALTER TABLE tournaments DROP COLUMN elo_next")
        conn.exec_driver_sql("UPDATE arena_meta SET value = '3' WHERE key = 'schema_version'")
    store.close()
    return url


def test_a_version_3_database_is_upgraded(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    empty = store.create_tournament({}, master_seed=2)
    games = schedule(games=8)
    for index in (0, 1, 3):
        store.save_match(result_of(tid, games[index]))
    store.set_tournament_status(tid, "interrupted")          # as schema 3 would have: all rated
    store.set_tournament_status(tid, "running")
    elo = store.current_elo("classic")
    assert {n for _, n in elo.values()} == {3}

    with Store(_as_schema_3(store)) as upgraded:
        with upgraded.engine.connect() as conn:
            assert conn.exec_driver_sql("select value from arena_meta where key = 'schema_version'").scalar() == str(
                SCHEMA_VERSION)
            cursors = dict(conn.exec_driver_sql("select id, elo_next from tournaments").all())
        assert cursors == {tid: 4, empty: 0}
        assert upgraded.current_elo("classic") == elo
        upgraded.save_match(result_of(tid, games[2]))        # the old gap: counts at once
        upgraded.save_match(result_of(tid, games[5]))        # past a new gap: waits
        assert {n for _, n in upgraded.current_elo("classic").values()} == {4}
        upgraded.put_schedule(tid, games)
        unit = upgraded.claim_unit("w1", LONG)
        assert unit is not None and (unit.deal, unit.game_indexes) == (1, (4, 6, 7))
        upgraded.save_match(result_of(tid, games[4]))
        assert {n for _, n in upgraded.current_elo("classic").values()} == {6}
    with Store(url_of(upgraded)) as again:                   # no second upgrade
        assert again.unit_progress(tid)["games_stored"] == 6
