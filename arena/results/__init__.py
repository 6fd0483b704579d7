"""Results: what the store holds, read for people. The boards' data (``leaderboard``,
``crosstable``, ``elo_history``, and ``browse``: stored tournaments and matches), a stored
A/B test's result (``sprt``), the Elo plot (``elo_plot``), and the boards in every output
format: one renderer per format in ``render`` (``table``, ``md``, ``csv``, ``json``,
``html``) behind its registry; ``export`` writes a variant's boards as files.

The numbers come from the statistics room below the store (``arena.stats``: ratings,
Elo, think times, the SPRT), the rows from the store's methods: this room runs no SQL.
"""

from __future__ import annotations

# Transitional: arena.web.app, arena.web.export, arena.web.live and arena.bench.fuzz (being
# re-layered by others) still import the store from here. It is ``arena.store.Store``
# itself (no subclass any more); import it from ``arena.store``, and drop this once they do.
from arena.store import Store

__all__ = ["Store"]
