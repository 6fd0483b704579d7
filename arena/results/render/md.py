"""Markdown: boards (with their metadata and replay links) and crosstables as Markdown tables."""

from __future__ import annotations

from arena.results.crosstable import Crosstable, title_of
from arena.results.leaderboard import BoardMetadata, board_notes, crash_lines, crashed
from arena.results.render.common import CROSSTABLE_NOTE, THINK_NOTE, BoardView, cells, grid, headers, metadata_lines


def board(view: BoardView) -> str:
    """The board as a Markdown table: with metadata, a list under a heading first; then the
    notes, the crash lines, and a "Replays" section linking ``view.replays``."""
    rows, variant, metadata = view.rows, view.variant, view.metadata
    shows_crashes = crashed(rows)
    names = headers(variant, shows_crashes)
    lines = _header(view.title, metadata) if metadata is not None else []
    lines += ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells(r, variant, shows_crashes)) + " |"
              for r in rows]
    notes = board_notes(rows)
    if notes:
        lines += [""] + [f"**Note:** {md_text(note)}" for note in notes]
    if shows_crashes:
        lines += [""] + [f"- {md_text(line)}" for line in crash_lines(rows)]
    if metadata is not None:
        lines += ["", THINK_NOTE]
    if view.replays:
        lines += ["", "## Replays", ""] + [
            f"- [{md_text(r.match_id)}]({r.href}): {r.finished_at:%Y-%m-%d %H:%M} UTC, {md_text(r.players())}"
            for r in view.replays]
    return "\n".join(lines)


def crosstable(ct: Crosstable) -> str:
    """The crosstable as a Markdown table under its title, the note on reading it below."""
    names, rows = grid(ct)
    lines = [f"# {title_of(ct)}", "", "| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines + ["", CROSSTABLE_NOTE])


def _header(title: str, metadata: BoardMetadata) -> list[str]:
    lines = [f"# {title}", ""]
    for label, text in metadata_lines(metadata):
        if isinstance(text, list):
            lines.append(f"- **{label}:**")
            lines += [f"  - {item}" for item in text]
        else:
            lines.append(f"- **{label}:** {text}")
    return lines + [""]


def md_text(text: str) -> str:
    """``text`` that Markdown shows as written: its link and emphasis characters escaped.

    >>> md_text("a_b [c]")
    'a\\\\_b \\\\[c\\\\]'
    """
    return "".join("\\" + c if c in "\\`*_[]()<>#|" else c for c in text)
