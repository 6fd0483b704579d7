"""One fuzz run: :class:`Fuzzer` starts the processes, runs the fuzz bots and their
probes, organises matches with the ``RunMatch`` organiser call, watches the server, and
checks invariants 1 and 4 itself (2 and 3 in :mod:`fuzz.checks`); then the
entry points, :func:`fuzz` (a coroutine) and :func:`run_fuzz`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.bench.machine import rss_mb
from arena.wire import calls
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import VARIANTS
from engine import variant as variant_of
from fuzz.checks import Played, Tally, check_records, collect
from fuzz.messages import odd_hello, random_text
from fuzz.processes import start_honest_bot, start_server, stop_process, summarise_log
from fuzz.settings import CLIENT_OPTIONS, HONEST_BOTS, U32, U64, FuzzReport, FuzzSettings
from fuzz.streams import (
    Agent,
    Session,
    half_close_opening,
    hellos_opening,
    no_opening,
    open_with_hello,
    open_with_message,
    stray_flood_opening,
)


class Fuzzer:
    """One run: the processes, the fuzz bots, the organiser loops and the checks."""

    def __init__(self, seconds: float, seed: int, settings: FuzzSettings, workdir: Path, trace: Any) -> None:
        self.seconds, self.seed, self.settings, self.workdir = seconds, seed, settings, workdir
        self.tally = Tally(trace)
        self.report = FuzzReport(seed=seed, seconds=seconds, workdir=str(workdir))
        self.admin_token = f"fuzz-admin-{secrets.token_hex(8)}"
        self.address = ""
        self.server: asyncio.subprocess.Process | None = None
        self.bots: list[asyncio.subprocess.Process] = []
        self.agents: list[Agent] = []
        self.names: list[str] = []
        self.tokens: dict[str, str] = {}
        self.abort = asyncio.Event()       # the server died: stop early
        self.played: list[Played] = []
        self.draining = False
        self.finished = asyncio.Event()
        self.deadline = 0.0
        self._match_serial = 0
        self._admin_channel: grpc.aio.Channel | None = None

    # -- setup

    def register(self) -> dict[str, str]:
        """Tokens for every bot, registered in a fresh database (what `arena bot register` does)."""
        from arena.store import Store

        names = [f"fuzz-{i}" for i in range(self.settings.fuzz_bots)] + list(HONEST_BOTS)
        with Store(str(self.workdir / "arena.db")) as store:
            return {name: store.register_bot(name) for name in names}

    async def start(self) -> None:
        tokens = self.tokens = await asyncio.to_thread(self.register)
        self.names = list(tokens)
        self.server, self.address = await start_server(self.workdir, self.settings, self.admin_token)
        for name, module in HONEST_BOTS.items():
            self.bots.append(await start_honest_bot(self.workdir, name, module, self.address, tokens[name],
                                                    self.settings.honest_slots))
        self._admin_channel = grpc.aio.insecure_channel(self.address, options=CLIENT_OPTIONS)
        for i in range(self.settings.fuzz_bots):
            name = f"fuzz-{i}"
            self.agents.append(Agent(self, name, tokens[name], random.Random(f"{self.seed}/agent/{i}")))
        await self.wait_connected(list(HONEST_BOTS), 60)

    def admin(self) -> tuple[pb_grpc.ArenaStub, tuple[tuple[str, str], ...]]:
        assert self._admin_channel is not None
        return pb_grpc.ArenaStub(self._admin_channel), (("authorization", f"Bearer {self.admin_token}"),)

    async def wait_connected(self, names: list[str], timeout: float) -> None:
        stub, metadata = self.admin()
        deadline = time.monotonic() + timeout
        while True:
            bots = await stub.ListBots(pb.ListBotsRequest(), metadata=metadata, timeout=10)
            missing = set(names) - {b.name for b in bots.bots}
            if not missing:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"bots not connected after {timeout:g} s: {sorted(missing)}")
            await asyncio.sleep(0.2)

    # -- probes: extra streams

    async def probe(self, agent: Agent, rng: random.Random) -> None:
        """One extra stream; an exception here is the fuzzer's own bug: counted, not raised."""
        try:
            await self._probe(agent, rng)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.tally.probes[f"fuzzer_error_{type(error).__name__}"] += 1
            self.tally.anomaly(f"fuzzer error in a probe: {error!r}"[:300])

    async def _probe(self, agent: Agent, rng: random.Random) -> None:
        kind = rng.choice(("bad_token", "no_hello_first", "odd_hello", "odd_hello", "hello_repeated",
                           "stray_flood", "stray_flood_unread", "never_hello", "duplicate_stream", "half_close",
                           "stream_burst", "spectate", "public_calls"))
        self.tally.probes[kind] += 1
        if kind == "spectate":
            await self.spectate(rng)
            return
        if kind == "public_calls":
            await self.public_calls(rng)
            return
        if kind == "stream_burst":   # past the per-bot stream limit, all at once
            sessions = [Session(self, agent, random.Random(rng.getrandbits(64)), kind)
                        for _ in range(rng.choice((5, 20, 40)))]
            await asyncio.gather(*(s.run(open_with_hello(pb.Hello(name=agent.name, version="burst"), "hello"),
                                         lifetime=rng.uniform(0.2, 2.0)) for s in sessions))
            return
        session = Session(self, agent, rng, kind)
        lifetime = rng.uniform(0.2, 3.0)
        if kind == "bad_token":
            # Metadata must be printable ASCII, or grpc refuses it on this side.
            token = rng.choice(("-", "x", "Bearer", "a" * 5000, "".join(chr(rng.randint(33, 126)) for _ in range(12)),
                                self.admin_token, self.tokens[rng.choice(self.names)]))
            await session.run(open_with_hello(pb.Hello(name=agent.name), "hello"), token=token, lifetime=lifetime)
        elif kind == "no_hello_first":
            first = rng.choice((pb.BotMessage(), pb.BotMessage(action=pb.Action(request_id=rng.choice((0, 1, U64)),
                                                                                  option="b7"))))
            await session.run(open_with_message(first, "not_hello"), lifetime=lifetime)
        elif kind == "odd_hello":
            hello, what = odd_hello(rng, agent.name, self.names)
            self.tally.probes[what] += 1
            await session.run(open_with_hello(hello, what), lifetime=lifetime)
        elif kind == "hello_repeated":
            await session.run(hellos_opening(agent.name, rng.choice((2, 5, 100))), lifetime=lifetime)
        elif kind in ("stray_flood", "stray_flood_unread"):
            count = rng.choice((100, 1000, 5000, 20000))
            await session.run(stray_flood_opening(agent.name, count, rng, self.tally),
                              lifetime=rng.uniform(2.0, 8.0) if kind.endswith("unread") else lifetime,
                              read=kind == "stray_flood")
        elif kind == "never_hello":
            await session.run(no_opening, lifetime=rng.uniform(0.5, 12.0), read=True)
        elif kind == "duplicate_stream":   # a second valid stream of the same bot: it may get seats
            await session.run(open_with_hello(agent.anchor_hello(), "hello"), lifetime=lifetime)
        else:
            await session.run(half_close_opening(agent.name), lifetime=lifetime)

    async def spectate(self, rng: random.Random) -> None:
        """Watch a running match (or an unknown one), reading everything, slowly, or nothing."""
        running = [p.match_id for p in self.played if p.record is None and p.error is None]
        match_id = rng.choice(running) if running and rng.random() < 0.8 else rng.choice(
            ("", "no-such-match", "x" * 100_000, random_text(rng, 10)))
        how = rng.choice(("read", "slow", "none"))
        assert self._admin_channel is not None
        call = pb_grpc.ArenaStub(self._admin_channel).Spectate(pb.SpectateRequest(match_id=match_id))
        self.tally.probes[f"spectate_{how}"] += 1

        async def watch() -> None:
            if how == "none":
                await asyncio.sleep(60)
            async for _ in call:
                if how == "slow":
                    await asyncio.sleep(0.5)
        try:
            await asyncio.wait_for(watch(), rng.uniform(0.5, 6.0))
        except (TimeoutError, grpc.aio.AioRpcError):
            pass
        finally:
            call.cancel()

    async def public_calls(self, rng: random.Random) -> None:
        """ListMatches, GetLeaderboard and the organiser calls with odd arguments or tokens."""
        assert self._admin_channel is not None
        stub = pb_grpc.ArenaStub(self._admin_channel)
        calls: list[Callable[[], Awaitable[Any]]] = [
            lambda: stub.ListMatches(pb.ListMatchesRequest(limit=rng.choice((0, 1, U32)),
                                                           variant=rng.choice(("", "classic", "bogus"))), timeout=10),
            lambda: stub.GetLeaderboard(pb.LeaderboardRequest(variant=rng.choice(("", "extreme", "pink")),
                                                              min_games=rng.choice((0, U32))), timeout=10),
            lambda: stub.ListBots(pb.ListBotsRequest(), metadata=(("authorization", "Bearer nope"),), timeout=10),
            lambda: stub.RunMatch(pb.RunMatchRequest(config_json=rng.choice(("{", "[]", '{"players": 99}')),
                                                     bots=["fuzz-0"]), metadata=self.admin()[1], timeout=10),
        ]
        for _ in range(rng.randint(1, 5)):
            try:
                await rng.choice(calls)()
                self.tally.probes["public_call_ok"] += 1
            except grpc.aio.AioRpcError as error:
                self.tally.probes[f"public_call_{error.code().name}"] += 1

    # -- organising matches

    def table(self, rng: random.Random, fuzzed: bool) -> tuple[dict[str, Any], int]:
        """A game config and how many fuzz seats it gets."""
        variant = rng.choice(VARIANTS)
        players = rng.randint(3, 5)
        config: dict[str, Any] = {"variant": variant, "players": players, "seed": rng.getrandbits(31)}
        if "bidding" in variant_of(variant).options:    # classic: short games, every way of bidding
            config["rounds"] = rng.randint(2, 4)
            config["bidding"] = rng.choice(("open", "open", "hidden", "secret"))
            if config["bidding"] == "open" and rng.random() < 0.3:
                config["plus_minus_one"] = True
        else:
            config["rounds"] = rng.choice((1, 1, 2))
        fuzz_seats = rng.randint(1, min(2, players - 1)) if fuzzed else 0
        return config, fuzz_seats

    async def table_loop(self, index: int, fuzzed: bool) -> None:
        rng = random.Random(f"{self.seed}/table/{'f' if fuzzed else 'h'}{index}")
        while time.monotonic() < self.deadline:
            config, fuzz_seats = self.table(rng, fuzzed)
            agents = await self._take_agents(rng, fuzz_seats)
            if agents is None:
                break
            try:
                fuzz_names = [a.name for a in agents]
                if len(agents) == 1 and config["players"] >= 4 and rng.random() < 0.15:
                    fuzz_names.append(agents[0].name)   # one fuzz bot in two seats (self-play)
                honest = [rng.choice(list(HONEST_BOTS)) for _ in range(config["players"] - len(fuzz_names))]
                bots = fuzz_names + honest
                rng.shuffle(bots)
                await self.run_match(rng, config, bots, sorted(set(fuzz_names)))
            finally:
                for agent in agents:
                    agent.in_use -= 1
            if not fuzzed:
                # Honest matches take milliseconds; a pause leaves the cores to the fuzzing.
                await asyncio.sleep(0.2)

    async def _take_agents(self, rng: random.Random, count: int) -> list[Agent] | None:
        while time.monotonic() < self.deadline:
            free = [a for a in self.agents if a.in_use < a.capacity]
            if len(free) >= count:
                chosen = rng.sample(free, count)
                for agent in chosen:
                    agent.in_use += 1
                return chosen
            await asyncio.sleep(0.05)
        return None

    async def run_match(self, rng: random.Random, config: dict[str, Any], bots: list[str],
                        fuzz_bots: list[str]) -> None:
        self._match_serial += 1
        fuzzed = bool(fuzz_bots)
        settings = self.settings
        match_id = f"fz{self.seed}{'f' if fuzzed else 'h'}{self._match_serial:05d}"
        request = pb.RunMatchRequest(
            match_id=match_id, config_json=json.dumps(config), bots=bots,
            bot_seeds=[rng.getrandbits(63) for _ in bots], game_index=-1,
            move_time_ms=int(1000 * (settings.move_time if fuzzed else settings.honest_move_time)),
            time_bank_ms=int(1000 * (settings.time_bank if fuzzed else settings.honest_time_bank)),
            max_faults=rng.choice((1, 3, 3, 20, 1000)) if fuzzed else 0,
        )
        played = Played(match_id=match_id, fuzzed=fuzzed, bots=bots, fuzz_bots=fuzz_bots)
        self.played.append(played)
        self.tally.trace(match=match_id, config=config, bots=bots, max_faults=request.max_faults)
        stub, metadata = self.admin()
        try:
            response = await stub.RunMatch(request, metadata=metadata, timeout=settings.match_timeout)
            played.record = calls.match_record(response.record)
        except grpc.aio.AioRpcError as error:
            played.error = code = error.code().name
            self.report.run_match_errors[code] = self.report.run_match_errors.get(code, 0) + 1
            if error.code() in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL,
                                grpc.StatusCode.DEADLINE_EXCEEDED):
                self.report.violations.append(f"match {match_id} ({'fuzzed' if fuzzed else 'honest'}, bots {bots}) "
                                              f"did not finish: RunMatch ended {error.code().name}: "
                                              f"{(error.details() or '')[:200]}")

    # -- watching the server

    async def watch_server(self) -> None:
        """Sample the server's memory every 0.25 s; stop the run early if it dies."""
        assert self.server is not None
        ticks = 0
        while not self.finished.is_set():
            rss = rss_mb(self.server.pid) if self.server.returncode is None else None
            if rss is None:
                self.report.violations.append(
                    f"the server process exited during the run (code {self.server.returncode}, "
                    f"after {time.monotonic() - self.deadline + self.seconds:.1f} s)")
                self.deadline = 0.0        # stop organising: nothing to play on
                self.abort.set()
                return
            self.report.peak_rss_mb = max(self.report.peak_rss_mb, rss)
            if ticks % 20 == 0:
                self.report.rss_timeline_mb.append(round(rss, 1))
            ticks += 1
            await asyncio.sleep(0.25)

    # -- the whole run

    async def run(self) -> FuzzReport:
        started = time.monotonic()
        tasks: list[asyncio.Task[Any]] = []
        try:
            await self.start()
            await self.fuzz_phase(tasks)
            await self.check_server()
        finally:
            self.finished.set()
            for task in tasks:     # after an error too: nothing of this run outlives it
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for agent in self.agents:
                agent.close()
            await self.shutdown()
        check_records(self.report, self.tally, self.workdir / "arena.db", self.played)
        collect(self.report, self.tally)
        self.report.elapsed_s = time.monotonic() - started
        return self.report

    async def fuzz_phase(self, tasks: list[asyncio.Task[Any]]) -> None:
        """Fuzz for ``seconds``, then let the running matches end (fuzz bots honest)."""
        self.deadline = time.monotonic() + self.seconds
        tasks.append(asyncio.ensure_future(self.watch_server()))
        anchors = [asyncio.ensure_future(a.run_anchor()) for a in self.agents]
        probes = [asyncio.ensure_future(a.run_probes()) for a in self.agents]
        tasks += anchors + probes
        await asyncio.sleep(0.3)   # let the anchors say Hello before the first table
        tables = [asyncio.ensure_future(self.table_loop(i, True)) for i in range(self.settings.fuzz_tables)]
        tables += [asyncio.ensure_future(self.table_loop(i, False)) for i in range(self.settings.honest_tables)]
        tasks += tables
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.until_spent(), max(0.0, self.deadline - time.monotonic()))
        # Time is up (or the budget spent): no more probes or new tables; fuzz bots answer
        # honestly so the matches still running end soon.
        self.deadline = min(self.deadline, time.monotonic())
        self.draining = True
        await asyncio.gather(*probes, return_exceptions=True)
        done, pending = await asyncio.wait(tables, timeout=self.settings.drain_timeout)
        if pending:
            self.report.violations.append(f"{len(pending)} RunMatch call(s) still running "
                                          f"{self.settings.drain_timeout:g} s after the end of fuzzing")
        for task in done:
            if task.exception() is not None:   # the fuzzer's own bug: say so loudly
                raise task.exception()  # type: ignore[misc]
        self.finished.set()
        for task in anchors:
            task.cancel()
        await asyncio.gather(*anchors, return_exceptions=True)
        await asyncio.sleep(0.5)    # the server notices the closed streams

    async def until_spent(self) -> None:
        """Until the server dies or the settings' count budget is spent (without one: until
        the server dies). A budget makes a run's work the same on a busy machine as on an
        idle one; only the time it takes grows, up to ``seconds``."""
        settings = self.settings
        while not self.abort.is_set():
            if settings.stop_after_messages or settings.stop_after_matches:
                finished = [played.fuzzed for played in self.played if played.record is not None]
                if (sum(self.tally.sent.values()) >= settings.stop_after_messages
                        and finished.count(True) >= settings.stop_after_matches
                        and finished.count(False) >= settings.stop_after_matches):
                    return
            await asyncio.sleep(0.05)

    async def check_server(self) -> None:
        """Invariants 1 and 4: the server answers, and its memory stayed bounded."""
        report = self.report
        assert self.server is not None and self._admin_channel is not None
        if self.server.returncode is not None:
            report.violations.append(f"the server process is gone (exit code {self.server.returncode})")
            return
        try:
            health = health_pb2_grpc.HealthStub(self._admin_channel)
            status = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
            listed = await pb_grpc.ArenaStub(self._admin_channel).ListMatches(
                pb.ListMatchesRequest(limit=5), timeout=10)
            report.server_alive = status.status == health_pb2.HealthCheckResponse.SERVING and listed is not None
            if not report.server_alive:
                report.violations.append(f"the server's health is {status.status}, not SERVING")
        except grpc.aio.AioRpcError as error:
            report.violations.append(f"the server does not answer: {error.code().name}: {error.details()}")
        final = rss_mb(self.server.pid)
        report.final_rss_mb = final or 0.0
        report.peak_rss_mb = max(report.peak_rss_mb, report.final_rss_mb)
        if report.peak_rss_mb > self.settings.rss_limit_mb:
            report.violations.append(f"the server's memory peaked at {report.peak_rss_mb:.0f} MB "
                                     f"(limit {self.settings.rss_limit_mb:.0f} MB)")

    async def shutdown(self) -> None:
        """Stop everything this run started, whatever happened before."""
        if self._admin_channel is not None:
            with contextlib.suppress(Exception):
                await self._admin_channel.close()
        await asyncio.gather(*(stop_process(p, 5) for p in self.bots), return_exceptions=True)
        if self.server is not None:
            code = await stop_process(self.server, 15)
            if code not in (0, -signal.SIGTERM) and self.report.server_alive:
                self.report.server_log.append(f"1 x the server exited with code {code} on SIGTERM")
        log = self.workdir / "server.log"
        if log.exists():
            tracebacks, others = summarise_log(log.read_text(errors="replace"))
            self.report.server_tracebacks += tracebacks
            self.report.server_log += others


# ---------------------------------------------------------------------- entry points


@contextlib.contextmanager
def _workdir(path: str | Path | None) -> Iterator[Path]:
    if path is not None:
        Path(path).mkdir(parents=True, exist_ok=True)
        yield Path(path)
        return
    temp = tempfile.mkdtemp(prefix="arena-fuzz-")
    try:
        yield Path(temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


async def fuzz(seconds: float, seed: int, settings: FuzzSettings | None = None,
               workdir: str | Path | None = None) -> FuzzReport:
    """The fuzzer as a coroutine (see :func:`run_fuzz`)."""
    with _workdir(workdir) as where:
        trace = open(where / "trace.jsonl", "w") if workdir is not None else None
        try:
            report = await Fuzzer(seconds, seed, settings or FuzzSettings(), where, trace).run()
        finally:
            if trace is not None:
                trace.close()
        if workdir is None:
            report.workdir = None
        return report


def run_fuzz(seconds: float, seed: int, settings: FuzzSettings | None = None,
             workdir: str | Path | None = None) -> FuzzReport:
    """Fuzz a fresh ``arena serve`` for ``seconds`` (plus start-up and the end of the
    running matches) and return the report. ``workdir`` keeps the database, logs and
    message trace there; by default everything goes to a temporary directory that is
    removed."""
    return asyncio.run(fuzz(seconds, seed, settings, workdir))
