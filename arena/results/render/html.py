"""HTML: boards and crosstables as standalone pages (no external request), and the
crosstable's ``<table>`` for a page to embed."""

from __future__ import annotations

from html import escape

from arena.results.crosstable import Crosstable, title_of, totals
from arena.results.leaderboard import BoardMetadata, board_notes, crash_lines, crashed
from arena.results.render.common import CROSSTABLE_NOTE, THINK_NOTE, BoardView, cells, headers, metadata_lines


def board(view: BoardView) -> str:
    """The board as a page: the metadata as a ``<dl>``, the table, its notes and crash
    lines, then the Elo plot (``view.elo_plot``) and the "Replays" list when given."""
    rows, variant = view.rows, view.variant
    shows_crashes = crashed(rows)
    head = "".join(f"<th>{escape(h)}</th>" for h in headers(variant, shows_crashes))
    body = "\n".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells(r, variant, shows_crashes)) + "</tr>"
        for r in rows
    )
    notes_html = "".join(f'<p class="note">{escape(note)}</p>\n' for note in board_notes(rows))
    notes_html += "".join(f'<p class="crash">{escape(line)}</p>\n' for line in crash_lines(rows))
    page_body = BOARD_BODY.format(head=head, body=body,
                                  metadata=_metadata(view.metadata) if view.metadata is not None else "",
                                  think_note=escape(THINK_NOTE), notes=notes_html)
    if view.elo_plot:
        page_body += f'<h2>Online Elo</h2>\n<div id="elo">{view.elo_plot}</div>\n'
    if view.replays:
        page_body += '<h2>Replays</h2>\n<ul id="replays">\n' + "".join(
            f'<li><a href="{escape(r.href)}">{escape(r.match_id)}</a> '
            f"{r.finished_at:%Y-%m-%d %H:%M} UTC: {escape(r.players())}</li>\n" for r in view.replays) + "</ul>\n"
    return page(view.title, page_body, BOARD_CSS)


def crosstable(ct: Crosstable) -> str:
    """The crosstable as a page: its ``<table>`` (:func:`crosstable_table`) and the note on reading it."""
    return page(title_of(ct), f"{crosstable_table(ct)}\n<p>{escape(CROSSTABLE_NOTE)}</p>\n", CROSSTABLE_CSS)


def page(title: str, body: str, css: str = "") -> str:
    """A standalone HTML page (no external request) around ``body``, with the boards'
    base style plus ``css``. ``title`` is escaped here; ``body`` is HTML already."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: 0.3em 0.8em; text-align: right; }}
{css}</style>
</head>
<body>
<h1>{escape(title)}</h1>
{body}
</body>
</html>
"""


def _metadata(metadata: BoardMetadata) -> str:
    items = []
    for label, text in metadata_lines(metadata):
        if isinstance(text, list):
            text_html = "<ul>" + "".join(f"<li>{escape(t)}</li>" for t in text) + "</ul>"
        else:
            text_html = escape(text)
        items.append(f"<dt>{escape(label)}</dt><dd>{text_html}</dd>")
    return '<dl class="metadata">\n' + "\n".join(items) + "\n</dl>\n"


def crosstable_table(ct: Crosstable) -> str:
    """The crosstable as ``<table id="crosstable">``: rows ``<tr data-bot>``, pair cells
    ``<td data-opponent data-games data-ahead data-behind data-level data-avg-place-diff>``,
    for a page to embed (the web viewer) or :func:`crosstable` to wrap."""
    head = "".join(f"<th>{escape(h)}</th>" for h in ["#", "Bot", "Meetings", "Score"]) + "".join(
        f'<th title="{escape(bot)}">{i} {escape(bot)}</th>' for i, bot in enumerate(ct.bots, start=1))
    body = []
    for i, bot in enumerate(ct.bots, start=1):
        games, score = totals(ct, bot)
        cells = [f"<td>{i}</td>", f'<th scope="row">{escape(bot)}</th>', f"<td>{games}</td>",
                 f"<td>{100 * score:.1f}%</td>"]
        for other in ct.bots:
            pairing = ct.pairs.get((bot, other))
            if bot == other or pairing is None:
                cells.append(f'<td class="{"self" if bot == other else "none"}">{"—" if bot == other else "·"}</td>')
                continue
            cells.append(
                f'<td data-opponent="{escape(other)}" data-games="{pairing.games}" data-ahead="{pairing.ahead}" '
                f'data-behind="{pairing.behind}" data-level="{pairing.level}" '
                f'data-avg-place-diff="{pairing.avg_place_diff:.4f}" '
                f'title="{escape(bot)} vs {escape(other)}: {pairing.games} games">'
                f"{pairing.ahead}-{pairing.behind}-{pairing.level}<br><small>{pairing.avg_place_diff:+.2f}</small></td>")
        body.append(f'<tr data-bot="{escape(bot)}">' + "".join(cells) + "</tr>")
    return ('<table id="crosstable">\n<thead><tr>' + head + "</tr></thead>\n<tbody>\n" + "\n".join(body)
            + "\n</tbody>\n</table>")


BOARD_BODY = """{metadata}<table>
<thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody>
</table>
{notes}<p>Rating: Bradley&ndash;Terry maximum likelihood on the Elo scale, 1500 = the average bot;
&plusmn; is the 95% bootstrap interval. Elo: the online rating after the latest match.
{think_note}</p>
"""

BOARD_CSS = """th, td { border-bottom: 1px solid #ddd; }
th:nth-child(2), td:nth-child(2) { text-align: left; }
dl.metadata { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.metadata dt { font-weight: bold; }
dl.metadata dd { margin: 0; }
dl.metadata ul { margin: 0; padding-left: 1.2em; }
p.note { font-weight: bold; }
"""

CROSSTABLE_CSS = """th, td { border: 1px solid #ddd; }
tbody th { text-align: left; }
td.self { background: #eee; text-align: center; }
td small { color: #666; }
"""
