"""The organiser's small traps, each with real parts: a real `arena serve` and bot
processes, a real SQLite file, the CLI as its own process, the viewer's own script run
by Node.js.

- `arena tournament --server` on the server's own database counts the games it played;
- `arena leaderboard` and `crosstable` without --variant show the variants that have games;
- every command leaves the database whole in its one file (the WAL checkpointed at close);
- the missing-driver message (tests/cli/test_cli.py) and the PostgreSQL setup (docs/scaling.md);
- a lineup too small for its tables names the ways to a bigger one;
- `arena replay` always verifies: --verify is accepted, hidden, and changes nothing;
- the match viewer says the trump in words ("none", who chose it after a Wizard).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from factories import ROOT
from factories.records import played

from arena.records import MatchRecord
from arena.store import Store
from arena.tournament.lineup import node_ready
from arena.web.viewer import steps
from engine import new_game

RANDOM_BOT = ROOT / "tests" / "bots" / "random_bot.py"
VIEWER_JS = ROOT / "arena" / "web" / "static" / "viewer.js"
ENV = {**os.environ, "COLUMNS": "200", "GRPC_VERBOSITY": "ERROR"}


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env or ENV)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command prints, after checking it is one line and exit code 2."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    return lines[0]


def random_bots(names: list[str]) -> list[str]:
    """``--bot`` options: each name a random sample bot."""
    return [arg for name in names for arg in ("--bot", f"{name}={sys.executable} -m sample_bots.random_bot")]


# --------------------------------------------------------------------------------------
# 1. A tournament on a server that stores into the same database
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_tournament_on_the_servers_own_database_counts_the_games_played(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    names = ["sv-a", "sv-b", "sv-c"]
    with Store(str(db)) as store:
        tokens = {name: store.register_bot(name) for name in names}
    admin = "traps-admin-" + os.urandom(8).hex()
    env = {**ENV, "ARENA_ADMIN_TOKEN": admin}
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", "--db", str(db), "--port", "0", "--quiet"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        first = server.stdout.readline() if server.stdout else ""
        found = re.search(r"listening on \S+:(\d+)", first)
        assert found, f"arena serve did not start: {first!r}"
        address = f"127.0.0.1:{found.group(1)}"
        bots = [subprocess.Popen([sys.executable, str(RANDOM_BOT), "--arena", address, "--token", tokens[name],
                                  "--name", name], cwd=tmp_path, env=ENV, stdout=log, stderr=log)
                for name in names]
        wait_for_bots(address, admin, set(names))
        done = arena("tournament", "--server", address, "--players", "3", "--rounds", "1", "--games", "6",
                     "--db", str(db), cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        # The server stored every game first; they are this run's games all the same.
        assert re.search(r"^6 games played in [\d.]+ s, \d+ faults?\. Stored in ", done.stdout, re.M), done.stdout
        assert "already stored" not in done.stdout
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            bot.wait(10)
        server.terminate()
        server.wait(10)
        log.close()
    with Store(str(db)) as store:
        (info,) = store.list_tournaments()
        assert info.status == "finished" and len(store.finished_game_indexes(info.id)) == 6


def wait_for_bots(address: str, admin: str, names: set[str]) -> None:
    from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
    from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ArenaStub(channel)
        deadline = time.monotonic() + 30
        while True:
            reply = stub.ListBots(pb.ListBotsRequest(), timeout=5, metadata=(("authorization", f"Bearer {admin}"),))
            if {b.name for b in reply.bots} >= names:
                return
            assert time.monotonic() < deadline, f"bots not connected: {names - {b.name for b in reply.bots}}"
            time.sleep(0.05)


# --------------------------------------------------------------------------------------
# 2. Boards without --variant
# --------------------------------------------------------------------------------------


def test_boards_without_a_variant_show_every_variant_that_has_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from arena.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        """The CLI in this process (as `arena ...` would run it): exit code, stdout, stderr."""
        with pytest.raises(SystemExit) as done:
            main([*args, "--db", "arena.db"])
        captured = capsys.readouterr()
        return int(done.value.code or 0), captured.out, captured.err

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "arena.db"
    Store(str(db)).close()
    for command in ("leaderboard", "crosstable"):
        assert run(command) == (0, "", "no completed matches in arena.db\n")
    # A script still gets a well-formed (empty) document.
    assert json.loads(run("leaderboard", "--format", "json")[1])["rows"] == []

    with Store(str(db)) as store:
        for i in range(3):
            store.save_match(played(f"x{i}", "extreme", ["ann", "bob", "cy"], seed=i))
    for command in ("leaderboard", "crosstable"):
        code, out, err = run(command)
        assert (code, err) == (0, ""), err
        assert f"Wizard extreme {command}" in out and "classic" not in out, out
        assert {"ann", "bob", "cy"} <= set(out.split())
    board = json.loads(run("leaderboard", "--format", "json")[1])
    assert board["variant"] == "extreme" and {row["bot"] for row in board["rows"]} == {"ann", "bob", "cy"}

    with Store(str(db)) as store:
        for i in range(3):
            store.save_match(played(f"c{i}", "classic", ["ann", "bob", "dee"], seed=i))
    for command in ("leaderboard", "crosstable"):
        code, out, _ = run(command)
        assert code == 0 and out.index(f"Wizard classic {command}") < out.index(f"Wizard extreme {command}")
        markdown = run(command, "--format", "md")[1]
        assert [line for line in markdown.splitlines() if line.startswith("# ")] == [
            f"# Wizard classic {command}", f"# Wizard extreme {command}"]
        # One board per document: which one is the user's to say.
        assert run(command, "--format", "json") == (2, "", (
            "arena: error: arena.db holds completed matches of classic and extreme: pass --variant "
            "(--format json is one board)\n"))
        out = run(command, "--variant", "extreme")[1]
        assert "Wizard extreme" in out and "classic" not in out


# --------------------------------------------------------------------------------------
# 3. The database whole in its one file
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_after_a_tournament_the_database_file_alone_holds_it(tmp_path: Path) -> None:
    done = arena("tournament", "--rounds", "2", "--games", "3", "--players", "3", "--no-samples", "--seed", "5",
                 *random_bots(["r1", "r2", "r3"]), "--db", "arena.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    wal = tmp_path / "arena.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(tmp_path / "arena.db", copy / "arena.db")       # the file alone: no -wal, no -shm
    with Store(str(copy / "arena.db")) as store:
        (info,) = store.list_tournaments()
        assert info.status == "finished"
        assert store.finished_game_indexes(info.id) == {0, 1, 2}
        assert {m.match_id for m in store.list_matches(tournament_id=info.id)} == {
            f"{info.id}-{i:05d}" for i in range(3)}


def test_the_last_store_of_a_file_checkpoints_it_and_a_reader_is_not_held_up(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    wal = tmp_path / "arena.db-wal"
    first, second = Store(str(path)), Store(f"sqlite:///{path}")        # one file, named two ways
    # Another process's connection, idle after a read, as `arena web` keeps one: SQLite's
    # own checkpoint at the last close never comes while it is open.
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        assert reader.execute("SELECT count(*) FROM matches").fetchone() == (0,)
        first.save_match(played("m0", "classic", ["ann", "bob", "cy"], seed=1))
        second.list_matches()
        first.close()
        assert wal.stat().st_size > 0, "another store of the file is open: not checkpointed yet"
        first.close()                                                    # twice: nothing more
        second.close()
        assert wal.stat().st_size == 0
        assert _matches_in_file_alone(path, tmp_path / "a") == 1

        # A reader in the middle of a read keeps an older snapshot: the checkpoint cannot
        # finish, says busy, and waits for nobody.
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM matches").fetchone() == (1,)
        store = Store(str(path))
        store.save_match(played("m1", "classic", ["ann", "bob", "cy"], seed=2))
        store.close()
        # The checkpoint reported busy and left the WAL, still valid, to the reader.
        assert wal.stat().st_size > 0, "the checkpoint emptied the WAL under the reader"
        assert reader.execute("SELECT count(*) FROM matches").fetchone() == (1,)   # its snapshot, unharmed
        reader.execute("COMMIT")
        assert reader.execute("SELECT count(*) FROM matches").fetchone() == (2,)
        Store(str(path)).close()                                         # now nobody is in the way
        assert wal.stat().st_size == 0
        assert _matches_in_file_alone(path, tmp_path / "b") == 2
    finally:
        reader.close()


def _matches_in_file_alone(path: Path, folder: Path) -> int:
    folder.mkdir()
    shutil.copy(path, folder / path.name)
    with Store(str(folder / path.name)) as store:
        return store.match_count()


# --------------------------------------------------------------------------------------
# 5. Too few bots for the tables
# --------------------------------------------------------------------------------------


def test_too_few_bots_for_the_tables_names_the_ways_to_more(tmp_path: Path) -> None:
    # Counting the sample bots installs the Node bot's packages on a machine's first run,
    # with a note of its own before the refusal: have that done first.
    node_ready(lambda _: None)
    line = one_error_line(arena("tournament", "--players", "6", "--db", "t.db", cwd=tmp_path))
    found = re.fullmatch(r"arena: error: 6-player tables need at least 6 bots \(the lineup has (\d)\): (.*)", line)
    assert found, line
    have, ways = int(found.group(1)), found.group(2)
    # The sample bots are 4, and 5 where Node.js runs the Node one; the ladder adds the learned and
    # search bots.
    ladder = ", or --lineup ladder (the sample bots, the learned bot and the search bot)"
    assert ways == ("add bots with --bot NAME=COMMAND (repeatable)" + (ladder if have + 2 >= 6 else "")
                    + f", or --players {have}")
    alone = one_error_line(arena("tournament", "--no-samples", *random_bots(["r1", "r2"]), "--db", "t.db",
                                 cwd=tmp_path))
    assert alone == ("arena: error: 4-player tables need at least 4 bots (the lineup has 2): "
                     "add bots with --bot NAME=COMMAND (repeatable)")
    assert list(tmp_path.iterdir()) == []       # refused before anything was written


# --------------------------------------------------------------------------------------
# 6. replay always verifies
# --------------------------------------------------------------------------------------


def test_replay_verifies_with_or_without_the_old_flag(tmp_path: Path) -> None:
    with Store(str(tmp_path / "arena.db")) as store:
        store.save_match(played("m0", "classic", ["ann", "bob", "cy"], seed=3))
    plain, flagged = (arena("replay", "m0", *extra, "--db", "arena.db", cwd=tmp_path) for extra in ([], ["--verify"]))
    assert plain.returncode == flagged.returncode == 0, plain.stderr + flagged.stderr
    assert plain.stdout == flagged.stdout and plain.stdout.startswith("ok ")
    helped = arena("replay", "--help", cwd=tmp_path).stdout
    assert "--verify" not in helped.replace("old --verify flag", "") and "always" in helped


# --------------------------------------------------------------------------------------
# 7. The trump in words, in the match viewer
# --------------------------------------------------------------------------------------

# Runs the page's own script in Node.js with the two document calls it makes outside the
# table drawing; prints, step by step, the trump line it would draw (or null).
TRUMP_LINES = """
const vm = require("vm"), fs = require("fs");
globalThis.document = {getElementById: () => null, addEventListener: () => {}};
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"));
const data = JSON.parse(fs.readFileSync(0, "utf8"));
const lines = data.steps.map((_, k) => {
  const s = stateAt(data.steps, k, data.bots.length);
  return s.trump ? trumpText(s.trump, s.trumpChosen, data.bots) : null;
});
console.log(JSON.stringify(lines));
"""


def wizard_turned_up(bots: list[str]) -> MatchRecord:
    """The first whole game (by seed) in which a Wizard is turned up: the dealer chooses the trump."""
    for seed in range(100):
        record = played(f"g{seed}", "classic", bots, seed, rounds=None)   # a whole game
        game = new_game(record.config)
        for seat, action in record.actions:
            game.apply(seat, action)
        if any(e["type"] == "trump_chosen" for e in game.events_for(None, 0)[0]):
            return record
    raise AssertionError("no Wizard turned up in 100 games")


def test_the_viewer_says_the_trump_in_words() -> None:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed: CI must run the viewer's script")
        pytest.skip("node is not installed")
    bots = ["ann", "bob", "cy"]
    viewer_steps = steps(wizard_turned_up(bots))
    data = {"bots": bots, "steps": [{"events": step.events} for step in viewer_steps]}
    done = subprocess.run([node, "-e", TRUMP_LINES, str(VIEWER_JS)], input=json.dumps(data), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines: list[str | None] = json.loads(done.stdout)
    assert len(lines) == len(viewer_steps)

    def step_of(kind: str, **fields: Any) -> tuple[int, dict[str, Any]]:
        return next((k, e) for k, step in enumerate(viewer_steps) for e in step.events
                    if e["type"] == kind and all(e.get(key) == value for key, value in fields.items()))

    # A Wizard turned up: the dealer chooses, then the line says who chose which suit.
    k, chosen = step_of("trump_chosen")
    assert lines[k - 1] is not None and re.fullmatch(r"the dealer chooses \(W\d turned up\)", lines[k - 1] or "")
    seat = chosen["seat"]
    assert re.fullmatch(rf"{chosen['suit']}, chosen by seat {seat} \({bots[seat]}\) \(W\d turned up\)", lines[k] or "")
    # The last round deals every card: nothing is turned up, and there is no trump.
    k, _ = step_of("trump", card=None)
    assert lines[k] == lines[-1] == "none (every card is dealt: nothing turned up)"
    # Every other round: a suit, or none for a Jester; never the old "no trump" wording.
    forms = re.compile(r"(blue|green|red|yellow) \([bgry]\d+ turned up\)|none \(J\d turned up\)|"
                       r"the dealer chooses .*|.*, chosen by .*|none \(every card .*")
    assert all(line is None or forms.fullmatch(line) for line in lines), [line for line in lines if line]
