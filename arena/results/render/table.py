"""The terminal format: boards and crosstables as rich Tables (``--format table``), and
the tables of ``arena tournaments`` and ``arena matches`` fitted to the terminal's width
(:func:`fitted_table`)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console, JustifyMethod
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from arena.results.crosstable import Crosstable, title_of
from arena.results.leaderboard import board_notes, crash_lines, crashed
from arena.results.render.common import CROSSTABLE_NOTE, LOWER_IS_BETTER, THINK_NOTE, BoardView, cells, grid, headers

# Headers as the table shows them on a terminal too narrow for one-line headers; the
# think-time ones lose "Think" there (the caption says what they are).
FOLDED = {"Think p50 ms": "p50\nms", "Think p99 ms": "p99\nms", "Timeouts": "Time-\nouts",
          LOWER_IS_BETTER: "Avg\nscore\n(lower is\nbetter)"}


def board(view: BoardView) -> Table:
    """The board as a rich Table, its notes, think-time note and crash lines in the caption;
    printed to ``view.console`` when there is one."""
    rows, console = view.rows, view.console
    shows_crashes = crashed(rows)
    names = headers(view.variant, shows_crashes)
    row_cells = [cells(row, view.variant, shows_crashes) for row in rows]
    widths = [max([len(line[i]) for line in row_cells] + [len(h)]) for i, h in enumerate(names)]
    # Names and numbers are never cut: on a terminal too narrow for one-line headers
    # ("Avg score"), they are folded onto several lines and the columns drawn closer
    # together (rich would drop whole columns).
    fold = console is None or sum(widths) + 2 * len(widths) > console.width
    folded = [FOLDED.get(h, h.replace(" ", "\n")) if fold else h for h in names]
    caption = "\n".join([*board_notes(rows), THINK_NOTE, *crash_lines(rows)])
    table = Table(title=view.title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                  padding=0 if fold else (0, 1), show_edge=not fold)
    for i, header in enumerate(folded):
        widest = max([len(line[i]) for line in row_cells] + [max(map(len, header.split("\n")))])
        table.add_column(header, justify="left" if names[i] == "Bot" else "right", min_width=min(widest, 30))
    for line in row_cells:
        table.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in line))
    if console is not None:
        console.print(table)
    return table


def crosstable(ct: Crosstable) -> Table:
    """The crosstable as a rich Table, the note on reading it in the caption."""
    names, rows = grid(ct)
    table = Table(title=title_of(ct), caption=CROSSTABLE_NOTE, box=box.SIMPLE_HEAD)
    for header in names:
        table.add_column(header, justify="left" if header == "Bot" else "right")
    for row in rows:
        table.add_row(*row)
    return table


# --------------------------------------------------------------------------------------
# Lists that fit the terminal without cutting an id
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListColumn:
    """One column of a list table.

    ``rank`` says how much the column matters: 0 is always shown; in a terminal too
    narrow for every column the highest ranks are left out first. A ``whole`` column
    (an id, a seed) is never wrapped, folded or cut, in any terminal wider than the id
    itself: ids are meant to be copied.
    """

    header: str
    rank: int
    whole: bool = False
    justify: JustifyMethod = "left"


def fitted_table(columns: Sequence[ListColumn], rows: Sequence[Sequence[str]], width: int,
                 title: str | None = None, caption: str | None = None) -> tuple[Table, list[str]]:
    """A table of ``rows`` that fits ``width`` columns of terminal, and the headers it left out.

    Whole columns get ``no_wrap`` and their longest cell as ``min_width``, so rich never
    shrinks them; the other columns may wrap or fold. While even the narrowest layout is
    too wide (rich's measured minimum: every column at its longest word), the column of
    the highest rank is left out: rich itself would otherwise squeeze every column,
    ids included, once the wrapping ones cannot shrink further.

    >>> cols = [ListColumn("id", 0, whole=True), ListColumn("note", 1)]
    >>> table, left_out = fitted_table(cols, [["t-k3x9qa-00012", "a rather long note"]], width=20)
    >>> left_out
    ['note']
    """
    # Measured on a very wide console: on one of ``width`` rich would report a minimum of
    # at most ``width`` (every measurement is capped at the space available).
    measuring = Console(width=100_000, file=io.StringIO())
    shown = list(range(len(columns)))
    left_out: list[str] = []
    while True:
        table = Table(title=title, caption=caption)
        for i in shown:
            column = columns[i]
            longest = max((len(row[i]) for row in rows), default=0)
            table.add_column(column.header, justify=column.justify, no_wrap=column.whole,
                             min_width=longest if column.whole else None, overflow="fold")
        for row in rows:
            table.add_row(*(Text(row[i]) for i in shown))   # Text: bot names are never rich markup
        droppable = [i for i in shown if columns[i].rank > 0]
        if not droppable or Measurement.get(measuring, measuring.options, table).minimum <= width:
            return table, left_out
        dropped = max(droppable, key=lambda i: columns[i].rank)
        shown.remove(dropped)
        left_out.append(columns[dropped].header)
