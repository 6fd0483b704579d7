"""Running matches: the match runners (a local referee with its bots, or a remote arena),
and the tally a progress line shows.

A tournament is its settings (arena.tournament.settings) plus a master seed. Its games are
claimed deal by deal from the database and played by workers (arena.tournament.worker):
resuming one is simply playing every game the store does not have yet; each match is
stored in one transaction, so a game is either wholly stored or played again.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import grpc

from arena.records import MatchRecord, MatchSpec
from arena.referee.limits import GRACE
from arena.tournament.lineup import BotProcesses, BotStartError
from arena.tournament.lock import note_referee
from arena.tournament.schedule import ScheduledGame
from arena.tournament.settings import TournamentSettings


class MatchRunner(Protocol):
    async def run_match(self, spec: MatchSpec) -> MatchRecord: ...


def match_spec(settings: TournamentSettings, tournament_id: str, game: ScheduledGame) -> MatchSpec:
    return MatchSpec(
        config=settings.game_config(game.seed).to_dict(),
        bots=list(game.bots),
        match_id=f"{tournament_id}-{game.index:05d}",
        bot_seeds=list(game.bot_seeds),
        move_time=settings.move_time,
        time_bank=settings.time_bank,
        max_faults=settings.max_faults,
        tournament_id=tournament_id,
        game_index=game.index,
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


class LocalArena:
    """A referee in this process plus the lineup's bots as child processes.

    Bots named in ``optional`` (the default sample bots of a new tournament) may fail to
    start: each is left out with one ``notice`` line and listed in ``dropped``, and the
    caller schedules without it. Any other bot that fails raises BotStartError.
    """

    def __init__(self, settings: TournamentSettings, log_dir: Path, grace: float = GRACE,
                 optional: frozenset[str] = frozenset(), notice: Callable[[str], None] = lambda message: None):
        from arena.referee.server import ArenaServer

        self.settings = settings
        self.server = ArenaServer(store=None, move_time=settings.move_time, time_bank=settings.time_bank,
                                  max_faults=settings.max_faults, grace=grace)
        self.bots = BotProcesses(log_dir)
        self.log_dir = log_dir
        self.optional = optional
        self.notice = notice
        self.dropped: list[str] = []

    async def __aenter__(self) -> LocalArena:
        from arena.referee.server import tune_gc

        tune_gc()  # this process is the referee for the whole run
        port = await self.server.start("127.0.0.1", 0)
        address = f"127.0.0.1:{port}"
        note_referee(self.log_dir, address)   # for `arena web`: live matches
        try:
            for entry in self.settings.entries():
                token = secrets.token_hex(24)
                self.server.add_local_bot(entry.name, token)
                try:
                    await self.bots.start(entry, address, token, max_matches=self.settings.concurrency)
                except BotStartError as error:
                    await self._leave_out(error)
            await self._wait_for_bots()
        except BaseException:
            await self.close()
            raise
        return self

    async def _leave_out(self, error: BotStartError) -> None:
        """Drop an optional bot that failed, saying why; any other bot's failure ends the start."""
        if error.bot not in self.optional:
            raise error
        self.dropped.append(error.bot)
        if error.bot in self.bots.processes:
            await self.bots.stop(only=error.bot)
        self.notice(f"{error} - left out of the lineup")

    async def _wait_for_bots(self, timeout: float = 30.0) -> None:
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
                        raise BotStartError(late[0] if late else "", f"{exc} (bot output is in {self.log_dir})",
                                            self.log_dir) from None
                    for name in late:
                        await self._leave_out(BotStartError(name, f"bot {name!r} did not connect in {timeout:g} s"))
                    continue
            waiting.cancel()
            for name, code in dead.items():
                log = self.log_dir / f"{name}.log"
                await self._leave_out(BotStartError(
                    name, f"bot {name!r} exited with code {code} before connecting (its output: {log})", log))

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        return await self.server.run_match(spec)

    async def close(self) -> None:
        await self.bots.stop()
        await self.server.stop()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RemoteArena:
    """Matches run by a running ``arena serve`` through its organiser calls."""

    def __init__(self, address: str, admin_token: str):
        from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc

        self.address = address
        self.metadata = (("authorization", f"Bearer {admin_token}"),)
        self.channel = grpc.aio.insecure_channel(address, options=[("grpc.max_receive_message_length", 64 << 20)])
        self.stub = arena_pb2_grpc.ArenaStub(self.channel)

    async def connected_bots(self, variant: str) -> list[str]:
        from arena.wire.pb.wizard_arena.v1 import arena_pb2

        reply = await self.stub.ListBots(arena_pb2.ListBotsRequest(), metadata=self.metadata, timeout=10)
        return sorted(b.name for b in reply.bots if not b.variants or variant in b.variants)

    async def run_match(self, spec: MatchSpec) -> MatchRecord:
        from arena.wire import jsonc
        from arena.wire.calls import run_match_request

        reply = await self.stub.RunMatch(run_match_request(**asdict(spec)), metadata=self.metadata)
        return MatchRecord.from_json(jsonc.loads(reply.record_json))

    async def __aenter__(self) -> RemoteArena:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
