"""The bare gRPC yardsticks of ``arena bench referee``: echo streams with nothing of the
arena in them, against which the referee's own figures are ratios.

A bare ``grpc.aio`` server in the benchmark's process (:func:`echo_server`: a generic
handler moving bytes, no protobuf) writes a payload of a decision request's size and
waits for an answer's size back from echo processes (:func:`echo_client`, this module's
entry point, ``python -m arena.bench.echo ADDRESS``). The server speaks first, as the
referee does. Two shapes:

- one round trip at a time (:class:`Turns`): streams that take turns in a fixed order
  of lanes, in bursts the benchmark starts between its games, so that the yardstick and
  the referee share the machine's busy and quiet moments.
  :func:`transport_ping_pongs` has one echo process per transport (TCP, a Unix socket,
  TLS); :func:`seat_ping_pongs` asks 4 echo processes in turn, as a game asks its seats;
- many streams at once (:func:`echo_layout`): 4 echo processes holding a stream per
  game each, either every stream in flight at once (:class:`InFlight`: the ceiling grpc
  itself puts on the layout) or as games (:class:`EchoGames`: groups of 4 streams, one
  per echo process, asked in turn: the floor of the layout with the games' shape).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from arena.bench.spawn import reap, spawn
from arena.bench.transports import BenchTls, open_channel, socket_path, transport_of, unix_address

ECHO_METHOD = "/bench.Echo/Ping"


async def echo_server(ping: Any, unix_socket: Path | None = None,
                      tls: BenchTls | None = None) -> tuple[grpc.aio.Server, int, int]:
    """A bare grpc.aio server whose one bidi method is ``ping``; returns it, its plaintext
    port and its TLS port (0 without ``tls``). With ``unix_socket`` it also listens there."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Ping": grpc.stream_stream_rpc_method_handler(ping)})
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    if unix_socket is not None:
        server.add_insecure_port(unix_address(unix_socket))
    tls_port = server.add_secure_port("127.0.0.1:0", tls.server.credentials()) if tls is not None else 0
    await server.start()
    return server, port, tls_port


# ---------------------------------------------------------------------- one round trip at a time


class Turns:
    """Streams that take turns, one round trip at a time, in a fixed order of lanes, so
    that they are never in flight at once and share whatever else the machine is doing.
    The round trips come in bursts that the benchmark starts (:meth:`burst`): between
    the referee's sequential games, so that the yardsticks and the referee take turns
    too. ``ping`` is the echo server's handler: ``lane_of(context)`` names a stream's
    lane; ``samples[lane]`` gets its round trips' times (µs)."""

    def __init__(self, lanes: Sequence[str], out_bytes: int,
                 lane_of: Callable[[grpc.aio.ServicerContext], str]) -> None:
        loop = asyncio.get_running_loop()
        self.lanes, self.lane_of = list(lanes), lane_of
        self.samples: dict[str, list[float]] = {lane: [] for lane in lanes}
        self.turn = {lane: asyncio.Event() for lane in lanes}
        self.arrived: set[str] = set()
        self.ready: asyncio.Future[None] = loop.create_future()    # every lane's stream is here
        self.left = 0                                                # round trips left in this burst
        self.next_lane = self.lanes[0]                               # whose turn the next burst begins with
        self.burst_done: asyncio.Future[None] | None = None
        self.payload = b"x" * out_bytes

    async def ping(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        # The server speaks first, like the referee: write, then wait for the echo.
        mine = self.lane_of(context)
        after = self.lanes[(self.lanes.index(mine) + 1) % len(self.lanes)]
        self.arrived.add(mine)
        if len(self.arrived) == len(self.lanes) and not self.ready.done():
            self.ready.set_result(None)
        while True:
            await self.turn[mine].wait()
            self.turn[mine].clear()
            if self.left <= 0:                 # the burst is over: the next one begins here
                self.next_lane = mine
                self._end_burst(None)
                continue
            sent = time.perf_counter()
            await context.write(self.payload)
            if await context.read() is grpc.aio.EOF:
                self._end_burst(RuntimeError(f"the echo client of lane {mine} left"))
                return
            self.samples[mine].append((time.perf_counter() - sent) * 1e6)
            self.left -= 1
            self.turn[after].set()

    def _end_burst(self, error: Exception | None) -> None:
        if self.burst_done is not None and not self.burst_done.done():
            if error is None:
                self.burst_done.set_result(None)
            else:
                self.burst_done.set_exception(error)

    async def burst(self, round_trips: int) -> None:
        """Let ``round_trips`` round trips happen, the lanes taking turns; return after the last."""
        await asyncio.wait_for(asyncio.shield(self.ready), 60)
        self.left = round_trips
        self.burst_done = asyncio.get_running_loop().create_future()
        self.turn[self.next_lane].set()
        await asyncio.wait_for(self.burst_done, 120)

    async def warm_up(self, round_trips: int) -> None:
        """A burst whose round trips are not kept."""
        await self.burst(round_trips)
        for samples in self.samples.values():
            samples.clear()


def median_p99(name: str, samples: list[float]) -> dict[str, float]:
    return {f"{name}_median_us": statistics.median(samples),
            f"{name}_p99_us": statistics.quantiles(samples, n=100)[98]}


@contextlib.asynccontextmanager
async def transport_ping_pongs(unix: bool = True, tls: BenchTls | None = None, out_bytes: int = 1800,
                               back_bytes: int = 24) -> AsyncIterator[Turns]:
    """A bare grpc.aio bidi stream to an echo process over TCP, (``unix``) one over a
    Unix socket and (``tls``) one over TLS, taking turns (:class:`Turns`, lanes named
    ``tcp``, ``unix``, ``tls``); the echo processes and the server end on leaving."""
    transports = ("tcp",) + (("unix",) if unix else ()) + (("tls",) if tls is not None else ())
    turns = Turns(transports, out_bytes, transport_of)
    with socket_path() as socket:
        server, port, tls_port = await echo_server(turns.ping, socket if unix else None, tls)
        address = {"tcp": f"127.0.0.1:{port}", "unix": unix_address(socket), "tls": f"127.0.0.1:{tls_port}"}
        trust = {"tls": ["--tls-ca", str(tls.ca)]} if tls is not None else {}
        clients = [await spawn("arena.bench.echo", address[transport], "--back-bytes", str(back_bytes),
                               *trust.get(transport, [])) for transport in transports]
        try:
            yield turns
        finally:
            await reap(clients)
            await server.stop(0)


def transport_figures(turns: Turns) -> dict[str, float]:
    """``ping_pong_median_us`` and the like of :func:`transport_ping_pongs`'s lanes (TCP
    unnamed, the others with their transport in the name)."""
    figures: dict[str, float] = {}
    for transport, samples in turns.samples.items():
        figures.update(median_p99("ping_pong" if transport == "tcp" else f"ping_pong_{transport}", samples))
    return figures


@contextlib.asynccontextmanager
async def seat_ping_pongs(seats: int = 4, out_bytes: int = 1800, back_bytes: int = 24) -> AsyncIterator[Turns]:
    """A bare grpc.aio server asking ``seats`` echo processes in turn over TCP, one round
    trip at a time: how a game asks its seats, each seat's bot a process of its own. The
    referee's sequential round trip has this floor too, and the one-process ping-pong of
    :func:`transport_ping_pongs` does not."""
    arrivals: list[str] = []

    def lane_of(context: grpc.aio.ServicerContext) -> str:    # seats in the order they connect
        arrivals.append(str(len(arrivals)))
        return arrivals[-1]

    turns = Turns([str(seat) for seat in range(seats)], out_bytes, lane_of)
    server, port, _ = await echo_server(turns.ping)
    clients = [await spawn("arena.bench.echo", f"127.0.0.1:{port}", "--back-bytes", str(back_bytes))
               for _ in range(seats)]
    try:
        yield turns
    finally:
        await reap(clients)
        await server.stop(0)


def seat_figures(turns: Turns) -> dict[str, float]:
    """``ping_pong_4_seats_median_us`` and its p99, over all the seats' round trips."""
    every = [x for samples in turns.samples.values() for x in samples]
    return median_p99(f"ping_pong_{len(turns.lanes)}_seats", every)


# The header naming the seat of an echo process's streams in :func:`game_ping_pongs`.
SEAT_HEADER = "bench-seat"


async def echo_client(address: str, back_bytes: int, streams: int = 1, channels: int = 1,
                      tls_ca: str | None = None, seat: str = "") -> None:
    """Echo every message of ``streams`` streams spread over ``channels`` channels (over
    TLS trusting ``tls_ca`` when given); ``seat``, when given, goes with each stream
    (:data:`SEAT_HEADER`)."""
    reply = b"y" * back_bytes
    opened = [open_channel(address, tls_ca) for _ in range(min(channels, streams))]
    metadata = ((SEAT_HEADER, seat),) if seat else None

    async def echo(channel: grpc.aio.Channel) -> None:
        call = channel.stream_stream(ECHO_METHOD)(metadata=metadata)
        while await call.read() is not grpc.aio.EOF:
            await call.write(reply)

    try:
        await asyncio.gather(*(echo(opened[i % len(opened)]) for i in range(streams)))
    finally:
        for channel in opened:
            await channel.close()


# ---------------------------------------------------------------------- many streams at once


class InFlight:
    """Bare echo streams into this server, each making ``round_trips`` round trips back
    to back at every :meth:`burst`: every stream in flight at once, the ceiling grpc itself
    puts on the layout of the referee's matches at once."""

    def __init__(self, streams: int, out_bytes: int) -> None:
        loop = asyncio.get_running_loop()
        self.streams, self.payload = streams, b"x" * out_bytes
        self.arrived = 0
        self.ready: asyncio.Future[None] = loop.create_future()     # every stream is here
        self._starts: dict[int, asyncio.Future[int]] = {}            # burst number -> its round trips per stream
        self._bursts = 0
        self._finished = 0
        self._done: asyncio.Future[None] | None = None

    def _start(self, burst: int) -> asyncio.Future[int]:
        if burst not in self._starts:
            self._starts[burst] = asyncio.get_running_loop().create_future()
        return self._starts[burst]

    async def ping(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        self.arrived += 1
        if self.arrived == self.streams and not self.ready.done():
            self.ready.set_result(None)
        burst = 0
        while True:
            for _ in range(await self._start(burst)):
                await context.write(self.payload)
                if await context.read() is grpc.aio.EOF:
                    if self._done is not None and not self._done.done():
                        self._done.set_exception(RuntimeError("an echo client left"))
                    return
            burst += 1
            self._finished += 1
            if self._finished == self.streams and self._done is not None and not self._done.done():
                self._done.set_result(None)

    async def burst(self, round_trips: int) -> None:
        """``round_trips`` on every stream at once; return after the last stream's last."""
        await asyncio.wait_for(asyncio.shield(self.ready), 60)
        self._finished = 0
        self._done = asyncio.get_running_loop().create_future()
        self._start(self._bursts).set_result(round_trips)
        self._bursts += 1
        await asyncio.wait_for(self._done, 300)


class EchoGames:
    """``games`` bare games at once in this server: each a group of ``seats`` echo streams,
    one from each of ``seats`` echo processes, asked in turn one round trip at a time
    (:class:`Turns`), as a match asks its seats: the floor of the referee's matches at
    once with the games' shape."""

    def __init__(self, games: int, seats: int, out_bytes: int) -> None:
        self.groups = [Turns([str(seat) for seat in range(seats)], out_bytes, seat_of) for _ in range(games)]
        self._joined: dict[str, int] = {}    # seat -> its streams so far: the n-th joins game n

    async def ping(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        seat = seat_of(context)
        game = self._joined.get(seat, 0)
        self._joined[seat] = game + 1
        await self.groups[game].ping(request_iterator, context)

    async def warm_up(self, round_trips: int) -> None:
        await asyncio.gather(*(group.warm_up(round_trips) for group in self.groups))

    async def burst(self, round_trips: int) -> None:
        """``round_trips`` in every game, the seats of each taking turns."""
        await asyncio.gather(*(group.burst(round_trips) for group in self.groups))


def seat_of(context: grpc.aio.ServicerContext) -> str:
    return str(dict(context.invocation_metadata() or ()).get(SEAT_HEADER, ""))


@dataclass
class Echo:
    """A bare echo server of the matches-at-once layout (:class:`InFlight` or
    :class:`EchoGames`) and its client processes."""

    streams: InFlight | EchoGames
    clients: list[asyncio.subprocess.Process]


@contextlib.asynccontextmanager
async def echo_layout(kind: str, games: int, seats: int = 4, out_bytes: int = 1800, back_bytes: int = 24,
                      channels: int | None = None) -> AsyncIterator[Echo]:
    """The layout of the referee's matches at once without the referee: ``seats`` echo
    processes holding ``games`` streams each over ``channels`` HTTP/2 connections
    (default: one per stream), into a bare server in this process whose streams are
    ``kind`` ``"in_flight"`` (:class:`InFlight`) or ``"games"`` (:class:`EchoGames`); all
    stop on leaving."""
    streams: InFlight | EchoGames = (InFlight(games * seats, out_bytes) if kind == "in_flight"
                                     else EchoGames(games, seats, out_bytes))
    server, port, _ = await echo_server(streams.ping)
    clients = [await spawn("arena.bench.echo", f"127.0.0.1:{port}", "--back-bytes", str(back_bytes),
                           "--connections", str(games), "--channels", str(channels or games), "--seat", str(seat))
               for seat in range(seats)]
    try:
        if isinstance(streams, EchoGames):
            await streams.warm_up(2 * seats)
        else:
            await streams.burst(2)
        yield Echo(streams, clients)
    finally:
        await reap(clients)
        await server.stop(0)


def main(argv: list[str] | None = None) -> None:
    """An echo process: echo every message of its streams until the server ends them."""
    parser = argparse.ArgumentParser(description="An echo client of arena bench referee's bare yardsticks.")
    parser.add_argument("address")
    parser.add_argument("--back-bytes", type=int, default=24)
    parser.add_argument("--connections", type=int, default=1, help="streams")
    parser.add_argument("--channels", type=int, default=1, help="HTTP/2 connections the streams share")
    parser.add_argument("--tls-ca", help="the CA file to trust: over TLS")
    parser.add_argument("--seat", default="", help="the seat of its streams in the bare games")
    args = parser.parse_args(argv)
    with contextlib.suppress(grpc.aio.AioRpcError):   # the benchmark stopped the server
        asyncio.run(echo_client(args.address, args.back_bytes, args.connections, args.channels, args.tls_ca,
                                args.seat))


if __name__ == "__main__":
    main()
