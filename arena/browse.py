"""Browsing stored matches: the list for ``arena matches``, one match round by round,
re-checking a match against the engine, and exporting it as JSON.

These are the organiser's views after a match, so they show every hand. ``show_match``
and ``verify_match`` replay the stored decision log through the engine::

    game = engine.replay(GameConfig.from_dict(record.config), record.actions)

The CLI wires them as ``arena matches``, ``arena show MATCH``, ``arena replay MATCH
--verify`` and ``arena export MATCH``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from arena.records import MatchRecord, final_places
from arena.store import MatchSummary, Store
from engine import EngineError, GameConfig, replay


@dataclass
class MatchLine:
    """One row of ``arena matches``: display-ready, and JSON-friendly via ``vars()``."""

    match_id: str
    tournament: str
    game: str
    variant: str
    status: str
    finished: str
    players: str              # "alice 120 (1) · bob 80 (2) · ..."; a forfeit is marked "forfeit"
    faults: int
    decisions: int
    median_ms: str


def match_rows(
    store: Store, variant: str | None = None, tournament_id: str | None = None, bot: str | None = None,
    limit: int = 50,
) -> list[MatchLine]:
    """The newest stored matches first, one display line each."""
    return [_line(m) for m in store.list_matches(variant=variant, tournament_id=tournament_id, bot=bot, limit=limit)]


def _line(summary: MatchSummary) -> MatchLine:
    players = " · ".join(
        f"{bot} {total} ({'forfeit' if forfeit else place})"
        for bot, total, place, forfeit in zip(summary.bots, summary.totals, summary.places, summary.forfeited)
    )
    return MatchLine(
        match_id=summary.match_id, tournament=summary.tournament_id or "–",
        game="–" if summary.game_index is None else str(summary.game_index), variant=summary.variant,
        status=summary.status, finished=summary.finished_at.strftime("%Y-%m-%d %H:%M:%S"), players=players,
        faults=summary.faults, decisions=summary.decisions,
        median_ms="–" if summary.median_latency_ms is None else f"{summary.median_latency_ms:.2f}",
    )


def match_table(
    store: Store, variant: str | None = None, tournament_id: str | None = None, bot: str | None = None,
    limit: int = 50,
) -> Table:
    """``arena matches``: the newest stored matches as a rich Table."""
    return matches_table(match_rows(store, variant=variant, tournament_id=tournament_id, bot=bot, limit=limit))


def matches_table(lines: list[MatchLine], title: str = "Matches") -> Table:
    """The lines as a rich Table."""
    table = Table(title=title)
    for header in ("Match", "Tournament", "Game", "Variant", "Status", "Finished (UTC)", "Players (total, place)",
                   "Faults", "Decisions", "Median ms"):
        table.add_column(header)
    for line in lines:
        table.add_row(line.match_id, line.tournament, line.game, line.variant, line.status, line.finished,
                      line.players, str(line.faults), str(line.decisions), line.median_ms)
    return table


def export_match(store: Store, match_id: str) -> dict[str, Any]:
    """The stored match as JSON-ready data (``MatchRecord.to_json()``)."""
    return store.load_match(match_id).to_json()


# --------------------------------------------------------------------------------------
# Show: the match round by round
# --------------------------------------------------------------------------------------


def show_match(store: Store, match_id: str) -> Text:
    """The match as text: seats, then every round (hands, trump, bids or predictions,
    each trick and its winner, the round's scores), then the result.

    A rich ``Text``, so that ``console.print`` shows brackets in bot names and lists
    literally; ``str()`` of it is the plain text.
    """
    return Text(describe_match(store.load_match(match_id)))


def describe_match(record: MatchRecord) -> str:
    """``show_match`` for a record at hand (no store needed)."""
    names = [f"{bot} (seat {seat})" for seat, bot in enumerate(record.bots)]
    lines = [
        f"Match {record.match_id} · {record.variant} · {len(record.bots)} players · seed {record.seed} · "
        f"{record.status}",
    ]
    if record.tournament_id:
        lines.append(f"Tournament {record.tournament_id}, game {record.game_index}")
    lines.append("Seats: " + " · ".join(f"{seat}: {bot} {version}".rstrip()
                                        for seat, (bot, version) in enumerate(zip(record.bots, record.bot_versions))))
    try:
        game = replay(GameConfig.from_dict(record.config), record.actions)
    except (EngineError, ValueError, TypeError) as error:
        lines.append(f"The stored log does not replay: {error}")
        return "\n".join(lines)

    # Each seat's hands, round by round, from that seat's private events.
    hands = [[e for e in game.events_for(seat, 0)[0] if e["type"] == "hand"] for seat in range(len(record.bots))]
    round_number = 0
    trick_number = 0
    for event in game.events_for(None, 0)[0]:
        kind = event["type"]
        if kind == "round_start":
            round_number += 1
            trick_number = 0
            size = ""
            if "hand_size" in event:
                size = f", {event['hand_size']} card{'s' if event['hand_size'] != 1 else ''} each"
            lines.append("")
            lines.append(f"Round {event['round']} — dealer {names[event['dealer']]}{size}")
            for seat, seat_hands in enumerate(hands):
                if round_number <= len(seat_hands):
                    lines.append(f"  hand {names[seat]}: {' '.join(seat_hands[round_number - 1]['cards'])}")
        elif kind == "trick":
            trick_number += 1
            cards = ", ".join(f"{record.bots[c['seat']]} {c['card']}" for c in event["cards"])
            extra = " (destroyer)" if event.get("destroyer_won") else ""
            lines.append(f"  trick {trick_number}: {cards} → {names[event['winner']]}{extra}")
        elif kind == "play":
            continue                      # the trick event lists every card
        elif kind == "round_end":
            lines.append("  " + _round_end(event, record.bots))
        else:
            lines.append("  " + _event_text(event, names))
    lines.append("")
    if game.is_over:
        result = game.result()
        lines.append("Result: " + " · ".join(
            f"{bot} {total} (place {place}{', forfeited' if forfeit else ''})"
            for bot, total, place, forfeit in zip(record.bots, record.totals, record.places, record.forfeited)
        ))
        if list(result.totals) != list(record.totals):
            lines.append(f"Warning: the replay's totals {list(result.totals)} differ from the stored ones")
    else:
        lines.append(f"The log ends before the game does ({len(record.actions)} decisions; status {record.status}).")
    if record.faults:
        lines.append("Faults:")
        for fault in record.faults:
            request = f" request {fault.request_id}" if fault.request_id is not None else ""
            lines.append(f"  {names[fault.seat] if 0 <= fault.seat < len(names) else fault.seat}: "
                         f"{fault.kind}{request}: {fault.message}")
    return "\n".join(lines)


_ROUND_END_LABELS = {"bids": "bid", "tricks": "tricks", "scores": "score", "penalties": "penalty", "totals": "total"}


def _round_end(event: dict[str, Any], bots: list[str]) -> str:
    columns = [key for key in _ROUND_END_LABELS if key in event]
    cells = " · ".join(
        f"{bot} " + "/".join(f"{_ROUND_END_LABELS[key]} {event[key][seat]}" for key in columns)
        for seat, bot in enumerate(bots)
    )
    return f"end of round {event['round']}: {cells}"


def _event_text(event: dict[str, Any], names: list[str]) -> str:
    """Any other event, readably: its type, then its fields with seat numbers named."""
    if event["type"] == "bid":
        return f"{names[event['seat']]} bids {event['bid']}"
    if event["type"] == "trump":
        turned = f"{event['card']} turned up" if event.get("card") else "no card turned up"
        return f"trump: {turned}, " + (f"trump suit {event['suit']}" if event.get("suit") else "no trump suit")
    # Wizard Extreme's events, in words.
    if event["type"] == "destroyer":
        return f"{names[event['seat']]} takes the destroyer"
    if event["type"] == "prediction":
        tokens = ", ".join(f"{n} {colour}" for colour, n in event["tokens"].items()) or "no tokens"
        taken = [f"{colour} from {names[seat]}" for colour, seat in event.get("take_from", [])
                 if 0 <= seat < len(names) and seat != event["seat"]]
        return f"{names[event['seat']]} predicts {tokens}" + (f" (taking {', '.join(taken)})" if taken else "")
    if event["type"] == "token_exchange":
        return (f"{names[event['to_seat']]} takes a {event['colour']} token from {names[event['from_seat']]}, "
                f"who gets a white one")
    if event["type"] == "token_returned":
        return f"{names[event['seat']]} returns a {event['colour']} token"
    if event["type"] in ("black_taken", "black_exhausted"):
        return (f"{names[event['seat']]} takes a black token" if event["type"] == "black_taken"
                else f"{names[event['seat']]} would take a black token, but none is left")
    parts = []
    for key, value in event.items():
        if key == "type":
            continue
        if key in ("seat", "from_seat", "to_seat", "winner") and isinstance(value, int) and 0 <= value < len(names):
            value = names[value]
        parts.append(f"{key} {value}")
    return f"{event['type'].replace('_', ' ')}: " + ", ".join(parts) if parts else event["type"].replace("_", " ")


# --------------------------------------------------------------------------------------
# Verify: does the stored log reproduce the stored result?
# --------------------------------------------------------------------------------------


def verify_match(store: Store, match_id: str) -> tuple[bool, str]:
    """Replay the stored log through the engine and compare totals, places (after
    forfeits, via ``final_places``) and the result with what is stored.

    Returns ``(ok, message)``; the message names the first difference.
    """
    return verify_record(store.load_match(match_id))


def verify_record(record: MatchRecord) -> tuple[bool, str]:
    """``verify_match`` for a record at hand."""
    try:
        game = replay(GameConfig.from_dict(record.config), record.actions)
    except (EngineError, ValueError, TypeError) as error:
        return False, f"{record.match_id}: the stored log does not replay: {error}"
    if not game.is_over:
        if record.status == "completed":
            return False, f"{record.match_id}: the log ends before the game does, but the match is marked completed"
        return True, f"{record.match_id}: {len(record.actions)} decisions replay; the match was {record.status} before the end"
    result = game.result()
    if list(result.totals) != list(record.totals):
        return False, f"{record.match_id}: totals differ: replay {list(result.totals)}, stored {record.totals}"
    places = final_places(list(result.totals), list(record.forfeited), result.higher_is_better)
    if places != list(record.places):
        return False, f"{record.match_id}: places differ: replay {places}, stored {record.places}"
    if result.to_json() != record.result:
        return False, f"{record.match_id}: the stored result differs from the replay's"
    return True, f"{record.match_id}: {len(record.actions)} decisions replay to the stored totals, places and result"
