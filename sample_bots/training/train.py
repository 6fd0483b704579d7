"""Train the learned policy: the search bot's decisions as data (:mod:`.generate`), a
network fitted to them with scikit-learn's ``MLPClassifier`` (the ``learn`` extra), and its
weights written as ``<variant>.npz`` and ``<variant>-rivals.npz`` for :class:`~sample_bots.learned.policy.Policy`.

It writes both networks of the variant: the learned bot's, which also reads the
heuristic's answer (:mod:`.advice`), and the inference network (``-rivals``). One
command, deterministic from its seed (the data, the split, the networks' start)::

    pip install 'wizard-arena[learn]'
    python -m sample_bots.training.train classic --games 600 --seed 1 --workers 2

The data is kept in ``--data`` (default ``learned-data/``), so a second run with more
games plays only the new ones. docs/bots.md, "The learned policy", has the run that made
the shipped weights and how long it took.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy import sparse

from sample_bots.learned.policy import (
    BOT,
    RIVALS,
    WEIGHTS,
    Policy,
    action_count,
    padded_index,
    padded_size,
    players_index,
)
from sample_bots.training.augment import action_map, feature_map, renamings
from sample_bots.training.data import DATA_WORLDS, Sample
from sample_bots.training.generate import generate, load

HIDDEN = (256, 128)
EPOCHS = 12
HELD_OUT = 0.1      # the last games' share, kept out of training to measure the network on
RENAMINGS = 4       # each training decision is shown with its suits renamed this many ways (identity included)


def matrix(variant_name: str, samples: Sequence[Sample], advised: bool = False) -> sparse.csr_matrix:
    """The padded observation vectors of ``samples``, one row each (sparse); ``advised``:
    followed by the heuristic's action, one-hot over the action space (:mod:`.advice`)."""
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    size = padded_size(variant_name)
    for r, s in enumerate(samples):
        mapped = padded_index(variant_name, s.players)[list(s.indices)].tolist()
        mapped.append(players_index(variant_name, s.players))
        values = [*s.values, 1.0]
        if advised and s.advice >= 0:
            mapped.append(size + s.advice)
            values.append(1.0)
        cols += mapped
        vals += values
        rows += [r] * len(mapped)
    width = size + (action_count(variant_name) if advised else 0)
    return sparse.csr_matrix((np.asarray(vals, dtype=np.float32), (rows, cols)), shape=(len(samples), width))


def renamed(variant_name: str, x: sparse.csr_matrix, y: npt.NDArray[np.intp], count: int,
            seed: int) -> tuple[sparse.csr_matrix, npt.NDArray[np.intp]]:
    """``x`` and ``y`` under ``count`` renamings of the suits (:mod:`.augment`), stacked."""
    size = padded_size(variant_name)
    xs, ys = [], []
    for perm in renamings(variant_name, count, random.Random(seed)):
        columns = np.concatenate([feature_map(variant_name, perm), size + action_map(variant_name, perm)])
        moved = x.copy()
        moved.indices = columns[moved.indices]
        moved.has_sorted_indices = False
        moved.sort_indices()
        xs.append(moved)
        ys.append(action_map(variant_name, perm)[y])
    return sparse.vstack(xs, format="csr"), np.concatenate(ys)


def fit(variant_name: str, samples: Sequence[Sample], seed: int, advised: bool, hidden: tuple[int, int] = HIDDEN,
        epochs: int = EPOCHS, renaming: int = RENAMINGS) -> tuple[Policy, float]:
    """Fit a network to all but the last :data:`HELD_OUT` of ``samples`` (each shown under
    ``renaming`` renamings of its suits; ``advised``: the learned bot's network, which also
    reads the heuristic's action); returns it and its accuracy on the held-out ones (the
    share of decisions where its best legal action is the search bot's)."""
    from sklearn.neural_network import MLPClassifier

    cut = int(len(samples) * (1 - HELD_OUT))
    train, test = samples[:cut], samples[cut:]
    x, y = renamed(variant_name, matrix(variant_name, train, advised), np.asarray([s.action for s in train]),
                   renaming, seed)
    net = MLPClassifier(hidden_layer_sizes=hidden, batch_size=256, learning_rate_init=1e-3,
                        alpha=1e-4, max_iter=epochs, random_state=seed, verbose=False, shuffle=True)
    net.fit(x, y)
    actions = action_count(variant_name)
    w3 = np.zeros((hidden[1], actions), dtype=np.float32)
    b3 = np.full(actions, -30.0, dtype=np.float32)   # an action never seen in the data: nearly never
    w3[:, net.classes_] = net.coefs_[2]
    b3[net.classes_] = net.intercepts_[2]
    policy = Policy(variant_name, net.coefs_[0].astype(np.float32), net.intercepts_[0].astype(np.float32),
                    net.coefs_[1].astype(np.float32), net.intercepts_[1].astype(np.float32), w3, b3)
    return policy, accuracy(policy, test)


def accuracy(policy: Policy, samples: Sequence[Sample]) -> float:
    """The share of ``samples`` whose action is the policy's best legal one."""
    if not samples:
        return float("nan")
    right = 0
    for s in samples:
        logits = policy.outputs(policy.first_layer(s.players, s.indices, s.values, s.advice))
        legal = list(s.legal)
        right += legal[int(np.argmax(logits[legal]))] == s.action
    return right / len(samples)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the learned policy on the search bot's decisions.")
    parser.add_argument("variant", choices=("classic", "extreme"))
    parser.add_argument("--games", type=int, default=600, help="games of search-bot self-play (default 600)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="processes playing the games")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--renamings", type=int, default=RENAMINGS, help="suit renamings of each decision")
    parser.add_argument("--worlds", type=int, default=DATA_WORLDS, help="the search bot's worlds a decision")
    parser.add_argument("--data", type=Path, default=Path("learned-data"))
    parser.add_argument("--out", type=Path, default=None, help="the weights' folder (default: the shipped ones')")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    generate(args.variant, args.games, args.seed, args.data, args.workers, args.worlds)
    played = time.perf_counter()
    samples = load(args.data, args.variant, args.seed, args.games, args.worlds)
    print(f"{args.variant}: {len(samples)} decisions from {args.games} games in {played - started:.0f} s", flush=True)
    for network, advised in ((BOT, True), (RIVALS, False)):
        began = time.perf_counter()
        policy, held_out = fit(args.variant, samples, args.seed, advised, epochs=args.epochs,
                               renaming=args.renamings)
        out = (args.out or WEIGHTS) / f"{args.variant}{network}.npz"
        policy.save(out)
        print(f"{out.name}: trained in {time.perf_counter() - began:.0f} s, held-out accuracy {100 * held_out:.1f}%",
              flush=True)


if __name__ == "__main__":
    main()
