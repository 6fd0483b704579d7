"""Wizard Extreme's predictions: what a seat could take, a prediction checked into token
moves, and a random prediction.

A prediction takes tokens from the supply first; for a colour the supply lacks, it takes
them from other players, each of whom gets a white token from the supply in exchange
(``docs/engine-extreme.md``, "predict"). These are plain functions on the game's token
counts (``supply``: seven counts in ``TOKEN_COLOURS`` order; ``tokens``: such a list per
seat), so that :class:`engine.extreme.ExtremeGame` and a search can call them alike::

    >>> supply = [0, 3, 3, 3, 3, 4, 6]                 # no red left in the supply
    >>> tokens = [[0] * 7, [3, 0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0]]
    >>> can_take(supply, tokens, 0)["red"]
    4
    >>> plan_prediction(Prediction(tokens={"red": 2}), 0, supply, tokens, destroyer=None)
    ([2, 0, 0, 0, 0], [(0, 1), (0, 1)])
"""

from __future__ import annotations

import random

from engine.core import PREDICT, IllegalAction, Prediction
from engine.extreme_cards import COLOURS, WHITE

DESTROYER_CHANCE = 0.2  # how often random_prediction takes a free destroyer


def can_take(supply: list[int], tokens: list[list[int]], seat: int) -> dict[str, int]:
    """How many tokens of each colour ``seat`` could take now, each colour on its own.

    The supply's tokens plus those the other players hold, as far as the supply has
    white tokens to give in exchange. The white tokens are shared by all colours: one
    prediction can take from others at most as many tokens as there are white ones.
    """
    white = supply[WHITE]
    return {
        COLOURS[c]: supply[c] + min(white, sum(t[c] for s, t in enumerate(tokens) if s != seat))
        for c in range(5)
    }


def plan_prediction(p: Prediction, seat: int, supply: list[int], tokens: list[list[int]],
                    destroyer: int | None) -> tuple[list[int], list[tuple[int, int]]]:
    """Check ``seat``'s prediction ``p``; return the token counts and the ``(colour, holder)``
    exchanges, or raise :class:`IllegalAction` saying why it cannot be had.

    Tokens come from the supply first. For each colour the supply lacks, ``take_from``
    must name one holder per missing token; a colour it does not name is taken by the
    default: holders clockwise from the predictor's left, each emptied before the next.
    ``destroyer`` is the seat that holds the destroyer this round, if any.
    """
    players = len(tokens)

    def illegal(message: str) -> IllegalAction:
        return IllegalAction(message, seat=seat, kind=PREDICT)

    if p.destroyer:
        if any(p.tokens.values()) or p.take_from:
            raise illegal("the destroyer predicts nothing: take the destroyer or tokens, not both")
        if destroyer is not None:
            raise illegal(f"the destroyer is taken this round (by seat {destroyer}); predict tokens")
        return [0] * 5, []
    counts = [0] * 5
    for name, n in p.tokens.items():
        if name not in COLOURS:
            raise illegal(f"only coloured tokens can be predicted ({', '.join(COLOURS)}), not {name!r}")
        if n < 0:
            raise illegal(f"token counts must be 0 or more (got {name} {n})")
        counts[COLOURS.index(name)] = n
    short = [max(0, counts[c] - supply[c]) for c in range(5)]
    available = [list(t) for t in tokens]  # what is left to take, per holder
    exchanges: list[tuple[int, int]] = []
    named = [0] * 5
    for name, holder in p.take_from:
        if name not in COLOURS:
            raise illegal(f"take_from names coloured tokens only, not {name!r}")
        c = COLOURS.index(name)
        if short[c] == 0:
            raise illegal(f"take_from names {name}, but the supply has the {name} tokens you asked for")
        if not 0 <= holder < players or holder == seat:
            raise illegal(f"take_from must name another player's seat (got {holder})")
        if available[holder][c] == 0:
            raise illegal(f"seat {holder} holds no more {name} tokens to take")
        available[holder][c] -= 1
        named[c] += 1
        exchanges.append((c, holder))
    for c in range(5):
        if named[c] and named[c] != short[c]:
            raise illegal(
                f"the supply lacks {short[c]} {COLOURS[c]} token(s) but take_from names {named[c]}; "
                "name one seat per missing token, or leave that colour out to use the default")
        need = short[c] - named[c]
        holder = seat
        while need:
            holder = (holder + 1) % players
            if holder == seat:
                raise illegal(_cannot_have(counts, supply, tokens, seat))
            while need and available[holder][c]:
                available[holder][c] -= 1
                need -= 1
                exchanges.append((c, holder))
    if len(exchanges) > supply[WHITE]:
        raise illegal(_cannot_have(counts, supply, tokens, seat))
    return counts, exchanges


def _cannot_have(counts: list[int], supply: list[int], tokens: list[list[int]], seat: int) -> str:
    wanted = ", ".join(f"{COLOURS[c]} {n}" for c, n in enumerate(counts) if n)
    can = ", ".join(f"{colour} {n}" for colour, n in can_take(supply, tokens, seat).items())
    return (f"cannot have {wanted}: can be had {can} (the supply, plus other players' tokens for one "
            f"white token each; {supply[WHITE]} white token(s) left for all colours together)")


def random_prediction(seat: int, supply: list[int], tokens: list[list[int]], destroyer_free: bool,
                      rng: random.Random) -> Prediction:
    """A random legal prediction of ``seat``: the destroyer (when free) one time in five;
    otherwise 0 to 5 tokens of random colours that can be had, sometimes from other
    players, naming them in ``take_from`` half of the time (else the default applies).

    >>> random_prediction(0, [5, 3, 3, 3, 3, 4, 6], [[0] * 7] * 3, False, random.Random(5)).tokens
    {'blue': 2, 'purple': 1}
    """
    if destroyer_free and rng.random() < DESTROYER_CHANCE:
        return Prediction(destroyer=True)
    supply = list(supply)
    held = [list(t) for t in tokens]
    others = [s for s in range(len(tokens)) if s != seat]
    counts = [0] * 5
    pairs: list[tuple[str, int]] = []
    for _ in range(int(rng.random() * 6)):
        choices = [c for c in range(5) if supply[c] or (supply[WHITE] and any(held[s][c] for s in others))]
        if not choices:
            break
        colour = choices[int(rng.random() * len(choices))]
        counts[colour] += 1
        if supply[colour]:
            supply[colour] -= 1
        else:
            holders = [s for s in others if held[s][colour]]
            holder = holders[int(rng.random() * len(holders))]
            held[holder][colour] -= 1
            supply[WHITE] -= 1
            pairs.append((COLOURS[colour], holder))
    take_from = tuple(pairs) if rng.random() < 0.5 else ()
    return Prediction(tokens={COLOURS[c]: n for c, n in enumerate(counts) if n}, take_from=take_from)
