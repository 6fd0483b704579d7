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

    >>> figures = bench_sdk(matches=2, rounds=3)      # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from typing import Any

WORK = 100_000        # loop rounds per decision: about 8 ms of one core on the machine it was written on
MATCHES = 6
ROUNDS = 8            # the bot's seat answers 8 bids and 36 plays a match (and maybe a trump choice)
AT_ONCE = 2           # matches at once, as `arena bot check` plays them
RUNS = 3
YARDSTICK_SECONDS = 1.0


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
        await server.wait_connected(["random-1", "random-2", "busy"], 60)
        deadline = time.monotonic() + 60
        while server.connected_bots()["busy"].free_slots < AT_ONCE:   # every process's stream
            if time.monotonic() > deadline or bot.returncode is not None:
                raise RuntimeError("the busy bot never connected all its processes")
            await asyncio.sleep(0.02)
        pending = [MatchSpec(config=GameConfig(variant="classic", players=3, seed=1000 + i, rounds=rounds),
                             bots=["busy", "random-1", "random-2"], match_id=f"bench-sdk-{processes}-{i}")
                   for i in range(matches)]
        latencies: list[float] = []

        async def worker() -> None:
            while pending:
                record = await server.run_match(pending.pop(0))
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


def main() -> None:
    """The busy bot (with the SDK's command line after ``--work W``), or with
    ``--yardstick SECONDS`` the bare loop's rate over that long, printed."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--work", type=int, default=WORK)
    parser.add_argument("--yardstick", type=float, default=None, metavar="SECONDS")
    args, rest = parser.parse_known_args()
    if args.yardstick is not None:
        print(json.dumps(bare_rate(args.work, args.yardstick)))
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

    run(BusyBot, rest)


if __name__ == "__main__":
    main()
