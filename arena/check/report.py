"""What ``arena bot check`` found, and the report's words.

:class:`CheckReport` holds it (:attr:`CheckReport.passed` decides the exit code): how
the bot said Hello (:class:`BotHello`) and every match's :class:`MatchOutcome` (its
faults, the decisions it answered, their times: :func:`outcome_of`). The timing
analysis behind the note on slow decisions (:func:`queueing`, :func:`slow_note`) tells
whether its answers queued behind each other; the bot's output is scanned for error
reports. The rest is the report's lines: the header, a match, a variant's end, the
verdict.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from arena.check.plan import OPPONENTS, CheckSettings, ScheduledMatch
from arena.records import FaultRecord, MatchRecord
from arena.referee.limits import MAX_FAULTS
from engine import VARIANT_RECORDS, VARIANTS, GameConfig, replay_record, variant

# A decision slower than this share of the limit works here but may time out on a
# busier machine: worth a note.
SLOW_SHARE = 0.5
# The note tells why: decisions that overlapped one of the bot's decisions in another match
# taking this many times as long as the others (a median of each, with at least
# QUEUE_SAMPLE of each) means its answers queued behind each other.
QUEUE_RATIO = 1.5
QUEUE_SAMPLE = 5
# Lines of a bot's output that say its code failed: a Python traceback, and the
# "decision failed" the SDK and the Node.js bots log when they send the fallback.
ERROR_LINE = re.compile(r"Traceback \(most recent call last\)|decision failed")


# The decision kinds in the order the report lists them, with the word for one of them
# ("answered 67 bids, 5 trump choices, ..."); KINDS: each variant's (its record's).
KIND_WORDS: tuple[tuple[str, str], ...] = (("bid", "bid"), ("trump", "trump choice"), ("predict", "prediction"),
                                           ("play", "play"), ("pay", "payment"))
KINDS: dict[str, tuple[tuple[str, str], ...]] = {
    name: tuple((kind, word) for kind, word in KIND_WORDS if kind in record.decision_kinds)
    for name, record in VARIANT_RECORDS.items()}


# ---------------------------------------------------------------------- results


@dataclass
class MatchOutcome:
    """What one match says about the bot."""

    match: ScheduledMatch
    record: MatchRecord
    faults: list[FaultRecord]        # the bot's, in order
    latencies_ms: list[float]        # its answered decisions (faulted ones have none)
    answered: Counter[str]           # the decisions it answered legally, by kind
    cut_short: bool = False          # the bot exited during the match
    span: tuple[float, float] | None = None   # when it began and ended (time.monotonic()), if known
    kinds: list[str] = field(default_factory=list)   # the kind of each of its decisions, answered or not

    @property
    def seat(self) -> int:
        return self.match.seat

    @property
    def forfeited(self) -> bool:
        return self.record.forfeited[self.seat]

    def bank_drawn_ms(self, move_time: float) -> float:
        """Time the bot drew from its bank in this match: what its decisions took beyond the limit."""
        limit = move_time * 1000
        return sum(max(0.0, latency - limit) for latency in self.latencies_ms)


@dataclass
class BotHello:
    """How the bot introduced itself."""

    version: str
    variants: list[str]     # empty: both
    slots: int              # matches it takes at once
    seconds: float          # from its start to its Welcome
    connections: int = 1    # its streams (one per process of a bot that plays in several)


@dataclass
class CheckReport:
    """Everything the check found; :attr:`passed` decides the exit code."""

    settings: CheckSettings
    log_dir: Path
    hello: BotHello | None = None
    outcomes: list[MatchOutcome] = field(default_factory=list)
    not_played: dict[str, int] = field(default_factory=dict)   # variant -> matches a forfeit or an exit left out
    failure: str | None = None       # why the check could not go on, one line
    notes: list[str] = field(default_factory=list)             # worth knowing, not failures
    seconds: float = 0.0

    @property
    def faults(self) -> list[FaultRecord]:
        return [fault for outcome in self.outcomes for fault in outcome.faults]

    @property
    def passed(self) -> bool:
        return self.failure is None and bool(self.outcomes) and not self.faults


def outcome_of(match: ScheduledMatch, record: MatchRecord, cut_short: bool = False) -> MatchOutcome:
    """The bot's part of a finished (or cut short) match: its faults, and the kind and
    time of every decision it answered legally (the action log replayed; a decision
    the referee played for it, after a fault or a forfeit, has no time)."""
    seat = match.seat
    game = replay_record(record.config, [])     # then one decision at a time, timed
    answered: Counter[str] = Counter()
    latencies = []
    kinds = []
    for (who, action), latency in zip(record.actions, record.latencies_ms):
        if who == seat:
            kinds.append(game.decision(who).kind)
            if latency is not None:
                answered[kinds[-1]] += 1
                latencies.append(latency)
        game.apply(who, action)
    faults = [fault for fault in record.faults if fault.seat == seat]
    return MatchOutcome(match, record, faults, latencies, answered, cut_short, kinds=kinds)


# ---------------------------------------------------------------------- timing


@dataclass(frozen=True)
class Queueing:
    """The bot's time per decision of one kind with and without one of its decisions in
    another match pending at the same time (medians, in ms, and how many decisions each)."""

    kind: str
    beside_ms: float
    beside: int
    alone_ms: float
    alone: int

    @property
    def queued(self) -> bool:
        """Its decisions took much longer beside another of its decisions: they waited for each other."""
        return self.beside_ms >= QUEUE_RATIO * self.alone_ms


@dataclass(frozen=True)
class Timed:
    """One of the bot's decisions placed in time (:func:`decision_spans`)."""

    start: float             # time.monotonic(), seconds
    end: float
    latency_ms: float | None  # None: it timed out
    kind: str = ""           # the decision's kind (bid, play, ...)
    beside: bool = False     # one of its decisions in another match was pending for a quarter of its time

    @property
    def took_ms(self) -> float:
        return (self.end - self.start) * 1000


TIMEOUT_MS = re.compile(r"no answer within ([0-9.]+) ms")


def decision_spans(outcome: MatchOutcome) -> list[Timed]:
    """When each of the bot's decisions in a match was pending (a timed-out one too).

    The record has the round trip of every decision but not when it was asked, and a
    match is one decision after another: so each decision is placed after the ones before
    it (a timeout took the time its fault names), spread over the match's span to absorb
    the referee's own time between them. Empty when the span is not known.
    """
    if outcome.span is None:
        return []
    seat, record = outcome.seat, outcome.record
    timeouts = [float(m.group(1)) for f in outcome.faults
                if f.kind == "timeout" and (m := TIMEOUT_MS.search(f.message))]
    durations: list[float] = []
    for (who, _), latency in zip(record.actions, record.latencies_ms):
        if latency is None and who == seat and timeouts:
            durations.append(timeouts.pop(0))
        else:
            durations.append(latency or 0.0)
    total = sum(durations)
    began, ended = outcome.span
    if total <= 0 or ended <= began:
        return []
    scale = (ended - began) / (total / 1000)
    spans, elapsed = [], 0.0
    kinds = iter(outcome.kinds)
    for (who, _), latency, duration in zip(record.actions, record.latencies_ms, durations):
        kind = next(kinds, "") if who == seat else ""
        if who == seat and duration > 0:
            start = began + elapsed / 1000 * scale
            spans.append(Timed(start, start + duration / 1000, latency, kind))
        elapsed += duration
    return spans


def timed_decisions(outcomes: list[MatchOutcome]) -> list[Timed]:
    """Every decision of the bot in time, each marked *beside* when one of its decisions in
    another match was pending for at least a quarter of its time."""
    spans = [decision_spans(outcome) for outcome in outcomes]
    out = []
    for index, mine in enumerate(spans):
        others = [t for other, theirs in enumerate(spans) if other != index and theirs
                  and theirs[0].start < mine[-1].end and mine[0].start < theirs[-1].end for t in theirs] if mine else []
        for t in mine:
            quarter = (t.end - t.start) / 4
            beside = any(min(t.end, o.end) - max(t.start, o.start) >= quarter for o in others)
            out.append(Timed(t.start, t.end, t.latency_ms, t.kind, beside))
    return out


def queueing(decisions: list[Timed], kind: str) -> Queueing | None:
    """Whether the bot's answered decisions of one kind were slower beside another than alone.

    A bot that answers its matches one at a time makes the beside ones wait (the alone
    ones show its real time per decision), and so does Python code computing in threads
    that share one core; a bot answering each match on its own takes as long either way.
    Only decisions of one kind are compared: a bot that thinks long over its plays and not
    at all over its bids would otherwise seem to queue, its plays (mostly beside another
    match's) set against its bids. None without :data:`QUEUE_SAMPLE` of each.
    """
    answered = [t for t in decisions if t.latency_ms is not None and t.kind == kind]
    beside = [t.latency_ms for t in answered if t.latency_ms is not None and t.beside]
    alone = [t.latency_ms for t in answered if t.latency_ms is not None and not t.beside]
    if len(beside) < QUEUE_SAMPLE or len(alone) < QUEUE_SAMPLE:
        return None
    return Queueing(kind, statistics.median(beside), len(beside), statistics.median(alone), len(alone))


# What a bot whose answers queue can do about it.
QUEUE_REMEDY = ("The Python SDK answers each match in a thread of its own (when run() is given the bot's class, "
                "not one instance for every seat), but Python code that computes runs on one core at a time (the "
                "GIL): --processes 2 plays in two processes, a core each (docs/bot-authors.md); a bot without the "
                "SDK must answer its matches without waiting for each other")


def slow_note(outcomes: list[MatchOutcome], settings: CheckSettings) -> str | None:
    """The note on a decision slower than SLOW_SHARE of the limit, with its cause as far as
    the timing tells it: the kind most of the slow decisions were, beside another match's
    decision and alone (:func:`queueing`); without enough of that kind both ways, no
    cause. None when every decision was quick enough."""
    latencies = [latency for o in outcomes for latency in o.latencies_ms]
    limit = settings.move_time * 1000
    if not latencies or max(latencies) <= SLOW_SHARE * limit:
        return None
    slow = f"its slowest decision took {ms(max(latencies))}, over {SLOW_SHARE:.0%} of the {ms(limit)} limit"
    decisions = timed_decisions(outcomes)
    slow_kinds = Counter(t.kind for t in decisions if t.took_ms > SLOW_SHARE * limit)   # timeouts too
    found = queueing(decisions, slow_kinds.most_common(1)[0][0]) if slow_kinds else None
    if found is not None and found.queued:
        return (f"{slow}, and its {kind_words(found.kind)} queued behind each other: a median of "
                f"{ms(found.beside_ms)} while another of its matches waited for an answer too, "
                f"{ms(found.alone_ms)} otherwise. {QUEUE_REMEDY}")
    if found is not None:
        return (f"{slow}: its own time per {KIND_WORD.get(found.kind, 'decision')}, as long while another match "
                f"waited for it as when none did (median {ms(found.beside_ms)} against {ms(found.alone_ms)}); "
                "on a busier machine it may time out")
    return f"{slow}: on a busier machine it may time out"


KIND_WORD = dict(KIND_WORDS)


def kind_words(kind: str) -> str:
    """The words for several decisions of a kind.

    >>> kind_words("play"), kind_words("trump")
    ('plays', 'trump choices')
    """
    return KIND_WORD.get(kind, "decision") + "s"


# ---------------------------------------------------------------------- words


def ms(value: float) -> str:
    """Milliseconds, as precisely as they are worth reading.

    >>> ms(0.4213), ms(12.345), ms(1234.5)
    ('0.42 ms', '12.3 ms', '1234 ms')
    """
    return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` 0.99: p99) of a non-empty list.

    >>> percentile(list(range(1, 101)), 0.99), percentile([3.0, 1.0, 2.0], 0.5)
    (99, 2.0)
    """
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def describe(config: GameConfig) -> str:
    """A match's game in a few words.

    >>> describe(GameConfig(variant="classic", players=3))
    '3 players, 20 rounds (the last deals all 60 cards: no trump)'
    >>> describe(GameConfig(variant="classic", players=5, bidding="hidden"))
    '5 players, 12 rounds (the last deals all 60 cards: no trump), hidden bidding'
    >>> describe(GameConfig(variant="classic", players=4, length="amigo"))
    '4 players, amigo length (hand sizes 1, 3, 5, ... 15; the last deals all 60 cards: no trump)'
    >>> describe(GameConfig(variant="extreme", players=4))
    '4 players, 4 rounds of 15 tricks, ranks 1-12'
    """
    record = variant(config.variant)
    p, sizes = config.players, record.hand_sizes(config)
    cards = len(record.deck(p))
    # Where the deal decides trump (classic), a round that deals every card turns none up.
    no_trump = f"the last deals all {cards} cards: no trump" if record.trump is None and sizes[-1] * p == cards else ""
    if sizes[0] * p == cards:       # every round deals the whole deck (Wizard Extreme): its size depends on the table
        words = f"{len(sizes)} rounds of {sizes[0]} tricks, ranks 1-{record.top_rank(p)}"
    elif config.length == "amigo":
        words = f"amigo length (hand sizes {', '.join(map(str, sizes[:3]))}, ... {sizes[-1]}" + (
            f"; {no_trump})" if no_trump else ")")
    else:
        words = f"{len(sizes)} rounds" + (f" ({no_trump})" if no_trump else "")
    extras = [f"{config.bidding} bidding"] if config.bidding != "open" else []
    extras += ["±1 rule"] if config.plus_minus_one else []
    return ", ".join([f"{p} players", words, *extras])


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 fault``, ``2 faults``.

    >>> plural(1, "fault"), plural(3, "match", "matches")
    ('1 fault', '3 matches')
    """
    return f"{count} {word if count == 1 else (words or word + 's')}"


def match_lines(outcome: MatchOutcome) -> list[str]:
    """A match in the report: one line, then a line per fault."""
    record, seat = outcome.record, outcome.seat
    config = outcome.match.config
    if outcome.cut_short:
        verdict, how = "CUT", "cut short: the bot exited"
    elif outcome.faults:
        verdict = "FAULTS"
        how = plural(len(outcome.faults), "fault") + (
            ", forfeited (the fallback played its seat to the end)" if outcome.forfeited else "")
    else:
        verdict, how = "ok", f"place {record.places[seat]} of {config.players}"
    lines = [f"  {verdict:<7} {describe(config)}; seat {seat}: {how}"]
    for fault in outcome.faults:
        lines.append(f"            {fault.kind}: {fault.message}")
    return lines


def variant_lines(variant: str, outcomes: list[MatchOutcome], settings: CheckSettings, not_played: int,
                  stopped: bool = False, unreadable: str | None = None) -> list[str]:
    """The end of a variant in the report: what the bot answered, and how fast (or why no
    answer counted, :func:`no_answer_words`; ``unreadable``: why the referee could not
    read one of its messages)."""
    lines = []
    if not_played:
        why = "the check could not go on" if stopped else "a forfeit ends the variant's check"
        lines.append(f"  {plural(not_played, 'match', 'matches')} not played: {why}")
    kinds: Counter[str] = sum((o.answered for o in outcomes), Counter())
    answered = ", ".join(plural(kinds[kind], word) for kind, word in KINDS[variant] if kinds[kind])
    # A kind it never met is worth saying (e.g. no payment: it never won a trick with
    # two tokens to choose from), unless a forfeit or an exit explains it.
    never = [word + "s" for kind, word in KINDS[variant] if not kinds[kind]]
    cut = any(o.forfeited or o.cut_short for o in outcomes)
    remark = f" (no {', no '.join(never)} came up)" if never and not cut else ""
    lines.append(f"  answered {answered or 'nothing'}{remark}")
    latencies = [latency for o in outcomes for latency in o.latencies_ms]
    drawn = max((o.bank_drawn_ms(settings.move_time) for o in outcomes), default=0.0)
    limits = (f"limit {ms(settings.move_time * 1000)} + a {ms(settings.time_bank * 1000)} bank per match; "
              f"bank used: {ms(drawn) + ' in one match' if drawn else 'none'}")
    if latencies:
        lines.append(f"  time per decision: median {ms(statistics.median(latencies))}, "
                     f"p99 {ms(percentile(latencies, 0.99))}, max {ms(max(latencies))} ({limits})")
    else:
        lines.append(f"  time per decision: {no_answer_words(outcomes, unreadable)} ({limits})")
    return lines


def no_answer_words(outcomes: list[MatchOutcome], unreadable: str | None = None) -> str:
    """Why no decision of the bot has a time: a message the referee could not read
    (``unreadable``), else the first fault that was not a timeout, else none came in time.

    >>> no_answer_words([], "Error parsing message with type 'wizard_arena.v1.BotMessage'")
    "none answered: its answers were not valid messages (Error parsing message with type \
'wizard_arena.v1.BotMessage'), and the referee ended its stream"
    >>> no_answer_words([])
    'no decision answered in time'
    """
    if unreadable is not None:
        return f"none answered: its answers were not valid messages ({unreadable}), and the referee ended its stream"
    fault = next((f for o in outcomes for f in o.faults if f.kind != "timeout"), None)
    if fault is not None:
        return f"none answered (the first fault, {fault.kind}: {fault.message})"
    return "no decision answered in time"


def header_lines(settings: CheckSettings, hello: BotHello) -> list[str]:
    """The start of the report, once the bot has connected: who it is and what it is up against."""
    plays = " and ".join(hello.variants) + " only" if hello.variants and len(hello.variants) < len(VARIANTS) \
        else f"{' and '.join(VARIANTS)}"
    return [
        f"{settings.name} ({settings.command}) connected in {hello.seconds:.1f} s: version "
        f"{hello.version!r}, plays {plays}, takes {plural(hello.slots, 'match', 'matches')} at once"
        + (f" on {hello.connections} connections" if hello.connections > 1 else ""),
        f"  opponents: the Python sample bots ({', '.join(sorted({n.split('-')[0] for n, _ in OPPONENTS}))}); "
        f"seed {settings.seed} (--seed {settings.seed} plays the same deals and seats)",
        f"  limits as in a tournament: {ms(settings.move_time * 1000)} per decision + "
        f"{ms(settings.time_bank * 1000)} time bank per match; {MAX_FAULTS} faults forfeit a match",
    ]


def verdict_line(report: CheckReport) -> str:
    """The last line of the report: PASSED or FAILED, and why."""
    played = len(report.outcomes)
    variants = sorted({o.match.planned.variant for o in report.outcomes})
    where = f"{plural(played, 'match', 'matches')} ({', '.join(variants) or 'none'}) in {report.seconds:.1f} s"
    if report.passed:
        return f"PASSED: {where}, no faults"
    problems = []
    if report.faults:
        kinds = Counter(fault.kind for fault in report.faults)
        problems.append(plural(len(report.faults), "fault") + " (" +
                        ", ".join(f"{n} {kind}" for kind, n in kinds.most_common()) + ")")
    if report.failure:
        problems.append(report.failure)
    return f"FAILED: {where}: {'; '.join(problems) or 'no match was played'}"


def count_error_reports(log: Path) -> int:
    """How many times a bot's output says its code failed. The SDK's "decision failed"
    line comes with the traceback after it: that is one report, not two."""
    try:
        lines = log.read_text("utf-8", "replace").splitlines()
    except OSError:
        return 0
    count, previous = 0, ""
    for line in lines:
        if ERROR_LINE.search(line) and not ("Traceback" in line and "decision failed" in previous):
            count += 1
        previous = line
    return count


def first_error(log: Path, limit: int = 200) -> str | None:
    """The exception line that ends the first traceback in a bot's output
    (``RuntimeError: bug in a hook``), or None."""
    try:
        lines = log.read_text("utf-8", "replace").splitlines()
    except OSError:
        return None
    tracing = False
    for line in lines:
        if "Traceback (most recent call last)" in line:
            tracing = True
        elif tracing and line.strip() and not line[0].isspace():
            if line.startswith(("During handling of", "The above exception")):
                continue
            return line.strip()[:limit]
    return None


def output_tail(log: Path, lines: int = 3, limit: int = 300) -> str:
    """The last lines of a bot's output, on one line."""
    try:
        text = log.read_bytes()[-20_000:].decode("utf-8", "replace")
    except OSError:
        return "no output"
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    joined = " | ".join(tail)
    return f"its last output: {joined[-limit:]}" if tail else "it printed nothing"
