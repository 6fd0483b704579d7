"""Write training data to a folder, a file per chunk of games, over several processes.

A chunk already written is kept, so a stopped run goes on where it stopped::

    python -m sample_bots.training.generate classic --games 400 --seed 1 --workers 2 --out data/
"""

from __future__ import annotations

import argparse
import pickle
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sample_bots.training.data import DATA_WORLDS, Sample, self_play

CHUNK = 5   # games a file


def _chunk(variant_name: str, seed: int, start: int, stop: int, worlds: int, path: Path) -> int:
    samples = self_play(variant_name, seed, range(start, stop), worlds)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(samples, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)
    return len(samples)


def chunk_path(out: Path, variant_name: str, seed: int, start: int, end: int, worlds: int = DATA_WORLDS) -> Path:
    """The file of games ``start`` to ``end`` (excluded), played with ``worlds`` a decision."""
    return out / f"{variant_name}-s{seed}-w{worlds}-g{start:05d}-{end:05d}.pkl"


def chunks(games: int) -> list[tuple[int, int]]:
    """The first ``games`` games in chunks of :data:`CHUNK` (the last one maybe shorter).

    >>> chunks(12)
    [(0, 5), (5, 10), (10, 12)]
    """
    return [(s, min(games, s + CHUNK)) for s in range(0, games, CHUNK)]


def generate(variant_name: str, games: int, seed: int, out: Path, workers: int = 1,
             worlds: int = DATA_WORLDS) -> None:
    """Play the first ``games`` games (in chunks of :data:`CHUNK`) and write the chunks not
    yet written."""
    out.mkdir(parents=True, exist_ok=True)
    todo = [(a, b) for a, b in chunks(games) if not chunk_path(out, variant_name, seed, a, b, worlds).exists()]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_chunk, variant_name, seed, a, b, worlds,
                               chunk_path(out, variant_name, seed, a, b, worlds)) for a, b in todo]
        for i, future in enumerate(futures, 1):
            n = future.result()
            print(f"{variant_name}: chunk {i}/{len(todo)}: {n} samples, {time.perf_counter() - started:.0f} s",
                  flush=True)


def load(out: Path, variant_name: str, seed: int, games: int, worlds: int = DATA_WORLDS) -> list[Sample]:
    """The samples of the first ``games`` games of ``variant_name`` and ``seed``, in game
    order (written by :func:`generate`)."""
    samples: list[Sample] = []
    for a, b in chunks(games):
        samples.extend(pickle.loads(chunk_path(out, variant_name, seed, a, b, worlds).read_bytes()))
    return samples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The search bot's decisions as training data.")
    parser.add_argument("variant", choices=("classic", "extreme"))
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=DATA_WORLDS)
    parser.add_argument("--out", type=Path, default=Path("learned-data"))
    args = parser.parse_args(argv)
    generate(args.variant, args.games, args.seed, args.out, args.workers, args.worlds)


if __name__ == "__main__":
    main()
