"""The 60 cards of classic Wizard, as small integers.

A card is an ``int`` 0..59 in *card order*, the fixed order used for hands,
decision options and observations::

    0..12   blue 1..13      "b1".."b13"
    13..25  green 1..13     "g1".."g13"
    26..38  red 1..13       "r1".."r13"
    39..51  yellow 1..13    "y1".."y13"
    52..55  Wizards         "W1".."W4"
    56..59  Jesters         "J1".."J4"

A set of cards (a hand) is an ``int`` bit mask: bit ``c`` is set when card ``c``
is in the set. Card codes (``"b7"``) appear only at the edges: actions,
observations, events.

    >>> CODES[0], CODES[51], CODES[52], CODES[59]
    ('b1', 'y13', 'W1', 'J4')
    >>> INDEX["g7"], SUIT_OF[INDEX["g7"]], RANK_OF[INDEX["g7"]]
    (19, 1, 7)
    >>> codes_of(mask_of([INDEX["J2"], INDEX["b3"], INDEX["W1"]]))
    ('b3', 'W1', 'J2')
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS: tuple[str, ...] = ("blue", "green", "red", "yellow")
SUIT_LETTERS = "bgry"
NUM_CARDS = 60
RANKS = 13

# Pseudo-suits for the two special kinds, so that SUIT_OF is a plain int table.
WIZARD = 4
JESTER = 5
NO_SUIT = -1  # "no trump" / "no lead suit" in the engine's internal state

CODES: tuple[str, ...] = tuple(
    [f"{SUIT_LETTERS[s]}{r}" for s in range(4) for r in range(1, RANKS + 1)]
    + [f"W{i}" for i in range(1, 5)]
    + [f"J{i}" for i in range(1, 5)]
)
INDEX: dict[str, int] = {code: i for i, code in enumerate(CODES)}

SUIT_OF: tuple[int, ...] = tuple([c // RANKS for c in range(52)] + [WIZARD] * 4 + [JESTER] * 4)
RANK_OF: tuple[int, ...] = tuple([c % RANKS + 1 for c in range(52)] + [0] * 8)

SUIT_MASKS: tuple[int, ...] = tuple(((1 << RANKS) - 1) << (s * RANKS) for s in range(4))
WIZARD_MASK = 0b1111 << 52
JESTER_MASK = 0b1111 << 56
SPECIAL_MASK = WIZARD_MASK | JESTER_MASK
FULL_MASK = (1 << NUM_CARDS) - 1

# mask -> codes in card order by table lookups, ten bits at a time (six lookups for
# 60 cards) instead of a loop over the bits; small enough to build in a few ms.
def _chunk_table(first: int) -> tuple[tuple[str, ...], ...]:
    """Codes for every 10-bit mask of the cards first..first+9 (each entry built from a
    smaller one: its lowest card, then the rest)."""
    table: list[tuple[str, ...]] = [()]
    for m in range(1, 1 << 10):
        low = m & -m
        table.append((CODES[first + low.bit_length() - 1],) + table[m ^ low])
    return tuple(table)


_CHUNK_TABLES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(_chunk_table(10 * i) for i in range(6))
_C0, _C1, _C2, _C3, _C4, _C5 = _CHUNK_TABLES


def codes_of(mask: int) -> tuple[str, ...]:
    """The codes of the cards in ``mask``, in card order.

    >>> codes_of(SUIT_MASKS[2] | 1 << 56)   # every red card and the first Jester
    ('r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'J1')
    """
    return (
        _C0[mask & 0x3FF]
        + _C1[mask >> 10 & 0x3FF]
        + _C2[mask >> 20 & 0x3FF]
        + _C3[mask >> 30 & 0x3FF]
        + _C4[mask >> 40 & 0x3FF]
        + _C5[mask >> 50 & 0x3FF]
    )


def cards_of(mask: int) -> list[int]:
    """The card numbers in ``mask``, ascending.

    >>> cards_of(0b1011)
    [0, 1, 3]
    """
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


def mask_of(cards: Iterable[int]) -> int:
    """The bit mask of some card numbers.

    >>> mask_of([0, 3])
    9
    """
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def parse_card(code: str) -> int:
    """The card number of a code; ``ValueError`` for an unknown code.

    >>> parse_card("r13")
    38
    """
    try:
        return INDEX[code]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown card {code!r}; cards are b1..b13, g1..g13, r1..r13, y1..y13, W1..W4, J1..J4"
        ) from None


def suit_name(suit: int) -> str | None:
    """The name of a suit number, ``None`` for :data:`NO_SUIT` or a pseudo-suit.

    >>> suit_name(2), suit_name(NO_SUIT)
    ('red', None)
    """
    return SUITS[suit] if 0 <= suit < 4 else None
