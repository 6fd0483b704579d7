"""The end of a running tournament's progress line: the leader so far and the faults
(the line itself is the terminal's: arena.cli.tournament_run)."""

from __future__ import annotations

from arena.tournament.runner import RunSummary


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
