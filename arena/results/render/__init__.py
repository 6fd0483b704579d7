"""The boards in every output format: one renderer per format, found by its name.

Each format is one module, holding everything of that format and nothing else:
``table`` (a rich Table for the terminal), ``md``, ``csv`` (boards only), ``json`` and
``html`` (standalone pages). A module has ``board(view)``, rendering a
:class:`~arena.results.render.common.BoardView`, and (all but csv) ``crosstable(ct)``;
what several of them share (the table cells, the metadata in words) is ``common``. The
lists of ``arena tournaments`` and ``arena matches`` (``arena.results.listings``) come out
of the same formats: ``table``'s ``fitted_table`` and ``csv``'s ``as_csv``.
:data:`BOARD_RENDERERS` and :data:`CROSSTABLE_RENDERERS` map a format's name to its
function, one entry per format the data modules offer::

    >>> from arena.results import crosstable, leaderboard
    >>> tuple(BOARD_RENDERERS) == leaderboard.FORMATS, tuple(CROSSTABLE_RENDERERS) == crosstable.FORMATS
    (True, True)

:func:`render` and :func:`render_board` render a board, :func:`render_crosstable` a crosstable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from arena.results import crosstable as ct_data
from arena.results import leaderboard
from arena.results.crosstable import Crosstable
from arena.results.leaderboard import Board, BoardMetadata, LeaderboardRow, ReplayLink, title_of
from arena.results.render import csv, html, json, md, table
from arena.results.render.common import BoardView

BoardRenderer = Callable[[BoardView], str | Table]
CrosstableRenderer = Callable[[Crosstable], str | Table]

BOARD_RENDERERS: dict[str, BoardRenderer] = {
    "table": table.board, "md": md.board, "csv": csv.board, "json": json.board, "html": html.board,
}
CROSSTABLE_RENDERERS: dict[str, CrosstableRenderer] = {
    "table": table.crosstable, "md": md.crosstable, "json": json.crosstable, "html": html.crosstable,
}


def render(
    rows: Sequence[LeaderboardRow],
    fmt: str,
    variant: str,
    console: Console | None = None,
    title: str | None = None,
    metadata: BoardMetadata | None = None,
    elo_plot: str = "",
    replays: Sequence[ReplayLink] = (),
) -> str | Table:
    """Render a leaderboard: ``table`` gives a rich Table (printed to ``console`` if one
    is given); ``md``, ``csv``, ``json`` and ``html`` give text.

    With ``metadata`` (see ``arena.results.leaderboard.board``) the text formats carry it:
    Markdown a list under a heading, HTML a ``<dl>``, JSON a ``"metadata"`` object beside
    ``"rows"``, and CSV ``meta_*`` columns after the row's own, repeated on every row.

    An exported board adds, in HTML, ``elo_plot`` (``arena.results.elo_plot``'s SVG) and,
    in Markdown and HTML, a "Replays" section linking each of ``replays``.

    When some bot of the board crashed, every format but JSON (whose rows always carry
    ``crashes``) gets a Crashes column, and the table (in its caption), Markdown and HTML
    the crash lines (``arena.results.leaderboard.crash_lines``); a board without crashes
    renders as if they did not exist.

    >>> row = LeaderboardRow(1, "a<b", 1510.2, 12.3, 1504.0, 10, 55.5, 1.9, 0.25, 0, 0, 0.52, 3.1, 0)
    >>> print(render([row], "md", "classic"))
    | # | Bot | Rating | ± | Elo | Games | Avg score | Avg place | Exact bids | Think p50 ms | Think p99 ms | Faults | Timeouts |
    |---|---|---|---|---|---|---|---|---|---|---|---|---|
    | 1 | a<b | 1510 | ±12 | 1504 | 10 | 55.5 | 1.90 | 25.0% | 0.52 | 3.10 | 0 | 0 |
    >>> "a&lt;b" in render([row], "html", "classic")
    True
    """  # noqa: E501 (the Markdown header above is one line)
    renderer = BOARD_RENDERERS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown leaderboard format {fmt!r}; choose one of {', '.join(leaderboard.FORMATS)}")
    return renderer(BoardView(rows, variant, title or title_of(variant), metadata, console, elo_plot, replays))


def render_board(result: Board, fmt: str, console: Console | None = None, elo_plot: str = "",
                 replays: Sequence[ReplayLink] = ()) -> str | Table:
    """:func:`render` of a board (``arena.results.leaderboard.board``), metadata included."""
    return render(result.rows, fmt, result.metadata.variant, console=console, title=result.title,
                  metadata=result.metadata, elo_plot=elo_plot, replays=replays)


def render_crosstable(ct: Crosstable, fmt: str) -> str | Table:
    """Render a crosstable: ``table`` gives a rich Table; ``md``, ``json`` and ``html`` (a
    standalone page) give text."""
    renderer = CROSSTABLE_RENDERERS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown crosstable format {fmt!r}; choose one of {', '.join(ct_data.FORMATS)}")
    return renderer(ct)
