"""Each bot's online Elo over its games: the lines of the leaderboard's Elo plot.

The store keeps every Elo change (``rating_history``: match, bot, variant, Elo before
and after, and ``games``, the bot's rated matches in the variant so far), so nothing is
recomputed here: a line is read back from those rows. Point ``(0, 1500)`` is the bot
before its first game and point ``(k, elo)`` its Elo after its k-th game on the board.
With a tournament the board is that tournament's games only: its rows of the history
(the Elo they show is the arena's online Elo at that moment, the same number the
tournament's board reports as each bot's latest), numbered 1, 2, ... per bot, and the
line starts at the Elo the bot brought into its first game there.

A line keeps at most ``limit`` points (:func:`downsample`): a bot of 100,000 games
would otherwise put 100,000 points in the page. Over the whole variant the thinning is
done by the database (every ``stride``-th game of each bot, where ``stride`` follows
from ``elo_ratings.games``), so the page never reads the 400,000 rows of a 100,000-match
arena; a tournament's rows are read whole and thinned here, which also keeps each
line's lowest and highest point.

The store room is left as it is (others own it); like ``arena.web.bots`` this module
reads the two tables itself, in one transaction, in SQL that SQLite and PostgreSQL share.

    >>> import tempfile, os
    >>> from arena.results import Store
    >>> from arena.records import MatchRecord
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "arena.db"))
    >>> for i in range(3):
    ...     store.save_match(MatchRecord(
    ...         match_id=f"m{i}", variant="classic", config={}, seed=i, bots=["ann", "bob"],
    ...         bot_versions=["1", "1"], totals=[30, 10], places=[1, 2], forfeited=[False, False],
    ...         result={}, actions=[], latencies_ms=[]))
    True
    True
    True
    >>> [(line.bot, [(x, round(y)) for x, y in line.points]) for line in elo_history(store, "classic")]
    [('ann', [(0, 1500), (1, 1516), (2, 1531), (3, 1544)]), ('bob', [(0, 1500), (1, 1484), (2, 1469), (3, 1456)])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from arena.store import Store
from arena.store.schema import BotRow, EloRow, MatchRow, RatingHistoryRow

LIMIT = 300     # points per line: a 720-pixel-wide plot cannot show more

Point = tuple[int, float]       # (the bot's game number on the board, Elo after it)


@dataclass(frozen=True)
class EloLine:
    """One bot's Elo over its games on a board, at most ``limit`` of them as points."""

    bot: str
    games: int                  # the bot's rated games on the board (the last point's x)
    points: list[Point]         # x ascending; the first is the Elo before game 1, x = 0


def downsample(points: Sequence[Point], limit: int = LIMIT) -> list[Point]:
    """At most ``limit`` of ``points`` (at least 4 are kept, ``limit`` or not): the first,
    the last, the lowest and the highest Elo, and the rest evenly spaced along the list,
    in their order.

    >>> line = [(x, float(x % 7)) for x in range(1000)]
    >>> kept = downsample(line, 10)
    >>> len(kept), kept[0], kept[-1], max(y for _, y in kept), min(y for _, y in kept)
    (10, (0, 0.0), (999, 5.0), 6.0, 0.0)
    >>> downsample(line[:3], 10) == line[:3]
    True
    """
    n = len(points)
    if n <= limit:
        return list(points)
    ys = [y for _, y in points]
    keep = {0, n - 1, ys.index(min(ys)), ys.index(max(ys))}
    spread = max(limit - len(keep), 2)
    # Evenly spaced indexes from first to last; set union with the extremes, so a pick
    # that falls on one of them does not push the count over the limit.
    keep.update(round(i * (n - 1) / (spread + 1)) for i in range(1, spread + 1))
    return [points[i] for i in sorted(keep)]


def elo_history(store: Store, variant: str, tournament_id: str | None = None,
                order: Sequence[str] = (), limit: int = LIMIT) -> list[EloLine]:
    """Each bot's Elo line on the board of ``variant`` (only ``tournament_id``'s games if
    given), ``order``'s bots first in that order (the board's), any other by name.
    Only rated games count (completed, between two different bots), as on the board."""
    with store.engine.connect() as connection:     # one transaction: one snapshot of both tables
        if tournament_id is None:
            lines = _variant_lines(connection, variant, limit)
        else:
            lines = _tournament_lines(connection, variant, tournament_id, limit)
    rank = {bot: i for i, bot in enumerate(order)}
    return sorted(lines, key=lambda line: (rank.get(line.bot, len(rank)), line.bot))


_H = RatingHistoryRow.__tablename__
_E = EloRow.__tablename__
_B = BotRow.__tablename__
_M = MatchRow.__tablename__


def _variant_lines(connection: sa.Connection, variant: str, limit: int) -> list[EloLine]:
    latest = connection.execute(sa.text(
        f"SELECT e.bot_id, b.name, e.elo, e.games FROM {_E} e JOIN {_B} b ON b.id = e.bot_id "
        "WHERE e.variant = :variant AND e.games > 0"), {"variant": variant}).all()
    if not latest:
        return []
    # Every stride-th game of each bot, and its first (whose elo_before is point 0); its
    # last comes from elo_ratings. The stride is a CASE over the bots rather than a join
    # with elo_ratings: 64 ms instead of 96 ms over 400,000 rows (a join looks a row up
    # per history row). Two points are left for the first and last, two for extremes.
    params: dict[str, Any] = {"variant": variant}
    cases = []
    for i, (bot_id, _, _, games) in enumerate(latest):
        params[f"b{i}"], params[f"s{i}"] = bot_id, max(1, -(-games // max(limit - 4, 1)))
        cases.append(f"WHEN :b{i} THEN :s{i}")
    rows = connection.execute(sa.text(
        f"SELECT bot_id, games, elo_before, elo_after FROM {_H} WHERE variant = :variant "
        f"AND (games = 1 OR games % (CASE bot_id {' '.join(cases)} ELSE 1 END) = 0)"), params).all()
    by_bot: dict[int, list[tuple[int, float, float]]] = {}
    for bot_id, games, before, after in rows:
        by_bot.setdefault(bot_id, []).append((int(games), float(before), float(after)))
    lines = []
    for bot_id, name, elo, games in latest:
        picked = sorted(by_bot.get(bot_id, []))
        points: list[Point] = [(0, picked[0][1])] if picked and picked[0][0] == 1 else []
        points += [(g, after) for g, _, after in picked if g < games]
        points.append((int(games), float(elo)))
        lines.append(EloLine(name, int(games), downsample(points, limit)))
    return lines


def _tournament_lines(connection: sa.Connection, variant: str, tournament_id: str, limit: int) -> list[EloLine]:
    rows = connection.execute(sa.text(
        f"SELECT b.name, h.elo_before, h.elo_after FROM {_H} h JOIN {_B} b ON b.id = h.bot_id "
        f"WHERE h.variant = :variant AND h.match_pk IN (SELECT id FROM {_M} WHERE tournament_id = :tournament) "
        "ORDER BY h.id"), {"variant": variant, "tournament": tournament_id}).all()
    points: dict[str, list[Point]] = {}
    for name, before, after in rows:
        line = points.setdefault(name, [(0, float(before))])
        line.append((len(line), float(after)))
    return [EloLine(name, len(line) - 1, downsample(line, limit)) for name, line in points.items()]


def to_json(variant: str, tournament_id: str | None, lines: Sequence[EloLine]) -> dict[str, Any]:
    """What ``/api/elo/{variant}`` answers: ``{"variant", "tournament_id", "bots":
    [{"bot", "games", "points": [[game, elo], ...]}, ...]}`` (bots in the board's order)."""
    return {"variant": variant, "tournament_id": tournament_id,
            "bots": [{"bot": line.bot, "games": line.games, "points": [[x, y] for x, y in line.points]}
                     for line in lines]}


def from_json(data: dict[str, Any]) -> list[EloLine]:
    """The lines of a :func:`to_json` answer (what the page draws from)."""
    return [EloLine(bot["bot"], int(bot["games"]), [(int(x), float(y)) for x, y in bot["points"]])
            for bot in data["bots"]]
