"""Referee benchmark: how much the arena adds to a bare gRPC round trip, and how it scales.

Run ``python -m arena.bench.referee [--games 20] [--concurrent-matches 64]``; it prints a
JSON dict of figures. In one invocation it measures:

1. **ping-pong**: a bare ``grpc.aio`` bidirectional stream between this process (the
   server, which sends) and an echo client process, on loopback. No protobuf: a generic
   handler moving bytes. The payload going out has the size of a typical decision
   request, the reply that of an answer. Median round trip on the server's clock.
2. **sequential games**: ``games`` full 4-player classic games through the real referee
   between four random bots, each in its own process. Median decision round trip (the
   referee's clock, ``MatchRecord.latencies_ms``), decisions per second, and the ratio to (1).
3. **concurrent matches**: ``concurrent_matches`` full 4-player classic games at once in
   this one referee process; the bots are 4 processes holding ``concurrent_matches``
   connections each. Timeouts at a 1 s limit, decisions per second over all matches,
   and the referee's resident memory (``VmRSS``). Two layouts: every stream on its own
   HTTP/2 connection (``concurrent_*``: 256 TCP connections, the hardest case for the
   server) and each bot process multiplexing its streams over ``shared_channels``
   connections (``shared_*``: what a bot process serving many matches would do). For
   comparison, the same layouts of bare echo streams (4 processes ×
   ``concurrent_matches`` streams) are measured too: the ceiling grpc itself puts on
   this machine, in this run.

The referee process gets the garbage-collector settings ``arena serve`` uses
(``arena.referee.server.tune_gc``) before anything is measured.

Bot processes are started with ``asyncio.create_subprocess_exec`` (never fork, see
GRPC-NOTES). This module is also the bots' and the echo client's entry point
(``--echo-client``, ``--bots``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import time
from typing import Any

import grpc

from arena.records import MatchSpec
from arena.referee.auth import MAX_STREAMS_PER_BOT
from arena.referee.server import ArenaServer, tune_gc
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

ECHO_METHOD = "/bench.Echo/Ping"
# The client side uses the same generous limits as the SDK so big payloads are not refused.
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 16 * 1024 * 1024)]


def rss_mb() -> float:
    """This process's resident set size in MB, from /proc/self/status."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def _spawn(*args: str) -> asyncio.subprocess.Process:
    # GRPC_VERBOSITY=ERROR: grpc core logs every GOAWAY at shutdown otherwise.
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "arena.bench.referee", *args,
                                                env={**os.environ, "GRPC_VERBOSITY": "ERROR"})


async def _reap(processes: list[asyncio.subprocess.Process]) -> None:
    for process in processes:
        if process.returncode is None:
            process.terminate()
    for process in processes:
        await process.wait()


async def _echo_server(ping: Any) -> tuple[grpc.aio.Server, int]:
    """A bare grpc.aio server whose one bidi method is ``ping``; returns it and its port."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Ping": grpc.stream_stream_rpc_method_handler(ping)})
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


# ---------------------------------------------------------------------- (1) ping-pong


async def ping_pong(round_trips: int = 3000, out_bytes: int = 1800, back_bytes: int = 24) -> dict[str, float]:
    """Median and p99 round trip (µs) of a bare grpc.aio bidi stream to an echo process."""
    done: asyncio.Future[list[float]] = asyncio.get_running_loop().create_future()
    payload = b"x" * out_bytes

    async def ping(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        # The server speaks first, like the referee: write, then wait for the echo.
        samples = []
        for _ in range(round_trips):
            sent = time.perf_counter()
            await context.write(payload)
            if await context.read() is grpc.aio.EOF:
                break
            samples.append((time.perf_counter() - sent) * 1e6)
        if not done.done():
            done.set_result(samples)

    server, port = await _echo_server(ping)
    client = await _spawn("--echo-client", f"127.0.0.1:{port}", "--back-bytes", str(back_bytes))
    try:
        samples = await asyncio.wait_for(done, 120)
    finally:
        await _reap([client])
        await server.stop(0)
    samples = samples[len(samples) // 10:]   # drop the warm-up
    return {"ping_pong_median_us": statistics.median(samples),
            "ping_pong_p99_us": statistics.quantiles(samples, n=100)[98]}


async def ping_pong_throughput(streams: int = 64, processes: int = 4, round_trips: int = 200,
                               out_bytes: int = 1800, back_bytes: int = 24,
                               channels: int | None = None) -> dict[str, float]:
    """Round trips per second of ``processes`` × ``streams`` bare echo streams into this
    one server process: the layout of (3) without the referee, for comparison.
    ``channels`` per process (default: one per stream)."""
    total = streams * processes
    finished: list[int] = []
    all_done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    payload = b"x" * out_bytes

    async def ping(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        for _ in range(round_trips):
            await context.write(payload)
            if await context.read() is grpc.aio.EOF:
                break
        finished.append(1)
        if len(finished) == total and not all_done.done():
            all_done.set_result(None)

    server, port = await _echo_server(ping)
    started = time.perf_counter()
    clients = [await _spawn("--echo-client", f"127.0.0.1:{port}", "--back-bytes", str(back_bytes),
                            "--connections", str(streams), "--channels", str(channels or streams))
               for _ in range(processes)]
    try:
        await asyncio.wait_for(all_done, 300)
        elapsed = time.perf_counter() - started   # includes client start-up: a conservative figure
    finally:
        await _reap(clients)
        await server.stop(0)
    return {"ping_pong_streams": total, "ping_pong_round_trips_per_s": total * round_trips / elapsed}


async def _echo_client(address: str, back_bytes: int, streams: int = 1, channels: int = 1) -> None:
    """Echo every message of ``streams`` streams spread over ``channels`` channels."""
    reply = b"y" * back_bytes
    opened = [grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) for _ in range(min(channels, streams))]

    async def echo(channel: grpc.aio.Channel) -> None:
        call = channel.stream_stream(ECHO_METHOD)()
        while await call.read() is not grpc.aio.EOF:
            await call.write(reply)

    try:
        await asyncio.gather(*(echo(opened[i % len(opened)]) for i in range(streams)))
    finally:
        for channel in opened:
            await channel.close()


# ---------------------------------------------------------------------- bench bots


async def _bot_connection(channel: grpc.aio.Channel, name: str, token: str, seed: int) -> None:
    """One Play stream of a benchmark bot: random legal answers, no JSON parsing."""
    rng = random.Random(seed)
    call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
    await call.write(pb.BotMessage(hello=pb.Hello(name=name, version="bench", max_matches=1)))
    while (message := await call.read()) is not grpc.aio.EOF:
        if message.WhichOneof("msg") != "request":
            continue
        request = message.request
        if request.kind == pb.PREDICT:
            action = pb.Action(request_id=request.request_id, prediction=pb.Prediction())
        else:
            action = pb.Action(request_id=request.request_id, option=rng.choice(request.options))
        await call.write(pb.BotMessage(action=action))


async def _bots(address: str, names: str, tokens: str, connections: int, channels: int) -> None:
    """``connections`` Play streams spread over ``channels`` channels (HTTP/2 connections),
    and over the comma-separated ``names`` (with their ``tokens``) in turn."""
    logins = list(zip(names.split(","), tokens.split(",")))
    opened = [grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) for _ in range(channels)]
    try:
        await asyncio.gather(*(_bot_connection(opened[i % channels], *logins[i % len(logins)], seed=i)
                               for i in range(connections)))
    finally:
        for channel in opened:
            await channel.close()


# ---------------------------------------------------------------------- (2) and (3)


def _groups(connections: int) -> int:
    """Names each seat's process plays under: the arena lets one bot hold at most
    MAX_STREAMS_PER_BOT streams, so more connections are spread over more names."""
    return -(-connections // MAX_STREAMS_PER_BOT)


def _name(seat: int, group: int, groups: int) -> str:
    return f"bench{seat}" if groups == 1 else f"bench{seat}.{group}"


async def _arena_with_bots(connections: int, move_time: float,
                           channels: int = 1) -> tuple[ArenaServer, list[asyncio.subprocess.Process]]:
    arena = ArenaServer(move_time=move_time, time_bank=0.0 if move_time >= 1 else 10.0)
    port = await arena.start()
    processes = []
    groups = _groups(connections)
    for i in range(4):
        names = [_name(i, g, groups) for g in range(groups)]
        for name in names:
            arena.add_local_bot(name, f"token-{name}")
        processes.append(await _spawn("--bots", f"127.0.0.1:{port}", "--name", ",".join(names),
                                      "--token", ",".join(f"token-{n}" for n in names),
                                      "--connections", str(connections), "--channels", str(channels)))
    every = [_name(i, g, groups) for i in range(4) for g in range(groups)]
    await arena.wait_connected(every, 60)
    while sum(info.connections for info in arena.connected_bots().values()) < 4 * connections:
        await asyncio.sleep(0.05)
    return arena, processes


def _spec(seed: int, group: int = 0, groups: int = 1) -> MatchSpec:
    return MatchSpec(config={"variant": "classic", "players": 4, "seed": seed},
                     bots=[_name(i, group, groups) for i in range(4)])


async def sequential_games(games: int) -> dict[str, float]:
    """Full 4-player classic games one after another; latencies on the referee's clock."""
    arena, processes = await _arena_with_bots(connections=1, move_time=1.0)
    try:
        await arena.run_match(_spec(seed=10_000))      # warm-up, not counted
        latencies: list[float] = []
        decisions = 0
        started, cpu = time.perf_counter(), time.process_time()
        for game in range(games):
            record = await arena.run_match(_spec(seed=game))
            latencies += [ms for ms in record.latencies_ms if ms is not None]
            decisions += len(record.actions)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        await arena.stop(0)
        await _reap(processes)
    return {"sequential_games": games, "sequential_decisions": decisions,
            "referee_median_round_trip_us": statistics.median(latencies) * 1000,
            "referee_p99_round_trip_us": statistics.quantiles(latencies, n=100)[98] * 1000,
            "sequential_decisions_per_s": decisions / elapsed,
            "sequential_referee_cpu_us_per_decision": cpu / decisions * 1e6}


async def concurrent_matches(matches: int, channels: int | None = None,
                             prefix: str = "concurrent") -> dict[str, float]:
    """``matches`` full games at once in this process, 4 × ``matches`` bot connections
    over ``channels`` HTTP/2 connections per bot process (default: one per stream, 256
    real connections for 64 matches, the hardest case for the server). The figures'
    names start with ``prefix``; the memory figure is ``referee_rss_mb`` either way
    (with another prefix, ``<prefix>_referee_rss_mb``)."""
    arena, processes = await _arena_with_bots(connections=matches, move_time=1.0, channels=channels or matches)
    try:
        started, cpu = time.perf_counter(), time.process_time()
        groups = _groups(matches)
        records = await asyncio.gather(*(arena.run_match(_spec(100 + i, i % groups, groups))
                                         for i in range(matches)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        memory = rss_mb()
    finally:
        await arena.stop(0)
        await _reap(processes)
    decisions = sum(len(r.actions) for r in records)
    faults = [f for r in records for f in r.faults]
    latencies = sorted(ms for r in records for ms in r.latencies_ms if ms is not None)
    p = prefix
    return {f"{p}_matches": matches, f"{p}_channels_per_bot_process": channels or matches,
            f"{p}_decisions": decisions,
            f"{p}_timeouts": sum(1 for f in faults if f.kind == "timeout"),
            f"{p}_faults": len(faults),
            f"{p}_decisions_per_s": decisions / elapsed,
            f"{p}_seconds": elapsed,
            f"{p}_round_trip_median_ms": statistics.median(latencies),
            f"{p}_round_trip_p99_ms": statistics.quantiles(latencies, n=100)[98],
            f"{p}_round_trip_max_ms": latencies[-1],
            f"{p}_referee_cpu_us_per_decision": cpu / decisions * 1e6,
            "referee_rss_mb" if p == "concurrent" else f"{p}_referee_rss_mb": memory}


def bench_referee(games: int = 20, concurrent_matches: int = 64, round_trips: int = 3000,
                  shared_channels: int = 1) -> dict[str, Any]:
    """Run all three measurements; return every figure in one dict (times in µs).
    ``shared_channels``: HTTP/2 connections per bot process in the shared layout of (3)."""

    async def run() -> dict[str, Any]:
        tune_gc()
        figures: dict[str, Any] = {}
        figures.update(await ping_pong(round_trips))
        figures.update(await sequential_games(games))
        figures["ratio_referee_to_ping_pong"] = (figures["referee_median_round_trip_us"]
                                                 / figures["ping_pong_median_us"])
        # One connection per stream: keys as before.
        figures.update(await ping_pong_throughput(streams=concurrent_matches, processes=4))
        figures.update(await globals()["concurrent_matches"](concurrent_matches))
        figures["ratio_concurrent_decisions_to_ping_pong_throughput"] = (
            figures["concurrent_decisions_per_s"] / figures["ping_pong_round_trips_per_s"])
        # Streams multiplexed over a few connections per bot process.
        echo = await ping_pong_throughput(streams=concurrent_matches, processes=4, channels=shared_channels)
        figures["ping_pong_shared_round_trips_per_s"] = echo["ping_pong_round_trips_per_s"]
        figures.update(await globals()["concurrent_matches"](concurrent_matches, channels=shared_channels,
                                                             prefix="shared"))
        figures["ratio_shared_decisions_to_ping_pong_throughput"] = (
            figures["shared_decisions_per_s"] / figures["ping_pong_shared_round_trips_per_s"])
        return figures

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--concurrent-matches", type=int, default=64)
    parser.add_argument("--round-trips", type=int, default=3000)
    parser.add_argument("--shared-channels", type=int, default=1,
                        help="HTTP/2 connections per bot process in the shared layout")
    # Internal modes: the processes this benchmark starts.
    parser.add_argument("--echo-client", metavar="ADDRESS")
    parser.add_argument("--back-bytes", type=int, default=24)
    parser.add_argument("--bots", metavar="ADDRESS")
    parser.add_argument("--name")
    parser.add_argument("--token")
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--channels", type=int, default=1)
    args = parser.parse_args(argv)
    if args.echo_client or args.bots:
        helper = (_echo_client(args.echo_client, args.back_bytes, args.connections, args.channels)
                  if args.echo_client
                  else _bots(args.bots, args.name, args.token, args.connections, args.channels))
        with contextlib.suppress(grpc.aio.AioRpcError):   # the benchmark stopped the server
            asyncio.run(helper)
        return
    print(json.dumps(bench_referee(args.games, args.concurrent_matches, args.round_trips, args.shared_channels),
                     indent=2))

if __name__ == "__main__":
    main()
