"""Running matches: the match runners (a local referee with its bots, or a remote arena),
and the tally a progress line shows.

A tournament is its settings (arena.tournament.settings) plus a master seed. Its games are
claimed deal by deal from the database and played by workers (arena.tournament.worker):
resuming one is simply playing every game the store does not have yet; each match is
stored in one transaction, so a game is either wholly stored or played again.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import grpc

from arena.records import BotCrash, MatchRecord, MatchSpec
from arena.referee.auth import MAX_STREAMS_PER_PROCESS
from arena.referee.limits import GRACE
from arena.referee.loopback import LoopbackReferee
from arena.referee.seating import Absence
from arena.tls import ClientTls, TlsError, tls_problem
from arena.tournament.lineup import BotEntry, BotProcesses, BotStartError, program_files, socket_folder
from arena.tournament.lock import forget_referee, note_referee
from arena.tournament.sandbox import CANNOT_START, SandboxError, SandboxMode, find_confinement
from arena.tournament.schedule import ScheduledGame
from arena.tournament.settings import TournamentSettings


def worker_name() -> str:
    """This worker's name in the leases: host and process, so an organiser can tell them apart."""
    return f"{socket.gethostname()}:{os.getpid()}"


class MatchRunner(Protocol):
    async def run_match(self, spec: MatchSpec) -> MatchRecord: ...


def match_spec(settings: TournamentSettings, tournament_id: str, game: ScheduledGame) -> MatchSpec:
    return MatchSpec(
        config=settings.game_config(game.seed),
        bots=list(game.bots),
        match_id=f"{tournament_id}-{game.index:05d}",
        bot_seeds=list(game.bot_seeds),
        move_time=settings.move_time,
        time_bank=settings.time_bank,
        max_faults=settings.max_faults,
        tournament_id=tournament_id,
        game_index=game.index,
        # A duplicate deal is played in every rotation of its table: until the last is
        # played, the cards of one are hands still to come (arena.web.disclosure).
        private=settings.deals == "duplicate",
    )


@dataclass
class Standing:
    """A running tally for the progress display."""

    games: int = 0
    place_sum: int = 0

    @property
    def average_place(self) -> float:
        return self.place_sum / self.games if self.games else float("inf")


@dataclass
class RunSummary:
    played: int
    skipped: int
    faults: int
    seconds: float
    standings: dict[str, Standing]

    def add(self, bots: Sequence[str], places: Sequence[int], faults: int) -> None:
        """Count one game: each seat's place under its bot, and the game's faults.

        >>> from collections import defaultdict
        >>> summary = RunSummary(0, 0, 0, 0.0, defaultdict(Standing))
        >>> summary.add(["a", "b"], [2, 1], faults=1); summary.add(["b", "a"], [1, 2], faults=0)
        >>> summary.leader(), summary.standings["a"].average_place, summary.faults
        ('b', 2.0, 1)
        """
        self.faults += faults
        for name, place in zip(bots, places):
            self.standings[name].games += 1
            self.standings[name].place_sum += place

    def leader(self) -> str | None:
        played = {n: s for n, s in self.standings.items() if s.games}
        return min(played, key=lambda n: played[n].average_place) if played else None


# A bot process that ends during a run is started again, at most RESTARTS times a run,
# after these delays (the last one repeats); its seats wait GRACE seconds for it.
RESTARTS = 5
RESTART_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)
RESTART_DELAYS_ENV = "ARENA_RESTART_DELAYS"   # e.g. "0.1,0.2": other delays, in seconds


def restart_delays() -> tuple[float, ...]:
    """The delays before a crashed bot's restarts: :data:`RESTART_DELAYS`, or those in
    ``ARENA_RESTART_DELAYS`` (:func:`parse_delays`; a test suite's shorter ones)."""
    text = os.environ.get(RESTART_DELAYS_ENV, "").strip()
    return parse_delays(text) if text else RESTART_DELAYS


def parse_delays(text: str) -> tuple[float, ...]:
    """Seconds separated by commas.

    >>> parse_delays("0.1, 0.2")
    (0.1, 0.2)
    >>> parse_delays("soon")
    Traceback (most recent call last):
    ...
    ValueError: ARENA_RESTART_DELAYS must be seconds separated by commas, e.g. 0.5,1,2 (got 'soon')
    """
    try:
        delays = tuple(float(part) for part in text.split(","))
    except ValueError:
        delays = ()
    if not delays or not all(0 <= d < 3600 for d in delays):
        raise ValueError(f"{RESTART_DELAYS_ENV} must be seconds separated by commas, e.g. 0.5,1,2 (got {text!r})")
    return delays


CONNECT_TIMEOUT = 30.0   # seconds a started bot has to say Hello
# The token of a seat whose process is down: no stream holds it, so the seat waits for
# that process (restarted with a token of its own) and goes to no other.
NO_PROCESS = "-"


def bot_of(key: str) -> str:
    """The bot a process key belongs to: ``name``, ``name@2`` (its second long-lived
    process) or ``name@MATCH`` (a process for one match).

    >>> bot_of("random"), bot_of("random@3")
    ('random', 'random')
    """
    return key.partition("@")[0]


@dataclass
class Pooled:
    """One long-lived process of a bot (by its key) and the deals it has played: the
    engine's deal seed with the variant, the same for every rotation of a duplicate deal."""

    key: str
    deals: set[tuple[str, int]] = field(default_factory=set)
    matches: int = 0                                 # in flight now
    ready: asyncio.Future[None] | None = None        # started lazily: done once up (or down)


class LocalArena:
    """A referee in this process plus the lineup's bots as child processes, confined as
    the settings say (arena.tournament.sandbox).

    Bots named in ``optional`` (the default sample bots of a new tournament) may fail to
    start: each is left out with one ``notice`` line and listed in ``dropped``, and the
    caller schedules without it. Any other bot that fails raises BotStartError.

    Each bot has a pool of long-lived processes, each in a sandbox of its own, and no
    process plays two games of one deal: a match gets, for each of its bots, a process
    that has not had its deal, and a new one joins the pool when none is free of it. A
    duplicate tournament's P-player tables so end up with P processes a bot, an A/B
    test's opponents with 2P, independent deals with one: what a bot saw in one
    rotation of a deal cannot tell it the cards of the next. Every bot starts one
    process before play (all must start and connect); the others start when first
    needed. With ``settings.shared_processes`` (bots the organiser trusts) one process a
    bot plays everything; with ``settings.fresh_per_match`` every match gets fresh
    processes of its bots, stopped when it ends.

    Once play has begun, a process that ends is an ordinary event: its seats follow the
    disconnect rule (grace, then forfeit), ``on_crash`` hears of it (to store it), and
    it is restarted up to RESTARTS times; after that its seats forfeit at once, and so
    do the bot's seats in later matches. ``hidden`` are the paths no confined bot may
    see (the database and the logs).
    """

    def __init__(self, settings: TournamentSettings, log_dir: Path, grace: float = GRACE,
                 optional: frozenset[str] = frozenset(), notice: Callable[[str], None] = lambda message: None,
                 hidden: Sequence[Path] = (), on_crash: Callable[[BotCrash], None] = lambda crash: None,
                 tournament_id: str | None = None):
        self.settings = settings
        self.referee = LoopbackReferee(move_time=settings.move_time, time_bank=settings.time_bank,
                                       max_faults=settings.max_faults, grace=grace)
        self.server = self.referee.server
        self.server.host.absent = {}
        self.log_dir = log_dir
        self.optional = optional
        self.notice = notice
        self.on_crash = on_crash
        self.tournament_id = tournament_id
        self.dropped: list[str] = []
        self.entries = {entry.name: entry for entry in settings.bots}
        self.hidden = [*hidden, log_dir.parent]
        self.bots: BotProcesses | None = None
        self.address = ""
        self._socket_dir: Path | None = None
        self._tokens: dict[str, str] = {}          # process key -> its one-run token
        self.pools: dict[str, list[Pooled]] = {}   # bot name -> its long-lived processes
        self._down: dict[str, Absence] = {}        # process key -> why it has no process now
        self._in_flight: dict[str, tuple[dict[str, str], dict[str, str]]] = {}  # match: keys, tokens by bot
        self._closing = False
        self._watchers: list[asyncio.Future[None]] = []
        try:
            self.restart_delays = restart_delays()
        except ValueError as error:
            notice(f"{error}; a crashed bot restarts after the usual delays")
            self.restart_delays = RESTART_DELAYS

    async def __aenter__(self) -> LocalArena:
        from arena.referee.server import tune_gc

        tune_gc()  # this process is the referee for the whole run
        confinement = find_confinement(SandboxMode(self.settings.sandbox), self.settings.bot_limits(), self.notice)
        try:
            self._socket_dir = socket_folder()
            socket = self._socket_dir / "referee.sock"
            self.bots = BotProcesses(self.log_dir, confinement, socket, self.hidden, dict(self.settings.bot_env))
            self.address = await self.referee.start(unix_socket=socket)
            note_referee(self.log_dir, self.address)   # for `arena web`: live matches
            for entry in self.entries.values():
                try:
                    await self._start(entry, entry.name)
                except BotStartError as error:
                    await self._leave_out(error)
            await self._wait_for_bots()
            if self.settings.fresh_per_match:
                # Every bot could start; from now on each match starts its own.
                for name in list(self.bots.processes):
                    await self._stop(name)
            else:
                for name in list(self.bots.processes):
                    pooled = Pooled(name)
                    self.pools[name] = [pooled]
                    self._watchers.append(asyncio.ensure_future(self._keep_running(self.entries[name], pooled)))
        except BaseException:
            await self.close()
            raise
        return self

    def describe_confinement(self) -> str:
        """The start line: how the bots are confined, and which processes play which games."""
        assert self.bots is not None
        if self.settings.fresh_per_match:
            processes = "a fresh process of each bot for every match"
        elif self.settings.shared_processes:
            processes = "one process a bot plays every game (--shared-processes)"
        else:
            processes = "no bot process plays two games of one deal"
        return f"{self.bots.confinement.describe()}; {processes}"

    async def _start(self, entry: BotEntry, key: str, max_matches: int | None = None) -> None:
        """Start one process of ``entry`` under ``key`` with a fresh one-run token, which
        the matches in flight that wait for ``key`` take at once (its seats go back to it)."""
        assert self.bots is not None
        token = self._tokens[key] = self.referee.admit(entry.name, max_streams=MAX_STREAMS_PER_PROCESS)
        for keys, tokens in self._in_flight.values():
            if keys.get(entry.name) == key:
                tokens[entry.name] = token
        await self.bots.start(entry, self.address, token, max_matches or self.settings.concurrency, key=key,
                              hidden=self._programs_of_others(entry))

    def _programs_of_others(self, entry: BotEntry) -> list[Path]:
        """The program files of the other bots the organiser named (the sample bots are
        public): a confined bot whose folder holds another bot does not see that bot."""
        own = set(program_files(entry))
        return [path for other in self.entries.values() if other.name != entry.name and other.cwd is not None
                for path in program_files(other) if path not in own]

    async def _stop(self, key: str) -> None:
        """Stop the process ``key`` and everything it started; its token stops working."""
        assert self.bots is not None
        if key in self.bots.processes:
            await self.bots.stop(only=key)
            self.bots.forget(key)
        token = self._tokens.pop(key, None)
        if token is not None:
            self.server.host.remove_local_bot(token)

    async def _leave_out(self, error: BotStartError) -> None:
        """Drop an optional bot that failed, saying why; any other bot's failure ends the start."""
        if error.bot not in self.optional:
            raise error
        self.dropped.append(error.bot)
        await self._stop(error.bot)
        self.notice(f"{error} - left out of the lineup")

    async def _wait_for_bots(self, timeout: float = CONNECT_TIMEOUT) -> None:
        assert self.bots is not None
        deadline = time.monotonic() + timeout
        while True:
            names = [n for n in self.settings.bot_names() if n not in self.dropped]
            waiting = asyncio.create_task(self.server.host.wait_connected(names, max(0.0, deadline - time.monotonic())))
            dead: dict[str, int] = {}
            while not waiting.done() and not dead:
                dead = {n: code for n, code in self.bots.exited().items() if n in names}
                if not dead:
                    await asyncio.wait({waiting}, timeout=0.1)
            if not dead:
                try:
                    return waiting.result()
                except TimeoutError as exc:
                    late = [n for n in names if n not in self.server.host.connected_bots()]
                    hints = {name: await self._hint(name) for name in late}
                    if not late or not set(late) <= self.optional:
                        hint = next((h for h in hints.values() if h), "")
                        raise BotStartError(late[0] if late else "", f"{exc}{hint} (bot output is in {self.log_dir})",
                                            self.log_dir) from None
                    for name in late:
                        await self._leave_out(BotStartError(name, f"bot {name!r} did not connect in {timeout:g} s"
                                                            f"{hints[name]}"))
                    continue
            waiting.cancel()
            for name in dead:
                log = self.log_dir / f"{name}.log"
                last = await self.bots.last_line(name, log)
                if last.startswith(CANNOT_START):   # the sandbox's exec refused the command
                    await self._leave_out(BotStartError(name, f"bot {name!r} {last}"))
                    continue
                await self._leave_out(BotStartError(
                    name, f"bot {name!r} {self.bots.end_reason(name)} before connecting{await self._hint(name)} "
                    f"(its output: {log})", log))

    async def _hint(self, name: str) -> str:
        """The sandbox's hint for the bot ``name`` that never connected, if its output shows
        that confinement may be why (BotProcesses.never_connected_hint)."""
        assert self.bots is not None
        return self.bots.never_connected_hint(await self.bots.output_of(name, self.log_dir / f"{name}.log"))

    # -- a bot that ends during the run

    async def _keep_running(self, entry: BotEntry, pooled: Pooled) -> None:
        """Watch the process ``pooled.key`` (start it first when it was added lazily); when
        it ends, record why and start it again (after a delay), up to RESTARTS times.
        While it is down its new seats start absent (:attr:`_down`)."""
        key, down = pooled.key, self._down
        if pooled.ready is not None:
            try:
                failed = await self._start_lazily(entry, pooled)
            finally:
                if not pooled.ready.done():
                    pooled.ready.set_result(None)
            if failed is None:
                return
            reason = failed if failed else await self._ended(key)
        else:
            reason = await self._ended(key)
        for restart in range(RESTARTS + 1):
            again = restart < RESTARTS
            down[key] = Absence(f"its process {reason}" + ("; restarting" if again else
                                f"; not restarted after {RESTARTS} restarts"), final=not again)
            self._crashed(key, reason, again)
            await self._stop(key)
            if not again:
                return
            await asyncio.sleep(self.restart_delays[min(restart, len(self.restart_delays) - 1)])
            try:
                await self._start(entry, key)
            except (BotStartError, SandboxError) as error:
                down[key] = Absence(f"it cannot start again: {error}", final=True)
                self._crashed(key, str(error), False)
                return
            failed = await self._connected(key)
            if failed is not None:
                reason = failed
                continue
            down.pop(key, None)
            reason = await self._ended(key)

    async def _start_lazily(self, entry: BotEntry, pooled: Pooled) -> str | None:
        """The first start of a process added to a pool during play: "" once it is up;
        why it did not connect (it is then down, to be restarted); None when it cannot
        start at all (down for good, the bot's seats forfeit from now on)."""
        key = pooled.key
        try:
            await self._start(entry, key)
        except (BotStartError, SandboxError) as error:
            self._down[key] = Absence(f"its process cannot start: {error}", final=True)
            self._crashed(key, str(error), False)
            await self._stop(key)
            return None
        failed = await self._connected(key)
        if failed is not None:
            self._down[key] = Absence(f"its process {failed}; restarting")
        return failed or ""

    async def _ended(self, key: str) -> str:
        """Wait for the process ``key`` to end; why it did, in words."""
        assert self.bots is not None
        await self.bots.processes[key].wait()
        return self.bots.end_reason(key)

    async def _connected(self, key: str) -> str | None:
        """Wait until the process ``key`` connects: None, or why it did not (it ended
        first, or was stopped for not connecting within CONNECT_TIMEOUT)."""
        assert self.bots is not None
        proc = self.bots.processes[key]
        ended = asyncio.ensure_future(proc.wait())
        connected = asyncio.ensure_future(self.server.host.wait_for_tokens([self._tokens[key]], CONNECT_TIMEOUT))
        try:
            await asyncio.wait({ended, connected}, return_when=asyncio.FIRST_COMPLETED)
            if connected.done() and not connected.cancelled() and connected.exception() is None:
                return None
            if ended.done():
                return f"{self.bots.end_reason(key)} before connecting"
            await self.bots.launched[key].kill()
            await proc.wait()
            return f"did not connect within {CONNECT_TIMEOUT:g} s"
        finally:
            for task in (ended, connected):
                task.cancel()

    def _crashed(self, key: str, reason: str, restarted: bool) -> None:
        if self._closing:
            return
        name = bot_of(key)
        self.notice(f"bot {name} {reason}" + ("; restarting it" if restarted else ""))
        proc = self.bots.processes.get(key) if self.bots is not None else None
        code = proc.returncode if proc is not None else None
        self.on_crash(BotCrash(bot=name, reason=reason, exit_code=code if code is not None and code >= 0 else None,
                               tournament_id=self.tournament_id, variant=self.settings.variant,
                               worker=worker_name(), restarted=restarted))

    # -- matches

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        if self.settings.fresh_per_match:
            return await self._run_fresh(spec)
        return await self._run_pooled(spec)

    async def _run_pooled(self, spec: MatchSpec) -> MatchRecord:
        """Play ``spec`` with a long-lived process of each of its bots that has not had its
        deal (:meth:`_process_for`): each bot's seats go to that process alone, and start
        absent while it is down. A seat of a bot this arena did not start (a person's, in
        ``arena play``) goes to any stream of that name."""
        chosen = {name: self._process_for(name, spec) for name in dict.fromkeys(spec.bots) if name in self.pools}
        try:
            for pooled in chosen.values():
                if pooled.ready is not None:
                    await asyncio.shield(pooled.ready)
            keys = {name: pooled.key for name, pooled in chosen.items()}
            tokens = {name: self._tokens.get(key, NO_PROCESS) for name, key in keys.items()}
            absent = {name: self._down[key] for name, key in keys.items() if key in self._down}
            self._in_flight[spec.match_id] = (keys, tokens)
            return await self.server.host.run_match(spec, tokens=tokens, absent=absent)
        finally:
            self._in_flight.pop(spec.match_id, None)
            for pooled in chosen.values():
                pooled.matches -= 1

    def _process_for(self, name: str, spec: MatchSpec) -> Pooled:
        """The process of bot ``name`` that plays ``spec``, counted as playing it (chosen
        without an await, so that two matches never race for the same choice).

        With shared processes, the bot's one process. Otherwise one that has not had
        this deal and has a free match slot, one that is up before one starting before
        one being restarted, the oldest first; when there is none, a new process added to
        the pool (:meth:`_grow`). The bot's first match starts, in the background, the
        processes the schedule will need (:meth:`_needed`), so that a deal's next rotation
        rarely waits for one to start. A bot given up on (a process past its restarts)
        gets that process: its seats forfeit at once."""
        pool = self.pools[name]
        deal = (spec.config.variant, spec.config.seed)
        gone = [pooled for pooled in pool if pooled.key in self._down and self._down[pooled.key].final]
        if self.settings.shared_processes or gone:
            chosen = (gone or pool)[0]
        else:
            while len(pool) < self._needed(name):
                self._grow(name)
            free = [pooled for pooled in pool
                    if deal not in pooled.deals and pooled.matches < max(1, self.settings.concurrency)]
            # min is stable: the oldest first
            chosen = min(free, key=lambda pooled: (pooled.key in self._down, not self._up(pooled))) if free \
                else self._grow(name)
        chosen.deals.add(deal)
        chosen.matches += 1
        return chosen

    @staticmethod
    def _up(pooled: Pooled) -> bool:
        """Whether ``pooled`` has been started (it may have ended since)."""
        return pooled.ready is None or pooled.ready.done()

    def _grow(self, name: str) -> Pooled:
        """A new process of bot ``name`` in its pool, starting (:meth:`_keep_running`)."""
        pool = self.pools[name]
        pooled = Pooled(f"{name}@{len(pool) + 1}", ready=asyncio.get_running_loop().create_future())
        pool.append(pooled)
        self._watchers.append(asyncio.ensure_future(self._keep_running(self.entries[name], pooled)))
        return pooled

    def _needed(self, name: str) -> int:
        """The processes bot ``name`` needs for this schedule: one for each game of a deal
        it plays (a seat rotation; in an A/B test an opponent plays each rotation twice,
        once against each side), one when every game has its own deal; never more than
        the games (``arena play``'s one match)."""
        sprt = self.settings.sprt
        if sprt is not None:
            games = self.settings.players * (1 if name in (sprt.candidate, sprt.baseline) else 2)
        else:
            games = self.settings.players if self.settings.deals == "duplicate" else 1
        return min(games, self.settings.games)

    async def _run_fresh(self, spec: MatchSpec) -> MatchRecord:
        """Play ``spec`` with a fresh process of each of its bots, started for it and
        stopped after it: nothing a bot saw in one match survives into the next. A
        process that fails to start, to connect, or ends before the match does is a
        crash; its seats follow the disconnect rule."""
        assert self.bots is not None
        keys = {name: f"{name}@{spec.match_id}" for name in dict.fromkeys(spec.bots) if name in self.entries}
        absent: dict[str, Absence] = {}
        try:
            for name, key in keys.items():
                try:
                    await self._start(self.entries[name], key, max_matches=1)
                except BotStartError as error:
                    absent[name] = Absence(str(error), final=True)
                    self._crashed(key, str(error), False)
            waits = {name: asyncio.ensure_future(self._connected(keys[name])) for name in keys if name not in absent}
            for name, waiting in waits.items():
                failed = await waiting
                if failed is not None:
                    absent[name] = Absence(f"its process for this match {failed}", final=True)
                    self._crashed(keys[name], failed, False)
            tokens = {name: self._tokens.get(key, NO_PROCESS) for name, key in keys.items()}
            return await self.server.host.run_match(spec, tokens=tokens, absent=absent)
        finally:
            for name, key in keys.items():
                proc = self.bots.processes.get(key)
                if name not in absent and proc is not None and proc.returncode not in (None, 0):
                    self._crashed(key, self.bots.end_reason(key), False)
                await self._stop(key)

    async def close(self) -> None:
        self._closing = True
        for task in self._watchers:
            task.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        if self.bots is not None:
            for key in list(self.bots.processes):
                await self._stop(key)
            self.bots.remove_copies()
        await self.server.stop()
        forget_referee(self.log_dir)
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RemoteArena:
    """Matches run by a running ``arena serve`` through its organiser calls.

    With ``tls`` the channel speaks TLS and trusts the referee's certificate as ``tls``
    says (``--tls-ca FILE`` or ``--tls``). A call that fails in the TLS handshake (or
    plaintext to a TLS port) raises a one-line :class:`~arena.tls.TlsError` saying what to
    check; other failures are grpc's errors as they come.

    The server stores each match it plays in its own database; :meth:`stored_there` says
    whether it stored a given one (the organiser's own database may be that one)."""

    def __init__(self, address: str, admin_token: str, tls: ClientTls | None = None):
        from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc

        self.address = address
        self.tls = tls
        self.metadata = (("authorization", f"Bearer {admin_token}"),)
        options = [("grpc.max_receive_message_length", 64 << 20)]
        self.channel = (tls.secure_channel(address, options) if tls is not None
                        else grpc.aio.insecure_channel(address, options=options))
        self.stub = arena_pb2_grpc.ArenaStub(self.channel)
        self._stored: set[str] = set()      # ids of matches played here that the server stored

    async def connected_bots(self, variant: str) -> list[str]:
        from arena.wire.pb.wizard_arena.v1 import arena_pb2

        try:
            reply = await self.stub.ListBots(arena_pb2.ListBotsRequest(), metadata=self.metadata, timeout=10)
        except grpc.aio.AioRpcError as error:
            raise await self._explained(error) from None
        return sorted(b.name for b in reply.bots if not b.variants or variant in b.variants)

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        from arena.wire import calls

        try:
            reply = await self.stub.RunMatch(calls.run_match_request(spec), metadata=self.metadata)
        except grpc.aio.AioRpcError as error:
            raise await self._explained(error) from None
        record, stored = calls.match_played(reply)
        if stored:
            self._stored.add(record.match_id)
        return record

    def stored_there(self, match_id: str) -> bool:
        """Whether the server said it stored the match it played under this id (asked once
        a match: the answer is forgotten)."""
        if match_id in self._stored:
            self._stored.discard(match_id)
            return True
        return False

    async def _explained(self, error: grpc.aio.AioRpcError) -> Exception:
        """A TlsError for a failure at the TLS layer (which may ask the server whether it
        speaks TLS: off the event loop), else ``error`` itself."""
        problem = await asyncio.to_thread(tls_problem, error, self.address, self.tls)
        return TlsError(problem) if problem is not None else error

    async def __aenter__(self) -> RemoteArena:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
