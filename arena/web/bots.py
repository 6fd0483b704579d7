"""The data of a bot's page: what ``/api/bots/{name}`` answers and ``/bots/{name}`` draws.

Read from the store in one snapshot (``Store.bot_snapshot``): the bot's seats and faults,
its crashes, its per-bot sums on each variant's board, its newest matches and the
stored tournaments. The think-time percentiles are the board's (its histograms: the
same numbers the board shows). The time figures count completed matches, as the
percentiles do. The maximum think time is exact: the largest of its seats' stored
``think_max_ms`` (each seat's own slowest answer). The time-bank figures come from each
seat's stored ``bank_used_ms`` (the referee's accounting, see ``MatchRecord``) and count
only the matches where that is known (see :func:`time_bank_figures`). The bot's crashes
(its process ended while it should have been playing) are per variant: how many, and
the last one's reason and time; beside them its totals of crashes and faults (every
stored match's faults, as its faults by kind count them) and its newest crash, with the
tournament it crashed in (a crash is stored with its tournament, not with a match). The
classic exact bids by hand size (1-5, 6-10, 11-15, 16-20 cards) come from the stored
results of the bot's newest classic matches, at most
``arena.results.browse.HAND_SIZE_MATCHES`` of them (see ``hand_size_bids_of``).

Per variant the bot's place on that variant's board (:func:`board_place`): the rows of
the board (``arena.results.leaderboard.rows_of``) with the samples and seed the web's
board uses (the defaults), so its rating, interval or bound, rank, Elo and games are the
board's own; :class:`Boards` keeps them per (variant, completed matches stored), as the
bootstrap is the costly part, and the Elo plot's lines with them (one board snapshot
read when a board is computed). Its newest :data:`RECENT_MATCHES` matches, and its
online Elo over its games per variant: its line of the board's Elo plot
(``arena.results.elo_history``, the same points).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.records import BotCrash
from arena.results import elo_history
from arena.results import leaderboard as lb
from arena.results.browse import HAND_SIZE_MATCHES, hand_size_bids_of
from arena.store import MatchSummary, Store
from arena.web import disclosure
from engine import VARIANTS
from engine import variant as variant_of

# How many match links each fault kind lists (the count is always whole).
FAULT_LINKS = 20
# How many of the bot's newest matches its page lists.
RECENT_MATCHES = 10


@dataclass(frozen=True)
class Board:
    """One variant's board, as a bot's page takes its place from it: the rows and the
    lines of its Elo plot."""

    rows: list[lb.LeaderboardRow]
    elo_lines: list[elo_history.EloLine]


class Boards:
    """Each variant's :class:`Board` (``arena.results.leaderboard.rows_of`` with its
    default samples and seed, as the web's board page, and ``arena.results.elo_history``),
    kept per variant with the count of its completed matches stored when it was
    computed: a count that changed computes it again (online Elo too changes only when
    a completed match is stored). Safe to share between the app's threads."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[int, Board]] = {}
        self._lock = threading.Lock()

    def board(self, store: Store, variant: str, count: int) -> Board:
        """The variant's board, computed again (from a new snapshot) unless it was kept
        when ``count`` completed matches of the variant were stored."""
        with self._lock:
            found = self._kept.get(variant)
        if found is not None and found[0] == count:
            return found[1]
        snapshot = store.board_snapshot(variant, elo_limit=elo_history.LIMIT)
        board = Board(lb.rows_of(snapshot), elo_history.lines_of(snapshot))
        with self._lock:
            self._kept[variant] = (count, board)
        return board


class NoSuchBot(Exception):
    """No stored match has a seat for this bot, and no crash of it is stored."""


def bot_json(store: Store, name: str, boards: Boards | None = None) -> dict[str, Any]:
    """Versions, games per variant, its place on each variant's board (``boards``' rows,
    computed afresh without them), faults by kind, think times, exact bids (classic: also
    by hand size), places by seat, crashes per variant, its newest matches and its online
    Elo over its games per variant.

    Raises :class:`NoSuchBot` when the bot has neither a stored match nor a stored crash
    (a bot whose process never got to play has only crashes).
    """
    snapshot = store.bot_snapshot(name, recent=RECENT_MATCHES, classic_limit=HAND_SIZE_MATCHES)
    seats, faults, crashes = snapshot.games.seats, snapshot.games.faults, snapshot.crashes
    if not seats and not crashes:
        raise NoSuchBot(f"no stored match has a bot named {name!r}")

    versions: dict[str, int] = defaultdict(int)
    variants: dict[str, dict[str, Any]] = {}
    for s in seats:
        seat, version, place, rounds, exact, variant = s.seat, s.bot_version, s.place, s.rounds, s.exact_bids, s.variant
        status, players, max_ms, bank_used, bank = s.status, s.players, s.think_max_ms, s.bank_used_ms, s.time_bank_ms
        versions[version or ""] += 1
        v = variants.setdefault(variant, {"games": 0, "completed": 0, "rounds": 0, "exact_bids": 0,
                                          "max_ms": None, "banks": [], "seats": defaultdict(lambda: [0, 0])})
        v["games"] += 1
        if status == "completed":
            v["completed"] += 1
            v["seats"][(int(players), int(seat))][0] += 1
            v["seats"][(int(players), int(seat))][1] += int(place)
            if max_ms is not None and (v["max_ms"] is None or max_ms > v["max_ms"]):
                v["max_ms"] = float(max_ms)
            if bank_used is not None:
                v["banks"].append((float(bank_used), None if bank is None else float(bank)))
            # Completed matches only, as the board's exact-bid rate and the per-hand-size one.
            v["rounds"] += rounds or 0
            v["exact_bids"] += exact or 0

    by_kind: dict[str, list[str]] = defaultdict(list)
    for fault in faults:
        by_kind[fault.kind].append(fault.match_id)

    boards = boards or Boards()
    shown = {variant: boards.board(store, variant, snapshot.completed[variant])
             for variant in sorted(variants) if variant in VARIANTS}
    by_hand_size = hand_size_bids_of(name, snapshot.newest_classic, snapshot.classic_limit).to_json()
    per_variant = []
    for variant in sorted(variants):
        v = variants[variant]
        # The board's own per-bot aggregate (its think-time histogram), not the fit: cheap.
        agg = snapshot.aggregates[variant]
        bids = variant_of(variant).bids     # exact bids exist where players bid (classic)
        rows = shown[variant].rows if variant in shown else []
        per_variant.append({
            "variant": variant, "games": v["games"], "completed": v["completed"],
            "board": board_place(rows, name),
            "think_p50_ms": agg.think_times.percentile(50) if agg else None,
            "think_p99_ms": agg.think_times.percentile(99) if agg else None,
            "think_max_ms": v["max_ms"],
            **time_bank_figures(v["banks"]),
            "exact_bid_rate": (v["exact_bids"] / v["rounds"]) if bids and v["rounds"] else None,
            "rounds": v["rounds"] if bids else None,
            # Classic only (Extreme has no bids): bounded to the newest HAND_SIZE_MATCHES matches.
            "by_hand_size": by_hand_size if bids else None,
            "by_seat": [{"players": players, "seat": seat, "games": n, "avg_place": total / n}
                        for (players, seat), (n, total) in sorted(v["seats"].items())],
        })
    return {
        "bot": name,
        "games": len(seats),
        "versions": [{"version": version, "games": n} for version, n in sorted(versions.items())],
        "variants": per_variant,
        "faults": [{"kind": kind, "count": len(ids), "matches": list(dict.fromkeys(ids))[:FAULT_LINKS]}
                   for kind, ids in sorted(by_kind.items())],
        # Per variant (None: not known), in variant order; empty when the bot never crashed.
        "crashes": [{"variant": variant, "count": c.count, "last_reason": c.last_reason,
                     "last_at": c.last_at.isoformat()} for variant, c in crashes.items()],
        "crash_count": sum(c.count for c in crashes.values()),
        "fault_count": len(faults),
        "last_crash": last_crash_json(snapshot.last_crash),
        "recent": [recent_match(m, name) for m in snapshot.recent],
        # The stamp of its own files in each tournament the arena started it in: which code played.
        "code": [{"tournament": info.id, **stamps[name]} for info in snapshot.tournaments
                 if name in (stamps := disclosure.code_stamps(info))],
        "elo": elo_lines(name, shown),
    }


def last_crash_json(crash: BotCrash | None) -> dict[str, Any] | None:
    """The bot's newest crash as its page shows it: variant (None: not known), reason,
    exit code (None: killed by a signal, or it never exited), tournament (None: none),
    when, and whether the arena started it again; not which arena process saw it.

    >>> from datetime import UTC, datetime
    >>> shown = last_crash_json(BotCrash("evil", "exited with code 1", 1, "t-1", "classic", "h:1", True,
    ...                                  datetime(2025, 5, 1, 13, tzinfo=UTC)))
    >>> shown["reason"], shown["tournament_id"], shown["at"], "worker" in shown
    ('exited with code 1', 't-1', '2025-05-01T13:00:00+00:00', False)
    """
    if crash is None:
        return None
    return {"variant": crash.variant, "reason": crash.reason, "exit_code": crash.exit_code,
            "tournament_id": crash.tournament_id, "at": crash.at.isoformat(), "restarted": crash.restarted}


def board_place(rows: Sequence[lb.LeaderboardRow], name: str) -> dict[str, Any] | None:
    """The bot's row of a board as its page shows it: rank of how many, rating (to four
    decimals, as the board's JSON), interval, bound, group, Elo and games; None when the
    board has no row for it (no completed match of the variant).

    >>> rows = [lb.LeaderboardRow(1, "ann", 1600.0, 9.0, 1520.0, 3, 1.0, 1.0, None, 0, 0),
    ...         lb.LeaderboardRow(2, "bob", 1400.0, None, 1480.0, 3, 1.0, 1.0, None, 0, 0, bound="upper")]
    >>> board_place(rows, "bob")
    {'rank': 2, 'of': 2, 'rating': 1400.0, 'interval': None, 'bound': 'upper', 'group': None, 'elo': 1480.0, 'games': 3}
    >>> board_place(rows, "cy") is None
    True
    """
    row = next((r for r in rows if r.bot == name), None)
    if row is None:
        return None
    shown = lb.row_json(row)
    return {"rank": row.rank, "of": len(rows), **{key: shown[key] for key in
                                                   ("rating", "interval", "bound", "group", "elo", "games")}}


def recent_match(match: MatchSummary, name: str) -> dict[str, Any]:
    """One of the bot's matches as the index lists it, with the bot's seats and its place in each."""
    seats = [i for i, bot in enumerate(match.bots) if bot == name]
    return {"match_id": match.match_id, "tournament_id": match.tournament_id, "game_index": match.game_index,
            "variant": match.variant, "status": match.status, "finished_at": match.finished_at.isoformat(),
            "bots": match.bots, "totals": match.totals, "places": match.places, "seats": seats,
            "bot_places": [match.places[i] for i in seats if i < len(match.places)]}


def elo_lines(name: str, boards: dict[str, Board]) -> list[dict[str, Any]]:
    """The bot's line of each variant's Elo plot (the board's points: at most
    ``arena.results.elo_history.LIMIT``), as ``{"variant", "games", "points": [[game, elo],
    ...]}``; a variant where it has no rated game is left out."""
    found = []
    for variant, board in boards.items():
        line = next((line for line in board.elo_lines if line.bot == name), None)
        if line is not None and line.points:
            found.append({"variant": variant, "games": line.games, "points": [[x, y] for x, y in line.points]})
    return found


def time_bank_figures(banks: list[tuple[float, float | None]]) -> dict[str, Any]:
    """A bot's time-bank use from ``(bank used, bank it started with)`` in ms per seat it
    played whose use is known: how many (``time_bank_matches``, the denominator), the mean
    and the largest use in one match, and in how many it emptied the bank (used it all:
    the next late answer was a timeout). A match with a zero bank, or one whose starting
    bank is not known, never counts as emptying it. A bot in two seats of a match counts
    twice (it had two banks).

    >>> figures = time_bank_figures([(0.0, 10000.0), (2500.0, 10000.0), (10000.0, 10000.0), (0.0, 0.0)])
    >>> figures["time_bank_matches"], figures["time_bank_used_avg_ms"], figures["time_bank_used_max_ms"]
    (4, 3125.0, 10000.0)
    >>> figures["time_bank_emptied"]
    1
    >>> time_bank_figures([])["time_bank_used_avg_ms"] is None
    True
    """
    used = [u for u, _ in banks]
    return {
        "time_bank_matches": len(banks),
        "time_bank_used_avg_ms": sum(used) / len(used) if used else None,
        "time_bank_used_max_ms": max(used) if used else None,
        # The referee records an emptied bank as used == start exactly (see MatchRecord).
        "time_bank_emptied": sum(1 for u, start in banks if start is not None and start > 0 and u >= start),
    }
