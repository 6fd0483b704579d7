"""The time control and fault limits of a match, with the arena's defaults written once.

Everything that offers these limits (``arena serve``, ``arena tournament``, ``arena
bot check``, :class:`arena.referee.server.ArenaServer`) takes its defaults from here;
the three a tournament stores with its settings are written in ``arena.settings``, the
room below the store that every reader of those settings imports.

>>> Limits()
Limits(move_time=1.0, time_bank=10.0, max_faults=3, grace=5.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.settings import MAX_FAULTS, MOVE_TIME, TIME_BANK

GRACE = 5.0         # seconds a disconnected bot has to come back before its seats forfeit

# The longest limit accepted for a decision or a bank: a day is far beyond any use, and
# keeps every limit a finite number of milliseconds on the wire (nan, inf and 1e20 broke
# the referee before).
MAX_SECONDS = 86_400.0


@dataclass(frozen=True)
class Limits:
    """Time control and fault limits of one match (seconds)."""

    move_time: float = MOVE_TIME
    time_bank: float = TIME_BANK
    max_faults: int = MAX_FAULTS
    grace: float = GRACE
