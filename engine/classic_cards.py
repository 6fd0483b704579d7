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
is in the set (:mod:`engine.masks`). Card codes (``"b7"``) appear only at the edges:
actions, observations, events.

    >>> from engine.masks import mask_of
    >>> CODES[0], CODES[51], CODES[52], CODES[59]
    ('b1', 'y13', 'W1', 'J4')
    >>> INDEX["g7"], SUIT_OF[INDEX["g7"]], RANK_OF[INDEX["g7"]]
    (19, 1, 7)
    >>> codes_of(mask_of([INDEX["J2"], INDEX["b3"], INDEX["W1"]]))
    ('b3', 'W1', 'J2')
"""

from __future__ import annotations

from engine.masks import codes_decoder

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

# codes_of(mask): the codes of the cards in a mask, in card order, e.g. every red card
# and the first Jester: codes_of(SUIT_MASKS[2] | 1 << 56) == ('r1', ..., 'r13', 'J1').
codes_of = codes_decoder(CODES)


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
