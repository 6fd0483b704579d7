"""The lists of ``arena tournaments`` and ``arena matches``: one line per stored
tournament or match, as a table fitted to the terminal, JSON or CSV.

The table is ``arena.results.render.table``'s :func:`~arena.results.render.table.fitted_table`,
which leaves out the least needed columns rather than cut an id; the CSV is
``arena.results.render.csv``'s :func:`~arena.results.render.csv.as_csv`. Wizard Extreme
totals are penalty points, so there lower is better; every list says so (``↓`` in a
table, ``score_order`` in JSON and CSV).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich.table import Table

from arena.results.game_options import NO_OPTIONS, GameOptions, lower_is_better, score_order
from arena.results.render.csv import as_csv
from arena.results.render.table import ListColumn, fitted_table
from arena.store import MatchSummary, Store, TournamentInfo

# The output formats of ``arena tournaments`` and ``arena matches``.
LIST_FORMATS = ("table", "json", "csv")

# Marks a Wizard Extreme total in a table: penalty points, so lower is better.
LOWER_IS_BETTER_MARK = "↓"


@dataclass
class Listing:
    """What ``arena tournaments`` or ``arena matches`` prints: a rich table (and the
    headers of the columns left out to fit the terminal), or the text of JSON or CSV."""

    table: Table | None = None
    text: str | None = None
    left_out: list[str] = field(default_factory=list)


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
        options=None if elsewhere else GameOptions.of(settings.game_config(0).options()),
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
