"""One runner per tournament: its log folder, its run lock, the status to show, and the
command that resumes it.

A local tournament keeps its bots' output and a lock file in ``arena-logs/ID`` beside
the database. The process running it holds an exclusive ``flock`` on that file, which
the OS releases when the process ends, however it ends: so a second ``arena
tournament --resume`` is refused while the first runs, a killed run never blocks its
resume, and ``arena tournaments`` can tell a tournament stored as running whose
process died (kill -9, a crash, a power cut) from one that is running.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import IO, TYPE_CHECKING

from arena.tournament.settings import DEFAULT_DB
from engine import ConfigError

if TYPE_CHECKING:    # only for the type: importing the store brings SQLAlchemy
    from arena.store import TournamentInfo


def log_dir_for(db: str, tournament_id: str) -> Path:
    """Where a local tournament keeps its bots' output and its run lock: ``arena-logs/ID``
    beside the database file (in the working folder for a database URL).

    >>> log_dir_for("postgresql://host/arena", "t-1")
    PosixPath('arena-logs/t-1')
    """
    if "://" in db:
        return Path("arena-logs") / tournament_id
    return Path(db).resolve().parent / "arena-logs" / tournament_id


def arena_secrets(db: str) -> list[Path]:
    """What no bot the arena starts may see: the database file with its journal files
    (they hold the master seed and every deal) and the ``arena-logs`` folder (every
    bot's output).

    >>> [p.name for p in arena_secrets("/srv/runs/arena.db")]
    ['arena.db', 'arena.db-wal', 'arena.db-shm', 'arena.db-journal', 'arena-logs']
    """
    logs = log_dir_for(db, "-").parent
    if "://" in db:
        return [logs]
    path = Path(db).resolve()
    return [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")] + [logs]


def lock_held(log_dir: Path) -> bool | None:
    """Whether some process holds the run lock of the tournament at ``log_dir`` right now
    (None where it cannot be told: no lock file, or no flock on this platform). A
    tournament stored as running whose lock nobody holds was interrupted."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        handle = open(log_dir / ".lock")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def hold_lock(log_dir: Path, tournament_id: str) -> IO[str] | None:
    """One runner per tournament: an exclusive lock on a file in its log folder, which the
    OS releases when this process ends, however it ends (so a killed run never blocks
    its resume). Returns the open file that holds it; None where there is no flock."""
    try:
        import fcntl
    except ImportError:    # not on this platform: no guard
        return None
    log_dir.mkdir(parents=True, exist_ok=True)
    handle = open(log_dir / ".lock", "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ConfigError(f"tournament {tournament_id} is being run by another arena process right now") from None
    return handle


REFEREE_FILE = "referee"   # in the log folder: the address of a local run's referee


def note_referee(log_dir: Path, address: str) -> None:
    """Say where a local run's referee listens, so that ``arena web`` can show its running
    matches live (through the referee's public calls). Read only while the run holds its
    lock: a file left by a killed run points at nothing."""
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / REFEREE_FILE).write_text(address + "\n")


def forget_referee(log_dir: Path) -> None:
    """That referee is gone: no live matches there (:func:`note_referee`)."""
    (log_dir / REFEREE_FILE).unlink(missing_ok=True)


def referee_addresses(info: TournamentInfo, db: str) -> list[str]:
    """The referees playing a running tournament's matches: the ``--server`` it was given,
    else the one its local run noted (:func:`note_referee`) and those of the ``arena
    worker`` processes it started (``--workers N``, each in a ``worker-*`` folder of its
    log folder); none when the tournament is not running (or its run is gone).

    >>> from datetime import UTC, datetime
    >>> from arena.store import TournamentInfo
    >>> referee_addresses(TournamentInfo("t", datetime.now(UTC), {}, 7, "finished"), "arena.db")
    []
    """
    if shown_status(info, db) != "running":
        return []
    server = info.typed_settings.server
    if server:
        return [server]
    log_dir = log_dir_for(db, info.id)
    found = []
    for note in [log_dir / REFEREE_FILE, *sorted(log_dir.glob(f"worker-*/{REFEREE_FILE}"))]:
        try:
            address = note.read_text().strip()
        except OSError:
            continue
        if address:
            found.append(address)
    return found


def shown_status(info: TournamentInfo, db: str) -> str:
    """The status to show: ``interrupted`` for a tournament stored as running whose run
    lock nobody holds (its process died without saying so: kill -9, a crash, a power
    cut); otherwise the stored one. ``db`` is the database as given on the command
    line: a local run keeps its lock beside it. Reads the lock only, never writes.
    """
    if info.status != "running":
        return info.status
    # None (no lock file, no flock on this platform) cannot tell: keep what is stored.
    return "interrupted" if lock_held(log_dir_for(db, info.id)) is False else "running"


def resume_command(tournament_id: str, db: str, remote: bool = False) -> str:
    """The command that finishes this tournament (``--db`` only when it is not the default;
    a tournament on a running server needs its admin token again).

    >>> resume_command("t-abc123", "runs/my arena.db")
    "arena tournament --resume t-abc123 --db 'runs/my arena.db'"
    >>> print(resume_command("t-abc123", "arena.db", remote=True))
    arena tournament --resume t-abc123 (with the server's admin token: --admin-token or ARENA_ADMIN_TOKEN)
    """
    return (f"arena tournament --resume {tournament_id}" + (f" --db {shlex.quote(db)}" if db != DEFAULT_DB else "")
            + (" (with the server's admin token: --admin-token or ARENA_ADMIN_TOKEN)" if remote else ""))
