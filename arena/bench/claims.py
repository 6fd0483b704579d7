"""The claims benchmark: many workers claiming and saving one tournament's games at once.

``arena bench claims`` measures how many games per second one database can coordinate
when the games cost nothing to play, so that only the database path is left: each
worker is its own process with its own connection (``multiprocessing``, spawned), and
loops as ``arena worker`` does (arena.tournament.worker): claim a deal
(``Store.claim_unit``), renew its lease (``renew_lease``), save each of its games
(``Store.save_match``, full-size records built once, as ``arena bench store`` builds
them), release the deal (``release_unit``), until no deal is left. Each worker count
plays its own fresh tournament schedule (``create_tournament`` + ``put_schedule``, as
``arena tournament`` stores one).

Per worker count it reports:

- ``saves_per_s``: games stored per second, from the first worker's start to the last
  one's end;
- claim latency p50 and p99 (the claims that got a deal), and a save's;
- lock waits, as the server sees them: ``pg_stat_activity`` is sampled every 10 ms
  while the workers run, and the sessions waiting for a heavyweight lock
  (``wait_event_type = 'Lock'``: the store's write lock, which serialises saves, or a
  deal's row) are counted: their mean number, that as a share of the workers' time,
  and as ms per game; beside it the most frequent wait events. On SQLite (no server
  to ask) only the client's side shows it: ``added_ms_per_game``, the database time of
  a game (claim, renew, save, release) above the one-worker run's;
- the workers' CPU per game, the server's (when this run started the server: its
  processes' CPU time), and how busy the machine's CPUs were (workers and database share
  this machine's cores: when they are saturated the figure is the machine's, not the
  database's locks).

At the end every scheduled game of every run is checked to be stored exactly once:
none missing, none twice (``Probes.slot_counts``, arena.store.probes), and no save refused because another
worker had stored the same game (which only a lease claimed twice would cause).

Yardsticks from the same run and server (``Probes.round_trip``: ``SELECT 1``;
``Probes.bare_write``: a transaction that takes the store's write lock and commits,
nothing else, which every save pays first), and the ratio of the best saves/s to bare
writes/s of one connection, since machines and disks differ.

The database is, by default, a throwaway PostgreSQL cluster this benchmark starts
(``initdb`` in a temporary folder, a free port on 127.0.0.1, ``fsync`` on unless told
otherwise) and stops at the end; or a ``postgresql://`` URL of a scratch database (a
finished tournament per worker count is added to it); or a SQLite file, for several
processes on one file.

    >>> report = bench_claims(ClaimsPlan(db="sqlite", workers=(1, 2), games=16))   # doctest: +SKIP
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from queue import Empty
from typing import Any

from arena.bench.machine import busy_share, children_cpu, cpu_busy
from arena.bench.postgres import Database, throwaway_postgres
from arena.records import MatchRecord
from arena.store import Store
from arena.store.probes import Probes

WORKER_COUNTS = (1, 2, 4, 8, 16, 32, 64)
GAMES = 1536                # per worker count: 384 deals of 4 games
BOTS, PLAYERS = 8, 4
LEASE_SECONDS = 60.0
SAMPLE_SECONDS = 0.01       # between two pg_stat_activity samples (each costs the server a little)
YARDSTICK_REPEATS = 300
WAIT_SECONDS = 900.0        # the longest a worker may take to answer before the run is given up


# --------------------------------------------------------------------------- what to run


@dataclass(frozen=True)
class ClaimsPlan:
    """What one run measures.

    ``db``: None for a throwaway PostgreSQL cluster, ``"sqlite"`` for a temporary SQLite
    file, a ``postgresql://`` URL, or the path of a SQLite file. ``games`` per worker
    count (rounded up to whole rotations of ``BOTS`` bots at ``PLAYERS``-seat tables);
    ``rounds`` the length of each stored game (15: a full classic game, about 540
    decisions in its log). ``fsync`` applies to the throwaway cluster only;
    ``yardstick_repeats`` is how many of each yardstick call the medians are of.
    """

    db: str | None = None
    workers: tuple[int, ...] = WORKER_COUNTS
    games: int = GAMES
    rounds: int = 15
    lease_seconds: float = LEASE_SECONDS
    fsync: bool = True
    seed: int = 1
    yardstick_repeats: int = YARDSTICK_REPEATS


@dataclass
class WorkerTally:
    """What one worker did in one run: each call's time in ms, and what its saves said."""

    name: str
    claim_ms: list[float] = field(default_factory=list)
    renew_ms: list[float] = field(default_factory=list)
    save_ms: list[float] = field(default_factory=list)
    release_ms: list[float] = field(default_factory=list)
    saved: int = 0              # saves that stored a new game
    refused: int = 0            # saves of a game already stored (a deal played twice)
    lost: int = 0               # renewals that found the lease gone
    started: float = 0.0        # time.monotonic(): the same clock in every process of the machine
    ended: float = 0.0
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
class RunFigures:
    """One worker count's figures."""

    workers: int
    games: int
    seconds: float
    saves_per_s: float
    claim_p50_ms: float
    claim_p99_ms: float
    save_p50_ms: float
    save_p99_ms: float
    db_ms_per_game: float               # claim + renew + save + release, summed over workers, per game
    added_ms_per_game: float | None     # db_ms_per_game above the one-worker run's (None: no such run)
    lock_waiting: float | None          # mean sessions waiting for a Lock (None: SQLite)
    lock_wait_share: float | None       # that over the workers: the share of their time
    lock_wait_ms_per_game: float | None
    top_waits: str                      # the most frequent wait events, share of samples x sessions
    client_cpu_ms_per_game: float
    server_cpu_ms_per_game: float | None     # the server's processes (None: not a server this run started)
    machine_busy: float | None          # share of the machine's CPU time busy (None: no /proc/stat)
    refused: int
    lost: int


@dataclass(frozen=True)
class SlotCheck:
    """Exactly once, for one run's tournament."""

    tournament_id: str
    scheduled: int
    missing: int
    twice: int
    refused: int

    @property
    def ok(self) -> bool:
        return self.missing == 0 and self.twice == 0 and self.refused == 0


@dataclass(frozen=True)
class Yardstick:
    """The server with nothing of the arena in the way, medians in ms."""

    select1_ms: float
    bare_write_ms: float

    @property
    def bare_writes_per_s(self) -> float:
        return 1000.0 / self.bare_write_ms


@dataclass
class ClaimsReport:
    """A whole run: the database, the yardstick, each worker count's figures, the check."""

    database: str
    settings: dict[str, str]
    games: int
    yardstick: Yardstick
    runs: list[RunFigures]
    checks: list[SlotCheck]
    load_before: float

    @property
    def exactly_once(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def best(self) -> RunFigures:
        return max(self.runs, key=lambda run: run.saves_per_s)

    def figures(self) -> dict[str, Any]:
        """Every figure as one flat dict (``--json``): the run's, then ``wN_...`` per count."""
        flat: dict[str, Any] = {
            "database": self.database, **self.settings, "games_per_run": self.games,
            "load_average_before": round(self.load_before, 2),
            "yardstick_select1_ms": round(self.yardstick.select1_ms, 3),
            "yardstick_bare_write_ms": round(self.yardstick.bare_write_ms, 3),
            "bare_writes_per_s": round(self.yardstick.bare_writes_per_s, 1),
            "best_saves_per_s": self.best.saves_per_s, "best_workers": self.best.workers,
            "best_over_bare_writes": round(self.best.saves_per_s / self.yardstick.bare_writes_per_s, 3),
        }
        for run in self.runs:
            for key, value in vars(run).items():
                if key != "workers":
                    flat[f"w{run.workers}_{key}"] = value
        flat["missing"] = sum(check.missing for check in self.checks)
        flat["stored_twice"] = sum(check.twice for check in self.checks)
        flat["refused_saves"] = sum(check.refused for check in self.checks)
        flat["exactly_once"] = self.exactly_once
        return flat

    def table(self) -> str:
        """The figures for people: one line per worker count, the yardstick, the check."""
        def opt(value: float | None, spec: str) -> str:
            return "-" if value is None else format(value, spec)

        lines = [f"{self.database} ({', '.join(f'{k} {v}' for k, v in self.settings.items())}); "
                 f"{self.games} games per worker count; load average before {self.load_before:.2f}",
                 f"{'workers':>7}{'saves/s':>9}{'claim p50':>10}{'p99 ms':>8}{'save p50':>9}{'p99 ms':>8}"
                 f"{'db ms/g':>8}{'added':>8}{'lock wait':>10}{'ms/g':>8}{'cpu/g':>7}{'server':>7}{'busy':>6}"
                 "  top waits"]
        for r in self.runs:
            lines.append(
                f"{r.workers:>7}{r.saves_per_s:>9.1f}{r.claim_p50_ms:>10.2f}{r.claim_p99_ms:>8.2f}"
                f"{r.save_p50_ms:>9.2f}{r.save_p99_ms:>8.2f}{r.db_ms_per_game:>8.2f}"
                f"{opt(r.added_ms_per_game, '.2f'):>8}{opt(r.lock_wait_share, '.0%'):>10}"
                f"{opt(r.lock_wait_ms_per_game, '.2f'):>8}{r.client_cpu_ms_per_game:>7.2f}"
                f"{opt(r.server_cpu_ms_per_game, '.2f'):>7}"
                f"{opt(r.machine_busy, '.0%'):>6}  {r.top_waits or '-'}")
        lines.append("db ms/g: claim + renew + save + release per game, summed over the workers; added: above one "
                     "worker's; lock wait: the share of the workers' time their sessions waited for a lock "
                     "(pg_stat_activity), and per game in ms; cpu/g, server: the workers' and the server's CPU "
                     "per game in ms; busy: the machine's CPUs")
        y, best = self.yardstick, self.best
        lines.append(f"yardstick: SELECT 1 {y.select1_ms:.3f} ms; bare write transaction {y.bare_write_ms:.3f} ms "
                     f"({y.bare_writes_per_s:.0f}/s on one connection)")
        lines.append(f"best: {best.saves_per_s:.1f} saves/s at {best.workers} workers = "
                     f"{best.saves_per_s / y.bare_writes_per_s:.3f} x bare writes/s")
        missing, twice = sum(c.missing for c in self.checks), sum(c.twice for c in self.checks)
        refused = sum(c.refused for c in self.checks)
        lines.append(f"exactly once: {'yes' if self.exactly_once else 'NO'} "
                     f"({sum(c.scheduled for c in self.checks)} scheduled games, {missing} missing, "
                     f"{twice} stored twice, {refused} saves refused)")
        return "\n".join(lines)


@contextmanager
def database(plan: ClaimsPlan) -> Iterator[Database]:
    """The database the plan names, started or made for the run when it is a throwaway."""
    if plan.db is None:
        with throwaway_postgres(fsync=plan.fsync, max_connections=max(100, 2 * max(plan.workers) + 20)) as started:
            yield started
    elif plan.db == "sqlite":
        with tempfile.TemporaryDirectory(prefix="arena-claims-") as folder:
            yield Database(os.path.join(folder, "claims.db"))
    else:
        yield Database(plan.db)


# --------------------------------------------------------------------------- a worker process


def _timed(times: list[float], call: Any, *args: Any) -> Any:
    started = time.perf_counter()
    result = call(*args)
    times.append(1000 * (time.perf_counter() - started))
    return result


def play_tournament(store: Store, name: str, tournament_id: str, bots: dict[int, list[str]],
                    template: MatchRecord, lease_seconds: float) -> WorkerTally:
    """Play a tournament's deals as ``arena worker`` does, at no cost per game: claim, renew,
    save each game (the template record in the game's slot and seats), release; until no
    deal is left to claim."""
    tally = WorkerTally(name)
    cpu_started, tally.started = time.process_time(), time.monotonic()
    while True:
        unit = _timed(tally.claim_ms, store.claim_unit, name, lease_seconds, tournament_id)
        if unit is None:
            tally.claim_ms.pop()        # the claim that found nothing left is not a claim's latency
            break
        renewed = _timed(tally.renew_ms, store.renew_lease, unit, name, lease_seconds)
        if renewed is None:
            tally.lost += 1
            continue
        for index in unit.game_indexes:
            record = replace(template, match_id=f"{tournament_id}-{index}", tournament_id=tournament_id,
                             game_index=index, bots=list(bots[index]))
            if _timed(tally.save_ms, store.save_match, record):
                tally.saved += 1
            else:
                tally.refused += 1
        _timed(tally.release_ms, store.release_unit, renewed, name)
    tally.ended, tally.cpu_seconds = time.monotonic(), time.process_time() - cpu_started
    return tally


def worker_main(location: str, name: str, template: MatchRecord, lease_seconds: float,
                commands: Any, results: Any) -> None:
    """A worker process: open the store (its own connection), then for each command
    ``(tournament_id, bots)`` say it is ready, wait for ``"go"``, play, and send the tally.
    ``None`` ends it. An error goes back as text, so that the run stops instead of hanging."""
    try:
        store = Store(location)
        Probes(store).round_trip()          # the connection is open before any timing
        results.put(("up", name, None))
        while (command := commands.get()) is not None:
            tournament_id, bots = command
            results.put(("ready", name, None))
            if commands.get() != "go":
                break
            results.put(("done", name, play_tournament(store, name, tournament_id, bots, template, lease_seconds)))
        store.close()
    except BaseException:   # noqa: BLE001 (anything a worker hits is reported to the run)
        results.put(("error", name, traceback.format_exc()))


@dataclass
class Workers:
    """The worker processes of a run, started once and reused for every worker count."""

    processes: list[Any]
    commands: list[Any]
    results: Any

    def expect(self, kind: str, count: int) -> list[Any]:
        """Wait for ``count`` messages of ``kind``; a worker's error is raised here."""
        got: list[Any] = []
        while len(got) < count:
            try:
                message, name, payload = self.results.get(timeout=WAIT_SECONDS)
            except Empty:
                raise RuntimeError(f"the workers sent no {kind!r} within {WAIT_SECONDS:.0f} s") from None
            if message == "error":
                raise RuntimeError(f"worker {name} failed:\n{payload}")
            if message != kind:
                raise RuntimeError(f"worker {name} sent {message!r}, expected {kind!r}")
            got.append(payload)
        return got

    def stop(self) -> None:
        for queue in self.commands:
            queue.put(None)
        for process in self.processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()


@contextmanager
def start_workers(location: str, count: int, template: MatchRecord, lease_seconds: float) -> Iterator[Workers]:
    """``count`` worker processes (spawned: each imports the arena afresh and opens its
    own connection), all connected when this yields; stopped at the end."""
    context = mp.get_context("spawn")
    results = context.Queue()
    commands = [context.Queue() for _ in range(count)]
    processes = [context.Process(target=worker_main, args=(location, f"bench-{i}", template, lease_seconds,
                                                           commands[i], results), daemon=True)
                 for i in range(count)]
    for process in processes:
        process.start()
    workers = Workers(processes, commands, results)
    try:
        workers.expect("up", count)
        yield workers
    finally:
        workers.stop()


# --------------------------------------------------------------------------- sampling the server


@dataclass
class WaitSampler:
    """Samples ``pg_stat_activity`` on its own thread while the workers run."""

    probes: Probes
    samples: int = 0
    lock: int = 0
    events: Counter[str] = field(default_factory=Counter)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            waits = self.probes.server_waits()
            if waits is None:
                return
            self.samples += 1
            self.lock += waits.lock
            self.events.update(waits.events)
            self._stop.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def top(self, count: int = 3) -> str:
        """The most frequent wait events, each as the mean number of sessions in it."""
        if not self.samples:
            return ""
        return ", ".join(f"{event} {n / self.samples:.2f}" for event, n in self.events.most_common(count))


# --------------------------------------------------------------------------- one worker count


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile, nearest rank.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5), percentile(list(range(100)), 0.99)
    (2.0, 98)
    """
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


def new_schedule(store: Store, workers: int, games: int, seed: int) -> tuple[str, dict[int, list[str]]]:
    """A fresh tournament and its stored schedule, as ``arena tournament`` stores them;
    its bots by game index."""
    from arena.tournament.schedule import make_schedule

    pool = [f"bot{i}" for i in range(BOTS)]
    schedule = make_schedule(pool, players=PLAYERS, games=games, master_seed=seed)
    tournament_id = store.create_tournament({"bench": "claims", "workers": workers}, master_seed=seed)
    store.put_schedule(tournament_id, schedule)
    return tournament_id, {game.index: list(game.bots) for game in schedule}


def run_count(store: Store, pool: Workers, workers: int, games: int, seed: int,
              baseline_ms: float | None, server_pid: int | None) -> tuple[RunFigures, str]:
    """One worker count against a fresh schedule: its figures and its tournament."""
    tournament_id, bots = new_schedule(store, workers, games, seed)
    for queue in pool.commands[:workers]:
        queue.put((tournament_id, bots))
    pool.expect("ready", workers)
    sampler = WaitSampler(Probes(store))
    sampler.start()
    cpu_before, server_before = cpu_busy(), children_cpu(server_pid)
    for queue in pool.commands[:workers]:
        queue.put("go")
    tallies: list[WorkerTally] = pool.expect("done", workers)
    cpu_after, server_after = cpu_busy(), children_cpu(server_pid)
    sampler.stop()
    store.set_tournament_status(tournament_id, "finished")   # no real worker should claim it

    seconds = max(t.ended for t in tallies) - min(t.started for t in tallies)
    claims = [ms for t in tallies for ms in t.claim_ms]
    saves = [ms for t in tallies for ms in t.save_ms]
    db_ms = sum(sum(t.claim_ms) + sum(t.renew_ms) + sum(t.save_ms) + sum(t.release_ms) for t in tallies)
    saved = sum(t.saved for t in tallies)
    per_game = db_ms / max(saved, 1)
    waiting = sampler.lock / sampler.samples if sampler.samples else None
    busy = busy_share(cpu_before, cpu_after)
    figures = RunFigures(
        workers=workers, games=saved, seconds=round(seconds, 3), saves_per_s=round(saved / seconds, 1),
        claim_p50_ms=round(percentile(claims, 0.5), 3), claim_p99_ms=round(percentile(claims, 0.99), 3),
        save_p50_ms=round(percentile(saves, 0.5), 3), save_p99_ms=round(percentile(saves, 0.99), 3),
        db_ms_per_game=round(per_game, 3),
        added_ms_per_game=None if baseline_ms is None else round(per_game - baseline_ms, 3),
        lock_waiting=None if waiting is None else round(waiting, 3),
        lock_wait_share=None if waiting is None else round(waiting / workers, 3),
        lock_wait_ms_per_game=None if waiting is None else round(1000 * waiting * seconds / max(saved, 1), 3),
        top_waits=sampler.top(),
        client_cpu_ms_per_game=round(1000 * sum(t.cpu_seconds for t in tallies) / max(saved, 1), 3),
        server_cpu_ms_per_game=None if server_before is None or server_after is None
        else round(1000 * (server_after - server_before) / max(saved, 1), 3),
        machine_busy=None if busy is None else round(busy, 3),
        refused=sum(t.refused for t in tallies), lost=sum(t.lost for t in tallies),
    )
    return figures, tournament_id


def check_slots(probes: Probes, tournament_id: str, scheduled: int, refused: int) -> SlotCheck:
    """Every scheduled game of the tournament stored once: none missing, none twice."""
    counts = probes.slot_counts(tournament_id)
    return SlotCheck(tournament_id, scheduled, missing=sum(1 for i in range(scheduled) if counts.get(i, 0) == 0),
                     twice=sum(1 for n in counts.values() if n > 1), refused=refused)


def measure_yardstick(probes: Probes, repeats: int = YARDSTICK_REPEATS) -> Yardstick:
    """Median ``SELECT 1`` and bare write transaction, after a few of each to warm up."""
    def median_ms(call: Any) -> float:
        for _ in range(10):
            call()
        times: list[float] = []
        for _ in range(repeats):
            _timed(times, call)
        return statistics.median(times)

    return Yardstick(select1_ms=median_ms(probes.round_trip), bare_write_ms=median_ms(probes.bare_write))


def template_record(rounds: int, seed: int) -> MatchRecord:
    """One full game of random decisions, recorded as the referee records one: every save
    stores a copy of it in another slot (the log's size is what a real save writes)."""
    import random

    from arena.bench.store import played_match

    return played_match(random.Random(seed), "template", [f"bot{i}" for i in range(PLAYERS)], rounds=rounds)


def bench_claims(plan: ClaimsPlan) -> ClaimsReport:
    """Run the plan (see the module docstring) and return its report."""
    from arena.tournament.schedule import round_games

    if not plan.workers or min(plan.workers) < 1:
        raise ValueError("worker counts must be at least 1")
    games = round_games(plan.games, BOTS, PLAYERS)
    template = template_record(plan.rounds, plan.seed)
    load_before = os.getloadavg()[0]
    with database(plan) as db, Store(db.location) as store:
        database_name = "sqlite" if store.is_sqlite else "postgresql"
        probes = Probes(store)
        settings = probes.server_settings()
        yardstick = measure_yardstick(probes, plan.yardstick_repeats)
        runs: list[RunFigures] = []
        done: list[tuple[str, int]] = []
        baseline: float | None = None
        with start_workers(db.location, max(plan.workers), template, plan.lease_seconds) as pool:
            for number, workers in enumerate(plan.workers):
                figures, tournament_id = run_count(store, pool, workers, games, plan.seed + number, baseline,
                                                   db.server_pid)
                if workers == 1 and baseline is None:
                    baseline = figures.db_ms_per_game
                    figures = replace(figures, added_ms_per_game=0.0)
                runs.append(figures)
                done.append((tournament_id, figures.refused))
        checks = [check_slots(probes, tournament_id, games, refused) for tournament_id, refused in done]
    return ClaimsReport(database_name, settings, games, yardstick, runs, checks, load_before)


def parse_counts(text: str) -> tuple[int, ...]:
    """``"1,2,4"`` as worker counts.

    >>> parse_counts("1, 2,8")
    (1, 2, 8)
    """
    counts = tuple(int(part) for part in text.replace(" ", "").split(",") if part)
    if not counts or min(counts) < 1 or max(counts) > 256:
        raise ValueError("worker counts are 1 to 256, comma-separated")
    return counts
