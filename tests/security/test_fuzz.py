"""The protocol fuzzer against a real `arena serve`: a fixed seed and a count budget (so
many messages, so many matches of each sort), the same work on a busy machine as on an
idle one.

A failure names the violated invariants; repeat the run with
``python -m fuzz --seconds 30 --seed 7 --workdir DIR`` in ``tests/`` to keep the server's
log and the trace of every message sent (see tests/fuzz/).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz import FuzzReport, FuzzSettings, run_fuzz

pytestmark = pytest.mark.slow   # several seconds of fuzzing; `pytest -m "not slow"` skips it

SEED = 7
MESSAGES = 1500   # about 5 s on 2 idle cores
MATCHES = 8       # of each sort, fuzzed and honest
SECONDS = 120.0   # the cap: a run that cannot spend its budget in this long fails below


def describe(report: FuzzReport) -> str:
    shown = {key: value for key, value in report.to_json().items()
             if key in ("violations", "anomalies", "server_tracebacks", "messages_sent", "matches_fuzzed",
                        "matches_honest", "faults_by_kind", "run_match_errors", "peak_rss_mb", "server_alive")}
    return json.dumps(shown, indent=1, ensure_ascii=False)


def test_the_server_survives_fuzzing_with_its_invariants() -> None:
    report = run_fuzz(seconds=SECONDS, seed=SEED,
                      settings=FuzzSettings(stop_after_messages=MESSAGES, stop_after_matches=MATCHES))
    details = describe(report)
    # The four invariants: the server answers, honest matches are clean, fuzzed matches
    # complete with their faults stored, memory stays bounded.
    assert report.violations == [], details
    assert report.server_alive, details
    assert report.peak_rss_mb < 400, details
    # The run spent its budget: messages of every kind, and matches of both sorts.
    assert report.total_sent() >= MESSAGES, f"only {report.total_sent()} messages sent\n{details}"
    assert all(report.messages_sent.get(kind, 0) > 0 for kind in ("hello", "action", "empty")), details
    assert report.matches_fuzzed >= MATCHES, details
    assert report.matches_honest >= MATCHES, details
    assert sum(report.fuzz_seat_faults.values()) > 0, details
    assert report.faults_told > 0, details


def test_the_fuzzers_command_line_refuses_a_workdir_it_cannot_make_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    # The checkout first, then tests/: tests/engine/ would otherwise shadow the engine package.
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(root), str(root / "tests"), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "fuzz", "--workdir", "a-file", "--seconds", "1"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().endswith("cannot make the folder a-file: File exists")
