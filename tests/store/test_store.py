"""The store on real SQLite files (arena.store), and browsing stored matches (arena.results.browse,
arena.results.listings)."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy
from factories.databases import as_schema_1
from factories.records import played

import arena.store
from arena.records import FaultRecord, MatchRecord
from arena.results.browse import export_match, show_match, verify_match
from arena.results.listings import match_rows, match_table
from arena.stats.elo import EloChange, RatedMatch, elo_deltas
from arena.stats.think_times import BUCKETS, HIGHEST_MS, RESOLUTION, LatencyHistogram, bucket_of
from arena.store import SCHEMA_VERSION, Store, StoreError, hash_token

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def record(
    match_id: str,
    bots: list[str],
    places: list[int],
    variant: str = "classic",
    tournament_id: str | None = None,
    game_index: int | None = None,
    faults: list[FaultRecord] | None = None,
    status: str = "completed",
) -> MatchRecord:
    """A small hand-made record (one round, a two-action log): enough for the store."""
    players = len(bots)
    totals = [100 - 10 * p for p in places]
    rounds = [[{"score": t, "bid": 1, "tricks": 1 if seat % 2 == 0 else 0} for seat, t in enumerate(totals)]]
    return MatchRecord(
        match_id=match_id, variant=variant, config={"variant": variant, "players": players, "seed": 1},
        seed=1, bots=bots, bot_versions=[f"{b}-1.0" for b in bots], totals=totals, places=places,
        forfeited=[False] * players,
        result={"variant": variant, "totals": totals, "places": places, "higher_is_better": True, "rounds": rounds},
        actions=[[0, 1], [1, "b7"]], latencies_ms=[0.25, None], faults=faults or [],
        tournament_id=tournament_id, game_index=game_index, status=status,
        started_at=T0, finished_at=T0 + timedelta(seconds=2),
    )


# --------------------------------------------------------------------------------------
# Opening: schema, version, refusals
# --------------------------------------------------------------------------------------


def test_new_file_gets_the_schema_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    Store(str(path)).close()
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
    assert {"arena_meta", "bots", "tournaments", "matches", "match_seats", "match_logs", "faults",
            "elo_ratings", "rating_history", "outcome_counts", "bot_totals"} <= tables
    assert db.execute("select value from arena_meta where key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    assert db.execute("pragma journal_mode").fetchone() == ("wal",)
    db.close()
    Store(str(path)).close()          # reopening our own file is fine


def test_refuses_another_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    Store(str(path)).close()
    db = sqlite3.connect(path)
    db.execute("update arena_meta set value = '7' where key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=rf"arena.db has schema version 7; this arena understands {SCHEMA_VERSION}"):
        Store(str(path))


def test_refuses_a_foreign_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("create table recipes (name text)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"other.db is not an arena database \(no schema version table\)"):
        Store(str(path))
    # ...and leaves it alone: its tables, and its journal mode (not switched to WAL).
    db = sqlite3.connect(path)
    assert [r[0] for r in db.execute("select name from sqlite_master")] == ["recipes"]
    assert db.execute("pragma journal_mode").fetchone()[0] == "delete"
    db.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_a_reader_of_a_rollback_journal_database_does_not_stop_opening(tmp_path: Path) -> None:
    # The switch to WAL needs the file alone; SQLite refuses it at once while another
    # process reads a rollback-journal file. The store opens it anyway, in that journal,
    # at once (the switch waited the store's 30 s busy timeout).
    import time

    path = tmp_path / "arena.db"
    Store(str(path)).close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("pragma journal_mode=delete")
    db.execute("begin")
    db.execute("select count(*) from sqlite_master").fetchone()     # holds a read lock
    started = time.monotonic()
    store = Store(str(path))
    # Waiting would take the whole busy timeout (30 s); half of it is slack for a busy machine.
    assert time.monotonic() - started < arena.store.BUSY_TIMEOUT / 2
    assert store.list_tournaments() == []
    db.execute("commit")
    store.close()
    assert db.execute("pragma journal_mode").fetchone()[0] == "delete"
    db.close()
    Store(str(path)).close()       # the next open, the file free, switches it
    db = sqlite3.connect(path)
    assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
    db.close()


def test_a_writer_holding_the_lock_does_not_hold_up_opening(tmp_path: Path) -> None:
    # Opening a database of this schema version only reads it (WAL: readers never wait),
    # so arena web starts at once beside a long write; it waited the 30 s busy timeout.
    import time

    path = tmp_path / "arena.db"
    Store(str(path)).close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with Store(str(path)) as store:
            assert store.variants() == []
        assert time.monotonic() - started < arena.store.BUSY_TIMEOUT / 2     # not the whole busy timeout
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_an_arena_database_is_in_wal_mode(tmp_path: Path) -> None:
    Store(str(tmp_path / "arena.db")).close()
    db = sqlite3.connect(tmp_path / "arena.db")
    assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
    db.close()


def test_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match="notes.db is not a database file"):
        Store(str(path))
    assert path.read_bytes().startswith(b"these are my notes")


def test_store_error_messages_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        Store(str(tmp_path / "missing-dir" / "arena.db"))
    assert "\n" not in str(caught.value)


# --------------------------------------------------------------------------------------
# Bots and tokens
# --------------------------------------------------------------------------------------


def test_tokens_are_stored_only_as_hashes(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        token = store.register_bot("alice")
        assert store.bot_for_token(token) == "alice"
        assert store.bot_for_token(token + "x") is None
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert token.encode() not in raw
    db = sqlite3.connect(path)
    assert db.execute("select token_hash from bots where name = 'alice'").fetchone() == (hash_token(token),)
    db.close()


def test_register_twice_needs_rotate(store: Store) -> None:
    first = store.register_bot("alice")
    with pytest.raises(StoreError, match="already registered"):
        store.register_bot("alice")
    second = store.register_bot("alice", rotate=True)
    assert second != first
    assert store.bot_for_token(first) is None
    assert store.bot_for_token(second) == "alice"


def test_ensure_bot_and_list_bots(store: Store) -> None:
    store.ensure_bot("local")
    store.ensure_bot("local")
    store.register_bot("remote")
    bots = {b.name: b for b in store.list_bots()}
    assert sorted(bots) == ["local", "remote"]
    assert not bots["local"].has_token and bots["remote"].has_token
    # A launched bot may be registered later: it gets its first token.
    assert store.bot_for_token(store.register_bot("local")) == "local"


# --------------------------------------------------------------------------------------
# Tournaments and resume
# --------------------------------------------------------------------------------------


def test_tournaments(store: Store) -> None:
    tid = store.create_tournament({"variant": "classic", "games": 3, "bots": [{"name": "a"}]}, master_seed=2**40)
    assert tid.startswith("t-") and len(tid) == 8
    info = store.get_tournament(tid)
    assert info.settings == {"variant": "classic", "games": 3, "bots": [{"name": "a"}]}
    assert info.master_seed == 2**40 and info.status == "running" and info.matches == 0
    store.set_tournament_status(tid, "finished")
    assert [t.status for t in store.list_tournaments()] == ["finished"]
    with pytest.raises(StoreError, match="no tournament 't-nope'"):
        store.get_tournament("t-nope")


def test_finished_game_indexes_for_resume(store: Store) -> None:
    tid = store.create_tournament({"games": 4}, master_seed=1)
    other = store.create_tournament({"games": 4}, master_seed=2)
    assert store.finished_game_indexes(tid) == set()
    for index in (0, 2):
        store.save_match(record(f"{tid}-{index}", ["a", "b"], [1, 2], tournament_id=tid, game_index=index))
    store.save_match(record("other-1", ["a", "b"], [2, 1], tournament_id=other, game_index=1))
    assert store.finished_game_indexes(tid) == {0, 2}
    assert store.get_tournament(tid).matches == 2


def test_a_match_of_a_tournament_organised_elsewhere_gets_a_stub_tournament(store: Store) -> None:
    # `arena tournament --server` keeps the tournament in the organiser's database; the
    # server storing the match it ran has never seen that tournament.
    assert store.save_match(record("m1", ["a", "b"], [1, 2], tournament_id="t-else", game_index=0))
    stub = store.get_tournament("t-else")
    assert stub.status == "remote" and stub.matches == 1
    assert store.finished_game_indexes("t-else") == {0}


def test_one_tournament_slot_holds_one_match(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    assert store.save_match(record("first", ["a", "b"], [1, 2], tournament_id=tid, game_index=0))
    # A game two workers both played is stored once: the second record changes nothing.
    assert not store.save_match(record("second", ["a", "b"], [2, 1], tournament_id=tid, game_index=0))
    assert store.save_matches([record("third", ["a", "b"], [2, 1], tournament_id=tid, game_index=0),
                               record("fourth", ["a", "b"], [2, 1], tournament_id=tid, game_index=1),
                               record("fifth", ["a", "b"], [1, 2], tournament_id=tid, game_index=1)]) == 1
    assert [m.match_id for m in store.list_matches()] == ["fourth", "first"]
    assert store.current_elo("classic")["a"][1] == 2


# --------------------------------------------------------------------------------------
# Saving and loading matches
# --------------------------------------------------------------------------------------


def test_load_match_round_trip(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=5)
    fault = FaultRecord(seat=1, bot="bob", kind="timeout", message="no answer in 1.0 s", request_id=17,
                        at=T0 + timedelta(seconds=1))
    saved = played("rt-1", "classic", ["alice", "bob", "carol"], seed=11)
    saved.faults = [fault, FaultRecord(2, "carol", "illegal", "played b7 \u2014 not in hand", None, T0)]
    saved.latencies_ms[3] = None
    saved.tournament_id, saved.game_index = tid, 4
    saved.started_at, saved.finished_at = T0, T0 + timedelta(minutes=1, microseconds=5)
    assert store.save_match(saved) is True
    loaded = store.load_match("rt-1")
    assert loaded == saved
    assert loaded.to_json() == saved.to_json()
    with pytest.raises(StoreError, match="no match 'nope'"):
        store.load_match("nope")


def test_extreme_round_trip(store: Store) -> None:
    saved = played("ex-1", "extreme", ["a", "b", "c"], seed=3)
    store.save_match(saved)
    assert store.load_match("ex-1") == saved


def test_times_come_back_in_utc(store: Store) -> None:
    saved = record("tz", ["a", "b"], [1, 2])
    saved.started_at = datetime(2025, 3, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    store.save_match(saved)
    loaded = store.load_match("tz")
    assert loaded.started_at == saved.started_at and loaded.started_at.tzinfo == UTC


def test_save_match_is_idempotent(store: Store) -> None:
    first = record("m1", ["a", "b", "c"], [1, 2, 3])
    assert store.save_match(first) is True
    elo = store.current_elo("classic")
    assert store.save_match(first) is False
    assert store.save_matches([first, first]) == 0
    assert store.match_count() == 1
    assert store.current_elo("classic") == elo
    assert len(store.rating_history("a", "classic")) == 1
    assert sum(a.games for a in store.seat_aggregates("classic")) == 3


def test_a_failed_save_leaves_nothing(store: Store) -> None:
    broken = record("bad", ["newbot", "other"], [1, 2])
    broken.bot_versions = ["1.0", None]   # type: ignore[list-item]  # NOT NULL fails after the match row
    with pytest.raises(StoreError):
        store.save_match(broken)
    assert store.match_count() == 0
    assert store.list_bots() == []                 # the bots it created are gone too
    assert store.current_elo("classic") == {}
    assert store.board_snapshot("classic").outcomes == [] and store.seat_aggregates("classic") == []
    with store.engine.connect() as conn:
        for table in ("matches", "match_seats", "match_logs", "rating_history", "elo_ratings"):
            assert conn.exec_driver_sql(f"select count(*) from {table}").scalar() == 0, table


def test_inconsistent_records_are_refused(store: Store) -> None:
    short = record("short", ["a", "b"], [1, 2])
    short.totals = [1]
    with pytest.raises(StoreError, match="totals has 1 entries for 2 seats"):
        store.save_match(short)
    huge = record("huge", ["a", "b"], [1, 2])
    huge.seed = 2**64
    with pytest.raises(StoreError, match="does not fit in 64 bits"):
        store.save_match(huge)
    with pytest.raises(StoreError, match="master seed"):
        store.create_tournament({}, master_seed=-(2**70))


def test_list_matches_filters(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    store.save_match(record("c1", ["a", "b"], [1, 2], tournament_id=tid, game_index=0))
    store.save_match(record("c2", ["b", "c"], [1, 2]))
    store.save_match(record("e1", ["a", "c", "d"], [1, 2, 3], variant="extreme",
                            faults=[FaultRecord(0, "a", "timeout", "slow")]))
    assert [m.match_id for m in store.list_matches()] == ["e1", "c2", "c1"]
    assert [m.match_id for m in store.list_matches(variant="classic")] == ["c2", "c1"]
    assert [m.match_id for m in store.list_matches(tournament_id=tid)] == ["c1"]
    assert [m.match_id for m in store.list_matches(bot="a")] == ["e1", "c1"]
    assert [m.match_id for m in store.list_matches(limit=1)] == ["e1"]
    latest = store.list_matches()[0]
    assert latest.bots == ["a", "c", "d"] and latest.places == [1, 2, 3] and latest.faults == 1
    assert latest.decisions == 2 and latest.median_latency_ms == 0.25


def test_listing_many_matches_binds_few_parameters(store: Store) -> None:
    """PostgreSQL takes at most 65,535 bound parameters in a statement: listing a tournament
    of N games must not bind one per game (the progress line of a 100,000-game tournament
    lists them all)."""
    tid = store.create_tournament({}, master_seed=1)
    for i in range(150):
        store.save_match(record(f"m{i}", ["a", "b"], [1 + i % 2, 2 - i % 2], tournament_id=tid, game_index=i))
    bound: list[int] = []

    def count(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        bound.append(len(parameters) if parameters else 0)

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", count)
    try:
        listed = store.list_matches(tournament_id=tid, limit=1000)
    finally:
        sqlalchemy.event.remove(store.engine, "before_cursor_execute", count)
    assert len(listed) == 150 and all(len(m.bots) == 2 for m in listed)
    assert max(bound) < 10
    chosen = store.tournament_matches(tid, [3, 7, 149, 500])
    assert sorted((m.game_index, m.bots, m.places) for m in chosen) == [
        (3, ["a", "b"], [2, 1]), (7, ["a", "b"], [2, 1]), (149, ["a", "b"], [2, 1])]


def test_the_progress_line_reads_only_games_stored_since_its_last_look(store: Store) -> None:
    from arena.tournament.command import StoredGames, standings_of

    tid = store.create_tournament({}, master_seed=1)
    records = [record(f"m{i}", ["a", "b", "c"], random.Random(i).sample([1, 2, 3], 3), tournament_id=tid,
                      game_index=i, faults=[FaultRecord(0, "a", "timeout", "slow")] if i % 5 == 0 else None)
               for i in range(30)]
    read: list[list[int]] = []

    class Watched:   # the real store, noting which slots the progress line asks for
        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def tournament_matches(self, tournament_id: str, indexes: Any) -> Any:
            read.append(sorted(indexes))
            return store.tournament_matches(tournament_id, indexes)

    stored = StoredGames(Watched(), tid)
    for r in records[:12]:
        store.save_match(r)
    stored.refresh()
    stored.refresh()            # nothing new: nothing read
    for r in records[12:]:
        store.save_match(r)
    stored.refresh()
    assert read == [list(range(12)), list(range(12, 30))]
    whole = standings_of(store.list_matches(tournament_id=tid, limit=100))
    assert len(stored.games) == 30 and stored.summary.faults == whole.faults == 6
    assert stored.summary.standings == whole.standings


def test_concurrent_saves_from_threads(store: Store) -> None:
    records = [record(f"m{i}", ["a", "b", "c", "d"], random.Random(i).sample([1, 2, 3, 4], 4)) for i in range(40)]
    errors: list[BaseException] = []

    def save(chunk: list[MatchRecord]) -> None:
        try:
            for r in chunk:
                store.save_match(r)
                store.save_match(r)        # a second writer of the same match changes nothing
        except BaseException as error:     # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=save, args=(records[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.match_count() == 40
    assert {name: games for name, (_, games) in store.current_elo("classic").items()} == dict.fromkeys("abcd", 40)
    history = store.rating_history("a", "classic")
    # Each change starts where the previous one ended: no lost updates.
    assert all(h2.elo_before == h1.elo_after for h1, h2 in zip(history, history[1:]))


# --------------------------------------------------------------------------------------
# Online Elo in the store
# --------------------------------------------------------------------------------------


def test_elo_after_a_match(store: Store) -> None:
    store.save_match(record("m1", ["a", "b", "c"], [1, 2, 2]))
    elo = store.current_elo("classic")
    assert elo["a"] == (pytest.approx(1516.0), 1)
    assert elo["b"] == (pytest.approx(1492.0), 1) and elo["c"] == (pytest.approx(1492.0), 1)
    [change] = store.rating_history("b", "classic")
    assert (change.match_id, change.elo_before, change.games) == ("m1", 1500.0, 1)
    assert change.elo_after == pytest.approx(1492.0)
    assert store.current_elo("extreme") == {}


def test_k_drops_after_30_games(store: Store) -> None:
    for i in range(32):
        store.save_match(record(f"m{i}", ["a", "b"], [1, 2]))
    history = store.rating_history("a", "classic")
    assert [h.games for h in history] == list(range(1, 33))
    for h in history:
        k = 32.0 if h.games <= 30 else 16.0
        opponent = 3000.0 - h.elo_before          # two players: the ratings stay symmetric
        [expected] = elo_deltas([h.elo_before, opponent], [1, 2], [k, k])[:1]
        assert h.elo_after - h.elo_before == pytest.approx(expected)


def test_aborted_matches_are_stored_but_not_rated(store: Store) -> None:
    store.save_match(record("ab", ["a", "b"], [1, 2], status="aborted"))
    assert store.match_count(status=None) == 1 and store.match_count() == 0
    assert store.current_elo("classic") == {}
    assert store.seat_aggregates("classic") == []


def test_the_store_runs_the_statistics_elo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store computes no rating itself: it runs arena.stats.elo.rate_matches, reading
    and writing its rows in the save's transaction."""
    seen: list[tuple[dict[tuple[int, str], tuple[float, int]], list[int]]] = []

    def rate(ratings: Mapping[tuple[int, str], tuple[float, int]], matches: Sequence[RatedMatch]) -> list[EloChange]:
        seen.append((dict(ratings), [m.pk for m in matches]))
        return [EloChange(m.pk, m.bot_ids[0], m.variant, 1.0, 2.0, 1) for m in matches]

    monkeypatch.setattr(arena.store.save, "rate_matches", rate)
    with arena.store.Store(str(tmp_path / "arena.db")) as store:
        store.save_matches([record("m1", ["a", "b"], [1, 2]), record("m2", ["a", "b"], [2, 1])])
        store.save_match(record("m3", ["a", "b"], [1, 2]))
        assert seen == [({}, [1, 2]), ({(1, "classic"): (2.0, 1)}, [3])]      # the matches' row ids
        assert store.current_elo("classic") == {"a": (2.0, 1)}
        assert [c.match_id for c in store.rating_history("a", "classic")] == ["m1", "m2", "m3"]
        assert sum(a.games for a in store.seat_aggregates("classic")) == 6      # the summaries as usual


def test_bulk_save_equals_one_by_one(tmp_path: Path) -> None:
    rng = random.Random(9)
    records = []
    for i in range(60):
        bots = rng.sample(["a", "b", "c", "d", "e"], rng.choice([2, 3, 4]))
        records.append(record(f"m{i}", bots, rng.sample(range(1, len(bots) + 1), len(bots)),
                              faults=[FaultRecord(0, bots[0], "timeout", "late")] if i % 7 == 0 else None))
    with Store(str(tmp_path / "one.db")) as one, Store(str(tmp_path / "bulk.db")) as bulk:
        for r in records:
            one.save_match(r)
        assert bulk.save_matches(records[:25]) == 25
        assert bulk.save_matches(records) == 35       # the first 25 are already there
        assert one.current_elo("classic") == bulk.current_elo("classic")
        for bot in "abcde":
            assert one.rating_history(bot, "classic") == bulk.rating_history(bot, "classic")
        assert sorted(one.board_snapshot("classic").outcomes) == sorted(bulk.board_snapshot("classic").outcomes)
        assert sorted(one.seat_aggregates("classic"), key=lambda a: a.bot) == \
            sorted(bulk.seat_aggregates("classic"), key=lambda a: a.bot)
        assert [one.load_match(r.match_id) for r in records] == [bulk.load_match(r.match_id) for r in records]


# --------------------------------------------------------------------------------------
# Browsing (arena.results.browse, arena.results.listings), on real engine games
# --------------------------------------------------------------------------------------


def test_show_and_verify_classic(store: Store) -> None:
    store.save_match(played("c-1", "classic", ["alice", "bob", "carol", "dave"], seed=21))
    text = str(show_match(store, "c-1"))
    assert "Round 1" in text and "Round 3" in text
    assert "trick 1:" in text and "hand alice (seat 0):" in text
    assert "end of round 3" in text and "Result:" in text
    ok, message = verify_match(store, "c-1")
    assert ok, message


def test_show_and_verify_extreme_with_a_forfeit(store: Store) -> None:
    store.save_match(played("x-1", "extreme", ["a", "b", "c"], seed=5, forfeited=[False, True, False]))
    assert "trick" in str(show_match(store, "x-1"))
    ok, message = verify_match(store, "x-1")
    assert ok, message
    assert store.load_match("x-1").places[1] == 3          # the forfeit is last whatever its total


def test_verify_finds_tampering(store: Store) -> None:
    wrong_totals = played("t-1", "classic", ["a", "b", "c"], seed=8)
    wrong_totals.totals[0] += 10
    store.save_match(wrong_totals)
    ok, message = verify_match(store, "t-1")
    assert not ok and "totals differ" in message

    wrong_places = played("t-2", "classic", ["a", "b", "c"], seed=8)
    wrong_places.places = [wrong_places.places[1], wrong_places.places[0], wrong_places.places[2]]
    if wrong_places.places == played("t-2", "classic", ["a", "b", "c"], seed=8).places:
        wrong_places.places = [4, 4, 4]
    store.save_match(wrong_places)
    ok, message = verify_match(store, "t-2")
    assert not ok and "places differ" in message

    short = played("t-3", "classic", ["a", "b", "c"], seed=8)
    short.actions, short.latencies_ms = short.actions[:-3], short.latencies_ms[:-3]
    store.save_match(short)
    ok, message = verify_match(store, "t-3")
    assert not ok and "ends before the game does" in message


def test_match_rows_and_export(store: Store) -> None:
    saved = played("r-1", "classic", ["alice", "bob", "carol"], seed=2)
    store.save_match(saved)
    [line] = match_rows(store)
    assert line.match_id == "r-1" and line.variant == "classic" and line.decisions == len(saved.actions)
    assert line.players.startswith(f"alice {saved.totals[0]} ({saved.places[0]})")
    assert match_table(store).row_count == 1
    assert export_match(store, "r-1") == saved.to_json()


# --------------------------------------------------------------------------------------
# Think times and timeouts (arena.stats.think_times), and the upgrade of version-1 databases
# --------------------------------------------------------------------------------------


def test_histogram_percentiles_match_numpy_within_the_resolution() -> None:
    rng = np.random.default_rng(7)
    # Four decades of log-normal think times, a cluster of equal values, and fallbacks (None).
    values = np.concatenate([rng.lognormal(0.0, 1.5, 20_000), np.full(500, 0.25), rng.uniform(20, 900, 3000)])
    latencies: list[float | None] = [float(v) for v in values] + [None] * 100
    histogram = LatencyHistogram.of(latencies)
    assert histogram.decisions == values.size
    for percent in (0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 100):
        exact = float(np.percentile(values, percent, method="inverted_cdf"))
        assert histogram.percentile(percent) == pytest.approx(exact, rel=RESOLUTION + 1e-9), percent
    # Small samples too: the nearest rank, not an interpolation.
    for small in ([4.0], [1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 100.0]):
        for percent in (50, 99):
            exact = float(np.percentile(small, percent, method="inverted_cdf"))
            assert LatencyHistogram.of(small).percentile(percent) == pytest.approx(exact, rel=RESOLUTION + 1e-9)
    assert LatencyHistogram.of([None, None]).percentile(50) is None
    with pytest.raises(ValueError):
        histogram.percentile(0)


def test_histograms_merge_by_adding_and_survive_their_stored_form() -> None:
    rng = np.random.default_rng(3)
    first, second = list(rng.lognormal(0, 1, 300)), list(rng.lognormal(2, 1, 500))
    merged = LatencyHistogram.merge([LatencyHistogram.of(first).encode(), None, LatencyHistogram.of(second).encode()])
    assert merged == LatencyHistogram.of(first + second)
    assert LatencyHistogram.decode(merged.encode()) == merged
    assert LatencyHistogram().encode() is None and LatencyHistogram.decode(None) == LatencyHistogram()
    # Out of range: below 0.01 ms in the lowest bucket, above 10^6 ms in the highest.
    assert bucket_of(np.array([0.0, 0.001, HIGHEST_MS * 10])).tolist() == [0, 0, BUCKETS - 1]
    with pytest.raises(ValueError, match="not a stored think-time histogram"):
        LatencyHistogram.decode(b"\x09\x04\x00\x00")


def test_think_times_and_timeouts_are_summed_per_bot(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)
    games = [played(f"g{i}", "classic", ["a", "b", "c"], seed=i) for i in range(4)]
    games[0].latencies_ms[:5] = [None] * 5                  # fallbacks: no think time
    games[1].faults = [FaultRecord(1, "b", "timeout", "late"), FaultRecord(1, "b", "timeout", "late"),
                       FaultRecord(2, "c", "malformed", "x")]
    games[2].tournament_id, games[2].game_index = tid, 0
    games[2].faults = [FaultRecord(1, "b", "timeout", "late")]
    games[3].status = "aborted"                              # stored, but counted nowhere
    games[3].faults = [FaultRecord(0, "a", "timeout", "late")]
    store.save_matches(games[:2])
    for record in games[2:]:
        store.save_match(record)

    def expected(records: list[MatchRecord], bot: str) -> LatencyHistogram:
        return LatencyHistogram.of([lat for r in records for (seat, _), lat in zip(r.actions, r.latencies_ms)
                                    if r.bots[seat] == bot])

    everything = {a.bot: a for a in store.seat_aggregates("classic")}
    assert {bot: a.timeouts for bot, a in everything.items()} == {"a": 0, "b": 3, "c": 0}
    assert {bot: a.faults for bot, a in everything.items()} == {"a": 0, "b": 3, "c": 1}
    for bot in "abc":
        assert everything[bot].think_times == expected(games[:3], bot)
    in_tournament = {a.bot: a for a in store.seat_aggregates("classic", tid)}
    assert in_tournament["b"].timeouts == 1 and in_tournament["a"].think_times == expected(games[2:3], "a")
    with store.engine.connect() as conn:
        seats = conn.exec_driver_sql("select m.match_id, s.seat, s.timeouts from match_seats s "
                                     "join matches m on m.id = s.match_pk where s.timeouts > 0").all()
    assert sorted(tuple(row) for row in seats) == [("g1", 1, 2), ("g2", 1, 1), ("g3", 0, 1)]


def test_a_version_1_database_is_upgraded_once_with_its_think_times_and_timeouts(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, master_seed=1)
    records = [played(f"c{i}", "classic", ["a", "b", "c"], seed=i) for i in range(3)]
    records += [played("x0", "extreme", ["a", "b", "d"], seed=9), played("ab", "classic", ["a", "b", "c"], seed=5)]
    records[0].tournament_id, records[0].game_index = tid, 0
    records[1].latencies_ms[2:9] = [None] * 7
    records[1].faults = [FaultRecord(0, "a", "timeout", "late"), FaultRecord(2, "c", "illegal", "x")]
    records[3].faults = [FaultRecord(1, "b", "timeout", "late")]
    records[4].status, records[4].faults = "aborted", [FaultRecord(1, "b", "timeout", "late")]
    store.save_matches(records)
    boards = {(v, t): store.seat_aggregates(v, t) for v in ("classic", "extreme") for t in (None, tid)}
    seats_before = [(m.match_id, m.faults) for m in store.list_matches()]
    assert any(a.timeouts for a in boards[("classic", None)]) and all(
        a.think_times.decisions for a in boards[("classic", None)])

    url = as_schema_1(store)
    with Store(url) as upgraded:
        with upgraded.engine.connect() as conn:
            assert conn.exec_driver_sql("select value from arena_meta where key = 'schema_version'").scalar() == str(
                SCHEMA_VERSION)
            timeouts = sorted(tuple(r) for r in conn.exec_driver_sql(
                "select m.match_id, s.seat, s.timeouts from match_seats s join matches m on m.id = s.match_pk "
                "where s.timeouts > 0").all())
        assert timeouts == [("ab", 1, 1), ("c1", 0, 1), ("x0", 1, 1)]     # per seat, aborted matches too
        assert {(v, t): upgraded.seat_aggregates(v, t) for v, t in boards} == boards
        assert [(m.match_id, m.faults) for m in upgraded.list_matches()] == seats_before
        # The upgraded database goes on like a new one.
        upgraded.save_match(played("c9", "classic", ["a", "b", "c"], seed=19))
        after = {a.bot: a for a in upgraded.seat_aggregates("classic")}
    with Store(url) as again:                     # no second upgrade
        assert {a.bot: a for a in again.seat_aggregates("classic")} == after


def test_an_unreadable_log_does_not_stop_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(str(path)) as store:
        store.save_matches([played(f"m{i}", "classic", ["a", "b", "c"], seed=i) for i in range(2)])
        expected = {a.bot: a.think_times for a in store.seat_aggregates("classic")}
        url = as_schema_1(store)
    db = sqlite3.connect(path)
    db.execute("update match_logs set actions = x'00' where match_pk = (select id from matches where match_id = 'm1')")
    db.commit()
    db.close()
    with Store(url) as upgraded:
        think = {a.bot: a.think_times for a in upgraded.seat_aggregates("classic")}
    assert 0 < think["a"].decisions < expected["a"].decisions     # m0's think times only
