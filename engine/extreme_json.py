"""Wizard Extreme's state in the JSON a bot reads: the parts of an observation and the
event dicts (every field is in ``docs/engine-extreme.md``).

The game keeps cards as ints 0..74 and token holdings as seven counts; names
(``"r7"``, ``"blue"``) appear only here, at the edge::

    >>> from engine.extreme_cards import INDEX
    >>> cards_json([(2, INDEX["b3"]), (0, INDEX["r1"])])
    [{'seat': 2, 'card': 'b3'}, {'seat': 0, 'card': 'r1'}]
    >>> tokens_json([1, 0, 0, 0, 0, 2, 0])
    {'red': 1, 'yellow': 0, 'green': 0, 'blue': 0, 'purple': 0, 'white': 2, 'black': 0}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.core import SeatRound
from engine.events import Event
from engine.extreme_cards import CODES, COLOUR_OF, COLOURS, TOKEN_COLOURS, codes_of
from engine.observations import ExtremeRound, LastTrick, PayDecision, TrickCard

# A trick as the game keeps it: (seat, card) in play order.
Cards = Sequence[tuple[int, int]]


def tokens_json(counts: Sequence[int]) -> dict[str, int]:
    """Seven token counts (``TOKEN_COLOURS`` order) by colour name, zeros included."""
    return dict(zip(TOKEN_COLOURS, counts))


def cards_json(cards: Cards) -> list[TrickCard]:
    """A trick's cards: ``[{"seat", "card"}]`` in play order."""
    return [{"seat": s, "card": CODES[c]} for s, c in cards]


def last_trick_json(last_trick: tuple[Cards, int] | None) -> LastTrick | None:
    """The last finished trick of the round, ``{"cards", "winner"}``, or ``None``."""
    if last_trick is None:
        return None
    cards, winner = last_trick
    return {"cards": cards_json(cards), "winner": winner}


def pay_json(last_trick: tuple[Cards, int], options: Sequence[str]) -> PayDecision:
    """The pay decision: the trick just won (its winner, lead colour and winning card) and
    the token colours the winner may return."""
    cards, winner = last_trick
    return {
        "seat": winner,
        "lead_suit": COLOURS[COLOUR_OF[cards[0][1]]],
        "winning_card": CODES[next(c for s, c in cards if s == winner)],
        "options": list(options),
    }


def round_history_json(history: Sequence[Sequence[SeatRound]]) -> list[ExtremeRound]:
    """The finished rounds: each round's penalties, its destroyer and the tokens each seat
    held at its end (non-zero counts only)."""
    return [
        {
            "round": i + 1,
            "scores": [line.score for line in rnd],
            "destroyer": next((s for s, line in enumerate(rnd) if line.destroyer), None),
            "tokens": [dict(line.tokens or {}) for line in rnd],
        }
        for i, rnd in enumerate(history)
    ]


def event_dict(event: Event) -> dict[str, Any]:
    """Turn a stored event tuple into the dict bots see (see ``docs/engine-extreme.md``)."""
    kind = event[1]
    p = event[2:]
    if kind == "play":
        return {"type": "play", "seat": p[0], "card": CODES[p[1]]}
    if kind == "trick":
        cards = p[1]
        return {"type": "trick", "winner": p[0], "leader": cards[0][0], "cards": cards_json(cards),
                "lead_suit": COLOURS[p[2]], "destroyer_won": p[3]}
    if kind == "token_returned":
        return {"type": kind, "seat": p[0], "colour": TOKEN_COLOURS[p[1]], "chosen": p[2]}
    if kind in ("black_taken", "black_exhausted", "destroyer"):
        return {"type": kind, "seat": p[0]}
    if kind == "prediction":
        return {"type": kind, "seat": p[0],
                "tokens": {COLOURS[c]: n for c, n in enumerate(p[1]) if n},
                "take_from": [[COLOURS[c], s] for c, s in p[2]]}
    if kind == "token_exchange":
        return {"type": kind, "from_seat": p[0], "to_seat": p[1], "colour": COLOURS[p[2]]}
    if kind == "round_start":
        return {"type": kind, "round": p[0], "dealer": p[1]}
    if kind == "hand":
        return {"type": kind, "seat": p[0], "cards": list(codes_of(p[1]))}
    if kind == "round_end":
        return {"type": kind, "round": p[0], "penalties": list(p[1]), "totals": list(p[2]), "dealer_next": p[3]}
    if kind == "game_over":
        return {"type": kind, "totals": list(p[0]), "places": list(p[1])}
    raise AssertionError(f"unknown event {kind}")
