"""Databases: a store turned into what an older arena wrote (``as_schema_1``,
``as_schema_2``, ``as_schema_3``, ``drop_schema_5``), and a PostgreSQL database wiped
(``wipe_postgres``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.store import Store


V1_COLUMNS = {
    "match_seats": ["match_pk", "seat", "bot_id", "bot_version", "total", "place", "forfeited", "faults", "rounds",
                    "exact_bids"],
    "bot_totals": ["bot_id", "variant", "tournament_key", "games", "seats", "score_sum", "place_sum", "rounds",
                   "exact_bids", "faults", "forfeits"],
}


V2_COLUMNS = {
    "matches": ["id", "match_id", "tournament_id", "game_index", "variant", "players", "config_json", "seed",
                "status", "started_at", "finished_at", "result_json", "decisions", "median_latency_ms",
                "max_latency_ms"],
    "match_seats": V1_COLUMNS["match_seats"] + ["timeouts"],
}


def as_schema_3(store: Store) -> str:
    """Turn a store into what the arena before schema 4 would have written (no schedule
    or lease tables, no Elo cursor) and close it; return its URL to open it again."""
    url = store.engine.url.render_as_string(hide_password=False)
    _drop_schema_4(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE arena_meta SET value = '3' WHERE key = 'schema_version'")
    store.close()
    return url


def drop_schema_5(store: Store) -> None:
    """Take away what schema 5 added: the crash table (its indexes go with it) and the
    matches' private flag."""
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE bot_crashes")
        conn.exec_driver_sql("ALTER TABLE matches DROP COLUMN private")


def _drop_schema_4(store: Store) -> None:
    drop_schema_5(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE work_units")
        conn.exec_driver_sql("DROP TABLE scheduled_games")
        conn.exec_driver_sql("ALTER TABLE tournaments DROP COLUMN elo_next")


def _drop_schema_3_columns(store: Store) -> None:
    _drop_schema_4(store)
    with store.engine.begin() as conn:
        for table, column in (("matches", "time_bank_ms"), ("match_seats", "think_max_ms"),
                              ("match_seats", "bank_used_ms")):
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")


def as_schema_2(store: Store) -> str:
    """Turn a store into what the arena before schema 3 would have written (the same
    rows, without the new columns) and close it; return its URL to open it again."""
    from sqlalchemy import inspect

    url = store.engine.url.render_as_string(hide_password=False)
    _drop_schema_3_columns(store)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE arena_meta SET value = '2' WHERE key = 'schema_version'")
    with store.engine.connect() as conn:
        for table, columns in V2_COLUMNS.items():
            assert [c["name"] for c in inspect(conn).get_columns(table)] == columns
    store.close()
    return url


def as_schema_1(store: Store) -> str:
    """Turn a store into what the arena before schema 2 would have written (the same
    rows, without the new columns) and close it; return its URL to open it again."""
    from sqlalchemy import inspect

    url = store.engine.url.render_as_string(hide_password=False)
    _drop_schema_3_columns(store)
    with store.engine.begin() as conn:
        for table, column in (("match_seats", "timeouts"), ("bot_totals", "timeouts"),
                              ("bot_totals", "think_histogram")):
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.exec_driver_sql("UPDATE arena_meta SET value = '1' WHERE key = 'schema_version'")
    with store.engine.connect() as conn:
        for table, columns in V1_COLUMNS.items():
            assert [c["name"] for c in inspect(conn).get_columns(table)] == columns
    store.close()
    return url


def wipe_postgres(url: str) -> None:
    """Empty the PostgreSQL database at ``url`` (its public schema dropped and made again)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
