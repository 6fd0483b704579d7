"""The benchmarks' bots and a referee in the benchmark's process that they play at.

A benchmark bot is the least a client of the protocol does (:func:`bare_play`): Hello,
then every request answered at once, no JSON parsed. :func:`arena_with_bots` starts a
:class:`~arena.referee.loopback.LoopbackReferee` and 4 bot processes (this module's
entry point, ``python -m arena.bench.referee_bots ADDRESS``), each holding as many Play
streams as matches are to run at once; :func:`match_spec` seats them at a 4-player
classic game. ``arena bench referee`` and ``arena bench hostile`` play through them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc

from arena.bench.spawn import spawn
from arena.bench.transports import BenchTls, open_channel, unix_address
from arena.records import MatchSpec
from arena.referee.auth import MAX_STREAMS_PER_BOT
from arena.referee.loopback import LoopbackReferee
from arena.referee.server import ArenaServer
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import GameConfig


async def bare_play(channel: grpc.aio.Channel, token: str, choose: Callable[[Sequence[str]], str],
                    name: str = "", events_only: bool = False) -> None:
    """One Play stream of a bare benchmark bot: Hello, then each request answered with
    ``choose(options)`` (an empty prediction for PREDICT), no JSON parsed, until the arena
    ends it. ``name`` "": the token's bot; ``events_only``: requests without observations."""
    call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
    await call.write(pb.BotMessage(hello=pb.Hello(name=name, version="bench", max_matches=1,
                                                  events_only=events_only)))
    while (message := await call.read()) is not grpc.aio.EOF:
        if message.WhichOneof("msg") != "request":
            continue
        request = message.request
        if request.kind == pb.PREDICT:
            action = pb.Action(request_id=request.request_id, prediction=pb.Prediction())
        else:
            action = pb.Action(request_id=request.request_id, option=choose(request.options))
        await call.write(pb.BotMessage(action=action))


async def bot_connection(channel: grpc.aio.Channel, name: str, token: str, seed: int, events_only: bool) -> None:
    """One Play stream of a benchmark bot: random legal answers."""
    await bare_play(channel, token, random.Random(seed).choice, name, events_only)


async def bot_streams(address: str, names: str, tokens: str, connections: int, channels: int,
                tls_ca: str | None = None, events_only: bool = False) -> None:
    """``connections`` Play streams spread over ``channels`` channels (HTTP/2 connections),
    and over the comma-separated ``names`` (with their ``tokens``) in turn; over TLS
    trusting ``tls_ca`` when given; asking for events only with ``events_only``."""
    logins = list(zip(names.split(","), tokens.split(",")))
    opened = [open_channel(address, tls_ca) for _ in range(channels)]
    try:
        await asyncio.gather(*(bot_connection(opened[i % channels], *logins[i % len(logins)], seed=i,
                                              events_only=events_only)
                               for i in range(connections)))
    finally:
        for channel in opened:
            await channel.close()


# ---------------------------------------------------------------------- a referee and its bots


def name_groups(connections: int) -> int:
    """Names each seat's process plays under: the arena lets one bot hold at most
    MAX_STREAMS_PER_BOT streams, so more connections are spread over more names."""
    return -(-connections // MAX_STREAMS_PER_BOT)


def bot_name(seat: int, group: int, groups: int, prefix: str = "bench") -> str:
    return f"{prefix}{seat}" if groups == 1 else f"{prefix}{seat}.{group}"


# The names of the bots on the Unix socket start with this instead of "bench", those
# over TLS with the other.
UNIX_PREFIX = "unix"
TLS_PREFIX = "tls"


async def arena_with_bots(connections: int, move_time: float, channels: int = 1, unix_socket: Path | None = None,
                          tls: BenchTls | None = None,
                          events_only: bool = False) -> tuple[ArenaServer, list[asyncio.subprocess.Process]]:
    """A referee and 4 bot processes holding ``connections`` streams each over TCP; with
    ``unix_socket`` the referee listens there too, and 4 more bot processes connect
    through it under names starting with :data:`UNIX_PREFIX`. With ``tls`` its TCP port
    speaks TLS and the TCP bots' names start with :data:`TLS_PREFIX`."""
    referee = LoopbackReferee(move_time=move_time, time_bank=0.0 if move_time >= 1 else 10.0)
    tcp = await referee.start(unix_socket=unix_socket, tls=tls.server if tls is not None else None)
    arena = referee.server
    processes = []
    groups = name_groups(connections)
    logins = [("bench" if tls is None else TLS_PREFIX, tcp, [] if tls is None else ["--tls-ca", str(tls.ca)])]
    if unix_socket is not None:
        logins.append((UNIX_PREFIX, unix_address(unix_socket), []))
    every = []
    for prefix, address, trust in logins:
        for i in range(4):
            names = [bot_name(i, g, groups, prefix) for g in range(groups)]
            for name in names:
                referee.admit(name, f"token-{name}")
            processes.append(await spawn("arena.bench.referee_bots", address, "--name", ",".join(names),
                                         "--token", ",".join(f"token-{n}" for n in names),
                                         "--connections", str(connections), "--channels", str(channels),
                                         *trust, *(["--events-only"] if events_only else [])))
            every += names
    await arena.host.wait_connected(every, 60)
    while sum(info.connections for info in arena.host.connected_bots().values()) < 4 * len(logins) * connections:
        await asyncio.sleep(0.05)
    return arena, processes


def match_spec(seed: int, group: int = 0, groups: int = 1, prefix: str = "bench") -> MatchSpec:
    return MatchSpec(config=GameConfig(variant="classic", players=4, seed=seed),
                     bots=[bot_name(i, group, groups, prefix) for i in range(4)])


def main(argv: list[str] | None = None) -> None:
    """A bot process: its Play streams to the referee at ``address`` until it ends them."""
    parser = argparse.ArgumentParser(description="The benchmark bots of arena bench referee, in one process.")
    parser.add_argument("address")
    parser.add_argument("--name", required=True, help="comma-separated names the streams take in turn")
    parser.add_argument("--token", required=True, help="their tokens, in the same order")
    parser.add_argument("--connections", type=int, default=1, help="Play streams")
    parser.add_argument("--channels", type=int, default=1, help="HTTP/2 connections the streams share")
    parser.add_argument("--tls-ca", help="the CA file to trust: over TLS")
    parser.add_argument("--events-only", action="store_true",
                        help="the bots ask for requests without the observation (Hello.events_only)")
    args = parser.parse_args(argv)
    with contextlib.suppress(grpc.aio.AioRpcError):   # the benchmark stopped the server
        asyncio.run(bot_streams(args.address, args.name, args.token, args.connections, args.channels, args.tls_ca,
                                args.events_only))


if __name__ == "__main__":
    main()
