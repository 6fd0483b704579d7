"""Referee benchmark: how much the arena adds to a bare gRPC round trip, and how it scales.

Run ``python -m arena.bench.referee [--games 20] [--concurrent-matches 64]``; it prints a
JSON dict of figures. In one invocation it measures:

1. **ping-pong**: a bare ``grpc.aio`` bidirectional stream between this process (the
   server, which sends) and an echo client process, on loopback. No protobuf: a generic
   handler moving bytes. The payload going out has the size of a typical decision
   request, the reply that of an answer. Median round trip on the server's clock.
   A second yardstick asks 4 echo processes in turn (``ping_pong_4_seats_*``), as a
   game asks its seats, each seat's bot a process of its own: the sequential path's
   floor, and ``ratio_referee_to_4_seat_ping_pong`` the referee's cost above it.
   Both yardsticks take turns with (2): a warm-up, then after each game a burst of
   ``round_trips / games`` round trips on each, so that a busy or quiet moment of the
   machine falls on the yardsticks and the referee alike (the bare ping-pong's median
   moved from 120 to 190 µs between runs minutes apart, measured alone).
2. **sequential games**: ``games`` full 4-player classic games through the real referee
   between four random bots, each in its own process. Median decision round trip (the
   referee's clock, ``MatchRecord.latencies_ms``), decisions per second, and the ratio to (1).

   Both (1) and (2) are measured over TCP on loopback and over a Unix domain socket
   (``unix:PATH``, the only way into the arena for a bot confined in a sandbox without a
   network), in the same run and taking turns: a round trip on one transport, then one
   on the other (1); a game with the TCP bots, then one with the socket's (2). A busy
   moment of the machine then costs both alike, and the ratios ``ratio_unix_to_tcp_*``
   compare like with like. The TCP figures keep their names; the socket's have
   ``unix`` in theirs.

   With ``tls`` a third transport takes its turn in (1) and (2): TLS over loopback TCP,
   with a throwaway CA and certificate (``arena.tls.make_certificates``); its figures have
   ``tls`` in their names, and ``ratio_tls_to_tcp_*`` compare it with plaintext TCP. The
   referee of the TLS bots in (2) is a second ``ArenaServer`` in the same process (a
   referee's TCP port speaks one or the other), idle while the other plays.
3. **concurrent matches**: ``concurrent_matches`` full 4-player classic games at once in
   this one referee process; the bots are 4 processes holding ``concurrent_matches``
   connections each. Timeouts at a 1 s limit, decisions per second over all matches,
   and the referee's resident memory (``VmRSS``). Two layouts: every stream on its own
   HTTP/2 connection (``concurrent_*``: 256 TCP connections, the hardest case for the
   server) and each bot process multiplexing its streams over ``shared_channels``
   connections (``shared_*``: what a bot process serving many matches would do). For
   comparison, the same layouts of bare echo streams (4 processes ×
   ``concurrent_matches`` streams) are measured too, in two shapes: every stream in
   flight at once (``ping_pong_*round_trips_per_s``, the ceiling grpc itself puts on
   this machine, in this run), and as games (``game_ping_pong_*``: ``concurrent_matches``
   groups of 4 streams, one per echo process, each group asking its streams in turn, one
   round trip in flight per group as a match has one decision in flight: the floor of
   this layout with the games' shape). For the games of both kinds the CPU is split: the
   server's (referee or echo; its event loop's thread also apart, ``*_loop_cpu_*``) and
   its clients' (bots or echo clients) per round trip,
   and how busy the machine's cores were (``*_machine_busy``). On a 2-core machine the
   bots and the server share the cores, so the rates are the machine's;
   ``ratio_concurrent_server_bound_to_game_ping_pong`` (the echo server's CPU per round
   trip over the referee's per decision) is the ratio where the server's one core is the
   limit, as on a machine with cores to spare for the bots. With ``tls`` the referee's
   matches are played a second time right after, over TLS (``concurrent_tls_*``,
   ``shared_tls_*``): every bot connection makes its own handshake, so the first layout
   is also TLS's hardest case.

   The echoes and the referee take turns (``turns``, 3 by default): in each layout, a
   burst of each echo, then the referee's matches, and again. Every echo burst makes as
   many round trips as the matches make decisions (each game-shaped group a whole game's
   worth). A ratio is taken turn by turn and the figure is the median of the turns
   (``*_by_turn`` lists them): this machine's speed moves by 20-40% from one minute to
   the next, at times 2-3x within an hour, and a single echo run followed by a single
   referee run put such a swing into its ratio whole.

4. **tournament**: the default tournament, as ``arena tournament --variant classic`` plays it
   (its default lineup of sample bots, the Node.js one included), with ``tournament_games``
   games, run as that command in a fresh folder. Games per second over the command's whole
   run (bot start-up included, as a user waits for it) and over its play (the first stored
   match's start to the last one's end), each with its ratio to a bare in-process loop of
   the same games (the stored configs, so the same deals) through the engine alone, every
   seat playing its first legal option.

With ``events_only`` the bots of (2) and (3) say ``Hello.events_only``: their requests
come without the observation, as a bot that keeps its own state may ask
(``bots_events_only`` says which way a run went).

The referee process gets the garbage-collector settings ``arena serve`` uses
(``arena.referee.server.tune_gc``) before anything is measured.

Bot processes are started with ``asyncio.create_subprocess_exec`` (never a bare fork:
a forked child of a process running gRPC's threads hangs). This module is also the
bots' and the echo client's entry point (``--echo-client``, ``--bots``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from arena.bench.machine import busy_share, cpu_busy, processes_cpu
from arena.records import MatchRecord, MatchSpec
from arena.referee.auth import MAX_STREAMS_PER_BOT
from arena.referee.loopback import LoopbackReferee
from arena.referee.server import ArenaServer, tune_gc
from arena.tls import ClientTls, ServerTls, load_server_tls, make_certificates
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import GameConfig, new_game

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


@contextlib.contextmanager
def _socket_path() -> Iterator[Path]:
    """A path for a Unix socket in a fresh folder of its own (short: a socket path has at
    most 107 bytes), removed afterwards with whatever was bound there."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        yield Path(folder) / "referee.sock"


def _unix(socket: Path) -> str:
    """grpc's address of a Unix socket."""
    return f"unix:{socket}"


def _transport(context: grpc.aio.ServicerContext) -> str:
    """``"unix"``, ``"tls"`` or ``"tcp"``: how a server-side call came in; grpc names a Unix
    socket's client ``unix:`` and a TCP one ``ipv4:HOST:PORT``, and says ``ssl`` in the
    call's auth context when it came over TLS."""
    if context.peer().startswith("unix:"):
        return "unix"
    security = context.auth_context().get("transport_security_type") or []
    return "tls" if b"ssl" in security else "tcp"


@dataclass(frozen=True)
class BenchTls:
    """A throwaway CA and the certificate for 127.0.0.1 it signed: the server's side and
    the CA file its clients trust."""

    server: ServerTls
    ca: Path


@contextlib.contextmanager
def _throwaway_tls() -> Iterator[BenchTls]:
    """A fresh CA and certificate for 127.0.0.1 (valid one day), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-tls-") as folder:
        made = make_certificates("127.0.0.1", Path(folder), days=1)
        yield BenchTls(load_server_tls(made.certificate, made.key), made.ca)


def _channel(address: str, tls_ca: str | None) -> grpc.aio.Channel:
    """A client channel of the benchmark's processes: over TLS trusting ``tls_ca`` when given."""
    if tls_ca:
        return ClientTls(Path(tls_ca)).secure_channel(address, CLIENT_OPTIONS)
    return grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS)


async def _echo_server(ping: Any, unix_socket: Path | None = None,
                       tls: BenchTls | None = None) -> tuple[grpc.aio.Server, int, int]:
    """A bare grpc.aio server whose one bidi method is ``ping``; returns it, its plaintext
    port and its TLS port (0 without ``tls``). With ``unix_socket`` it also listens there."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Ping": grpc.stream_stream_rpc_method_handler(ping)})
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    if unix_socket is not None:
        server.add_insecure_port(_unix(unix_socket))
    tls_port = server.add_secure_port("127.0.0.1:0", tls.server.credentials()) if tls is not None else 0
    await server.start()
    return server, port, tls_port


class _CpuSplit:
    """Where the CPU of a measured stretch went: this process (the server), the
    processes it started for it (bots or echo clients, every thread of each) and the
    machine as a whole. On a machine with few cores the server and its clients share
    them: when they are all busy (``machine_busy`` near 1) a rate is the machine's, and
    the CPU per round trip on each side says what a machine with a core for each would
    give (the server's own core is then the limit). The server's CPU is split once
    more: its event loop's thread (``loop_cpu``, where the referee's Python and
    grpc.aio's Python side run) and the rest, mostly grpc's poller thread, which takes
    gRPC's completions off the network and wakes the loop."""

    def __init__(self, processes: Sequence[asyncio.subprocess.Process]) -> None:
        self.pids = [process.pid for process in processes]
        self.elapsed = self.cpu = self.loop_cpu = 0.0
        self.clients_cpu: float | None = None
        self.busy: float | None = None

    def __enter__(self) -> _CpuSplit:
        self._started, self._cpu, self._loop_cpu = time.perf_counter(), time.process_time(), time.thread_time()
        self._clients, self._machine = processes_cpu(self.pids), cpu_busy()
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self._started
        self.cpu = time.process_time() - self._cpu
        self.loop_cpu = time.thread_time() - self._loop_cpu
        clients, self.busy = processes_cpu(self.pids), busy_share(self._machine, cpu_busy())
        if clients is not None and self._clients is not None:
            self.clients_cpu = clients - self._clients

    @classmethod
    def total(cls, splits: Sequence[_CpuSplit]) -> _CpuSplit:
        """Several measured stretches as one: their times added up, the machine's busy
        share weighted by their lengths (unknown where any is)."""
        whole = cls([])
        whole.elapsed = sum(split.elapsed for split in splits)
        whole.cpu = sum(split.cpu for split in splits)
        whole.loop_cpu = sum(split.loop_cpu for split in splits)
        clients = [split.clients_cpu for split in splits]
        whole.clients_cpu = None if None in clients else sum(c for c in clients if c is not None)
        if whole.elapsed and all(split.busy is not None for split in splits):
            whole.busy = sum((split.busy or 0.0) * split.elapsed for split in splits) / whole.elapsed
        return whole

    def figures(self, prefix: str, server: str, clients: str, per: str, count: int) -> dict[str, float]:
        """``PREFIX_SERVER_cpu_us_per_PER`` (and ``PREFIX_SERVER_loop_cpu_us_per_PER``,
        its event loop's thread), the clients' the same way, and ``PREFIX_machine_busy``,
        over ``count`` round trips (those unknown without /proc are left out)."""
        figures = {f"{prefix}_{server}_cpu_us_per_{per}": self.cpu / count * 1e6,
                   f"{prefix}_{server}_loop_cpu_us_per_{per}": self.loop_cpu / count * 1e6}
        if self.clients_cpu is not None:
            figures[f"{prefix}_{clients}_cpu_us_per_{per}"] = self.clients_cpu / count * 1e6
        if self.busy is not None:
            figures[f"{prefix}_machine_busy"] = self.busy
        return figures


# ---------------------------------------------------------------------- (1) ping-pong


class _Turns:
    """Streams that take turns, one round trip at a time, in a fixed order of lanes, so
    that they are never in flight at once and share whatever else the machine is doing.
    The round trips come in bursts that the benchmark starts (:meth:`burst`): between
    the games of (2), so that the yardsticks and the referee take turns too. ``ping`` is
    the echo server's handler: ``lane_of(context)`` names a stream's lane;
    ``samples[lane]`` gets its round trips' times (µs)."""

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


def _median_p99(name: str, samples: list[float]) -> dict[str, float]:
    return {f"{name}_median_us": statistics.median(samples),
            f"{name}_p99_us": statistics.quantiles(samples, n=100)[98]}


@contextlib.asynccontextmanager
async def transport_ping_pongs(unix: bool = True, tls: BenchTls | None = None, out_bytes: int = 1800,
                               back_bytes: int = 24) -> AsyncIterator[_Turns]:
    """A bare grpc.aio bidi stream to an echo process over TCP, (``unix``) one over a
    Unix socket and (``tls``) one over TLS, taking turns (:class:`_Turns`, lanes named
    ``tcp``, ``unix``, ``tls``); the echo processes and the server end on leaving."""
    transports = ("tcp",) + (("unix",) if unix else ()) + (("tls",) if tls is not None else ())
    turns = _Turns(transports, out_bytes, _transport)
    with _socket_path() as socket:
        server, port, tls_port = await _echo_server(turns.ping, socket if unix else None, tls)
        address = {"tcp": f"127.0.0.1:{port}", "unix": _unix(socket), "tls": f"127.0.0.1:{tls_port}"}
        trust = {"tls": ["--tls-ca", str(tls.ca)]} if tls is not None else {}
        clients = [await _spawn("--echo-client", address[transport], "--back-bytes", str(back_bytes),
                                *trust.get(transport, [])) for transport in transports]
        try:
            yield turns
        finally:
            await _reap(clients)
            await server.stop(0)


def transport_figures(turns: _Turns) -> dict[str, float]:
    """``ping_pong_median_us`` and the like of :func:`transport_ping_pongs`'s lanes (TCP
    unnamed, the others with their transport in the name)."""
    figures: dict[str, float] = {}
    for transport, samples in turns.samples.items():
        figures.update(_median_p99("ping_pong" if transport == "tcp" else f"ping_pong_{transport}", samples))
    return figures


@contextlib.asynccontextmanager
async def seat_ping_pongs(seats: int = 4, out_bytes: int = 1800, back_bytes: int = 24) -> AsyncIterator[_Turns]:
    """A bare grpc.aio server asking ``seats`` echo processes in turn over TCP, one round
    trip at a time: how a game asks its seats, each seat's bot a process of its own. The
    referee's sequential round trip has this floor too, and the one-process ping-pong of
    :func:`transport_ping_pongs` does not."""
    arrivals: list[str] = []

    def lane_of(context: grpc.aio.ServicerContext) -> str:    # seats in the order they connect
        arrivals.append(str(len(arrivals)))
        return arrivals[-1]

    turns = _Turns([str(seat) for seat in range(seats)], out_bytes, lane_of)
    server, port, _ = await _echo_server(turns.ping)
    clients = [await _spawn("--echo-client", f"127.0.0.1:{port}", "--back-bytes", str(back_bytes))
               for _ in range(seats)]
    try:
        yield turns
    finally:
        await _reap(clients)
        await server.stop(0)


def seat_figures(turns: _Turns) -> dict[str, float]:
    """``ping_pong_4_seats_median_us`` and its p99, over all the seats' round trips."""
    every = [x for samples in turns.samples.values() for x in samples]
    return _median_p99(f"ping_pong_{len(turns.lanes)}_seats", every)


# The header naming the seat of an echo process's streams in :func:`game_ping_pongs`.
SEAT_HEADER = "bench-seat"


async def _echo_client(address: str, back_bytes: int, streams: int = 1, channels: int = 1,
                       tls_ca: str | None = None, seat: str = "") -> None:
    """Echo every message of ``streams`` streams spread over ``channels`` channels (over
    TLS trusting ``tls_ca`` when given); ``seat``, when given, goes with each stream
    (:data:`SEAT_HEADER`)."""
    reply = b"y" * back_bytes
    opened = [_channel(address, tls_ca) for _ in range(min(channels, streams))]
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


# ---------------------------------------------------------------------- bench bots


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


async def _bot_connection(channel: grpc.aio.Channel, name: str, token: str, seed: int, events_only: bool) -> None:
    """One Play stream of a benchmark bot: random legal answers."""
    await bare_play(channel, token, random.Random(seed).choice, name, events_only)


async def _bots(address: str, names: str, tokens: str, connections: int, channels: int,
                tls_ca: str | None = None, events_only: bool = False) -> None:
    """``connections`` Play streams spread over ``channels`` channels (HTTP/2 connections),
    and over the comma-separated ``names`` (with their ``tokens``) in turn; over TLS
    trusting ``tls_ca`` when given; asking for events only with ``events_only``."""
    logins = list(zip(names.split(","), tokens.split(",")))
    opened = [_channel(address, tls_ca) for _ in range(channels)]
    try:
        await asyncio.gather(*(_bot_connection(opened[i % channels], *logins[i % len(logins)], seed=i,
                                               events_only=events_only)
                               for i in range(connections)))
    finally:
        for channel in opened:
            await channel.close()


# ---------------------------------------------------------------------- (2) sequential games


def _groups(connections: int) -> int:
    """Names each seat's process plays under: the arena lets one bot hold at most
    MAX_STREAMS_PER_BOT streams, so more connections are spread over more names."""
    return -(-connections // MAX_STREAMS_PER_BOT)


def _name(seat: int, group: int, groups: int, prefix: str = "bench") -> str:
    return f"{prefix}{seat}" if groups == 1 else f"{prefix}{seat}.{group}"


# The names of the bots on the Unix socket in (2) start with this instead of "bench",
# those over TLS with the other.
UNIX_PREFIX = "unix"
TLS_PREFIX = "tls"


async def _arena_with_bots(connections: int, move_time: float, channels: int = 1, unix_socket: Path | None = None,
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
    groups = _groups(connections)
    logins = [("bench" if tls is None else TLS_PREFIX, tcp, [] if tls is None else ["--tls-ca", str(tls.ca)])]
    if unix_socket is not None:
        logins.append((UNIX_PREFIX, _unix(unix_socket), []))
    every = []
    for prefix, address, trust in logins:
        for i in range(4):
            names = [_name(i, g, groups, prefix) for g in range(groups)]
            for name in names:
                referee.admit(name, f"token-{name}")
            processes.append(await _spawn("--bots", address, "--name", ",".join(names),
                                          "--token", ",".join(f"token-{n}" for n in names),
                                          "--connections", str(connections), "--channels", str(channels),
                                          *trust, *(["--events-only"] if events_only else [])))
            every += names
    await arena.wait_connected(every, 60)
    while sum(info.connections for info in arena.connected_bots().values()) < 4 * len(logins) * connections:
        await asyncio.sleep(0.05)
    return arena, processes


def _spec(seed: int, group: int = 0, groups: int = 1, prefix: str = "bench") -> MatchSpec:
    return MatchSpec(config=GameConfig(variant="classic", players=4, seed=seed),
                     bots=[_name(i, group, groups, prefix) for i in range(4)])


async def sequential_games(games: int, unix: bool = True, tls: BenchTls | None = None,
                           events_only: bool = False,
                           between: Callable[[], Awaitable[None]] | None = None) -> dict[str, float]:
    """Full 4-player classic games one after another; latencies on the referee's clock.
    ``between`` is awaited after each game (and each transport's turn at it): the
    yardsticks' bursts, so that they and the referee take turns.

    With ``unix`` the same games are played a second time by bots on a Unix socket of
    the same referee, game by game in turn with the TCP ones (the same seeds, so the
    same decisions), and measured apart. With ``tls`` a third time, in the same turns, by
    bots over TLS to a second referee in this process."""
    transports = ("tcp",) + (("unix",) if unix else ()) + (("tls",) if tls is not None else ())
    prefix = {"tcp": "bench", "unix": UNIX_PREFIX, "tls": TLS_PREFIX}
    latencies: dict[str, list[float]] = {transport: [] for transport in transports}
    decisions = dict.fromkeys(transports, 0)
    elapsed = dict.fromkeys(transports, 0.0)
    cpu = dict.fromkeys(transports, 0.0)
    with _socket_path() as socket:
        arena, processes = await _arena_with_bots(connections=1, move_time=1.0, unix_socket=socket if unix else None,
                                                  events_only=events_only)
        arenas = dict.fromkeys(transports, arena)
        try:
            if tls is not None:
                arenas["tls"], more = await _arena_with_bots(connections=1, move_time=1.0, tls=tls,
                                                             events_only=events_only)
                processes += more
            for transport in transports:             # warm-up, not counted
                await arenas[transport].run_match(_spec(seed=10_000, prefix=prefix[transport]))
            for game in range(games):
                for transport in transports:
                    started, cpu_started = time.perf_counter(), time.process_time()
                    record = await arenas[transport].run_match(_spec(seed=game, prefix=prefix[transport]))
                    elapsed[transport] += time.perf_counter() - started
                    cpu[transport] += time.process_time() - cpu_started
                    latencies[transport] += [ms for ms in record.latencies_ms if ms is not None]
                    decisions[transport] += len(record.actions)
                if between is not None:
                    await between()
        finally:
            for each in set(arenas.values()):
                await each.stop(0)
            await _reap(processes)
    figures: dict[str, float] = {"sequential_games": games, "sequential_decisions": decisions["tcp"]}
    for transport in transports:
        unix_ = "" if transport == "tcp" else f"{transport}_"
        figures.update({
            f"referee_{unix_}median_round_trip_us": statistics.median(latencies[transport]) * 1000,
            f"referee_{unix_}p99_round_trip_us": statistics.quantiles(latencies[transport], n=100)[98] * 1000,
            f"sequential_{unix_}decisions_per_s": decisions[transport] / elapsed[transport],
            f"sequential_{unix_}referee_cpu_us_per_decision": cpu[transport] / decisions[transport] * 1e6,
        })
    return figures


# ---------------------------------------------------------------------- (3) matches at once


class _InFlight:
    """Bare echo streams into this server, each making ``round_trips`` round trips back
    to back at every :meth:`burst`: every stream in flight at once, the ceiling grpc itself
    puts on the layout of (3)."""

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


class _Games:
    """``games`` bare games at once in this server: each a group of ``seats`` echo streams,
    one from each of ``seats`` echo processes, asked in turn one round trip at a time
    (:class:`_Turns`), as a match asks its seats: the floor of (3) with the games' shape."""

    def __init__(self, games: int, seats: int, out_bytes: int) -> None:
        self.groups = [_Turns([str(seat) for seat in range(seats)], out_bytes, _seat_of) for _ in range(games)]
        self._joined: dict[str, int] = {}    # seat -> its streams so far: the n-th joins game n

    async def ping(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        seat = _seat_of(context)
        game = self._joined.get(seat, 0)
        self._joined[seat] = game + 1
        await self.groups[game].ping(request_iterator, context)

    async def warm_up(self, round_trips: int) -> None:
        await asyncio.gather(*(group.warm_up(round_trips) for group in self.groups))

    async def burst(self, round_trips: int) -> None:
        """``round_trips`` in every game, the seats of each taking turns."""
        await asyncio.gather(*(group.burst(round_trips) for group in self.groups))


def _seat_of(context: grpc.aio.ServicerContext) -> str:
    return str(dict(context.invocation_metadata() or ()).get(SEAT_HEADER, ""))


@dataclass
class _Echo:
    """A bare echo server of (3) (:class:`_InFlight` or :class:`_Games`) and its client processes."""

    streams: _InFlight | _Games
    clients: list[asyncio.subprocess.Process]


@contextlib.asynccontextmanager
async def echo_layout(kind: str, games: int, seats: int = 4, out_bytes: int = 1800, back_bytes: int = 24,
                      channels: int | None = None) -> AsyncIterator[_Echo]:
    """The layout of (3) without the referee: ``seats`` echo processes holding ``games``
    streams each over ``channels`` HTTP/2 connections (default: one per stream), into a bare
    server in this process whose streams are ``kind`` ``"in_flight"`` (:class:`_InFlight`)
    or ``"games"`` (:class:`_Games`); all stop on leaving."""
    streams: _InFlight | _Games = (_InFlight(games * seats, out_bytes) if kind == "in_flight"
                                   else _Games(games, seats, out_bytes))
    server, port, _ = await _echo_server(streams.ping)
    clients = [await _spawn("--echo-client", f"127.0.0.1:{port}", "--back-bytes", str(back_bytes),
                            "--connections", str(games), "--channels", str(channels or games), "--seat", str(seat))
               for seat in range(seats)]
    try:
        if isinstance(streams, _Games):
            await streams.warm_up(2 * seats)
        else:
            await streams.burst(2)
        yield _Echo(streams, clients)
    finally:
        await _reap(clients)
        await server.stop(0)


@dataclass
class _Matches:
    """A referee in this process and its 4 bot processes, for (3): ``matches`` full
    games at once at every :meth:`play`."""

    arena: ArenaServer
    processes: list[asyncio.subprocess.Process]
    matches: int
    names: str

    async def play(self, turn: int) -> list[MatchRecord]:
        """One turn's matches, all at once (other deals at every turn)."""
        groups = _groups(self.matches)
        seed = 100 + turn * self.matches
        return list(await asyncio.gather(*(self.arena.run_match(_spec(seed + i, i % groups, groups, self.names))
                                          for i in range(self.matches))))


@contextlib.asynccontextmanager
async def referee_layout(matches: int, channels: int | None = None, tls: BenchTls | None = None,
                         events_only: bool = False) -> AsyncIterator[_Matches]:
    """4 × ``matches`` bot connections over ``channels`` HTTP/2 connections per bot process
    (default: one per stream, 256 real connections for 64 matches, the hardest case for
    the server) into a referee in this process, over TLS with ``tls``; stopped on leaving."""
    arena, processes = await _arena_with_bots(connections=matches, move_time=1.0, channels=channels or matches,
                                              tls=tls, events_only=events_only)
    try:
        yield _Matches(arena, processes, matches, "bench" if tls is None else TLS_PREFIX)
    finally:
        await arena.stop(0)
        await _reap(processes)


def _decisions_per_game() -> int:
    """The decisions of one 4-player classic game (every one has as many: 60 bids, 480 cards)."""
    game = new_game(GameConfig(variant="classic", players=4, seed=0))
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(seat, game.decision(seat).default)
    return len(game.actions)


def _matches_figures(p: str, records: list[MatchRecord], splits: list[_CpuSplit]) -> dict[str, Any]:
    """The figures of the referee's turns of one layout: ``p``, its prefix."""
    decisions = [sum(len(r.actions) for r in turn) for turn in _chunks(records, len(records) // len(splits))]
    faults = [f for r in records for f in r.faults]
    latencies = sorted(ms for r in records for ms in r.latencies_ms if ms is not None)
    rates = [n / split.elapsed for n, split in zip(decisions, splits)]
    return {f"{p}_matches": len(records) // len(splits), f"{p}_decisions": sum(decisions),
            f"{p}_timeouts": sum(1 for f in faults if f.kind == "timeout"),
            f"{p}_faults": len(faults),
            f"{p}_decisions_per_s": statistics.median(rates),
            f"{p}_decisions_per_s_by_turn": [round(rate, 1) for rate in rates],
            f"{p}_seconds": statistics.median(split.elapsed for split in splits),
            f"{p}_round_trip_median_ms": statistics.median(latencies),
            f"{p}_round_trip_p99_ms": statistics.quantiles(latencies, n=100)[98],
            f"{p}_round_trip_max_ms": latencies[-1],
            **_CpuSplit.total(splits).figures(p, "referee", "bots", "decision", sum(decisions))}


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


async def matches_at_once(matches: int, turns: int = 3, channels: int | None = None, prefix: str = "concurrent",
                          echo_tag: str = "", tls: BenchTls | None = None,
                          events_only: bool = False) -> dict[str, Any]:
    """(3) for one layout: ``matches`` full games at once through the referee, and the
    same layout of bare echoes in both shapes, taking turns: ``turns`` times a burst of
    each echo, then the referee's matches (then, with ``tls``, the same over TLS). Every
    echo burst makes as many round trips as the matches make decisions (the games' shape:
    a game's decisions in each group). Each ratio is taken turn by turn, as the machine's
    speed drifts between turns, and the median of the turns is the figure (``*_by_turn``
    lists them). The referee's figures start with ``prefix``, the echoes' names have
    ``echo_tag`` after ``ping_pong``; the memory figure is ``referee_rss_mb`` with the
    default prefix, else ``<prefix>_referee_rss_mb``."""
    per_game = _decisions_per_game()
    p, tag = prefix, echo_tag
    flights, games, plain, secure = [], [], [], []
    records: list[MatchRecord] = []
    tls_records: list[MatchRecord] = []
    async with contextlib.AsyncExitStack() as stack:
        flight = await stack.enter_async_context(echo_layout("in_flight", matches, channels=channels))
        game = await stack.enter_async_context(echo_layout("games", matches, channels=channels))
        referee = await stack.enter_async_context(referee_layout(matches, channels, events_only=events_only))
        tls_referee = (await stack.enter_async_context(referee_layout(matches, channels, tls, events_only))
                       if tls is not None else None)
        for turn in range(turns):
            with _CpuSplit(flight.clients) as split:
                await flight.streams.burst(max(1, per_game // 4))     # 4 streams a game, each in flight
            flights.append(split)
            with _CpuSplit(game.clients) as split:
                await game.streams.burst(per_game)
            games.append(split)
            with _CpuSplit(referee.processes) as split:
                records += await referee.play(turn)
            plain.append(split)
            if turn == 0:
                # After the first turn's matches: the server keeps the last 200 finished
                # for its spectators, so every later turn would add its own to the figure.
                memory = rss_mb()
            if tls_referee is not None:
                with _CpuSplit(tls_referee.processes) as split:
                    tls_records += await tls_referee.play(turn)
                secure.append(split)
    round_trips = matches * per_game
    flight_rates = [round_trips / split.elapsed for split in flights]
    game_rates = [round_trips / split.elapsed for split in games]
    figures: dict[str, Any] = {
        f"ping_pong{tag}_streams": 4 * matches,
        f"ping_pong{tag}_round_trips_per_s": statistics.median(flight_rates),
        f"game_ping_pong{tag}_round_trips_per_s": statistics.median(game_rates),
        **_CpuSplit.total(games).figures(f"game_ping_pong{tag}", "server", "clients", "round_trip",
                                         round_trips * turns),
        f"{p}_channels_per_bot_process": channels or matches,
        **_matches_figures(p, records, plain),
        "referee_rss_mb" if p == "concurrent" else f"{p}_referee_rss_mb": memory,
    }
    decisions = [sum(len(r.actions) for r in turn) for turn in _chunks(records, matches)]
    rates = [n / split.elapsed for n, split in zip(decisions, plain)]
    by_turn = {
        f"ratio_{p}_decisions_to_ping_pong_throughput": [r / f for r, f in zip(rates, flight_rates)],
        f"ratio_{p}_decisions_to_game_ping_pong": [r / g for r, g in zip(rates, game_rates)],
        # Where the server's one core is the limit (bots on cores of their own), the rates
        # would be in the inverse ratio of the servers' CPU per round trip.
        f"ratio_{p}_server_bound_to_game_ping_pong": [
            (echo.cpu / round_trips) / (mine.cpu / n) for echo, mine, n in zip(games, plain, decisions)],
    }
    if tls is not None:
        figures.update(_matches_figures(f"{p}_tls", tls_records, secure))
        tls_decisions = [sum(len(r.actions) for r in turn) for turn in _chunks(tls_records, matches)]
        by_turn[f"ratio_tls_to_tcp_{p}_decisions_per_s"] = [
            (n / split.elapsed) / rate for n, split, rate in zip(tls_decisions, secure, rates)]
    for name, ratios in by_turn.items():
        figures[name] = statistics.median(ratios)
        figures[f"{name}_by_turn"] = [round(ratio, 3) for ratio in ratios]
    return figures


# ---------------------------------------------------------------------- (4) the tournament


def engine_games_per_s(configs: list[GameConfig]) -> float:
    """Games per second of a bare loop through the engine: every game of ``configs`` played
    to its end, each seat taking its first legal option (a prediction: the default)."""
    started = time.perf_counter()
    for config in configs:
        game = new_game(config)
        while not game.is_over:
            for seat in game.to_act():
                decision = game.decision(seat)
                game.apply(seat, decision.options[0] if decision.options else decision.default)
    return len(configs) / (time.perf_counter() - started)


def tournament(games: int = 20, seed: int = 1) -> dict[str, float]:
    """(4): ``arena tournament --variant classic --games GAMES`` with the default lineup, in
    a fresh folder with its own database, against the engine alone on the same deals."""
    from arena.store import Store  # only this measurement needs the database

    with tempfile.TemporaryDirectory(prefix="arena-bench-tournament-") as folder:
        db = Path(folder) / "bench.db"
        command = [sys.executable, "-m", "arena.cli", "tournament", "--variant", "classic", "--games", str(games),
                   "--seed", str(seed), "--db", str(db)]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=3600)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"arena tournament failed: {done.stderr.strip().splitlines()[-1:]}")
        with Store(str(db)) as store:
            (info,) = store.list_tournaments()
            summaries = store.list_matches(tournament_id=info.id, limit=1_000_000)
            records = [store.load_match(summary.match_id) for summary in summaries]
    played = len(records)
    play_seconds = (max(r.finished_at for r in records) - min(r.started_at for r in records)).total_seconds()
    engine = engine_games_per_s([GameConfig.from_dict(r.config) for r in records])
    whole, play = played / elapsed, played / play_seconds
    return {"tournament_games": played, "tournament_decisions": sum(len(r.actions) for r in records),
            "tournament_seconds": elapsed, "tournament_games_per_s": whole, "tournament_play_games_per_s": play,
            "tournament_engine_games_per_s": engine,
            "ratio_tournament_to_engine_games_per_s": whole / engine,
            "ratio_tournament_play_to_engine_games_per_s": play / engine}


def bench_referee(games: int = 20, concurrent_matches: int = 64, round_trips: int = 3000,
                  shared_channels: int = 1, unix: bool = True, tls: bool = False,
                  tournament_games: int = 20, events_only: bool = False, turns: int = 3) -> dict[str, Any]:
    """Run all four measurements; return every figure in one dict (times in µs).
    ``shared_channels``: HTTP/2 connections per bot process in the shared layout of (3);
    ``turns``: how often the echoes and the referee take turns in each layout of (3);
    ``unix``: (1) and (2) over a Unix socket too; ``tls``: (1), (2) and both layouts of
    (3) over TLS too; ``tournament_games``: the games of (4), 0 to leave it out;
    ``events_only``: the bots of (2) and (3) ask for requests without the observation."""
    with contextlib.ExitStack() as stack:
        material = stack.enter_context(_throwaway_tls()) if tls else None
        figures = asyncio.run(_bench_referee(games, concurrent_matches, round_trips, shared_channels, unix, material,
                                             events_only, turns))
    if tournament_games:
        figures.update(tournament(tournament_games))
    return figures


async def _bench_referee(games: int, matches: int, round_trips: int, shared_channels: int, unix: bool,
                         tls: BenchTls | None, events_only: bool, turns: int) -> dict[str, Any]:
    tune_gc()
    figures: dict[str, Any] = {"bots_events_only": int(events_only)}
    # The yardsticks of (1) take turns with the games of (2): a burst of round trips on
    # each after every game. The 4-seat one is the floor of a game's sequential path: a
    # bare server asking 4 processes in turn.
    async with transport_ping_pongs(unix, tls) as transports, seat_ping_pongs(4) as seats:
        lanes = len(transports.lanes)
        await transports.warm_up(round_trips // 10 * lanes)
        await seats.warm_up(round_trips // 10)

        async def yardsticks() -> None:
            await transports.burst(max(1, round_trips // games) * lanes)
            await seats.burst(max(1, round_trips // games))

        figures.update(await sequential_games(games, unix=unix, tls=tls, events_only=events_only,
                                              between=yardsticks))
    figures.update(transport_figures(transports))
    figures.update(seat_figures(seats))
    figures["ratio_referee_to_ping_pong"] = (figures["referee_median_round_trip_us"]
                                             / figures["ping_pong_median_us"])
    figures["ratio_referee_to_4_seat_ping_pong"] = (figures["referee_median_round_trip_us"]
                                                    / figures["ping_pong_4_seats_median_us"])
    for transport in (("unix",) if unix else ()) + (("tls",) if tls is not None else ()):
        t = transport
        figures[f"ratio_{t}_referee_to_ping_pong"] = (figures[f"referee_{t}_median_round_trip_us"]
                                                      / figures[f"ping_pong_{t}_median_us"])
        figures[f"ratio_{t}_to_tcp_ping_pong"] = figures[f"ping_pong_{t}_median_us"] / figures["ping_pong_median_us"]
        figures[f"ratio_{t}_to_tcp_referee_round_trip"] = (figures[f"referee_{t}_median_round_trip_us"]
                                                           / figures["referee_median_round_trip_us"])
        figures[f"ratio_{t}_to_tcp_sequential_decisions_per_s"] = (figures[f"sequential_{t}_decisions_per_s"]
                                                                   / figures["sequential_decisions_per_s"])
    # (3): one HTTP/2 connection per stream, then the streams multiplexed over a few
    # connections per bot process; the echoes and the referee taking turns in each.
    figures.update(await matches_at_once(matches, turns, tls=tls, events_only=events_only))
    figures.update(await matches_at_once(matches, turns, channels=shared_channels, prefix="shared",
                                         echo_tag="_shared", tls=tls, events_only=events_only))
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--concurrent-matches", type=int, default=64)
    parser.add_argument("--round-trips", type=int, default=3000)
    parser.add_argument("--turns", type=int, default=3,
                        help="how often the echoes and the referee take turns with the matches at once")
    parser.add_argument("--shared-channels", type=int, default=1,
                        help="HTTP/2 connections per bot process in the shared layout")
    parser.add_argument("--no-unix", dest="unix", action="store_false",
                        help="measure the round trips over TCP only, not over a Unix socket too")
    parser.add_argument("--tls", action="store_true",
                        help="measure the round trips and the concurrent matches over TLS too")
    parser.add_argument("--tournament-games", type=int, default=20,
                        help="games of the default tournament to measure (0: leave it out)")
    # Internal modes: the processes this benchmark starts (--tls-ca: the CA they trust).
    parser.add_argument("--echo-client", metavar="ADDRESS")
    parser.add_argument("--back-bytes", type=int, default=24)
    parser.add_argument("--bots", metavar="ADDRESS")
    parser.add_argument("--name")
    parser.add_argument("--token")
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--tls-ca")
    parser.add_argument("--seat", default="", help="an echo client's seat in the bare games")
    parser.add_argument("--events-only", action="store_true",
                        help="the bots ask for requests without the observation (Hello.events_only)")
    args = parser.parse_args(argv)
    if args.echo_client or args.bots:
        helper = (_echo_client(args.echo_client, args.back_bytes, args.connections, args.channels, args.tls_ca,
                               args.seat)
                  if args.echo_client
                  else _bots(args.bots, args.name, args.token, args.connections, args.channels, args.tls_ca,
                             args.events_only))
        with contextlib.suppress(grpc.aio.AioRpcError):   # the benchmark stopped the server
            asyncio.run(helper)
        return
    print(json.dumps(bench_referee(args.games, args.concurrent_matches, args.round_trips, args.shared_channels,
                                   args.unix, args.tls, args.tournament_games, args.events_only, args.turns),
                     indent=2))

if __name__ == "__main__":
    main()
