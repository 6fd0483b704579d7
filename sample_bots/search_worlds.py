"""The search bot's worlds: the hidden hands sampled consistent with what a seat has seen.

:func:`deal_sampler` draws them uniformly among the deals that respect the voids players
have shown (the distribution of :func:`engine.sample_deal`, faster); :func:`inferred_sampler`
weighs each by how well it explains the rivals' decisions under the learned inference
network (``--inference policy``, :mod:`sample_bots.learned.inference`), and
:func:`temper` keeps those weights from resting on a handful of worlds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine import classic_cards as cc
from engine import extreme_cards as xc
from engine import worlds as _worlds
from engine.masks import cards_of

SAMPLE_TRIES = 12         # random deals tried per world before the exact sampler takes over
WEIGH_FIRST = 16          # worlds weighed by inference at once, first (a decision short of time weighs no more)
WEIGH_BATCH = 32          # ... and then, at most (a batch is weighed whole: it may run past the deadline)
ESS_FLOOR = 0.5           # inference's weights are tempered to keep this share of the worlds effective

_BIT = tuple(1 << c for c in range(128))


class World:
    """One sampled world: every seat's hand (bit masks), its weight in the averages (1, or
    how well it explains the rivals' decisions under inference), and a memo for what
    several candidates evaluated in it share (the opponents' guessed bids, say)."""

    __slots__ = ("hands", "memo", "weight")

    def __init__(self, hands: Sequence[int], weight: float = 1.0) -> None:
        self.hands = hands
        self.weight = weight
        self.memo: dict[Any, Any] = {}


def deal_sampler(obs: Mapping[str, Any], rng: random.Random) -> Callable[[], World]:
    """Worlds as :func:`engine.sample_deal` samples them (uniform among the deals consistent
    with the observation), faster: what the observation implies is worked out once per
    decision, and a plain shuffle that happens to respect the shown voids is taken as it is
    (uniform given that it fits); otherwise ``sample_deal``'s own sampler places the cards.

    >>> from engine import GameConfig, new_game
    >>> obs = new_game(GameConfig(variant="classic", players=4, seed=2, rounds=5)).observe(1)
    >>> world = deal_sampler(obs, random.Random(0))()
    >>> [h.bit_count() for h in world.hands]
    [1, 1, 1, 1]
    """
    unseen, bins, sizes, forbidden = _worlds._unseen_and_bins(obs)
    players, me = obs["players"], obs["seat"]
    classic = obs["variant"] == "classic"
    index, suit_masks = (cc.INDEX, cc.SUIT_MASKS) if classic else (xc.INDEX, xc.COLOUR_MASKS)
    mine = sum(1 << index[c] for c in obs["hand"])
    cards = cards_of(unseen)
    cuts = []
    start = 0
    for n in sizes:
        cuts.append((start, start + n))
        start += n
    void_masks = [sum(suit_masks[s] for s in f) for f in forbidden]
    checks = [(b, m) for b, m in enumerate(void_masks) if m]
    seats = bins
    bit = _BIT.__getitem__
    choose = rng.sample
    if seats[-1] < 0:  # classic's undealt pile: whatever the hands leave (no void applies to it)
        cuts.pop()
    dealt = cuts[-1][1] if cuts else 0
    # The exact sampler's groups: per suit somebody is void in, the bins that may get it.
    groups = [(unseen & suit_masks[s], tuple(b for b, f in enumerate(forbidden) if s not in f))
              for s in sorted({s for f in forbidden for s in f})]
    groups = [(m, allowed) for m, allowed in groups if m]
    tally = [0, 0]  # random deals tried, kept

    def sample() -> World:
        # A uniformly random ordered choice of the cards in other hands, cut into hands,
        # kept if it respects the voids (rejection sampling: uniform among those that do);
        # when few fit (under 1 in 10 so far), the exact sampler instead.
        tries = SAMPLE_TRIES if tally[0] < 2 * SAMPLE_TRIES or 10 * tally[1] >= tally[0] else 0
        for _ in range(tries):
            drawn = choose(cards, dealt)
            masks = [sum(map(bit, drawn[a:b])) for a, b in cuts]
            tally[0] += 1
            if not any(masks[b] & m for b, m in checks):
                tally[1] += 1
                break
        else:
            masks = _worlds._place_exact(unseen, sizes, groups, rng)
        hands = [0] * players
        hands[me] = mine
        for s, m in zip(seats, masks):
            if s >= 0:
                hands[s] = m
        return World(hands)

    return sample


def inferred_sampler(sample: Callable[[], World], evidence: Any) -> Callable[[], World]:
    """The worlds of ``sample`` (uniform), each weighted by how likely the rivals' decisions
    are with its hands (importance sampling): ``evidence.log_weights``
    (:class:`sample_bots.learned.inference.Evidence`) weighs them in batches, 16 first and
    then doubling up to :data:`WEIGH_BATCH`, as the search asks for more. Every world drawn
    is a new one, each counted by its weight.

    The weights are tempered, ``exp(λ log w)``, with the largest ``λ`` of at most 1 that
    keeps the first batch's effective sample size (``(Σw)² / Σw²``) at :data:`ESS_FLOOR` of
    its worlds: the network is sure of itself, and untempered a handful of worlds would
    carry the whole average, as a search of a handful of worlds (adaptive tempering, as in
    sequential Monte Carlo)."""
    import numpy as np

    ready: list[World] = []
    size = [WEIGH_FIRST]
    scale: list[float] = []     # the first batch's largest log weight and the decision's λ

    def draw() -> World:
        if not ready:
            batch = [sample() for _ in range(size[0])]
            logs = evidence.log_weights([w.hands for w in batch])
            if not scale:
                scale.extend([float(np.max(logs)), temper(logs - np.max(logs))])
            top, lam = scale
            for world, w in zip(batch, np.exp(np.clip(lam * (logs - top), -700.0, 700.0)).tolist()):
                world.weight = w
            ready.extend(reversed(batch))
            size[0] = min(2 * size[0], WEIGH_BATCH)
        return ready.pop()

    return draw


def temper(logs: Any) -> float:
    """The largest ``λ`` in [0, 1] whose weights ``exp(λ logs)`` keep an effective sample
    size of at least :data:`ESS_FLOOR` of the worlds (by bisection).

    >>> temper([0.0, 0.0, 0.0, 0.0])
    1.0
    >>> 0.0 < temper([0.0, -50.0, -50.0, -50.0]) < 0.1
    True
    """
    import numpy as np

    spread = np.asarray(logs, dtype=np.float64) - np.max(logs)

    def ess(lam: float) -> float:
        w = np.exp(lam * spread)
        return float(w.sum() ** 2 / (w * w).sum() / len(w))

    if ess(1.0) >= ESS_FLOOR:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(12):
        middle = (low + high) / 2
        low, high = (middle, high) if ess(middle) >= ESS_FLOOR else (low, middle)
    return low
