"""The progress line of a running tournament: games done, time, ETA and the leader."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Column

from arena.tournament.runner import RunSummary


def progress_bar(console: Console) -> Progress:
    """Games done, time, ETA and the current leader on one line that fits the terminal:
    on a narrow one the bar is shorter and the leader text is cut (with "…") first."""
    bar = 10 if console.width < 110 else 20
    fixed = Column(no_wrap=True)
    # description (variant) + bar + "40/40 games 0:00:15 ETA 0:00:03" + the gaps between columns
    room = max(12, console.width - (7 + bar + 34 + 8))
    return Progress(
        TextColumn("[bold]{task.description}", table_column=fixed), BarColumn(bar_width=bar),
        MofNCompleteColumn(table_column=fixed), TextColumn("games", table_column=fixed),
        TimeElapsedColumn(table_column=fixed), TextColumn("ETA", table_column=fixed),
        TimeRemainingColumn(table_column=fixed),
        TextColumn("{task.fields[status]}", table_column=Column(no_wrap=True, overflow="ellipsis", max_width=room)),
        console=console, transient=False,
    )


def status_text(summary: RunSummary) -> str:
    """The leader so far and the faults, for the end of the progress line.

    >>> from arena.tournament.runner import Standing
    >>> status_text(RunSummary(2, 0, 1, 1.0, {"a": Standing(2, 3), "b": Standing(2, 5)}))
    'leader: a (1.50 avg place)  faults: 1'
    """
    leader = summary.leader()
    text = f"leader: {leader} ({summary.standings[leader].average_place:.2f} avg place)" if leader else ""
    if summary.faults:
        text += f"  faults: {summary.faults}"
    return text
