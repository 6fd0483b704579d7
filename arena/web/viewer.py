"""The match viewer's steps: a stored match replayed through the engine, one step per decision.

Step 0 is the table before the first decision (the deal, the trump); step ``k`` is what
decision ``k`` (1-based) caused. Each step carries the events it caused, in words too,
and the running totals after it, so the page only draws; it never needs the rules.

A stored match is over, so every hand is shown face up: the private ``hand`` events of
every seat are included (a live view must never do this).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from arena.records import MatchRecord
from engine import replay_record
from engine.describe import describe_event


@dataclass
class Step:
    """What one decision did: who decided what, how fast, and what the table saw."""

    index: int                        # 0: before the first decision; k: after decision k
    seat: int | None                  # the seat that decided (None for step 0)
    action: Any                       # the action as logged (a bid, a card, a colour, an Extreme prediction)
    latency_ms: float | None          # the bot's round trip; None when the referee played a fallback
    events: list[dict[str, Any]] = field(default_factory=list)   # each with "text" added
    totals: list[int] = field(default_factory=list)               # running totals after this step
    faults: list[dict[str, Any]] = field(default_factory=list)   # faults charged to this decision's seat
    winning: int | None = None        # the seat taking the trick in progress so far (None between tricks)


def _events_since(game: Any, position: int, players: int) -> tuple[list[dict[str, Any]], int]:
    """The public events from ``position`` on, plus every seat's private ``hand`` events
    (the match is over: hands are face up), and the next position."""
    public, after = game.events_for(None, position)
    hands: list[dict[str, Any]] = []
    for seat in range(players):
        own, _ = game.events_for(seat, position)
        hands += [{**event, "seat": seat} for event in own if event["type"] == "hand"]
    # After the public ones: a new round's round_start comes before its hands are drawn.
    return public + hands, after


def steps(record: MatchRecord) -> list[Step]:
    """Replay ``record`` decision by decision; one :class:`Step` per decision, after step 0."""
    players = len(record.bots)
    bidding = record.config.bidding
    game = replay_record(record.config, [])     # then one decision at a time
    totals = [0] * players

    def described(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        nonlocal totals
        out = []
        for event in events:
            if event["type"] == "round_end" and "totals" in event:
                totals = list(event["totals"])
            text = f"{record.bots[event['seat']]} holds {' '.join(event['cards'])}" \
                if event["type"] == "hand" else describe_event(event, record.bots, bidding)
            out.append({**event, "text": text})
        return out

    events, position = _events_since(game, 0, players)
    result = [Step(0, None, None, None, described(events), list(totals))]
    faults_by_seat: dict[int, list[dict[str, Any]]] = {}
    for fault in record.faults:
        faults_by_seat.setdefault(fault.seat, []).append({"kind": fault.kind, "message": fault.message})
    for k, (seat, action) in enumerate(record.actions, start=1):
        game.apply(seat, action)
        events, position = _events_since(game, position, players)
        latency = record.latencies_ms[k - 1] if k - 1 < len(record.latencies_ms) else None
        # A decision the referee answered for the bot (no latency) is where its faults were charged.
        faults = faults_by_seat.get(seat, []) if latency is None else []
        result.append(Step(k, seat, action, latency, described(events), list(totals), faults,
                           game.winning_seat()))
    return result


def match_json(record: MatchRecord) -> dict[str, Any]:
    """``/api/matches/{id}``: the stored record and the viewer's steps."""
    return {"record": record.to_json(), "steps": [asdict(step) for step in steps(record)]}


@dataclass
class PlayedTrick:
    """One trick as the rows show it: each seat's card in words, who led, who won."""

    leader: int
    cards: list[str]                  # by seat: the card it played ("" if it played none)
    winner: int


@dataclass
class PlayedRound:
    """One round of a stored match, for the page without its script: what each seat bid
    (classic) or predicted (Extreme), every trick, and the round's scores."""

    number: int
    trump: str                        # in words ("" in Extreme, whose trump is always red)
    bids: list[str]                   # by seat
    tricks: list[PlayedTrick] = field(default_factory=list)
    scores: list[int] | None = None   # by seat: points (classic) or penalties (Extreme); None if unfinished
    totals: list[int] | None = None   # by seat, after the round


def card_words(code: str) -> str:
    """A card code in words, as the card table's titles say it.

    >>> card_words("r7"), card_words("W2"), card_words("J1")
    ('red 7', 'Wizard', 'Jester')
    """
    suits = {"r": "red", "y": "yellow", "g": "green", "b": "blue", "p": "purple"}
    if code[:1] == "W":
        return "Wizard"
    if code[:1] == "J":
        return "Jester"
    return f"{suits.get(code[:1], code[:1])} {code[1:]}"


def _tokens_words(tokens: dict[str, int]) -> str:
    return ", ".join(f"{n} {colour}" for colour, n in tokens.items() if n) or "no tokens"


def played_rounds(data: dict[str, Any]) -> list[PlayedRound]:
    """The rounds of ``data`` (:func:`match_json`'s answer, or the API's), from its steps'
    public events: what the match page shows without JavaScript."""
    bots = data["record"]["bots"]
    rounds: list[PlayedRound] = []
    turned = ""                       # the card turned up this round, in words
    for step in data["steps"]:
        for event in step["events"]:
            kind = event["type"]
            if kind == "round_start":
                rounds.append(PlayedRound(event["round"], "", [""] * len(bots)))
                continue
            if not rounds:
                continue
            current = rounds[-1]
            if kind == "trump":
                turned = f"({card_words(event['card'])} turned up)" if event["card"] else "(nothing turned up)"
                current.trump = f"{event['suit'] or 'none'} {turned}"
            elif kind == "trump_chosen":      # after a Wizard turned up: the dealer's choice
                current.trump = f"{event['suit']}, chosen by {bots[event['seat']]} {turned}"
            elif kind == "bid":
                current.bids[event["seat"]] = str(event["bid"])
            elif kind == "bids_revealed":
                current.bids = [str(bid) for bid in event["bids"]]
            elif kind == "prediction":
                current.bids[event["seat"]] = _tokens_words(event["tokens"])
            elif kind == "destroyer":
                current.bids[event["seat"]] = "the destroyer"
            elif kind == "trick":
                cards = [""] * len(bots)
                for played in event["cards"]:
                    cards[played["seat"]] = card_words(played["card"])
                current.tricks.append(PlayedTrick(event["leader"], cards, event["winner"]))
            elif kind == "round_end":
                current.scores = list(event["scores"] if "scores" in event else event["penalties"])
                current.totals = list(event["totals"])
    return rounds
