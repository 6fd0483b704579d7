"""``arena bot check COMMAND``: a bot's validation run, before it enters a tournament.

Kaggle plays every submission in a validation episode before it may compete; this is
that episode for the arena. The bot is started exactly as ``arena tournament --bot``
starts it (its command from :func:`arena.tournament.lineup.parse_bot_option`, then
``--arena HOST:PORT --token T`` and the ``ARENA_*`` environment), against a referee in
this process on a free loopback port, and plays the short but demanding matches of
:data:`PLAN` against the Python sample bots:

* classic at every table size (3-6 players), each game full length, so it meets the
  biggest hands (20 cards) and the last round where every card is dealt and there is
  no trump; hidden and secret bidding, the ±1 rule and the amigo length once each;
  every classic deal is chosen so that the bot deals a turned-up Wizard (it must
  choose trump) at least once;
* extreme at every table size (3-5), full length;
* up to :data:`CONCURRENCY` matches at once on its connection, as a tournament does.

Only the variants its Hello names are played (none named: both), or the one
``--variant`` asks for. The report gives, per variant, every match with the referee's
faults (kind and message), the decisions it answered, and its time per decision
(median, p99, max, as the referee measured the round trip) next to the limits.

The sample bots play in this process through the SDK (:class:`arena.sdk.BotClient`):
on a small machine four more Python processes would cost more than the check. Nothing
is stored (``ArenaServer(store=None)``); the bot's output, and the referee's and the
opponents' logs, go to a temporary folder that is kept, and named, when something
went wrong, and removed when the bot passed.

A decision slower than half the limit earns a note, and the note says why when the
timing shows it (:func:`queueing`): decisions that overlapped one of the bot's own
decisions in its other match were much slower than the rest, so its answers queued
behind each other (a bot answering one decision at a time, or Python threads sharing
one core); otherwise the time is the bot's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import re
import secrets
import shlex
import shutil
import signal
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.records import FaultRecord, MatchRecord, MatchSpec
from arena.referee.limits import GRACE, MAX_FAULTS, MAX_SECONDS
from arena.tournament.bot_limits import BotLimits
from arena.tournament.lineup import BotEntry, BotProcesses, LineupError, check_name, parse_bot_option, socket_folder
from arena.tournament.sandbox import SandboxMode, find_confinement
from arena.tournament.settings import DEFAULTS, MIN_MOVE_TIME
from engine import TRUMP, VARIANTS, GameConfig, new_game
from engine.classic import NUM_CARDS, hand_sizes
from engine.extreme import DEFAULT_ROUNDS
from engine.extreme_cards import MAX_RANK

if TYPE_CHECKING:
    from arena.referee.seating import ConnectedBotInfo

# Matches played at once on the bot's connection (fewer if its Hello asks for fewer).
# A tournament plays 4; 2 is enough to catch a bot whose matches trip over each other
# (state kept per bot instead of per match) and keeps a 2-core machine responsive.
CONCURRENCY = 2
# A decision slower than this share of the limit works here but may time out on a
# busier machine: worth a note.
SLOW_SHARE = 0.5
# The note tells why: decisions that overlapped one of the bot's decisions in another match
# taking this many times as long as the others (a median of each, with at least
# QUEUE_SAMPLE of each) means its answers queued behind each other.
QUEUE_RATIO = 1.5
QUEUE_SAMPLE = 5
# Seconds to wait, after a bot's first stream, for the others of a bot that plays in
# several processes (the SDK's --processes) to bring its slots up to CONCURRENCY.
MORE_STREAMS_WAIT = 1.5
# How many deals are tried, per classic match, to find one where the bot must choose
# trump; a full game simulates in a few milliseconds.
TRUMP_SEARCH = 60
# Seconds the bot has to start and say Hello (--connect-timeout).
CONNECT_TIMEOUT = 30.0
# Lines of a bot's output that say its code failed: a Python traceback, and the
# "decision failed" the SDK and the Node.js bots log when they send the fallback.
ERROR_LINE = re.compile(r"Traceback \(most recent call last\)|decision failed")


@dataclass(frozen=True)
class PlannedMatch:
    """One match of the check: the variant, the table size and any other game options."""

    variant: str
    players: int
    options: dict[str, Any] = field(default_factory=dict)   # more GameConfig fields

    def config(self, seed: int) -> GameConfig:
        return GameConfig(variant=self.variant, players=self.players, seed=seed, **self.options).validate()


# What is played, in this order (the README's "Bot author's guide" lists the same).
PLAN: tuple[PlannedMatch, ...] = (
    PlannedMatch("classic", 3),                                # 20-card hands; all 60 cards in the last round
    PlannedMatch("classic", 4, {"plus_minus_one": True}),      # the last bidder may not make the bids add up
    PlannedMatch("classic", 5, {"bidding": "hidden"}),         # everyone bids at once
    PlannedMatch("classic", 6, {"bidding": "secret"}),         # bids stay unknown until the round is scored
    PlannedMatch("classic", 4, {"length": "amigo"}),           # hand sizes 1, 3, 5, ...: not the round number
    PlannedMatch("extreme", 3),
    PlannedMatch("extreme", 4),
    PlannedMatch("extreme", 5),
)

# The opponents, by the name they play under; a 6-player table needs five.
OPPONENTS: tuple[tuple[str, str], ...] = (
    ("heuristic", "sample_bots.heuristic_bot:HeuristicBot"),
    ("random", "sample_bots.random_bot:RandomBot"),
    ("greedy", "sample_bots.greedy_bot:GreedyBot"),
    ("cautious", "sample_bots.cautious_bot:CautiousBot"),
    ("random-2", "sample_bots.random_bot:RandomBot"),
)

# The decision kinds of each variant, in the order the report lists them, with the
# word for one of them ("answered 67 bids, 5 trump choices, ...").
KINDS: dict[str, tuple[tuple[str, str], ...]] = {
    "classic": (("bid", "bid"), ("trump", "trump choice"), ("play", "play")),
    "extreme": (("predict", "prediction"), ("play", "play"), ("pay", "payment")),
}


class CheckStartError(LineupError):
    """The bot's command could not be run at all (exec refused it): a bad argument."""


# ---------------------------------------------------------------------- settings and results


@dataclass
class CheckSettings:
    """What ``arena bot check`` was asked to do."""

    entry: BotEntry                      # the bot, as parse_bot_option made it
    command: str                         # as the user wrote it, for the report
    variants: tuple[str, ...] = VARIANTS  # at most these (--variant narrows it to one)
    move_time: float = DEFAULTS.move_time   # as in a tournament
    time_bank: float = DEFAULTS.time_bank
    seed: int = 0
    connect_timeout: float = CONNECT_TIMEOUT
    sandbox: str = DEFAULTS.sandbox      # as in a tournament: confined where bubblewrap works

    @property
    def name(self) -> str:
        return self.entry.name


@dataclass
class ScheduledMatch:
    """A planned match made concrete: its spec (deal, table) and the bot's seat."""

    planned: PlannedMatch
    spec: MatchSpec
    seat: int

    @property
    def config(self) -> GameConfig:
        return GameConfig.from_dict(self.spec.config)


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


# ---------------------------------------------------------------------- the command line


def default_name(argv: list[str]) -> str:
    """The name a bot is checked under when none is given: its script's, else the
    ``-m`` module's, else its program's (a script called ``bot``, ``main``, ... is
    named after its folder).

    >>> default_name(["python3", "my_bot.py", "--fast"])
    'my_bot'
    >>> default_name(["node", "wizbot/bot.js"])
    'wizbot'
    >>> default_name(["/usr/bin/python3", "-m", "sample_bots.random_bot"])
    'random_bot'
    >>> default_name(["./Mr Bot!"]), default_name(["wizzy/bot.py"])
    ('Mr-Bot', 'wizzy')
    """
    words = [w for w in argv if not w.startswith("-")]
    name = Path(argv[0]).stem if argv else "bot"
    if "-m" in argv[:-1]:
        name = argv[argv.index("-m") + 1].rpartition(".")[2]
    else:
        scripts = [w for w in words if re.search(r"\.(py|js|mjs|cjs|ts|rb|pl|sh|jar|exe)$", w)]
        if scripts:
            path = Path(scripts[0])
            name = path.stem
            if name in ("bot", "main", "index", "run", "__main__", "app", "agent"):
                name = path.parent.name or Path.cwd().name
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-_.")[:40]
    return name or "bot"


def settings_from_args(command: str, *, name: str | None = None, variant: str | None = None,
                       move_time: float = DEFAULTS.move_time, time_bank: float = DEFAULTS.time_bank,
                       seed: int | None = None, connect_timeout: float = CONNECT_TIMEOUT,
                       sandbox: str = DEFAULTS.sandbox) -> CheckSettings:
    """Check the arguments of ``arena bot check`` (a LineupError says what is wrong, in
    one line) and return the settings. Nothing is started or written."""
    if not command.strip():
        raise LineupError("COMMAND is empty: give the command that starts your bot, e.g. './my_bot.py'")
    if name is None:
        try:
            name = default_name(shlex.split(command))
        except ValueError:      # parse_bot_option says what is wrong with the quoting
            name = "bot"
    check_name(name)
    if variant is not None and variant not in VARIANTS:
        raise LineupError(f"--variant must be one of {', '.join(VARIANTS)} (got {variant!r})")
    for option, value, least in (("--move-time", move_time, MIN_MOVE_TIME), ("--time-bank", time_bank, 0.0)):
        if not least <= value <= MAX_SECONDS:      # also refuses nan and inf
            raise LineupError(f"{option} must be a number of seconds from {least:g} to {MAX_SECONDS:g}")
    if not 0 < connect_timeout <= MAX_SECONDS:
        raise LineupError(f"--connect-timeout must be a number of seconds from 0 to {MAX_SECONDS:g}")
    if seed is not None and not 0 <= seed < 2**63:
        raise LineupError("--seed must be between 0 and 2**63 - 1")
    modes = [mode.value for mode in SandboxMode]
    if sandbox not in modes:
        raise LineupError(f"--sandbox must be {', '.join(modes[:-1])} or {modes[-1]} (got {sandbox!r})")
    entry = parse_bot_option(f"{name}={command}")    # exactly as --bot reads it
    return CheckSettings(entry=entry, command=command, variants=(variant,) if variant else VARIANTS,
                         move_time=move_time, time_bank=time_bank,
                         seed=secrets.randbits(63) if seed is None else seed, connect_timeout=connect_timeout,
                         sandbox=sandbox)


# ---------------------------------------------------------------------- the matches


def opponent_names(bot: str) -> list[str]:
    """The opponents' names, none equal to the checked bot's.

    >>> opponent_names("random")[:3]
    ['heuristic', 'random-sample', 'greedy']
    """
    return [name if name != bot else f"{name}-sample" for name, _ in OPPONENTS]


def chooses_trump(config: GameConfig, seat: int) -> bool:
    """Whether ``seat`` must choose trump somewhere in this classic deal (it deals a
    round whose turned-up card is a Wizard). The deals follow from the seed alone,
    whatever is played, so one game played at random tells.

    >>> chooses_trump(GameConfig(variant="extreme", players=3, seed=1), 0)
    False
    """
    if config.variant != "classic":
        return False
    game = new_game(config)
    rng = random.Random(0)
    while not game.is_over:
        for who in game.to_act():
            if who == seat and game.decision(who).kind == TRUMP:
                return True
            game.apply(who, game.random_action(who, rng))
    return False


def schedule(bot: str, variants: list[str], seed: int) -> dict[str, list[ScheduledMatch]]:
    """The matches of :data:`PLAN` for ``variants``, reproducible from ``seed``.

    The bot's seat is drawn for every match and the opponents rotate; every classic
    deal is one where the bot must choose trump, when one turns up within
    :data:`TRUMP_SEARCH` tries.

    >>> matches = schedule("me", ["classic", "extreme"], seed=7)
    >>> [(m.config.players, m.spec.bots[m.seat]) for m in matches["extreme"]]
    [(3, 'me'), (4, 'me'), (5, 'me')]
    >>> all(chooses_trump(m.config, m.seat) for m in matches["classic"])
    True
    >>> schedule("me", ["extreme"], seed=7)["extreme"][0].spec == matches["extreme"][0].spec
    True
    """
    others = opponent_names(bot)
    out: dict[str, list[ScheduledMatch]] = {variant: [] for variant in variants}
    for index, planned in enumerate(PLAN):
        if planned.variant not in out:
            continue
        # One generator per match: checking one variant plays the same deals as both.
        rng = random.Random(f"arena-bot-check/{seed}/{index}")
        seat = rng.randrange(planned.players)
        table = (others[index % len(others):] + others[:index % len(others)])[:planned.players - 1]
        deal = rng.getrandbits(63)
        for _ in range(TRUMP_SEARCH if planned.variant == "classic" else 0):
            if chooses_trump(planned.config(deal), seat):
                break
            deal = rng.getrandbits(63)
        spec = MatchSpec(config=planned.config(deal).to_dict(), bots=table[:seat] + [bot] + table[seat:],
                         match_id=f"check-{index + 1}-{planned.variant}-{planned.players}p",
                         bot_seeds=[rng.getrandbits(63) for _ in range(planned.players)])
        out[planned.variant].append(ScheduledMatch(planned, spec, seat))
    return out


def outcome_of(match: ScheduledMatch, record: MatchRecord, cut_short: bool = False) -> MatchOutcome:
    """The bot's part of a finished (or cut short) match: its faults, and the kind and
    time of every decision it answered legally (the action log replayed; a decision
    the referee played for it, after a fault or a forfeit, has no time)."""
    seat = match.seat
    game = new_game(GameConfig.from_dict(record.config))
    answered: Counter[str] = Counter()
    latencies = []
    for (who, action), latency in zip(record.actions, record.latencies_ms):
        if who == seat and latency is not None:
            answered[game.decision(who).kind] += 1
            latencies.append(latency)
        game.apply(who, action)
    faults = [fault for fault in record.faults if fault.seat == seat]
    return MatchOutcome(match, record, faults, latencies, answered, cut_short)


@dataclass(frozen=True)
class Queueing:
    """The bot's time per decision with and without one of its decisions in another match
    pending at the same time (medians, in ms, and how many decisions each)."""

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
    for (who, _), latency, duration in zip(record.actions, record.latencies_ms, durations):
        if who == seat and duration > 0:
            start = began + elapsed / 1000 * scale
            spans.append(Timed(start, start + duration / 1000, latency))
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
            out.append(Timed(t.start, t.end, t.latency_ms, beside))
    return out


def queueing(decisions: list[Timed]) -> Queueing | None:
    """Whether the bot's answered decisions were slower beside another than alone.

    A bot that answers its matches one at a time makes the beside ones wait (the alone
    ones show its real time per decision), and so does Python code computing in threads
    that share one core; a bot answering each match on its own takes as long either way.
    None without :data:`QUEUE_SAMPLE` of each.
    """
    beside = [t.latency_ms for t in decisions if t.latency_ms is not None and t.beside]
    alone = [t.latency_ms for t in decisions if t.latency_ms is not None and not t.beside]
    if len(beside) < QUEUE_SAMPLE or len(alone) < QUEUE_SAMPLE:
        return None
    return Queueing(statistics.median(beside), len(beside), statistics.median(alone), len(alone))


# What a bot whose answers queue can do about it.
QUEUE_REMEDY = ("The Python SDK answers each match in a thread of its own (when run() is given the bot's class, "
                "not one instance for every seat), but Python code that computes runs on one core at a time (the "
                "GIL): --processes 2 plays in two processes, a core each (docs/bot-authors.md); a bot without the "
                "SDK must answer its matches without waiting for each other")


def slow_note(outcomes: list[MatchOutcome], settings: CheckSettings) -> str | None:
    """The note on a decision slower than SLOW_SHARE of the limit, with its cause as far as
    the timing tells it (:func:`queueing`); None when every decision was quick enough."""
    latencies = [latency for o in outcomes for latency in o.latencies_ms]
    limit = settings.move_time * 1000
    if not latencies or max(latencies) <= SLOW_SHARE * limit:
        return None
    slow = f"its slowest decision took {ms(max(latencies))}, over {SLOW_SHARE:.0%} of the {ms(limit)} limit"
    decisions = timed_decisions(outcomes)
    found = queueing(decisions)
    if found is not None and found.queued:
        return (f"{slow}, and its decisions queued behind each other: a median of {ms(found.beside_ms)} while "
                f"another of its matches waited for an answer too, {ms(found.alone_ms)} otherwise. {QUEUE_REMEDY}")
    if found is not None:
        return (f"{slow}: its own time per decision, as long while another match waited for it as when "
                f"none did (median {ms(found.beside_ms)} against {ms(found.alone_ms)}); "
                "on a busier machine it may time out")
    slowest = [t.beside for t in decisions if t.took_ms > SLOW_SHARE * limit]   # timeouts too
    if slowest and sum(slowest) * 2 >= len(slowest):
        return (f"{slow}; its slow decisions came while another of its matches waited for an answer too (too few "
                "came alone to compare): a bot that answers one decision at a time, or computes in Python threads "
                f"that share one core, adds them up. {QUEUE_REMEDY}")
    return f"{slow}: on a busier machine it may time out"


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
    p = config.players
    if config.variant == "extreme":
        rounds = config.rounds or DEFAULT_ROUNDS[p]
        return f"{p} players, {rounds} rounds of 15 tricks, ranks 1-{MAX_RANK[p]}"
    sizes = hand_sizes(config)
    all_dealt = sizes[-1] * p == NUM_CARDS
    if config.length == "amigo":
        words = f"amigo length (hand sizes {', '.join(map(str, sizes[:3]))}, ... {sizes[-1]}" + (
            f"; the last deals all {NUM_CARDS} cards: no trump)" if all_dealt else ")")
    else:
        words = f"{len(sizes)} rounds" + (f" (the last deals all {NUM_CARDS} cards: no trump)" if all_dealt else "")
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
                  stopped: bool = False) -> list[str]:
    """The end of a variant in the report: what the bot answered, and how fast."""
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
        lines.append(f"  time per decision: no decision answered in time ({limits})")
    return lines


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


# ---------------------------------------------------------------------- running it


# The referee's log line for a refused stream: the peer, maybe the bot, then a status and why.
REFUSED = re.compile(r"refused a Play stream from .*?: ([A-Z][A-Z_]+ .*|[a-z].*)$")


class _Refusals(logging.Handler):
    """Keeps the referee's reasons for refusing a Play stream (a name that is not the
    token's, an unknown variant, no Hello in time): a bot that never connects is told why."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        refused = REFUSED.match(record.getMessage())
        if refused:
            self.reasons.append(refused.group(1))   # "CODE details", after the peer (which may hold ": ")


@contextlib.contextmanager
def _arena_logs(folder: Path) -> Iterator[_Refusals]:
    """Send the referee's and the in-process opponents' logs to ``folder/arena.log``
    (not the terminal) while the check runs."""
    logger = logging.getLogger("arena")
    handler = logging.FileHandler(folder / "arena.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    refusals = _Refusals()
    saved = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(handler)
    logger.addHandler(refusals)
    try:
        yield refusals
    finally:
        logger.removeHandler(handler)
        logger.removeHandler(refusals)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        handler.close()


class _Check:
    """One run of the check: the referee, the opponents, the bot, the matches."""

    def __init__(self, settings: CheckSettings, log_dir: Path, out: Callable[[str], None]) -> None:
        from arena.referee.server import ArenaServer

        self.settings = settings
        self.out = out
        self.report = CheckReport(settings, log_dir)
        # The faults and grace of a tournament: the referee's defaults.
        self.server = ArenaServer(store=None, move_time=settings.move_time, time_bank=settings.time_bank,
                                  max_faults=MAX_FAULTS, grace=GRACE)
        # A bot that connects but never says Hello is refused in time to be reported.
        self.server.hello_timeout = min(self.server.hello_timeout, settings.connect_timeout)
        self.processes = BotProcesses(log_dir)
        self.confinement = ""                # the start line's words on it, once known
        self.log = log_dir / f"{settings.name}.log"
        self.exited: asyncio.Future[int] | None = None     # the bot's process.wait()
        self.running: dict[str, ScheduledMatch] = {}

    async def run(self) -> CheckReport:
        from arena.referee.server import tune_gc

        started = time.monotonic()
        tune_gc()
        confinement = find_confinement(SandboxMode(self.settings.sandbox), BotLimits(), self.out)
        self.confinement = confinement.describe()
        socket_dir = socket_folder()
        socket = socket_dir / "referee.sock"
        self.processes = BotProcesses(self.report.log_dir, confinement, socket)
        with _arena_logs(self.report.log_dir) as refusals:
            port = await self.server.start("127.0.0.1", 0, unix_socket=socket)
            opponents: list[tuple[Any, asyncio.Task[int]]] = []
            try:
                opponents = await self._start_opponents(f"127.0.0.1:{port}")
                if await self._start_bot(f"127.0.0.1:{port}", refusals):
                    for variant, matches in self._schedule().items():
                        if not await self._play_variant(variant, matches):
                            break
            finally:
                await self._stop_bot()
                for client, _ in opponents:
                    client.stop()
                # The server ends every stream it holds: an opponent that missed its stop
                # (cancelled just as its Welcome came in) ends with its stream.
                await self.server.stop()
                shutil.rmtree(socket_dir, ignore_errors=True)
                tasks = [task for _, task in opponents]
                _, stuck = await asyncio.wait(tasks, timeout=5) if tasks else (set(), set())
                for task in stuck:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        self._scan_output()
        self.report.seconds = time.monotonic() - started
        return self.report

    # -- start-up

    async def _start_opponents(self, address: str) -> list[tuple[Any, asyncio.Task[int]]]:
        """The sample bots as SDK clients in this process, connected before the bot starts."""
        import importlib

        from arena.sdk import BotClient

        clients = []
        for name, (_, where) in zip(opponent_names(self.settings.name), OPPONENTS):
            module, _, cls = where.partition(":")
            token = secrets.token_hex(16)
            self.server.add_local_bot(name, token)
            client = BotClient(bot=getattr(importlib.import_module(module), cls), arena=address, token=token,
                               name=name, max_matches=CONCURRENCY)
            clients.append((client, asyncio.ensure_future(client.run())))
        await self.server.wait_connected(opponent_names(self.settings.name), timeout=30)
        return clients

    async def _start_bot(self, address: str, refusals: _Refusals) -> bool:
        """Start the bot and wait for its Hello; False (with the report's failure said)
        if it never connects."""
        settings, name = self.settings, self.settings.name
        token = secrets.token_hex(24)
        self.server.add_local_bot(name, token)
        started = time.monotonic()
        try:
            await self.processes.start(settings.entry, address, token, max_matches=CONCURRENCY)
        except (OSError, RuntimeError) as error:    # exec refused the command (BotStartError)
            message = str(error) if isinstance(error, RuntimeError) else f"cannot start {name}: {error}"
            raise CheckStartError(message) from None
        process = self.processes.processes[name]
        self.exited = asyncio.ensure_future(process.wait())
        waiting = asyncio.ensure_future(self.server.wait_connected([name], settings.connect_timeout))
        await asyncio.wait({waiting, self.exited}, return_when=asyncio.FIRST_COMPLETED)
        if waiting.done() and waiting.exception() is None:
            seconds = time.monotonic() - started
            info = await self._all_streams(name)
            self.report.hello = BotHello(info.version, info.variants, info.free_slots, seconds, info.connections)
            for line in header_lines(settings, self.report.hello):
                self.out(line)
            self.out(f"  {self.confinement}")
            return True
        waiting.cancel()
        if self.exited.done():
            why = f"it exited with code {self.exited.result()} before it connected"
        else:
            why = f"no Hello within {settings.connect_timeout:g} s"
        if refusals.reasons:
            why += f"; the arena refused its stream: {refusals.reasons[-1]}"
        self.report.failure = f"never connected: {why}"
        self.out(f"{name} ({settings.command}) never connected: {why}; {output_tail(self.log)} "
                 f"(its output and the arena's log: {self.report.log_dir})")
        return False

    async def _all_streams(self, name: str) -> ConnectedBotInfo:
        """The connected bot's info once it has the slots it was offered, or after
        MORE_STREAMS_WAIT: a bot that plays in several processes connects one stream each."""
        assert self.exited is not None
        deadline = time.monotonic() + MORE_STREAMS_WAIT
        info = self.server.connected_bots()[name]
        while info.free_slots < CONCURRENCY and time.monotonic() < deadline and not self.exited.done():
            await asyncio.sleep(0.05)
            info = self.server.connected_bots().get(name, info)
        return info

    def _schedule(self) -> dict[str, list[ScheduledMatch]]:
        hello = self.report.hello
        assert hello is not None
        plays = [v for v in VARIANTS if not hello.variants or v in hello.variants]
        wanted = [v for v in plays if v in self.settings.variants]
        if not wanted:
            self.report.failure = (f"it plays {' and '.join(plays)} only (its Hello's variants): "
                                   f"nothing to check in {' and '.join(self.settings.variants)}")
        return schedule(self.settings.name, wanted, self.settings.seed)

    # -- the matches

    async def _play_variant(self, variant: str, matches: list[ScheduledMatch]) -> bool:
        """Play one variant's matches, up to CONCURRENCY at once; print them as they end.
        False when the check cannot go on (the bot exited, or could not be seated)."""
        assert self.exited is not None and self.report.hello is not None
        self.out("")
        self.out(f"{variant}: {plural(len(matches), 'match', 'matches')}")
        outcomes: list[MatchOutcome] = []
        pending = list(matches)

        async def worker() -> None:
            from arena.referee.server import SeatingError

            while pending and not any(o.forfeited for o in outcomes) and self.report.failure is None:
                match = pending.pop(0)
                self.running[match.spec.match_id] = match
                began = time.monotonic()
                try:
                    record = await self.server.run_match(match.spec)
                except SeatingError as error:
                    self.report.failure = f"it could not be seated: {error}"
                    return
                finally:
                    self.running.pop(match.spec.match_id, None)
                outcome = outcome_of(match, record)
                outcome.span = (began, time.monotonic())
                self._add(outcomes, outcome)

        workers = max(1, min(self.report.hello.slots, CONCURRENCY, len(matches)))
        playing = asyncio.ensure_future(asyncio.gather(*(worker() for _ in range(workers))))
        either: set[asyncio.Future[Any]] = {playing, self.exited}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not playing.done():
            # The bot is gone: its open matches would only wait out the grace period.
            cut = dict(self.running)
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
            for match_id, match in cut.items():
                referee = self.server.recent.get(match_id)
                if referee is not None and referee.record is not None:
                    self._add(outcomes, outcome_of(match, referee.record, cut_short=True))
            self.report.failure = (f"it exited with code {self.exited.result()} during the {variant} matches; "
                                   f"{output_tail(self.log)}")
        else:
            playing.result()
        self.report.not_played[variant] = len(pending)
        for line in variant_lines(variant, outcomes, self.settings, len(pending), self.report.failure is not None):
            self.out(line)
        if self.report.failure is None and self.exited.done():
            self.report.failure = (f"it exited with code {self.exited.result()} after its {variant} matches: "
                                   "in a tournament a bot stays until the arena stops it; "
                                   f"{output_tail(self.log)}")
        return self.report.failure is None

    def _add(self, outcomes: list[MatchOutcome], outcome: MatchOutcome) -> None:
        outcomes.append(outcome)
        self.report.outcomes.append(outcome)
        for line in match_lines(outcome):
            self.out(line)

    # -- the end

    async def _stop_bot(self) -> None:
        process = self.processes.processes.get(self.settings.name)
        running = process is not None and process.returncode is None
        await self.processes.stop()
        if running and process is not None and process.returncode == -signal.SIGKILL:
            self.report.notes.append("it did not exit within 3 s of SIGTERM and was killed "
                                     "(an arena stops its bots with SIGTERM)")
        if self.exited is not None and not self.exited.done():
            self.exited.cancel()

    def _scan_output(self) -> None:
        """Notes on what the bot's output and timing show (not faults: the referee
        accepted its answers)."""
        report, settings = self.report, self.settings
        errors = count_error_reports(self.log)
        if errors:
            # A passed check takes its folder with it: then the note quotes the error itself.
            first = first_error(self.log)
            where = (f"the first: {first}" if first else "run it again to see them") if report.passed \
                else f"see {self.log}"
            report.notes.append(f"its output has {plural(errors, 'error report')} (a traceback or \"decision "
                                "failed\"): a decision that raised is a bot_error fault, a hook that raised "
                                f"(on_match_start, on_match_end, on_fault) is only there; {where}")
        note = slow_note(report.outcomes, settings)
        if note:
            report.notes.append(note)


def check_bot(settings: CheckSettings, out: Callable[[str], None] = print) -> CheckReport:
    """Run the check, printing the report through ``out`` as it goes; the last line is
    the verdict. The temporary folder (the bot's output, the arena's log) is removed when
    the bot passed, and kept and named when it did not. A command that cannot start at
    all raises :class:`CheckStartError`."""
    log_dir = Path(tempfile.mkdtemp(prefix=f"arena-check-{settings.name}-"))
    try:
        report = asyncio.run(_Check(settings, log_dir, out).run())
    except BaseException:
        shutil.rmtree(log_dir, ignore_errors=True)
        raise
    if report.hello is None:          # never connected: that one line said it all
        return report
    out("")
    for note in report.notes:
        out(f"note: {note}")
    out(verdict_line(report))
    if report.passed:
        shutil.rmtree(log_dir, ignore_errors=True)
    else:
        out(f"its output, and the arena's log: {log_dir}")
    return report
