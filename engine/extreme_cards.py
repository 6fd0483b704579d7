"""The cards and tokens of Wizard Extreme, as small integers.

A card is an ``int`` 0..74, ``colour * 15 + rank - 1``, in *card order*: the order
of hands, decision options and observations::

    0..14   red 1..15       "r1".."r15"     (red is always trump)
    15..29  yellow 1..15    "y1".."y15"
    30..44  green 1..15     "g1".."g15"
    45..59  blue 1..15      "b1".."b15"
    60..74  purple 1..15    "p1".."p15"

A set of cards is an ``int`` bit mask (:mod:`engine.masks`). Which ranks are in the
deck depends on the table size (:data:`MAX_RANK`). A token colour is an index into
:data:`TOKEN_COLOURS`: the five card colours, then white and black; token holdings are
lists of seven counts in that order.

    >>> CODES[0], CODES[74], INDEX["y2"], COLOUR_OF[INDEX["b7"]]
    ('r1', 'p15', 16, 3)
    >>> codes_of(1 << INDEX["g3"] | 1 << INDEX["r1"])
    ('r1', 'g3')
"""

from __future__ import annotations

from engine.masks import codes_decoder

COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue", "purple")
LETTERS = "rygbp"
RED = 0
RANKS = 15

CODES: tuple[str, ...] = tuple(f"{LETTERS[c]}{r}" for c in range(5) for r in range(1, RANKS + 1))
INDEX: dict[str, int] = {code: i for i, code in enumerate(CODES)}
COLOUR_OF: tuple[int, ...] = tuple(i // RANKS for i in range(len(CODES)))
# All cards of one colour, as a mask; a hand "has the colour" when hand & mask.
COLOUR_MASKS: tuple[int, ...] = tuple(((1 << RANKS) - 1) << (RANKS * c) for c in range(5))

# Which ranks are in the deck depends on the number of players (45 / 60 / 75 cards).
MAX_RANK = {3: 9, 4: 12, 5: 15}

# codes_of(mask): the codes of the cards in a mask, in card order.
codes_of = codes_decoder(CODES)

TOKEN_COLOURS: tuple[str, ...] = COLOURS + ("white", "black")
WHITE, BLACK = 5, 6
TOKEN_INDEX = {name: i for i, name in enumerate(TOKEN_COLOURS)}
SUPPLY_START = (5, 3, 3, 3, 3, 4, 6)  # 27 tokens
TOKEN_PENALTY = (2, 2, 2, 2, 2, 4, 3)


def deck_for(players: int) -> list[int]:
    """The cards used with ``players`` players, in card order.

    >>> [len(deck_for(p)) for p in (3, 4, 5)]
    [45, 60, 75]
    >>> CODES[max(deck_for(3))]
    'p9'
    """
    top = MAX_RANK[players]
    return [c * RANKS + r for c in range(5) for r in range(top)]
