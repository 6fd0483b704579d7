"""A tournament's console output, as a hostile bot reads it: the organiser keeps it in a
file (``arena tournament ... | tee run.log``) that the bot can open while it plays.

The master seed gives every deal of the tournament away, and each deal seed the hands
of its deal, so no seed may be in that file before the tournament has finished: not on
the start line (unless the organiser chose it with ``--seed``), not on the progress
line, not after an interruption, not in ``arena tournaments``, ``arena show`` or
``arena export`` of an unfinished tournament, nor in the files the arena writes under
``arena-logs/``. Once every game is stored the seed is spent, and the closing lines
show it so that anyone may reproduce the tournament.

Each test runs a real ``arena tournament`` as its own process (three bots that think a
few milliseconds a decision, ``factories.live.slow_tournament``), with its stdout
and stderr going to a file, and reads the seeds from the database with the store once
they may be known.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from factories.live import slow_tournament
from factories.web_server import wait_for

from arena.store import Store

pytestmark = pytest.mark.slow


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def output(folder: Path) -> str:
    return (folder / "tournament.out").read_text()


def flat(text: str) -> str:
    """``text`` with its lines joined: the console wraps long lines at its width."""
    return " ".join(text.split())


def arena_logs(folder: Path) -> str:
    """Every file the arena wrote under arena-logs/ (bot logs, the lock, the referee's note)."""
    logs = folder / "arena-logs"
    return "".join(path.read_text(errors="replace") for path in sorted(logs.rglob("*")) if path.is_file())


def stored_games(db: Path) -> int:
    """The games stored so far (once the run has printed its start line: the database is made)."""
    with Store(str(db)) as store:
        return sum(len(store.finished_game_indexes(t.id)) for t in store.list_tournaments())


def started(folder: Path) -> bool:
    return "Tournament t-" in output(folder)


def seeds(db: Path, tournament_id: str) -> tuple[int, set[int]]:
    """The tournament's master seed and the deal seeds of its stored matches."""
    with Store(str(db)) as store:
        matches = store.list_matches(tournament_id=tournament_id, limit=1000)
        return store.get_tournament(tournament_id).master_seed, {store.load_match(m.match_id).seed for m in matches}


def only_tournament(db: Path) -> str:
    with Store(str(db)) as store:
        (info,) = store.list_tournaments()
        return info.id


def watch_while_unfinished(runner: subprocess.Popen[str], folder: Path, games: int, hold: Path) -> list[str]:
    """What the console file and arena-logs/ held at moments when the tournament had not
    finished, from its first line to its last game: each is read before the stored games
    are counted, so a text read while fewer than ``games`` were stored was written
    before the end (the closing lines come only after the last game is stored). The
    tournament waits at its first decision (``hold``) until the first such text is read."""
    db = folder / "arena.db"
    seen: list[str] = []
    while runner.poll() is None:
        text = output(folder) + arena_logs(folder)
        if started(folder) and stored_games(db) < games:
            seen.append(text)
            hold.unlink(missing_ok=True)
        time.sleep(0.05)
    return seen


def assert_no_seed(texts: list[str], secrets: set[int]) -> None:
    for text in texts:
        for secret in secrets:
            assert str(secret) not in text, f"seed {secret} was readable before the tournament ended:\n{text}"


def test_a_drawn_seed_is_shown_only_once_every_game_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    hold = tmp_path / "hold"
    hold.touch()
    runner = slow_tournament(tmp_path, db, "--rounds", "2", "--games", "6", sleep_ms=10, hold=hold)
    try:
        seen = watch_while_unfinished(runner, tmp_path, 6, hold)
        assert runner.wait(timeout=120) == 0, output(tmp_path)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    tournament_id = only_tournament(db)
    master, deals = seeds(db, tournament_id)
    assert len(deals) == 6 and seen
    assert_no_seed(seen, {master, *deals})
    text = output(tmp_path)
    assert f"Tournament {tournament_id}: classic, 3 bots (ann, bob, cy), 6 games, independent deals, a random seed " \
           "(shown once the tournament has finished). Played by" in flat(text)
    assert f"Seed {master} (the tournament is finished: anyone may now reproduce it)." in text.splitlines()
    # The seed is in the closing lines only, after the board.
    before_end = text[:text.index(f"Seed {master}")]
    assert_no_seed([before_end, arena_logs(tmp_path)], {master, *deals})
    # Finished: every listing shows it.
    listed = json.loads(arena("tournaments", "--format", "json", cwd=tmp_path).stdout)
    assert [(t["status"], t["seed"]) for t in listed] == [("finished", master)]
    assert str(master) in arena("tournaments", "--format", "csv", cwd=tmp_path).stdout


# Decisions a bot makes in one game of two rounds at three seats: a bid and a card, then a
# bid and two cards, and a trump to choose in each round at most.
DECISIONS_A_GAME = 7


def interrupted_tournament(folder: Path, db: Path, games: int, *options: str) -> None:
    """A tournament of 9 two-round games (``options`` added) that is Ctrl-C'd once it has
    stored ``games`` games and before its end: its bots stop answering once each has made
    the decisions of ``games`` games (the tournament waits), however slow the machine."""
    hold = folder / "hold"
    hold.touch()
    runner = slow_tournament(folder, db, "--rounds", "2", "--games", "9", *options, sleep_ms=30, hold=hold,
                             hold_after=games * DECISIONS_A_GAME)
    try:
        wait_for(lambda: started(folder) and stored_games(db) >= games, f"{games} stored games")
        runner.send_signal(signal.SIGINT)
        hold.unlink()
        assert runner.wait(timeout=60) == 130, output(folder)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()


def test_a_seed_given_with_seed_is_echoed_at_the_start_and_again_on_resume(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    interrupted_tournament(tmp_path, db, 1, "--seed", "12345")
    tournament_id = only_tournament(db)
    assert f"Tournament {tournament_id}: " in output(tmp_path)
    assert ", seed 12345. Played by" in flat(output(tmp_path))
    resumed = arena("tournament", "--resume", tournament_id, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Resuming tournament {tournament_id}: " in resumed.stdout
    assert ", seed 12345. Played by" in flat(resumed.stdout)
    assert "Seed 12345 (the tournament is finished" in resumed.stdout


def test_an_interrupted_tournament_shows_no_seed_until_its_resume_finishes_it(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    interrupted_tournament(tmp_path, db, 2)
    tournament_id = only_tournament(db)
    master, deals = seeds(db, tournament_id)
    text = output(tmp_path)
    assert "Interrupted: every finished game is stored" in text and f"--resume {tournament_id}" in text
    # Every command a user might run on the interrupted tournament, and every file the arena wrote.
    some_match = json.loads(arena("matches", "--format", "json", cwd=tmp_path).stdout)[0]["match_id"]
    shown = {
        "tournaments": arena("tournaments", cwd=tmp_path),
        "tournaments json": arena("tournaments", "--format", "json", cwd=tmp_path),
        "tournaments csv": arena("tournaments", "--format", "csv", cwd=tmp_path),
        "show": arena("show", some_match, cwd=tmp_path),
        "export": arena("export", some_match, cwd=tmp_path),
    }
    assert all(done.returncode == 0 for done in shown.values()), {k: d.stderr for k, d in shown.items()}
    before = [text, arena_logs(tmp_path), *(d.stdout + d.stderr for d in shown.values())]
    assert_no_seed(before, {master, *deals})
    (listed,) = json.loads(shown["tournaments json"].stdout)
    assert (listed["status"], listed["seed"]) == ("interrupted", None)
    assert "seed withheld until its tournament has finished" in flat(shown["show"].stdout)
    exported = json.loads(shown["export"].stdout)
    assert exported["seed"] is None and "seed" not in exported["config"]
    # The resume says no seed when it starts (the seed was drawn: so the stored settings
    # say), and shows it once the last game is stored.
    resumed = arena("tournament", "--resume", tournament_id, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[-1] == f"Seed {master} (the tournament is finished: anyone may now reproduce it)."
    assert "a random seed (shown once the tournament has finished). Played by" in flat(resumed.stdout)
    _, deals = seeds(db, tournament_id)
    assert len(deals) == 9
    assert_no_seed([*before, "\n".join(lines[:-1]) + resumed.stderr], {master, *deals})
    (listed,) = json.loads(arena("tournaments", "--format", "json", cwd=tmp_path).stdout)
    assert (listed["status"], listed["seed"]) == ("finished", master)
    assert f"seed {json.loads(arena('export', some_match, cwd=tmp_path).stdout)['seed']} ·" in \
        arena("show", some_match, cwd=tmp_path).stdout
