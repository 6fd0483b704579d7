"""``arena tournament`` end to end: a real referee, real bot processes, a real SQLite file.

Also: browsing what it stored, and resuming after Ctrl-C and after kill -9 with no
game lost or doubled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.store import Store
from engine import GameConfig

PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"
HEURISTIC = f"{PY} -m sample_bots.heuristic_bot"
LINEUP = ["--no-samples", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}", "--bot", f"h1={HEURISTIC}",
          "--bot", f"h2={HEURISTIC}"]


ENV = {**os.environ, "COLUMNS": "200"}  # wide tables: ids are not folded


def arena(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=ENV)


def start_arena(*args: str, cwd: Path, sigint_ignored: bool = False) -> subprocess.Popen[str]:
    """``sigint_ignored``: as a shell script's ``arena ... &`` or nohup starts it: the shell
    ignores SIGINT, then execs the arena, which inherits that. (Not a ``preexec_fn``: Python
    code between fork and exec in a process running gRPC can abort the child.)"""
    command = [PY, "-m", "arena.cli", *args]
    if sigint_ignored:
        command = ["sh", "-c", "trap '' INT; exec \"$@\"", "sh", *command]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def tournament_id(db: Path) -> str:
    (only,) = Store(str(db)).list_tournaments()
    return only.id


def wait_for_stored(db: Path, at_least: int, proc: subprocess.Popen[str], timeout: float = 120) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            try:
                ids = Store(str(db)).list_tournaments()
            except Exception:  # the schema may be half-created at the very start
                ids = []
            if ids:
                done = Store(str(db)).finished_game_indexes(ids[0].id)
                if len(done) >= at_least:
                    return done
        time.sleep(0.2)
    raise AssertionError("the tournament stored too few games in time")


def assert_complete(db: Path, tid: str, games: int) -> None:
    store = Store(str(db))
    assert store.finished_game_indexes(tid) == set(range(games))
    matches = store.list_matches(tournament_id=tid, limit=10_000)
    assert len(matches) == games, "a game was stored twice"
    assert store.get_tournament(tid).status == "finished"


@pytest.mark.slow
def test_a_whole_tournament_runs_stores_and_can_be_browsed(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    done = arena("tournament", "--variant", "classic", "--rounds", "3", "--games", "8", "--seed", "5",
                 "--db", str(db), *LINEUP, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Wizard classic leaderboard" in done.stdout or "leaderboard" in done.stdout.lower()
    for name in ("r1", "r2", "h1", "h2"):
        assert name in done.stdout
    tid = tournament_id(db)
    assert_complete(db, tid, 8)

    store = Store(str(db))
    records = [store.load_match(m.match_id) for m in store.list_matches(tournament_id=tid, limit=100)]
    assert all(not r.faults for r in records)
    # duplicate format: each deal played once per rotation, every bot in every seat
    by_deal: dict[int, list] = {}
    for r in records:
        by_deal.setdefault(r.seed, []).append(r.bots)
    assert len(by_deal) == 2 and all(len(seatings) == 4 for seatings in by_deal.values())

    match_id = records[0].match_id
    verified = arena("replay", match_id, "--verify", "--db", str(db), cwd=tmp_path)
    assert verified.returncode == 0, verified.stderr
    shown = arena("show", match_id, "--db", str(db), cwd=tmp_path)
    assert shown.returncode == 0 and "trick" in shown.stdout.lower()
    exported = json.loads(arena("export", match_id, "--db", str(db), cwd=tmp_path).stdout)
    assert exported["match_id"] == match_id and len(exported["actions"]) > 0
    tournaments = arena("tournaments", "--db", str(db), cwd=tmp_path).stdout
    assert tid in tournaments and "classic" in tournaments and "finished" in tournaments
    listed = arena("matches", "--tournament", tid, "--db", str(db), cwd=tmp_path)
    assert listed.returncode == 0 and match_id[-5:] in listed.stdout
    board = json.loads(arena("leaderboard", "--format", "json", "--db", str(db), cwd=tmp_path).stdout)
    rows = board["rows"] if isinstance(board, dict) else board
    assert {row["bot"] for row in rows} == {"r1", "r2", "h1", "h2"}
    export_dir = tmp_path / "boards"
    assert arena("leaderboard", "--export", str(export_dir), "--db", str(db), cwd=tmp_path).returncode == 0
    assert {p.name for p in export_dir.iterdir()} >= {"classic.md", "classic.html", "classic.json"}


@pytest.mark.slow
def test_the_same_seed_replays_the_same_tournament(tmp_path: Path) -> None:
    results = []
    for run in ("a", "b"):
        db = tmp_path / f"{run}.db"
        done = arena("tournament", "--variant", "extreme", "--rounds", "1", "--games", "4", "--seed", "9",
                     "--concurrency", "2", "--shared-processes", "--db", str(db), *LINEUP, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        store = Store(str(db))
        records = sorted((store.load_match(m.match_id) for m in store.list_matches(limit=100)),
                         key=lambda r: r.game_index)
        results.append([(r.bots, r.seed, r.actions, r.totals) for r in records])
    assert results[0] == results[1]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sigint", "sigterm", "sigterm-background", "sigkill"])
def test_an_interrupted_tournament_resumes_exactly(tmp_path: Path, how: str) -> None:
    db = tmp_path / "t.db"
    games = 24
    proc = start_arena("tournament", "--variant", "classic", "--rounds", "4", "--games", str(games),
                       "--concurrency", "2", "--seed", "3", "--shared-processes", "--db", str(db), *LINEUP,
                       cwd=tmp_path,
                       sigint_ignored=how == "sigterm-background")
    try:
        wait_for_stored(db, 3, proc)
        proc.send_signal(signal.SIGINT if how == "sigint" else signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    tid = tournament_id(db)
    stored = Store(str(db)).finished_game_indexes(tid)
    assert 3 <= len(stored) < games
    if how != "sigkill":
        assert proc.returncode == 130
        assert f"arena tournament --resume {tid}" in err
        assert Store(str(db)).get_tournament(tid).status == "interrupted"

    resumed = arena("tournament", "--resume", tid, "--db", str(db), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(stored)} already stored)" in resumed.stdout
    assert_complete(db, tid, games)


# The two tests below need the tournament still running after its first game is stored:
# 400 games take about 40 s here, the 40 games they once had about 4 s, which a second
# `arena` process starting under the load of a parallel test run did not always beat.
LONG_RUN = ["--rounds", "6", "--games", "400"]


@pytest.mark.slow
def test_a_tournament_runs_in_one_process_at_a_time(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    proc = start_arena("tournament", *LONG_RUN, "--db", str(db), *LINEUP, cwd=tmp_path)
    try:
        wait_for_stored(db, 1, proc)
        second = arena("tournament", "--resume", tournament_id(db), "--db", str(db), cwd=tmp_path)
        assert second.returncode == 2
        assert second.stderr.strip().splitlines() == [
            f"arena: error: tournament {tournament_id(db)} is being run by another arena process right now"]
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_orphaned_bots_exit_when_the_arena_is_killed(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    proc = start_arena("tournament", *LONG_RUN, "--db", str(db), *LINEUP, cwd=tmp_path)
    wait_for_stored(db, 1, proc)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert len(children) >= 4        # a process of each bot, and more as rotations of a deal need them
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 60     # they go at once; the rest is slack for a busy machine
    alive = children
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in children if Path(f"/proc/{pid}").exists()
                 and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
        time.sleep(0.2)
    for pid in alive:
        os.kill(int(pid), signal.SIGKILL)
    assert not alive, "bots kept running after their arena died"


def test_a_bot_given_by_a_relative_path_runs_from_where_it_was_given(tmp_path: Path, monkeypatch) -> None:
    from arena.tournament.lineup import parse_bot_option
    from arena.tournament.settings import TournamentSettings

    (tmp_path / "mine.py").write_text("pass\n")
    monkeypatch.chdir(tmp_path)
    entry = parse_bot_option(f"mine={PY} mine.py")
    settings = TournamentSettings(game=GameConfig(variant="classic", players=4), seed=1,
                                  bots=[entry])
    monkeypatch.chdir("/")
    stored = TournamentSettings.from_dict(json.loads(json.dumps(settings.to_dict())))
    assert stored.bots[0].cwd == tmp_path and stored == settings


# --------------------------------------------------------------------------- scheduling the matches
# claim_and_play is scheduling logic: a runner that only records when each match starts and
# ends (and sleeps a little) stands in for the referee, over a real SQLite store whose
# leases hand out the deals.

class RecordingRunner:
    """Plays no match through a referee: notes each match's start and end, and returns a
    real engine game of random decisions as its record."""

    def __init__(self, seconds: float = 0.01) -> None:
        import random

        self.seconds = seconds
        self.rng = random.Random(0)
        self.spans: dict[int, tuple[float, float]] = {}
        self.running = 0
        self.most_at_once = 0

    async def run_match(self, spec):
        import asyncio

        from factories.records import played

        assert spec.game_index not in self.spans, f"game {spec.game_index} started twice"
        start = time.monotonic()
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        await asyncio.sleep(self.seconds * (0.5 + self.rng.random()))
        self.running -= 1
        self.spans[spec.game_index] = (start, time.monotonic())
        record = played(spec.match_id, "classic", list(spec.bots), spec.game_index)
        record.tournament_id, record.game_index = spec.tournament_id, spec.game_index
        return record


def scheduling_settings(games: int, deals: str = "duplicate", bots: int = 6):
    from arena.tournament.lineup import BotEntry
    from arena.tournament.schedule import round_games
    from arena.tournament.settings import TournamentSettings

    return TournamentSettings(game=GameConfig(variant="classic", players=4), games=round_games(games, bots, 4), seed=7,
                              concurrency=4, deals=deals, bots=[BotEntry(f"b{i}", []) for i in range(bots)])


def play(settings, done: set[int], runner: RecordingRunner, db: Path):
    """Claim and play ``settings``' games (those in ``done`` stored first) through a real store."""
    import asyncio

    from arena.tournament.runner import match_spec
    from arena.tournament.settings import schedule_of
    from arena.tournament.worker import claim_and_play, saver

    with Store(str(db)) as store:
        tournament = store.create_tournament(settings.to_dict(), settings.seed, status="running")
        store.put_schedule(tournament, schedule_of(settings))
        for index in sorted(done):
            spec = match_spec(settings, tournament, schedule_of(settings)[index])
            store.save_match(asyncio.run(RecordingRunner(0).run_match(spec)))
        summary = asyncio.run(claim_and_play(runner, store, settings, tournament, saver(store)))
        saved = sorted(store.finished_game_indexes(tournament) - done)
    return summary, saved


def overlapping_deals(settings, runner: RecordingRunner) -> list[tuple[int, int]]:
    from arena.tournament.settings import schedule_of

    games = {g.index: g for g in schedule_of(settings)}
    return [(a, b) for a in runner.spans for b in runner.spans if a < b and games[a].deal == games[b].deal
            and runner.spans[a][0] < runner.spans[b][1] and runner.spans[b][0] < runner.spans[a][1]]


def test_no_two_matches_of_the_same_deal_are_ever_in_flight_together(tmp_path: Path) -> None:
    settings = scheduling_settings(48)
    runner = RecordingRunner()
    summary, saved = play(settings, set(), runner, tmp_path / "t.db")
    assert saved == sorted(runner.spans) == list(range(settings.games))   # each exactly once
    assert summary.played == settings.games and summary.skipped == 0
    assert overlapping_deals(settings, runner) == []
    assert runner.most_at_once == 4      # concurrency still comes from different deals


def test_a_resume_plays_exactly_the_missing_games_under_the_same_rule(tmp_path: Path) -> None:
    settings = scheduling_settings(48)
    done = {0, 1, 2, 5, 9, 10, 11, 20, 47}
    runner = RecordingRunner()
    summary, saved = play(settings, done, runner, tmp_path / "t.db")
    assert saved == sorted(runner.spans) == sorted(set(range(settings.games)) - done)
    assert summary.played == settings.games - len(done)
    assert overlapping_deals(settings, runner) == []


def test_the_last_deal_left_is_played_one_rotation_after_the_other(tmp_path: Path) -> None:
    settings = scheduling_settings(48)
    runner = RecordingRunner()
    _, saved = play(settings, set(range(settings.games - 4)), runner, tmp_path / "t.db")
    assert saved == list(range(settings.games - 4, settings.games))
    assert runner.most_at_once == 1 and overlapping_deals(settings, runner) == []


def test_independent_deals_run_side_by_side(tmp_path: Path) -> None:
    settings = scheduling_settings(4, deals="independent", bots=4)
    # Matches long enough (0.25-0.75 s) that the last claim, a store transaction on a
    # loaded machine, comes before the first match ends.
    runner = RecordingRunner(seconds=0.5)
    _, saved = play(settings, set(), runner, tmp_path / "t.db")
    assert saved == [0, 1, 2, 3] and runner.most_at_once == 4


def test_settings_stored_before_the_deals_option_are_duplicate() -> None:
    from arena.tournament.settings import TournamentSettings, schedule_of

    old = {"game": {"variant": "classic", "players": 4}, "games": 8, "seed": 3, "bots": [{"name": n} for n in "abcd"]}
    settings = TournamentSettings.from_dict(old)
    assert settings.deals == "duplicate"
    assert len({g.seed for g in schedule_of(settings)}) == 2
    assert TournamentSettings.from_dict(json.loads(json.dumps({**old, "deals": "independent"}))).deals == "independent"


def test_a_new_tournament_gets_a_fresh_63_bit_seed_and_the_format_of_its_bots() -> None:
    from arena.tournament.settings import TournamentRequest, build_settings

    lineup = {"no_samples": True, "bots": [f"r{i}={RANDOM}" for i in range(4)]}
    seeds = [build_settings(TournamentRequest(db="x.db", **lineup), print).seed for _ in range(20)]
    assert all(0 <= s < 2**63 for s in seeds) and max(seeds) >= 2**32
    assert build_settings(TournamentRequest(db="x.db", seed=5, **lineup), print).seed == 5   # as given
    assert build_settings(TournamentRequest(db="x.db", **lineup), print).deals == "duplicate"
    assert build_settings(TournamentRequest(db="x.db", server="127.0.0.1:1"), print).deals == "independent"
    assert build_settings(TournamentRequest(db="x.db", server="127.0.0.1:1", deals="duplicate"),
                          print).deals == "duplicate"


def test_the_ladder_lineup_adds_the_learned_and_search_bots_to_the_samples_and_refuses_no_samples() -> None:
    from arena.tournament.settings import TournamentRequest, build_settings
    from engine import ConfigError

    names = build_settings(TournamentRequest("x.db", lineup="ladder"), lambda message: None).bot_names()
    assert {"search", "learned", "random", "heuristic", "greedy", "cautious"} <= set(names)
    assert not {"search", "learned"} & set(build_settings(TournamentRequest("x.db"), lambda message: None).bot_names())
    with pytest.raises(ConfigError, match="--lineup"):
        build_settings(TournamentRequest("x.db", lineup="ladder", no_samples=True), lambda message: None)
    with pytest.raises(ConfigError, match="--lineup must be"):
        build_settings(TournamentRequest("x.db", lineup="all"), lambda message: None)
