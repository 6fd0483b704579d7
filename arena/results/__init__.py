"""Results: what the store holds, read for people. The boards' data (``leaderboard``,
``crosstable``, ``elo_history``, and ``browse``: stored tournaments and matches), a stored
A/B test's result (``sprt``), the Elo plot (``elo_plot``), and the boards in every output
format: one renderer per format in ``render`` (``table``, ``md``, ``csv``, ``json``,
``html``), found by its name; ``export`` writes a variant's boards as files.

The numbers come from the statistics room below the store (``arena.stats``: ratings,
Elo, think times, the SPRT), the rows from the store's methods: this room runs no SQL.
A board, its crosstable and its Elo plot are computed from one snapshot the store reads
in one transaction (``arena.store.BoardSnapshot``).
"""

from __future__ import annotations
