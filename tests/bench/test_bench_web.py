"""``arena bench web`` (arena.bench.web): the figures exist and are positive; no timing assertion."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from arena.bench.web import bench_web
from arena.cli.app import app

PAGES = ["leaderboard_page", "leaderboard_api", "match_page", "match_api", "crosstable_page"]


def test_bench_web_figures(tmp_path: Path) -> None:
    db = tmp_path / "web.db"
    figures = bench_web(matches=200, repeat=1, db=str(db))
    assert figures["matches"] == 200
    assert figures["match_decisions"] > 500          # a full-length match is the one shown
    assert figures["yardstick_median_ms"] > 0
    for page in PAGES:
        for suffix in ("median_ms", "max_ms", "ratio"):
            assert figures[f"{page}_{suffix}"] > 0, (page, suffix)
    # An existing --db file is used as is: nothing is filled.
    again = bench_web(matches=5, repeat=1, db=str(db))
    assert again["matches"] == 200 and again["fill_seconds"] == 0


def test_bench_web_command_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "web", "--matches", "30", "--repeat", "1", "--json",
                                      "--db", str(tmp_path / "web.db")])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["matches"] == 30 and figures["match_page_median_ms"] > 0
