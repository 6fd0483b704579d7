"""A confined bot that floods the referee (tests/bots/flood_bot.py: 16 threads of
ListMatches, GetLeaderboard, Spectate and Play streams with made-up tokens, through the
Unix socket it was given, while it plays legally) in a real ``arena tournament``: the
rate limits turn the flood away, its rivals play every decision in time, and the
organiser's console gets a few summary lines, not one per refused stream.

No wall-clock assertion: ``arena bench flood`` measures what the flood costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import TEST_BOTS
from factories.bots import needs_bwrap

from arena.store import Store

PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"


@pytest.mark.slow
@needs_bwrap()
def test_a_flooding_confined_bot_is_turned_away_and_its_rivals_play_in_time(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    done = subprocess.run(
        [PY, "-m", "arena.cli", "tournament", "--rounds", "4", "--players", "3", "--games", "3", "--no-samples",
         "--bot", f"flood={PY} {TEST_BOTS / 'flood_bot.py'}", "--bot", f"r1={RANDOM}", "--bot", f"r2={RANDOM}",
         "--db", str(db), "--sandbox", "bwrap"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "bots confined" in done.stdout
    store = Store(str(db))
    (tournament,) = store.list_tournaments()
    assert store.finished_game_indexes(tournament.id) == {0, 1, 2}
    timeouts = []
    for summary in store.list_matches(tournament_id=tournament.id):
        record = store.load_match(summary.match_id)
        timeouts += [f for f in record.faults if record.bots[f.seat] != "flood" and f.kind == "timeout"]
    assert timeouts == []
    # The flood happened, and was turned away.
    log = (tmp_path / "arena-logs" / tournament.id / "flood.log").read_text(errors="replace")
    tallies = [json.loads(line[len("FLOOD "):]) for line in log.splitlines() if line.startswith("FLOOD ")]
    assert tallies, log[-2000:]
    turned_away = sum(count for tally in tallies for what, count in tally.items() if what.endswith("EXHAUSTED"))
    assert turned_away > 0, tallies
    # The console: the first refused stream of the Unix socket, then summaries, not a line each.
    refused = [line for line in (done.stdout + done.stderr).splitlines() if "refused" in line and "Play stream" in line]
    assert refused and len(refused) <= 10, refused
    assert any(line.startswith("refused ") and "more Play streams from unix:" in line for line in refused), refused
