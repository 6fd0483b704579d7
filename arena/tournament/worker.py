"""Workers: many processes, on one machine or many, play one tournament through its database.

A tournament's schedule is rows in the database (``Store.put_schedule``); its work units
are its deals (every rotation of one deal, played one after another by one worker, so
no two games of a deal are ever in flight). A worker claims a unit under a lease
(``Store.claim_unit``: ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, one write transaction
on SQLite), renews the lease while it plays, and saves each game; a slot is saved once
whoever plays it (a second save of the same slot changes nothing). A worker that dies
stops renewing: its lease expires and another worker plays the unit's missing games.

``arena tournament`` is one worker plus a progress display (:func:`claim_and_play`);
``arena worker`` (:func:`run_worker`) is a worker alone, with its own referee and its
own bot processes, started from the lineup's commands on its machine;
``arena tournament --workers N`` starts N of those on this machine (:class:`LocalWorkers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.records import BotCrash, MatchRecord
from arena.tournament.runner import MatchRunner, RunSummary, Standing, match_spec, worker_name
from arena.tournament.settings import LEASE_SECONDS, TournamentSettings, schedule_of

if TYPE_CHECKING:
    from arena.store import Store  # imported where used: the CLI starts without SQLAlchemy

log = logging.getLogger(__name__)

# How often a worker with nothing to claim looks again (others hold the last units).
IDLE_SECONDS = 1.0


def release_dead_local_workers(store: Store, tournament_id: str) -> int:
    """Give back the leases of workers of this machine whose process is gone (a run killed
    with -9 just before ``--resume``): their deals need not wait for the leases to end."""
    host = socket.gethostname()
    released = 0
    for name in store.unit_progress(tournament_id)["workers"]:
        worker_host, _, pid = name.rpartition(":")
        if worker_host != host or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)        # signal 0: only asks whether the process exists
        except ProcessLookupError:
            released += store.release_worker(tournament_id, name)
        except PermissionError:
            pass                        # it exists, under another user
    return released


@dataclass
class Lease:
    """A claimed unit and whether its lease still holds."""

    unit: Any
    lost: bool = False


async def keep_lease(store: Store, lease: Lease, worker: str, lease_seconds: float) -> None:
    """Renew ``lease`` every third of its length until cancelled; mark it lost when the
    store says another worker has it now (it expired first)."""
    while True:
        await asyncio.sleep(lease_seconds / 3)
        renewed = await asyncio.to_thread(store.renew_lease, lease.unit, worker, lease_seconds)
        if renewed is None:
            lease.lost = True
            return
        lease.unit = renewed


async def claim_and_play(
    runner: MatchRunner,
    store: Store,
    settings: TournamentSettings,
    tournament_id: str,
    save: Callable[[MatchRecord], Awaitable[bool]],
    on_game: Callable[[MatchRecord, RunSummary], None] = lambda record, summary: None,
    stop: Callable[[], bool] = lambda: False,
    worker: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
    wait_for_others: bool = True,
) -> RunSummary:
    """Claim the tournament's units and play their missing games, ``settings.concurrency``
    units at a time, until none is left (or ``stop()``). With ``wait_for_others`` a slot
    that finds nothing to claim while other workers still hold units waits and looks
    again (their leases may expire); without, it ends.

    ``save`` returns whether the record was new; a game another worker saved first is
    not counted here.
    """
    worker = worker or worker_name()
    await asyncio.to_thread(release_dead_local_workers, store, tournament_id)
    schedule = {game.index: game for game in schedule_of(settings)}
    summary = RunSummary(0, 0, 0, 0.0, defaultdict(Standing))
    for name in settings.bot_names():
        summary.standings[name]
    started = time.monotonic()

    async def play_unit(lease: Lease) -> None:
        stored = await asyncio.to_thread(store.finished_game_indexes, tournament_id)
        for index in lease.unit.game_indexes:
            if lease.lost or stop():
                return
            if index in stored:
                summary.skipped += 1
                continue
            record = await runner.run_match(match_spec(settings, tournament_id, schedule[index]))
            if not await save(record):
                continue
            summary.played += 1
            summary.add(record.bots, record.places, len(record.faults))
            summary.seconds = time.monotonic() - started
            on_game(record, summary)

    async def slot() -> None:
        while not stop():
            unit = await asyncio.to_thread(store.claim_unit, worker, lease_seconds, tournament_id)
            if unit is None:
                progress = await asyncio.to_thread(store.unit_progress, tournament_id)
                if not wait_for_others or not progress["deals_leased"]:
                    return
                await asyncio.sleep(IDLE_SECONDS)
                continue
            lease = Lease(unit)
            renewing = asyncio.create_task(keep_lease(store, lease, worker, lease_seconds))
            try:
                await play_unit(lease)
            finally:
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
                if not lease.lost:
                    await asyncio.to_thread(store.release_unit, lease.unit, worker)

    slots = [asyncio.create_task(slot()) for _ in range(max(1, settings.concurrency))]
    try:
        await asyncio.gather(*slots)
    finally:
        for task in slots:
            task.cancel()
        await asyncio.gather(*slots, return_exceptions=True)
    summary.seconds = time.monotonic() - started
    return summary


def worker_log_dir(db: str, tournament_id: str, worker: str) -> Path:
    """Where a worker keeps its bots' output: ``arena-logs/ID/worker-NAME`` beside the database."""
    from arena.tournament.lock import log_dir_for

    return log_dir_for(db, tournament_id) / f"worker-{worker.replace(':', '-').replace('/', '-')}"


def is_complete(store: Store, settings: TournamentSettings, tournament_id: str) -> bool:
    """Every game stored, or an A/B test decided."""
    if len(store.finished_game_indexes(tournament_id)) >= settings.games:
        return True
    if settings.sprt is None:
        return False
    from arena.results.sprt import stored_monitor

    return stored_monitor(store, tournament_id, settings.sprt, settings.players, settings.games).decided()


def crash_saver(store: Store) -> Callable[[BotCrash], None]:
    """``on_crash(crash)`` for a LocalArena: store the crash off the event loop (a storage
    error is logged; it must not stop the run)."""
    pending: set[asyncio.Future[None]] = set()

    def on_crash(crash: BotCrash) -> None:
        task = asyncio.ensure_future(asyncio.to_thread(store.save_crash, crash))
        pending.add(task)
        task.add_done_callback(_logged)

    def _logged(task: asyncio.Future[None]) -> None:
        pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("could not store a bot crash: %s", task.exception())

    return on_crash


def saver(store: Store) -> Callable[[MatchRecord], Awaitable[bool]]:
    """``save(record)``: store it off the event loop, one writer at a time; whether it was new."""
    lock = asyncio.Lock()

    async def save(record: MatchRecord) -> bool:
        async with lock:
            return bool(await asyncio.to_thread(store.save_match, record))

    return save


def stop_when_decided(store: Store, settings: TournamentSettings, tournament_id: str,
                      every: float = 1.0) -> Callable[[], bool]:
    """``stop()`` for an A/B test: whether it is decided by anyone's games (asked of the
    store at most once per ``every`` seconds); always False for any other tournament."""
    last = [0.0, False]

    def stop() -> bool:
        if settings.sprt is None:
            return False
        if time.monotonic() - last[0] > every:
            last[0], last[1] = time.monotonic(), is_complete(store, settings, tournament_id)
        return bool(last[1])

    return stop


@dataclass
class WorkerRun:
    """What one ``arena worker`` did."""

    played: int = 0
    tournaments: list[str] = field(default_factory=list)   # those it is done with
    seconds: float = 0.0


async def run_worker(store: Store, db: str, tournament_id: str | None, slots: int,
                     notice: Callable[[str], None], say: Callable[[str], None],
                     lease_seconds: float = LEASE_SECONDS) -> WorkerRun:
    """Play the missing games of ``tournament_id`` (or of every running tournament, one
    after another) with this machine's referee and bots, ``slots`` deals at once.

    A tournament whose bots this machine cannot start is left to other workers: the
    reason in one ``notice`` line, nothing claimed, nobody forfeits.
    """
    from arena.tournament.lineup import BotStartError
    from arena.tournament.lock import arena_secrets
    from arena.tournament.runner import LocalArena
    from arena.tournament.sandbox import SandboxError

    worker = worker_name()
    run = WorkerRun()
    started = time.monotonic()
    cannot: set[str] = set()
    while True:
        candidates = ([tournament_id] if tournament_id else
                      [t.id for t in store.list_tournaments() if t.status == "running"])
        todo = [t for t in candidates if t not in cannot and t not in run.tournaments]
        if not todo:
            break
        tid = todo[0]
        info = store.get_tournament(tid)
        settings = TournamentSettings.from_dict(info.settings)
        settings.concurrency = slots
        if settings.server:
            notice(f"tournament {tid} is played on the server {settings.server}, not by workers")
            cannot.add(tid)
            continue
        store.put_schedule(tid, schedule_of(settings))     # tournaments stored before schedules were rows
        if is_complete(store, settings, tid):
            say(f"tournament {tid} is already complete")
            run.tournaments.append(tid)
            continue
        say(f"worker {worker}: playing tournament {tid} ({settings.describe()})")
        try:
            async with LocalArena(settings, worker_log_dir(db, tid, worker), notice=notice, hidden=arena_secrets(db),
                                  on_crash=crash_saver(store), tournament_id=tid) as local:
                say(local.describe_confinement())
                summary = await claim_and_play(local, store, settings, tid, saver(store),
                                               stop=stop_when_decided(store, settings, tid), worker=worker,
                                               lease_seconds=lease_seconds, wait_for_others=tournament_id is not None)
        except (BotStartError, SandboxError) as error:
            notice(f"this machine cannot run the lineup of tournament {tid}: {error}; its games are left "
                   "to other workers")
            cannot.add(tid)
            continue
        run.played += summary.played
        run.tournaments.append(tid)
        if is_complete(store, settings, tid) and info.status == "running":
            store.set_tournament_status(tid, "finished")
        say(f"worker {worker}: {summary.played} games of {tid} played")
    run.seconds = time.monotonic() - started
    return run


@dataclass
class WorkerProcess:
    """One ``arena worker`` started by :class:`LocalWorkers`, and the last line it wrote
    on stderr that was not a note (an error, a traceback's last line): why it ended."""

    number: int
    process: asyncio.subprocess.Process
    last_line: str = ""


class LocalWorkers:
    """``count`` ``arena worker`` processes of one tournament on this machine, each with its
    own referee and bot processes, ``slots`` deals at once (``arena tournament --workers N``).

    Each is a new program (``python -m arena.cli worker``), never a fork of this process:
    forking a process that runs gRPC's threads is unsafe. Each has a session of its own,
    so a Ctrl-C at the terminal reaches only this process, which then stops them
    (:meth:`stop`: SIGTERM, on which a worker gives back its leases and ends its bots).
    Their notes (the ``note:`` lines of stderr) go to ``notice``, each distinct text once
    (N workers start the same bots and say the same things). A worker that ends with a
    failure is reported in one line, and its leases are given back at once rather than
    when they expire. :attr:`ended` is set once every worker has ended.
    """

    def __init__(self, store: Store, db: str, tournament_id: str, count: int, slots: int,
                 notice: Callable[[str], None]) -> None:
        self.store, self.db, self.tournament_id = store, db, tournament_id
        self.count, self.slots, self.notice = count, slots, notice
        self.workers: list[WorkerProcess] = []
        self.ended = asyncio.Event()
        self.seen: set[str] = set()            # the notes said so far (by anyone: add the organiser's)
        self._watchers: list[asyncio.Task[None]] = []
        self._stopping = False

    def command(self) -> list[str]:
        """The command line of each worker."""
        return [sys.executable, "-m", "arena.cli", "worker", "--tournament", self.tournament_id,
                "--slots", str(self.slots), "--db", self.db]

    async def start(self) -> None:
        for number in range(1, self.count + 1):
            process = await asyncio.create_subprocess_exec(
                *self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                start_new_session=True)
            worker = WorkerProcess(number, process)
            self.workers.append(worker)
            self._watchers.append(asyncio.create_task(self._watch(worker)))

    def running(self) -> int:
        return sum(1 for worker in self.workers if worker.process.returncode is None)

    def say_once(self, text: str, prefix: str = "") -> None:
        """``notice(prefix + text)`` unless ``text`` was said before."""
        if text not in self.seen:
            self.seen.add(text)
            self.notice(prefix + text)

    async def _read(self, worker: WorkerProcess) -> None:
        assert worker.process.stderr is not None
        async for raw in worker.process.stderr:
            line = raw.decode(errors="replace").strip()
            if line.startswith("note: "):
                self.say_once(line.removeprefix("note: "), f"worker {worker.number}: ")
            elif line:
                worker.last_line = line

    async def _watch(self, worker: WorkerProcess) -> None:
        """Pass on the worker's notes until it ends; report a failure and free its leases."""
        reader = asyncio.create_task(self._read(worker))
        code = await worker.process.wait()
        # Its stderr ends with it (a bot writes to the worker, not here); a moment for the last lines.
        await asyncio.wait({reader}, timeout=1.0)
        reader.cancel()
        if code != 0 and not self._stopping:
            from arena.tournament.lineup import exit_reason

            why = f": {worker.last_line}" if worker.last_line else ""
            others = "; its games go back to the other workers" if self.running() else ""
            self.notice(f"worker {worker.number} (pid {worker.process.pid}) {exit_reason(code)}{why}{others}")
            await asyncio.to_thread(release_dead_local_workers, self.store, self.tournament_id)
        if len(self.workers) == self.count and not self.running():
            self.ended.set()

    async def stop(self, timeout: float = 15.0) -> None:
        """End the workers still running: SIGTERM (each stops as on Ctrl-C: its games in
        flight are dropped, its leases given back, its bots ended), then, after
        ``timeout`` seconds, SIGKILL to its process group."""
        self._stopping = True
        running = [worker for worker in self.workers if worker.process.returncode is None]
        for worker in running:
            with contextlib.suppress(ProcessLookupError):
                worker.process.send_signal(signal.SIGTERM)
        if running:
            await asyncio.wait([asyncio.ensure_future(w.process.wait()) for w in running], timeout=timeout)
        for worker in running:
            if worker.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(worker.process.pid, signal.SIGKILL)
                await worker.process.wait()
        await asyncio.gather(*self._watchers, return_exceptions=True)
