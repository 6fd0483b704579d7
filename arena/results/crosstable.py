"""The crosstable: every pair of bots head to head, as cutechess and fastchess print one.

    >>> import tempfile, os
    >>> from arena.results import Store
    >>> crosstable(Store(os.path.join(tempfile.mkdtemp(), "arena.db")), "classic").bots
    []

Wizard is played by 3 to 6 at a table, so a pair of bots "plays" whenever both sit at
one table: each such meeting counts one game for the pair, which the bot finished
ahead of the opponent (a better, smaller place), behind it, or level (the same place:
a tie). A forfeited seat is placed last by the referee, and the stored places are
used as they are. ``avg_place_diff`` is the mean of (opponent's place - bot's place):
positive when the bot usually finishes ahead. Only completed matches count, as on the
leaderboard, and a bot in two seats of one match does not play itself.

The bots are listed in leaderboard order (best first), so the table reads like the
board beside it. The counts come from the outcome counts the store keeps for the
leaderboard (:func:`pairings`).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rich import box
from rich.table import Table

from arena.store import Store

FORMATS = ("table", "md", "json", "html")


@dataclass
class Pairing:
    """One bot against one opponent, from ``bot``'s point of view."""

    bot: str
    opponent: str
    games: int                 # meetings at one table (completed matches)
    ahead: int                 # bot finished in a better place than the opponent
    behind: int
    level: int                 # the same place (a tie)
    avg_place_diff: float      # mean of (opponent's place - bot's place); > 0: bot usually ahead

    @property
    def score(self) -> float:
        """The share of meetings won, a level one counting half (chess's score).

        >>> Pairing("a", "b", 4, 2, 1, 1, 0.5).score
        0.625
        """
        return (self.ahead + self.level / 2) / self.games if self.games else 0.0


@dataclass
class Crosstable:
    variant: str
    tournament_id: str | None
    bots: list[str]                                   # leaderboard order, best first
    pairs: dict[tuple[str, str], Pairing] = field(default_factory=dict)   # (bot, opponent), both ways


def crosstable(store: Store, variant: str, tournament_id: str | None = None,
               order: list[str] | None = None) -> Crosstable:
    """The crosstable of one variant's completed matches (or one tournament's).

    ``order`` is the bots' order when the caller has the leaderboard already (export
    does); otherwise it is the leaderboard's, from its maximum-likelihood fit alone (the
    bootstrap only widens intervals, it never reorders).
    """
    pairs = pairings(store.outcomes(variant, tournament_id))
    if order is None:
        # Imported here: the leaderboard's export imports this module.
        from arena.results.leaderboard import leaderboard

        order = [row.bot for row in leaderboard(store, variant, tournament_id, samples=0)]
    met = {bot for pair in pairs for bot in pair}
    # Every bot that met another, in the board's order; any the order lacks go last by name.
    bots = [bot for bot in order if bot in met] + sorted(met.difference(order))
    return Crosstable(variant, tournament_id, bots, pairs)


def pairings(outcomes: Iterable[tuple[Sequence[tuple[str, int]], int]]) -> dict[tuple[str, str], Pairing]:
    """Every pair of bots that met, both ways, from the outcome counts (``Store.outcomes``:
    each distinct ``(bot, place)`` per seat, and how many completed matches ended so).

    There are far fewer distinct outcomes than matches (100,000 matches of 12 bots end
    in about 14,000 ways), so this beats grouping every pair of seats of every match.

    >>> table = pairings([([("a", 1), ("b", 2), ("c", 2)], 3), ([("a", 2), ("b", 1), ("b", 3)], 1)])
    >>> table["a", "b"]
    Pairing(bot='a', opponent='b', games=5, ahead=4, behind=1, level=0, avg_place_diff=0.6)
    >>> table["b", "c"].level, ("b", "b") in table
    (3, False)
    """
    sums: dict[tuple[str, str], list[int]] = {}
    for seats, count in outcomes:
        for i, (bot, place) in enumerate(seats):
            for opponent, other in seats[i + 1:]:
                if bot == opponent:       # a bot in two seats does not play itself
                    continue
                for key, mine, theirs in (((bot, opponent), place, other), ((opponent, bot), other, place)):
                    total = sums.setdefault(key, [0, 0, 0, 0])
                    total[0] += count
                    total[1] += count if mine < theirs else 0
                    total[2] += count if mine > theirs else 0
                    total[3] += count * (theirs - mine)
    return {(bot, opponent): Pairing(bot, opponent, games, ahead, behind, games - ahead - behind, diff / games)
            for (bot, opponent), (games, ahead, behind, diff) in sorted(sums.items())}


def title_of(ct: Crosstable) -> str:
    return f"Wizard {ct.variant} crosstable" + (f", tournament {ct.tournament_id}" if ct.tournament_id else "")


def _pair_json(pairing: Pairing) -> dict[str, Any]:
    data = asdict(pairing)
    data["avg_place_diff"] = round(pairing.avg_place_diff, 4)
    return data


def to_json(ct: Crosstable) -> dict[str, Any]:
    """The crosstable as JSON-ready data; pairs in table order (row bot, then column bot)."""
    return {"variant": ct.variant, "tournament_id": ct.tournament_id, "bots": list(ct.bots),
            "pairs": [_pair_json(ct.pairs[(a, b)]) for a in ct.bots for b in ct.bots if (a, b) in ct.pairs]}


def _totals(ct: Crosstable, bot: str) -> tuple[int, float]:
    """A bot's meetings and score over all its opponents."""
    mine = [p for (b, _), p in ct.pairs.items() if b == bot]
    games = sum(p.games for p in mine)
    return games, (sum(p.ahead + p.level / 2 for p in mine) / games if games else 0.0)


def _cell(pairing: Pairing | None) -> str:
    """``ahead-behind-level (avg place difference)``; ``·`` for a pair that never met.

    >>> _cell(Pairing("a", "b", 5, 3, 1, 1, 0.4))
    '3-1-1 (+0.40)'
    """
    if pairing is None:
        return "·"
    return f"{pairing.ahead}-{pairing.behind}-{pairing.level} ({pairing.avg_place_diff:+.2f})"


_NOTE = ("Each cell is the row bot against the column bot: times it finished ahead-behind-level "
         "(level: the same place) in the completed matches where both played, and in brackets the mean "
         "of (column bot's place - row bot's place). Meetings: the row bot's games summed over its opponents "
         "(a 4-player game is 3 meetings). Score: ahead plus half of level, over all meetings.")


def _grid(ct: Crosstable) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of display strings (table, md)."""
    headers = ["#", "Bot", "Meetings", "Score"] + [f"{i} {bot}" for i, bot in enumerate(ct.bots, start=1)]
    rows = []
    for i, bot in enumerate(ct.bots, start=1):
        games, score = _totals(ct, bot)
        rows.append([str(i), bot, str(games), f"{100 * score:.1f}%"]
                    + ["—" if bot == other else _cell(ct.pairs.get((bot, other))) for other in ct.bots])
    return headers, rows


def render(ct: Crosstable, fmt: str) -> str | Table:
    """``table`` gives a rich Table; ``md``, ``json`` and ``html`` (a standalone page) give text."""
    if fmt == "json":
        return json.dumps(to_json(ct), indent=2)
    if fmt == "html":
        from arena.results.leaderboard import html_page  # here: the leaderboard imports this module

        return html_page(title_of(ct), f"{html_table(ct)}\n<p>{html.escape(_NOTE)}</p>\n", _CROSSTABLE_CSS)
    headers, rows = _grid(ct)
    if fmt == "md":
        lines = [f"# {title_of(ct)}", "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines + ["", _NOTE])
    if fmt == "table":
        table = Table(title=title_of(ct), caption=_NOTE, box=box.SIMPLE_HEAD)
        for header in headers:
            table.add_column(header, justify="left" if header == "Bot" else "right")
        for row in rows:
            table.add_row(*row)
        return table
    raise ValueError(f"unknown crosstable format {fmt!r}; choose one of {', '.join(FORMATS)}")


def html_table(ct: Crosstable) -> str:
    """The crosstable as ``<table id="crosstable">``: rows ``<tr data-bot>``, pair cells
    ``<td data-opponent data-games data-ahead data-behind data-level data-avg-place-diff>``,
    for a page to embed (the web viewer) or :func:`render` to wrap."""
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in ["#", "Bot", "Meetings", "Score"]) + "".join(
        f'<th title="{esc(bot)}">{i} {esc(bot)}</th>' for i, bot in enumerate(ct.bots, start=1))
    body = []
    for i, bot in enumerate(ct.bots, start=1):
        games, score = _totals(ct, bot)
        cells = [f"<td>{i}</td>", f'<th scope="row">{esc(bot)}</th>', f"<td>{games}</td>",
                 f"<td>{100 * score:.1f}%</td>"]
        for other in ct.bots:
            pairing = ct.pairs.get((bot, other))
            if bot == other or pairing is None:
                cells.append(f'<td class="{"self" if bot == other else "none"}">{"—" if bot == other else "·"}</td>')
                continue
            cells.append(
                f'<td data-opponent="{esc(other)}" data-games="{pairing.games}" data-ahead="{pairing.ahead}" '
                f'data-behind="{pairing.behind}" data-level="{pairing.level}" '
                f'data-avg-place-diff="{pairing.avg_place_diff:.4f}" '
                f'title="{esc(bot)} vs {esc(other)}: {pairing.games} games">'
                f"{pairing.ahead}-{pairing.behind}-{pairing.level}<br><small>{pairing.avg_place_diff:+.2f}</small></td>")
        body.append(f'<tr data-bot="{esc(bot)}">' + "".join(cells) + "</tr>")
    return ('<table id="crosstable">\n<thead><tr>' + head + "</tr></thead>\n<tbody>\n" + "\n".join(body)
            + "\n</tbody>\n</table>")


_CROSSTABLE_CSS = """th, td { border: 1px solid #ddd; }
tbody th { text-align: left; }
td.self { background: #eee; text-align: center; }
td small { color: #666; }
"""
