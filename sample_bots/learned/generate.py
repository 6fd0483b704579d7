"""Write training data to a folder, a file per chunk of games, over several processes.

A chunk already written is kept, so a stopped run goes on where it stopped::

    python -m sample_bots.learned.generate classic --games 400 --seed 1 --workers 2 --out data/
"""

from __future__ import annotations

import argparse
import pickle
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sample_bots.learned.data import DATA_WORLDS, Sample, self_play

CHUNK = 5   # games a file


def _chunk(variant_name: str, seed: int, start: int, stop: int, worlds: int, path: Path) -> int:
    samples = self_play(variant_name, seed, range(start, stop), worlds)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(samples, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)
    return len(samples)


def chunk_path(out: Path, variant_name: str, seed: int, start: int) -> Path:
    return out / f"{variant_name}-s{seed}-g{start:05d}.pkl"


def generate(variant_name: str, games: int, seed: int, out: Path, workers: int = 1,
             worlds: int = DATA_WORLDS) -> None:
    """Play ``games`` games (in chunks of :data:`CHUNK`) and write the chunks not yet written."""
    out.mkdir(parents=True, exist_ok=True)
    todo = [(s, min(games, s + CHUNK)) for s in range(0, games, CHUNK)
            if not chunk_path(out, variant_name, seed, s).exists()]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_chunk, variant_name, seed, a, b, worlds, chunk_path(out, variant_name, seed, a))
                   for a, b in todo]
        for i, future in enumerate(futures, 1):
            n = future.result()
            print(f"{variant_name}: chunk {i}/{len(todo)}: {n} samples, {time.perf_counter() - started:.0f} s",
                  flush=True)


def load(out: Path, variant_name: str, seed: int) -> list[Sample]:
    """Every sample written for ``variant_name`` and ``seed``, in game order."""
    samples: list[Sample] = []
    for path in sorted(out.glob(f"{variant_name}-s{seed}-g*.pkl")):
        samples.extend(pickle.loads(path.read_bytes()))
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
