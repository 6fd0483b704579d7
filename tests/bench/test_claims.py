"""``arena bench claims`` (arena.bench.claims) with tiny numbers: real worker processes on
a SQLite file and on the test PostgreSQL; every game stored exactly once and every figure
present. No timing assertion (the machine is shared)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.bench.claims import ClaimsPlan, bench_claims
from arena.cli.app import app

PER_COUNT = ["games", "seconds", "saves_per_s", "claim_p50_ms", "claim_p99_ms", "save_p50_ms", "save_p99_ms",
             "db_ms_per_game", "added_ms_per_game", "lock_waiting", "lock_wait_share", "lock_wait_ms_per_game",
             "top_waits", "client_cpu_ms_per_game", "server_cpu_ms_per_game", "machine_busy", "refused", "lost"]
RUN = ["database", "games_per_run", "yardstick_select1_ms", "yardstick_bare_write_ms", "bare_writes_per_s",
       "best_saves_per_s", "best_workers", "best_over_bare_writes", "missing", "stored_twice", "refused_saves",
       "exactly_once"]


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[str]:
    from factories.databases import wipe_postgres

    wipe_postgres(postgres_url)
    yield postgres_url
    wipe_postgres(postgres_url)


def check_figures(figures: dict[str, object], counts: tuple[int, ...], games: int) -> None:
    assert set(RUN) <= set(figures)
    assert figures["exactly_once"] is True
    assert figures["missing"] == figures["stored_twice"] == figures["refused_saves"] == 0
    for workers in counts:
        assert {f"w{workers}_{key}" for key in PER_COUNT} <= set(figures), workers
        assert figures[f"w{workers}_games"] == games
        assert float(figures[f"w{workers}_saves_per_s"]) > 0       # type: ignore[arg-type]
    assert float(figures["yardstick_bare_write_ms"]) > 0           # type: ignore[arg-type]


def test_claims_on_sqlite_through_the_command(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "claims", "--db", str(tmp_path / "claims.db"), "--workers", "1,2",
                                      "--games", "16", "--rounds", "2", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    check_figures(figures, (1, 2), 16)
    assert figures["database"] == "sqlite" and figures["w2_lock_waiting"] is None   # no server to sample


def test_claims_on_postgresql(pg_database: str) -> None:
    report = bench_claims(ClaimsPlan(db=pg_database, workers=(1, 2), games=16, rounds=2, yardstick_repeats=20))
    check_figures(report.figures(), (1, 2), 16)
    assert report.database == "postgresql" and report.settings["fsync"] in ("on", "off")
    assert all(run.lock_waiting is not None and run.lock_waiting >= 0 for run in report.runs)
    assert "exactly once: yes" in report.table()
