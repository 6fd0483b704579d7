"""Results: ratings (Bradley–Terry and Elo), think-time histograms, the summaries a saved
match adds, leaderboards in every format, and stored matches shown to people.

:class:`Store` is the arena's database as everything above this room opens it: the
store (``arena.store.Store``) with this room's Elo update and summaries handed to its
save path. The store sits below this room and cannot import them itself::

    >>> import tempfile, os
    >>> with Store(os.path.join(tempfile.mkdtemp(), "arena.db")) as store:
    ...     store.match_count()
    0
"""

from __future__ import annotations

import arena.store
from arena.results.summaries import SUMMARIZER


class Store(arena.store.Store):
    """``Store("arena.db")`` or ``Store("postgresql://...")``: see ``arena.store.Store``."""

    def __init__(self, url_or_path: str) -> None:
        super().__init__(url_or_path, summarizer=SUMMARIZER)
