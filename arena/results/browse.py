"""Browsing stored tournaments and matches: the lists for ``arena tournaments`` and
``arena matches`` (as a table, JSON or CSV), one match round by round, re-checking a
match against the engine, and exporting it as JSON.

These are the organiser's views after a match, so they show every hand. ``show_match``
and ``verify_match`` replay the stored decision log through the engine::

    game = engine.replay_record(record.config, record.actions)

The CLI wires them as ``arena tournaments``, ``arena matches``, ``arena show MATCH``,
``arena replay MATCH --verify`` and ``arena export MATCH``. :func:`hand_size_bids` gives
a bot's exact bids by hand size over its newest classic matches (the bot page, the ladder).

Wizard Extreme totals are penalty points, so there lower is better; every list says so
(``↓`` in a table, ``score_order`` in JSON and CSV), as does ``arena show``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich.console import Console, JustifyMethod
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from arena.records import MatchRecord, final_places
from arena.stats.summaries import BandBids, band_bid_counts, empty_bands
from arena.store import MatchSummary, NewestClassic, Store, TournamentInfo
from engine import VARIANT_RECORDS, VARIANTS, EngineError, GameConfig, replay_record
from engine.describe import describe_game

# The output formats of ``arena tournaments`` and ``arena matches``.
LIST_FORMATS = ("table", "json", "csv")

# Marks a Wizard Extreme total in a table: penalty points, so lower is better.
LOWER_IS_BETTER_MARK = "↓"


def score_order(variant: str) -> str:
    """How a variant's totals rank (its record's ``score_order``): classic scores points,
    extreme counts penalties; a name the engine does not know ranks as points.

    >>> score_order("classic"), score_order("extreme")
    ('higher_is_better', 'lower_is_better')
    """
    record = VARIANT_RECORDS.get(variant)
    return record.score_order if record is not None else "higher_is_better"


def lower_is_better(variant: str) -> bool:
    """Whether the lowest total of ``variant`` wins (Wizard Extreme's penalty points)."""
    return score_order(variant) == "lower_is_better"


# --------------------------------------------------------------------------------------
# Game options, as the lists and ``show`` state them
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameOptions:
    """Every option of a game. The other variant's options are None: they do not apply.

    ``rounds`` is the number of rounds actually played: the standard length of the table
    size (or the amigo length) unless ``--rounds`` set it.
    """

    variant: str
    players: int
    rounds: int | None
    length: str | None = None            # classic: standard or amigo
    bidding: str | None = None           # classic: open, hidden or secret
    plus_minus_one: bool | None = None   # classic
    destroyer_penalty: int | None = None  # extreme

    @classmethod
    def of(cls, game: Mapping[str, Any]) -> GameOptions | None:
        """The options of a stored game config (a tournament's ``game`` settings or a
        match's config): those of its variant's record, the others None; None when they
        cannot be read.

        >>> GameOptions.of({"variant": "extreme", "players": 3, "rounds": 2}).fields()
        {'players': 3, 'rounds': 2, 'length': None, 'bidding': None, 'plus_minus_one': None, 'destroyer_penalty': 4}
        >>> GameOptions.of({"variant": "classic", "players": 5}).rounds     # the standard length
        12
        """
        try:
            config = GameConfig.from_options(game)   # the seed is no option
        except (EngineError, TypeError):
            return None
        if config.variant not in VARIANTS:      # a variant this engine does not have
            return None
        record = VARIANT_RECORDS[config.variant]
        try:
            rounds: int | None = record.rounds(config)
        except KeyError:          # a table size the rules do not have: say nothing rather than guess
            rounds = None
        return cls(config.variant, config.players, rounds,
                   **{name: getattr(config, name) for name in record.options if name not in ("players", "rounds")})

    def compact(self) -> str:
        """Every option in one short cell, for a table's ``options`` column: one column
        that wraps keeps them all on screen in a narrow terminal.

        >>> GameOptions("classic", 4, 15, "standard", "open", False).compact()
        '4 players, 15 rounds, open, standard, ±1 off'
        >>> GameOptions("extreme", 3, 1, destroyer_penalty=4).compact()
        '3 players, 1 round, destroyer 4'
        """
        words = {"bidding": f"{self.bidding}", "length": f"{self.length}",
                 "plus_minus_one": f"±1 {'on' if self.plus_minus_one else 'off'}",
                 "destroyer_penalty": f"destroyer {self.destroyer_penalty}"}
        return ", ".join([self._table(), *self._set(words)])

    def _table(self) -> str:
        rounds = "" if self.rounds is None else f", {self.rounds} round{'' if self.rounds == 1 else 's'}"
        return f"{self.players} players{rounds}"

    def _set(self, words: dict[str, str]) -> list[str]:
        """The words of the options that apply (not None), in the order of ``words``."""
        return [text for name, text in words.items() if getattr(self, name) is not None]

    def in_words(self) -> str:
        """Every option, for ``arena show``.

        >>> GameOptions("classic", 4, 3, "standard", "hidden", False).in_words()
        '4 players, 3 rounds, standard length, hidden bidding, ±1 rule off'
        >>> GameOptions("extreme", 3, 1, destroyer_penalty=4).in_words()
        '3 players, 1 round, destroyer penalty 4, totals are penalty points: lower is better'
        """
        words = {"length": f"{self.length} length", "bidding": f"{self.bidding} bidding",
                 "plus_minus_one": f"±1 rule {'on' if self.plus_minus_one else 'off'}",
                 "destroyer_penalty": f"destroyer penalty {self.destroyer_penalty}"}
        order = ["totals are penalty points: lower is better"] if lower_is_better(self.variant) else []
        return ", ".join([self._table(), *self._set(words), *order])

    def fields(self) -> dict[str, Any]:
        """The options as separate JSON/CSV fields (without the variant)."""
        return {"players": self.players, "rounds": self.rounds, "length": self.length, "bidding": self.bidding,
                "plus_minus_one": self.plus_minus_one, "destroyer_penalty": self.destroyer_penalty}


NO_OPTIONS = {"players": None, "rounds": None, "length": None, "bidding": None, "plus_minus_one": None,
              "destroyer_penalty": None}


# --------------------------------------------------------------------------------------
# Tables that fit the terminal without cutting an id
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListColumn:
    """One column of a list table.

    ``rank`` says how much the column matters: 0 is always shown; in a terminal too
    narrow for every column the highest ranks are left out first. A ``whole`` column
    (an id, a seed) is never wrapped, folded or cut, in any terminal wider than the id
    itself: ids are meant to be copied.
    """

    header: str
    rank: int
    whole: bool = False
    justify: JustifyMethod = "left"


@dataclass
class Listing:
    """What ``arena tournaments`` or ``arena matches`` prints: a rich table (and the
    headers of the columns left out to fit the terminal), or the text of JSON or CSV."""

    table: Table | None = None
    text: str | None = None
    left_out: list[str] = field(default_factory=list)


def fitted_table(columns: Sequence[ListColumn], rows: Sequence[Sequence[str]], width: int,
                 title: str | None = None, caption: str | None = None) -> tuple[Table, list[str]]:
    """A table of ``rows`` that fits ``width`` columns of terminal, and the headers it left out.

    Whole columns get ``no_wrap`` and their longest cell as ``min_width``, so rich never
    shrinks them; the other columns may wrap or fold. While even the narrowest layout is
    too wide (rich's measured minimum: every column at its longest word), the column of
    the highest rank is left out: rich itself would otherwise squeeze every column,
    ids included, once the wrapping ones cannot shrink further.

    >>> cols = [ListColumn("id", 0, whole=True), ListColumn("note", 1)]
    >>> table, left_out = fitted_table(cols, [["t-k3x9qa-00012", "a rather long note"]], width=20)
    >>> left_out
    ['note']
    """
    # Measured on a very wide console: on one of ``width`` rich would report a minimum of
    # at most ``width`` (every measurement is capped at the space available).
    measuring = Console(width=100_000, file=io.StringIO())
    shown = list(range(len(columns)))
    left_out: list[str] = []
    while True:
        table = Table(title=title, caption=caption)
        for i in shown:
            column = columns[i]
            longest = max((len(row[i]) for row in rows), default=0)
            table.add_column(column.header, justify=column.justify, no_wrap=column.whole,
                             min_width=longest if column.whole else None, overflow="fold")
        for row in rows:
            table.add_row(*(Text(row[i]) for i in shown))   # Text: bot names are never rich markup
        droppable = [i for i in shown if columns[i].rank > 0]
        if not droppable or Measurement.get(measuring, measuring.options, table).minimum <= width:
            return table, left_out
        dropped = max(droppable, key=lambda i: columns[i].rank)
        shown.remove(dropped)
        left_out.append(columns[dropped].header)


def as_csv(records: Sequence[Mapping[str, Any]], fieldnames: Sequence[str]) -> str:
    """Rows as CSV text with a header row; None is an empty cell, booleans are true/false.

    >>> print(as_csv([{"a": 1, "b": None, "c": True}], ["a", "b", "c"]), end="")
    a,b,c
    1,,true
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fieldnames), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in record.items()})
    return out.getvalue()


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _shown_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


# --------------------------------------------------------------------------------------
# arena tournaments
# --------------------------------------------------------------------------------------


@dataclass
class TournamentLine:
    """One tournament as ``arena tournaments`` lists it."""

    id: str
    created_at: datetime
    status: str                  # as shown (arena.tournament.lock.shown_status: a dead run is interrupted)
    variant: str
    options: GameOptions | None  # None: organised elsewhere, so unknown here
    deals: str | None
    games: int | None            # games scheduled
    stored: int                  # matches stored so far
    bots: list[str] | None       # None: organised elsewhere
    seed: int | None             # the master seed once the tournament has finished; None before, or unknown
    server: str | None           # HOST:PORT of the arena that played it, for --server tournaments
    format: str = "round-robin"  # or "sprt": an A/B test (arena sprt)
    test: str | None = None      # an A/B test's result in one line (arena.results.sprt.summary)

    def to_json(self) -> dict[str, Any]:
        """Stable keys, full ids, ISO dates and numbers as numbers."""
        return {
            "id": self.id, "created_at": _iso(self.created_at), "status": self.status, "variant": self.variant,
            **(self.options.fields() if self.options else NO_OPTIONS),
            "deals": self.deals, "games": self.games, "stored": self.stored, "bots": self.bots,
            "seed": self.seed, "server": self.server, "format": self.format, "test": self.test,
        }


# The stored status after which a tournament's master seed is listed (arena.web.disclosure's rule).
SEEDS_SHOWN = "finished"


TOURNAMENT_FIELDS = ["id", "created_at", "status", "variant", *NO_OPTIONS, "deals", "games", "stored", "bots",
                     "seed", "server", "format", "test"]


def tournament_lines(store: Store,
                     status_of: Callable[[TournamentInfo], str] = lambda info: info.status,
                     test_of: Callable[[TournamentInfo], str | None] = lambda info: None) -> list[TournamentLine]:
    """Every stored tournament, oldest first. ``status_of`` gives the status to show
    (the stored one unless told otherwise: whether a run stored as running is still
    alive is the tournament room's to tell), ``test_of`` an A/B test's result (the
    tournament room's too)."""
    return [_tournament_line(t, status_of(t), test_of(t)) for t in store.list_tournaments()]


def _tournament_line(t: TournamentInfo, status: str, test: str | None = None) -> TournamentLine:
    """One tournament's line. Its master seed is left out until its stored status is
    finished: before, it gives every deal still to play away, and a listing is as easy
    to leave where a bot reads it as any other output (docs/security.md)."""
    settings = t.typed_settings
    elsewhere = t.status == "remote" or settings.organised_elsewhere
    return TournamentLine(
        id=t.id, created_at=t.created_at, status=status, variant=settings.variant,
        options=None if elsewhere else GameOptions.of(settings.game),
        deals=None if elsewhere else settings.deals,
        # A server's stub of a tournament organised elsewhere knows no number of games.
        games=None if settings.organised_elsewhere else settings.games, stored=t.matches,
        bots=None if elsewhere else settings.bot_names(),
        seed=t.master_seed if t.status == SEEDS_SHOWN and not elsewhere else None, server=settings.server,
        format=settings.format, test=test,
    )


TOURNAMENT_COLUMNS = [
    ListColumn("id", 0, whole=True), ListColumn("created", 6), ListColumn("status", 1), ListColumn("variant", 2),
    ListColumn("options", 3), ListColumn("deals", 7), ListColumn("bots", 8), ListColumn("games", 5, justify="right"),
    ListColumn("stored", 4, justify="right"), ListColumn("seed", 9, whole=True, justify="right"),
]


def tournaments_listing(lines: Sequence[TournamentLine], fmt: str, width: int) -> Listing:
    """``arena tournaments`` in ``fmt`` (one of LIST_FORMATS); ``width`` is the terminal's."""
    if fmt == "json":
        return Listing(text=json.dumps([line.to_json() for line in lines], indent=2))
    if fmt == "csv":
        records = [{**line.to_json(), "bots": None if line.bots is None else " ".join(line.bots)}
                   for line in lines]   # bot names have no spaces (arena.tournament.lineup.check_name)
        return Listing(text=as_csv(records, TOURNAMENT_FIELDS).rstrip("\n"))
    rows = []
    for line in lines:
        options = line.options
        rows.append([
            line.id, _shown_time(line.created_at), line.status, line.variant,
            "–" if options is None else options.compact(), f"sprt {line.test}" if line.test else line.deals or "",
            "elsewhere" if line.bots is None else ", ".join(line.bots), "" if line.games is None else str(line.games),
            str(line.stored), "" if line.seed is None else str(line.seed),
        ])
    table, left_out = fitted_table(TOURNAMENT_COLUMNS, rows, width)
    return Listing(table=table, left_out=left_out)


# --------------------------------------------------------------------------------------
# arena matches
# --------------------------------------------------------------------------------------


@dataclass
class MatchLine:
    """One row of an ``arena matches`` table, display-ready."""

    match_id: str
    tournament: str
    game: str
    variant: str
    status: str
    finished: str
    players: str              # "alice 120 (1) · bob 80 (2) · ..."; a forfeit is marked "forfeit";
                              # extreme totals carry LOWER_IS_BETTER_MARK
    faults: int
    decisions: int
    median_ms: str


def match_rows(
    store: Store, variant: str | None = None, tournament_id: str | None = None, bot: str | None = None,
    limit: int = 50,
) -> list[MatchLine]:
    """The newest stored matches first, one display line each."""
    return [_line(m) for m in store.list_matches(variant=variant, tournament_id=tournament_id, bot=bot, limit=limit)]


def _line(summary: MatchSummary) -> MatchLine:
    mark = LOWER_IS_BETTER_MARK if lower_is_better(summary.variant) else ""
    players = " · ".join(
        f"{bot} {total}{mark} ({'forfeit' if forfeit else place})"
        for bot, total, place, forfeit in zip(summary.bots, summary.totals, summary.places, summary.forfeited)
    )
    return MatchLine(
        match_id=summary.match_id, tournament=summary.tournament_id or "–",
        game="–" if summary.game_index is None else str(summary.game_index), variant=summary.variant,
        status=summary.status, finished=_shown_time(summary.finished_at), players=players,
        faults=summary.faults, decisions=summary.decisions,
        median_ms="–" if summary.median_latency_ms is None else f"{summary.median_latency_ms:.2f}",
    )


def match_table(
    store: Store, variant: str | None = None, tournament_id: str | None = None, bot: str | None = None,
    limit: int = 50,
) -> Table:
    """``arena matches``: the newest stored matches as a rich Table."""
    return matches_table(match_rows(store, variant=variant, tournament_id=tournament_id, bot=bot, limit=limit))


def players_header(variants: set[str]) -> str:
    """The players column's header, saying what the totals mean for the variants shown.

    >>> players_header({"classic"}), players_header({"extreme"})
    ('Players (score, place)', 'Players (penalty ↓, place)')
    >>> players_header({"classic", "extreme"})
    'Players (score or penalty ↓, place)'
    """
    penalties = {variant for variant in variants if lower_is_better(variant)}
    if penalties and penalties == variants:
        return f"Players (penalty {LOWER_IS_BETTER_MARK}, place)"
    if penalties:
        return f"Players (score or penalty {LOWER_IS_BETTER_MARK}, place)"
    return "Players (score, place)"


def matches_table(lines: list[MatchLine], title: str = "Matches", width: int = 160) -> Table:
    """The lines as a rich Table (see matches_listing for the columns left out)."""
    return _matches_table(lines, title, width)[0]


def _matches_table(lines: list[MatchLine], title: str, width: int) -> tuple[Table, list[str]]:
    variants = {line.variant for line in lines}
    columns = [
        ListColumn("Match", 0, whole=True), ListColumn("Tournament", 6, whole=True),
        ListColumn("Game", 7, justify="right"), ListColumn("Variant", 2), ListColumn("Status", 3),
        ListColumn("Finished (UTC)", 4),
        ListColumn(players_header(variants), 1), ListColumn("Faults", 5, justify="right"),
        ListColumn("Decisions", 8, justify="right"), ListColumn("Median ms", 9, justify="right"),
    ]
    rows = [[line.match_id, line.tournament, line.game, line.variant, line.status, line.finished, line.players,
             str(line.faults), str(line.decisions), line.median_ms] for line in lines]
    caption = (f"{LOWER_IS_BETTER_MARK} Wizard Extreme totals are penalty points: lower is better"
               if any(lower_is_better(variant) for variant in variants) else None)
    return fitted_table(columns, rows, width, title=title, caption=caption)


def match_json(summary: MatchSummary) -> dict[str, Any]:
    """One match for ``arena matches --format json``: stable keys, full ids, ISO dates,
    numbers as numbers, and ``score_order`` saying which way the totals rank."""
    return {
        "match_id": summary.match_id, "tournament_id": summary.tournament_id, "game_index": summary.game_index,
        "variant": summary.variant, "score_order": score_order(summary.variant), "status": summary.status,
        "started_at": _iso(summary.started_at), "finished_at": _iso(summary.finished_at),
        "seats": [{"seat": seat, "bot": bot, "total": total, "place": place, "forfeited": forfeited}
                  for seat, (bot, total, place, forfeited)
                  in enumerate(zip(summary.bots, summary.totals, summary.places, summary.forfeited))],
        "faults": summary.faults, "decisions": summary.decisions,
        "median_latency_ms": summary.median_latency_ms, "max_latency_ms": summary.max_latency_ms,
    }


# One CSV row per seat, so that the header is the same whatever the table sizes; the
# match's own figures repeat on each of its rows (faults are the whole match's).
MATCH_CSV_FIELDS = ["match_id", "tournament_id", "game_index", "variant", "score_order", "status", "started_at",
                    "finished_at", "seat", "bot", "total", "place", "forfeited", "match_faults", "decisions",
                    "median_latency_ms", "max_latency_ms"]


def matches_listing(summaries: Sequence[MatchSummary], fmt: str, width: int) -> Listing:
    """``arena matches`` in ``fmt`` (one of LIST_FORMATS); ``width`` is the terminal's."""
    if fmt == "json":
        return Listing(text=json.dumps([match_json(s) for s in summaries], indent=2))
    if fmt == "csv":
        records: list[dict[str, Any]] = []
        for summary in summaries:
            match = match_json(summary)
            seats = match.pop("seats")
            match["match_faults"] = match.pop("faults")
            records.extend({**match, **seat} for seat in seats)
        return Listing(text=as_csv(records, MATCH_CSV_FIELDS).rstrip("\n"))
    table, left_out = _matches_table([_line(s) for s in summaries], "Matches", width)
    return Listing(table=table, left_out=left_out)


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
