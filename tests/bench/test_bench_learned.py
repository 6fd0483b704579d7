"""arena bench learned and arena bench worlds: the learned bot's decision times beside the
heuristic's, and the share of the rivals' true cards in uniform and inferred worlds."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from arena.bench.worlds import bench_worlds
from arena.cli.app import app


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_the_learned_bots_times_come_with_the_heuristics(variant: str) -> None:
    result = CliRunner().invoke(app, ["bench", "learned", "--variant", variant, "--games", "1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["decisions"] > 0
    assert figures["learned_p50_ms"] > 0 and figures["heuristic_p50_ms"] > 0
    assert math.isclose(figures["p50_over_heuristic"], figures["learned_p50_ms"] / figures["heuristic_p50_ms"])
    assert 0 < figures["with_a_choice"] <= figures["decisions"] and figures["learned_choice_p50_ms"] > 0


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_the_worlds_table_measures_both_samplers_on_the_same_decisions(variant: str) -> None:
    figures = bench_worlds(variant, games=1, seed=2, worlds=5)
    cells = list(figures.by_trick.values())
    assert cells and all(len(c.uniform) == len(c.inferred) > 0 for c in cells)
    assert all(0 <= v <= 1 for c in cells for v in c.uniform + c.inferred)
    assert sum(c.count for c in figures.by_trick.values()) == sum(c.count for c in figures.by_round.values())
    table = figures.table()
    first = "bidding" if variant == "classic" else "predicting"
    assert "uniform" in table and "inference" in table and first in table
