"""The sample bots: legal, fast, better than random, and playing real matches as processes.

* in-process (straight on the engine, no network): every Python sample bot plays legal
  moves in both variants and several table sizes, stays far below the 50 ms per
  decision budget, and the heuristic bot beats random by a clear margin;
* over loopback: full matches of both variants on a real ``ArenaServer`` between all the
  sample bots as separate processes, the Node.js bot included.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
from typing import Any

import pytest
from factories import ROOT
from factories.bots import node_available
from factories.bots import sample_bot_command as bot_command

from arena.records import MatchRecord, MatchSpec
from sample_bots.evaluate import bot_factory, play_series

PYTHON_BOTS = ("random", "heuristic", "greedy", "cautious")


# ---------------------------------------------------------------- in-process


def test_random_bot_is_under_30_lines() -> None:
    assert len((ROOT / "sample_bots" / "random_bot.py").read_text().splitlines()) < 30


@pytest.mark.parametrize("variant,players", [("classic", 3), ("classic", 6), ("extreme", 3), ("extreme", 5)])
def test_python_bots_play_legally_and_quickly(variant: str, players: int) -> None:
    """The engine raises IllegalAction on any illegal move, so finishing is the check."""
    names = [PYTHON_BOTS[i % len(PYTHON_BOTS)] for i in range(players)]
    series = play_series([bot_factory(n) for n in names], variant, games=players, seed=7, rounds=3)
    for standing in series.standings:
        assert standing.games == players
        assert standing.ms_per_decision < 50, f"{standing.name} is too slow: {standing.ms_per_decision:.1f} ms"


@pytest.mark.parametrize("options", [{"bidding": "hidden"}, {"bidding": "secret"}, {"plus_minus_one": True},
                                     {"length": "amigo"}])
def test_python_bots_handle_every_classic_option(options: dict[str, Any]) -> None:
    """Hidden/secret bids (others' bids are None), a forbidden last bid, amigo hand sizes."""
    from engine import GameConfig
    from sample_bots.evaluate import play_game

    bots = [bot_factory(name)() for name in PYTHON_BOTS]
    config = GameConfig(variant="classic", players=4, seed=3, **options)
    totals, places, _, _ = play_game(bots, config, [1, 2, 3, 4])
    assert len(totals) == 4 and min(places) == 1


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_heuristic_beats_random_clearly(variant: str) -> None:
    """100 short 4-player games, seats rotating: heuristic against three random bots."""
    series = play_series([bot_factory("heuristic")] + [bot_factory("random")] * 3, variant, games=100,
                         seed=2024, rounds=5 if variant == "classic" else 2)
    heuristic, *randoms = series.standings
    best_random = (max if variant == "classic" else min)(r.average_score for r in randoms)
    print("\n" + series.table())
    assert heuristic.average_place < 1.5
    if variant == "classic":   # points: higher is better
        assert heuristic.average_score > best_random + 50
    else:                      # penalties: lower is better
        assert heuristic.average_score < best_random - 5


# ---------------------------------------------------------------- real processes, real arena


def play_matches(arena_server: Any, names: list[str], configs: list[dict[str, Any]]) -> list[MatchRecord]:
    """Start an arena and one process per bot, play the matches, stop everything."""
    arena = arena_server(local_bots={name: f"token-{name}" for name in names})
    procs: list[subprocess.Popen[str]] = []
    try:
        for name in names:
            procs.append(subprocess.Popen(
                bot_command(name) + ["--arena", arena.address, "--token", f"token-{name}", "--name", name],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        arena.call(arena.arena.host.wait_connected(names, timeout=30))
        records = []
        for i, config in enumerate(configs):
            spec = MatchSpec(config=config, bots=names, bot_seeds=[100 * i + s for s in range(len(names))])
            records.append(arena.call(arena.arena.host.run_match(spec), timeout=60))
        return records
    finally:
        for proc in procs:
            proc.terminate()
        for name, proc in zip(names, procs):
            code = proc.wait(10)
            stderr = proc.stderr.read() if proc.stderr else ""
            assert code == 0, f"{name} exited with {code} after SIGTERM:\n{stderr[-2000:]}"
            assert "Traceback" not in stderr and "decision failed" not in stderr, f"{name} logged errors:\n{stderr}"


def test_full_matches_between_all_sample_bots_as_processes(arena_server: Any) -> None:
    """Every sample bot, the Node.js one included, in one 5-player match of each variant."""
    reason = node_available()
    if reason:
        pytest.skip(f"Node.js bot not playable: {reason}")
    names = ["node-heuristic", "random", "heuristic", "greedy", "cautious"]
    configs = [{"variant": "classic", "players": 5, "seed": 31},
               {"variant": "extreme", "players": 5, "seed": 32}]
    records = play_matches(arena_server, names, configs)
    for record, config in zip(records, configs):
        assert record.status == "completed"
        assert record.variant == config["variant"]
        assert record.faults == [], [f"{f.bot}: {f.kind}: {f.message}" for f in record.faults]
        assert not any(record.forfeited)
        assert record.bots == names
        assert all(latency is not None for latency in record.latencies_ms)
        assert len(record.totals) == 5 and sorted(record.places)[0] == 1


def test_the_learned_bot_plays_full_matches_as_a_process(arena_server: Any) -> None:
    """The learned bot (numpy and its shipped weights) through the real referee, both variants."""
    names = ["learned", "heuristic", "cautious"]
    records = play_matches(arena_server, names, [{"variant": "classic", "players": 3, "seed": 5, "rounds": 5},
                                                 {"variant": "extreme", "players": 3, "seed": 6, "rounds": 1}])
    for record in records:
        assert record.status == "completed" and not any(record.forfeited)
        assert record.faults == [], [f"{f.bot}: {f.kind}: {f.message}" for f in record.faults]


def test_node_bot_reconnects_into_its_seat(arena_server: Any) -> None:
    """The network under the Node.js bot drops mid-match; it reconnects within the grace
    period and the match completes with the bot still in its seat."""
    reason = node_available()
    if reason:
        pytest.skip(f"Node.js bot not playable: {reason}")
    from factories.network import DroppingProxy

    names = ["node-heuristic", "random", "random2"]
    arena = arena_server(grace=10.0, local_bots={name: f"token-{name}" for name in names})

    async def go() -> tuple[MatchRecord, int, bool]:
        proxy = DroppingProxy(arena.port)
        proxy_port = await proxy.start()
        procs = [subprocess.Popen(bot_command("node-heuristic") + [
            "--arena", f"127.0.0.1:{proxy_port}", "--token", "token-node-heuristic"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)]
        for name in names[1:]:
            procs.append(subprocess.Popen(bot_command("random") + [
                "--arena", f"127.0.0.1:{arena.port}", "--token", f"token-{name}", "--name", name],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            await asyncio.wrap_future(arena.submit(arena.arena.host.wait_connected(names, timeout=30)))
            spec = MatchSpec(config={"variant": "extreme", "players": 3, "seed": 9, "rounds": 6}, bots=names)
            record = await proxy.run_match_dropping_midway(arena, spec)
            return record, proxy.accepted, procs[0].poll() is None
        finally:
            for proc in procs:
                proc.terminate()
            codes = [proc.wait(10) for proc in procs]
            await proxy.stop()
            assert codes[0] == 0, procs[0].stderr.read() if procs[0].stderr else ""

    record, connections, still_running = asyncio.run(go())
    assert record.status == "completed"
    assert connections >= 2
    assert still_running
    assert not any(record.forfeited)
    assert {f.kind for f in record.faults} == {"disconnect"}


def test_node_bot_address_and_retries_as_the_sdk() -> None:
    """A bad --arena is one line and exit 2; with no arena listening, HOST alone dials the
    default port, the retries are said once, and it gives up after --retry-for."""
    reason = node_available()
    if reason:
        pytest.skip(f"Node.js bot not playable: {reason}")
    bad = subprocess.run(bot_command("node-heuristic") + ["--arena", "127.0.0.1:abc", "--token", "t"],
                         cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "127.0.0.1:abc" in bad.stderr
    with socket.socket() as probe:       # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gone = subprocess.run(bot_command("node-heuristic") + ["--arena", f"127.0.0.1:{port}", "--token", "t",
                                                           "--retry-for", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = gone.stderr.strip().splitlines()
    assert gone.returncode == 1, gone.stderr
    assert len([line for line in lines if "retrying" in line]) == 1 and "giving up" in lines[-1], lines
