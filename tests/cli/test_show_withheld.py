"""``arena show`` and ``arena export`` of a match whose tournament has not finished, as
``arena web`` shows it to a spectator: without its deal seed, and not at all while it is
private (a duplicate deal with rotations still to play: its cards are their hands)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from factories.tournaments import running_tournament

from arena.store import Store


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_a_match_of_an_unfinished_tournament_is_shown_without_its_seed_and_a_private_one_not_at_all(
        tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(str(db)) as store:
        tournament, ids, deal_seeds = running_tournament(store, stored=4)     # deal 0 played out, deal 1 once
    for command in ("show", "export"):
        refused = arena(command, ids[3], "--db", str(db), cwd=tmp_path)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert "private until every game of its deal has been played (1 of 3 are)" in refused.stderr
        assert refused.stdout == "" and "Traceback" not in refused.stderr
    shown = arena("show", ids[0], "--db", str(db), cwd=tmp_path)
    exported = arena("export", ids[0], "--db", str(db), cwd=tmp_path)
    assert shown.returncode == exported.returncode == 0, shown.stderr + exported.stderr
    assert "seed withheld until its tournament has finished" in " ".join(shown.stdout.split())
    assert "trick" in shown.stdout     # the game itself: its deal is played out
    record = json.loads(exported.stdout)
    assert record["seed"] is None and "seed" not in record["config"] and record["actions"]
    for text in (shown.stdout, exported.stdout):
        assert all(str(seed) not in text for seed in deal_seeds), text
    # Finished: everything is shown, the deal seed included.
    with Store(str(db)) as store:
        store.set_tournament_status(tournament, "finished")
    shown = arena("show", ids[3], "--db", str(db), cwd=tmp_path)
    assert shown.returncode == 0 and f"seed {deal_seeds[3]} ·" in " ".join(shown.stdout.split()), shown.stderr
    assert json.loads(arena("export", ids[3], "--db", str(db), cwd=tmp_path).stdout)["seed"] == deal_seeds[3]
