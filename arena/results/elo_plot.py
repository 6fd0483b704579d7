"""The Elo plot: each bot's online Elo over its games as one inline SVG, no script.

Drawn on the server, so the leaderboard page and the exported board (read from disk,
offline) show the same picture without a plotting library. It lives in this room, not
in ``arena.web``, because the exported board is written here (``arena.results.export``)
and a room cannot import the rooms above it.

One polyline per bot (x: the bot's game number on the board, y: Elo), colours from the
Okabe–Ito palette (told apart by most colour-blind readers too), dashed once the palette
is used up; a legend in the given (board) order; axis labels and a few round ticks.
Accessible: ``role="img"`` with an ``aria-label``, and a ``<title>`` per line (a tooltip)::

    >>> from arena.results.elo_history import EloLine
    >>> svg = elo_svg([EloLine("ann", 2, [(0, 1500.0), (1, 1516.0), (2, 1531.0)]),
    ...                EloLine("bob", 2, [(0, 1500.0), (1, 1484.0), (2, 1469.0)])])
    >>> svg.startswith('<svg class="elo-plot" role="img"')
    True
    >>> svg.count("<polyline"), "<title>ann: Elo 1500 to 1531 over 2 games</title>" in svg
    (2, True)
    >>> elo_svg([])
    ''
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from arena.results.elo_history import EloLine

# Okabe & Ito's colour-blind-safe palette, its yellow left out (unreadable on white).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
DASHES = ("", "6 3", "2 2", "8 3 2 3")

WIDTH, PLOT_HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 190, 12, 44      # RIGHT holds the legend
LEGEND_ROW = 18
NAME_CHARS = 22                                  # longer names are cut in the legend (the tooltip has them whole)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2 or 5 times a power of ten apart) covering
    ``low``..``high``.

    >>> nice_ticks(1432.5, 1610.2)
    [1400.0, 1450.0, 1500.0, 1550.0, 1600.0, 1650.0]
    >>> nice_ticks(0, 7)
    [0.0, 2.0, 4.0, 6.0, 8.0]
    """
    if high <= low:
        high = low + 1
    raw = (high - low) / max(count - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [round(k * step, 10) for k in range(first, last + 1)]


def _label(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 or value == int(value) else f"{value:.1f}"


def elo_svg(lines: Sequence[EloLine], label: str = "Online Elo over each bot's games") -> str:
    """The plot of ``lines`` (legend in their order) as one ``<svg>`` element; ``""`` when
    no line has a point. Every name is escaped: the text is valid HTML and valid XML."""
    lines = [line for line in lines if line.points]
    if not lines:
        return ""
    xs = [x for line in lines for x, _ in line.points]
    ys = [y for line in lines for _, y in line.points]
    # The x axis ends at the last game (round ticks up to there); Elo gets round ends.
    x1 = max(max(xs), 1)
    x_ticks = [x for x in nice_ticks(0, x1) if x <= x1]
    y_ticks = nice_ticks(min(ys), max(ys))
    x0, y0, y1 = 0, y_ticks[0], y_ticks[-1]
    plot_width = WIDTH - LEFT - RIGHT
    height = max(TOP + PLOT_HEIGHT + BOTTOM, TOP + LEGEND_ROW * len(lines) + 8)

    def px(x: float) -> float:
        return LEFT + (x - x0) / ((x1 - x0) or 1) * plot_width

    def py(y: float) -> float:
        return TOP + PLOT_HEIGHT - (y - y0) / ((y1 - y0) or 1) * PLOT_HEIGHT

    # No xmlns: inside HTML it is implied, and pages are checked to name no web address.
    parts = [f'<svg class="elo-plot" role="img" '
             f'aria-label="{escape(label)}: {len(lines)} bot{"s" if len(lines) != 1 else ""}" '
             f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
             'font-family="system-ui, sans-serif" font-size="12">',
             f'<rect x="{LEFT}" y="{TOP}" width="{plot_width}" height="{PLOT_HEIGHT}" fill="#fff" stroke="#bbb"/>']
    for y in y_ticks:
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_width}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#eee"/>'
                     f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end" fill="#333">{_label(y)}</text>')
    for x in x_ticks:
        parts.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{TOP + PLOT_HEIGHT}" y2="{TOP + PLOT_HEIGHT + 4}" '
                     f'stroke="#666"/><text x="{px(x):.1f}" y="{TOP + PLOT_HEIGHT + 17}" text-anchor="middle" '
                     f'fill="#333">{_label(x)}</text>')
    parts.append(f'<text x="{LEFT + plot_width / 2:.1f}" y="{TOP + PLOT_HEIGHT + 36}" '
                 'text-anchor="middle" fill="#333">game (the bot\'s rated games on this board)</text>'
                 f'<text transform="translate(14 {TOP + PLOT_HEIGHT / 2:.1f}) rotate(-90)" text-anchor="middle" '
                 'fill="#333">Elo</text>')
    for i, line in enumerate(lines):
        colour, dash = COLOURS[i % len(COLOURS)], DASHES[(i // len(COLOURS)) % len(DASHES)]
        style = f'stroke="{colour}" stroke-width="1.6" fill="none"' + (f' stroke-dasharray="{dash}"' if dash else "")
        coordinates = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points)
        name = escape(line.bot)
        first, last = line.points[0][1], line.points[-1][1]
        parts.append(f'<polyline points="{coordinates}" {style}><title>{name}: Elo {first:.0f} to {last:.0f} '
                     f'over {line.games} game{"s" if line.games != 1 else ""}</title></polyline>')
        row = TOP + 6 + i * LEGEND_ROW
        legend_x = LEFT + plot_width + 14
        shown = line.bot if len(line.bot) <= NAME_CHARS else line.bot[:NAME_CHARS - 1] + "…"
        parts.append(f'<g class="legend"><title>{name}</title><line x1="{legend_x}" x2="{legend_x + 22}" y1="{row}" '
                     f'y2="{row}" {style.replace("1.6", "2.5")}/><text x="{legend_x + 28}" y="{row + 4}" '
                     f'fill="#222">{escape(shown)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
