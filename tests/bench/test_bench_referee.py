"""``arena bench referee`` (arena.bench.referee) with tiny numbers, as its entry point runs
it: real referee, echo and bot processes; every ratio present and no fault. No timing
assertion (the machine is shared)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_referee_benchmark_runs_end_to_end_with_events_only_bots() -> None:
    done = subprocess.run([sys.executable, "-m", "arena.bench.referee", "--games", "1", "--concurrent-matches", "2",
                           "--round-trips", "100", "--tournament-games", "0", "--no-unix", "--events-only"],
                          capture_output=True, text=True, timeout=120, check=True)
    figures = json.loads(done.stdout)
    assert figures["bots_events_only"] == 1
    assert figures["concurrent_faults"] == figures["shared_faults"] == 0
    for ratio in ("ratio_referee_to_ping_pong", "ratio_referee_to_4_seat_ping_pong",
                  "ratio_concurrent_decisions_to_ping_pong_throughput",
                  "ratio_shared_decisions_to_ping_pong_throughput"):
        assert figures[ratio] > 0
    assert figures["ping_pong_median_us"] > 0 and figures["ping_pong_4_seats_median_us"] > 0
