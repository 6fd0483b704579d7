"""``arena bench referee`` (arena.bench.referee) with tiny numbers, as the command runs it:
real referee, echo and bot processes; every ratio present and no fault. No timing
assertion (the machine is shared)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_referee_benchmark_runs_end_to_end_with_events_only_bots() -> None:
    done = subprocess.run([sys.executable, "-m", "arena.cli", "bench", "referee", "--games", "1",
                           "--concurrent-matches", "2", "--tournament-games", "0", "--tcp-only", "--events-only",
                           "--turns", "2", "--json"],
                          capture_output=True, text=True, timeout=120, check=True)
    figures = json.loads(done.stdout)
    assert figures["bots_events_only"] == 1
    assert figures["concurrent_faults"] == figures["shared_faults"] == 0
    for ratio in ("ratio_referee_to_ping_pong", "ratio_referee_to_4_seat_ping_pong",
                  "ratio_concurrent_decisions_to_ping_pong_throughput",
                  "ratio_shared_decisions_to_ping_pong_throughput",
                  "ratio_concurrent_server_bound_to_game_ping_pong"):
        assert figures[ratio] > 0
    # Where the CPU went with the matches at once and the bare games: server and clients.
    for figure in ("concurrent_referee_cpu_us_per_decision", "concurrent_bots_cpu_us_per_decision",
                   "game_ping_pong_server_cpu_us_per_round_trip", "game_ping_pong_clients_cpu_us_per_round_trip"):
        assert figures[figure] >= 0
    assert 0 <= figures["concurrent_machine_busy"] <= 1
    # The server's CPU split once more: its event loop's thread is part of the whole.
    for server, per in (("concurrent_referee", "decision"), ("game_ping_pong_server", "round_trip")):
        loop = figures[f"{server}_loop_cpu_us_per_{per}"]
        assert 0 < loop <= figures[f"{server}_cpu_us_per_{per}"]
    assert figures["ping_pong_median_us"] > 0 and figures["ping_pong_4_seats_median_us"] > 0
    # The echoes and the referee took turns: each ratio of the matches at once is the
    # median of its turns'.
    for layout in ("concurrent", "shared"):
        turns = figures[f"ratio_{layout}_decisions_to_game_ping_pong_by_turn"]
        ratio = figures[f"ratio_{layout}_decisions_to_game_ping_pong"]
        assert len(turns) == 2 and min(turns) - 0.001 <= ratio <= max(turns) + 0.001   # by_turn is rounded
        assert figures[f"{layout}_decisions"] == 2 * 2 * 540   # 2 matches, 2 turns
