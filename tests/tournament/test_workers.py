"""Workers (``arena worker``) playing one tournament through its database, one killed.

Real processes throughout: ``arena tournament --workers 0`` creates the schedule and
shows progress; ``arena worker`` processes claim deals under short leases and play them
with their own referee and sample bots; one is killed with SIGKILL in the middle of a
game. Then every game must be stored exactly once, and the games, results and ratings
must equal those of a one-worker run with the same seed. On SQLite (two workers) and on
PostgreSQL (three; the throwaway cluster of tests/conftest.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import ROOT

from arena.store import Store

PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"
GREEDY = f"{PY} -m sample_bots.greedy_bot"
# Small and quick, fixed seed: 4 bots, 3 seats, 12 deals of 3 rotations.
LINEUP = ["--no-samples", "--bot", f"a={GREEDY}", "--bot", f"b={RANDOM}", "--bot", f"c={GREEDY}",
          "--bot", f"d={RANDOM}"]
GAMES = ["--players", "3", "--rounds", "6", "--games", "36", "--seed", "21"]
LEASE = "3"     # seconds: a killed worker's deal comes back quickly


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([PY, "-m", "arena.cli", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)


def finish(process: subprocess.Popen[str], timeout: float = 240) -> str:
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, out
    return out


def results(db: str) -> dict[str, Any]:
    """Every stored game by slot (bots, places, totals, the actions) and the ratings."""
    with Store(db) as store:
        (tournament,) = store.list_tournaments()
        games = {}
        for summary in store.list_matches(tournament_id=tournament.id, limit=1000):
            record = store.load_match(summary.match_id)
            games[record.game_index] = (record.bots, record.places, record.totals, record.actions)
        from arena.results.leaderboard import leaderboard

        board = [(r.bot, round(r.rating, 6), None if r.elo is None else round(r.elo, 6), r.games)
                 for r in leaderboard(store, "classic", tournament.id)]
        return {"tournament": tournament, "games": games, "board": board}


@pytest.fixture(scope="module")
def one_worker_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference: the same tournament played by `arena tournament` alone."""
    folder = tmp_path_factory.mktemp("one")
    finish(arena("tournament", *LINEUP, *GAMES, "--concurrency", "1", "--db", str(folder / "one.db"), cwd=folder))
    return results(str(folder / "one.db"))


def wait_for(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def stored_count(db: str, tournament_id: str) -> int:
    with Store(db) as store:
        return len(store.finished_game_indexes(tournament_id))


def kill_one_of(db: str, workers: int, folder: Path) -> tuple[str, list[str]]:
    """Organiser plus ``workers`` workers; kill one with SIGKILL once games are being
    stored (it is then in a game: it plays one deal after another without pause)."""
    organiser = arena("tournament", *LINEUP, *GAMES, "--workers", "0", "--db", db, cwd=folder)
    tournament_id = wait_for(lambda: _tournament_id(db), 60, "the tournament to be created")
    started = [arena("worker", "--tournament", tournament_id, "--lease", LEASE, "--db", db, cwd=folder)
               for _ in range(workers)]
    wait_for(lambda: stored_count(db, tournament_id) >= 3, 120, "the first games")
    victim = started[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    outputs = [finish(worker) for worker in started[1:]]
    outputs.append(finish(organiser))
    return tournament_id, outputs


def _tournament_id(db: str) -> str | None:
    if "://" not in db and not Path(db).exists():
        return None
    try:
        with Store(db) as store:
            found = store.list_tournaments()
            if found and store.scheduled_games(found[0].id):
                return found[0].id
    except Exception:  # noqa: BLE001 (the organiser may be creating the schema right now)
        return None
    return None


def check_against(run: dict[str, Any], reference: dict[str, Any]) -> None:
    assert sorted(run["games"]) == list(range(36)), "every slot stored exactly once"
    assert run["games"] == reference["games"], "the same games, results and logs as one worker"
    assert run["board"] == reference["board"], "the same ratings and online Elo as one worker"


@pytest.mark.slow
def test_two_workers_on_sqlite_one_killed_mid_game(tmp_path: Path, one_worker_run: dict[str, Any]) -> None:
    db = str(tmp_path / "shared.db")
    tournament_id, outputs = kill_one_of(db, 2, tmp_path)
    run = results(db)
    check_against(run, one_worker_run)
    assert run["tournament"].status == "finished"
    with Store(db) as store:
        progress = store.unit_progress(tournament_id)
    assert progress["deals_done"] == progress["deals"] == 12 and not progress["deals_leased"]


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[str]:
    from factories.databases import wipe_postgres

    wipe_postgres(postgres_url)
    yield postgres_url
    wipe_postgres(postgres_url)


@pytest.mark.slow
def test_three_workers_on_postgresql_one_killed_mid_game(tmp_path: Path, pg_database: str,
                                                        one_worker_run: dict[str, Any]) -> None:
    kill_one_of(pg_database, 3, tmp_path)
    check_against(results(pg_database), one_worker_run)


def test_a_worker_for_an_unknown_tournament_is_exit_2_and_for_a_finished_one_exit_0(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    done = subprocess.run([PY, "-m", "arena.cli", "tournament", *LINEUP, "--players", "3", "--rounds", "1",
                           "--games", "3", "--db", str(db)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with Store(str(db)) as store:
        (tournament,) = store.list_tournaments()
    finished = subprocess.run([PY, "-m", "arena.cli", "worker", "--tournament", tournament.id, "--db", str(db)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0 and f"tournament {tournament.id} is already complete" in finished.stdout
    unknown = subprocess.run([PY, "-m", "arena.cli", "worker", "--tournament", "t-nope", "--db", str(db)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1, unknown.stderr


@pytest.mark.parametrize("url, message", [
    ("postgresql://nobody@127.0.0.1:1/none", "cannot"),
    ("nosuchdriver://x/y", "driver"),
])
def test_an_unusable_database_is_one_line_and_exit_2(tmp_path: Path, url: str, message: str) -> None:
    done = subprocess.run([PY, "-m", "arena.cli", "worker", "--db", url], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert message in lines[0].lower(), lines[0]


def test_a_worker_that_cannot_start_a_lineup_bot_leaves_its_games_to_others(tmp_path: Path) -> None:
    bot = tmp_path / "mine.py"
    bot.write_text((ROOT / "sample_bots" / "random_bot.py").read_text())
    db = str(tmp_path / "w.db")
    organiser = arena("tournament", "--no-samples", "--bot", f"mine={bot}", "--bot", f"b={RANDOM}",
                      "--bot", f"c={RANDOM}", "--players", "3", "--rounds", "1", "--games", "3", "--workers", "0",
                      "--db", db, cwd=tmp_path)
    try:
        tournament_id = wait_for(lambda: _tournament_id(db), 60, "the tournament to be created")
        bot.unlink()      # this "machine" lacks the lineup's first command now
        done = subprocess.run([PY, "-m", "arena.cli", "worker", "--tournament", tournament_id, "--db", db],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"cannot run the lineup of tournament {tournament_id}" in done.stderr
        with Store(db) as store:
            progress = store.unit_progress(tournament_id)
        assert progress["games_stored"] == 0 and progress["deals_leased"] == 0   # nothing claimed, nothing lost
    finally:
        organiser.kill()
        organiser.wait()
