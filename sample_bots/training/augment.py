"""The suits' symmetry, for training: a decision with its suits renamed is as good a
decision, so each sample can be shown to the network under several renamings.

Classic's four suits are alike (which is trump is in the observation); Wizard Extreme's
yellow, green, blue and purple are alike (red is always trump, and its supply differs).
A renaming ``perm`` maps suit ``s`` to ``perm[s]`` (classic: blue, green, red, yellow;
Extreme: red stays 0). :func:`feature_map` and :func:`action_map` move the padded
observation vector's entries and the action indices accordingly::

    >>> m = action_map("classic", (1, 0, 2, 3))      # blue and green swapped
    >>> from arena.wire.encoding import action_layout
    >>> card = action_layout("classic").slices["card"].start
    >>> int(m[card + 0]) - card, int(m[card + 13]) - card   # b1 -> g1, g1 -> b1
    (13, 0)
"""

from __future__ import annotations

import itertools
import random
from functools import cache

import numpy as np

from arena.wire.encoding import action_layout, observation_layout
from engine import classic_cards as cc
from engine import extreme_cards as xc
from engine import variant
from sample_bots.learned.policy import Ints, padded_size

Perm = tuple[int, ...]


def renamings(variant_name: str, count: int, rng: random.Random) -> list[Perm]:
    """The identity and ``count - 1`` other renamings, drawn without repeats."""
    if variant_name == "classic":
        others = [p for p in itertools.permutations(range(4)) if p != (0, 1, 2, 3)]
    else:
        others = [(0, *p) for p in itertools.permutations(range(1, 5)) if p != (1, 2, 3, 4)]
    identity = tuple(range(4 if variant_name == "classic" else 5))
    return [identity] + rng.sample(others, min(count - 1, len(others)))


def _card(variant_name: str, perm: Perm, card: int) -> int:
    if variant_name == "classic":
        suit = cc.SUIT_OF[card]
        return perm[suit] * cc.RANKS + card % cc.RANKS if suit < 4 else card
    return perm[card // xc.RANKS] * xc.RANKS + card % xc.RANKS


@cache
def feature_map(variant_name: str, perm: Perm) -> Ints:
    """For each index of the padded vector, its index once the suits are renamed by ``perm``."""
    largest = variant(variant_name).max_players
    layout = observation_layout(variant_name, largest)
    cards = len(variant(variant_name).cards)
    out = np.arange(padded_size(variant_name), dtype=np.intp)
    colours = len(perm)
    for name, part in layout.slices.items():
        start, length = part.start, part.stop - part.start
        for i in range(length):
            if name in ("hand", "trump_card", "played"):
                j = _card(variant_name, perm, i)
            elif name == "trick":
                j = (i // cards) * cards + _card(variant_name, perm, i % cards)
            elif name in ("trump", "lead_suit", "supply", "pending_supply"):
                j = perm[i] if i < colours else i            # the last slots: none, white, black
            elif name == "tokens":
                j = (i // 7) * 7 + (perm[i % 7] if i % 7 < colours else i % 7)
            elif name == "pending_rival":
                j = (i // 5) * 5 + perm[i % 5]
            else:
                j = i
            out[start + i] = start + j
    return out


@cache
def action_map(variant_name: str, perm: Perm) -> Ints:
    """For each action index, its index once the suits are renamed by ``perm``."""
    slices = action_layout(variant_name).slices
    out = np.arange(action_layout(variant_name).size, dtype=np.intp)
    for name, part in slices.items():
        for i in range(part.stop - part.start):
            if name == "card":
                j = _card(variant_name, perm, i)
            elif name in ("trump", "supply", "pay"):
                j = perm[i] if i < len(perm) else i          # pay's last: white
            elif name == "rival":
                j = (i // 5) * 5 + perm[i % 5]
            else:
                j = i
            out[part.start + i] = part.start + j
    return out
