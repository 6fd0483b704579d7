"""The data of a bot's page: what ``/api/bots/{name}`` answers and ``/bots/{name}`` draws.

Read from the store's tables in two queries (the bot's seats, its faults), plus the
leaderboard's per-bot aggregates for its think-time percentiles (the board's histograms:
the same numbers the board shows). The bot's maximum think time is the largest of its matches'
stored ``max_latency_ms``: the slowest answer in any match it played, any seat's (the
store keeps no per-seat maximum), so an upper bound on its own.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlmodel import col

from arena.results import Store
from arena.store.schema import BotRow, FaultRow, MatchRow, MatchSeatRow

# How many match links each fault kind lists (the count is always whole).
FAULT_LINKS = 20


class NoSuchBot(Exception):
    """No stored match has a seat for this bot."""


def bot_json(store: Store, name: str) -> dict[str, Any]:
    """Versions, games per variant, faults by kind, think times, exact bids, places by seat.

    Raises :class:`NoSuchBot` when the bot has no stored match.
    """
    with Session(store.engine) as session:
        seats = session.execute(
            select(col(MatchSeatRow.seat), col(MatchSeatRow.bot_version), col(MatchSeatRow.place),
                   col(MatchSeatRow.rounds), col(MatchSeatRow.exact_bids), col(MatchRow.variant),
                   col(MatchRow.status), col(MatchRow.players), col(MatchRow.max_latency_ms))
            .join(MatchRow, col(MatchRow.id) == col(MatchSeatRow.match_pk))
            .join(BotRow, col(BotRow.id) == col(MatchSeatRow.bot_id))
            .where(col(BotRow.name) == name)
        ).all()
        faults = session.execute(
            select(col(FaultRow.kind), col(MatchRow.match_id))
            .join(MatchRow, col(MatchRow.id) == col(FaultRow.match_pk))
            .join(BotRow, col(BotRow.id) == col(FaultRow.bot_id))
            .where(col(BotRow.name) == name)
            .order_by(col(MatchRow.id).desc())
        ).all()
    if not seats:
        raise NoSuchBot(f"no stored match has a bot named {name!r}")

    versions: dict[str, int] = defaultdict(int)
    variants: dict[str, dict[str, Any]] = {}
    for seat, version, place, rounds, exact, variant, status, players, max_ms in seats:
        versions[version or ""] += 1
        v = variants.setdefault(variant, {"games": 0, "completed": 0, "rounds": 0, "exact_bids": 0,
                                          "max_ms": None, "seats": defaultdict(lambda: [0, 0])})
        v["games"] += 1
        if status == "completed":
            v["completed"] += 1
            v["seats"][(int(players), int(seat))][0] += 1
            v["seats"][(int(players), int(seat))][1] += int(place)
        v["rounds"] += rounds or 0
        v["exact_bids"] += exact or 0
        if max_ms is not None and (v["max_ms"] is None or max_ms > v["max_ms"]):
            v["max_ms"] = float(max_ms)

    by_kind: dict[str, list[str]] = defaultdict(list)
    for kind, match_id in faults:
        by_kind[kind].append(match_id)

    per_variant = []
    for variant in sorted(variants):
        v = variants[variant]
        # The board's own per-bot aggregate (its think-time histogram), not the fit: cheap.
        agg = next((a for a in store.seat_aggregates(variant) if a.bot == name), None)
        per_variant.append({
            "variant": variant, "games": v["games"], "completed": v["completed"],
            "think_p50_ms": agg.think_times.percentile(50) if agg else None,
            "think_p99_ms": agg.think_times.percentile(99) if agg else None,
            "think_max_ms": v["max_ms"],
            "exact_bid_rate": (v["exact_bids"] / v["rounds"]) if variant == "classic" and v["rounds"] else None,
            "rounds": v["rounds"] if variant == "classic" else None,
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
    }
