"""The observation a bot receives, typed (arena.sdk exports engine/observations.py's types):

* a bot process annotated with them plays both games on the real arena, and every
  observation it is sent has exactly the fields its type declares, in order;
* a bot annotated with them type-checks, and so does one annotated ``dict[str, Any]`` as
  the starter bot is; a field the game does not have is a type error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import ROOT

# Fails its decision (a bot_error fault) when an observation's fields are not the ones
# its type declares.
TYPED_BOT = """
import typing
from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run

DECLARED = {"classic": ClassicObservation, "extreme": ExtremeObservation}


def check(obs: Observation) -> None:
    fields = list(typing.get_type_hints(DECLARED[obs["variant"]]))
    if list(obs) != fields:
        raise ValueError(f"fields {list(obs)}, declared {fields}")


class Typed(Bot):
    name = "typed"

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        check(obs)
        return options[min(obs["hand_size"], len(options) - 1) // 2]

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        check(obs)
        return options[0]

    def play(self, obs: Observation, options: list[str]) -> str:
        check(obs)
        if obs["variant"] == "extreme":
            return options[obs["black_taken"] % len(options)]
        return options[len(obs["played"]) % len(options)]

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        check(obs)
        can_take = obs["can_take"] or {}
        return {"tokens": {"red": 1}} if can_take.get("red") else {"tokens": {}}

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        check(obs)
        assert obs["pay"] is not None and obs["pay"]["options"] == options
        return options[-1]


if __name__ == "__main__":
    run(Typed)
"""

PLAIN_BOT = """
from typing import Any

from arena.sdk import Bot


class Plain(Bot):
    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        return options[0]

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        return options[0]

    def predict(self, obs: dict[str, Any]) -> dict[str, Any]:
        return {}
"""

WRONG_FIELD = """
from arena.sdk import Bot, ExtremeObservation


class Wrong(Bot):
    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        return options[obs["hand_size"] % len(options)]
"""


@pytest.mark.parametrize("config", [
    {"variant": "classic", "players": 3, "seed": 21, "rounds": 5, "bidding": "hidden"},
    {"variant": "extreme", "players": 3, "seed": 22, "rounds": 1},
])
def test_a_typed_bot_receives_the_fields_its_types_declare(arena_server: Any, tmp_path: Path,
                                                            config: dict[str, Any]) -> None:
    script = tmp_path / "typed_bot.py"
    script.write_text(TYPED_BOT)
    arena = arena_server(local_bots={"typed": "tok-typed"})
    proc = subprocess.Popen([sys.executable, str(script), "--arena", arena.address, "--token", "tok-typed",
                             "--max-matches", "3"], stderr=subprocess.PIPE, text=True)
    try:
        record = arena.run_match(["typed"] * 3, bot_seeds=[1, 2, 3], config=config)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert record.status == "completed", stderr
    assert record.faults == [], stderr


def mypy(tmp_path: Path, source: str) -> tuple[int, str]:
    """mypy, with the project's settings, on one bot file; its exit status and report."""
    (tmp_path / "bot.py").write_text(source)
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / "cache"), "bot.py"],
                          cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "MYPYPATH": str(ROOT)})
    return done.returncode, done.stdout


def test_bots_annotated_with_the_types_or_with_plain_dicts_type_check(tmp_path: Path) -> None:
    status, report = mypy(tmp_path, TYPED_BOT + PLAIN_BOT)
    assert status == 0, report
    status, report = mypy(tmp_path, WRONG_FIELD)
    assert status == 1 and 'TypedDict "ExtremeObservation" has no key "hand_size"' in report, report
