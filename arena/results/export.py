"""An exported board: a variant's leaderboard and crosstable written as files.

``arena leaderboard --export DIR`` writes them (with replay pages beside them, see
``arena.web.export``), so that a board can be published as it is, read offline. Each
variant's files come from the one snapshot of its board (``Store.board_snapshot``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from arena.results.crosstable import crosstable_of
from arena.results.elo_history import lines_of
from arena.results.elo_plot import elo_svg
from arena.results.leaderboard import ReplayLink, board
from arena.results.render import render_board, render_crosstable
from arena.store import BoardSnapshot


def export(snapshots: Iterable[BoardSnapshot], directory: str | Path, min_games: int = 0,
           generated_at: datetime | None = None, replays: Sequence[ReplayLink] = ()) -> list[Path]:
    """Write ``<variant>.md``, ``.html``, ``.json`` and ``.csv`` into ``directory`` for every
    board of ``snapshots`` (``Store.board_snapshot``, read with an ``elo_limit``) that has
    completed matches, each with its metadata, and the variant's crosstable beside them as
    ``<variant>-crosstable.md``, ``.html`` and ``.json``; return the paths written.
    Nothing is created when there is nothing to write. The HTML board has the Elo plot
    (``arena.results.elo_plot``); the Markdown and HTML boards list ``replays`` of their
    variant (the replay pages written beside them, see ``arena.web.export``).
    """
    target = Path(directory)
    written = []
    for snapshot in snapshots:
        variant = snapshot.variant
        result = board(snapshot, min_games=min_games, generated_at=generated_at)
        if not result.rows:
            continue
        target.mkdir(parents=True, exist_ok=True)
        order = [row.bot for row in result.rows]
        plot = elo_svg(lines_of(snapshot, order=order))
        shown = [r for r in replays if r.variant == variant]
        for fmt, suffix in (("md", "md"), ("html", "html"), ("json", "json"), ("csv", "csv")):
            path = target / f"{variant}.{suffix}"
            text = render_board(result, fmt, elo_plot=plot, replays=shown)
            assert isinstance(text, str)
            path.write_text(text + ("\n" if not text.endswith("\n") else ""), encoding="utf-8")
            written.append(path)
        # Over every bot of the board's matches, min_games or not, in the board's order.
        table = crosstable_of(snapshot, order=order)
        for fmt in ("md", "html", "json"):
            path = target / f"{variant}-crosstable.{fmt}"
            text = render_crosstable(table, fmt)
            assert isinstance(text, str)
            path.write_text(text + "\n", encoding="utf-8")
            written.append(path)
    return written
