"""``arena tournament`` and ``arena sprt`` below the terminal: a run checked whole, then
its referee and bots (or the server, or the workers), its saves and its tally of the
stored games. Its lines, progress, board and exit codes are arena.cli.tournament_run's.

Nothing is written before every argument has been checked (arena.tournament.settings):
a bad option leaves no database behind. The run itself is resumable at any point (see
arena.tournament.runner); one process at a time runs a tournament (arena.tournament.lock).

``--workers`` says who plays: 1, this process (one referee, one set of bots); N >= 2,
N ``arena worker`` processes it starts on this machine, each with its own referee and
bots, while it shows one progress line; 0, workers started elsewhere. The default takes
the machine's cores into account (:func:`default_workers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from arena.records import MatchRecord
from arena.stats.sprt import monitor_from
from arena.tournament.lineup import LADDER_BOTS, BotEntry
from arena.tournament.lock import arena_secrets, log_dir_for, resume_command
from arena.tournament.progress import status_text
from arena.tournament.runner import LocalArena, MatchRunner, RemoteArena, RunSummary, Standing
from arena.tournament.sandbox import SandboxMode, find_confinement
from arena.tournament.schedule import ScheduleError
from arena.tournament.settings import (
    DEFAULT_DB,
    TournamentRequest,
    TournamentSettings,
    build_settings,
    finalize_games,
    schedule_of,
)
from arena.tournament.worker import crash_saver, is_complete, saver
from engine import ConfigError, variant

if TYPE_CHECKING:
    from arena.store import Store  # imported where used: the CLI starts without SQLAlchemy

T = TypeVar("T")

WORKERS_ENV = "ARENA_WORKERS"     # --workers when not given
MAX_WORKERS = 256                 # local worker processes: a referee and its bots each
MAX_DEFAULT_WORKERS = 8


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not on this platform
        return os.cpu_count() or 1


def default_workers(cores: int) -> int:
    """Local workers when neither ``--workers`` nor ARENA_WORKERS says: one per two cores
    (a worker's referee takes about one core when it is busy, its bots together about
    as much again: docs/scaling.md), one on up to three cores, at most MAX_DEFAULT_WORKERS
    (each worker starts the whole lineup; a bigger machine asks for more).

    >>> [default_workers(cores) for cores in (1, 2, 3, 4, 6, 8, 16, 64)]
    [1, 1, 1, 2, 3, 4, 8, 8]
    """
    return max(1, min(MAX_DEFAULT_WORKERS, cores // 2))


def workers_for(given: int | None, server: bool, environ: Mapping[str, str] = os.environ) -> int:
    """How many local workers play: ``--workers`` as given, else ARENA_WORKERS, else the
    default for this machine's cores. A tournament on a server (``--server``) is played
    there: one runner here, and an explicit N >= 2 is refused (ConfigError).

    >>> workers_for(None, False, {"ARENA_WORKERS": "3"}), workers_for(0, False, {}), workers_for(None, True, {})
    (3, 0, 1)
    """
    if given is not None:
        if not 0 <= given <= MAX_WORKERS:
            raise ConfigError(f"--workers must be from 0 to {MAX_WORKERS} (got {given})")
        if server and given >= 2:
            raise ConfigError("--workers N starts N local referees with their bots; a tournament on --server is "
                              "played by that server (drop --workers)")
        return given
    if server:
        return 1
    text = environ.get(WORKERS_ENV, "").strip()
    if not text:
        return default_workers(machine_cores())
    if not text.isdigit() or int(text) > MAX_WORKERS:
        raise ConfigError(f"{WORKERS_ENV} must be a whole number from 0 to {MAX_WORKERS} (got {text!r})")
    return int(text)


def workers_phrase(workers: int) -> str:
    """Who plays a local tournament, for its start line.

    >>> workers_phrase(1), workers_phrase(4), workers_phrase(0)
    ('Played by 1 worker.', 'Played by 4 local workers.', 'Played by `arena worker` processes.')
    """
    if workers == 0:
        return "Played by `arena worker` processes."
    return "Played by 1 worker." if workers == 1 else f"Played by {workers} local workers."


def worker_command(tournament_id: str, db: str) -> str:
    """The command that plays a tournament's games beside this one, for the start line of
    ``--workers 0`` (``--db`` only when it is not the default, as in the resume command).

    >>> worker_command("t-abc123", "arena.db")
    'arena worker --tournament t-abc123'
    >>> worker_command("t-abc123", "runs/my arena.db")
    "arena worker --tournament t-abc123 --db 'runs/my arena.db'"
    """
    return f"arena worker --tournament {tournament_id}" + (f" --db {shlex.quote(db)}" if db != DEFAULT_DB else "")


class WorkersEnded(Exception):
    """Every local worker ended while the tournament still had games to play."""

    def __init__(self, workers: int, left: int) -> None:
        super().__init__(f"all {workers} workers ended with {left} game{'' if left == 1 else 's'} left")


@dataclass
class TournamentRun:
    """One run of a tournament by this process (a new one, or a resume)."""

    store: Store
    settings: TournamentSettings
    tournament_id: str
    log_dir: Path
    requested_games: int | None = None       # new runs: --games as given, to re-round after a drop
    games_note: str | None = None            # new runs: how the games were rounded, said once the lineup is final
    optional: frozenset[str] = frozenset()   # new runs: sample bots that may be left out
    created_db: bool = False                 # new runs: this command made the database file
    workers: int = 1                         # 0: only show progress while `arena worker`s play; N: start N
    new: bool = False                        # a new tournament (not --resume)
    complete: bool = False                   # resumed: nothing is left to play
    db: str = DEFAULT_DB


def start_seed(settings: TournamentSettings) -> str:
    """What a run's start line says of the master seed. A seed the organiser gave with
    ``--seed`` is echoed; a drawn one is not: until every game is stored it gives every
    deal away, and a console's output is often kept in a file (``| tee run.log``) that a
    bot may be able to read. It is shown by :func:`finished_seed` once it is spent.

    >>> start_seed(TournamentSettings(seed=12345, seed_given=True))
    ', seed 12345'
    >>> start_seed(TournamentSettings(seed=12345))
    ', a random seed (shown once the tournament has finished)'
    """
    if settings.seed_given:
        return f", seed {settings.seed}"
    return ", a random seed (shown once the tournament has finished)"


def finished_seed(settings: TournamentSettings) -> str:
    """The closing line of a finished tournament (every game stored, or an A/B test
    decided): its master seed, no longer a secret.

    >>> finished_seed(TournamentSettings(seed=12345))
    'Seed 12345 (the tournament is finished: anyone may now reproduce it).'
    """
    return f"Seed {settings.seed} (the tournament is finished: anyone may now reproduce it)."


def resumed_run(req: TournamentRequest) -> TournamentRun:
    """The stored tournament ``--resume`` names, with its own settings; ``complete`` when
    it has nothing left to play."""
    from arena.store import Store

    assert req.resume is not None
    given = req.given_game_options()
    if given:
        raise ConfigError(f"--resume continues a stored tournament with its own settings; drop {', '.join(given)}")
    if "://" not in req.db and not Path(req.db).exists():
        raise ConfigError(f"no arena database at {req.db} (pass the --db the tournament used)")
    store = Store(req.db)
    settings = TournamentSettings.from_dict(store.get_tournament(req.resume).settings)
    if req.command == "sprt" and settings.sprt is None:
        store.close()
        raise ConfigError(f"{req.resume} is a tournament, not an SPRT test: "
                          f"{resume_command(req.resume, req.db)}")
    return TournamentRun(store, settings, req.resume, log_dir_for(req.db, req.resume),
                         complete=is_complete(store, settings, req.resume))


def new_run(req: TournamentRequest, notice: Callable[[str], None]) -> TournamentRun:
    """A new tournament, checked whole (options, lineup, schedule) before it is stored."""
    from arena.store import Store

    if "://" in req.db or Path(req.db).exists():
        Store(req.db).close()  # refuse a foreign database before starting anything (npm, bots)
    else:
        folder = Path(req.db).resolve().parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise ConfigError(f"cannot create {req.db}: {folder} is not a writable directory")
    settings = build_settings(req, notice)
    if not settings.server and settings.sandbox == SandboxMode.BWRAP.value:
        # Confinement required: refuse before anything is written if it cannot be had.
        find_confinement(SandboxMode.BWRAP, settings.bot_limits(), notice)
    created_db = "://" not in req.db and not Path(req.db).exists()
    if settings.server:
        if not req.admin_token:
            raise ConfigError("--server needs the admin token `arena serve` printed: "
                              "--admin-token or ARENA_ADMIN_TOKEN")
        settings.bots = [BotEntry(n, []) for n in asyncio.run(_remote_bots(settings, req.admin_token))]
    rounding: list[str] = []     # said by the caller once the lineup is final: a sample bot may yet drop out
    try:
        finalize_games(settings, req.games, rounding.append)
    except ScheduleError as error:
        raise ScheduleError(f"{error}{more_bots(settings, req)}") from None
    store = Store(req.db)
    tournament_id = store.create_tournament(settings.to_dict(), settings.seed)
    store.put_schedule(tournament_id, schedule_of(settings))     # the rows workers claim from
    run = TournamentRun(store, settings, tournament_id, log_dir_for(req.db, tournament_id),
                        games_note=rounding[0] if rounding else None, created_db=created_db, new=True)
    if not settings.server:
        run.requested_games = req.games
        # The default sample bots are optional: one that cannot start is left out. A bot
        # the user named (--bot, an SPRT's candidate and baseline) is not, and neither is
        # any bot of a resumed (fixed) lineup.
        named = [*req.bots, *(t for t in (req.candidate, req.baseline) if t is not None)]
        run.optional = frozenset(settings.bot_names()) - {t.partition('=')[0].strip() for t in named}
    return run


def more_bots(settings: TournamentSettings, req: TournamentRequest) -> str:
    """For the error of a lineup smaller than its tables: the ways to a big enough one,
    as the end of that one line ("" when the lineup is big enough: another error).

    >>> from engine import GameConfig
    >>> settings = TournamentSettings(bots=[BotEntry(n, []) for n in "abc"], game=GameConfig(players=6))
    >>> more_bots(settings, TournamentRequest(db="arena.db"))
    ': add bots with --bot NAME=COMMAND (repeatable), or --players 3'
    """
    have = len(settings.bots)
    if have >= settings.players:
        return ""
    smaller = f", or --players {have}" if have >= variant(settings.variant).min_players else ""
    if settings.server:
        return f": the lineup is the bots connected to {settings.server}; connect more{smaller}"
    option = "--opponent" if settings.sprt is not None else "--bot"
    ways = [f"add bots with {option} NAME=COMMAND (repeatable)"]
    # The ladder adds its bots to the sample bots, which are in the lineup unless left out or replaced.
    samples_in = not req.no_samples and req.lineup in (None, "samples") and not (settings.sprt and req.bots)
    if samples_in and have + len(LADDER_BOTS) >= settings.players:
        ways.append("--lineup ladder (the sample bots, the learned bot and the search bot)")
    return ": " + ", or ".join(ways) + smaller


def discard(run: TournamentRun, db: str, keep_log: bool) -> None:
    """Remove a new tournament that never got going: its rows, its log folder (unless
    ``keep_log``: the error or a note points at a bot's log) and the database file if
    this command made it."""
    run.store.discard_tournament(run.tournament_id)
    if not keep_log:
        shutil.rmtree(run.log_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            run.log_dir.parent.rmdir()      # arena-logs/, when it holds nothing else
    if run.created_db:
        run.store.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(db + suffix).unlink(missing_ok=True)


# ---------------------------------------------------------------------- playing


def local_arena(run: TournamentRun, notice: Callable[[str], None]) -> LocalArena:
    """This run's referee and bots (an optional bot that cannot start is left out)."""
    return LocalArena(run.settings, run.log_dir, optional=run.optional, notice=notice, hidden=arena_secrets(run.db),
                      on_crash=crash_saver(run.store), tournament_id=run.tournament_id)


def leave_out_dropped(run: TournamentRun, local: LocalArena) -> None:
    """Schedule a new tournament again without the optional bots that could not start; its
    note on the games' rounding is then the one for the lineup that plays."""
    settings = run.settings
    if local.dropped:
        settings.bots = [b for b in settings.bots if b.name not in local.dropped]
        rounding: list[str] = []
        finalize_games(settings, run.requested_games, rounding.append)
        run.games_note = rounding[0] if rounding else None
        run.store.update_tournament_settings(run.tournament_id, settings.to_dict())
        run.store.replace_schedule(run.tournament_id, schedule_of(settings))


def saver_for(run: TournamentRun, runner: MatchRunner) -> Callable[[MatchRecord], Awaitable[bool]]:
    """``save(record)`` for this run's worker: whether the game counts as played here.

    A game of a tournament on a server (``--server``) is stored by that server too. When
    the server's database is this one (``arena serve --db`` the same file or URL, as the
    docs recommend), the local save finds the game already there; it is this run's game
    all the same when the server said it stored it (:meth:`RemoteArena.stored_there`)."""
    save = saver(run.store)
    if not isinstance(runner, RemoteArena):
        return save

    async def save_remote(record: MatchRecord) -> bool:
        return await save(record) or runner.stored_there(record.match_id)

    return save_remote


class StoredGames:
    """What the progress line shows of a tournament's stored games, whoever played them,
    kept up to date by reading only the games stored since the last look: a tournament
    of 100,000 games is not reread every second."""

    def __init__(self, store: Store, tournament_id: str) -> None:
        self.store, self.tournament_id = store, tournament_id
        self.games: dict[int, tuple[tuple[str, ...], tuple[int, ...]]] = {}   # slot: bots, places
        self.summary = standings_of([])

    def refresh(self) -> None:
        new = self.store.finished_game_indexes(self.tournament_id) - self.games.keys()
        if not new:
            return
        matches = self.store.tournament_matches(self.tournament_id, new)
        for match in matches:
            if match.game_index is not None:     # a tournament's match has its slot
                self.games[match.game_index] = (tuple(match.bots), tuple(match.places))
        standings_of(matches, self.summary)

    def status(self, settings: TournamentSettings) -> str:
        """The end of the progress line: the leader and the faults, or an A/B test's state."""
        if settings.sprt is None:
            return status_text(self.summary)
        return monitor_from(settings.sprt, settings.players,
                            ((i, bots, places) for i, (bots, places) in self.games.items())).line()


def standings_of(stored: list[Any], summary: RunSummary | None = None) -> RunSummary:
    """The progress line's tally (games, places, faults) of stored matches, whoever played
    them; added to ``summary`` when given."""
    if summary is None:
        summary = RunSummary(0, 0, 0, 0.0, defaultdict(Standing))
    for match in stored:
        summary.add(match.bots, match.places, match.faults)
    return summary


async def sigterm_as_ctrl_c(work: Awaitable[T]) -> T:
    """Run ``work`` so that ``kill PID`` (SIGTERM) stops it as cleanly as Ctrl-C: the work
    is cancelled (the bots are ended, the tournament is marked interrupted and can be
    resumed) and KeyboardInterrupt is raised, as ``asyncio.run`` does on Ctrl-C.

    The work is cancelled here rather than by re-sending the signal as SIGINT: a program
    started in the background by a shell script (``arena tournament ... &``, nohup)
    inherits SIGINT ignored, and then a SIGINT would do nothing at all."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    terminated = False

    def terminate() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        return await task
    except asyncio.CancelledError:
        if terminated:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def _remote_bots(settings: TournamentSettings, admin_token: str) -> list[str]:
    async with RemoteArena(settings.server or "", admin_token, settings.client_tls()) as remote:
        return await remote.connected_bots(settings.variant)
