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
from dataclasses import asdict, dataclass
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
from arena.tournament.sandbox import CANNOT_START, SandboxMode, find_confinement
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


class LocalArena:
    """A referee in this process plus the lineup's bots as child processes, confined as
    the settings say (arena.tournament.sandbox).

    Bots named in ``optional`` (the default sample bots of a new tournament) may fail to
    start: each is left out with one ``notice`` line and listed in ``dropped``, and the
    caller schedules without it. Any other bot that fails raises BotStartError.

    Once play has begun, a bot process that ends is an ordinary event: its seats follow
    the disconnect rule (grace, then forfeit), ``on_crash`` hears of it (to store it),
    and it is restarted up to RESTARTS times; after that its seats forfeit at once.
    With ``settings.fresh_per_match`` every match gets fresh processes of its bots,
    stopped when it ends. ``hidden`` are the paths no confined bot may see (the
    database and the logs).
    """

    def __init__(self, settings: TournamentSettings, log_dir: Path, grace: float = GRACE,
                 optional: frozenset[str] = frozenset(), notice: Callable[[str], None] = lambda message: None,
                 hidden: Sequence[Path] = (), on_crash: Callable[[BotCrash], None] = lambda crash: None,
                 tournament_id: str | None = None):
        self.settings = settings
        self.referee = LoopbackReferee(move_time=settings.move_time, time_bank=settings.time_bank,
                                       max_faults=settings.max_faults, grace=grace)
        self.server = self.referee.server
        self.server.absent = {}
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
                self._watchers = [asyncio.ensure_future(self._keep_running(self.entries[name]))
                                  for name in self.bots.processes]
        except BaseException:
            await self.close()
            raise
        return self

    def describe_confinement(self) -> str:
        assert self.bots is not None
        return self.bots.confinement.describe()

    async def _start(self, entry: BotEntry, key: str, max_matches: int | None = None) -> None:
        """Start one process of ``entry`` under ``key`` with a fresh one-run token."""
        assert self.bots is not None
        token = self._tokens[key] = self.referee.admit(entry.name, max_streams=MAX_STREAMS_PER_PROCESS)
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
            self.server.remove_local_bot(token)

    async def _leave_out(self, error: BotStartError) -> None:
        """Drop an optional bot that failed, saying why; any other bot's failure ends the start."""
        if error.bot not in self.optional:
            raise error
        self.dropped.append(error.bot)
        await self._stop(error.bot)
        self.notice(f"{error} - left out of the lineup")

    async def _wait_for_bots(self, timeout: float = CONNECT_TIMEOUT) -> None:
        assert self.bots is not None
        hint = self.bots.never_connected_hint()
        deadline = time.monotonic() + timeout
        while True:
            names = [n for n in self.settings.bot_names() if n not in self.dropped]
            waiting = asyncio.create_task(self.server.wait_connected(names, max(0.0, deadline - time.monotonic())))
            dead: dict[str, int] = {}
            while not waiting.done() and not dead:
                dead = {n: code for n, code in self.bots.exited().items() if n in names}
                if not dead:
                    await asyncio.wait({waiting}, timeout=0.1)
            if not dead:
                try:
                    return waiting.result()
                except TimeoutError as exc:
                    late = [n for n in names if n not in self.server.registry.by_name]
                    if not late or not set(late) <= self.optional:
                        raise BotStartError(late[0] if late else "", f"{exc}{hint} (bot output is in {self.log_dir})",
                                            self.log_dir) from None
                    for name in late:
                        await self._leave_out(BotStartError(name, f"bot {name!r} did not connect in {timeout:g} s"
                                                            f"{hint}"))
                    continue
            waiting.cancel()
            for name in dead:
                log = self.log_dir / f"{name}.log"
                last = await self.bots.last_line(name, log)
                if last.startswith(CANNOT_START):   # the sandbox's exec refused the command
                    await self._leave_out(BotStartError(name, f"bot {name!r} {last}"))
                    continue
                await self._leave_out(BotStartError(
                    name, f"bot {name!r} {self.bots.end_reason(name)} before connecting{hint} (its output: {log})",
                    log))

    # -- a bot that ends during the run

    async def _keep_running(self, entry: BotEntry) -> None:
        """Watch the bot's process; when it ends, record why and start it again (after a
        delay), up to RESTARTS times. While it is down its new seats start absent."""
        assert self.bots is not None and self.server.absent is not None
        name, absent = entry.name, self.server.absent
        reason = await self._ended(name)
        for restart in range(RESTARTS + 1):
            again = restart < RESTARTS
            absent[name] = Absence(f"its process {reason}" + ("; restarting" if again else
                                   f"; not restarted after {RESTARTS} restarts"), final=not again)
            self._crashed(name, reason, again)
            await self._stop(name)
            if not again:
                return
            await asyncio.sleep(self.restart_delays[min(restart, len(self.restart_delays) - 1)])
            try:
                await self._start(entry, name)
            except BotStartError as error:
                absent[name] = Absence(f"it cannot start again: {error}", final=True)
                self._crashed(name, str(error), False)
                return
            failed = await self._connected(name)
            if failed is not None:
                reason = failed
                continue
            absent.pop(name, None)
            reason = await self._ended(name)

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
        connected = asyncio.ensure_future(self.server.wait_for_tokens([self._tokens[key]], CONNECT_TIMEOUT))
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
        name = key.partition("@")[0]
        self.notice(f"bot {name} {reason}" + ("; restarting it" if restarted else ""))
        proc = self.bots.processes.get(key) if self.bots is not None else None
        code = proc.returncode if proc is not None else None
        self.on_crash(BotCrash(bot=name, reason=reason, exit_code=code if code is not None and code >= 0 else None,
                               tournament_id=self.tournament_id, variant=self.settings.variant,
                               worker=worker_name(), restarted=restarted))

    # -- matches

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        if not self.settings.fresh_per_match:
            return await self.server.run_match(spec)
        return await self._run_fresh(spec)

    async def _run_fresh(self, spec: MatchSpec) -> MatchRecord:
        """Play ``spec`` with a fresh process of each of its bots, started for it and
        stopped after it: nothing a bot saw in one match survives into the next. A
        process that fails to start, to connect, or ends before the match does is a
        crash; its seats follow the disconnect rule."""
        assert self.bots is not None
        keys = {name: f"{name}@{spec.match_id}" for name in dict.fromkeys(spec.bots)}
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
            tokens = {name: self._tokens[key] for name, key in keys.items() if key in self._tokens}
            return await self.server.run_match(spec, tokens=tokens, absent=absent)
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
    check; other failures are grpc's errors as they come."""

    def __init__(self, address: str, admin_token: str, tls: ClientTls | None = None):
        from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc

        self.address = address
        self.tls = tls
        self.metadata = (("authorization", f"Bearer {admin_token}"),)
        options = [("grpc.max_receive_message_length", 64 << 20)]
        self.channel = (tls.secure_channel(address, options) if tls is not None
                        else grpc.aio.insecure_channel(address, options=options))
        self.stub = arena_pb2_grpc.ArenaStub(self.channel)

    async def connected_bots(self, variant: str) -> list[str]:
        from arena.wire.pb.wizard_arena.v1 import arena_pb2

        try:
            reply = await self.stub.ListBots(arena_pb2.ListBotsRequest(), metadata=self.metadata, timeout=10)
        except grpc.aio.AioRpcError as error:
            raise await self._explained(error) from None
        return sorted(b.name for b in reply.bots if not b.variants or variant in b.variants)

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        from arena.wire import jsonc
        from arena.wire.calls import run_match_request

        try:
            reply = await self.stub.RunMatch(run_match_request(**asdict(spec)), metadata=self.metadata)
        except grpc.aio.AioRpcError as error:
            raise await self._explained(error) from None
        return MatchRecord.from_json(jsonc.loads(reply.record_json))

    async def _explained(self, error: grpc.aio.AioRpcError) -> Exception:
        """A TlsError for a failure at the TLS layer (which may ask the server whether it
        speaks TLS: off the event loop), else ``error`` itself."""
        problem = await asyncio.to_thread(tls_problem, error, self.address, self.tls)
        return TlsError(problem) if problem is not None else error

    async def __aenter__(self) -> RemoteArena:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
