"""A CPU hog to run the suite beside: one busy process per core (or as many as given), at
the default priority (nice 0), until it is stopped. The suite must pass on a machine this
busy, so no test may hold a wall-clock bound that load can break (CONTRIBUTING.md).

    python tests/cpu_hog.py &      # or: python tests/cpu_hog.py 4
    CI=1 pytest
    kill %1

Ctrl-C or a plain ``kill`` stops it and its busy processes; they also stop by themselves
when it is gone (even after ``kill -9``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys


def spin(parent: int) -> None:
    """Count as fast as one core allows, until the hog that started this process is gone."""
    count = 0
    while True:
        count += 1
        if count % 1_000_000 == 0 and os.getppid() != parent:
            return


def main(argv: list[str]) -> None:
    busy = int(argv[0]) if argv else os.cpu_count() or 1
    processes = [multiprocessing.Process(target=spin, args=(os.getpid(),), daemon=True) for _ in range(busy)]
    for process in processes:
        process.start()
    print(f"cpu_hog: {busy} busy processes (pid {os.getpid()}); kill {os.getpid()} or Ctrl-C stops them", flush=True)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        for process in processes:
            process.join()
    except KeyboardInterrupt:
        pass
    finally:
        for process in processes:
            process.terminate()


if __name__ == "__main__":
    main(sys.argv[1:])
