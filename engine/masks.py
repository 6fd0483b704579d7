"""Sets of cards as ``int`` bit masks: the representation both variants play on.

A card is a small ``int`` (its place in the variant's card order) and a set of cards,
a hand for instance, is an ``int`` whose bit ``c`` is set when card ``c`` is in it.
Set operations are then single integer operations (``hand & suit``, ``hand ^ 1 << c``)
and "in card order" is "lowest bit first". The variants' own tables (codes, suits,
colours) are in :mod:`engine.classic_cards` and :mod:`engine.extreme_cards`.

    >>> hand = mask_of([3, 0, 41])
    >>> hand.bit_count(), hand >> 3 & 1, hand >> 4 & 1
    (3, 1, 0)
    >>> codes_of = codes_decoder(["a", "b", "c", "d"])
    >>> codes_of(0b1010)
    ('b', 'd')
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

_CHUNK = 10  # bits per lookup table of codes_decoder: 1,024 entries a table


def mask_of(cards: Iterable[int]) -> int:
    """The mask of some cards.

    >>> mask_of([0, 3])
    9
    """
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_of(mask: int) -> list[int]:
    """The cards (bit indexes) of a mask, lowest first: the inverse of :func:`mask_of`.

    >>> cards_of(0b101001)
    [0, 3, 5]
    """
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def pick(mask: int, rng: random.Random) -> int:
    """A uniformly random card of a non-empty mask: the k-th lowest for a random k.

    ``rng.random()`` rather than ``choice()``: its sequence is the part of :mod:`random`
    that Python keeps stable across versions, and it is faster.

    >>> pick(0b10100, random.Random(1)) in (2, 4)
    True
    """
    k = int(rng.random() * mask.bit_count())
    while k:  # a while loop: cheaper than a range() for the few cards of a hand
        mask &= mask - 1  # drop the lowest card
        k -= 1
    return (mask & -mask).bit_length() - 1


def codes_decoder(codes: Sequence[str]) -> Callable[[int], tuple[str, ...]]:
    """A function from a mask to the codes of its cards, in card order, for the card
    codes ``codes`` (``codes[c]`` is the code of card ``c``).

    It decodes ten bits at a time by table lookups (six lookups for 60 cards) instead
    of a loop over the bits: hands and legal options are decoded on every decision.

    >>> codes_of = codes_decoder([f"c{i}" for i in range(25)])
    >>> codes_of(1 << 24 | 1 << 9 | 1)
    ('c0', 'c9', 'c24')
    """
    tables = tuple(_chunk_table(codes, first) for first in range(0, len(codes), _CHUNK))

    def codes_of(mask: int) -> tuple[str, ...]:
        found: tuple[str, ...] = ()
        for table in tables:
            found += table[mask & 0x3FF]
            mask >>= _CHUNK
        return found

    return codes_of


def _chunk_table(codes: Sequence[str], first: int) -> tuple[tuple[str, ...], ...]:
    """The codes for every 10-bit mask of the cards ``first..first+9``; each entry is
    built from a smaller one: its lowest card, then the rest."""
    table: list[tuple[str, ...]] = [()]
    for m in range(1, 1 << _CHUNK):
        low = m & -m
        card = first + low.bit_length() - 1
        table.append(((codes[card],) if card < len(codes) else ()) + table[m ^ low])
    return tuple(table)
