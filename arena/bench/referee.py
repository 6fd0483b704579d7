"""Referee benchmark: how much the arena adds to a bare gRPC round trip, and how it scales.

``arena bench referee`` (or ``python -m arena.bench.referee [--games 20]
[--concurrent-matches 64]``, which prints the figures as JSON) measures, in one run:

1. **ping-pong**, the yardsticks (:mod:`arena.bench.echo`): a bare ``grpc.aio``
   bidirectional stream between this process, which sends a decision request's worth of
   bytes, and an echo process on loopback, which answers an answer's worth; median
   round trip on the server's clock. A second yardstick asks 4 echo processes in turn
   (``ping_pong_4_seats_*``), as a game asks its seats, each seat's bot a process of its
   own: the floor of the sequential path.
2. **sequential games**: ``games`` full 4-player classic games one after another through
   the real referee (:mod:`arena.bench.referee_bots`: a referee in this process and 4
   random bots, each a process). Median decision round trip on the referee's clock
   (``MatchRecord.latencies_ms``), decisions per second, and the ratios to (1):
   ``ratio_referee_to_ping_pong`` and ``ratio_referee_to_4_seat_ping_pong``.

   (1) and (2) take turns: after a warm-up, each game is followed by a burst of
   ``round_trips / games`` round trips on each yardstick, so that a busy or quiet moment
   of the machine falls on the yardsticks and the referee alike. Both are measured over
   TCP on loopback and over a Unix domain socket (``unix:PATH``, the only way into the
   arena for a bot confined in a sandbox without a network), a round trip or a game on
   one transport, then on the other, so that the ratios ``ratio_unix_to_tcp_*`` compare
   like with like; the socket's figures have ``unix`` in their names. With ``tls`` a
   third transport takes its turn: TLS over loopback TCP with a throwaway CA and
   certificate (``ratio_tls_to_tcp_*``); its referee in (2) is a second ``ArenaServer``
   in this process, idle while the other plays.
3. **concurrent matches**: ``concurrent_matches`` full games at once in this one referee
   process, the 4 bot processes holding that many streams each. Timeouts at a 1 s
   limit, decisions per second over all matches, and the referee's resident memory
   (``VmRSS``). Two layouts: every stream on its own HTTP/2 connection (``concurrent_*``,
   the hardest case for the server) and each bot process multiplexing its streams over
   ``shared_channels`` connections (``shared_*``). Beside each, the same layout of bare
   echo streams in two shapes: every stream in flight at once
   (``ping_pong_*round_trips_per_s``: the ceiling grpc itself puts on this machine), and
   as games (``game_ping_pong_*``: groups of 4 streams asked in turn, one round trip in
   flight per group as a match has one decision in flight). The CPU is split
   (:class:`~arena.bench.machine.CpuSplit`): the server's (its event loop's thread apart,
   ``*_loop_cpu_*``) and its clients' per round trip, and how busy the machine's cores
   were (``*_machine_busy``). Where bots and server share few cores the rates are the
   machine's; ``ratio_concurrent_server_bound_to_game_ping_pong`` (the echo server's CPU
   per round trip over the referee's per decision) is the ratio where the server's one
   core is the limit. With ``tls`` the referee's matches are played again over TLS right
   after (``concurrent_tls_*``, ``shared_tls_*``).

   The echoes and the referee take ``turns`` turns in each layout: a burst of each echo
   (as many round trips as the matches make decisions), then the referee's matches. A
   ratio is taken turn by turn and the figure is the median of the turns (``*_by_turn``
   lists them), so that the machine's drift between turns does not enter it.
4. **tournament**: ``arena tournament --variant classic --games TOURNAMENT_GAMES`` with its
   default lineup, run as that command in a fresh folder. Games per second over the whole
   run (bot start-up included, as a user waits for it) and over its play (the first
   stored match's start to the last one's end), each as a ratio to the engine alone on
   the same deals (:func:`arena.bench.engine.first_option_games_per_s`).

With ``events_only`` the bots of (2) and (3) say ``Hello.events_only``: their requests
come without the observation (``bots_events_only`` says which way a run went). The
benchmark's process gets the garbage-collector settings ``arena serve`` uses
(``arena.referee.server.tune_gc``) before anything is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bench.echo import echo_layout, seat_figures, seat_ping_pongs, transport_figures, transport_ping_pongs
from arena.bench.engine import first_option_games_per_s
from arena.bench.machine import CpuSplit, rss_mb
from arena.bench.referee_bots import TLS_PREFIX, UNIX_PREFIX, arena_with_bots, match_spec, name_groups
from arena.bench.spawn import reap
from arena.bench.transports import BenchTls, socket_path, throwaway_tls
from arena.records import MatchRecord
from arena.referee.server import ArenaServer, tune_gc
from engine import GameConfig, new_game

# ---------------------------------------------------------------------- (2) sequential games


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
    with socket_path() as socket:
        arena, processes = await arena_with_bots(connections=1, move_time=1.0, unix_socket=socket if unix else None,
                                                 events_only=events_only)
        arenas = dict.fromkeys(transports, arena)
        try:
            if tls is not None:
                arenas["tls"], more = await arena_with_bots(connections=1, move_time=1.0, tls=tls,
                                                            events_only=events_only)
                processes += more
            for transport in transports:             # warm-up, not counted
                await arenas[transport].host.run_match(match_spec(seed=10_000, prefix=prefix[transport]))
            for game in range(games):
                for transport in transports:
                    started, cpu_started = time.perf_counter(), time.process_time()
                    record = await arenas[transport].host.run_match(match_spec(seed=game, prefix=prefix[transport]))
                    elapsed[transport] += time.perf_counter() - started
                    cpu[transport] += time.process_time() - cpu_started
                    latencies[transport] += [ms for ms in record.latencies_ms if ms is not None]
                    decisions[transport] += len(record.actions)
                if between is not None:
                    await between()
        finally:
            for each in set(arenas.values()):
                await each.stop(0)
            await reap(processes)
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


@dataclass
class Matches:
    """A referee in this process and its 4 bot processes, for (3): ``matches`` full
    games at once at every :meth:`play`."""

    arena: ArenaServer
    processes: list[asyncio.subprocess.Process]
    matches: int
    names: str

    async def play(self, turn: int) -> list[MatchRecord]:
        """One turn's matches, all at once (other deals at every turn)."""
        groups = name_groups(self.matches)
        seed = 100 + turn * self.matches
        host = self.arena.host
        return list(await asyncio.gather(*(host.run_match(match_spec(seed + i, i % groups, groups, self.names))
                                          for i in range(self.matches))))


@contextlib.asynccontextmanager
async def referee_layout(matches: int, channels: int | None = None, tls: BenchTls | None = None,
                         events_only: bool = False) -> AsyncIterator[Matches]:
    """4 × ``matches`` bot connections over ``channels`` HTTP/2 connections per bot process
    (default: one per stream, 256 real connections for 64 matches, the hardest case for
    the server) into a referee in this process, over TLS with ``tls``; stopped on leaving."""
    arena, processes = await arena_with_bots(connections=matches, move_time=1.0, channels=channels or matches,
                                             tls=tls, events_only=events_only)
    try:
        yield Matches(arena, processes, matches, "bench" if tls is None else TLS_PREFIX)
    finally:
        await arena.stop(0)
        await reap(processes)


def decisions_per_game() -> int:
    """The decisions of one 4-player classic game (every one has as many: 60 bids, 480 cards)."""
    game = new_game(GameConfig(variant="classic", players=4, seed=0))
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(seat, game.decision(seat).default)
    return len(game.actions)


def matches_figures(p: str, records: list[MatchRecord], splits: list[CpuSplit]) -> dict[str, Any]:
    """The figures of the referee's turns of one layout: ``p``, its prefix."""
    decisions = [sum(len(r.actions) for r in turn) for turn in chunks(records, len(records) // len(splits))]
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
            **CpuSplit.total(splits).figures(p, "referee", "bots", "decision", sum(decisions))}


def chunks(items: list[Any], size: int) -> list[list[Any]]:
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
    per_game = decisions_per_game()
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
            with CpuSplit(flight.clients) as split:
                await flight.streams.burst(max(1, per_game // 4))     # 4 streams a game, each in flight
            flights.append(split)
            with CpuSplit(game.clients) as split:
                await game.streams.burst(per_game)
            games.append(split)
            with CpuSplit(referee.processes) as split:
                records += await referee.play(turn)
            plain.append(split)
            if turn == 0:
                # After the first turn's matches: the server keeps the last 200 finished
                # for its spectators, so every later turn would add its own to the figure.
                memory = rss_mb()
            if tls_referee is not None:
                with CpuSplit(tls_referee.processes) as split:
                    tls_records += await tls_referee.play(turn)
                secure.append(split)
    round_trips = matches * per_game
    flight_rates = [round_trips / split.elapsed for split in flights]
    game_rates = [round_trips / split.elapsed for split in games]
    figures: dict[str, Any] = {
        f"ping_pong{tag}_streams": 4 * matches,
        f"ping_pong{tag}_round_trips_per_s": statistics.median(flight_rates),
        f"game_ping_pong{tag}_round_trips_per_s": statistics.median(game_rates),
        **CpuSplit.total(games).figures(f"game_ping_pong{tag}", "server", "clients", "round_trip",
                                        round_trips * turns),
        f"{p}_channels_per_bot_process": channels or matches,
        **matches_figures(p, records, plain),
        "referee_rss_mb" if p == "concurrent" else f"{p}_referee_rss_mb": memory,
    }
    decisions = [sum(len(r.actions) for r in turn) for turn in chunks(records, matches)]
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
        figures.update(matches_figures(f"{p}_tls", tls_records, secure))
        tls_decisions = [sum(len(r.actions) for r in turn) for turn in chunks(tls_records, matches)]
        by_turn[f"ratio_tls_to_tcp_{p}_decisions_per_s"] = [
            (n / split.elapsed) / rate for n, split, rate in zip(tls_decisions, secure, rates)]
    for name, ratios in by_turn.items():
        figures[name] = statistics.median(ratios)
        figures[f"{name}_by_turn"] = [round(ratio, 3) for ratio in ratios]
    return figures


# ---------------------------------------------------------------------- (4) the tournament, and all four


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
    engine = first_option_games_per_s([r.config for r in records])
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
        material = stack.enter_context(throwaway_tls()) if tls else None
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
    parser.add_argument("--events-only", action="store_true",
                        help="the bots ask for requests without the observation (Hello.events_only)")
    args = parser.parse_args(argv)
    print(json.dumps(bench_referee(args.games, args.concurrent_matches, args.round_trips, args.shared_channels,
                                   args.unix, args.tls, args.tournament_games, args.events_only, args.turns),
                     indent=2))


if __name__ == "__main__":
    main()
