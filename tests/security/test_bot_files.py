"""What a confined bot may read of the disk, tested as an attacker would: real
``arena tournament`` runs, real bubblewrap, real files (arena.tournament.bot_files).

A bot named by a lone file in the organiser's working folder (the README's own usage)
sees that file and nothing beside it: not a ``.env``, not ``arena serve``'s TLS key, not
a ``.sql`` dump, not a database five folders down, not a helper module. A bot in a
folder of its own sees that folder (its helper imports). A path named on the command
line is readable, its sibling is not. A bot in a mode-700 folder plays under a root
arena. Bots run from a copy: a file changed after the tournament was made stops a
resume, and the copy's stamp is stored with the tournament.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from factories import TEST_BOTS
from factories.bots import needs_bwrap

from arena.store import Store
from arena.tournament.bot_limits import BotLimits
from arena.tournament.lineup import BotProcesses, BotStartError, parse_bot_option
from arena.tournament.sandbox import SandboxMode, find_confinement

PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"
SNOOP = (TEST_BOTS / "snoop_bot.py").read_text()
REPO = Path(__file__).resolve().parents[2]


pytestmark = [pytest.mark.slow, needs_bwrap()]


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def small_tournament(cwd: Path, *bots: str, snoop: dict[str, list[str]] | None = None,
                     imports: dict[str, str] | None = None,
                     more: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """A 3-game tournament of ``bots`` and random bots to fill three seats, confined, from
    ``cwd``; each snoop bot gets what to try (by its name) through --bot-env."""
    options = [arg for bot in bots for arg in ("--bot", bot)]
    options += [arg for i in range(max(0, 3 - len(bots))) for arg in ("--bot", f"r{i}={RANDOM}")]
    for name, paths in (snoop or {}).items():
        options += ["--bot-env", f"SNOOP_PATHS_{name}={':'.join(paths)}"]
    for name, module in (imports or {}).items():
        options += ["--bot-env", f"SNOOP_IMPORT_{name}={module}"]
    return arena("tournament", "--rounds", "2", "--players", "3", "--games", "3", "--no-samples", "--sandbox", "bwrap",
                 *options, "--db", "arena.db", *more, cwd=cwd)


def snooped(cwd: Path, name: str = "mine") -> dict[str, str]:
    """What the snoop bot said of each path (READ, DENIED, IMPORTED, NO-IMPORT), from its log."""
    (log,) = (cwd / "arena-logs").glob(f"*/{name}.log")
    said = {}
    for line in log.read_text().splitlines():
        if line.startswith("SNOOP "):
            _, verdict, target = line.split(" ", 3)[:3]
            said[target] = verdict
    return said


def organiser_folder(root: Path) -> Path:
    """An organiser's working folder as it is in real life: the bot beside secrets."""
    folder = root / "organiser"
    (folder / "arena-tls").mkdir(parents=True)
    (folder / "mine.py").write_text(SNOOP)
    (folder / "helper.py").write_text("VALUE = 1\n")
    (folder / ".env").write_text("ARENA_ADMIN_TOKEN=organiser-secret\n")
    (folder / "arena-tls" / "server-key.pem").write_text("-----BEGIN PRIVATE KEY-----\nsecret\n")
    (folder / "dump.sql").write_text("INSERT INTO tournaments VALUES ('t-1', 1234567);\n")
    deep = folder / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    with sqlite3.connect(deep / "old.db") as db:
        db.execute("CREATE TABLE seeds (seed INTEGER)")
        db.execute("INSERT INTO seeds VALUES (1234567)")
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


SECRETS = [".env", "arena-tls/server-key.pem", "arena-tls", "dump.sql", "a/b/c/d/e/old.db", "helper.py", "."]


def test_each_bot_reads_its_own_files_and_the_paths_it_names_alone(tmp_path: Path) -> None:
    """One confined tournament from an organiser's folder: ``mine``, a lone file there as
    the README runs it, reads nothing beside it; ``own``, in a mode-700 folder of its own,
    reads that folder (its helper imports) and the data file it names, not that file's
    sibling nor anything of the organiser's folder. Both copies are stamped."""
    folder = organiser_folder(tmp_path)
    own = folder / "bots" / "own"
    own.mkdir(parents=True)
    (own / "bot.py").write_text(SNOOP)
    (own / "helper.py").write_text("VALUE = 1\n")
    own.chmod(0o700)                          # a private folder, as mktemp -d makes: no chmod needed
    data = tmp_path / "data" / "x"
    data.mkdir(parents=True)
    (data / "model.bin").write_bytes(b"weights")
    (data / "sibling.bin").write_bytes(b"someone else's")
    done = small_tournament(folder, "mine=./mine.py", f"own=bots/own/bot.py --model {data / 'model.bin'}",
                            snoop={"mine": ["mine.py", *SECRETS],
                                   "own": ["helper.py", str(data / "model.bin"), str(data / "sibling.bin"),
                                           "../../.env", "../../arena-tls/server-key.pem"]},
                            imports={"mine": "helper", "own": "helper"})
    assert done.returncode == 0, done.stderr
    said = snooped(folder, "mine")
    assert said.pop("mine.py") == "READ"
    assert said.pop("helper") == "NO-IMPORT"
    assert said.pop(".") == "READ"         # the folder it runs in: an empty folder but for its program
    assert said == {path: "DENIED" for path in SECRETS if path != "."}, said
    log = next((folder / "arena-logs").glob("*/mine.log")).read_text()
    assert "none of the files beside it" in log      # it says why, for the author's sake
    assert snooped(folder, "own") == {"helper.py": "READ", str(data / "model.bin"): "READ",
                                      str(data / "sibling.bin"): "DENIED", "../../.env": "DENIED",
                                      "../../arena-tls/server-key.pem": "DENIED", "helper": "IMPORTED"}
    (tournament,) = Store(str(folder / "arena.db")).list_tournaments()
    stamps = {bot["name"]: bot["stamp"] for bot in tournament.settings["bots"] if "stamp" in bot}
    assert stamps["mine"]["files"] == 1 and stamps["own"]["files"] == 2
    assert all(len(stamp["sha256"]) == 64 for stamp in stamps.values())


def test_the_same_bot_unconfined_reads_them_all(tmp_path: Path) -> None:
    """The attacks are real: without the sandbox every secret is read."""
    folder = organiser_folder(tmp_path)
    done = small_tournament(folder, "mine=./mine.py", snoop={"mine": SECRETS}, imports={"mine": "helper"},
                            more=("--sandbox", "none"))
    assert done.returncode == 0, done.stderr
    said = snooped(folder, "mine")
    assert said.pop("helper") == "IMPORTED"
    assert set(said.values()) == {"READ"}, said


def test_a_bot_whose_files_changed_since_the_tournament_was_made_does_not_start(tmp_path: Path) -> None:
    """What a resume meets when the bot's files changed: a one-line refusal, not other code
    playing under the tournament's name."""
    bot = tmp_path / "mine"
    bot.mkdir()
    (bot / "bot.py").write_text(SNOOP)
    entry = parse_bot_option(f"mine={bot / 'bot.py'}")
    (bot / "bot.py").write_text(SNOOP + "\n# changed\n")
    confinement = find_confinement(SandboxMode.BWRAP, BotLimits(), lambda line: None)
    processes = BotProcesses(tmp_path / "logs", confinement, tmp_path / "referee" / "referee.sock")
    try:
        with pytest.raises(BotStartError, match="its files changed since the tournament started"):
            asyncio.run(processes.start(entry, "127.0.0.1:1", "token", 1))
    finally:
        processes.remove_copies()


def test_sample_bots_play_whatever_a_checkout_names(tmp_path: Path) -> None:
    """--bot heur=sample_bots/heuristic_bot.py from a checkout: the built-in sample bots
    still read their own package files, and every one of them plays."""
    if not (REPO / "sample_bots" / "heuristic_bot.py").is_file():
        pytest.skip("not run from a checkout")
    db = tmp_path / "arena.db"
    done = arena("tournament", "--rounds", "2", "--games", "8", "--sandbox", "bwrap", "--db", str(db),
                 "--bot", "heur=sample_bots/heuristic_bot.py", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "left out" not in done.stdout + done.stderr
    board = arena("leaderboard", "--format", "json", "--db", str(db), cwd=tmp_path)
    rows = json.loads(board.stdout)["rows"]
    assert {"heur", "random", "heuristic", "greedy", "cautious"} <= {row["bot"] for row in rows}
    (tournament,) = Store(str(db)).list_tournaments()
    assert not Store(str(db)).crashes(tournament_id=tournament.id)
