"""Live viewing: ``slow_tournament`` (a tournament slow enough to watch), ``running_match``,
and ``card_names`` and ``moment`` (the truth to hold a live view against once the match is
over); ``get_json``.

The live-viewing check is an attacker's: every card name found in what a live viewer was
given (a page's text and HTML, an event stream's data) must have been public at that moment
of the match, and none may be a card some seat still held. The moment is the number of
decisions played so far; the stored record replayed through the engine to that point says
which cards were public and which were still in hands.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import replay_record
from engine.classic_cards import CODES as CLASSIC_CARDS
from engine.extreme_cards import CODES as EXTREME_CARDS
from factories import TEST_BOTS

SLOW_BOT = TEST_BOTS / "slow_bot.py"
# Not card names: a bot's name on a page must not pass for a card.
LIVE_BOTS = ("ann", "bob", "cy")
CARDS = {"classic": frozenset(CLASSIC_CARDS), "extreme": frozenset(EXTREME_CARDS)}
# How long a held decision may wait (slow_tournament's ``hold``): the referee's --move-time.
HOLD_SECONDS = 300


def slow_tournament(folder: Path, db: Path, *options: str, sleep_ms: int = 30,
                    hold: Path | None = None, hold_after: int = 0) -> subprocess.Popen[str]:
    """`arena tournament` as its own process, three bots that each think ``sleep_ms`` per
    decision: a match lasts seconds, long enough to be watched. Output in ``tournament.out``.
    Independent deals unless ``options`` say otherwise: a duplicate deal's matches are
    private (their cards are the hands of its other rotations) and cannot be watched.

    With ``hold``, a file the test has made, the bots (unconfined) answer nothing after
    their first ``hold_after`` requests while it exists, and a decision may take
    HOLD_SECONDS: the match waits at that decision (with ``hold_after`` 0 the first match
    at its first, listed as running) until the test removes the file. So a test watches a
    match from its start, or stops a tournament before its end, however slow a busy
    machine makes the way there (``arena web``'s start, the listing, the stored games)."""
    if "--deals" not in options:
        options = ("--deals", "independent", *options)
    if hold is not None:      # unconfined: a confined bot sees a copy of the file, never its removal
        options = ("--move-time", str(HOLD_SECONDS), "--sandbox", "none", *options)
    held = f" --hold {hold} --hold-after {hold_after}" if hold is not None else ""
    bots = [arg for name in LIVE_BOTS for arg in
            ("--bot", f"{name}={sys.executable} {SLOW_BOT} --name {name} --slow 1000000 --sleep-ms {sleep_ms}{held}")]
    with (folder / "tournament.out").open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", "--players", "3", "--concurrency",
                                 "1", "--no-samples", *bots, *options, "--db", str(db)],
                                cwd=folder, stdout=out, stderr=subprocess.STDOUT, text=True)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def running_match(base: str, timeout: float = 60.0) -> str:
    """The id of a match `arena web` at ``base`` lists as running, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        matches = get_json(f"{base}/api/live")["matches"]
        if matches:
            return str(matches[0]["match_id"])
        time.sleep(0.1)
    raise AssertionError(f"no running match was listed at {base}/api/live in {timeout:g} s")


def card_names(text: str, variant: str) -> set[str]:
    """The card names in ``text``, as whole words (``r1`` is not found in ``r13`` or ``xr1``).

    >>> sorted(card_names("ann plays r13 · xr1 · W2, trump y7", "classic"))
    ['W2', 'r13', 'y7']
    """
    return {word for word in re.findall(r"[A-Za-z0-9]+", text) if word in CARDS[variant]}


@dataclass(frozen=True)
class Moment:
    """The match after its first ``decisions`` decisions."""

    public: frozenset[str]      # every card the public events had named by then
    held: frozenset[str]        # every card still in some hand
    bids_revealed: bool         # whether this round's bids are public (always, with open bidding)


def moment(record: dict[str, Any], decisions: int) -> Moment:
    """The truth about ``record`` (a stored match, ``arena export``) after ``decisions`` decisions."""
    game = replay_record(record["config"], record["actions"][:decisions])
    public, _ = game.events_for(None, 0)
    held = set().union(*(game.observe(seat)["hand"] for seat in range(len(record["bots"]))))
    this_round = public[max(i for i, e in enumerate(public) if e["type"] == "round_start"):]
    revealed = record["config"].get("bidding", "open") == "open" or any(
        e["type"] == "bids_revealed" for e in this_round)
    return Moment(frozenset(card_names(json.dumps(public), record["variant"])), frozenset(held), revealed)
