"""Shared fixtures.

The store tests run on a fresh SQLite file, and also on PostgreSQL when
``ARENA_TEST_POSTGRES_URL`` names an empty database the tests may fill and wipe, e.g.
``ARENA_TEST_POSTGRES_URL=postgresql://arena@127.0.0.1:55432/arena_test pytest tests/test_store.py``
(needs ``pip install "psycopg[binary]"``; see README, "PostgreSQL").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.store import Store

POSTGRES_URL = os.environ.get("ARENA_TEST_POSTGRES_URL")


def _wipe_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=["sqlite"] + (["postgresql"] if POSTGRES_URL else []))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store: a SQLite file in a temp dir, or the PostgreSQL test database wiped."""
    if request.param == "postgresql":
        assert POSTGRES_URL is not None
        _wipe_postgres(POSTGRES_URL)
        url = POSTGRES_URL
    else:
        url = str(tmp_path / "arena.db")
    with Store(url) as opened:
        yield opened
