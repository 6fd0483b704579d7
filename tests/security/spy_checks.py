"""The spy tests' attacker and his checks: can a hostile bot learn the cards of another seat?

Attacker model. A bot author enters one or several bots ("spies", tests/bots/spy_bot.py)
that play honestly but record every message the arena sends them, complete. He may also
spectate every match and call the public ListMatches/GetLeaderboard, and he has the
arena's code and the engine (it is importable), so from a deal seed he can rebuild every
hand. He wins if he can know a card another seat holds before it is played: (a) by
finding a deal seed (or the master seed, or a generator state) among the numbers he
receives, (b) by receiving such a card outright, (c) in the duplicate format, by sitting
in two rotations of one deal at the same time, or (d) in the independent format, by
meeting a hand he held again in another game (hands of 5+ cards in classic, 15 in
Extreme, must never meet again; 3- and 4-card hands are only counted, since random ones
do meet by chance in a few runs in a hundred).

Real tournaments (real processes, real SQLite in tmp dirs, no mocks); afterwards the
stored records, which hold the true seeds and action logs, are replayed and every message
the spies and spectators received is checked against them. Run with ``-s`` for a summary
of what was tried.

This module holds what the spy tests share: reading what was received, replaying the
truth, the checks (a)-(d), and running a tournament and loading it back. The tests are
tests/security/test_spies_in_tournaments.py (spies in local tournaments) and
tests/security/test_spectators_and_public_calls.py (spectators, public calls and spies
at `arena serve`).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factories import TEST_BOTS
from google.protobuf.json_format import MessageToDict

from arena.records import MatchRecord
from arena.store import Store
from arena.tournament.schedule import derive_seed
from arena.tournament.settings import TournamentSettings, schedule_of
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import GameConfig, new_game

PY = sys.executable
SPY = TEST_BOTS / "spy_bot.py"
RANDOM_BOT = TEST_BOTS / "random_bot.py"
ENV = {**os.environ, "COLUMNS": "200", "GRPC_VERBOSITY": "ERROR"}

# A card code standing alone: b7, g13, r1, y12, p15, W1..W4, J1..J4.
CARD = re.compile(r"(?<![A-Za-z0-9_])(?:[bgryp](?:1[0-5]|[1-9])|[WJ][1-4])(?![A-Za-z0-9_])")
Hands = tuple[frozenset[str], ...]   # by seat


# ---------------------------------------------------------------------- what was received


def as_dict(message: Any) -> dict[str, Any]:
    """Every field, default values included (the same view spy_bot.py records)."""
    try:
        return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    except TypeError:  # protobuf before 5.26
        return MessageToDict(message, preserving_proto_field_name=True, including_default_value_fields=True)


def nothing_unknown(message: Any, raw: bytes) -> bool:
    """True when every byte on the wire belongs to a field this client's proto knows, so
    the dict view holds everything that was sent."""
    known = type(message)()
    known.CopyFrom(message)
    known.DiscardUnknownFields()
    return known.ByteSize() == len(raw)


def parsed(value: str) -> Any:
    """A string that holds JSON (an observation, an event, options), parsed; else None."""
    text = value.strip()
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def integers_in(value: Any, out: set[int]) -> None:
    """Every integer an attacker could read off ``value``: numbers, numbers inside JSON
    strings, every run of digits inside any string (ids, names, text), and hex runs
    of 8+ digits read as one number (hex match ids)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        out.add(abs(value))
    elif isinstance(value, float):
        if value == value and abs(value) != float("inf"):
            out.add(abs(int(value)))
            integers_in(repr(value), out)
    elif isinstance(value, str):
        out.update(int(run) for run in re.findall(r"\d+", value))
        out.update(int(run, 16) for run in re.findall(r"[0-9A-Fa-f]{8,}", value))
        inner = parsed(value)
        if inner is not None:
            integers_in(inner, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            integers_in(key, out)
            integers_in(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            integers_in(item, out)


def cards_in(value: Any) -> set[str]:
    """Every card code mentioned in ``value``: strings that are a card code, card codes
    in free text (fault messages, reasons), and everything inside JSON strings."""
    found: set[str] = set()

    def walk(item: Any) -> None:
        if isinstance(item, str):
            inner = parsed(item)
            if inner is not None:
                walk(inner)
            elif CARD.fullmatch(item.strip()):
                found.add(item.strip())
            elif " " in item or "'" in item:   # free text, not an id
                found.update(CARD.findall(item))
        elif isinstance(item, dict):
            for key, sub in item.items():
                walk(key)
                walk(sub)
        elif isinstance(item, (list, tuple)):
            for sub in item:
                walk(sub)

    walk(value)
    return found


@dataclass
class Received:
    """One message the spy received: its kind, the dict view, and when."""

    msg: str
    body: dict[str, Any]
    at: float
    full: dict[str, Any]


def read_spy(path: Path) -> tuple[list[Received], dict[int, dict[str, Any]]]:
    """A spy's report: the messages received, in order, and its answers by request id.
    The raw bytes are parsed again and must give the recorded dict: nothing was lost."""
    received: list[Received] = []
    answers: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry["dir"] == "out":
            action = entry["message"]["action"]
            answers[int(action["request_id"])] = action
            continue
        raw = bytes.fromhex(entry["raw"])
        message = pb.ArenaMessage.FromString(raw)
        assert as_dict(message) == entry["message"], "the spy's two views of a message differ"
        assert nothing_unknown(message, raw), f"fields unknown to the proto in {entry['message']}"
        received.append(Received(entry["msg"], entry["message"][entry["msg"]], entry["at"], entry["message"]))
    return received, answers


# ---------------------------------------------------------------------- the truth, replayed


def normalise(event: Any) -> Any:
    return json.loads(json.dumps(event))


@dataclass
class Step:
    seat: int
    action: Any
    hands: Hands                 # every seat's cards just before this action
    public: frozenset[str]       # cards made public before it (played, turned up)


@dataclass
class Replayed:
    """A stored match replayed action by action, with every seat's cards at every point."""

    record: MatchRecord
    players: int
    start: Hands
    steps: list[Step]
    end: Hands                   # every seat's cards after the last action (none)
    # For each viewer (a seat, or None for a spectator): every event it may see, in order,
    # with every seat's cards at the moment the event happened.
    events: dict[int | None, list[tuple[Any, Hands]]]
    deals: list[tuple[int, int, frozenset[str]]]     # (round, seat, hand) of every deal


def replay_record(record: MatchRecord) -> Replayed:
    config = record.config
    game = new_game(config)
    players = config.players
    viewers: list[int | None] = [*range(players), None]
    cursor = {viewer: 0 for viewer in viewers}
    events: dict[int | None, list[tuple[Any, Hands]]] = {viewer: [] for viewer in viewers}
    public: set[str] = set()
    deals: list[tuple[int, int, frozenset[str]]] = []
    nobody: Hands = tuple(frozenset() for _ in range(players))

    def hands() -> Hands:
        return tuple(frozenset(game.observe(seat)["hand"]) for seat in range(players))

    def collect(now: Hands) -> None:
        for viewer in viewers:
            new, cursor[viewer] = game.events_for(viewer, cursor[viewer])
            new = normalise(new)
            # Events logged before a new deal in the same step close the old round, when
            # every card has been played: nobody holds anything then.
            last_deal = max((i for i, e in enumerate(new) if e.get("type") == "round_start"), default=-1)
            for i, event in enumerate(new):
                events[viewer].append((event, now if i >= last_deal else nobody))
                if viewer is None:
                    public.update(cards_in(event))
                    if event.get("type") == "round_start":
                        deals.extend((event["round"], seat, now[seat]) for seat in range(players))

    start = hands()
    collect(start)
    steps = []
    now = start
    for seat, action in record.actions:
        steps.append(Step(seat, action, now, frozenset(public)))
        game.apply(seat, action)
        now = hands()
        collect(now)
    assert game.is_over and list(game.result().totals) == record.totals, record.match_id
    return Replayed(record, players, start, steps, now, events, deals)


def others(hands: Hands, viewer: int | None) -> frozenset[str]:
    """The cards held by every seat but ``viewer`` (all seats for a spectator)."""
    return frozenset().union(*(hand for seat, hand in enumerate(hands) if seat != viewer))


def first_deal(game: Any) -> tuple[Any, ...]:
    """The whole first deal: every seat's hand and the card turned up (classic)."""
    hands = tuple(tuple(game.observe(seat)["hand"]) for seat in range(game.config.players))
    return hands, game.observe(None).get("trump_card")


def deal_from_generator(config: GameConfig, rng: random.Random) -> tuple[Any, ...]:
    """The first deal the engine would make if its shuffle drew from ``rng`` itself
    (rather than from the generator it seeds with a string made from the deal seed)."""
    game = new_game(config)
    game._rng = rng
    if config.variant == "classic":
        game._log.clear()
        game._round = 0
        game._start_round()
    else:
        game._log.clear()
        game._start_round(dealer=0, hands=None)
    return first_deal(game)


ENGINE_STRING = {"classic": "wizard-classic/{}", "extreme": "wizard-extreme/{}"}


def schedule_seeds(settings: dict[str, Any], master_seed: int) -> set[int]:
    """The deal seeds a tournament with these settings and master seed would use, in
    either deal format (as arena.tournament.schedule derives them), plus the plain derivations."""
    seeds: set[int] = set()
    for deals in ("duplicate", "independent"):
        data = {**settings, "seed": master_seed, "deals": deals}
        seeds.update(game.seed for game in schedule_of(TournamentSettings.from_dict(data)))
    for index in range(settings["games"]):
        seeds.update((derive_seed(master_seed, "deal", index), derive_seed(master_seed, "game deal", index)))
    return seeds


# ---------------------------------------------------------------------- the checks


@dataclass
class Findings:
    """What an attack found; ``tried`` counts what it tried."""

    name: str
    tried: int = 0
    leaks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        return f"{self.name}: {self.tried} tried, {len(self.leaks)} leaks" + \
            (f" ({'; '.join(self.notes)})" if self.notes else "")


def report(title: str, findings: list[Findings]) -> None:
    print(f"\n[{title}]\n  " + "\n  ".join(f.line() for f in findings))


def assert_no_leaks(findings: list[Findings]) -> None:
    """Fails with the number of leaks of every check and the first few of each."""
    failed = [f for f in findings if f.leaks]
    lines = []
    for f in failed:
        distinct = list(dict.fromkeys(f.leaks))
        lines.append(f"{f.name}: {len(f.leaks)} leak(s) in {f.tried} tried, e.g.")
        lines.extend(f"    {leak}" for leak in distinct[:6])
    assert not failed, "\n".join(lines)


def attack_seeds(name: str, numbers: set[int], records: list[MatchRecord], settings: dict[str, Any] | None,
                 spy_hands: Iterable[tuple[str, int, tuple[str, ...]]] = ()) -> Findings:
    """(a) Try every integer as a deal seed (the spy's first hand, then the whole first
    deal, against the real ones), as a master seed (deriving every game's deal seed the
    way the schedule does, in both formats) and as a generator state (random.Random(n)
    driving the engine's shuffle, and its first outputs as seeds). None may reproduce a
    deal of the tournament, nor yield a deal seed or the master seed."""
    found = Findings(f"(a) seeds [{name}]", tried=len(numbers))
    real: dict[tuple[Any, ...], list[str]] = {}
    by_config: dict[str, GameConfig] = {}
    for record in records:
        config = record.config
        deal = first_deal(new_game(config))
        real.setdefault(deal, []).append(record.match_id)
        by_config[config_key(record)] = config
        # Control: the attack's own tool rebuilds the real deal from the engine's generator.
        seeded = random.Random(ENGINE_STRING[config.variant].format(record.seed))
        assert deal_from_generator(config, seeded) == deal, "deal_from_generator no longer follows the engine"
    real_seeds = {r.seed for r in records}
    secret = set(real_seeds)
    if settings is not None:
        secret.add(settings["seed"])
        # Control: the schedule, given the real master seed, derives the real deal seeds.
        assert real_seeds <= schedule_seeds(settings, settings["seed"]), "schedule_seeds misses the real deals"
    by_id = {r.match_id: r for r in records}
    hands_by_config: dict[str, list[tuple[str, int, tuple[str, ...]]]] = {}
    for match_id, seat, hand in spy_hands:
        hands_by_config.setdefault(config_key(by_id[match_id]), []).append((match_id, seat, hand))
    chance = 0
    for n in sorted(numbers):
        if n in secret:
            found.leaks.append(f"{n} is itself a deal seed or the master seed")
        for key, config in by_config.items():
            candidate = first_deal(new_game(GameConfig.from_dict({**config.to_dict(), "seed": n})))
            for match_id, seat, hand in hands_by_config.get(key, []):
                if candidate[0][seat] == hand:
                    if candidate == first_deal_of(by_id[match_id]):
                        found.leaks.append(f"{n} as a deal seed gives the spy's hand and the whole deal of "
                                           f"{match_id}")
                    else:
                        chance += 1   # a small first hand, by chance; the rest of the deal differs
            if candidate in real:
                found.leaks.append(f"{n} as a deal seed reproduces the first deal of {', '.join(real[candidate])}")
            generated = deal_from_generator(config, random.Random(n))
            if generated in real:
                found.leaks.append(f"random.Random({n}) as the shuffle reproduces the first deal of "
                                   f"{', '.join(real[generated])}")
        if settings is not None and schedule_seeds(settings, n) & real_seeds:
            found.leaks.append(f"{n} as the master seed derives a real deal seed")
        outputs = set()
        for bits in (31, 32, 63, 64):
            rng = random.Random(n)
            outputs.update(rng.getrandbits(bits) for _ in range(8))
        if outputs & secret:
            found.leaks.append(f"random.Random({n}) generates a deal seed or the master seed")
    if chance:
        found.notes.append(f"{chance} chance matches of a spy's first hand alone, the rest of the deal different")
    return found


_FIRST_DEALS: dict[str, tuple[Any, ...]] = {}


def first_deal_of(record: MatchRecord) -> tuple[Any, ...]:
    if record.match_id not in _FIRST_DEALS:
        _FIRST_DEALS[record.match_id] = first_deal(new_game(record.config))
    return _FIRST_DEALS[record.match_id]


def config_key(record: MatchRecord) -> str:
    return json.dumps(record.config.options(), sort_keys=True)


class CardCheck:
    """(b) No message may name a card another seat holds at that moment."""

    def __init__(self, name: str) -> None:
        self.found = Findings(f"(b) cards [{name}]")
        self.mentions = 0

    def strict(self, where: str, value: Any, hidden: frozenset[str]) -> None:
        """``value`` was received while the cards ``hidden`` were in other hands."""
        self.found.tried += 1
        named = cards_in(value)
        self.mentions += len(named)
        for card in sorted(named & hidden):
            self.found.leaks.append(f"{where} names {card}, held by another seat at that moment")

    def lenient(self, where: str, value: Any, hidden: frozenset[str], public: frozenset[str]) -> None:
        """For parts about earlier rounds: a card played before may since be in a hand."""
        self.strict(where, value, hidden - public)

    def event_stream(self, where: str, received: list[Any], truth: list[tuple[Any, Hands]], viewer: int | None,
                     offset: int) -> None:
        """Events received by ``viewer``, the ``offset``-th onwards of its view: each must be
        the event of the engine's view at that position (anything else is a message the
        viewer may not get), and names no card another seat holds when it happened."""
        for i, event in enumerate(received, start=offset):
            if i >= len(truth) or truth[i][0] != event:
                expected = truth[i][0] if i < len(truth) else "nothing more"
                self.found.leaks.append(f"{where}: event #{i} is {event}, the viewer's view has {expected}")
                self.strict(where, event, others(truth[-1][1], viewer) if truth else frozenset())
                continue
            self.strict(f"{where} event #{i}", event, others(truth[i][1], viewer))

    def finish(self, extra: str = "") -> Findings:
        self.found.notes.append(f"{self.mentions} card mentions" + (f", {extra}" if extra else ""))
        return self.found


def check_spy_match(check: CardCheck, bids: Findings, spy: str, replayed: Replayed, seat: int,
                    messages: list[Received], answers: dict[int, dict[str, Any]]) -> None:
    """(b) for one spy seat of one match, message by message."""
    record = replayed.record
    mine = [step for step in replayed.steps if step.seat == seat]
    view = replayed.events[seat]
    bidding = record.config.bidding if record.variant == "classic" else "open"
    where = f"{spy} in {record.match_id} seat {seat}"
    events_so_far = 0
    requests = 0
    moment = others(replayed.start, seat)
    faulted = any(f.seat == seat for f in record.faults)
    for message in messages:
        if message.msg == "match_started":
            assert int(message.body["seat"]) == seat
            check.strict(f"{where} MatchStarted", message.body, moment)
        elif message.msg == "request":
            body = message.body
            assert requests < len(mine), f"{where}: more requests than the seat's decisions"
            step = mine[requests]
            requests += 1
            answer = answers[int(body["request_id"])]
            if "option" in answer and not faulted:   # the request is this decision: the record applied the answer
                assert answer["option"] == str(step.action), (where, answer, step.action)
            moment = others(step.hands, seat)
            observation = json.loads(body["observation_json"])
            history = observation.pop("round_history", [])
            rest = {k: v for k, v in body.items() if k not in ("observation_json", "events_json")}
            label = f"{where} request {body['request_id']} ({body['kind']})"
            check.strict(label, [rest, observation], moment)
            check.lenient(f"{label} round_history", history, moment, step.public)
            received = [json.loads(text) for text in body["events_json"]]
            check.event_stream(label, received, view, seat, events_so_far)
            events_so_far += len(received)
            if bidding != "open":
                bids.tried += 1
                if bidding == "secret" and observation.get("phase") != "over" or observation.get("phase") == "bid":
                    shown = [s for s, bid in enumerate(observation.get("bids", [])) if s != seat and bid is not None]
                    if shown:
                        bids.leaks.append(f"{label}: the {bidding} bids of seats {shown} are shown")
                for event in received:
                    if event.get("type") == "bid" and event.get("seat") != seat:
                        bids.leaks.append(f"{label}: gets {event} ({bidding} bidding)")
        elif message.msg == "fault":
            check.strict(f"{where} Fault", message.body, moment)
        elif message.msg == "match_ended":
            check.strict(f"{where} MatchEnded", message.body, others(replayed.end, seat))
    assert requests == len(mine), f"{where}: {requests} requests for {len(mine)} decisions"


def spy_hands_by_round(messages: list[Received]) -> dict[int, tuple[str, ...]]:
    """The hands a spy seat was dealt, by round, from the hand events it received."""
    hands: dict[int, tuple[str, ...]] = {}
    current = 0
    for message in messages:
        if message.msg != "request":
            continue
        for text in message.body["events_json"]:
            event = json.loads(text)
            if event.get("type") == "round_start":
                current = event["round"]
            elif event.get("type") == "hand":
                hands[current] = tuple(event["cards"])
    return hands


def overlaps(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def check_duplicate_overlap(name: str, records: list[MatchRecord], spies: dict[str, list[Received]]) -> Findings:
    """(c) No spy sits in two matches of the same deal at overlapping times: by the records'
    times, and by when the spy itself saw each match start and end. The spy's own view
    counts where one process of it played them all: two processes' clocks and streams
    are not in step (a deal's rotations go to processes of their own, each seeing the
    deal once, so a match's end may reach one after the next match's start reached the
    other)."""
    found = Findings(f"(c) duplicate overlap [{name}]")
    by_id = {r.match_id: r for r in records}
    for spy, messages in spies.items():
        one_process = sum(message.msg == "welcome" for message in messages) <= 1
        seen: dict[str, list[float]] = {}
        for message in messages:
            match_id = message.body.get("match_id")
            if message.msg in ("match_started", "match_ended") and match_id in by_id:
                seen.setdefault(match_id, [message.at, message.at])[1 if message.msg == "match_ended" else 0] \
                    = message.at
        mine = [r for r in records if spy in r.bots]
        for i, a in enumerate(mine):
            for b in mine[i + 1:]:
                if a.seed != b.seed:
                    continue
                found.tried += 1
                if overlaps((a.started_at, a.finished_at), (b.started_at, b.finished_at)):
                    found.leaks.append(f"{spy} sat in {a.match_id} and {b.match_id} (one deal) at once: "
                                       f"{a.started_at.time()}-{a.finished_at.time()} and "
                                       f"{b.started_at.time()}-{b.finished_at.time()}")
                if one_process and a.match_id in seen and b.match_id in seen and \
                        overlaps(seen[a.match_id], seen[b.match_id]):
                    found.leaks.append(f"{spy} had {a.match_id} and {b.match_id} (one deal) open at once")
    return found


def hands_met_again(spies: dict[str, list[Received]], replayed: dict[str, Replayed],
                    smallest: int) -> tuple[int, list[tuple[int, str]]]:
    """(d) Every hand of ``smallest`` or more cards a spy held, looked up among the hands
    of every seat of every *other* match. Returns (hands looked up, [(size, repeat)])."""
    where: dict[frozenset[str], list[tuple[str, int, int]]] = {}
    for match_id, rep in replayed.items():
        for round_, seat, hand in rep.deals:
            where.setdefault(hand, []).append((match_id, round_, seat))
    looked, repeats = 0, []
    for spy, messages in spies.items():
        per_match: dict[str, list[Received]] = {}
        for message in messages:
            per_match.setdefault(message.body.get("match_id", ""), []).append(message)
        for match_id, stream in per_match.items():
            if match_id not in replayed:
                continue
            seat = replayed[match_id].record.bots.index(spy)
            for round_, hand in spy_hands_by_round(stream).items():
                truth = {h for r, s, h in replayed[match_id].deals if r == round_ and s == seat}
                assert truth == {frozenset(hand)}, f"{spy}'s hand in {match_id} round {round_} is not its real hand"
                if len(hand) < smallest:
                    continue
                looked += 1
                for other, round_2, seat_2 in where.get(frozenset(hand), []):
                    if other != match_id:
                        repeats.append((len(hand), f"{spy}'s round-{round_} hand in {match_id} {sorted(hand)} is "
                                                   f"seat {seat_2}'s round-{round_2} hand in {other}"))
    return looked, repeats


# ---------------------------------------------------------------------- running tournaments


def arena_cli(*args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env or ENV)


def bot_option(script: Path, name: str, report: Path | None, max_matches: int) -> str:
    command = [PY, str(script), "--name", name, "--max-matches", str(max_matches)]
    if report is not None:
        command += ["--report", str(report)]
    return f"{name}={shlex.join(command)}"


def load_tournament(db: Path, tid: str | None = None) -> tuple[str, dict[str, Any], list[MatchRecord]]:
    store = Store(str(db))
    if tid is None:
        (only,) = store.list_tournaments()
        tid = only.id
    settings = store.get_tournament(tid).settings
    records = sorted((store.load_match(m.match_id) for m in store.list_matches(tournament_id=tid, limit=10_000)),
                     key=lambda r: r.game_index)
    store.close()
    return tid, settings, records


def analyse_spies(title: str, settings: dict[str, Any], records: list[MatchRecord],
                  spies: dict[str, tuple[list[Received], dict[int, dict[str, Any]]]],
                  deals: str) -> list[Findings]:
    """Checks (a)-(d) over what the spies received in one tournament."""
    assert len(records) == settings["games"], "the tournament did not store every game"
    assert all(r.status == "completed" for r in records)
    replayed = {r.match_id: replay_record(r) for r in records}
    streams = {spy: messages for spy, (messages, _) in spies.items()}

    # (a) Every integer any spy saw (the author pools what his bots saw).
    numbers: set[int] = set()
    spy_first_hands = []
    for messages in streams.values():
        for message in messages:
            integers_in(message.full, numbers)
    per_match: dict[tuple[str, str], list[Received]] = {}
    for spy, messages in streams.items():
        for message in messages:
            if "match_id" in message.body:
                per_match.setdefault((spy, message.body["match_id"]), []).append(message)
    for (spy, match_id), stream in per_match.items():
        seat = replayed[match_id].record.bots.index(spy)
        first = spy_hands_by_round(stream).get(1)
        assert first is not None, f"{spy} never saw its first hand in {match_id}"
        spy_first_hands.append((match_id, seat, first))
    seeds = attack_seeds(title, numbers, records, settings, spy_first_hands)

    # (b) Message by message, against the cards every seat held at that moment.
    check = CardCheck(title)
    bids = Findings(f"(b) unrevealed bids [{title}]")
    welcome = 0
    unended: list[str] = []
    faults: list[str] = []
    for spy, (messages, answers) in spies.items():
        for message in messages:
            if message.msg == "welcome":   # before any match: it may name no card at all
                welcome += 1
                check.strict(f"{spy} Welcome", message.body, frozenset(cards_in(message.body)))
        played = [r for r in records if spy in r.bots]
        assert played, f"{spy} played no match"
        for record in played:
            stream = per_match.get((spy, record.match_id), [])
            assert [m.msg for m in stream][:1] == ["match_started"], f"{spy} did not see {record.match_id} start"
            if stream[-1].msg != "match_ended":   # not a leak; said in the summary
                unended.append(f"{spy} {record.match_id}")
            seat = record.bots.index(spy)
            faults.extend(f"{spy} {record.match_id} {f.kind}" for f in record.faults if f.seat == seat)
            check_spy_match(check, bids, spy, replayed[record.match_id], seat, stream, answers)
    assert welcome >= len(spies)      # one a process: a duplicate deal's rotations go to processes of their own
    findings = [seeds, check.finish(f"{sum(len(m) for m in streams.values())} messages"
                                    + (f"; no MatchEnded received for {', '.join(unended)}" if unended else "")
                                    + (f"; the spies' faults: {', '.join(faults)}" if faults else ""))]
    if records[0].variant == "classic" and records[0].config.bidding != "open":
        findings.append(bids)

    # (c) / (d) by format.
    seed_counts = [sum(1 for r in records if r.seed == s) for s in {r.seed for r in records}]
    players = records[0].config.players
    smallest = 3 if records[0].variant == "classic" else 15
    looked, repeats = hands_met_again(streams, replayed, smallest)
    # Two random 3-card hands of 60 cards are equal once in 34,220 and a run compares a
    # thousand or two: small hands meet again by chance in a few runs in a hundred. From
    # 5 cards (once in 5.5 million) on, a repeat means a repeated deal.
    sure = 15 if records[0].variant == "extreme" else 5
    if deals == "duplicate":
        assert set(seed_counts) == {players}, f"not duplicate: deals played {seed_counts} times"
        findings.append(check_duplicate_overlap(title, records, streams))
        # Control for (d): in duplicate the spies do meet their hands again.
        assert looked and repeats, "the repeated-hand check found nothing in a duplicate tournament"
    else:
        distinct = Findings(f"(d) independent deals [{title}]", tried=looked)
        if set(seed_counts) != {1}:
            distinct.leaks.append(f"deal seeds repeat: {sorted(seed_counts)}")
        distinct.leaks.extend(text for size, text in repeats if size >= sure)
        distinct.notes.append(f"{len(records)} deals, {looked} hands of {smallest}+ cards looked up"
                              + (f", {sum(1 for size, _ in repeats if size < sure)} chance repeats of "
                                 f"{smallest}-{sure - 1} cards allowed" if sure > smallest else ""))
        assert any(len(hand) >= sure for rep in replayed.values() for _, _, hand in rep.deals), \
            "no hand is large enough for (d): play more rounds"
        findings.append(distinct)
    return findings
