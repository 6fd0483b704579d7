"""``arena tournament`` and ``arena sprt`` at the terminal: the start and end lines, the
notes, the progress line, the board, and the exit codes.

The work below the terminal is arena.tournament.command's: nothing is written before
every argument has been checked (a bad option leaves no database behind), the run is
resumable at any point, and one process at a time runs a tournament. Here it is shown:
a bad option is one line (``ConfigError``, which the app prints), a run that all its
local workers left exits 1, and Ctrl-C or SIGTERM exits 130, the tournament stored as
interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Column

from arena.results.sprt import stored_monitor
from arena.stats.sprt import status_line, verdict
from arena.tournament.command import (
    StoredGames,
    TournamentRun,
    WorkersEnded,
    discard,
    finished_seed,
    leave_out_dropped,
    local_arena,
    more_bots,
    new_run,
    resumed_run,
    saver_for,
    sigterm_as_ctrl_c,
    standings_of,
    start_seed,
    worker_command,
    workers_for,
    workers_phrase,
)
from arena.tournament.lineup import BotStartError
from arena.tournament.lock import hold_lock, resume_command
from arena.tournament.runner import MatchRunner, RemoteArena, RunSummary
from arena.tournament.sandbox import SandboxError, SandboxMode, find_confinement
from arena.tournament.schedule import ScheduleError
from arena.tournament.settings import TournamentRequest, TournamentSettings, schedule_of
from arena.tournament.worker import LocalWorkers, claim_and_play, is_complete, stop_when_decided
from engine import ConfigError

if TYPE_CHECKING:
    from arena.store import BoardSnapshot, Store  # imported where used: the CLI starts without SQLAlchemy


def run_tournament_command(req: TournamentRequest, console: Console, err_console: Console) -> None:
    """The whole command: a new tournament (or ``--resume``), played with a progress
    line, then its leaderboard. Bad input raises a one-line error before anything is
    written; Ctrl-C or SIGTERM leaves it stored as interrupted and exits 130."""

    noted: list[str] = []      # every note said: one that points at a bot's log keeps the log

    def notice(message: str) -> None:
        noted.append(message)
        err_console.print(f"[yellow]note:[/] {message}", highlight=False, soft_wrap=True)  # one line, paths whole

    workers_for(req.workers, bool(req.server))      # a bad number is refused before anything is written
    run = resumed_run(req) if req.resume is not None else new_run(req, notice)
    if run.complete:
        # Nothing to play: no bot is started, no lock taken, the status is left alone.
        notice(f"tournament {run.tournament_id} is already complete; showing its "
               + ("result" if run.settings.sprt else "leaderboard"))
        show_board(run.store, run.settings, run.tournament_id, console)
        console.print(finished_seed(run.settings), highlight=False, soft_wrap=True)
        return
    run.workers = workers_for(req.workers, bool(run.settings.server))
    run.db = req.db
    store, settings, tournament_id = run.store, run.settings, run.tournament_id
    lock = hold_lock(run.log_dir, tournament_id)  # noqa: F841 (held until this process ends)

    def on_ready() -> None:
        if run.games_note is not None:     # once, for the lineup that plays
            notice(run.games_note)
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
        if run.workers == 0 and not settings.server:
            # Nothing plays until a worker does: the command, whole on its line, to copy.
            console.print(f"Waiting for workers; start one or more with: {worker_command(tournament_id, req.db)}",
                          highlight=False, soft_wrap=True)

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


def show_board(store: Store, settings: TournamentSettings, tournament_id: str, console: Console) -> None:
    from arena.results import leaderboard as lb
    from arena.results.render import render

    snapshot = store.board_snapshot(settings.variant, tournament_id)     # one read: the board and its pairs
    rows = lb.rows_of(snapshot)
    if settings.gauntlet is not None:
        show_gauntlet(snapshot, settings, [r for r in rows if r.bot == settings.gauntlet], console)
        return
    console.print(render(rows, "table", settings.variant))
    if settings.sprt is not None:
        status = stored_monitor(store, tournament_id, settings.sprt, settings.players, settings.games).current()
        finished = len(store.finished_game_indexes(tournament_id)) >= settings.games
        console.print(f"[bold]{verdict(status, settings.sprt, finished)}[/]", highlight=False)
        console.print(status_line(status, settings.players), highlight=False)


def show_gauntlet(snapshot: BoardSnapshot, settings: TournamentSettings, rows: list[Any], console: Console) -> None:
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
    pairs = ct.pairings(snapshot.outcomes)
    for opponent in settings.opponents():
        p = pairs.get((bot or "", opponent))
        if p is not None:
            table.add_row(opponent, str(p.games), str(p.ahead), str(p.behind), str(p.level), f"{100 * p.score:.1f}%",
                          f"{p.avg_place_diff:+.2f}")
    console.print(table)


async def run_local_or_remote(run: TournamentRun, admin_token: str | None, console: Console,
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
        leave_out_dropped(run, local)
        on_ready()
        return await play_with_progress(local, run, console)


async def check_lineup(run: TournamentRun, console: Console, notice: Callable[[str], None]) -> None:
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
        leave_out_dropped(run, local)


async def play_with_progress(runner: MatchRunner | None, run: TournamentRun, console: Console,
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
            played = await claim_and_play(runner, store, settings, tid, saver_for(run, runner),
                                          stop=stop_when_decided(store, settings, tid))
            played.skipped = len(done)
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await asyncio.to_thread(stored.refresh)
            redraw()
            return played
        finally:
            watcher.cancel()


async def watch_workers(workers: LocalWorkers, run: TournamentRun, stored: StoredGames, console: Console) -> RunSummary:
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


def progress_bar(console: Console) -> Progress:
    """Games done, time, ETA and the current leader on one line that fits the terminal:
    on a narrow one the bar is shorter and the leader text is cut (with "…") first."""
    bar = 10 if console.width < 110 else 20
    fixed = Column(no_wrap=True)
    # description (variant) + bar + "40/40 games 0:00:15 ETA 0:00:03" + the gaps between columns
    room = max(12, console.width - (7 + bar + 34 + 8))
    return Progress(
        TextColumn("[bold]{task.description}", table_column=fixed), BarColumn(bar_width=bar),
        MofNCompleteColumn(table_column=fixed), TextColumn("games", table_column=fixed),
        TimeElapsedColumn(table_column=fixed), TextColumn("ETA", table_column=fixed),
        TimeRemainingColumn(table_column=fixed),
        TextColumn("{task.fields[status]}", table_column=Column(no_wrap=True, overflow="ellipsis", max_width=room)),
        console=console, transient=False,
    )
