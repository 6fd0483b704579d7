"""The worked example (arena/envs/example.py): a few seconds of training give a saved
policy that plays legal games in the environment and, loaded by its bot command, a
short real tournament without a fault."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import ROOT
from factories.commands import arena_stdout

if not os.environ.get("CI"):
    pytest.importorskip("pettingzoo", reason="the train extra is not installed: pip install -e '.[train]'")

from arena.envs import wizard_v0
from arena.envs.example import LinearPolicy, evaluate, main
from arena.store import Store

RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


@pytest.fixture(scope="module")
def saved_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("example")
    folder.chmod(0o755)                       # a confined bot reads a named path as another user
    path = folder / "policy.npz"
    main(["train", "--seconds", "3", "--rounds", "4", "--out", str(path), "--evaluate", "2"])
    return path


def test_the_saved_policy_plays_legal_games_in_the_environment(saved_policy: Path) -> None:
    policy = LinearPolicy.load(saved_policy)
    assert policy.weights.any(), "training moved the weights"
    env = wizard_v0.raw_env(players=4, rounds=6)       # an illegal action raises here
    for seed in range(3):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            observed = env.observe(env.agent_selection)
            env.step(policy(observed["observation"], observed["action_mask"]))
    assert evaluate(policy, games=2) != 0.0


def test_the_saved_policy_plays_a_real_tournament_as_a_bot(saved_policy: Path, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    learned = f"{sys.executable} -m arena.envs.example bot --policy {saved_policy}"
    randoms = [arg for name in ("r1", "r2", "r3") for arg in ("--bot", f"{name}={RANDOM_BOT}")]
    arena_stdout("tournament", "--no-samples", "--players", "4", "--rounds", "3", "--games", "4", "--seed", "5",
                 "--bot", f"learned={learned}", *randoms, "--db", str(db), cwd=tmp_path)
    board = json.loads(arena_stdout("leaderboard", "--format", "json", "--db", str(db), cwd=tmp_path))
    rows = board if isinstance(board, list) else board.get("rows", board.get("bots", []))
    assert "learned" in json.dumps(rows)
    with Store(str(db)) as store:
        records = [store.load_match(summary.match_id) for summary in store.list_matches(limit=100)]
    assert [(r.status, r.faults) for r in records] == [("completed", [])] * 4


def test_a_missing_policy_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "arena.envs.example", "bot", "--policy", str(tmp_path / "no.npz"),
                           "--arena", "127.0.0.1:1", "--token", "t"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "cannot read the policy" in done.stderr
