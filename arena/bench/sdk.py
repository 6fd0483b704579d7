"""The SDK benchmark: a bot whose Python code computes, in one process and in two.

``arena bench sdk [--matches N] [--work W] [--rounds R] [--runs K]`` starts a referee in this process
(a ``LoopbackReferee``: 127.0.0.1, port 0, no store) and two quick opponents (the
random sample bot, in this process through the SDK), then the busy bot as a real
process: ``python -m arena.bench.sdk --work W`` (this module), every decision of which
is ``W`` rounds of a pure-Python loop (:func:`busy`), the same work every time. It plays
``N`` classic matches (3 players, ``R`` rounds), two at once, first with ``--processes 1``,
then with ``--processes 2``, and the figures are the bot's decisions per second in each
(its answered decisions over the time from the first match's start to the last one's
end), their ratio, and the median round trip of a decision as the referee measured it.
Each figure is the median of ``K`` runs, taken in turn with the yardstick's.

With one process the two matches' decisions run on two threads that share one core
(the GIL), so a decision takes about twice its work while both matches wait for one;
two processes have a core each, where the machine has them. The yardstick, measured
in the same run and with nothing else going: the same loop's rate alone in one process
(``bare_one_process_per_s``, decisions' worth of work per second) and in two processes
at once (``bare_two_processes_per_s``): the most a core, and two, can do here, so that
``*_of_bare`` figures compare across machines, and ``bare_two_over_one`` is the best
``two_over_one`` this machine allows (the referee and the opponents also need CPU).

``arena bench sdk --cpu [--matches N] [--rounds R] [--runs K]`` (6 matches of 20 rounds, 3
runs) measures instead what the SDK itself costs a bot: the CPU (user and system, of the
bot's whole process, every thread) per decision answered, of a bot through the SDK against
a bare client answering the same requests, in one run (:func:`bench_sdk_cpu`).
All three are real processes of this module and stay connected to one referee throughout:
the SDK bot (``--bot first``, a :class:`~arena.sdk.Bot` run by ``arena.sdk.run`` whose
plain methods answer the first option, each on its match's thread), the same bot with
``async def`` methods (``--bot first-async``: they run on the SDK's event loop, no thread)
and the bare client (``--bot bare``, :func:`bare_client`: a ``grpc.aio`` stream that says
Hello and answers each request with its first option, and nothing else: no lanes, no
threads, no observation parsed). They take turns seat 0 of the same matches (the same
deals, the same two random opponents with the same seeds, so the same games and the same
requests, which the run checks), in the order SDK, async SDK, bare, bare, async SDK,
SDK, ... so that a busy moment of the machine hits all alike. Each process reports its
own CPU time (``getrusage``) when asked between matches. The figures: each process's CPU
µs per decision, the bare one being the yardstick that carries across machines, and
``sdk_over_bare`` and ``sdk_async_over_bare``, the ratios (the medians of the runs').

    >>> figures = bench_sdk(matches=2, rounds=3)      # doctest: +SKIP
    >>> figures = bench_sdk_cpu(matches=2, rounds=3)  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

WORK = 100_000        # loop rounds per decision: about 8 ms of one core on the machine it was written on
MATCHES = 6
ROUNDS = 8            # the bot's seat answers 8 bids and 36 plays a match (and maybe a trump choice)
AT_ONCE = 2           # matches at once, as `arena bot check` plays them
RUNS = 3
YARDSTICK_SECONDS = 1.0
CPU_ROUNDS = 20       # --cpu: full 3-player matches, about 230 decisions of the measured seat each


def busy(work: int) -> int:
    """Pure-Python work that holds the GIL throughout: ``work`` rounds of integer arithmetic."""
    value = 0
    for step in range(work):
        value = (value * 31 + step) % 1_000_003
    return value


def bare_rate(work: int, seconds: float = YARDSTICK_SECONDS) -> float:
    """How many :func:`busy` calls this process makes per second (for about ``seconds``)."""
    calls, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        busy(work)
        calls += 1
    return calls / elapsed


def bare_rates_in_processes(work: int, processes: int, seconds: float = YARDSTICK_SECONDS) -> list[float]:
    """:func:`bare_rate` in ``processes`` fresh processes at once (this one idle meanwhile)."""
    command = [sys.executable, "-m", "arena.bench.sdk", "--yardstick", str(seconds), "--work", str(work)]
    children = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    rates = []
    for child in children:
        out, _ = child.communicate(timeout=60)
        if child.returncode != 0:
            raise RuntimeError(f"the yardstick process failed with code {child.returncode}")
        rates.append(float(out))
    return rates


async def _play(work: int, processes: int, matches: int, rounds: int) -> tuple[int, float, list[float]]:
    """One run: the busy bot with ``--processes processes`` plays ``matches`` matches,
    :data:`AT_ONCE` at a time; (its decisions, the seconds they took, their round trips in ms)."""
    from arena.records import MatchSpec
    from arena.referee.loopback import LoopbackReferee
    from arena.sdk import BotClient
    from engine import GameConfig
    from sample_bots.random_bot import RandomBot

    referee = LoopbackReferee(move_time=30.0, time_bank=0.0)   # nothing times out here
    address = await referee.start()
    server = referee.server
    opponents = []
    for name in ("random-1", "random-2"):
        token = referee.admit(name)
        client = BotClient(bot=RandomBot, arena=address, token=token, name=name, max_matches=AT_ONCE)
        opponents.append((client, asyncio.ensure_future(client.run())))
    token = referee.admit("busy")
    bot = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.bench.sdk", "--work", str(work), "--arena", address, "--token", token,
        "--max-matches", str(AT_ONCE), "--processes", str(processes),
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"}, stderr=subprocess.DEVNULL)
    try:
        await server.host.wait_connected(["random-1", "random-2", "busy"], 60)
        deadline = time.monotonic() + 60
        while server.host.connected_bots()["busy"].free_slots < AT_ONCE:   # every process's stream
            if time.monotonic() > deadline or bot.returncode is not None:
                raise RuntimeError("the busy bot never connected all its processes")
            await asyncio.sleep(0.02)
        pending = [MatchSpec(config=GameConfig(variant="classic", players=3, seed=1000 + i, rounds=rounds),
                             bots=["busy", "random-1", "random-2"], match_id=f"bench-sdk-{processes}-{i}")
                   for i in range(matches)]
        latencies: list[float] = []

        async def worker() -> None:
            while pending:
                record = await server.host.run_match(pending.pop(0))
                latencies.extend(ms for (seat, _), ms in zip(record.actions, record.latencies_ms)
                                 if seat == 0 and ms is not None)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(AT_ONCE)))
        return len(latencies), time.perf_counter() - started, latencies
    finally:
        if bot.returncode is None:
            bot.terminate()
        await bot.wait()
        for client, _ in opponents:
            client.stop()
        await server.stop()
        await asyncio.gather(*(task for _, task in opponents), return_exceptions=True)


def bench_sdk(matches: int = MATCHES, work: int = WORK, rounds: int = ROUNDS, runs: int = RUNS,
              yardstick_seconds: float = YARDSTICK_SECONDS) -> dict[str, Any]:
    """The figures of the module docstring: medians over ``runs`` rounds of measuring, each
    the yardstick (``yardstick_seconds`` of the loop alone), then one process, then two (a
    busy moment of the machine hits all alike)."""
    from arena.referee.server import tune_gc

    arena_log = logging.getLogger("arena")
    saved = arena_log.level
    arena_log.setLevel(logging.WARNING)      # the referee's and the opponents' INFO lines
    tune_gc()
    bare: dict[int, list[float]] = {1: [], 2: []}
    rates: dict[int, list[float]] = {1: [], 2: []}
    trips: dict[int, list[float]] = {1: [], 2: []}
    decisions: dict[int, int] = {}
    try:
        for _ in range(runs):
            bare[1].append(bare_rate(work, yardstick_seconds))
            bare[2].append(sum(bare_rates_in_processes(work, 2, yardstick_seconds)))
            for processes in (1, 2):
                decisions[processes], seconds, latencies = asyncio.run(_play(work, processes, matches, rounds))
                rates[processes].append(decisions[processes] / seconds)
                trips[processes].append(statistics.median(latencies))
    finally:
        arena_log.setLevel(saved)
    one_core = statistics.median(bare[1])
    figures: dict[str, Any] = {"runs": runs, "matches_per_run": matches, "matches_at_once": AT_ONCE,
                               "work_per_decision": work, "bare_ms_per_decision": round(1000 / one_core, 2),
                               "bare_one_process_per_s": round(one_core, 1),
                               "bare_two_processes_per_s": round(statistics.median(bare[2]), 1),
                               "bare_two_over_one": round(statistics.median(bare[2]) / one_core, 2)}
    for processes in (1, 2):
        rate = statistics.median(rates[processes])
        figures[f"processes_{processes}_decisions"] = decisions[processes]
        figures[f"processes_{processes}_decisions_per_s"] = round(rate, 1)
        figures[f"processes_{processes}_of_bare"] = round(rate / one_core, 2)
        figures[f"processes_{processes}_median_round_trip_ms"] = round(statistics.median(trips[processes]), 1)
    figures["two_over_one"] = round(figures["processes_2_decisions_per_s"] / figures["processes_1_decisions_per_s"], 2)
    return figures


# ---------------------------------------------------------------- --cpu: the SDK against a bare client

# The measured bots: their names at the referee, and the --bot each process runs.
CPU_BOTS = {"sdk": "first", "sdk-async": "first-async", "bare": "bare"}


def cpu_seconds() -> float:
    """This process's CPU time so far, user and system, every thread's (the dead ones' too)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def report_cpu_when_asked() -> None:
    """Answer each line on stdin with :func:`cpu_seconds` on stdout, from a daemon thread
    that sleeps in ``read`` meanwhile (so it costs the measured bot nothing)."""
    def answer() -> None:
        for _ in sys.stdin:
            print(json.dumps(cpu_seconds()), flush=True)

    threading.Thread(target=answer, name="cpu-report", daemon=True).start()


async def bare_client(address: str, token: str) -> None:
    """The yardstick: the least a client of the protocol does. Hello, then each request
    answered with its first option (an empty prediction for PREDICT), on one stream, until
    the arena ends it. No SDK: no lanes, threads, queues or logs, no observation parsed."""
    import grpc

    from arena.bench.referee_bots import bare_play

    async with grpc.aio.insecure_channel(address) as channel:
        await bare_play(channel, token, lambda options: options[0])


@dataclass
class _Measured:
    """One measured bot process: its CPU and decisions so far (from its first report)."""

    name: str
    process: asyncio.subprocess.Process
    last_cpu: float = 0.0
    cpu: float = 0.0
    decisions: int = 0
    games: list[list[Any]] = field(default_factory=list)   # each match's actions, to compare

    async def read_cpu(self) -> float:
        """Ask the process for its CPU time (``--report-cpu``)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(b"cpu\n")
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), 30)
        if not line:
            raise RuntimeError(f"the {self.name} bot exited (code {self.process.returncode})")
        return float(line)

    async def charge(self) -> None:
        """Add the CPU since the previous report: everything the process did in between
        (its match, and whatever it did while the other one played) is counted."""
        now = await self.read_cpu()
        self.cpu += now - self.last_cpu
        self.last_cpu = now


async def _start_measured(name: str, address: str, token: str) -> _Measured:
    kind = CPU_BOTS[name]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.bench.sdk", "--bot", kind, "--report-cpu", "--arena", address,
        "--token", token, env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return _Measured(name=name, process=process)


async def _cpu_run(matches: int, rounds: int) -> list[_Measured]:
    """One run of :func:`bench_sdk_cpu`: the measured bots connected to one referee, taking turns."""
    from arena.records import MatchSpec
    from arena.referee.loopback import LoopbackReferee
    from arena.sdk import BotClient
    from engine import GameConfig
    from sample_bots.random_bot import RandomBot

    referee = LoopbackReferee(move_time=30.0, time_bank=0.0)   # nothing times out here
    address = await referee.start()
    server = referee.server
    opponents = []
    for name in ("random-1", "random-2"):
        client = BotClient(bot=RandomBot, arena=address, token=referee.admit(name), name=name)
        opponents.append((client, asyncio.ensure_future(client.run())))
    measured = {name: await _start_measured(name, address, referee.admit(name)) for name in CPU_BOTS}
    try:
        await server.host.wait_connected([*CPU_BOTS, "random-1", "random-2"], 60)
        for bot in measured.values():
            bot.last_cpu = await bot.read_cpu()
        for i in range(matches):
            config = GameConfig(variant="classic", players=3, seed=2000 + i, rounds=rounds)
            for name in list(CPU_BOTS) if i % 2 == 0 else list(CPU_BOTS)[::-1]:
                # Fixed bot seeds: the opponents' answers, hence the requests, repeat.
                spec = MatchSpec(config=config, bots=[name, "random-1", "random-2"], bot_seeds=[0, i, i + 1],
                                 match_id=f"bench-sdk-cpu-{name}-{i}")
                record = await server.host.run_match(spec)
                bot = measured[name]
                await bot.charge()
                bot.decisions += sum(1 for seat, _ in record.actions if seat == 0)
                bot.games.append(list(record.actions))
        return list(measured.values())
    finally:
        for bot in measured.values():
            if bot.process.returncode is None:
                bot.process.terminate()
            await bot.process.wait()
        for client, _ in opponents:
            client.stop()
        await server.stop()
        await asyncio.gather(*(task for _, task in opponents), return_exceptions=True)


def bench_sdk_cpu(matches: int = MATCHES, rounds: int = CPU_ROUNDS, runs: int = RUNS) -> dict[str, Any]:
    """The ``--cpu`` figures of the module docstring: ``runs`` runs of ``matches`` matches
    each bot, the per-decision figures the medians of the runs'."""
    from arena.referee.server import tune_gc

    arena_log = logging.getLogger("arena")
    saved = arena_log.level
    arena_log.setLevel(logging.WARNING)      # the referee's and the opponents' INFO lines
    tune_gc()
    per_decision: dict[str, list[float]] = {name: [] for name in CPU_BOTS}
    ratios: dict[str, list[float]] = {name: [] for name in CPU_BOTS if name != "bare"}   # each SDK bot's
    decisions = 0
    same = True
    try:
        for _ in range(runs):
            bots = asyncio.run(_cpu_run(matches, rounds))
            same = same and all(bot.games == bots[0].games and bot.decisions == bots[0].decisions for bot in bots)
            decisions += bots[0].decisions
            for bot in bots:
                per_decision[bot.name].append(bot.cpu / bot.decisions * 1e6)
            for name, kept in ratios.items():
                kept.append(per_decision[name][-1] / per_decision["bare"][-1])
    finally:
        arena_log.setLevel(saved)
    key = {name: name.replace("-", "_") for name in CPU_BOTS}   # a bot's name in its figures
    figures: dict[str, Any] = {
        "runs": runs, "matches_per_run": matches, "rounds": rounds, "decisions_per_bot": decisions,
        "same_requests": same,
        **{f"{key[name]}_cpu_us_per_decision": round(statistics.median(kept), 1)
           for name, kept in per_decision.items()}}
    for name, kept in ratios.items():
        figures[f"{key[name]}_over_bare"] = round(statistics.median(kept), 2)
        figures[f"{key[name]}_over_bare_by_run"] = [round(ratio, 2) for ratio in kept]
    return figures


def main() -> None:
    """A bot of this benchmark (with the SDK's command line after this module's options):
    ``--bot busy`` (``--work W`` per decision), ``--bot first`` and ``--bot first-async`` (the SDK bots of ``--cpu``)
    or ``--bot bare`` (:func:`bare_client`, which reads ``--arena`` and ``--token`` only);
    ``--report-cpu`` answers the benchmark's questions (:func:`report_cpu_when_asked`).
    With ``--yardstick SECONDS``, the bare loop's rate over that long, printed."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--work", type=int, default=WORK)
    parser.add_argument("--yardstick", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--bot", choices=("busy", "first", "first-async", "bare"), default="busy")
    parser.add_argument("--report-cpu", action="store_true")
    args, rest = parser.parse_known_args()
    if args.yardstick is not None:
        print(json.dumps(bare_rate(args.work, args.yardstick)))
        return
    if args.report_cpu:
        report_cpu_when_asked()
    if args.bot == "bare":
        where = argparse.ArgumentParser(add_help=False)
        where.add_argument("--arena", required=True)
        where.add_argument("--token", required=True)
        known, _ = where.parse_known_args(rest)
        asyncio.run(bare_client(known.arena, known.token))
        return

    from arena.sdk import Bot, run

    class BusyBot(Bot):
        """Does the same fixed work for every decision, then answers at random."""

        name = "busy"
        version = "1.0"
        variants = ("classic",)

        def bid(self, obs: dict[str, Any], options: list[int]) -> int:
            busy(args.work)
            return self.rng.choice(options)

        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            busy(args.work)
            return self.rng.choice(options)

        trump = play

    class FirstBot(Bot):
        """Answers the first option, as the bare client does: what is left is the SDK's cost."""

        name = "first"
        version = "1.0"

        def bid(self, obs: dict[str, Any], options: list[int]) -> int:
            return options[0]

        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            return options[0]

        trump = pay = play

        def predict(self, obs: dict[str, Any]) -> None:
            return None

    class FirstAsyncBot(Bot):
        """:class:`FirstBot` with ``async def`` methods: they run on the SDK's event loop,
        so what is left is the SDK's cost without the hand-over to a match's thread."""

        name = "first"
        version = "1.0"

        # The base class types its methods as plain ones; the SDK takes either.
        async def bid(self, obs: dict[str, Any], options: list[int]) -> int:  # type: ignore[override]
            return options[0]

        async def play(self, obs: dict[str, Any], options: list[str]) -> str:  # type: ignore[override]
            return options[0]

        trump = pay = play  # type: ignore[assignment]

        async def predict(self, obs: dict[str, Any]) -> None:  # type: ignore[override]
            return None

    bots: dict[str, type[Bot]] = {"first": FirstBot, "first-async": FirstAsyncBot}
    run(bots.get(args.bot, BusyBot), rest)


if __name__ == "__main__":
    main()
