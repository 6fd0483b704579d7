"""Leaderboards: one row per bot, sorted by Bradley–Terry rating.

    >>> import tempfile, os
    >>> from arena.store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "arena.db"))
    >>> leaderboard(store, "classic")
    []

A row carries the rating (1500 + Bradley–Terry rating relative to the mean, see
``docs/ratings.md``), its 95% interval as ± half-width (None, shown ``?``, when the bot
played too few deals to know it), the latest online Elo, and
per-bot averages over the completed matches the board covers: score, place, exact
bids (classic), faults and timeouts, and the bot's think time (median and 99th
percentile of the decisions it answered, from the store's histograms: see
``arena.stats.think_times``), and how often the bot's process crashed (exited, or was
killed for a limit) in the board's variant or tournament, with the last crash's reason.
Nothing here reads a match log.

A board where no bot crashed looks as if crashes did not exist (no empty column): the
crash count is a column only when some bot of the board crashed, and the terminal,
Markdown and HTML boards then add one line per crashed bot (:func:`crash_lines`). JSON
rows always carry ``crashes`` and ``last_crash``.

:func:`board` adds a title and :class:`BoardMetadata` (when, which tournaments and
game options, how many games, which arena version): what every exported board
carries, in each format its own way. Both compute from one ``arena.store.BoardSnapshot``
(``Store.board_snapshot``: the board's inputs, read in one transaction); a view reads its
snapshot once and computes everything it shows from it (:func:`leaderboard` is the read
and :func:`rows_of` in one call). This module holds the board's data and the words
every format shows (its notes and crash lines); the formats themselves are
``arena.results.render``'s, one module each, and ``arena.results.export`` writes them as files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from arena import __version__
from arena.results.sprt import test_result
from arena.stats.elo import START_ELO
from arena.stats.ratings import DEFAULT_BOOTSTRAP_SAMPLES, MIN_UNITS, pairwise_from_tables, rate
from arena.stats.think_times import RESOLUTION
from arena.store import BoardSnapshot, LeaderboardInputs, Store
from engine import VARIANT_RECORDS, ConfigError, GameConfig, options_of
from engine import variant as variant_of

# The formats a board comes in (arena.results.render has one renderer for each).
FORMATS = ("table", "md", "csv", "json", "html")


@dataclass
class LeaderboardRow:
    rank: int
    bot: str
    rating: float                    # 1500 + Bradley–Terry rating relative to the mean
    # ± half-width of the 95% bootstrap interval; None: not known (the bot played fewer
    # than arena.stats.ratings.MIN_UNITS deals, too few to say how sure the rating is).
    interval: float | None
    elo: float | None                # online Elo now (for one tournament: after its last match there)
    games: int
    avg_score: float
    avg_place: float
    exact_bid_rate: float | None     # classic: share of rounds bid exactly; None for extreme
    faults: int
    forfeits: int
    # Think time per decision the bot answered (not the fallbacks the referee played for
    # it), in ms, within ±RESOLUTION (arena.stats.think_times); None when it answered none.
    think_p50_ms: float | None = None
    think_p99_ms: float | None = None
    timeouts: int = 0                # faults of kind "timeout" (also counted in faults)
    # "lower" when the rating is only a lower bound (the bot, or it and the bots level
    # with it, never lost a pairwise game to the rest of its group), "upper" the other
    # way round, "none" when it is neither; None: a rating like any other (see
    # arena.stats.ratings.rating_bounds).
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
    score_order: str                 # the variant's score_order: higher_is_better (classic) or lower_is_better
    tournaments: list[str]           # the tournaments whose completed matches the board counts
    games: int                       # completed matches counted, outside tournaments included
    games_outside_tournaments: int   # ladder and single matches
    option_sets: list[OptionSet]     # one per distinct set of game options among the tournaments
    min_games: int                   # bots with fewer games are hidden (still rated)
    arena_version: str
    think_time_resolution: float = round(RESOLUTION, 4)    # relative; percentiles are nearest-rank
    # The A/B tests (arena sprt) among the tournaments, each with its result
    # (arena.results.sprt.test_result).
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
    """The leaderboard of one variant over its completed matches (or one tournament's):
    :func:`rows_of` the store's snapshot of that board."""
    return rows_of(store.board_snapshot(variant, tournament_id), min_games, samples, seed)


def rows_of(
    snapshot: BoardSnapshot,
    min_games: int = 0,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> list[LeaderboardRow]:
    """A board's sorted, ranked rows.

    Every bot takes part in the fit; ``min_games`` only hides bots with fewer matches.
    The bootstrap is seeded (``seed``), so the same data always gives the same board.
    """
    return _rows(snapshot.ratings, snapshot.variant, min_games, samples, seed)


def board(
    snapshot: BoardSnapshot,
    min_games: int = 0,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    generated_at: datetime | None = None,
) -> Board:
    """The leaderboard (as :func:`rows_of`) with its title and metadata: the rows, the
    game counts, the tournaments' game options and their A/B tests, all from one
    snapshot of the store (``Store.board_snapshot``)."""
    variant = snapshot.variant
    tournament_id = snapshot.tournament.id if snapshot.tournament is not None else None
    rows = rows_of(snapshot, min_games, samples, seed)
    games = snapshot.ratings.games_by_tournament
    sets: dict[str, OptionSet] = {}
    for tournament in snapshot.tournaments:
        options = game_options(snapshot.game_options.get(tournament), variant)
        option_set = sets.setdefault(json.dumps(options, sort_keys=True), OptionSet(options, [], 0))
        option_set.tournaments.append(tournament)
        option_set.games += games.get(tournament, 0)
    moment = (generated_at or datetime.now(UTC)).astimezone(UTC)
    return Board(
        title=title_of(variant, tournament_id),
        metadata=BoardMetadata(
            generated_at=moment.strftime("%Y-%m-%dT%H:%M:%SZ"), variant=variant,
            score_order=variant_of(variant).score_order, tournaments=snapshot.tournaments,
            games=sum(games.values()), games_outside_tournaments=games.get("", 0),
            option_sets=list(sets.values()), min_games=min_games, arena_version=__version__,
            tests=[{"tournament": tournament, **test_result(test.settings, test.games)}
                   for tournament, test in snapshot.tests.items()],
        ),
        rows=rows,
    )


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
        full = GameConfig.from_options(stored).to_dict()
    except (ConfigError, TypeError):
        full = dict(stored)    # options this engine does not know: shown as stored
    record = VARIANT_RECORDS.get(variant)
    if record is not None:
        return {k: v for k, v in full.items() if k in record.options}
    return {k: v for k, v in options_of(full).items() if k != "variant"}


def _rows(inputs: LeaderboardInputs, variant: str, min_games: int, samples: int, seed: int) -> list[LeaderboardRow]:
    """The sorted, ranked rows of a board from what the store read."""
    index = {name: i for i, name in enumerate(inputs.bots)}
    games = pairwise_from_tables(inputs.tables, n_bots=len(inputs.bots), deals=inputs.deals)
    fit = rate(games, samples=samples, seed=seed)
    elo = inputs.elo
    grouped = len(set(fit.groups.tolist())) > 1
    bids = variant_of(variant).bids     # an exact-bid rate where players bid (classic)

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
            exact_bid_rate=((agg.exact_bids or 0) / agg.rounds) if bids and agg.rounds else None,
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
# What every format shows: the board's notes, crash lines and title, and its JSON
# --------------------------------------------------------------------------------------


def crashed(rows: Sequence[LeaderboardRow]) -> bool:
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

BOUND_SIGNS = {"lower": "≥", "upper": "≤", "none": "~"}


def group_name(group: int) -> str:
    """A comparison group's name on a board: A, B, ... (then numbers)."""
    return chr(ord("A") + group - 1) if group <= 26 else str(group)


UNKNOWN_INTERVAL = "?"


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
        listed = "; ".join(f"{group_name(g)}: {', '.join(bots)}" for g, bots in sorted(groups.items()))
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
            notes.append(f"{BOUND_SIGNS[bound]}: {', '.join(bots)} {words}.")
    return notes


def title_of(variant: str, tournament_id: str | None = None) -> str:
    """A board's title: ``Wizard classic leaderboard``, with the tournament when it is one's."""
    return f"Wizard {variant} leaderboard" + (f", tournament {tournament_id}" if tournament_id else "")


def row_json(row: LeaderboardRow) -> dict[str, Any]:
    """A row as JSON-ready data (the JSON and CSV boards): its numbers to four decimals."""
    data = asdict(row)
    for key in ("rating", "interval", "elo", "avg_score", "avg_place", "exact_bid_rate", "think_p50_ms",
                "think_p99_ms"):
        if data[key] is not None:
            data[key] = round(data[key], 4)
    return data


def to_json(rows: Sequence[LeaderboardRow], variant: str, title: str | None = None,
            metadata: BoardMetadata | None = None) -> dict[str, Any]:
    """The board as JSON-ready data: ``variant``, ``title``, ``metadata`` (when given),
    ``notes`` (:func:`board_notes`) and ``rows``."""
    data: dict[str, Any] = {"variant": variant, "title": title or title_of(variant)}
    if metadata is not None:
        data["metadata"] = asdict(metadata)
    data["notes"] = board_notes(rows)
    data["rows"] = [row_json(r) for r in rows]
    return data


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
