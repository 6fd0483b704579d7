"""``arena tournament``: validate everything, then start, play, store and show.

Nothing is written before every argument has been checked: a bad option leaves no
database behind. The run itself is resumable at any point (see arena.tournament.runner).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Column

from arena.records import MatchRecord
from arena.referee.match import MAX_SECONDS
from arena.tournament.lineup import BotStartError, LineupError, parse_bot_option, sample_lineup
from arena.tournament.runner import LocalArena, RemoteArena, RunSummary, TournamentSettings, play_games
from arena.tournament.schedule import DEAL_FORMATS, ScheduleError, new_master_seed, round_games
from engine import ConfigError, GameConfig

DEFAULTS = TournamentSettings()


@dataclass
class TournamentRequest:
    """The command line as given; ``None`` means "not given"."""

    db: str
    variant: str | None = None
    rounds: int | None = None
    players: int | None = None
    games: int | None = None
    seed: int | None = None
    move_time: float | None = None
    time_bank: float | None = None
    max_faults: int | None = None
    concurrency: int | None = None
    deals: str | None = None
    bidding: str | None = None
    plus_minus_one: bool | None = None
    length: str | None = None
    destroyer_penalty: int | None = None
    bots: list[str] = field(default_factory=list)
    no_samples: bool = False
    server: str | None = None
    admin_token: str | None = None
    resume: str | None = None

    def given_game_options(self) -> list[str]:
        skip = {"db", "admin_token", "resume", "no_samples", "bots"}
        named = [f"--{f.name.replace('_', '-')}" for f in fields(self)
                 if f.name not in skip and getattr(self, f.name) is not None]
        if self.bots:
            named.append("--bot")
        if self.no_samples:
            named.append("--no-samples")
        return named


def check_numbers(req: TournamentRequest) -> None:
    checks = [
        ("--games", req.games, 1), ("--concurrency", req.concurrency, 1), ("--max-faults", req.max_faults, 1),
        ("--move-time", req.move_time, 0.001), ("--time-bank", req.time_bank, 0.0),
    ]
    for option, value, minimum in checks:
        if value is not None and value < minimum:
            raise ConfigError(f"{option} must be at least {minimum} (got {value})")
    for option, seconds in (("--move-time", req.move_time), ("--time-bank", req.time_bank)):
        if seconds is not None and not seconds <= MAX_SECONDS:     # also catches nan
            raise ConfigError(f"{option} must be a number of seconds up to {MAX_SECONDS:g} (got {seconds})")
    if req.seed is not None and not 0 <= req.seed < 2**63:     # checked before anything is written
        raise ConfigError(f"--seed must be between 0 and 2**63 - 1 (got {req.seed})")
    if req.deals is not None and req.deals not in DEAL_FORMATS:
        raise ConfigError(f"--deals must be {' or '.join(DEAL_FORMATS)} (got {req.deals!r})")
    if req.server is not None and (":" not in req.server or not req.server.rsplit(":", 1)[1].isdigit()):
        raise ConfigError(f"--server takes HOST:PORT (got {req.server!r})")


def build_settings(req: TournamentRequest, notice) -> TournamentSettings:
    """Settings for a new tournament, validated through the engine's own config checks."""
    check_numbers(req)
    given = {"variant": req.variant, "players": req.players, "rounds": req.rounds, "length": req.length,
             "bidding": req.bidding, "plus_minus_one": req.plus_minus_one,
             "destroyer_penalty": req.destroyer_penalty}
    # An option of the other variant is refused even at its default value, which the
    # engine's config cannot tell from "not given" (--destroyer-penalty 4 with classic).
    if (req.variant or "classic") == "classic" and req.destroyer_penalty is not None:
        raise ConfigError("destroyer penalty is a Wizard Extreme option; classic has no destroyer")
    if req.variant == "extreme" and (req.length, req.bidding, req.plus_minus_one) != (None, None, None):
        raise ConfigError("--length, --bidding and --plus-minus-one are classic options; extreme predicts with tokens")
    # The engine's own checks give the clear errors: rounds too large, contradictory options...
    game = GameConfig(**{k: v for k, v in given.items() if v is not None}).validate().to_dict()
    del game["seed"]
    settings = TournamentSettings(
        game=game,
        # The master seed is the tournament's secret: a fresh 63-bit one unless given.
        seed=req.seed if req.seed is not None else new_master_seed(),
        move_time=req.move_time if req.move_time is not None else DEFAULTS.move_time,
        time_bank=req.time_bank if req.time_bank is not None else DEFAULTS.time_bank,
        max_faults=req.max_faults if req.max_faults is not None else DEFAULTS.max_faults,
        concurrency=req.concurrency if req.concurrency is not None else DEFAULTS.concurrency,
        server=req.server,
        # Bots the arena starts itself are the organiser's; bots on a server are anyone's.
        deals=req.deals if req.deals is not None else ("independent" if req.server else "duplicate"),
    )
    if req.server is None:
        own = [parse_bot_option(text) for text in req.bots]  # check these before any npm install
        entries = ([] if req.no_samples else sample_lineup(notice)) + own
        names = [e.name for e in entries]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise LineupError(f"two bots are named {duplicate!r}")
        settings.bots = [TournamentSettings.entry_dict(e) for e in entries]
    elif req.bots or req.no_samples:
        raise LineupError("with --server the lineup is the bots connected to that server; drop --bot/--no-samples")
    return settings


def finalize_games(settings: TournamentSettings, requested: int | None, notice) -> None:
    wanted = requested if requested is not None else DEFAULTS.games
    bots = len(settings.bots)
    if bots < settings.players:
        raise ScheduleError(f"{settings.players}-player tables need at least {settings.players} bots "
                            f"(the lineup has {bots})")
    settings.games = round_games(wanted, bots, settings.players)
    if settings.games != wanted:
        notice(f"games rounded up from {wanted} to {settings.games} so that every bot plays every seat "
               f"equally often ({bots} bots, {settings.players} seats)")
    settings.schedule()  # raises ScheduleError for an impossible lineup


def describe(settings: TournamentSettings) -> str:
    """The tournament in words, for its start line.

    >>> describe(TournamentSettings(games=8, deals="independent", bots=[{"name": "a"}, {"name": "b"}]))
    'classic, 2 bots (a, b), 8 games, independent deals'
    """
    return (f"{settings.variant}, {len(settings.bots)} bots ({', '.join(settings.bot_names())}), "
            f"{settings.games} games, {settings.deals} deals")


def resume_command(tournament_id: str, db: str, remote: bool = False) -> str:
    """The command that finishes this tournament (``--db`` only when it is not the default;
    a tournament on a running server needs its admin token again).

    >>> resume_command("t-abc123", "runs/my arena.db")
    "arena tournament --resume t-abc123 --db 'runs/my arena.db'"
    >>> print(resume_command("t-abc123", "arena.db", remote=True))
    arena tournament --resume t-abc123 (with the server's admin token: --admin-token or ARENA_ADMIN_TOKEN)
    """
    return (f"arena tournament --resume {tournament_id}" + (f" --db {shlex.quote(db)}" if db != "arena.db" else "")
            + (" (with the server's admin token: --admin-token or ARENA_ADMIN_TOKEN)" if remote else ""))


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


def status_text(summary: RunSummary) -> str:
    leader = summary.leader()
    text = f"leader: {leader} ({summary.standings[leader].average_place:.2f} avg place)" if leader else ""
    if summary.faults:
        text += f"  faults: {summary.faults}"
    return text


@dataclass
class Run:
    """One run of a tournament by this process (a new one, or a resume)."""

    store: Any
    settings: TournamentSettings
    tournament_id: str
    log_dir: Path
    requested_games: int | None = None       # new runs: --games as given, to re-round after a drop
    optional: frozenset[str] = frozenset()   # new runs: sample bots that may be left out


async def run_local_or_remote(run: Run, admin_token: str | None, console: Console,
                              notice: Callable[[str], None], on_ready: Callable[[], None]) -> RunSummary:
    """Start the referee and bots (or reach the server), call ``on_ready``, then play every
    game not yet stored with a progress bar."""
    settings = run.settings
    if settings.server:
        async with RemoteArena(settings.server, admin_token or "") as remote:
            on_ready()
            return await play_with_progress(remote, run, console)
    async with LocalArena(settings, run.log_dir, optional=run.optional, notice=notice) as local:
        if local.dropped:
            settings.bots = [b for b in settings.bots if b["name"] not in local.dropped]
            finalize_games(settings, run.requested_games, notice)
            run.store.update_tournament_settings(run.tournament_id, settings.to_dict())
        on_ready()
        return await play_with_progress(local, run, console)


async def play_with_progress(runner: Any, run: Run, console: Console) -> RunSummary:
    store, settings = run.store, run.settings
    done = store.finished_game_indexes(run.tournament_id)
    writer = asyncio.Lock()

    async def save(record: MatchRecord) -> None:
        async with writer:  # one writer at a time, off the event loop
            await asyncio.to_thread(store.save_match, record)

    with progress_bar(console) as progress:
        task = progress.add_task(settings.variant, total=settings.games, completed=len(done), status="")

        def on_game(record: MatchRecord, summary: RunSummary) -> None:
            progress.update(task, advance=1, status=status_text(summary))

        return await play_games(runner, save, settings, run.tournament_id, done, on_game)


def run_tournament_command(req: TournamentRequest, console: Console, err_console: Console) -> None:
    from arena.store import Store

    def notice(message: str) -> None:
        err_console.print(f"[yellow]note:[/] {message}", highlight=False, soft_wrap=True)  # one line, paths whole

    created_db = False   # whether this command made the database file (removed if the start fails)
    if req.resume is not None:
        given = req.given_game_options()
        if given:
            raise ConfigError(f"--resume continues a stored tournament with its own settings; drop {', '.join(given)}")
        if "://" not in req.db and not Path(req.db).exists():
            raise ConfigError(f"no arena database at {req.db} (pass the --db the tournament used)")
        store = Store(req.db)
        stored = store.get_tournament(req.resume)
        settings = TournamentSettings.from_dict(stored.settings)
        tournament_id = req.resume
        if len(store.finished_game_indexes(tournament_id)) >= settings.games:
            # Nothing to play: no bot is started, no lock taken, the status is left alone.
            notice(f"tournament {tournament_id} is already complete; showing its leaderboard")
            show_board(store, settings, tournament_id, console)
            return
    else:
        if "://" in req.db or Path(req.db).exists():
            Store(req.db)  # refuse a foreign database before starting anything (npm, bots)
        else:
            folder = Path(req.db).resolve().parent
            if not folder.is_dir() or not os.access(folder, os.W_OK):
                raise ConfigError(f"cannot create {req.db}: {folder} is not a writable directory")
        settings = build_settings(req, notice)
        created_db = "://" not in req.db and not Path(req.db).exists()
        admin_token = req.admin_token
        if settings.server:
            if not admin_token:
                raise ConfigError("--server needs the admin token `arena serve` printed: "
                                  "--admin-token or ARENA_ADMIN_TOKEN")
            settings.bots = [{"name": n} for n in asyncio.run(_remote_bots(settings, admin_token))]
        finalize_games(settings, req.games, notice)
        store = Store(req.db)
        tournament_id = store.create_tournament(settings.to_dict(), settings.seed)

    log_dir = log_dir_for(req.db, tournament_id)
    run = Run(store, settings, tournament_id, log_dir)
    if req.resume is None and not settings.server:
        run.requested_games = req.games
        # The default sample bots are optional: one that cannot start is left out. A bot
        # the user named is not, and neither is any bot of a resumed (fixed) lineup.
        run.optional = frozenset(b["name"] for b in settings.bots) - {t.partition('=')[0].strip() for t in req.bots}
    lock = hold_lock(log_dir, tournament_id)  # noqa: F841 (held until this process ends)

    def on_ready() -> None:
        if req.resume is None:
            # The seed is shown here, to the organiser only: it is the tournament's secret.
            console.print(f"Tournament [bold]{tournament_id}[/]: {describe(settings)}, seed {settings.seed}.",
                          highlight=False)
            # On a line of its own and never wrapped, so it can be copied whole.
            console.print(f"Resume with: {resume_command(tournament_id, req.db, bool(settings.server))}",
                          highlight=False, soft_wrap=True)
        else:
            console.print(f"Resuming tournament [bold]{tournament_id}[/]: {describe(settings)}.", highlight=False)

    # From here on a Ctrl-C, however early, leaves the tournament marked and resumable.
    try:
        store.set_tournament_status(tournament_id, "running")
        summary = asyncio.run(sigterm_as_ctrl_c(run_local_or_remote(run, req.admin_token, console, notice, on_ready)))
    except KeyboardInterrupt:
        store.set_tournament_status(tournament_id, "interrupted")
        left = settings.games - len(store.finished_game_indexes(tournament_id))
        err_console.print(f"Interrupted: every finished game is stored, {left} left. "
                          f"Resume with: {resume_command(tournament_id, req.db, bool(settings.server))}",
                          highlight=False, soft_wrap=True)
        raise SystemExit(130)
    except (BotStartError, ScheduleError) as exc:
        if req.resume is None and not store.finished_game_indexes(tournament_id):
            # It never got going and would fail the same way on --resume: leave nothing behind.
            store.discard_tournament(tournament_id)
            if not (isinstance(exc, BotStartError) and exc.log):   # keep a log the message points at
                shutil.rmtree(log_dir, ignore_errors=True)
                with contextlib.suppress(OSError):
                    log_dir.parent.rmdir()      # arena-logs/, when it holds nothing else
            if created_db:
                store.close()
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(req.db + suffix).unlink(missing_ok=True)
        else:
            store.set_tournament_status(tournament_id, "interrupted")
        raise ConfigError(str(exc)) from None
    except RuntimeError as exc:
        store.set_tournament_status(tournament_id, "interrupted")
        raise ConfigError(str(exc)) from None
    if len(store.finished_game_indexes(tournament_id)) >= settings.games:
        store.set_tournament_status(tournament_id, "finished")
    show_board(store, settings, tournament_id, console)
    console.print(f"{summary.played} games played in {summary.seconds:.1f} s"
                  + (f" ({summary.skipped} already stored)" if summary.skipped else "")
                  + f", {summary.faults} fault{'' if summary.faults == 1 else 's'}. Stored in {req.db}.",
                  highlight=False)


def show_board(store: Any, settings: TournamentSettings, tournament_id: str, console: Console) -> None:
    from arena.results import leaderboard as lb

    rows = lb.leaderboard(store, settings.variant, tournament_id=tournament_id)
    console.print(lb.render(rows, "table", settings.variant))


def log_dir_for(db: str, tournament_id: str) -> Path:
    """Where a local tournament keeps its bots' output and its run lock: ``arena-logs/ID``
    beside the database file (in the working folder for a database URL)."""
    if "://" in db:
        return Path("arena-logs") / tournament_id
    return Path(db).resolve().parent / "arena-logs" / tournament_id


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


def hold_lock(log_dir: Path, tournament_id: str) -> Any:
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


async def sigterm_as_ctrl_c(work: Any) -> Any:
    """Run ``work`` with SIGTERM turned into SIGINT, so ``kill PID`` stops a tournament as
    cleanly as Ctrl-C (asyncio's own SIGINT handling: the bots are ended, the tournament
    is marked interrupted and can be resumed)."""
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, os.kill, os.getpid(), signal.SIGINT)
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def _remote_bots(settings: TournamentSettings, admin_token: str) -> list[str]:
    async with RemoteArena(settings.server or "", admin_token) as remote:
        return await remote.connected_bots(settings.variant)
