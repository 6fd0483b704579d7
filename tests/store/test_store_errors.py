"""The store's errors at its front: no other room sees the database driver's own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import arena.store
from arena.store import Store, StoreError, StoreUnavailable


def test_a_write_locked_out_past_the_busy_timeout_is_store_unavailable(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arena.store, "BUSY_TIMEOUT", 0.2)       # 30 s for real runs
    path = tmp_path / "arena.db"
    store = Store(str(path))
    other = sqlite3.connect(path, isolation_level=None)        # another process's writer
    other.execute("BEGIN IMMEDIATE")
    try:
        assert store.list_tournaments() == []                 # WAL: reads go on
        with pytest.raises(StoreUnavailable, match="database is locked") as caught:
            store.register_bot("late")
        assert isinstance(caught.value, StoreError)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.register_bot("late")                          # nothing was lost or half-written
    store.close()
