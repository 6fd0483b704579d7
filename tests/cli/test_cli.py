"""Bad input on the command line: one line on stderr, exit code 2, no traceback, nothing written.

Each case is one `arena` command in its own process. The list of bad arguments runs each
in a process forked from this one once it has imported the command line
(``factories.commands.forked_arena``): a fresh interpreter would spend 1-2 s of CPU on
imports for each of about 70 one-line refusals. A few of them also run in a fresh
interpreter (``test_a_fresh_process_refuses_in_one_line_too``), as the installed script
does."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from factories.commands import forked_arena

from arena.store import Store

# Every test runs the arena command as its own process: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


BAD = [
    (["tournament", "--variant", "chess"], "unknown variant"),
    (["tournament", "--rounds", "16"], "classic with 4 players allows at most 15 rounds"),
    (["tournament", "--players", "7"], "3 to 6 players"),
    (["tournament", "--variant", "extreme", "--players", "6"], "3 to 5 players"),
    (["tournament", "--rounds", "abc"], "valid integer"),
    (["tournament", "--bidding", "hidden", "--plus-minus-one"], "plus-minus-one needs open bidding"),
    (["tournament", "--length", "amigo", "--rounds", "3"], "not both"),
    (["tournament", "--variant", "extreme", "--bidding", "secret"], "classic options"),
    (["tournament", "--bot", "nocommand"], "NAME=COMMAND"),
    (["tournament", "--bot", "x=/no/such/program"], "not found"),
    (["tournament", "--games", "0"], "at least 1"),
    (["tournament", "--no-samples"], "need at least 4 bots"),
    (["tournament", "--resume", "nope"], "no arena database"),
    (["tournament", "--nonsense"], "No such option"),
    (["leaderboard", "--format", "pdf"], "not one of"),
    (["leaderboard"], "no arena database"),
    (["show", "m1"], "no arena database"),
    (["bench", "engine", "--variant", "x"], "not one of"),
    (["bench", "engine", "--variant", "extreme", "--bare"], "classic only"),
    (["tournament", "--destroyer-penalty", "4"], "destroyer penalty is a Wizard Extreme option"),
    (["tournament", "--variant", "extreme", "--bidding", "open"], "are classic options"),
    (["tournament", "--move-time", "nan"], "--move-time must be a number of seconds up to 86400"),
    (["tournament", "--time-bank", "1e20"], "--time-bank must be a number of seconds up to 86400"),
    (["tournament", "--seed", "99999999999999999999999"], "--seed must be between 0 and 2**63 - 1"),
    (["tournament", "--deals", "bogus"], "--deals must be duplicate or independent (got 'bogus')"),
    (["tournament", "--resume", "t-x", "--deals", "independent"], "drop --deals"),
    (["bench", "deals", "--games", "4"], "at least 8"),
    (["bench", "referee-work", "--matches", "0"], "greater than or equal to 1"),
    (["bench", "referee", "--turns", "0"], "greater than or equal to 1"),
    (["tournament", "--db", "no/such/dir/a.db"], "is not a writable directory"),
    (["tournament", "--bot", "x=python3 \"unterminated"], "No closing quotation"),
    (["serve", "--move-time", "inf"], "from 0.001 to 86400"),
    (["serve", "--move-time", "0"], "from 0.001 to 86400"),
    (["serve", "--grace", "-1"], "from 0 to 86400"),
    (["serve", "--max-faults", "0"], "must be from 1 to 1,000"),
    (["serve", "--host", ""], "Invalid value for --host: takes the address to listen on"),
    (["web", "--host", " "], "0.0.0.0 or :: (every interface)"),
    (["leaderboard", "--db", "sqlite:///missing.db"], "no arena database at missing.db"),
    (["leaderboard", "--db", "mysql://u@127.0.0.1/arena"], "unsupported database 'mysql'"),
    (["bot", "list", "--db", "postgresql+nodriver://u@127.0.0.1/arena"], "not a usable database URL"),
    (["frobnicate"], "No such command"),
    (["tournament", "--variant", "extreme", "--rounds", "99999999999999999999"], "extreme allows at most 100 rounds"),
    (["tournament", "--variant", "extreme", "--destroyer-penalty", "2000"], "whole number from 0 to 1000"),
    (["tournament", "--games", "99999999999999999999"], "--games must be at most 1,000,000"),
    (["tournament", "--concurrency", "1000"], "--concurrency must be at most 256"),
    (["tournament", "--max-faults", "5000"], "--max-faults must be at most 1,000"),
    (["matches", "--limit", "99999999999999999999"], "must be from 1 to 10,000,000"),
    (["bench", "sprt", "--seed", "-1"], "--seed"),
    (["tournament", "--workers", "1000"], "--workers must be from 0 to 256"),
    (["tournament", "--memory-limit", "99999999999999"], "--memory-limit must be from 32 to 1,048,576"),
    (["tournament", "--process-limit", "99999999999999999"], "--process-limit must be from 8 to 4,194,304"),
    (["tournament", "--file-size-limit", "0"], "--file-size-limit must be from 1 to 1,048,576"),
    (["bench", "sandbox", "--rounds", "100"], "classic with 4 players allows at most 15 rounds"),
    (["bench", "ladder", "--rounds", "0"], "rounds must be between 1 and 15"),
    (["bench", "ladder", "--budget-ms", "nan"], "must be positive"),
    (["bench", "ladder", "--inference", "magic"], "'magic' is not one of policy, none"),
    (["bench", "ladder", "--bot", "no-command"], "--bot takes NAME=COMMAND"),
    (["bench", "worlds", "--games", "0"], "must be at least 1"),
    (["bench", "worlds", "--variant", "skat"], "'skat' is not one of classic, extreme"),
    (["bench", "learned", "--players", "9"], "3 to 6 players"),
    (["bench", "sprt", "--luck", "nan"], "Invalid value for --luck: must be a number, 0 or more"),
    (["bench", "sprt", "--noise", "inf"], "Invalid value for --noise: must be a number, 0 or more"),
    (["bench", "workers", "--workers", "100000"], "must be from 2 (compared with one) to 256"),
    (["sprt", "--candidate", "a=/bin/true", "--baseline", "b=/bin/false", "--max-games", "0"],
     "--max-games must be at least 1"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    done = forked_arena(*args, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert message in lines[0]
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == [], "nothing may be written on bad input"


FRESH = [BAD[0], BAD[14], BAD[32], BAD[40]]   # tournament, leaderboard, serve, an unknown command


@pytest.mark.parametrize("args,message", FRESH, ids=[" ".join(a) for a, _ in FRESH])
def test_a_fresh_process_refuses_in_one_line_too(tmp_path: Path, args: list[str], message: str) -> None:
    done = arena(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert message in done.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["tournaments"], ["leaderboard"], ["matches"], ["show", "m1"], ["bot", "list"]])
def test_an_empty_file_is_no_database_to_read_and_stays_empty(tmp_path: Path, command: list[str]) -> None:
    empty = tmp_path / "arena.db"
    empty.touch()
    done = forked_arena(*command, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == "arena: error: arena.db is an empty file, not an arena database (run a " \
        "tournament first, or pass --db)"
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["arena.db"]


def test_foreign_database_is_refused_in_one_line(tmp_path: Path) -> None:
    garbage = tmp_path / "arena.db"
    garbage.write_bytes(b"this is not a database at all" * 100)
    for args in (["leaderboard"], ["tournament", "--rounds", "1"], ["bot", "list"]):
        done = forked_arena(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert garbage.read_bytes() == b"this is not a database at all" * 100


def test_a_missing_postgresql_driver_is_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "fake" / "psycopg"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named psycopg')\n")
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", "--db", "postgresql://u@127.0.0.1/a"],
                          cwd=work, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": str(fake.parent)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "arena: error: no driver for postgresql (No module named psycopg): pip install 'wizard-arena[postgres]' "
        "(in a checkout: pip install -e '.[postgres]')"]
    assert list(work.iterdir()) == []


def test_serve_on_a_taken_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = arena("serve", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"arena: error: cannot listen on 127.0.0.1:{port}: Address already in use"]
    assert list(tmp_path.iterdir()) == []


def test_unknown_ids_are_one_line_errors(tmp_path: Path) -> None:
    assert forked_arena("bot", "register", "somebot", cwd=tmp_path).returncode == 0
    for args in (["show", "no-such-match"], ["replay", "no-such-match", "--verify"], ["export", "no-such-match"],
                 ["tournament", "--resume", "no-such-tournament"], ["leaderboard", "--tournament", "zzz"]):
        done = forked_arena(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_bot_register_prints_a_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    done = forked_arena("bot", "register", "alpha", cwd=tmp_path)
    assert done.returncode == 0
    token = done.stdout.strip().splitlines()[-1]
    assert len(token) >= 20
    assert token.encode() not in (tmp_path / "arena.db").read_bytes()
    again = forked_arena("bot", "register", "alpha", cwd=tmp_path)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    listed = forked_arena("bot", "list", cwd=tmp_path)
    assert "alpha" in listed.stdout


def _two_tournaments(path: Path) -> tuple[str, str]:
    """A database with one classic and one extreme tournament (hand-made records)."""
    from factories.records import classic_record as classic
    from factories.records import extreme_record as extreme

    with Store(str(path)) as store:
        first = store.create_tournament({"game": {"variant": "classic"}}, master_seed=1)
        second = store.create_tournament({"game": {"variant": "extreme"}}, master_seed=2)
        for i in range(3):
            record = classic(f"c{i}", [("ann", 50, 1, 1), ("bob", 20, 2, 0), ("cy", 0, 3, 0)],
                             tournament_id=first, game_index=i)
            store.save_match(record)
            record = extreme(f"x{i}", [("ann", 9, 3), ("bob", 1, 1), ("dee", 4, 2)])
            record.tournament_id, record.game_index = second, i
            store.save_match(record)
        store.save_match(classic("late", [("ann", 0, 3, 0), ("bob", 0, 2, 0), ("cy", 90, 1, 2)]))
    return first, second


def test_leaderboard_export_follows_the_filters(tmp_path: Path) -> None:
    first, second = _two_tournaments(tmp_path / "t.db")
    done = forked_arena("leaderboard", "--db", "t.db", "--tournament", second, "--export", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "extreme-crosstable.html", "extreme-crosstable.json", "extreme-crosstable.md",
        "extreme.csv", "extreme.html", "extreme.json", "extreme.md"]
    crosstable = json.loads((tmp_path / "out" / "extreme-crosstable.json").read_text())
    assert (crosstable["tournament_id"], set(crosstable["bots"])) == (second, {"ann", "bob", "dee"})
    board = json.loads((tmp_path / "out" / "extreme.json").read_text())
    assert board["title"] == f"Wizard extreme leaderboard, tournament {second}"
    assert {row["bot"] for row in board["rows"]} == {"ann", "bob", "dee"}
    # The tournament's own variant is the default, and its Elo is as of its last game.
    shown = forked_arena("leaderboard", "--db", "t.db", "--tournament", first, "--format", "json", cwd=tmp_path)
    rows = {row["bot"]: row for row in json.loads(shown.stdout)["rows"]}
    assert set(rows) == {"ann", "bob", "cy"} and all(row["games"] == 3 for row in rows.values())
    everything = json.loads(forked_arena("leaderboard", "--db", "t.db", "--variant", "classic", "--format", "json",
                                  cwd=tmp_path).stdout)
    assert {row["bot"]: row["elo"] for row in everything["rows"]}["ann"] < rows["ann"]["elo"]


@pytest.mark.parametrize("args, message", [
    (["--export", "t.db"], "exists and is not a directory"),
    (["--export", "out", "--format", "csv"], "drop --format"),
    (["--tournament", "TID", "--variant", "extreme"], "is classic, not extreme"),
])
def test_leaderboard_refusals_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    first, _ = _two_tournaments(tmp_path / "t.db")
    done = forked_arena("leaderboard", "--db", "t.db", *[first if a == "TID" else a for a in args], cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert message in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("t.db")) == []


def test_independent_deals_are_stored_shown_and_kept_on_resume(tmp_path: Path) -> None:
    bot = f"{sys.executable} -m sample_bots.random_bot"
    lineup = ["--no-samples", *[a for i in range(4) for a in ("--bot", f"r{i}={bot}")]]
    done = arena("tournament", "--deals", "independent", "--rounds", "2", "--games", "4", "--seed", "6", *lineup,
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "4 games, independent deals, seed 6." in done.stdout
    (stored,) = Store(str(tmp_path / "arena.db")).list_tournaments()
    assert stored.settings["deals"] == "independent"
    store = Store(str(tmp_path / "arena.db"))
    assert len({store.load_match(m.match_id).seed for m in store.list_matches(tournament_id=stored.id)}) == 4
    listed = arena("tournaments", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, row = [line for line in listed.stdout.splitlines() if "deals" in line or stored.id in line]
    assert "deals" in header and "independent" in row
    # Resuming a finished tournament shows its board and starts no bot.
    logs = sorted((tmp_path / "arena-logs" / stored.id).glob("*.log"))
    before = [log.stat().st_mtime_ns for log in logs]
    resumed = arena("tournament", "--resume", stored.id, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "already complete" in resumed.stderr and "leaderboard" in resumed.stdout
    assert "Resuming" not in resumed.stdout and "games played" not in resumed.stdout
    assert [log.stat().st_mtime_ns for log in logs] == before


def test_bench_deals_prints_both_formats_and_their_ratio(tmp_path: Path) -> None:
    done = arena("bench", "deals", "--variant", "extreme", "--games", "8", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["games per format"] == 8
    for deals in ("duplicate", "independent"):
        assert figures[f"place difference, {deals}: standard error"] >= 0
    assert "place: independent games per duplicate game" in figures
    assert list(tmp_path.iterdir()) == []


def test_version_is_the_installed_distributions(tmp_path: Path) -> None:
    from importlib import metadata

    done = arena("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"arena {metadata.version('wizard-arena')}"


def loaded_after(module: str, candidates: tuple[str, ...]) -> list[str]:
    """Which of ``candidates`` a fresh interpreter has loaded after importing ``module``."""
    code = f"import sys, {module}; print(' '.join(m for m in {candidates!r} if m in sys.modules))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=True).stdout.split()


def test_the_command_line_and_the_sdk_start_without_the_heavy_libraries() -> None:
    """Every command pays for what the command line imports before it runs (a bad
    argument's one line too), and every bot for what the SDK imports: numpy, the
    database and grpc come only with the commands that use them, and the version is a
    literal, not a package-metadata lookup (40-65 ms)."""
    assert loaded_after("arena.cli.app", ("numpy", "sqlalchemy", "grpc", "importlib.metadata")) == []
    assert loaded_after("arena.sdk", ("numpy", "sqlalchemy", "importlib.metadata")) == []


def test_benchmarks_refuse_a_database_they_cannot_use_in_one_line(tmp_path: Path) -> None:
    from arena.store import Store

    Store(str(tmp_path / "empty.db")).close()
    done = forked_arena("bench", "web", "--db", "empty.db", "--matches", "10", "--repeat", "1", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "the database holds no classic match to show" in done.stderr and len(done.stderr.splitlines()) == 1
