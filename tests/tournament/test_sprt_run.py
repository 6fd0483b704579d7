"""``arena sprt`` end to end: real bot processes, a real referee, a real SQLite file.

The statistics themselves are tested by simulation in tests/stats/test_sprt_stats.py; here:
the schedule of duplicate sets, the decision taken at the first set in order that
crosses a bound, the real runs the issue names (random against heuristic accepts H1; a
bot against itself under another name does not), resume, reproducibility and the
one-line errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.stats.sprt import SprtBounds, SprtMonitor, games_per_set, sprt_status
from arena.tournament.sprt import sprt_schedule

PY = sys.executable
HEURISTIC = f"{PY} -m sample_bots.heuristic_bot"
RANDOM = f"{PY} -m sample_bots.random_bot"
GREEDY = f"{PY} -m sample_bots.greedy_bot"
# One process a bot: these tests are the A/B test's, and its opponents would otherwise run
# a process a rotation, 2P of them (tests/security/test_deal_rotations.py tests that).
QUICK = ["--shared-processes", "--players", "3", "--rounds", "4", "--concurrency", "2"]


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_set_is_one_deal_in_every_rotation_for_both_sides() -> None:
    games = sprt_schedule("new", "old", ["a", "b", "c", "d"], players=4, sets=3, master_seed=11)
    assert len(games) == 3 * games_per_set(4)
    for k in range(3):
        one_set = games[k * 8:(k + 1) * 8]
        assert {g.seed for g in one_set} == {one_set[0].seed} and {g.deal for g in one_set} == {k}
        candidate, baseline = one_set[0::2], one_set[1::2]
        # The tested bot takes every seat once; everything else is the same on both sides.
        assert sorted(g.bots.index("new") for g in candidate) == [0, 1, 2, 3]
        for c, b in zip(candidate, baseline, strict=True):
            assert [x if x != "new" else "old" for x in c.bots] == list(b.bots)
            assert c.bot_seeds == b.bot_seeds and "old" not in c.bots and "new" not in b.bots
    assert len({g.seed for g in games}) == 3


def test_the_decision_is_taken_at_the_first_set_that_crosses_whatever_ends_later() -> None:
    bounds = SprtBounds(0, 50)
    monitor = SprtMonitor("new", "old", 3, bounds)
    schedule = sprt_schedule("new", "old", ["a", "b"], players=3, sets=40, master_seed=2)
    # The candidate always first; the baseline last in even sets, second in odd ones (units
    # 1.0 and 0.75). Sets are added from the last one backwards: nothing is complete until
    # set 0 is, and then all 40 are.
    for game in reversed(schedule):
        tested = "new" if game.index % 2 == 0 else "old"
        seat = game.bots.index(tested)
        places = [2] * 3
        places[seat] = 1 if tested == "new" else 3 if game.deal % 2 == 0 else 2
        monitor.add(game.index, game.bots, places)
    status = monitor.current()
    units = [1.0 if k % 2 == 0 else 0.75 for k in range(40)]
    first = next(k for k in range(1, 41) if sprt_status(units[:k], bounds).decision)
    assert status.decision == "H1" and status.units == first < 40


@pytest.mark.slow
def test_heuristic_against_random_accepts_h1_and_is_stored_shown_and_reproducible(tmp_path: Path) -> None:
    # elo1 100, not 50: heuristic beats random by about +300, so either bound shows it; at
    # 100 the test decides in 11 sets (74 games) rather than 21 (156), and it runs twice.
    args = ["sprt", "--candidate", f"strong={HEURISTIC}", "--baseline", f"weak={RANDOM}", "--elo0", "0",
            "--elo1", "100", "--max-games", "300", "--seed", "3", *QUICK]
    first = arena(*args, "--db", str(tmp_path / "a.db"), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "H1 accepted: strong is stronger than weak" in first.stdout
    line = next(x for x in first.stdout.splitlines() if x.startswith("LLR "))
    listed = json.loads(arena("tournaments", "--format", "json", "--db", str(tmp_path / "a.db"),
                              cwd=tmp_path).stdout)
    assert listed[0]["format"] == "sprt" and listed[0]["status"] == "finished"
    assert listed[0]["test"].startswith("strong vs weak: H1 · " + line)
    # The same seed, another database, four games at once: the same decision at the same set.
    again = arena(*args[:-2], "--concurrency", "4", "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert next(x for x in again.stdout.splitlines() if x.startswith("LLR ")) == line
    tid = listed[0]["id"]
    board = json.loads(arena("leaderboard", "--tournament", tid, "--format", "json", "--db", str(tmp_path / "a.db"),
                             cwd=tmp_path).stdout)
    (test,) = board["metadata"]["tests"]
    assert (test["tournament"], test["candidate"], test["decision"]) == (tid, "strong", "H1")
    assert test["summary"] == listed[0]["test"] and test["elo_low"] > 0
    # A decided test has nothing left: resume shows its result without starting a bot.
    resumed = arena("tournament", "--resume", tid, "--db", str(tmp_path / "a.db"), cwd=tmp_path)
    assert resumed.returncode == 0 and "already complete" in resumed.stderr and line in resumed.stdout
    resumed = arena("sprt", "--resume", tid, "--db", str(tmp_path / "a.db"), cwd=tmp_path)
    assert resumed.returncode == 0 and "already complete" in resumed.stderr and line in resumed.stdout


def test_sprt_resume_of_a_tournament_that_is_not_a_test_is_refused_in_one_line(tmp_path: Path) -> None:
    from arena.store import Store

    with Store(str(tmp_path / "a.db")) as store:
        tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, 1, status="interrupted")
    done = arena("sprt", "--resume", tid, "--db", str(tmp_path / "a.db"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert lines == [f"arena: error: {tid} is a tournament, not an SPRT test: "
                     f"arena tournament --resume {tid} --db {tmp_path / 'a.db'}"], done.stderr
    assert not (tmp_path / "arena-logs").exists()


@pytest.mark.slow
def test_a_bot_against_itself_under_another_name_does_not_accept_h1(tmp_path: Path) -> None:
    done = arena("sprt", "--candidate", f"greedy-a={GREEDY}", "--baseline", f"greedy-b=env {GREEDY}",
                 "--opponent", f"r1={RANDOM}", "--opponent", f"r2={RANDOM}", "--elo0", "0", "--elo1", "50",
                 "--max-games", "60", "--seed", "4", *QUICK, "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "H1 accepted" not in done.stdout
    assert "H0 accepted" in done.stdout or "undecided: the game limit was reached" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--elo0", "10", "--elo1", "5"], "elo0"),
    (["--alpha", "0.6"], "alpha"),
    (["--beta", "0"], "beta"),
    (["--baseline", f"old={HEURISTIC}"], "same command"),
    (["--no-samples", "--opponent", f"r1={RANDOM}", "--players", "4"], "opponents"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    base = {"--candidate": f"new={HEURISTIC}", "--baseline": f"old={RANDOM}"}
    for key in ("--candidate", "--baseline"):
        if key in args:
            base.pop(key)
    given = [x for pair in base.items() for x in pair] + args
    done = arena("sprt", *given, "--db", str(tmp_path / "x.db"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "arena-logs").exists()


def test_a_candidate_that_cannot_start_ends_the_test_in_one_line(tmp_path: Path) -> None:
    # Named bots are never left out as an optional sample bot may be: the test cannot run.
    (tmp_path / "broken.py").write_text("raise SystemExit('broken on purpose')\n")
    done = arena("sprt", "--candidate", "new=broken.py", "--baseline", f"old={RANDOM}", "--sandbox", "none",
                 *QUICK, "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "bot 'new' exited with code 1 before connecting" in lines[0], done.stderr
    assert "left out" not in done.stderr and "Traceback" not in done.stderr
