"""What hostile or demanding clients cost the referee: spectators, and a flood.

Run ``arena bench hostile`` (or ``python -m arena.bench.hostile``); it prints a JSON dict
of figures. In one invocation, with the referee in this process and every client in
processes of their own:

1. **spectators**: full 15-round 4-player classic matches between four random bench
   bots, alternately with no spectator and with ``spectators`` spectators reading the
   match live (one process holding all of them, as a crowd of viewers would). The
   figure is the ratio of the median match times (on the referee's clock); the
   target is at most 1.1.
2. **flood**: one registered bot sends ``flood`` messages that answer no open request
   as fast as it can. The figures are the referee's CPU time while the stream was
   open (until the flood limit closed it), the CPU time in the second after that
   (what the flood costs once cut off), and how many messages the flooder had
   written by then.

Bot processes are started with ``asyncio.create_subprocess_exec`` (never a bare fork:
a forked child of a process running gRPC's threads hangs). This module is also the
spectators' and the flooder's entry point.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import time
from typing import Any

import grpc

from arena.bench.referee_bots import arena_with_bots, match_spec
from arena.bench.spawn import reap, spawn
from arena.bench.transports import CLIENT_OPTIONS
from arena.referee.loopback import LoopbackReferee
from arena.referee.server import tune_gc
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

# ---------------------------------------------------------------------- (1) spectators


async def _watch(address: str, match_ids: list[str], spectators: int, ready: str) -> None:
    """For each match id in turn: wait until it runs, then read it with ``spectators``
    streams to its end (each on its own channel, as separate viewers would be)."""
    # Each on a connection of its own (a process's channels to one address share one
    # otherwise), as separate viewers' are: the referee limits Spectate calls per connection.
    options = [*CLIENT_OPTIONS, ("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(address, options=options) for _ in range(spectators)]
    stubs = [pb_grpc.ArenaStub(channel) for channel in channels]
    open(ready, "w").close()

    received = {"updates": 0, "events": 0}

    async def read(stub: pb_grpc.ArenaStub, match_id: str) -> None:
        async for update in stub.Spectate(pb.SpectateRequest(match_id=match_id)):
            received["updates"] += 1
            received["events"] += len(update.events_json)

    try:
        for match_id in match_ids:
            while True:   # one scout polls until the match exists
                try:
                    call = stubs[0].Spectate(pb.SpectateRequest(match_id=match_id))
                    first = await call.read()
                    break
                except grpc.aio.AioRpcError as error:
                    # Every 0.1 s: the referee's Spectate allowance refills at 10 calls a
                    # second per connection (a replay starts from the match's first event,
                    # so nothing is missed by polling gently).
                    if error.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.RESOURCE_EXHAUSTED):
                        raise
                    await asyncio.sleep(0.1)
            rest = asyncio.gather(*(read(stub, match_id) for stub in stubs[1:]))
            while first is not grpc.aio.EOF:
                received["updates"] += 1
                received["events"] += len(first.events_json)
                first = await call.read()
            await rest
    finally:
        for channel in channels:
            await channel.close()
    with open(ready + ".json", "w") as out:
        json.dump(received, out)


async def spectator_slowdown(matches: int = 5, spectators: int = 50) -> dict[str, float]:
    """Median match time without and with ``spectators`` live spectators, alternating."""
    arena, bots = await arena_with_bots(connections=1, move_time=1.0)
    port = arena.port
    watched = [f"watched-{i}" for i in range(matches)]
    ready = f"/tmp/bench-hostile-{os.getpid()}.ready"
    viewers = await spawn("arena.bench.hostile", "--spectate", f"127.0.0.1:{port}", "--spectators", str(spectators),
                          "--ready", ready, *watched)
    try:
        while not os.path.exists(ready):
            await asyncio.sleep(0.05)
        await arena.host.run_match(match_spec(seed=10_000))  # warm-up, not counted
        alone, watched_times = [], []
        for i in range(matches):
            record = await arena.host.run_match(match_spec(seed=i))
            alone.append((record.finished_at - record.started_at).total_seconds())
            spec = match_spec(seed=i)
            spec.match_id = watched[i]
            record = await arena.host.run_match(spec)
            watched_times.append((record.finished_at - record.started_at).total_seconds())
        await asyncio.wait_for(viewers.wait(), 30)
        with open(ready + ".json") as result:
            received = json.load(result)
    finally:
        await arena.stop(0)
        await reap([*bots, viewers])
        for path in (ready, ready + ".json"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
    without, with_ = statistics.median(alone), statistics.median(watched_times)
    return {"spectators": spectators, "spectator_matches": matches,
            "match_seconds_without_spectators": without, "match_seconds_with_spectators": with_,
            "ratio_with_to_without_spectators": with_ / without,
            "spectator_updates_received": received["updates"], "spectator_events_received": received["events"]}


# ---------------------------------------------------------------------- (2) flood


async def _flood(address: str, token: str, messages: int, report: str) -> None:
    """Say Hello, then write ``messages`` stray Actions as fast as possible; write to
    ``report`` how many went out before the arena closed the stream, and its status."""
    sent, status = 0, ""
    async with grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS) as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
        await call.write(pb.BotMessage(hello=pb.Hello(version="flood")))
        await call.read()   # Welcome
        stray = pb.BotMessage(action=pb.Action(request_id=2**62, option="b1"))
        try:
            for _ in range(messages):
                await call.write(stray)
                sent += 1
            while await call.read() is not grpc.aio.EOF:
                pass
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
            pass
        code = await call.code()
        status = f"{code.name}: {await call.details()}"
    with open(report, "w") as out:
        json.dump({"sent": sent, "status": status}, out)


async def flood_cost(messages: int = 10_000) -> dict[str, float]:
    """The referee's CPU time for a flood, until the stream is closed and in the second after."""
    referee = LoopbackReferee()
    address = await referee.start()
    referee.admit("flooder", "flood-token")
    arena = referee.server
    report = f"/tmp/bench-hostile-flood-{os.getpid()}.json"
    try:
        cpu_before, started = time.process_time(), time.perf_counter()
        flooder = await spawn("arena.bench.hostile", "--flood", address, "--token", "flood-token",
                              "--messages", str(messages), "--report", report)
        await arena.host.wait_connected(["flooder"], 30)
        while "flooder" in arena.host.connected_bots():   # until the limit closes the stream
            await asyncio.sleep(0.001)
        cpu_open, open_seconds = time.process_time() - cpu_before, time.perf_counter() - started
        cpu_mark = time.process_time()
        await asyncio.sleep(1.0)
        cpu_after = time.process_time() - cpu_mark
        await asyncio.wait_for(flooder.wait(), 30)
        with open(report) as result:
            outcome = json.load(result)
    finally:
        await arena.stop(0)
        with contextlib.suppress(FileNotFoundError):
            os.remove(report)
    return {"flood_messages": messages, "flood_messages_written_by_client": outcome["sent"],
            "flood_status": outcome["status"], "flood_stream_open_seconds": open_seconds,
            "flood_referee_cpu_ms_until_closed": cpu_open * 1000,
            "flood_referee_cpu_ms_in_the_second_after": cpu_after * 1000}


def bench_hostile(matches: int = 5, spectators: int = 50, flood: int = 10_000) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        tune_gc()
        figures: dict[str, Any] = {}
        figures.update(await spectator_slowdown(matches, spectators))
        figures.update(await flood_cost(flood))
        return figures

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--spectators", type=int, default=50)
    parser.add_argument("--flood-messages", type=int, default=10_000)
    # Internal modes: the processes this benchmark starts.
    parser.add_argument("--spectate", metavar="ADDRESS")
    parser.add_argument("--ready")
    parser.add_argument("match_ids", nargs="*")
    parser.add_argument("--flood", metavar="ADDRESS")
    parser.add_argument("--token")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--report")
    args = parser.parse_args(argv)
    if args.spectate:
        asyncio.run(_watch(args.spectate, args.match_ids, args.spectators, args.ready))
        return
    if args.flood:
        asyncio.run(_flood(args.flood, args.token, args.messages, args.report))
        return
    print(json.dumps(bench_hostile(args.matches, args.spectators, args.flood_messages), indent=2))


if __name__ == "__main__":
    main()
