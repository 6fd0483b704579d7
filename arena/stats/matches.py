"""A match being saved, as the statistics read it: what the store hands ``summarize`` and
``rate_matches`` (``arena.stats.summaries``, ``arena.stats.elo``: :meth:`NewMatch.rated`)
inside the save's transaction, once it has given the match its row id and its bots their ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.records import MatchRecord
from arena.stats.elo import RatedMatch

# Made several times per saved match: slots, and not frozen (a frozen dataclass takes
# three times as long to make), on the save path's account.


@dataclass(slots=True)
class NewMatch:
    """A match being saved, as the statistics' functions see it."""

    pk: int                          # matches.id
    record: MatchRecord
    bot_ids: list[int]               # by seat
    latencies_ms: np.ndarray         # float64 per logged action; NaN: the referee played the fallback
    action_seats: np.ndarray         # int64: the seat of each logged action

    def rated(self) -> RatedMatch:
        """The match as the online Elo reads it."""
        record = self.record
        return RatedMatch(self.pk, record.variant, record.status == "completed", self.bot_ids, record.places)
