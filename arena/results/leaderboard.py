"""Leaderboards: one row per bot, sorted by Bradley–Terry rating, in five output formats.

    >>> import tempfile, os
    >>> from arena.results import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "arena.db"))
    >>> leaderboard(store, "classic")
    []

A row carries the rating (1500 + Bradley–Terry rating relative to the mean, see
``docs/ratings.md``), its 95% interval as ± half-width (None, shown ``?``, when the bot
played too few deals to know it), the latest online Elo, and
per-bot averages over the completed matches the board covers: score, place, exact
bids (classic), faults and timeouts, and the bot's think time (median and 99th
percentile of the decisions it answered, from the store's histograms: see
``arena.results.think_times``), and how often the bot's process crashed (exited, or was
killed for a limit) in the board's variant or tournament, with the last crash's reason.
Nothing here reads a match log.

A board where no bot crashed looks as if crashes did not exist (no empty column): the
crash count is a column only when some bot of the board crashed, and the terminal,
Markdown and HTML boards then add one line per crashed bot (:func:`crash_lines`). JSON
rows always carry ``crashes`` and ``last_crash``.

:func:`board` adds a title and :class:`BoardMetadata` (when, which tournaments and
game options, how many games, which arena version): what every exported board
carries, in each format its own way (see :func:`render`).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena import __version__
from arena.results import crosstable
from arena.results.elo import START_ELO
from arena.results.elo_history import elo_history
from arena.results.elo_plot import elo_svg
from arena.results.ratings import DEFAULT_BOOTSTRAP_SAMPLES, MIN_UNITS, pairwise_from_tables, rate
from arena.results.think_times import RESOLUTION
from arena.store import LeaderboardInputs, Store
from engine import ConfigError, GameConfig

FORMATS = ("table", "md", "csv", "json", "html")
# Classic scores points (more is better); Wizard Extreme counts penalty points (fewer is better).
SCORE_ORDER = {"classic": "higher_is_better", "extreme": "lower_is_better"}
# The game options that mean something in each variant (GameConfig fields; see engine.core).
VARIANT_OPTIONS = {
    "classic": ("players", "rounds", "length", "bidding", "plus_minus_one"),
    "extreme": ("players", "rounds", "destroyer_penalty"),
}


@dataclass
class LeaderboardRow:
    rank: int
    bot: str
    rating: float                    # 1500 + Bradley–Terry rating relative to the mean
    # ± half-width of the 95% bootstrap interval; None: not known (the bot played fewer
    # than arena.results.ratings.MIN_UNITS deals, too few to say how sure the rating is).
    interval: float | None
    elo: float | None                # online Elo now (for one tournament: after its last match there)
    games: int
    avg_score: float
    avg_place: float
    exact_bid_rate: float | None     # classic: share of rounds bid exactly; None for extreme
    faults: int
    forfeits: int
    # Think time per decision the bot answered (not the fallbacks the referee played for
    # it), in ms, within ±RESOLUTION (arena.results.think_times); None when it answered none.
    think_p50_ms: float | None = None
    think_p99_ms: float | None = None
    timeouts: int = 0                # faults of kind "timeout" (also counted in faults)
    # "lower" when the rating is only a lower bound (the bot, or it and the bots level
    # with it, never lost a pairwise game to the rest of its group), "upper" the other
    # way round, "none" when it is neither; None: a rating like any other (see
    # arena.results.ratings.rating_bounds).
    bound: str | None = None
    # The bot's comparison group, 1, 2, ..., when the board's bots fall into groups that
    # never met (their ratings compare only within a group); None when they all did.
    group: int | None = None
    # How often the arena saw the bot's process end while it should have been playing,
    # in the board's variant (or tournament), and the last time's reason; None: never.
    crashes: int = 0
    last_crash: str | None = None


@dataclass
class OptionSet:
    """One set of game options and the tournaments of the board that were played with it."""

    options: dict[str, Any] | None   # None: not known (no settings, no stored match)
    tournaments: list[str]
    games: int


@dataclass
class BoardMetadata:
    """What an exported board says about itself: when, what it covers, and by what rules."""

    generated_at: str                # UTC, ISO 8601: 2025-06-01T12:00:00Z
    variant: str
    score_order: str                 # higher_is_better (classic) or lower_is_better (extreme)
    tournaments: list[str]           # the tournaments whose completed matches the board counts
    games: int                       # completed matches counted, outside tournaments included
    games_outside_tournaments: int   # ladder and single matches
    option_sets: list[OptionSet]     # one per distinct set of game options among the tournaments
    min_games: int                   # bots with fewer games are hidden (still rated)
    arena_version: str
    think_time_resolution: float = round(RESOLUTION, 4)    # relative; percentiles are nearest-rank
    # The A/B tests (arena sprt) among the tournaments, each with its result
    # (arena.results.sprt.ab_test_result).
    tests: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Board:
    """A leaderboard with its title and metadata: what ``export`` and the CLI write."""

    title: str
    metadata: BoardMetadata
    rows: list[LeaderboardRow] = field(default_factory=list)


def leaderboard(
    store: Store,
    variant: str,
    tournament_id: str | None = None,
    min_games: int = 0,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> list[LeaderboardRow]:
    """The leaderboard of one variant over its completed matches (or one tournament's).

    Every bot takes part in the fit; ``min_games`` only hides bots with fewer matches.
    The bootstrap is seeded (``seed``), so the same data always gives the same board.
    """
    return _rows(store.leaderboard_inputs(variant, tournament_id), variant, min_games, samples, seed)


def board(
    store: Store,
    variant: str,
    tournament_id: str | None = None,
    min_games: int = 0,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    generated_at: datetime | None = None,
) -> Board:
    """The leaderboard (as :func:`leaderboard`) with its title and metadata.

    The rows and the game counts come from one snapshot of the store; the tournaments'
    game options from their stored settings (see ``Store.tournament_game_options``).
    """
    inputs = store.leaderboard_inputs(variant, tournament_id)
    rows = _rows(inputs, variant, min_games, samples, seed)
    games = inputs.games_by_tournament
    if tournament_id is not None:
        tournaments = [tournament_id]
    else:
        tournaments = sorted(t for t in games if t)
    stored_options = store.tournament_game_options(tournaments)
    sets: dict[str, OptionSet] = {}
    for tournament in tournaments:
        options = game_options(stored_options.get(tournament), variant)
        option_set = sets.setdefault(json.dumps(options, sort_keys=True), OptionSet(options, [], 0))
        option_set.tournaments.append(tournament)
        option_set.games += games.get(tournament, 0)
    moment = (generated_at or datetime.now(UTC)).astimezone(UTC)
    return Board(
        title=title_of(variant, tournament_id),
        metadata=BoardMetadata(
            generated_at=moment.strftime("%Y-%m-%dT%H:%M:%SZ"), variant=variant,
            score_order=SCORE_ORDER.get(variant, "higher_is_better"), tournaments=tournaments,
            games=sum(games.values()), games_outside_tournaments=games.get("", 0),
            option_sets=list(sets.values()), min_games=min_games, arena_version=__version__,
            tests=_tests(store, tournaments),
        ),
        rows=rows,
    )


def _tests(store: Store, tournaments: list[str]) -> list[dict[str, Any]]:
    """The A/B tests among ``tournaments``, with their results."""
    from arena.results.sprt import ab_test_result

    found = []
    for tournament in tournaments:
        settings = store.get_tournament(tournament).settings
        if settings.get("sprt"):
            found.append({"tournament": tournament, **ab_test_result(store, tournament, settings)})
    return found


def game_options(stored: dict[str, Any] | None, variant: str) -> dict[str, Any] | None:
    """The options of a variant that a stored game config (or settings' ``game``) sets,
    with the engine's defaults filled in and the seed left out.

    >>> game_options({"variant": "classic", "players": 5, "seed": 9}, "classic")
    {'players': 5, 'rounds': None, 'length': 'standard', 'bidding': 'open', 'plus_minus_one': False}
    >>> game_options({"variant": "extreme", "rounds": 3}, "extreme")
    {'players': 4, 'rounds': 3, 'destroyer_penalty': 4}
    """
    if stored is None:
        return None
    try:
        full = GameConfig.from_dict({**stored, "seed": 0}).to_dict()
    except (ConfigError, TypeError):
        full = dict(stored)    # options this engine does not know: shown as stored
    known = VARIANT_OPTIONS.get(variant)
    return {k: v for k, v in full.items() if k in known} if known else {
        k: v for k, v in full.items() if k not in ("seed", "variant")}


def _rows(inputs: LeaderboardInputs, variant: str, min_games: int, samples: int, seed: int) -> list[LeaderboardRow]:
    """The sorted, ranked rows of a board from what the store read."""
    index = {name: i for i, name in enumerate(inputs.bots)}
    games = pairwise_from_tables(inputs.tables, n_bots=len(inputs.bots), deals=inputs.deals)
    fit = rate(games, samples=samples, seed=seed)
    elo = inputs.elo
    grouped = len(set(fit.groups.tolist())) > 1

    rows = []
    for agg in inputs.aggregates:
        if agg.games < min_games:
            continue
        i = index[agg.bot]
        crashed = inputs.crashes.get(agg.bot)
        half_width = float(fit.half_widths[i])
        rows.append(LeaderboardRow(
            rank=0, bot=agg.bot, rating=START_ELO + float(fit.ratings[i]),
            interval=None if math.isnan(half_width) else half_width,
            elo=elo[agg.bot][0] if agg.bot in elo else None, games=agg.games,
            avg_score=agg.score_sum / agg.seats, avg_place=agg.place_sum / agg.seats,
            exact_bid_rate=((agg.exact_bids or 0) / agg.rounds) if variant == "classic" and agg.rounds else None,
            faults=agg.faults, forfeits=agg.forfeits,
            think_p50_ms=agg.think_times.percentile(50), think_p99_ms=agg.think_times.percentile(99),
            timeouts=agg.timeouts, bound=fit.bounds[i], group=int(fit.groups[i]) + 1 if grouped else None,
            crashes=crashed.count if crashed else 0, last_crash=crashed.last_reason if crashed else None,
        ))
    rows.sort(key=lambda r: (-r.rating, -r.games, r.bot))
    for rank, row in enumerate(rows, start=1):
        row.rank = rank
    return rows


# --------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------

_LOWER_IS_BETTER = "Avg score (lower is better)"
_HEADERS = ["#", "Bot", "Rating", "±", "Elo", "Games", "Avg score", "Avg place", "Exact bids",
            "Think p50 ms", "Think p99 ms", "Faults", "Timeouts"]
# Headers as the table shows them on a terminal too narrow for one-line headers; the
# think-time ones lose "Think" there (the caption says what they are).
_FOLDED = {"Think p50 ms": "p50\nms", "Think p99 ms": "p99\nms", "Timeouts": "Time-\nouts",
           _LOWER_IS_BETTER: "Avg\nscore\n(lower is\nbetter)"}
_THINK_NOTE = ("Think p50/p99: median and 99th percentile of the bot's think time per decision it answered, "
               f"in ms (within ±{100 * RESOLUTION:.1f}%).")


def _ms(value: float | None) -> str:
    """A think time for display: about three significant digits (the data has two).

    >>> [_ms(v) for v in (None, 0.0102, 5.234, 12.34, 1234.5)]
    ['–', '0.01', '5.23', '12.3', '1234']
    """
    if value is None:
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _cells(row: LeaderboardRow, variant: str, crashes: bool = False) -> list[str]:
    """One row as display strings (md, html, table); ``crashes``: with the Crashes column."""
    cells = [
        str(row.rank), row.bot, _rating_text(row), interval_text(row),
        "–" if row.elo is None else f"{row.elo:.0f}", str(row.games), f"{row.avg_score:.1f}",
        f"{row.avg_place:.2f}",
    ]
    if variant == "classic":
        cells.append("–" if row.exact_bid_rate is None else f"{100 * row.exact_bid_rate:.1f}%")
    cells += [_ms(row.think_p50_ms), _ms(row.think_p99_ms), str(row.faults), str(row.timeouts)]
    if crashes:
        cells.append(str(row.crashes))
    return cells


def _crashed(rows: Sequence[LeaderboardRow]) -> bool:
    """Whether the board shows crashes at all: some bot of it crashed."""
    return any(row.crashes for row in rows)


def crash_lines(rows: Sequence[LeaderboardRow]) -> list[str]:
    """One line per crashed bot of the board, in board order: how often, and the last reason.

    >>> rows = [LeaderboardRow(1, "ann", 1600.0, 9.0, None, 3, 1.0, 1.0, None, 0, 0),
    ...         LeaderboardRow(2, "evil", 1400.0, 9.0, None, 3, 1.0, 1.0, None, 0, 0, crashes=3,
    ...                        last_crash="killed: out of memory (limit 512 MiB)"),
    ...         LeaderboardRow(3, "odd", 1400.0, 9.0, None, 3, 1.0, 1.0, None, 0, 0, crashes=1,
    ...                        last_crash="exited with code 1")]
    >>> for line in crash_lines(rows): print(line)
    crash: evil crashed 3 times; last: killed: out of memory (limit 512 MiB)
    crash: odd crashed once: exited with code 1
    """
    return [crash_line(row.bot, row.crashes, row.last_crash) for row in rows if row.crashes]


def crash_line(bot: str, crashes: int, last_reason: str | None) -> str:
    """The line a board shows for a bot that crashed (the web's board writes it too)."""
    if crashes == 1:
        return f"crash: {bot} crashed once: {last_reason}"
    return f"crash: {bot} crashed {crashes} times; last: {last_reason}"


_BOUND_SIGNS = {"lower": "≥", "upper": "≤", "none": "~"}


def _group_name(group: int) -> str:
    """A comparison group's name on a board: A, B, ... (then numbers)."""
    return chr(ord("A") + group - 1) if group <= 26 else str(group)


UNKNOWN_INTERVAL = "?"


def interval_text(row: LeaderboardRow) -> str:
    """The ± cell: ``±23``; ``–`` for a rating that is only a bound (no interval says
    more than "at least"); :data:`UNKNOWN_INTERVAL` when the bot played too few deals.

    >>> rows = [LeaderboardRow(1, "a", 1500.0, 23.4, None, 9, 1.0, 1.0, None, 0, 0),
    ...         LeaderboardRow(2, "b", 1500.0, None, None, 1, 1.0, 1.0, None, 0, 0),
    ...         LeaderboardRow(3, "c", 1900.0, 50.0, None, 9, 1.0, 1.0, None, 0, 0, bound="lower")]
    >>> [interval_text(row) for row in rows]
    ['±23', '?', '–']
    """
    if row.bound:
        return "–"
    return UNKNOWN_INTERVAL if row.interval is None else f"±{row.interval:.0f}"


def _rating_text(row: LeaderboardRow) -> str:
    """The rating as the board shows it: ``≥1834`` for a lower bound, ``1620 [B]`` in group B.

    >>> row = LeaderboardRow(1, "a", 1834.4, 50.0, None, 3, 1.0, 1.0, None, 0, 0, bound="lower", group=2)
    >>> _rating_text(row)
    '≥1834 [B]'
    """
    text = _BOUND_SIGNS.get(row.bound or "", "") + f"{row.rating:.0f}"
    return text + (f" [{_group_name(row.group)}]" if row.group is not None else "")


def board_notes(rows: Sequence[LeaderboardRow]) -> list[str]:
    """What a reader must know to read the ratings of these rows: the bots fall into groups
    that never met, some intervals are not known, or some ratings are only bounds. Every
    format shows them.

    >>> rows = [LeaderboardRow(1, "a", 1600.0, 9.0, None, 3, 1.0, 1.0, None, 0, 0, group=1),
    ...         LeaderboardRow(2, "b", 1400.0, 9.0, None, 3, 1.0, 1.0, None, 0, 0, group=1, bound="upper"),
    ...         LeaderboardRow(3, "c", 1500.0, None, None, 1, 1.0, 1.0, None, 0, 0, group=2)]
    >>> for note in board_notes(rows): print(note)
    The bots fall into 2 groups that never played each other, not even through other bots: A: a, b; B: c. Ratings compare only within a group; each group averages 1500.
    ?: c played fewer than 3 deals, too few to say how sure its rating is: its interval is not known.
    ≤: b never won a pairwise game, nor shared a place, against any other bot of its group, so its rating is only an upper bound.
    """  # noqa: E501 (the notes are one line each)
    notes = []
    groups: dict[int, list[str]] = {}
    for row in rows:
        if row.group is not None:
            groups.setdefault(row.group, []).append(row.bot)
    if len(groups) > 1:
        listed = "; ".join(f"{_group_name(g)}: {', '.join(bots)}" for g, bots in sorted(groups.items()))
        notes.append(f"The bots fall into {len(groups)} groups that never played each other, not even through "
                     f"other bots: {listed}. Ratings compare only within a group; each group averages 1500.")
    unknown = [row.bot for row in rows if row.interval is None and not row.bound]
    if unknown:
        many = len(unknown) > 1
        notes.append(f"{UNKNOWN_INTERVAL}: {', '.join(unknown)} played fewer than {MIN_UNITS} deals, too few to "
                     f"say how sure {'their ratings are' if many else 'its rating is'}: "
                     f"{'their intervals are' if many else 'its interval is'} not known.")
    for bound, text in (
            ("lower", "never lost a pairwise game, nor shared a place, to {others}, so {whose} rating is only a "
                      "lower bound"),
            ("upper", "never won a pairwise game, nor shared a place, against {others}, so {whose} rating is "
                      "only an upper bound"),
            ("none", "won only against some of {whose} group and lost only to the others, so {whose} rating "
                     "is not bounded either way")):
        bots = [row.bot for row in rows if row.bound == bound]
        if bots:
            many = len(bots) > 1
            words = text.format(whose="their" if many else "its",
                                others="a bot of their group other than these" if many else
                                "any other bot of its group")
            notes.append(f"{_BOUND_SIGNS[bound]}: {', '.join(bots)} {words}.")
    return notes


def _headers(variant: str, crashes: bool = False) -> list[str]:
    headers = _HEADERS if variant == "classic" else [
        _LOWER_IS_BETTER if h == "Avg score" else h for h in _HEADERS if h != "Exact bids"]
    return [*headers, "Crashes"] if crashes else headers


def _csv_fields(variant: str, crashes: bool = False) -> list[str]:
    """The CSV columns of a variant's rows: LeaderboardRow's fields, with the score's
    order in its name for Wizard Extreme, and the crash fields only when some bot crashed."""
    fields = list(LeaderboardRow.__dataclass_fields__)
    if variant != "classic":
        fields.remove("exact_bid_rate")
    if not crashes:
        fields.remove("crashes")
        fields.remove("last_crash")
    if SCORE_ORDER.get(variant) == "lower_is_better":
        fields[fields.index("avg_score")] = "avg_score_lower_is_better"
    return fields


def title_of(variant: str, tournament_id: str | None = None) -> str:
    """A board's title: ``Wizard classic leaderboard``, with the tournament when it is one's."""
    return f"Wizard {variant} leaderboard" + (f", tournament {tournament_id}" if tournament_id else "")


def _row_json(row: LeaderboardRow) -> dict[str, Any]:
    data = asdict(row)
    for key in ("rating", "interval", "elo", "avg_score", "avg_place", "exact_bid_rate", "think_p50_ms",
                "think_p99_ms"):
        if data[key] is not None:
            data[key] = round(data[key], 4)
    return data


def _as_json(rows: list[LeaderboardRow], variant: str, title: str | None = None,
             metadata: BoardMetadata | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"variant": variant, "title": title or title_of(variant)}
    if metadata is not None:
        data["metadata"] = asdict(metadata)
    data["notes"] = board_notes(rows)
    data["rows"] = [_row_json(r) for r in rows]
    return data


def _options_text(options: dict[str, Any] | None) -> str:
    """Game options in words.

    >>> _options_text({"players": 4, "rounds": None, "bidding": "open", "plus_minus_one": False})
    'players 4, rounds standard, bidding open, ±1 off'
    """
    if options is None:
        return "not known"
    names = {"plus_minus_one": "±1", "destroyer_penalty": "destroyer penalty"}

    def shown(key: str, value: Any) -> str:
        if isinstance(value, bool):
            return "on" if value else "off"
        return "standard" if value is None and key == "rounds" else str(value)

    return ", ".join(f"{names.get(k, k)} {shown(k, v)}" for k, v in options.items()) or "the defaults"


def _metadata_lines(metadata: BoardMetadata) -> list[tuple[str, str | list[str]]]:
    """The metadata as (label, text or list of texts), shared by Markdown and HTML."""
    order = "lower" if metadata.score_order == "lower_is_better" else "higher"
    tournaments = ", ".join(metadata.tournaments) or "none"
    if metadata.games_outside_tournaments:
        tournaments += f" (and {metadata.games_outside_tournaments} games outside tournaments)"
    lines: list[tuple[str, str | list[str]]] = [
        ("Generated", f"{metadata.generated_at} by arena {metadata.arena_version}"),
        ("Variant", f"{metadata.variant} ({order} scores are better)"),
        ("Tournaments", tournaments),
    ]
    sets = metadata.option_sets
    if len(sets) == 1:
        lines.append(("Game options", _options_text(sets[0].options)))
    elif sets:
        lines.append(("Game options (they differ between tournaments)", [
            f"{', '.join(s.tournaments)} ({s.games} games): {_options_text(s.options)}" for s in sets]))
    lines.append(("Games", str(metadata.games)))
    if metadata.tests:
        lines.append(("A/B tests", [f"{t['tournament']}: {t['summary']}" for t in metadata.tests]))
    if metadata.min_games:
        lines.append(("Shown", f"bots with at least {metadata.min_games} games (all are rated)"))
    return lines


def _markdown_header(title: str, metadata: BoardMetadata) -> list[str]:
    lines = [f"# {title}", ""]
    for label, text in _metadata_lines(metadata):
        if isinstance(text, list):
            lines.append(f"- **{label}:**")
            lines += [f"  - {item}" for item in text]
        else:
            lines.append(f"- **{label}:** {text}")
    return lines + [""]


def _html_metadata(metadata: BoardMetadata) -> str:
    items = []
    for label, text in _metadata_lines(metadata):
        if isinstance(text, list):
            text_html = "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in text) + "</ul>"
        else:
            text_html = html.escape(text)
        items.append(f"<dt>{html.escape(label)}</dt><dd>{text_html}</dd>")
    return '<dl class="metadata">\n' + "\n".join(items) + "\n</dl>\n"


def _csv_metadata(metadata: BoardMetadata) -> dict[str, Any]:
    """The metadata as ``meta_*`` columns, the same on every row (see render)."""
    return {
        "meta_generated_at": metadata.generated_at, "meta_variant": metadata.variant,
        "meta_score_order": metadata.score_order, "meta_tournaments": " ".join(metadata.tournaments),
        "meta_games": metadata.games, "meta_games_outside_tournaments": metadata.games_outside_tournaments,
        "meta_option_sets": json.dumps([asdict(s) for s in metadata.option_sets], separators=(",", ":")),
        "meta_min_games": metadata.min_games, "meta_arena_version": metadata.arena_version,
        "meta_think_time_resolution": metadata.think_time_resolution,
        "meta_tests": json.dumps(metadata.tests, separators=(",", ":")),
    }


@dataclass(frozen=True)
class ReplayLink:
    """A replay page written beside an exported board (``matches/<id>.html``), as the
    board's "Replays" section lists it."""

    match_id: str
    variant: str
    finished_at: datetime
    bots: list[str]
    totals: list[int]

    @property
    def href(self) -> str:
        """The page's address relative to the board (ids may hold ``#`` or ``?``)."""
        return f"matches/{quote(self.match_id, safe='')}.html"

    def players(self) -> str:
        return ", ".join(f"{bot} {total}" for bot, total in zip(self.bots, self.totals))


def render(
    rows: list[LeaderboardRow],
    fmt: str,
    variant: str,
    console: Console | None = None,
    title: str | None = None,
    metadata: BoardMetadata | None = None,
    elo_plot: str = "",
    replays: Sequence[ReplayLink] = (),
) -> str | Table:
    """Render a leaderboard: ``table`` gives a rich Table (printed to ``console`` if one
    is given); ``md``, ``csv``, ``json`` and ``html`` give text.

    With ``metadata`` (see :func:`board`) the text formats carry it: Markdown a list
    under a heading, HTML a ``<dl>``, JSON a ``"metadata"`` object beside ``"rows"``,
    and CSV ``meta_*`` columns after the row's own, repeated on every row. (Not ``#``
    comment lines: csv readers, spreadsheets and pandas would take them for rows.)

    An exported board adds, in HTML, ``elo_plot`` (``arena.results.elo_plot``'s SVG) and,
    in Markdown and HTML, a "Replays" section linking each of ``replays``.

    When some bot of the board crashed, every format but JSON (whose rows always carry
    ``crashes``) gets a Crashes column, and the table (in its caption), Markdown and HTML
    the :func:`crash_lines`; a board without crashes renders as if they did not exist.

    >>> row = LeaderboardRow(1, "a<b", 1510.2, 12.3, 1504.0, 10, 55.5, 1.9, 0.25, 0, 0, 0.52, 3.1, 0)
    >>> print(render([row], "md", "classic"))
    | # | Bot | Rating | ± | Elo | Games | Avg score | Avg place | Exact bids | Think p50 ms | Think p99 ms | Faults | Timeouts |
    |---|---|---|---|---|---|---|---|---|---|---|---|---|
    | 1 | a<b | 1510 | ±12 | 1504 | 10 | 55.5 | 1.90 | 25.0% | 0.52 | 3.10 | 0 | 0 |
    >>> "a&lt;b" in render([row], "html", "classic")
    True
    """  # noqa: E501 (the Markdown header above is one line)
    title = title or title_of(variant)
    crashed = _crashed(rows)
    headers = _headers(variant, crashed)
    if fmt == "table":
        cells = [_cells(row, variant, crashed) for row in rows]
        widths = [max([len(row_cells[i]) for row_cells in cells] + [len(h)]) for i, h in enumerate(headers)]
        # Names and numbers are never cut: on a terminal too narrow for one-line headers
        # ("Avg score"), they are folded onto several lines and the columns drawn closer
        # together (rich would drop whole columns).
        fold = console is None or sum(widths) + 2 * len(widths) > console.width
        folded = [_FOLDED.get(h, h.replace(" ", "\n")) if fold else h for h in headers]
        caption = "\n".join([*board_notes(rows), _THINK_NOTE, *crash_lines(rows)])
        table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                      padding=0 if fold else (0, 1), show_edge=not fold)
        for i, header in enumerate(folded):
            widest = max([len(row_cells[i]) for row_cells in cells] + [max(map(len, header.split("\n")))])
            table.add_column(header, justify="left" if headers[i] == "Bot" else "right", min_width=min(widest, 30))
        for row_cells in cells:
            table.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in row_cells))
        if console is not None:
            console.print(table)
        return table
    if fmt == "md":
        lines = _markdown_header(title, metadata) if metadata is not None else []
        lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(r, variant, crashed)) + " |"
                  for r in rows]
        notes = board_notes(rows)
        if notes:
            lines += [""] + [f"**Note:** {_md_text(note)}" for note in notes]
        if crashed:
            lines += [""] + [f"- {_md_text(line)}" for line in crash_lines(rows)]
        if metadata is not None:
            lines += ["", _THINK_NOTE]
        if replays:
            lines += ["", "## Replays", ""] + [
                f"- [{_md_text(r.match_id)}]({r.href}): {r.finished_at:%Y-%m-%d %H:%M} UTC, {_md_text(r.players())}"
                for r in replays]
        return "\n".join(lines)
    if fmt == "csv":
        out = io.StringIO()
        fields = _csv_fields(variant, crashed)
        extra = _csv_metadata(metadata) if metadata is not None else {}
        writer = csv.DictWriter(out, fieldnames=fields + list(extra), extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            data = _row_json(row)
            data["avg_score_lower_is_better"] = data["avg_score"]
            writer.writerow({**data, **extra})
        return out.getvalue()
    if fmt == "json":
        return json.dumps(_as_json(rows, variant, title, metadata), indent=2)
    if fmt == "html":
        head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
        body = "\n".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r, variant, crashed)) + "</tr>"
            for r in rows
        )
        notes_html = "".join(f'<p class="note">{html.escape(note)}</p>\n' for note in board_notes(rows))
        notes_html += "".join(f'<p class="crash">{html.escape(line)}</p>\n' for line in crash_lines(rows))
        page_body = _BOARD_BODY.format(head=head, body=body,
                                       metadata=_html_metadata(metadata) if metadata is not None else "",
                                       think_note=html.escape(_THINK_NOTE), notes=notes_html)
        if elo_plot:
            page_body += f'<h2>Online Elo</h2>\n<div id="elo">{elo_plot}</div>\n'
        if replays:
            page_body += '<h2>Replays</h2>\n<ul id="replays">\n' + "".join(
                f'<li><a href="{html.escape(r.href)}">{html.escape(r.match_id)}</a> '
                f"{r.finished_at:%Y-%m-%d %H:%M} UTC: {html.escape(r.players())}</li>\n" for r in replays) + "</ul>\n"
        return html_page(title, page_body, _BOARD_CSS)
    raise ValueError(f"unknown leaderboard format {fmt!r}; choose one of {', '.join(FORMATS)}")


def render_board(result: Board, fmt: str, console: Console | None = None, elo_plot: str = "",
                 replays: Sequence[ReplayLink] = ()) -> str | Table:
    """:func:`render` of a :func:`board`, metadata included."""
    return render(result.rows, fmt, result.metadata.variant, console=console, title=result.title,
                  metadata=result.metadata, elo_plot=elo_plot, replays=replays)


def _md_text(text: str) -> str:
    """``text`` that Markdown shows as written: its link and emphasis characters escaped."""
    return "".join("\\" + c if c in "\\`*_[]()<>#|" else c for c in text)


def html_page(title: str, body: str, css: str = "") -> str:
    """A standalone HTML page (no external request) around ``body``, with the boards'
    base style plus ``css``. ``title`` is escaped here; ``body`` is HTML already."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: 0.3em 0.8em; text-align: right; }}
{css}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
{body}
</body>
</html>
"""


_BOARD_BODY = """{metadata}<table>
<thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody>
</table>
{notes}<p>Rating: Bradley&ndash;Terry maximum likelihood on the Elo scale, 1500 = the average bot;
&plusmn; is the 95% bootstrap interval. Elo: the online rating after the latest match.
{think_note}</p>
"""

_BOARD_CSS = """th, td { border-bottom: 1px solid #ddd; }
th:nth-child(2), td:nth-child(2) { text-align: left; }
dl.metadata { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.metadata dt { font-weight: bold; }
dl.metadata dd { margin: 0; }
dl.metadata ul { margin: 0; padding-left: 1.2em; }
p.note { font-weight: bold; }
"""


def export(store: Store, directory: str | Path, variants: list[str] | None = None,
           tournament_id: str | None = None, min_games: int = 0,
           generated_at: datetime | None = None, replays: Sequence[ReplayLink] = ()) -> list[Path]:
    """Write ``<variant>.md``, ``.html``, ``.json`` and ``.csv`` into ``directory`` for every variant
    (of ``variants``, default all) that has completed matches (in ``tournament_id``, if
    given), each with its metadata, and the variant's crosstable beside them as
    ``<variant>-crosstable.md``, ``.html`` and ``.json``; return the paths written.
    Nothing is created when there is nothing to write. The HTML board has the Elo plot
    (``arena.results.elo_plot``); the Markdown and HTML boards list ``replays`` of their
    variant (the replay pages written beside them, see ``arena.web.export``).
    """
    target = Path(directory)
    written = []
    for variant in variants or store.variants():
        result = board(store, variant, tournament_id=tournament_id, min_games=min_games, generated_at=generated_at)
        if not result.rows:
            continue
        target.mkdir(parents=True, exist_ok=True)
        order = [row.bot for row in result.rows]
        plot = elo_svg(elo_history(store, variant, tournament_id, order=order))
        shown = [r for r in replays if r.variant == variant]
        for fmt, suffix in (("md", "md"), ("html", "html"), ("json", "json"), ("csv", "csv")):
            path = target / f"{variant}.{suffix}"
            text = render_board(result, fmt, elo_plot=plot, replays=shown)
            assert isinstance(text, str)
            path.write_text(text + ("\n" if not text.endswith("\n") else ""), encoding="utf-8")
            written.append(path)
        # Over every bot of the board's matches, min_games or not, in the board's order.
        table = crosstable.crosstable(store, variant, tournament_id, order=order)
        for fmt in ("md", "html", "json"):
            path = target / f"{variant}-crosstable.{fmt}"
            text = crosstable.render(table, fmt)
            assert isinstance(text, str)
            path.write_text(text + "\n", encoding="utf-8")
            written.append(path)
    return written
