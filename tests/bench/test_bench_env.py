"""arena bench env: the environment against the engine on the same games, the OpenSpiel
line or its note, and a policy bot's think time in real matches against the sample bot's."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

if not os.environ.get("CI"):
    pytest.importorskip("pettingzoo", reason="the train extra is not installed: pip install -e '.[train]'")

from arena.bench.env import env_against_engine, openspiel_problem
from arena.cli.app import app


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_the_environment_and_the_engine_play_the_same_games(variant: str) -> None:
    figures = env_against_engine(variant, players=3, games=3, seed=4, chunks=2)
    assert figures["games"] == 3
    if variant == "classic":
        assert figures["env_steps"] == figures["engine_decisions"]     # one step a decision
    else:
        assert figures["env_steps"] >= figures["engine_decisions"]     # a prediction may take several
    assert figures["env_over_engine"] > 0


def test_one_run_prints_every_figure() -> None:
    result = CliRunner().invoke(app, ["bench", "env", "--games", "2", "--playouts", "1", "--matches", "1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["env_steps"] == figures["engine_decisions"] > 0
    assert figures["faults"] == 0
    assert figures["policy_decisions"] > 0 and figures["random_decisions"] > 0
    assert figures["policy_think_p50_ms"] > 0 and figures["policy_over_random_p50"] > 0
    if openspiel_problem() is None:
        assert figures["openspiel_wizard_playouts_per_s"] > 0 and figures["openspiel_oh_hell_playouts_per_s"] > 0
    else:
        assert figures["openspiel"].startswith("skipped: ")


def test_bad_input_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(app, ["bench", "env", "--games", "0"])
    assert result.exit_code == 2
