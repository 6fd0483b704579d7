"""One stored match: round by round, re-checked against the engine, exported as JSON;
and a bot's exact bids by hand size over its newest classic matches.

These are the organiser's views after a match, so they show every hand. ``show_match``
and ``verify_match`` replay the stored decision log through the engine::

    game = engine.replay_record(record.config, record.actions)

The CLI wires them as ``arena show MATCH``, ``arena replay MATCH --verify`` and
``arena export MATCH``. :func:`hand_size_bids` gives a bot's exact bids by hand size over
its newest classic matches (the bot page, the ladder). The lists of ``arena tournaments``
and ``arena matches`` are ``arena.results.listings``.

Wizard Extreme totals are penalty points, so there lower is better; ``arena show`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from arena.records import MatchRecord, final_places
from arena.results.game_options import GameOptions
from arena.stats.summaries import BandBids, band_bid_counts, empty_bands
from arena.store import NewestClassic, Store
from engine import EngineError, replay_record
from engine.describe import describe_game

# --------------------------------------------------------------------------------------
# A bot's exact bids by hand size
# --------------------------------------------------------------------------------------

# How many of a bot's newest completed classic matches the per-hand-size figures read:
# each is a stored result to parse (no decision log), so a bot page stays quick however
# many games the bot played.
HAND_SIZE_MATCHES = 1000


@dataclass
class HandSizeBids:
    """A bot's classic rounds and exact bids per hand-size band (``HAND_SIZE_BANDS``), over
    its ``matches`` newest completed classic matches: all of them when fewer than ``limit``."""

    bot: str
    matches: int
    limit: int
    bands: list[BandBids] = field(default_factory=empty_bands)

    @property
    def capped(self) -> bool:
        """The bot may have played more classic matches than were read."""
        return self.matches >= self.limit

    def to_json(self) -> dict[str, Any]:
        return {"matches": self.matches, "limit": self.limit, "capped": self.capped,
                "bands": [{"cards": b.cards, "low": b.low, "high": b.high, "rounds": b.rounds, "exact_bids": b.exact,
                           "exact_bid_rate": b.rate} for b in self.bands]}


def hand_size_bids(store: Store, bot: str, limit: int = HAND_SIZE_MATCHES) -> HandSizeBids:
    """The exact bids of ``bot`` by hand size over its ``limit`` newest completed classic
    matches (every seat it held in them), from the stored configs and results
    (:func:`arena.stats.summaries.band_bid_counts`), read in one snapshot (``Store.newest_classic``)."""
    return hand_size_bids_of(bot, store.newest_classic(bot, limit), limit)


def hand_size_bids_of(bot: str, newest: NewestClassic, limit: int) -> HandSizeBids:
    """:func:`hand_size_bids` from the ``limit`` newest classic matches already read (a bot
    page's snapshot holds them)."""
    figures = HandSizeBids(bot, newest.matches, limit)
    for game in newest.games:
        band_bid_counts(game.config, game.result, game.seats, figures.bands)
    return figures


def export_match(store: Store, match_id: str) -> dict[str, Any]:
    """The stored match as JSON-ready data (``MatchRecord.to_json()``)."""
    return store.load_match(match_id).to_json()


# --------------------------------------------------------------------------------------
# Show: the match round by round
# --------------------------------------------------------------------------------------


def show_match(store: Store, match_id: str, seed_shown: bool = True) -> Text:
    """The match as text: seats, then every round (hands, trump, bids or predictions,
    each trick and its winner, the round's scores), then the result; its deal seed
    only when ``seed_shown`` (see :func:`describe_match`).

    A rich ``Text``, so that ``console.print`` shows brackets in bot names and lists
    literally; ``str()`` of it is the plain text.
    """
    return Text(describe_match(store.load_match(match_id), seed_shown))


def describe_match(record: MatchRecord, seed_shown: bool = True) -> str:
    """``show_match`` for a record at hand (no store needed). Without ``seed_shown`` the
    deal seed is left out: a match of a tournament that has not finished, whose deal
    seed may be the deal of games still to play (arena.web.disclosure's rule)."""
    names = [f"{bot} (seat {seat})" for seat, bot in enumerate(record.bots)]
    seed = f"seed {record.seed}" if seed_shown else "seed withheld until its tournament has finished"
    lines = [
        f"Match {record.match_id} · {record.variant} · {len(record.bots)} players · {seed} · {record.status}",
    ]
    if record.tournament_id:
        lines.append(f"Tournament {record.tournament_id}, game {record.game_index}")
    options = GameOptions.of(record.config.to_dict())
    if options is not None:
        lines.append(f"Options: {options.in_words()}")
    lines.append("Seats: " + " · ".join(f"{seat}: {bot} {version}".rstrip()
                                        for seat, (bot, version) in enumerate(zip(record.bots, record.bot_versions))))
    try:
        game = replay_record(record.config, record.actions)
    except (EngineError, ValueError, TypeError) as error:
        lines.append(f"The stored log does not replay: {error}")
        return "\n".join(lines)

    lines += describe_game(game, record.bots)
    lines.append("")
    if game.is_over:
        result = game.result()
        order = " (penalty points: lower is better)" if not result.higher_is_better else ""
        lines.append(f"Result{order}: " + " · ".join(
            f"{bot} {total} (place {place}{', forfeited' if forfeit else ''})"
            for bot, total, place, forfeit in zip(record.bots, record.totals, record.places, record.forfeited)
        ))
        if list(result.totals) != list(record.totals):
            lines.append(f"Warning: the replay's totals {list(result.totals)} differ from the stored ones")
    else:
        lines.append(f"The log ends before the game does ({len(record.actions)} decisions; status {record.status}).")
    if record.faults:
        lines.append("Faults:")
        for fault in record.faults:
            request = f" request {fault.request_id}" if fault.request_id is not None else ""
            lines.append(f"  {names[fault.seat] if 0 <= fault.seat < len(names) else fault.seat}: "
                         f"{fault.kind}{request}: {fault.message}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Verify: does the stored log reproduce the stored result?
# --------------------------------------------------------------------------------------


def verify_match(store: Store, match_id: str) -> tuple[bool, str]:
    """Replay the stored log through the engine and compare totals, places (after
    forfeits, via ``final_places``) and the result with what is stored.

    Returns ``(ok, message)``; the message names the first difference.
    """
    return verify_record(store.load_match(match_id))


def verify_record(record: MatchRecord) -> tuple[bool, str]:
    """``verify_match`` for a record at hand."""
    try:
        game = replay_record(record.config, record.actions)
    except (EngineError, ValueError, TypeError) as error:
        return False, f"{record.match_id}: the stored log does not replay: {error}"
    if not game.is_over:
        if record.status == "completed":
            return False, f"{record.match_id}: the log ends before the game does, but the match is marked completed"
        return True, (f"{record.match_id}: {len(record.actions)} decisions replay; "
                      f"the match was {record.status} before the end")
    result = game.result()
    if list(result.totals) != list(record.totals):
        return False, f"{record.match_id}: totals differ: replay {list(result.totals)}, stored {record.totals}"
    places = final_places(list(result.totals), list(record.forfeited), result.higher_is_better)
    if places != list(record.places):
        return False, f"{record.match_id}: places differ: replay {places}, stored {record.places}"
    if result.to_json() != record.result_json():
        return False, f"{record.match_id}: the stored result differs from the replay's"
    return True, f"{record.match_id}: {len(record.actions)} decisions replay to the stored totals, places and result"
