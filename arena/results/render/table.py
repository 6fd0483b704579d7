"""The terminal format: boards and crosstables as rich Tables (``--format table``)."""

from __future__ import annotations

from rich import box
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
