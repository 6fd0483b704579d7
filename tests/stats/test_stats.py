"""The statistics room (arena.stats): pure, below the store. Its numbers are tested with
the modules they came from (test_ratings, test_summaries, test_sprt_stats, the think-time
tests of test_store); here, what the room itself promises."""

from __future__ import annotations

import itertools
import subprocess
import sys

from arena.stats.summaries import outcome_key, parse_outcome


def test_the_statistics_load_no_database_terminal_or_network_library() -> None:
    """Importing every statistics module loads none of the store, the results room or the
    libraries of I/O, not even through arena.records or the engine (import-linter's
    layers see the direct imports; this sees what a fresh interpreter actually loads)."""
    code = (
        "import sys\n"
        "import arena.stats.elo, arena.stats.matches, arena.stats.ratings, arena.stats.sprt\n"
        "import arena.stats.summaries, arena.stats.think_times\n"
        "banned = ('sqlalchemy', 'sqlmodel', 'arena.store', 'arena.results', 'rich', 'typer', 'grpc')\n"
        "print(sorted(m for m in sys.modules if m.startswith(banned)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_outcome_key_is_the_same_whatever_the_seating_and_reads_back() -> None:
    bots, places = [9, 3, 7, 5], [4, 1, 2, 2]
    keys = {outcome_key([bots[i] for i in order], [places[i] for i in order])
            for order in itertools.permutations(range(4))}
    assert keys == {"3:1,5:2,7:2,9:4"}
    assert parse_outcome("3:1,5:2,7:2,9:4") == sorted(zip(bots, places))
    # A bot in two seats keeps both.
    assert parse_outcome(outcome_key([4, 4, 2], [1, 3, 2])) == [(2, 2), (4, 1), (4, 3)]
