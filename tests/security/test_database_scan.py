"""The look for databases in a confined bot's folder: it finds another database and its
journal files, and never disturbs the locks of the arena's own (which sits in that folder).

Why the locks matter: closing any descriptor of a file drops every POSIX lock the process
holds on it. A look that opened the arena's database dropped SQLite's locks, and a reader
in another process then truncated the ``-shm`` under the arena's mapping: the arena died
of SIGBUS in the middle of a tournament.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from arena.store import Store
from arena.tournament.bot_files import BotFiles, copy_own_files
from arena.tournament.lineup import databases_in

# SQLite's SHARED lock on a database: a read lock on bytes 0x40000002.. (510 of them),
# which a connection in WAL mode holds as long as it is open.
PROBE = """\
import fcntl, sys
with open(sys.argv[1], "r+b") as file:
    try:
        fcntl.lockf(file, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002)
        print("free")
    except OSError:
        print("held")
"""


def shared_lock(db: Path) -> str:
    """Whether some other process holds SQLite's shared lock on ``db``, asked from a process
    of its own (a lock held by the asker would not count)."""
    return subprocess.run([sys.executable, "-c", PROBE, str(db)], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_look_finds_another_database_with_its_journals_and_leaves_the_arenas_locks_held(tmp_path: Path) -> None:
    other = tmp_path / "data" / "old-arena.db"
    other.parent.mkdir()
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE secrets (seed INTEGER)")
    conn.close()
    with Store(str(tmp_path / "arena.db")) as store:
        store.list_tournaments()
        assert shared_lock(tmp_path / "arena.db") == "held"

        found = databases_in([tmp_path])         # the arena's own database not even named

        assert shared_lock(tmp_path / "arena.db") == "held"
        assert sorted(found) == [other, other.with_name("old-arena.db-journal"),
                                 other.with_name("old-arena.db-shm"), other.with_name("old-arena.db-wal")]


def test_a_bots_copy_leaves_the_arenas_database_and_its_locks_alone(tmp_path: Path) -> None:
    """The arena's database made inside a bot's own folder after the tournament was set up
    (``--db bot/arena.db``): the bot's copy holds neither it nor its journals, and the
    arena keeps its locks."""
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hi')\n")
    files = BotFiles(bot / "bot.py", bot)
    with Store(str(bot / "arena.db")) as store:
        store.list_tournaments()
        assert shared_lock(bot / "arena.db") == "held"

        copy_own_files(files, tmp_path / "copy")

        assert shared_lock(bot / "arena.db") == "held"
    assert sorted(path.name for path in (tmp_path / "copy").iterdir()) == ["bot.py"]
