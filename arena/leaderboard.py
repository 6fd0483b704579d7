"""Leaderboards: one row per bot, sorted by Bradley–Terry rating, in five output formats.

    >>> import tempfile, os
    >>> from arena.store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "arena.db"))
    >>> leaderboard(store, "classic")
    []

A row carries the rating (1500 + Bradley–Terry rating relative to the mean, see
``docs/ratings.md``), its 95% interval as ± half-width, the latest online Elo, and
per-bot averages over the completed matches the board covers.
"""

from __future__ import annotations

import csv
import html
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.ratings import DEFAULT_BOOTSTRAP_SAMPLES, START_ELO, pairwise_from_tables, rate
from arena.store import Store

FORMATS = ("table", "md", "csv", "json", "html")


@dataclass
class LeaderboardRow:
    rank: int
    bot: str
    rating: float                    # 1500 + Bradley–Terry rating relative to the mean
    interval: float                  # ± half-width of the 95% bootstrap interval
    elo: float | None                # online Elo now (for one tournament: after its last match there)
    games: int
    avg_score: float
    avg_place: float
    exact_bid_rate: float | None     # classic: share of rounds bid exactly; None for extreme
    faults: int
    forfeits: int


def leaderboard(
    store: Store,
    variant: str,
    tournament_id: str | None = None,
    min_games: int = 0,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> list[LeaderboardRow]:
    """The leaderboard of one variant over its completed matches (or one tournament's).

    Every bot takes part in the fit; ``min_games`` only hides bots with fewer matches.
    The bootstrap is seeded (``seed``), so the same data always gives the same board.
    """
    inputs = store.leaderboard_inputs(variant, tournament_id)
    index = {name: i for i, name in enumerate(inputs.bots)}
    games = pairwise_from_tables(inputs.tables, n_bots=len(inputs.bots))
    fit = rate(games, samples=samples, seed=seed)
    elo = inputs.elo

    rows = []
    for agg in inputs.aggregates:
        if agg.games < min_games:
            continue
        i = index[agg.bot]
        rows.append(LeaderboardRow(
            rank=0, bot=agg.bot, rating=START_ELO + float(fit.ratings[i]), interval=float(fit.half_widths[i]),
            elo=elo[agg.bot][0] if agg.bot in elo else None, games=agg.games,
            avg_score=agg.score_sum / agg.seats, avg_place=agg.place_sum / agg.seats,
            exact_bid_rate=(agg.exact_bids / agg.rounds) if variant == "classic" and agg.rounds else None,
            faults=agg.faults, forfeits=agg.forfeits,
        ))
    rows.sort(key=lambda r: (-r.rating, -r.games, r.bot))
    for rank, row in enumerate(rows, start=1):
        row.rank = rank
    return rows


# --------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------

_HEADERS = ["#", "Bot", "Rating", "±", "Elo", "Games", "Avg score", "Avg place", "Exact bids", "Faults"]


def _cells(row: LeaderboardRow, variant: str) -> list[str]:
    """One row as display strings (md, html, table)."""
    cells = [
        str(row.rank), row.bot, f"{row.rating:.0f}", f"±{row.interval:.0f}",
        "–" if row.elo is None else f"{row.elo:.0f}", str(row.games), f"{row.avg_score:.1f}",
        f"{row.avg_place:.2f}",
    ]
    if variant == "classic":
        cells.append("–" if row.exact_bid_rate is None else f"{100 * row.exact_bid_rate:.1f}%")
    cells.append(str(row.faults))
    return cells


def _headers(variant: str) -> list[str]:
    return _HEADERS if variant == "classic" else [h for h in _HEADERS if h != "Exact bids"]


def title_of(variant: str, tournament_id: str | None = None) -> str:
    """A board's title: ``Wizard classic leaderboard``, with the tournament when it is one's."""
    return f"Wizard {variant} leaderboard" + (f", tournament {tournament_id}" if tournament_id else "")


def _as_json(rows: list[LeaderboardRow], variant: str, title: str | None = None) -> dict[str, Any]:
    def clean(row: LeaderboardRow) -> dict[str, Any]:
        data = asdict(row)
        for key in ("rating", "interval", "elo", "avg_score", "avg_place", "exact_bid_rate"):
            if data[key] is not None:
                data[key] = round(data[key], 4)
        return data

    return {"variant": variant, "title": title or title_of(variant), "rows": [clean(r) for r in rows]}


def render(
    rows: list[LeaderboardRow],
    fmt: str,
    variant: str,
    console: Console | None = None,
    title: str | None = None,
) -> str | Table:
    """Render a leaderboard: ``table`` gives a rich Table (printed to ``console`` if one
    is given); ``md``, ``csv``, ``json`` and ``html`` give text.

    >>> row = LeaderboardRow(1, "a<b", 1510.2, 12.3, 1504.0, 10, 55.5, 1.9, 0.25, 0, 0)
    >>> print(render([row], "md", "classic"))
    | # | Bot | Rating | ± | Elo | Games | Avg score | Avg place | Exact bids | Faults |
    |---|---|---|---|---|---|---|---|---|---|
    | 1 | a<b | 1510 | ±12 | 1504 | 10 | 55.5 | 1.90 | 25.0% | 0 |
    >>> "a&lt;b" in render([row], "html", "classic")
    True
    """
    title = title or title_of(variant)
    headers = _headers(variant)
    if fmt == "table":
        table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        cells = [_cells(row, variant) for row in rows]
        widths = [max([len(row_cells[i]) for row_cells in cells] + [len(h)]) for i, h in enumerate(headers)]
        # Names and numbers are never cut: on a terminal too narrow for one-line headers
        # ("Avg score"), they are folded onto two lines (rich would drop whole columns).
        fold = console is None or sum(widths) + 2 * len(widths) > console.width
        for i, header in enumerate(headers):
            widest = max([len(row_cells[i]) for row_cells in cells] + [max(map(len, header.split()))])
            table.add_column(header.replace(" ", "\n") if fold else header,
                             justify="left" if header == "Bot" else "right", min_width=min(widest, 30))
        for row_cells in cells:
            table.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in row_cells))
        if console is not None:
            console.print(table)
        return table
    if fmt == "md":
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(r, variant)) + " |" for r in rows]
        return "\n".join(lines)
    if fmt == "csv":
        out = io.StringIO()
        data = _as_json(rows, variant)["rows"]
        fields = list(LeaderboardRow.__dataclass_fields__)
        if variant != "classic":
            fields.remove("exact_bid_rate")
        writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(data)
        return out.getvalue()
    if fmt == "json":
        return json.dumps(_as_json(rows, variant, title), indent=2)
    if fmt == "html":
        head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
        body = "\n".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r, variant)) + "</tr>" for r in rows
        )
        return _HTML_PAGE.format(title=html.escape(title), head=head, body=body)
    raise ValueError(f"unknown leaderboard format {fmt!r}; choose one of {', '.join(FORMATS)}")


_HTML_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: 0.3em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }}
th:nth-child(2), td:nth-child(2) {{ text-align: left; }}
</style>
</head>
<body>
<h1>{title}</h1>
<table>
<thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody>
</table>
<p>Rating: Bradley&ndash;Terry maximum likelihood on the Elo scale, 1500 = the average bot;
&plusmn; is the 95% bootstrap interval. Elo: the online rating after the latest match.</p>
</body>
</html>
"""


def export(store: Store, directory: str | Path, variants: list[str] | None = None,
           tournament_id: str | None = None, min_games: int = 0) -> list[Path]:
    """Write ``<variant>.md``, ``.html`` and ``.json`` into ``directory`` for every variant
    (of ``variants``, default all) that has completed matches (in ``tournament_id``, if
    given); return the paths written. Nothing is created when there is nothing to write.
    """
    target = Path(directory)
    written = []
    for variant in variants or store.variants():
        rows = leaderboard(store, variant, tournament_id=tournament_id, min_games=min_games)
        if not rows:
            continue
        title = title_of(variant, tournament_id)
        target.mkdir(parents=True, exist_ok=True)
        for fmt, suffix in (("md", "md"), ("html", "html"), ("json", "json")):
            path = target / f"{variant}.{suffix}"
            text = render(rows, fmt, variant, title=title)
            assert isinstance(text, str)
            path.write_text(text + ("\n" if not text.endswith("\n") else ""), encoding="utf-8")
            written.append(path)
    return written
