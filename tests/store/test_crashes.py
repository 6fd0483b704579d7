"""Bot crashes: stored one row each (arena.store.crashes), read summed up per bot, kept
through the upgrade from schema 4, removed with a discarded tournament, and shown on the
boards (arena.results.leaderboard) only when some bot of the board crashed. The store on
a real SQLite file and on PostgreSQL (the ``store`` fixture), boards from the same."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from factories.databases import as_schema_2, as_schema_3, drop_schema_5
from factories.records import classic_record as classic
from factories.records import extreme_record as extreme
from factories.records import played
from rich.console import Console
from sqlalchemy import inspect

from arena.records import BotCrash
from arena.results.leaderboard import board, crash_lines, leaderboard
from arena.results.render import render, render_board
from arena.store import SCHEMA_VERSION, CrashSummary, Store, StoreError

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
OOM = "killed: out of memory (limit 512 MiB)"
# The tables of schema 4, as the arena before schema 5 created them.
V4_TABLES = {"arena_meta", "bots", "tournaments", "matches", "match_seats", "match_logs", "faults", "elo_ratings",
             "rating_history", "outcome_counts", "bot_totals", "scheduled_games", "work_units"}


def crash(bot: str, reason: str, minutes: int, tournament_id: str | None = None, variant: str | None = None,
          **fields: Any) -> BotCrash:
    return BotCrash(bot, reason, tournament_id=tournament_id, variant=variant, worker="host:1",
                    at=T0 + timedelta(minutes=minutes), **fields)


def url_of(store: Store) -> str:
    return store.engine.url.render_as_string(hide_password=False)


def schema_version(store: Store) -> str:
    with store.engine.connect() as conn:
        return str(conn.exec_driver_sql("select value from arena_meta where key = 'schema_version'").scalar())


def crash_rows(store: Store) -> list[tuple[Any, ...]]:
    with store.engine.connect() as conn:
        return sorted(tuple(row) for row in conn.exec_driver_sql(
            "select b.name, c.tournament_id, c.variant, c.reason, c.exit_code, c.worker, c.restarted "
            "from bot_crashes c join bots b on b.id = c.bot_id").all())


# --------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------


def crashes_per_variant(store: Store, bot: str) -> dict[str | None, CrashSummary]:
    """A bot's crashes per variant, as its page reads them (its snapshot)."""
    return store.bot_snapshot(bot, recent=1, classic_limit=1).crashes


def test_crashes_are_summed_up_per_bot_per_tournament_and_per_variant(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic"}}, master_seed=1)
    other = store.create_tournament({"game": {"variant": "extreme"}}, master_seed=2)
    store.save_crash(crash("evil", "exited with code 1", 0, tid, "classic", exit_code=1, restarted=True))
    store.save_crash(crash("evil", OOM, 5, tid, "classic"))
    # Stored last, but it happened first: not the last crash.
    store.save_crash(crash("evil", "killed by signal 9 (SIGKILL)", -5, tid, "classic"))
    store.save_crash(crash("evil", "exited with code 2", 1, other, exit_code=2))   # the variant: its tournament's
    store.save_crash(crash("odd", "did not connect within 30 s", 2, tid))
    store.save_crash(crash("loose", "exited with code 3", 3, variant="classic"))  # outside any tournament

    assert store.crashes(tournament_id=tid) == {
        "evil": CrashSummary("evil", 3, OOM, T0 + timedelta(minutes=5)),
        "odd": CrashSummary("odd", 1, "did not connect within 30 s", T0 + timedelta(minutes=2)),
    }
    assert {bot: c.count for bot, c in store.crashes("classic").items()} == {"evil": 3, "loose": 1, "odd": 1}
    assert store.crashes("extreme") == {"evil": CrashSummary("evil", 1, "exited with code 2",
                                                             T0 + timedelta(minutes=1))}
    assert {bot: c.count for bot, c in store.crashes().items()} == {"evil": 4, "loose": 1, "odd": 1}
    assert store.crashes("classic", other) == {}
    assert list(store.crashes()) == ["evil", "loose", "odd"]
    assert {variant: c.count for variant, c in crashes_per_variant(store, "evil").items()} == {
        "classic": 3, "extreme": 1}
    assert crashes_per_variant(store, "nobody") == {}
    # Every field is stored; a new bot name gets a token-less bot row.
    assert ("evil", tid, "classic", "exited with code 1", 1, "host:1", True) in crash_rows(store)
    assert {b.name: b.has_token for b in store.list_bots()} == {"evil": False, "loose": False, "odd": False}


def test_a_crash_without_any_variant_counts_where_no_variant_is_asked_for(store: Store) -> None:
    tid = store.create_tournament({}, master_seed=1)          # settings without a game
    store.save_crash(crash("evil", "exited with code 1", 0, tid))
    assert store.crashes("classic") == {}
    assert store.crashes(tournament_id=tid)["evil"].count == 1
    assert list(crashes_per_variant(store, "evil")) == [None]


def test_times_come_back_in_utc(store: Store) -> None:
    local = datetime(2025, 5, 1, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    store.save_crash(BotCrash("evil", OOM, variant="classic", at=local))
    assert store.crashes()["evil"].last_at == datetime(2025, 5, 1, 12, 30, tzinfo=UTC)


def test_a_crash_of_an_unknown_tournament_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="no tournament 't-nope'"):
        store.save_crash(crash("evil", OOM, 0, "t-nope"))
    assert store.crashes() == {} and store.list_bots() == []


def test_discarding_a_tournament_removes_its_crashes_only(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic"}}, master_seed=1)
    kept = store.create_tournament({"game": {"variant": "classic"}}, master_seed=2)
    store.save_crash(crash("evil", "did not connect within 30 s", 0, tid))
    store.save_crash(crash("evil", OOM, 1, kept))
    store.save_crash(crash("odd", OOM, 2, variant="classic"))
    store.discard_tournament(tid)
    assert [t.id for t in store.list_tournaments()] == [kept]
    assert [(row[0], row[1]) for row in crash_rows(store)] == [("evil", kept), ("odd", None)]
    assert store.crashes(tournament_id=tid) == {}


def test_a_boards_snapshot_carries_its_crashes(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic"}}, master_seed=1)
    store.save_match(classic("m1", [("ann", 10, 1, 1), ("evil", 0, 2, 0)], tournament_id=tid, game_index=0))
    store.save_crash(crash("evil", OOM, 0, tid))
    store.save_crash(crash("evil", "exited with code 1", -1, variant="classic"))
    store.save_crash(crash("ann", "exited with code 1", 0, variant="extreme"))
    assert store.board_snapshot("classic").ratings.crashes == store.crashes("classic")
    assert store.board_snapshot("classic", tid).ratings.crashes == {"evil": CrashSummary("evil", 1, OOM, T0)}
    assert store.board_snapshot("classic").ratings.crashes["evil"].count == 2


# --------------------------------------------------------------------------------------
# Upgrades
# --------------------------------------------------------------------------------------


def as_schema_4(store: Store) -> str:
    """Turn a store into what the arena before schema 5 wrote (no crash table, no private
    flag on matches) and close
    it; return its URL to open it again."""
    url = url_of(store)
    drop_schema_5(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE arena_meta SET value = '4' WHERE key = 'schema_version'")
        assert set(inspect(conn).get_table_names()) == V4_TABLES
    store.close()
    return url


def test_a_version_4_database_is_upgraded_with_its_data_kept(store: Store) -> None:
    tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, master_seed=1)
    records = [played(f"c{i}", "classic", ["a", "b", "c"], seed=i) for i in range(3)]
    records[0].tournament_id, records[0].game_index = tid, 0
    store.save_matches(records + [played("x0", "extreme", ["a", "b", "d"], seed=9)])
    before = {v: leaderboard(store, v, samples=20) for v in ("classic", "extreme")}
    matches = [m.match_id for m in store.list_matches()]

    url = as_schema_4(store)
    with Store(url) as upgraded:
        assert schema_version(upgraded) == str(SCHEMA_VERSION) == "5"
        with upgraded.engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) == V4_TABLES | {"bot_crashes"}
            indexes = {i["name"]: i["column_names"] for i in inspect(conn).get_indexes("bot_crashes")}
        assert indexes == {"bot_crashes_by_tournament": ["tournament_id"],
                           "bot_crashes_by_bot": ["bot_id", "variant"]}
        assert {v: leaderboard(upgraded, v, samples=20) for v in before} == before
        assert [m.match_id for m in upgraded.list_matches()] == matches
        assert not any(m.private for m in upgraded.list_matches())   # no older arena kept one private
        assert [t.id for t in upgraded.list_tournaments()] == [tid]
        assert upgraded.crashes() == {}
        # The upgraded database goes on like a new one.
        upgraded.save_crash(crash("a", OOM, 0, tid))
        upgraded.save_match(played("c9", "classic", ["a", "b", "c"], seed=19))
    with Store(url) as again:                   # no second upgrade
        assert schema_version(again) == "5"
        assert again.crashes(tournament_id=tid)["a"].count == 1


@pytest.mark.parametrize("older", [as_schema_3, as_schema_2])
def test_older_databases_upgrade_all_the_way_to_the_crash_table(store: Store, older: Any) -> None:
    store.save_match(played("c0", "classic", ["a", "b", "c"], seed=1))
    with Store(older(store)) as upgraded:
        assert schema_version(upgraded) == str(SCHEMA_VERSION)
        upgraded.save_crash(crash("a", OOM, 0, variant="classic"))
        assert upgraded.crashes("classic")["a"].count == 1


# --------------------------------------------------------------------------------------
# Boards
# --------------------------------------------------------------------------------------


@pytest.fixture
def played_store(store: Store) -> tuple[Store, str]:
    """ann, bob and evil in a tournament of three classic games, and an extreme game."""
    tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, master_seed=1)
    for i, seats in enumerate([[("ann", 50, 1, 1), ("bob", 30, 2, 1), ("evil", 0, 3, 0)],
                               [("bob", 40, 1, 1), ("evil", 20, 2, 0), ("ann", 10, 3, 0)],
                               [("evil", 60, 1, 2), ("ann", 30, 2, 1), ("bob", 0, 3, 0)]]):
        store.save_match(classic(f"m{i}", seats, tournament_id=tid, game_index=i))
    store.save_match(extreme("x0", [("ann", 3, 1), ("evil", 9, 2)]))
    return store, tid


TEXT_FORMATS = ("md", "csv", "json", "html")


def rendered(store: Store, variant: str, tournament_id: str | None = None, min_games: int = 0) -> dict[str, str]:
    """Every format of a board: the text ones with their metadata, the terminal table as
    printed on a wide console, and without metadata on a narrow one."""
    result = board(store.board_snapshot(variant, tournament_id), min_games=min_games, samples=20, generated_at=T0)
    texts = {fmt: str(render_board(result, fmt)) for fmt in TEXT_FORMATS}
    for width in (80, 200):
        console = Console(record=True, width=width)
        render_board(result, "table", console=console)
        texts[f"table{width}"] = console.export_text()
    return texts


def test_a_board_without_crashes_is_as_it_was(played_store: tuple[Store, str]) -> None:
    store, tid = played_store
    before = {key: rendered(store, "classic", key) for key in (None, tid)}
    # Crashes of another variant, and of no tournament: not this board's.
    store.save_crash(crash("evil", OOM, 0, variant="extreme"))
    store.save_crash(crash("bob", OOM, 1, variant="classic"))
    assert rendered(store, "classic", tid) == before[tid]
    assert "Crashes" not in before[tid]["table200"] and "crash" not in before[tid]["md"].lower()
    assert "crash" not in before[tid]["html"] and "crashes" not in before[tid]["csv"]
    assert [row["crashes"] for row in json.loads(before[tid]["json"])["rows"]] == [0, 0, 0]
    # The classic board over every game has bob's crash now, and nothing else changed but that.
    changed = rendered(store, "classic")
    assert changed != before[None] and "crash: bob crashed once: " + OOM in changed["table200"]


def test_a_board_with_crashes_has_the_column_and_a_line_per_crashed_bot(played_store: tuple[Store, str]) -> None:
    store, tid = played_store
    for minutes, reason in enumerate(["exited with code 1", "killed by signal 9 (SIGKILL)", OOM]):
        store.save_crash(crash("evil", reason, minutes, tid))
    store.save_crash(crash("bob", "exited with <code> 1", 0, tid))      # a reason that must be escaped
    rows = leaderboard(store, "classic", tournament_id=tid, samples=20)
    assert {r.bot: (r.crashes, r.last_crash) for r in rows} == {
        "ann": (0, None), "bob": (1, "exited with <code> 1"), "evil": (3, OOM)}
    lines = {"evil": "crash: evil crashed 3 times; last: killed: out of memory (limit 512 MiB)",
             "bob": "crash: bob crashed once: exited with <code> 1"}
    assert crash_lines(rows) == [lines[r.bot] for r in rows if r.bot in lines]
    texts = rendered(store, "classic", tid)

    for width in (80, 200):                          # under the table, whole, whatever the width
        table = texts[f"table{width}"]
        assert "Crashes" in table
        assert [line.strip() for line in table.splitlines() if "crash:" in line] == crash_lines(rows)
    header = next(line for line in texts["table200"].splitlines() if "Timeouts" in line)
    assert header.split()[-2:] == ["Timeouts", "Crashes"]
    evil_cells = next(line for line in texts["table200"].splitlines() if " evil " in line).split()
    assert evil_cells[-1] == "3"

    assert "| Timeouts | Crashes |" in texts["md"]
    assert "- crash: evil crashed 3 times; last: killed: out of memory \\(limit 512 MiB\\)" in texts["md"]
    assert "<th>Crashes</th>" in texts["html"]
    assert '<p class="crash">crash: bob crashed once: exited with &lt;code&gt; 1</p>' in texts["html"]
    assert "<code>" not in texts["html"]
    parsed = {row["bot"]: row for row in csv.DictReader(io.StringIO(texts["csv"]))}
    assert {bot: row["crashes"] for bot, row in parsed.items()} == {"ann": "0", "bob": "1", "evil": "3"}
    assert parsed["evil"]["last_crash"] == OOM and parsed["ann"]["last_crash"] == ""
    data = {row["bot"]: row for row in json.loads(texts["json"])["rows"]}
    assert {bot: (row["crashes"], row["last_crash"]) for bot, row in data.items()} == {
        "ann": (0, None), "bob": (1, "exited with <code> 1"), "evil": (3, OOM)}


def test_the_plain_table_and_hidden_bots(played_store: tuple[Store, str]) -> None:
    store, tid = played_store
    store.save_crash(crash("evil", OOM, 0, tid))
    store.save_crash(crash("ann", OOM, 0, variant="extreme"))
    rows = leaderboard(store, "classic", tournament_id=tid, samples=20)
    console = Console(record=True, width=120)
    console.print(render(rows, "table", "classic"))           # as `arena tournament` prints its board
    assert "crash: evil crashed once: " + OOM in console.export_text()
    # A bot the board hides (min_games) gets no line; the extreme board has ann's crash only.
    store.save_match(classic("solo", [("ann", 10, 1, 1), ("new", 0, 2, 0)]))
    store.save_crash(crash("new", OOM, 0, variant="classic"))
    shown = leaderboard(store, "classic", min_games=2, samples=20)
    assert [line.split()[1] for line in crash_lines(shown)] == ["evil"]
    assert [line.split()[1] for line in crash_lines(leaderboard(store, "extreme", samples=20))] == ["ann"]
