"""The fuzzer from a checkout: ``python -m fuzz --seconds 60 --seed 1 [--json] [--workdir DIR]``
in ``tests/`` (or with ``tests`` on ``PYTHONPATH``); exit code 1 if an invariant was
violated, 2 on bad arguments. It prints the report's figures one a line (``--json``: the
whole report as one JSON object), then every violation, anomaly and server traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fuzz.run import run_fuzz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz",
                                     description="Protocol fuzzer against a real `arena serve`.")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="seconds of fuzzing (matches still running then are finished)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of every random choice; a failing run repeats with it")
    parser.add_argument("--workdir", type=Path, help="keep the database, logs and message trace here "
                        "(default: a temporary directory, removed)")
    parser.add_argument("--json", dest="as_json", action="store_true", help="print one JSON object (the whole report)")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 86_400:
        parser.error("--seconds must be more than 0 and at most 86400")
    if args.seed < 0:
        parser.error("--seed must be at least 0")
    if args.workdir is not None:
        try:
            args.workdir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            parser.error(f"--workdir: cannot make the folder {args.workdir}: {error.strerror}")
    report = run_fuzz(seconds=args.seconds, seed=args.seed, workdir=args.workdir)
    if args.as_json:
        print(json.dumps(report.to_json()))
    else:
        figures = report.figures()
        width = max(map(len, figures))
        for key, value in figures.items():
            shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else value
            print(f"{key:<{width}}  {shown}")
        for title, lines in (("violation", report.violations), ("anomaly", report.anomalies),
                             ("server traceback", report.server_tracebacks)):
            for line in lines:
                print(f"{title}: {line}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
