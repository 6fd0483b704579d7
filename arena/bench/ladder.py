"""The ladder: a duplicate tournament of the learned and search bots against the sample
bots, and their targets.

:func:`bench_ladder` runs ``arena tournament`` (the same command, as a subprocess, so the
same machinery: referee, duplicate deals, ratings) with the learned and search bots added
to the sample bots, reads the leaderboard back with ``arena leaderboard --format json``,
and checks the targets:

* search, classic: exact bids in at least 60 % of its rounds, and a rating at least 150
  above ``heuristic`` with the two rating intervals not overlapping;
* search, extreme: a rating above ``heuristic``, intervals not overlapping;
* learned, classic: a rating at least 150 above ``heuristic``; extreme: above it.

In classic it also shows each bot's exact-bid rate per hand-size band (1-5, 6-10, 11-15
and 16-20 cards): the overall rate depends on how long the games were.

The database goes to a temporary directory unless ``db`` is given::

    python -m arena.bench.ladder classic --games 200 --budget-ms 100
    python -c "from arena.bench.ladder import bench_ladder; print(bench_ladder('extreme', games=24))"
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from arena.results.browse import HandSizeBids, hand_size_bids
from arena.stats.summaries import HAND_SIZE_BANDS
from arena.store import Store
from engine import VARIANTS
from engine import variant as variant_of

CLASSIC_EXACT_TARGET = 0.60
CLASSIC_MARGIN_TARGET = 150.0
LEARNED_MARGIN_TARGET = 150.0


@dataclass(frozen=True)
class LadderRow:
    """One bot's line of the leaderboard."""

    bot: str
    rating: float
    interval: float | None          # None: not known (fewer than 3 deals)
    games: int
    exact_bid_rate: float | None
    avg_place: float
    think_p50_ms: float | None
    think_p99_ms: float | None
    timeouts: int
    faults: int

    @property
    def low(self) -> float | None:
        return None if self.interval is None else self.rating - self.interval

    @property
    def high(self) -> float | None:
        return None if self.interval is None else self.rating + self.interval


@dataclass
class Ladder:
    """The figures of one ladder run and whether the search bot met its targets."""

    variant: str
    games: int
    command: list[str]
    rows: list[LadderRow] = field(default_factory=list)
    targets: dict[str, bool] = field(default_factory=dict)
    # Classic: each bot's exact bids by hand size over the tournament's matches.
    hand_sizes: dict[str, HandSizeBids] = field(default_factory=dict)

    def row(self, bot: str) -> LadderRow | None:
        return next((r for r in self.rows if r.bot == bot), None)

    @property
    def met(self) -> bool:
        return bool(self.targets) and all(self.targets.values())

    def table(self) -> str:
        lines = [f"{self.variant}: {self.games} games;  {shlex.join(self.command)}",
                 f"{'bot':<16}{'rating':>8}{'±':>6}{'games':>7}{'exact':>8}{'place':>7}{'p50 ms':>8}{'p99 ms':>8}"
                 f"{'t/o':>5}"]
        for r in self.rows:
            exact = "-" if r.exact_bid_rate is None else f"{100 * r.exact_bid_rate:.1f}%"
            p50 = "-" if r.think_p50_ms is None else f"{r.think_p50_ms:.1f}"
            p99 = "-" if r.think_p99_ms is None else f"{r.think_p99_ms:.1f}"
            interval = "?" if r.interval is None else f"{r.interval:.0f}"
            lines.append(f"{r.bot:<16}{r.rating:>8.0f}{interval:>6}{r.games:>7}{exact:>8}{r.avg_place:>7.2f}"
                         f"{p50:>8}{p99:>8}{r.timeouts:>5}")
        if self.hand_sizes:
            lines.append("exact bids by cards per hand (rounds in brackets):")
            lines.append(f"{'bot':<16}" + "".join(f"{f'{low}-{high}':>15}" for low, high in HAND_SIZE_BANDS))
            for bot, figures in self.hand_sizes.items():
                cells = ["-" if b.rate is None else f"{100 * b.rate:.1f}% ({b.rounds})" for b in figures.bands]
                lines.append(f"{bot:<16}" + "".join(f"{cell:>15}" for cell in cells))
        lines += [f"target {name}: {'met' if ok else 'NOT met'}" for name, ok in self.targets.items()]
        return "\n".join(lines)


def check_targets(variant: str, rows: list[LadderRow], bot: str = "search",
                  baseline: str = "heuristic") -> dict[str, bool]:
    """The targets of ``bot`` against ``baseline`` (see the module docstring).

    >>> rows = [LadderRow("search", 1700, 40, 100, 0.65, 1.6, 90, 110, 0, 0),
    ...         LadderRow("heuristic", 1500, 30, 100, 0.55, 2.3, 1, 5, 0, 0)]
    >>> check_targets("classic", rows)
    {'exact bids >= 60%': True, 'rating >= heuristic + 150': True, 'intervals apart': True}
    """
    me = next((r for r in rows if r.bot == bot), None)
    base = next((r for r in rows if r.bot == baseline), None)
    if me is None or base is None:
        return {"both bots rated": False}
    # An interval not known (too few deals) is never apart from another.
    apart = me.low is not None and base.high is not None and me.low > base.high
    if variant_of(variant).bids:     # classic: the exact-bid target, and a margin
        return {
            "exact bids >= 60%": (me.exact_bid_rate or 0.0) >= CLASSIC_EXACT_TARGET,
            "rating >= heuristic + 150": me.rating - base.rating >= CLASSIC_MARGIN_TARGET,
            "intervals apart": apart,
        }
    return {"rating > heuristic": me.rating > base.rating, "intervals apart": apart}


def learned_targets(variant: str, rows: list[LadderRow], baseline: str = "heuristic") -> dict[str, bool]:
    """The learned bot's targets: classic 150 above ``baseline``, Extreme above it (none when
    either is not on the board).

    >>> rows = [LadderRow("learned", 1700, 40, 100, 0.6, 2.0, 0.3, 1, 0, 0),
    ...         LadderRow("heuristic", 1500, 30, 100, 0.55, 2.3, 1, 5, 0, 0)]
    >>> learned_targets("classic", rows)
    {'learned >= heuristic + 150': True}
    """
    me = next((r for r in rows if r.bot == "learned"), None)
    base = next((r for r in rows if r.bot == baseline), None)
    if me is None or base is None:
        return {}
    if variant_of(variant).bids:
        return {"learned >= heuristic + 150": me.rating - base.rating >= LEARNED_MARGIN_TARGET}
    return {"learned > heuristic": me.rating > base.rating}


def _arena() -> list[str]:
    """How to start the ``arena`` command: the installed script beside this Python, else the module."""
    script = os.path.join(os.path.dirname(sys.executable), "arena")
    if os.path.exists(script):
        return [script]
    found = shutil.which("arena")
    return [found] if found else [sys.executable, "-m", "arena.cli"]


def bench_ladder(variant: str = "classic", *, games: int = 200, rounds: int | None = None, players: int = 4,
                 budget_ms: float = 100.0, move_time: float = 1.0, concurrency: int = 1, seed: int = 1,
                 inference: str = "none", samples: bool = True, extra_bots: dict[str, str] | None = None,
                 db: str | None = None, timeout: float | None = None) -> Ladder:
    """Run the tournament and return its :class:`Ladder` (ratings, intervals, exact-bid rates, targets).

    ``samples=False`` leaves the sample bots out (then add ``heuristic`` through
    ``extra_bots``, ``{name: command}``, for the comparison).
    """
    tmp = None
    if db is None:
        tmp = tempfile.mkdtemp(prefix="ladder-")
        db = os.path.join(tmp, "ladder.db")
    python = shlex.quote(sys.executable)
    bots = {"search": f"{python} -m sample_bots.search_bot --budget-ms {budget_ms:g} --inference {inference}",
            "learned": f"{python} -m sample_bots.learned_bot"}
    bots.update(extra_bots or {})
    command = _arena() + ["tournament", "--variant", variant, "--players", str(players), "--games", str(games),
                          "--seed", str(seed), "--concurrency", str(concurrency), "--move-time", str(move_time),
                          "--db", db]
    if rounds is not None:
        command += ["--rounds", str(rounds)]
    if not samples:
        command.append("--no-samples")
    for name, bot_command in bots.items():
        command += ["--bot", f"{name}={bot_command}"]
    try:
        subprocess.run(command, check=True, timeout=timeout, stdout=subprocess.DEVNULL)
        board = subprocess.run(_arena() + ["leaderboard", "--variant", variant, "--format", "json", "--db", db],
                               check=True, capture_output=True, text=True)
        data: dict[str, Any] = json.loads(board.stdout)
        hand_sizes = tournament_hand_sizes(db, [r["bot"] for r in data["rows"]]) if variant_of(variant).bids else {}
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    rows = [LadderRow(bot=r["bot"], rating=float(r["rating"]),
                      interval=None if r["interval"] is None else float(r["interval"]), games=int(r["games"]),
                      exact_bid_rate=r.get("exact_bid_rate"), avg_place=float(r["avg_place"]),
                      think_p50_ms=r.get("think_p50_ms"), think_p99_ms=r.get("think_p99_ms"),
                      timeouts=int(r.get("timeouts") or 0), faults=int(r.get("faults") or 0))
            for r in data["rows"]]
    played = int(data.get("metadata", {}).get("games", games))
    return Ladder(variant, played, command, rows, {**check_targets(variant, rows), **learned_targets(variant, rows)},
                  hand_sizes)


def tournament_hand_sizes(db: str, bots: list[str]) -> dict[str, HandSizeBids]:
    """Each bot's classic exact bids by hand size in the database ``db`` (the ladder's own:
    its one tournament), read from the stored results (``arena.results.browse.hand_size_bids``,
    every match up to its limit)."""
    with Store(db) as store:
        return {bot: hand_size_bids(store, bot) for bot in bots}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The search bot against the sample bots, with its targets.")
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--budget-ms", type=float, default=100.0)
    parser.add_argument("--move-time", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--inference", choices=("policy", "none"), default="none")
    parser.add_argument("--db", default=None)
    args = parser.parse_args(argv)
    ladder = bench_ladder(args.variant, games=args.games, rounds=args.rounds, players=args.players,
                          budget_ms=args.budget_ms, move_time=args.move_time, concurrency=args.concurrency,
                          seed=args.seed, inference=args.inference, db=args.db)
    print(ladder.table())


if __name__ == "__main__":
    main()
