"""What several formats share: the view a board is rendered from, the cells of the
terminal, Markdown and HTML tables, the metadata in words, and the crosstable's grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from arena.results.crosstable import Crosstable, Pairing, totals
from arena.results.leaderboard import (
    BOUND_SIGNS,
    UNKNOWN_INTERVAL,
    BoardMetadata,
    LeaderboardRow,
    ReplayLink,
    group_name,
)
from arena.stats.think_times import RESOLUTION
from engine import variant as variant_of


@dataclass(frozen=True)
class BoardView:
    """A board as a renderer gets it (see ``arena.results.render.render``): its rows, variant
    and title, and what some formats add. ``metadata``: the text formats carry it;
    ``console``: the terminal table folds its headers to fit and prints itself there;
    ``elo_plot``: the HTML board's SVG; ``replays``: the Markdown and HTML boards list them."""

    rows: Sequence[LeaderboardRow]
    variant: str
    title: str
    metadata: BoardMetadata | None = None
    console: Console | None = None
    elo_plot: str = ""
    replays: Sequence[ReplayLink] = ()


# --------------------------------------------------------------------------------------
# A board's table cells (table, md, html)
# --------------------------------------------------------------------------------------

LOWER_IS_BETTER = "Avg score (lower is better)"
HEADERS = ["#", "Bot", "Rating", "±", "Elo", "Games", "Avg score", "Avg place", "Exact bids",
           "Think p50 ms", "Think p99 ms", "Faults", "Timeouts"]
THINK_NOTE = ("Think p50/p99: median and 99th percentile of the bot's think time per decision it answered, "
              f"in ms (within ±{100 * RESOLUTION:.1f}%).")


def ms(value: float | None) -> str:
    """A think time for display: about three significant digits (the data has two).

    >>> [ms(v) for v in (None, 0.0102, 5.234, 12.34, 1234.5)]
    ['–', '0.01', '5.23', '12.3', '1234']
    """
    if value is None:
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def cells(row: LeaderboardRow, variant: str, crashes: bool = False) -> list[str]:
    """One row as display strings (md, html, table); ``crashes``: with the Crashes column."""
    cells = [
        str(row.rank), row.bot, rating_text(row), interval_text(row),
        "–" if row.elo is None else f"{row.elo:.0f}", str(row.games), f"{row.avg_score:.1f}",
        f"{row.avg_place:.2f}",
    ]
    if variant_of(variant).bids:
        cells.append("–" if row.exact_bid_rate is None else f"{100 * row.exact_bid_rate:.1f}%")
    cells += [ms(row.think_p50_ms), ms(row.think_p99_ms), str(row.faults), str(row.timeouts)]
    if crashes:
        cells.append(str(row.crashes))
    return cells


def interval_text(row: LeaderboardRow) -> str:
    """The ± cell: ``±23``; ``–`` for a rating that is only a bound (no interval says
    more than "at least"); :data:`UNKNOWN_INTERVAL` when the bot played too few deals.

    >>> rows = [LeaderboardRow(1, "a", 1500.0, 23.4, None, 9, 1.0, 1.0, None, 0, 0),
    ...         LeaderboardRow(2, "b", 1500.0, None, None, 1, 1.0, 1.0, None, 0, 0),
    ...         LeaderboardRow(3, "c", 1900.0, 50.0, None, 9, 1.0, 1.0, None, 0, 0, bound="lower")]
    >>> [interval_text(row) for row in rows]
    ['±23', '?', '–']
    """
    if row.bound:
        return "–"
    return UNKNOWN_INTERVAL if row.interval is None else f"±{row.interval:.0f}"


def rating_text(row: LeaderboardRow) -> str:
    """The rating as the board shows it: ``≥1834`` for a lower bound, ``1620 [B]`` in group B.

    >>> row = LeaderboardRow(1, "a", 1834.4, 50.0, None, 3, 1.0, 1.0, None, 0, 0, bound="lower", group=2)
    >>> rating_text(row)
    '≥1834 [B]'
    """
    text = BOUND_SIGNS.get(row.bound or "", "") + f"{row.rating:.0f}"
    return text + (f" [{group_name(row.group)}]" if row.group is not None else "")


def headers(variant: str, crashes: bool = False) -> list[str]:
    """The columns of a board of ``variant``: exact bids where players bid, and the
    score's order where the lowest total wins.

    >>> headers("extreme")[5:8]
    ['Games', 'Avg score (lower is better)', 'Avg place']
    """
    record = variant_of(variant)
    headers = [LOWER_IS_BETTER if h == "Avg score" and not record.higher_is_better else h
               for h in HEADERS if h != "Exact bids" or record.bids]
    return [*headers, "Crashes"] if crashes else headers


def options_text(options: dict[str, Any] | None) -> str:
    """Game options in words.

    >>> options_text({"players": 4, "rounds": None, "bidding": "open", "plus_minus_one": False})
    'players 4, rounds standard, bidding open, ±1 off'
    """
    if options is None:
        return "not known"
    names = {"plus_minus_one": "±1", "destroyer_penalty": "destroyer penalty"}

    def shown(key: str, value: Any) -> str:
        if isinstance(value, bool):
            return "on" if value else "off"
        return "standard" if value is None and key == "rounds" else str(value)

    return ", ".join(f"{names.get(k, k)} {shown(k, v)}" for k, v in options.items()) or "the defaults"


def metadata_lines(metadata: BoardMetadata) -> list[tuple[str, str | list[str]]]:
    """The metadata as (label, text or list of texts), shared by Markdown and HTML."""
    order = "lower" if metadata.score_order == "lower_is_better" else "higher"
    tournaments = ", ".join(metadata.tournaments) or "none"
    if metadata.games_outside_tournaments:
        tournaments += f" (and {metadata.games_outside_tournaments} games outside tournaments)"
    lines: list[tuple[str, str | list[str]]] = [
        ("Generated", f"{metadata.generated_at} by arena {metadata.arena_version}"),
        ("Variant", f"{metadata.variant} ({order} scores are better)"),
        ("Tournaments", tournaments),
    ]
    sets = metadata.option_sets
    if len(sets) == 1:
        lines.append(("Game options", options_text(sets[0].options)))
    elif sets:
        lines.append(("Game options (they differ between tournaments)", [
            f"{', '.join(s.tournaments)} ({s.games} games): {options_text(s.options)}" for s in sets]))
    lines.append(("Games", str(metadata.games)))
    if metadata.tests:
        lines.append(("A/B tests", [f"{t['tournament']}: {t['summary']}" for t in metadata.tests]))
    if metadata.min_games:
        lines.append(("Shown", f"bots with at least {metadata.min_games} games (all are rated)"))
    return lines


# --------------------------------------------------------------------------------------
# A crosstable's grid (table, md)
# --------------------------------------------------------------------------------------

CROSSTABLE_NOTE = ("Each cell is the row bot against the column bot: times it finished ahead-behind-level "
                   "(level: the same place) in the completed matches where both played, and in brackets the mean "
                   "of (column bot's place - row bot's place). Meetings: the row bot's games summed over its opponents "
                   "(a 4-player game is 3 meetings). Score: ahead plus half of level, over all meetings.")


def cell(pairing: Pairing | None) -> str:
    """``ahead-behind-level (avg place difference)``; ``·`` for a pair that never met.

    >>> cell(Pairing("a", "b", 5, 3, 1, 1, 0.4))
    '3-1-1 (+0.40)'
    """
    if pairing is None:
        return "·"
    return f"{pairing.ahead}-{pairing.behind}-{pairing.level} ({pairing.avg_place_diff:+.2f})"


def grid(ct: Crosstable) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of display strings (table, md)."""
    headers = ["#", "Bot", "Meetings", "Score"] + [f"{i} {bot}" for i, bot in enumerate(ct.bots, start=1)]
    rows = []
    for i, bot in enumerate(ct.bots, start=1):
        games, score = totals(ct, bot)
        rows.append([str(i), bot, str(games), f"{100 * score:.1f}%"]
                    + ["—" if bot == other else cell(ct.pairs.get((bot, other))) for other in ct.bots])
    return headers, rows
