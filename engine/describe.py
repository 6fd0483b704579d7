"""Events in words, for people: the round-by-round text that ``arena show`` prints.

The event dicts of both variants (``docs/engine.md``, ``docs/engine-extreme.md``)
become sentences that name each seat by its bot. :func:`describe_game` tells a whole
game (the organiser's view: every hand is shown), :func:`describe_event` one event::

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(players=3, seed=5, rounds=1))
    >>> game.apply(1, 1)
    >>> print("\\n".join(describe_game(game, ["ann", "bob", "cy"])))
    <BLANKLINE>
    Round 1 — dealer ann (seat 0), 1 card each
      hand ann (seat 0): J4
      hand bob (seat 1): y3
      hand cy (seat 2): b5
      trump: b3 turned up, trump suit blue
      bob (seat 1) bids 1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.game import Game

_ROUND_END_LABELS = {"bids": "bid", "tricks": "tricks", "scores": "score", "penalties": "penalty", "totals": "total"}


def seat_name(seat: int, bots: Sequence[str]) -> str:
    """How the text names a seat: its bot, then the seat number.

    >>> seat_name(1, ["ann", "bob"])
    'bob (seat 1)'
    """
    return f"{bots[seat]} (seat {seat})"


def describe_game(game: Game, bots: Sequence[str]) -> list[str]:
    """The game so far, round by round: each round opens with a blank line, the dealer
    and every seat's hand; then one indented line per public event, tricks numbered
    within their round (the plays are in the trick lines). ``bots`` names the seats."""
    names = [seat_name(seat, bots) for seat in range(len(bots))]
    bidding = game.config.bidding
    # Each seat's hands, round by round, from that seat's private events.
    hands = [[e for e in game.events_for(seat, 0)[0] if e["type"] == "hand"] for seat in range(len(bots))]
    lines: list[str] = []
    round_number = 0
    trick_number = 0
    for event in game.events_for(None, 0)[0]:
        kind = event["type"]
        if kind == "round_start":
            round_number += 1
            trick_number = 0
            lines.append("")
            lines.append(describe_event(event, bots))
            for seat, seat_hands in enumerate(hands):
                if round_number <= len(seat_hands):
                    lines.append(f"  hand {names[seat]}: {' '.join(seat_hands[round_number - 1]['cards'])}")
        elif kind == "trick":
            trick_number += 1
            lines.append("  " + _trick(event, bots, f"trick {trick_number}"))
        elif kind != "play":                  # the trick event lists every card
            lines.append("  " + describe_event(event, bots, bidding))
    return lines


def describe_event(event: Mapping[str, Any], bots: Sequence[str], bidding: str = "open") -> str:
    """One event of either variant in words; ``bidding`` is the classic game's option
    (it says when face-down bids come out).

    >>> describe_event({"type": "bid", "seat": 0, "bid": 2}, ["ann", "bob"])
    'ann (seat 0) bids 2'
    >>> describe_event({"type": "bids_revealed", "bids": [1, 0]}, ["ann", "bob"], "hidden")
    'bids revealed: seat 0 (ann) bid 1 · seat 1 (bob) bid 0'
    >>> describe_event({"type": "token_returned", "seat": 1, "colour": "red"}, ["ann", "bob"])
    'bob (seat 1) returns a red token'
    >>> describe_event({"type": "trump_chosen", "seat": 1, "suit": "red"}, ["ann", "bob"])
    'bob (seat 1), the dealer, chooses red as trump (a Wizard was turned up)'
    """
    names = [seat_name(seat, bots) for seat in range(len(bots))]
    kind = event["type"]
    if kind == "round_start":
        size = ""
        if "hand_size" in event:
            size = f", {event['hand_size']} card{'s' if event['hand_size'] != 1 else ''} each"
        return f"Round {event['round']} — dealer {names[event['dealer']]}{size}"
    if kind == "trick":
        return _trick(event, bots, "trick")
    if kind == "play":
        return f"{names[event['seat']]} plays {event['card']}"
    if kind == "round_end":
        return _round_end(event, bots)
    if kind == "bid":
        return f"{names[event['seat']]} bids {event['bid']}"
    if kind == "bid_made":
        # Hidden and secret bids: the table sees that a seat has bid, not what.
        until = "everybody has bid" if bidding == "hidden" else "the round is scored"
        return f"{names[event['seat']]} bids face down ({bidding} until {until})"
    if kind == "bids_revealed":
        # Hidden bids come out once everybody has bid, secret ones at the round's scoring.
        when = " at the scoring" if bidding == "secret" else ""
        return f"bids revealed{when}: " + " · ".join(
            f"seat {seat} ({bots[seat] if seat < len(bots) else '?'}) bid {bid}"
            for seat, bid in enumerate(event["bids"]))
    if kind == "trump_chosen":
        # A Wizard turned up: the dealer names the trump suit.
        return f"{names[event['seat']]}, the dealer, chooses {event['suit']} as trump (a Wizard was turned up)"
    if kind == "trump":
        turned = f"{event['card']} turned up" if event.get("card") else "no card turned up"
        return f"trump: {turned}, " + (f"trump suit {event['suit']}" if event.get("suit") else "no trump suit")
    # Wizard Extreme's events.
    if kind == "destroyer":
        return f"{names[event['seat']]} takes the destroyer"
    if kind == "prediction":
        tokens = ", ".join(f"{n} {colour}" for colour, n in event["tokens"].items()) or "no tokens"
        taken = [f"{colour} from {names[seat]}" for colour, seat in event.get("take_from", [])
                 if 0 <= seat < len(names) and seat != event["seat"]]
        return f"{names[event['seat']]} predicts {tokens}" + (f" (taking {', '.join(taken)})" if taken else "")
    if kind == "token_exchange":
        return (f"{names[event['to_seat']]} takes a {event['colour']} token from {names[event['from_seat']]}, "
                f"who gets a white one")
    if kind == "token_returned":
        verb = "chooses to return" if event.get("chosen") else "returns"
        return f"{names[event['seat']]} {verb} a {event['colour']} token"
    if kind in ("black_taken", "black_exhausted"):
        return (f"{names[event['seat']]} takes a black token" if kind == "black_taken"
                else f"{names[event['seat']]} would take a black token, but none is left")
    # Anything else (game_over, ...): its type, then its fields with seats named.
    parts = []
    for key, value in event.items():
        if key == "type":
            continue
        if key in ("seat", "from_seat", "to_seat", "winner") and isinstance(value, int) and 0 <= value < len(names):
            value = names[value]
        parts.append(f"{key} {value}")
    return f"{kind.replace('_', ' ')}: " + ", ".join(parts) if parts else kind.replace("_", " ")


def _trick(event: Mapping[str, Any], bots: Sequence[str], label: str) -> str:
    cards = ", ".join(f"{bots[c['seat']]} {c['card']}" for c in event["cards"])
    extra = " (destroyer)" if event.get("destroyer_won") else ""
    return f"{label}: {cards} → {seat_name(event['winner'], bots)}{extra}"


def _round_end(event: Mapping[str, Any], bots: Sequence[str]) -> str:
    columns = [key for key in _ROUND_END_LABELS if key in event]
    cells = " · ".join(
        f"{bot} " + "/".join(f"{_ROUND_END_LABELS[key]} {event[key][seat]}" for key in columns)
        for seat, bot in enumerate(bots)
    )
    lower = " (penalties: lower is better)" if "penalties" in event else ""
    return f"end of round {event['round']}{lower}: {cells}"
