"""The crosstable: every pair of bots head to head, as cutechess and fastchess print one.

    >>> import tempfile, os
    >>> from arena.store import Store
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
leaderboard (:func:`pairings`). The formats are ``arena.results.render``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.results.leaderboard import rows_of
from arena.store import BoardSnapshot, Store

# The formats a crosstable comes in (arena.results.render has one renderer for each).
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
    """The crosstable of one variant's completed matches (or one tournament's):
    :func:`crosstable_of` the store's snapshot of that board."""
    return crosstable_of(store.board_snapshot(variant, tournament_id), order)


def crosstable_of(snapshot: BoardSnapshot, order: list[str] | None = None) -> Crosstable:
    """The crosstable of a board's completed matches.

    ``order`` is the bots' order when the caller has the leaderboard already (export
    does); otherwise it is the leaderboard's, from its maximum-likelihood fit alone (the
    bootstrap only widens intervals, it never reorders).
    """
    pairs = pairings(snapshot.outcomes)
    if order is None:
        order = [row.bot for row in rows_of(snapshot, samples=0)]
    met = {bot for pair in pairs for bot in pair}
    # Every bot that met another, in the board's order; any the order lacks go last by name.
    bots = [bot for bot in order if bot in met] + sorted(met.difference(order))
    tournament_id = snapshot.tournament.id if snapshot.tournament is not None else None
    return Crosstable(snapshot.variant, tournament_id, bots, pairs)


def pairings(outcomes: Iterable[tuple[Sequence[tuple[str, int]], int]]) -> dict[tuple[str, str], Pairing]:
    """Every pair of bots that met, both ways, from the outcome counts (a board snapshot's
    ``outcomes``: each distinct ``(bot, place)`` per seat, and how many completed matches ended so).

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


def totals(ct: Crosstable, bot: str) -> tuple[int, float]:
    """A bot's meetings and score over all its opponents."""
    mine = [p for (b, _), p in ct.pairs.items() if b == bot]
    games = sum(p.games for p in mine)
    return games, (sum(p.ahead + p.level / 2 for p in mine) / games if games else 0.0)
