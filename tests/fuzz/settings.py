"""What a fuzz run is given and what it hands back: the protocol's constants the
message makers play with, :class:`FuzzSettings` (everything a run uses besides its
seed and length) and :class:`FuzzReport` (what it did and found; ``ok`` is False when
an invariant was violated).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from engine import variant

HONEST_BOTS: dict[str, str] = {
    "random": "sample_bots.random_bot",
    "greedy": "sample_bots.greedy_bot",
    "heuristic": "sample_bots.heuristic_bot",
    "cautious": "sample_bots.cautious_bot",
}
U32 = 2**32 - 1
U64 = 2**64 - 1
# The server refuses messages over 1 MiB; the fuzzer's own limits are far above anything it gets.
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 64 * 1024 * 1024),
                  ("grpc.max_send_message_length", 64 * 1024 * 1024)]
MESSAGE_LIMIT = 1024 * 1024
# The colours of Wizard Extreme's cards and tokens (white and black aside): what predictions name.
COLOURS = variant("extreme").suits
# Options a bot must never get accepted: none of them is ever in a request's options.
FIXED_BAD_OPTIONS = ("00", "01", "-1", "x7", "b14", "W5", "", " ", "J0", "W0", "r0", "-0", "+1", "1.0",
                     "1e1", "0x1", "null", "true", "[]", "{}", "\U0001F0A1", "ß", "日本", "\x00", "\ufeff1",
                     "١", "blue ", "BLUE", "pink", "white", "black", "red\n", "b7\n", "b 7", "b07")


@dataclass
class FuzzSettings:
    """Everything a run uses besides its seed and length."""

    fuzz_bots: int = 5
    fuzz_tables: int = 3           # concurrent match loops with fuzz seats
    honest_tables: int = 1         # concurrent match loops with sample bots only
    honest_slots: int = 8          # --max-matches of each sample bot process
    move_time: float = 0.2         # fuzzed matches (and the server's defaults)
    time_bank: float = 0.5
    grace: float = 1.0
    honest_move_time: float = 2.0  # honest-only matches: no timeout on a loaded machine
    honest_time_bank: float = 20.0
    rss_limit_mb: float = 400.0
    match_timeout: float = 180.0   # RunMatch deadline: a match still running then is a violation
    # The server to fuzz, before its own options; empty: this checkout's `arena serve`.
    # (E.g. ["env", "PYTHONPATH=/tmp/old", sys.executable, "-m", "arena.cli", "serve"] for another version.)
    server_command: tuple[str, ...] = ()
    drain_timeout: float = 120.0   # how long the end waits for running matches
    # A count budget: the run stops once it sent this many messages and finished this many
    # matches of each sort (fuzzed, honest), or at its ``seconds``, whichever comes first.
    # 0 and 0: it runs for its ``seconds``.
    stop_after_messages: int = 0
    stop_after_matches: int = 0


@dataclass
class FuzzReport:
    """What a run did and found. ``ok`` is False when an invariant was violated."""

    seed: int
    seconds: float
    elapsed_s: float = 0.0
    messages_sent: dict[str, int] = field(default_factory=dict)      # by BotMessage oneof: hello, action, empty
    behaviours: dict[str, int] = field(default_factory=dict)         # what was sent, by fuzz case
    probes: dict[str, int] = field(default_factory=dict)             # extra streams, by kind
    streams: int = 0
    stream_ends: dict[str, int] = field(default_factory=dict)        # by final status (CANCELLED_BY_FUZZER, ...)
    matches_fuzzed: int = 0
    matches_honest: int = 0
    run_match_errors: dict[str, int] = field(default_factory=dict)   # by status code (not violations)
    faults_by_kind: dict[str, int] = field(default_factory=dict)     # every stored fault
    fuzz_seat_faults: dict[str, int] = field(default_factory=dict)
    honest_seat_faults_in_fuzzed: dict[str, int] = field(default_factory=dict)
    forfeits: int = 0
    faults_told: int = 0                                              # Fault messages the fuzz bots got
    stray_faults_told: int = 0                                        # ... of them with no match
    peak_rss_mb: float = 0.0
    rss_timeline_mb: list[float] = field(default_factory=list)       # every 5 s from the start of fuzzing
    final_rss_mb: float = 0.0
    server_alive: bool = False
    violations: list[str] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    server_tracebacks: list[str] = field(default_factory=list)       # "N x <summary>" from its stderr
    server_log: list[str] = field(default_factory=list)              # its other stderr lines, "N x <line>"
    workdir: str | None = None

    @property
    def ok(self) -> bool:
        return not self.violations

    def total_sent(self) -> int:
        return sum(self.messages_sent.values())

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok, "total_sent": self.total_sent()}

    def figures(self) -> dict[str, Any]:
        """Flat figures for ``python -m fuzz`` (lists become counts; details in ``to_json``)."""
        out: dict[str, Any] = {"seed": self.seed, "fuzz_seconds": self.seconds, "elapsed_s": round(self.elapsed_s, 1),
                               "messages_sent": self.total_sent()}
        out.update({f"sent_{k}": v for k, v in sorted(self.messages_sent.items())})
        out.update({"streams": self.streams, "matches_fuzzed": self.matches_fuzzed,
                    "matches_honest": self.matches_honest, "forfeits": self.forfeits})
        out.update({f"faults_{k}": v for k, v in sorted(self.faults_by_kind.items())})
        out.update({f"run_match_error_{k}": v for k, v in sorted(self.run_match_errors.items())})
        out.update({"faults_told": self.faults_told, "peak_rss_mb": round(self.peak_rss_mb, 1),
                    "final_rss_mb": round(self.final_rss_mb, 1), "server_alive": str(self.server_alive).lower(),
                    "server_tracebacks": len(self.server_tracebacks), "anomalies": len(self.anomalies),
                    "violations": len(self.violations)})
        return out
