"""The fuzz sessions' shared tally, and the checks on the stored matches.

:class:`Tally` is what every session of a run counts and knows (one event loop: no
locks): messages sent by kind, behaviours, probes, how streams ended, the request ids
seen, and every ``Fault`` a fuzz bot was told. :class:`Played` is a match the organiser
loops ran. :func:`check_records` checks invariants 2 and 3 (see :mod:`fuzz`)
on the stored matches; :func:`collect` copies the tally into the report.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.records import MatchRecord
from fuzz.settings import FuzzReport


@dataclass
class Told:
    """A Fault a fuzz bot received."""

    kind: str
    request_id: int
    forfeited: bool
    faults: int              # the seat's faults so far, as the Fault said


class Tally:
    """Counters and shared knowledge of all fuzz sessions (one event loop: no locks)."""

    def __init__(self, trace: Any | None) -> None:
        self.sent: Counter[str] = Counter()
        self.behaviours: Counter[str] = Counter()
        self.probes: Counter[str] = Counter()
        self.stream_ends: Counter[str] = Counter()
        self.streams = 0
        # Request ids seen by any fuzz session: answers "for another seat or request".
        self.request_ids: deque[int] = deque(maxlen=2000)
        self.newest_id = 0
        self.options_seen: deque[str] = deque(maxlen=500)
        self.told: dict[tuple[str, str], list[Told]] = {}
        self.stray_told = 0
        self.anomalies: list[str] = []
        self._trace = trace

    @property
    def tracing(self) -> bool:
        return self._trace is not None

    def trace(self, **entry: Any) -> None:
        if self._trace is not None:
            self._trace.write(json.dumps(entry, ensure_ascii=True) + "\n")

    def anomaly(self, text: str) -> None:
        if len(self.anomalies) < 200:
            self.anomalies.append(text)


@dataclass
class Played:
    """A match the organiser loops ran: what was asked and what came back."""

    match_id: str
    fuzzed: bool
    bots: list[str]
    fuzz_bots: list[str]
    record: MatchRecord | None = None     # as RunMatch returned it
    error: str | None = None


def check_records(report: FuzzReport, tally: Tally, db: Path, played_matches: list[Played]) -> None:
    """Invariants 2 and 3 on every match whose RunMatch call returned a record: it was
    stored, and :func:`check_match` finds it as it should be."""
    from arena.store import Store, StoreError

    with Store(str(db)) as store:
        for played in played_matches:
            if played.record is None:
                continue
            try:
                stored = store.load_match(played.match_id)
            except StoreError:
                report.violations.append(f"match {played.match_id} was played but not stored")
                continue
            check_match(report, tally, played, stored)


def check_match(report: FuzzReport, tally: Tally, played: Played, stored: MatchRecord) -> None:
    """One stored match: completed; an honest one without faults, a fuzzed one with the
    faults RunMatch returned and every fault its fuzz bots were told (:func:`check_told`)."""
    record = played.record
    assert record is not None
    tag = f"match {played.match_id} ({'fuzzed' if played.fuzzed else 'honest'}, bots {played.bots})"
    if stored.status != "completed" or record.status != "completed":
        report.violations.append(f"{tag} ended {stored.status!r}, not 'completed'")
    kinds = Counter(f.kind for f in stored.faults)
    for kind, n in kinds.items():
        report.faults_by_kind[kind] = report.faults_by_kind.get(kind, 0) + n
    report.forfeits += sum(stored.forfeited)
    if not played.fuzzed:
        report.matches_honest += 1
        if stored.faults:
            report.violations.append(f"{tag} has {len(stored.faults)} fault(s) between honest bots: "
                                     + "; ".join(f"seat {f.seat} {f.kind}: {f.message[:80]}"
                                                 for f in stored.faults[:5]))
        return
    report.matches_fuzzed += 1
    returned = Counter((f.seat, f.kind) for f in record.faults)
    kept = Counter((f.seat, f.kind) for f in stored.faults)
    if returned != kept:
        report.violations.append(f"{tag}: the stored faults {dict(kept)} differ from the returned ones "
                                 f"{dict(returned)}")
    fuzz_seats = {seat for seat, bot in enumerate(stored.bots) if bot in played.fuzz_bots}
    for f in stored.faults:
        bucket = report.fuzz_seat_faults if f.seat in fuzz_seats else report.honest_seat_faults_in_fuzzed
        bucket[f.kind] = bucket.get(f.kind, 0) + 1
        if f.seat not in fuzz_seats and f.kind != "timeout":
            tally.anomaly(f"{tag}: honest seat {f.seat} ({f.bot}) got a {f.kind} fault: {f.message[:120]}")
    for bot in played.fuzz_bots:
        check_told(report, tally, tag, bot, stored)


def check_told(report: FuzzReport, tally: Tally, tag: str, bot: str, stored: MatchRecord) -> None:
    """Every Fault the fuzz bot was sent for this match is in the stored record."""
    seats = [seat for seat, name in enumerate(stored.bots) if name == bot]
    have = Counter((f.kind, f.request_id or 0) for f in stored.faults if f.seat in seats)
    told = [t for t in tally.told.get((bot, stored.match_id), []) if t.kind != "disconnect"]
    report.faults_told += len(told)
    missing = Counter((t.kind, t.request_id) for t in told) - have
    if missing:
        report.violations.append(f"{tag}: {bot} was sent faults that are not in the stored record: "
                                 + ", ".join(f"{k} (request {r}) x{n}" for (k, r), n in missing.items()))
    most = max((t.faults for t in tally.told.get((bot, stored.match_id), [])), default=0)
    if most > sum(1 for f in stored.faults if f.seat in seats):
        report.violations.append(f"{tag}: {bot} was told it had {most} faults, but the record holds "
                                 f"{sum(1 for f in stored.faults if f.seat in seats)}")
    if any(t.forfeited for t in told) and not any(stored.forfeited[s] for s in seats):
        report.violations.append(f"{tag}: {bot} was told it forfeited, but the record says it did not")


def collect(report: FuzzReport, tally: Tally) -> None:
    """The tally's counters, copied into the report."""
    report.messages_sent = dict(tally.sent)
    report.behaviours = dict(tally.behaviours)
    report.probes = dict(tally.probes)
    report.streams = tally.streams
    report.stream_ends = dict(tally.stream_ends)
    report.stray_faults_told = tally.stray_told
    report.anomalies = list(tally.anomalies)
