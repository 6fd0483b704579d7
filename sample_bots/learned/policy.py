"""The learned policy's inference, in plain numpy: one network per variant for every
table size, reading :mod:`arena.wire.encoding`'s observation vector.

The encoding's vector depends on the table size (per-seat segments, Wizard Extreme's
deck). The network reads it *padded*: every segment laid out as at the variant's largest
table (seat ``k`` to the observer's left in slot ``k``, each card in its slot of the
full deck), followed by the table size one-hot. :func:`padded_index` maps an index of a
table's own layout to the padded one, so a sparse observation goes straight in.

The network: two hidden layers of rectified linear units and a softmax over the
variant's fixed action space, of which only the legal actions count (:meth:`Policy.probabilities`).
Two networks a variant, written by :mod:`sample_bots.training.train` beside this module:
the learned bot's (``classic.npz``, ``extreme.npz``), which also reads the heuristic bot's
answer (:mod:`.advice`) from one more one-hot segment over the action space, and the
inference network (``classic-rivals.npz``, ``extreme-rivals.npz``), which reads the
observation alone::

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(players=4, seed=3))
    >>> seat = game.to_act()[0]
    >>> obs = game.observe(seat)
    >>> policy = Policy.load("classic")
    >>> policy.best(obs, game.legal_actions(seat)) in game.legal_actions(seat)
    True
    >>> Policy.load("classic").advised, Policy.load("classic", RIVALS).advised
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.wire.encoding import (
    NO_PENDING,
    Pending,
    action_layout,
    decode,
    encode_sparse,
    legal_indices,
    observation_layout,
)
from engine import PREDICT, Action, variant
from sample_bots.learned.advice import advice

WEIGHTS = Path(__file__).resolve().parent
BOT, RIVALS = "", "-rivals"      # the two networks' file name endings
Floats = npt.NDArray[np.float32]
Ints = npt.NDArray[np.intp]

# Segments with one slot per seat (relative to the observer).
_PER_SEAT = {"dealer", "bid_known", "bid", "tricks_won", "leader", "scores", "predicted"}
_CARDS = {"hand", "trump_card", "played"}


def _largest(variant_name: str) -> int:
    return variant(variant_name).max_players


@cache
def padded_size(variant_name: str) -> int:
    """The length of the padded vector: the largest table's layout and the table size one-hot."""
    return observation_layout(variant_name, _largest(variant_name)).size + len(variant(variant_name).players)


@cache
def padded_index(variant_name: str, players: int) -> Ints:
    """For each index of the layout of a table of ``players``, its index in the padded vector.

    >>> m = padded_index("classic", 4)
    >>> big = observation_layout("classic", 6).slices
    >>> int(m[observation_layout("classic", 4).slices["scores"].start + 3]) == big["scores"].start + 3
    True
    """
    own = observation_layout(variant_name, players)
    big_p = _largest(variant_name)
    big = observation_layout(variant_name, big_p)
    record = variant(variant_name)
    if variant_name == "classic":
        card_slot = list(range(len(record.cards)))
    else:
        full = {code: i for i, code in enumerate(record.deck(big_p))}
        card_slot = [full[code] for code in record.deck(players)]
    d_own, d_big = len(card_slot), len(card_slot) if variant_name == "classic" else len(record.deck(big_p))
    out = np.empty(own.size, dtype=np.intp)
    for name, part in own.slices.items():
        target = big.slices[name].start
        for i in range(part.stop - part.start):
            if name in _PER_SEAT:
                j = i
            elif name in _CARDS:
                j = card_slot[i]
            elif name == "trick":
                j = (i // d_own) * d_big + card_slot[i % d_own]
            elif name == "tokens":
                j = i                       # seat k's 7 colours at k * 7: the same at every size
            elif name == "destroyer":
                j = big_p if i == players else i
            else:                           # fixed-size segments, pending_rival ((k - 1) * 5 + c)
                j = i
            out[part.start + i] = target + j
    return out


def players_index(variant_name: str, players: int) -> int:
    """The padded vector's table-size slot for ``players``."""
    return observation_layout(variant_name, _largest(variant_name)).size + variant(variant_name).players.index(players)


NEGLIGIBLE = 1e-12   # a weight this small changes no output


def _flushed(weights: npt.ArrayLike) -> Floats:
    """``weights`` as float32, with the values under :data:`NEGLIGIBLE` (weight decay leaves
    thousands of them, down to the subnormal) set to 0: a matrix product whose terms
    become subnormal runs on the CPU's slow path, 30 times slower here.

    >>> _flushed(np.array([1e-40, 1e-30, 0.5])).tolist()
    [0.0, 0.0, 0.5]
    """
    out = np.asarray(weights, dtype=np.float32).copy()
    out[np.abs(out) < NEGLIGIBLE] = 0.0
    return out


@dataclass(frozen=True)
class Policy:
    """A trained network: ``w1`` (padded input x hidden), ``w2``, ``w3`` (hidden x actions), biases."""

    variant: str
    w1: Floats
    b1: Floats
    w2: Floats
    b2: Floats
    w3: Floats
    b3: Floats

    @staticmethod
    @cache
    def load(variant_name: str, network: str = BOT, folder: Path = WEIGHTS) -> Policy:
        """The shipped weights of ``variant_name``'s network (:data:`BOT` or :data:`RIVALS`;
        cached: loaded once a process)."""
        with np.load(folder / f"{variant_name}{network}.npz") as data:
            return Policy(variant_name, *(_flushed(data[k]) for k in ("w1", "b1", "w2", "b2", "w3", "b3")))

    @property
    def advised(self) -> bool:
        """Whether the network reads the heuristic's answer (:mod:`.advice`)."""
        return bool(self.w1.shape[0] > padded_size(self.variant))

    def save(self, path: Path) -> None:
        np.savez_compressed(path, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2, w3=self.w3, b3=self.b3)

    def first_layer(self, players: int, indices: Sequence[int], values: Sequence[float], advice: int = -1) -> Floats:
        """The first layer's input sum (before its activation) for one sparse observation of a
        table's own layout (and the heuristic's action, if any and the network reads it);
        what the other layers take in :meth:`outputs`."""
        rows = padded_index(self.variant, players)[np.asarray(indices, dtype=np.intp)]
        pre = self.b1 + self.w1[players_index(self.variant, players)]
        if advice >= 0 and self.advised:
            pre = pre + self.w1[padded_size(self.variant) + advice]
        return pre + np.asarray(values, dtype=np.float32) @ self.w1[rows]

    def outputs(self, pre: Floats) -> Floats:
        """The action scores (logits) for first-layer sums ``pre`` (one row each, or one vector)."""
        h = np.maximum(pre, 0.0)
        h = np.maximum(h @ self.w2 + self.b2, 0.0)
        return h @ self.w3 + self.b3

    def probabilities(self, obs: Mapping[str, Any], options: Sequence[Any] | None,
                      pending: Pending = NO_PENDING) -> dict[int, float]:
        """Each legal action's probability (by its index in the action space)."""
        legal = legal_indices(obs, options, pending)
        logits = self._logits(obs, options, pending)[legal]
        odds = np.exp(logits - logits.max())
        return dict(zip(legal, (odds / odds.sum()).tolist()))

    def best_index(self, obs: Mapping[str, Any], options: Sequence[Any] | None, pending: Pending = NO_PENDING) -> int:
        """The legal action the network rates highest, by index."""
        legal = legal_indices(obs, options, pending)
        return legal[int(np.argmax(self._logits(obs, options, pending)[legal]))]

    def _logits(self, obs: Mapping[str, Any], options: Sequence[Any] | None, pending: Pending) -> Floats:
        indices, values = encode_sparse(obs, pending)
        hint = advice(obs, options).get(pending, -1) if self.advised else -1
        return self.outputs(self.first_layer(obs["players"], indices, values, hint))

    def best(self, obs: Mapping[str, Any], options: Sequence[Any] | None) -> Action:
        """The engine's action the network rates highest; a prediction built step by step."""
        if obs["decision"] != PREDICT:
            action = decode(obs, self.best_index(obs, options))
            assert not isinstance(action, tuple)
            return action
        pending: Pending = NO_PENDING
        while True:
            step = decode(obs, self.best_index(obs, None, pending), pending)
            if not isinstance(step, tuple):
                return step
            pending = step


def action_count(variant_name: str) -> int:
    return action_layout(variant_name).size
