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
done by the database (a board snapshot read with ``elo_limit``, see
``Store.board_snapshot``: its ``elo_tracks`` hold every ``stride``-th game of each bot,
where ``stride`` follows from ``elo_ratings.games``), so the page never reads the
400,000 rows of a 100,000-match arena; a tournament's rows are read whole (its
``elo_steps``) and thinned here, which also keeps each line's lowest and highest point.

    >>> import tempfile, os
    >>> from arena.store import BoardSnapshot, BotEloStep, EloTrack, Store
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

from arena.store import BoardSnapshot, BotEloStep, EloTrack, Store

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
    given): :func:`lines_of` the store's snapshot of that board, at most ``limit`` points a line."""
    return lines_of(store.board_snapshot(variant, tournament_id, elo_limit=limit), order)


def lines_of(snapshot: BoardSnapshot, order: Sequence[str] = ()) -> list[EloLine]:
    """Each bot's Elo line on a board whose snapshot holds its Elo (read with an
    ``elo_limit``: at most that many points a line), ``order``'s bots first in that order
    (the board's), any other by name. Only rated games count (completed, between two
    different bots), as on the board."""
    limit = snapshot.elo_limit
    if limit is None:
        raise ValueError("the board's snapshot was read without its Elo (elo_limit)")
    if snapshot.tournament is None:
        lines = _variant_lines(snapshot.elo_tracks, limit)
    else:
        lines = _tournament_lines(snapshot.elo_steps, limit)
    rank = {bot: i for i, bot in enumerate(order)}
    return sorted(lines, key=lambda line: (rank.get(line.bot, len(rank)), line.bot))


def _variant_lines(tracks: Sequence[EloTrack], limit: int) -> list[EloLine]:
    lines = []
    for track in tracks:
        # The store read every stride-th game of the bot and its first (whose elo_before
        # is point 0); its last comes from its current Elo.
        steps = track.steps
        points: list[Point] = [(0, steps[0].elo_before)] if steps and steps[0].games == 1 else []
        points += [(step.games, step.elo_after) for step in steps if step.games < track.games]
        points.append((track.games, track.elo))
        lines.append(EloLine(track.bot, track.games, downsample(points, limit)))
    return lines


def _tournament_lines(steps: Sequence[BotEloStep], limit: int) -> list[EloLine]:
    points: dict[str, list[Point]] = {}
    for step in steps:
        line = points.setdefault(step.bot, [(0, step.elo_before)])
        line.append((len(line), step.elo_after))
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
