"""Shared fixtures. Import-light on purpose: the engine's tests need neither the store
(SQLAlchemy) nor grpc, so every arena import happens inside the fixture that needs it.

``store``: an empty store. The store tests run on a fresh SQLite file, and also on
PostgreSQL when ``ARENA_TEST_POSTGRES_URL`` names an empty database the tests may fill
and wipe, e.g.
``ARENA_TEST_POSTGRES_URL=postgresql://arena@127.0.0.1:55432/arena_test pytest tests/test_store.py``
(needs ``pip install "psycopg[binary]"``; see README, "PostgreSQL").

``arena_server`` (one test) and ``module_arena_server`` (one test module): start a real
:class:`arena.referee.server.ArenaServer` on 127.0.0.1, port 0, on its own event loop
thread (``tests/bots/harness.py``'s ``ArenaThread``), optionally with an honest random
bot process connected under each of ``bots``; stopped, with its bot processes, at the
end of the test or module::

    def test_something(arena_server):
        arena = arena_server(bots=["honest0", "honest1", "honest2"], move_time=0.5)
        record = arena.run_match(["honest0", "honest1", "honest2"])
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from bots.harness import ArenaThread

    from arena.results import Store

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
    from arena.results import Store  # the store with the results' save-path summaries

    if request.param == "postgresql":
        assert POSTGRES_URL is not None
        _wipe_postgres(POSTGRES_URL)
        url = POSTGRES_URL
    else:
        url = str(tmp_path / "arena.db")
    with Store(url) as opened:
        yield opened


class StartArena(Protocol):
    def __call__(self, *, bots: list[str] | tuple[str, ...] = (), max_matches: int = 4,
                 keepalive_ms: int | None = None, port: int = 0, local_bots: dict[str, str] | None = None,
                 **server_options: Any) -> ArenaThread: ...


def _arena_servers() -> Iterator[StartArena]:
    from bots.harness import ArenaThread

    started: list[ArenaThread] = []

    def start(*, bots: list[str] | tuple[str, ...] = (), max_matches: int = 4, keepalive_ms: int | None = None,
              port: int = 0, local_bots: dict[str, str] | None = None, **server_options: Any) -> ArenaThread:
        """A started arena (``server_options`` are ArenaServer's: store, move_time, ...)
        with an honest random bot process connected under each of ``bots``, accepting
        the one-run tokens of ``local_bots`` (name -> token) for bots the test starts."""
        arena = ArenaThread(keepalive_ms=keepalive_ms, port=port, local_bots=local_bots, **server_options)
        started.append(arena)
        for i, name in enumerate(bots):
            arena.start_bot("random_bot.py", name, "--seed", str(i), max_matches=max_matches)
        return arena

    try:
        yield start
    finally:
        for arena in reversed(started):
            arena.close()


arena_server = pytest.fixture(_arena_servers, name="arena_server")
module_arena_server = pytest.fixture(_arena_servers, scope="module", name="module_arena_server")
