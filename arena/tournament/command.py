"""``arena tournament``: validate everything, then start, play, store and show.

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
import shutil
import signal
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console

from arena.records import MatchRecord
from arena.results.sprt import stored_monitor
from arena.stats.sprt import monitor_from, status_line, verdict
from arena.tournament.lineup import LADDER_BOTS, BotEntry, BotStartError
from arena.tournament.lock import arena_secrets, hold_lock, log_dir_for, resume_command
from arena.tournament.progress import progress_bar, status_text
from arena.tournament.runner import LocalArena, MatchRunner, RemoteArena, RunSummary, Standing
from arena.tournament.sandbox import SandboxError, SandboxMode, find_confinement
from arena.tournament.schedule import ScheduleError
from arena.tournament.settings import (
    DEFAULT_DB,
    TournamentRequest,
    TournamentSettings,
    build_settings,
    finalize_games,
    schedule_of,
)
from arena.tournament.worker import LocalWorkers, crash_saver, decided, is_complete, play_claimed, saver
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


class WorkersEnded(Exception):
    """Every local worker ended while the tournament still had games to play."""

    def __init__(self, workers: int, left: int) -> None:
        super().__init__(f"all {workers} workers ended with {left} game{'' if left == 1 else 's'} left")


@dataclass
class Run:
    """One run of a tournament by this process (a new one, or a resume)."""

    store: Store
    settings: TournamentSettings
    tournament_id: str
    log_dir: Path
    requested_games: int | None = None       # new runs: --games as given, to re-round after a drop
    optional: frozenset[str] = frozenset()   # new runs: sample bots that may be left out
    created_db: bool = False                 # new runs: this command made the database file
    workers: int = 1                         # 0: only show progress while `arena worker`s play; N: start N
    new: bool = False                        # a new tournament (not --resume)
    db: str = DEFAULT_DB


# ---------------------------------------------------------------------- the command


def run_tournament_command(req: TournamentRequest, console: Console, err_console: Console) -> None:
    """The whole command: a new tournament (or ``--resume``), played with a progress
    line, then its leaderboard. Bad input raises a one-line error before anything is
    written; Ctrl-C or SIGTERM leaves it stored as interrupted and exits 130."""

    noted: list[str] = []      # every note said: one that points at a bot's log keeps the log

    def notice(message: str) -> None:
        noted.append(message)
        err_console.print(f"[yellow]note:[/] {message}", highlight=False, soft_wrap=True)  # one line, paths whole

    workers_for(req.workers, bool(req.server))      # a bad number is refused before anything is written
    run = resumed_run(req, notice, console) if req.resume is not None else new_run(req, notice)
    if run is None:
        return
    run.workers = workers_for(req.workers, bool(run.settings.server))
    run.db = req.db
    store, settings, tournament_id = run.store, run.settings, run.tournament_id
    lock = hold_lock(run.log_dir, tournament_id)  # noqa: F841 (held until this process ends)

    def on_ready() -> None:
        who = "" if settings.server else f" {workers_phrase(run.workers)}"
        if req.resume is None:
            console.print(f"Tournament [bold]{tournament_id}[/]: {settings.describe()}{start_seed(settings)}.{who}",
                          highlight=False)
            # On a line of its own and never wrapped, so it can be copied whole.
            console.print(f"Resume with: {resume_command(tournament_id, req.db, bool(settings.server))}",
                          highlight=False, soft_wrap=True)
        else:
            console.print(f"Resuming tournament [bold]{tournament_id}[/]: {settings.describe()}"
                          f"{start_seed(settings)}.{who}", highlight=False)

    # From here on a Ctrl-C, however early, leaves the tournament marked and resumable.
    try:
        store.set_tournament_status(tournament_id, "running")
        summary = asyncio.run(sigterm_as_ctrl_c(run_local_or_remote(run, req.admin_token, console, notice, on_ready)))
    except WorkersEnded as ended:
        store.set_tournament_status(tournament_id, "interrupted")
        err_console.print(f"Stopped: {ended}. Resume with: "
                          f"{resume_command(tournament_id, req.db, bool(settings.server))}",
                          highlight=False, soft_wrap=True)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        store.set_tournament_status(tournament_id, "interrupted")
        left = settings.games - len(store.finished_game_indexes(tournament_id))
        err_console.print(f"Interrupted: every finished game is stored, {left} left. "
                          f"Resume with: {resume_command(tournament_id, req.db, bool(settings.server))}",
                          highlight=False, soft_wrap=True)
        raise SystemExit(130) from None
    except (BotStartError, ScheduleError, SandboxError) as exc:
        if req.resume is None and not store.finished_game_indexes(tournament_id):
            # It never got going and would fail the same way on --resume: leave nothing behind.
            pointed = (isinstance(exc, BotStartError) and exc.log is not None
                       or any(str(run.log_dir) in message for message in noted))
            discard(run, req.db, keep_log=pointed)
        else:
            store.set_tournament_status(tournament_id, "interrupted")
        # A schedule fails here only after a sample bot was left out: say how to fill the tables.
        raise ConfigError(f"{exc}{more_bots(settings, req) if isinstance(exc, ScheduleError) else ''}") from None
    except RuntimeError as exc:
        store.set_tournament_status(tournament_id, "interrupted")
        raise ConfigError(str(exc)) from None
    finished = is_complete(store, settings, tournament_id)
    if finished:
        store.set_tournament_status(tournament_id, "finished")
    show_board(store, settings, tournament_id, console)
    if run.workers == 0:
        console.print(f"{len(store.finished_game_indexes(tournament_id))} games stored by workers. "
                      f"Stored in {req.db}.", highlight=False)
    else:
        crashes = (sum(c.count for c in store.crashes(tournament_id=tournament_id).values())
                   if not settings.server else 0)
        by = f" by {run.workers} workers" if run.workers >= 2 else ""
        console.print(f"{summary.played} games played in {summary.seconds:.1f} s{by}"
                      + (f" ({summary.skipped} already stored)" if summary.skipped else "")
                      + f", {summary.faults} fault{'' if summary.faults == 1 else 's'}"
                      + (f", {crashes} bot crash{'' if crashes == 1 else 'es'}" if crashes else "")
                      + f". Stored in {req.db}.", highlight=False)
    if finished:
        console.print(finished_seed(settings), highlight=False, soft_wrap=True)   # one line, copied whole


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


def resumed_run(req: TournamentRequest, notice: Callable[[str], None], console: Console) -> Run | None:
    """The stored tournament ``--resume`` names, with its own settings; None (after
    showing its leaderboard) when it has nothing left to play."""
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
    if is_complete(store, settings, req.resume):
        # Nothing to play: no bot is started, no lock taken, the status is left alone.
        notice(f"tournament {req.resume} is already complete; showing its "
               + ("result" if settings.sprt else "leaderboard"))
        show_board(store, settings, req.resume, console)
        console.print(finished_seed(settings), highlight=False, soft_wrap=True)
        return None
    return Run(store, settings, req.resume, log_dir_for(req.db, req.resume))


def new_run(req: TournamentRequest, notice: Callable[[str], None]) -> Run:
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
    try:
        finalize_games(settings, req.games, notice)
    except ScheduleError as error:
        raise ScheduleError(f"{error}{more_bots(settings, req)}") from None
    store = Store(req.db)
    tournament_id = store.create_tournament(settings.to_dict(), settings.seed)
    store.put_schedule(tournament_id, schedule_of(settings))     # the rows workers claim from
    run = Run(store, settings, tournament_id, log_dir_for(req.db, tournament_id), created_db=created_db, new=True)
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

    >>> settings = TournamentSettings(bots=[BotEntry(n, []) for n in "abc"], game={"players": 6})
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


def discard(run: Run, db: str, keep_log: bool) -> None:
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


def show_board(store: Store, settings: TournamentSettings, tournament_id: str, console: Console) -> None:
    from arena.results import leaderboard as lb
    from arena.results.render import render

    rows = lb.leaderboard(store, settings.variant, tournament_id=tournament_id)
    if settings.gauntlet is not None:
        show_gauntlet(store, settings, tournament_id, [r for r in rows if r.bot == settings.gauntlet], console)
        return
    console.print(render(rows, "table", settings.variant))
    if settings.sprt is not None:
        status = stored_monitor(store, tournament_id, settings.sprt, settings.players, settings.games).current()
        finished = len(store.finished_game_indexes(tournament_id)) >= settings.games
        console.print(f"[bold]{verdict(status, settings.sprt, finished)}[/]", highlight=False)
        console.print(status_line(status, settings.players), highlight=False)


def show_gauntlet(store: Store, settings: TournamentSettings, tournament_id: str, rows: list[Any],
                  console: Console) -> None:
    """A gauntlet's result: its bot's row of the board (rating and interval: the pool's
    ratings only anchor it), then how it fared against each opponent."""
    from rich.table import Table

    from arena.results import crosstable as ct
    from arena.results.render import render

    console.print(render(rows, "table", settings.variant))
    bot = settings.gauntlet
    table = Table(title=f"{bot} against each opponent", title_style="bold")
    for header in ("Opponent", "Games", "Ahead", "Behind", "Level", "Score", "Mean place diff"):
        table.add_column(header, justify="left" if header == "Opponent" else "right")
    pairs = ct.crosstable(store, settings.variant, tournament_id).pairs
    for opponent in settings.opponents():
        p = pairs.get((bot or "", opponent))
        if p is not None:
            table.add_row(opponent, str(p.games), str(p.ahead), str(p.behind), str(p.level), f"{100 * p.score:.1f}%",
                          f"{p.avg_place_diff:+.2f}")
    console.print(table)


# ---------------------------------------------------------------------- playing


async def run_local_or_remote(run: Run, admin_token: str | None, console: Console,
                              notice: Callable[[str], None], on_ready: Callable[[], None]) -> RunSummary:
    """Start the referee and bots (or reach the server), call ``on_ready``, then play every
    game not yet stored with a progress bar."""
    settings = run.settings
    if settings.server:
        async with RemoteArena(settings.server, admin_token or "", settings.client_tls()) as remote:
            on_ready()
            return await play_with_progress(remote, run, console)
    if run.workers == 0:       # other processes (arena worker) play; this one shows progress
        on_ready()
        return await play_with_progress(None, run, console)
    if run.workers >= 2:       # N arena worker processes of this machine play
        workers = LocalWorkers(run.store, run.db, run.tournament_id, run.workers, settings.concurrency, notice)
        await check_lineup(run, console, workers.say_once)
        on_ready()
        return await play_with_progress(None, run, console, workers)
    async with local_arena(run, notice) as local:
        console.print(local.describe_confinement(), highlight=False)
        leave_out_dropped(run, local, notice)
        on_ready()
        return await play_with_progress(local, run, console)


def local_arena(run: Run, notice: Callable[[str], None]) -> LocalArena:
    """This run's referee and bots (an optional bot that cannot start is left out)."""
    return LocalArena(run.settings, run.log_dir, optional=run.optional, notice=notice, hidden=arena_secrets(run.db),
                      on_crash=crash_saver(run.store), tournament_id=run.tournament_id)


def leave_out_dropped(run: Run, local: LocalArena, notice: Callable[[str], None]) -> None:
    """Schedule a new tournament again without the optional bots that could not start."""
    settings = run.settings
    if local.dropped:
        settings.bots = [b for b in settings.bots if b.name not in local.dropped]
        finalize_games(settings, run.requested_games, notice)
        run.store.update_tournament_settings(run.tournament_id, settings.to_dict())
        run.store.replace_schedule(run.tournament_id, schedule_of(settings))


async def check_lineup(run: Run, console: Console, notice: Callable[[str], None]) -> None:
    """Before local workers start: a new tournament's bots are started once here and
    stopped, as a one-worker run starts them, so that an optional sample bot that cannot
    start is left out of the schedule before any worker claims from it, and any other is
    refused (BotStartError) before anything is kept. A resumed tournament's lineup is
    fixed: only how its bots are confined is said (each worker then starts them)."""
    settings = run.settings
    if not run.new:
        console.print(find_confinement(SandboxMode(settings.sandbox), settings.bot_limits(), notice).describe(),
                      highlight=False)
        return
    async with local_arena(run, notice) as local:
        console.print(local.describe_confinement(), highlight=False)
        leave_out_dropped(run, local, notice)


async def play_with_progress(runner: MatchRunner | None, run: Run, console: Console,
                             workers: LocalWorkers | None = None) -> RunSummary:
    """Play as one worker (``runner``; None: only watch other workers play: ``workers``,
    started here, or ones started elsewhere) with a progress line that counts every
    stored game, whoever played it."""
    store, settings, tid = run.store, run.settings, run.tournament_id
    done = store.finished_game_indexes(tid)
    store.put_schedule(tid, schedule_of(settings))     # tournaments stored before schedules were rows
    stored = StoredGames(store, tid)
    if workers is not None:
        return await watch_workers(workers, run, stored, console)
    with progress_bar(console) as progress:
        task = progress.add_task(settings.variant, total=settings.games, completed=len(done), status="")

        def redraw() -> None:
            progress.update(task, completed=len(stored.games), status=stored.status(settings))

        async def watch() -> None:
            # Games other workers store show up too: the count is read from the store.
            while True:
                await asyncio.to_thread(stored.refresh)
                redraw()
                if await asyncio.to_thread(is_complete, store, settings, tid):
                    return
                await asyncio.sleep(1.0)

        watcher = asyncio.create_task(watch())
        try:
            if runner is None:
                await watcher
                return standings_of([])
            played = await play_claimed(runner, store, settings, tid, saver_for(run, runner),
                                        stop=decided(store, settings, tid))
            played.skipped = len(done)
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await asyncio.to_thread(stored.refresh)
            redraw()
            return played
        finally:
            watcher.cancel()


async def watch_workers(workers: LocalWorkers, run: Run, stored: StoredGames, console: Console) -> RunSummary:
    """Start the local ``workers`` and show one progress line over the stored games until
    every game is stored (or an A/B test is decided) and the workers have ended; raise
    WorkersEnded when they all end first. However this ends (Ctrl-C, SIGTERM), the
    workers still running are stopped."""
    store, settings, tid = run.store, run.settings, run.tournament_id
    await asyncio.to_thread(stored.refresh)
    before, faults_before = len(stored.games), stored.summary.faults
    started = time.monotonic()
    with progress_bar(console) as progress:
        task = progress.add_task(settings.variant, total=settings.games, completed=before, status="")

        async def redraw() -> bool:
            """Show the stored games; whether the tournament is complete."""
            await asyncio.to_thread(stored.refresh)
            progress.update(task, completed=len(stored.games), status=stored.status(settings))
            return await asyncio.to_thread(is_complete, store, settings, tid)

        try:
            await workers.start()
            while not await redraw() and not workers.ended.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(workers.ended.wait(), 1.0)
            await workers.ended.wait()       # done: each worker ends once it finds nothing to claim
            if not await redraw():
                raise WorkersEnded(workers.count, settings.games - len(stored.games))
        finally:
            await workers.stop()
    summary = stored.summary
    return RunSummary(len(stored.games) - before, before, summary.faults - faults_before,
                      time.monotonic() - started, summary.standings)


def saver_for(run: Run, runner: MatchRunner) -> Callable[[MatchRecord], Awaitable[bool]]:
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
