"""What a view reads, in one transaction: a board's snapshot, a tournament's, a bot's.

A board (``arena leaderboard``, the web's board page and its JSON, an exported board),
its crosstable and its Elo plot are computed by ``arena.results`` from one
:class:`BoardSnapshot`, which :func:`board_snapshot` reads in the one transaction the
``Store`` opens for it (``Store.board_snapshot``): a match saved meanwhile is in all of
it or in none. A bot's page is computed from one :class:`BotSnapshot` the same way
(``Store.bot_snapshot``), beside the boards it shows its place on, and a tournament's
page from one :class:`TournamentSnapshot` (``Store.tournament_snapshot``). The view then
computes from the snapshot and renders; it never goes back to the store. Each
tournament's stored settings are parsed once, here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from arena.records import BotCrash
from arena.store.crashes import CrashSummary, crashes_per_variant
from arena.store.queries import (
    AbTestGames,
    LeaderboardInputs,
    MatchSummary,
    SeatAggregate,
    leaderboard_inputs,
    list_matches,
    match_count,
    outcomes,
    seat_aggregates,
)
from arena.store.registry import TournamentInfo, game_options, get_tournament, list_tournaments, stored_settings
from arena.store.reports import (
    BotEloStep,
    BotGames,
    EloTrack,
    NewestClassic,
    bot_games,
    elo_tracks,
    last_crash,
    newest_classic,
    tournament_elo_steps,
)
from engine import VARIANTS

# One distinct outcome of a board's completed matches: ``(bot, place)`` per seat, by name,
# and how many matches ended so (the crosstable's material).
Outcome = tuple[list[tuple[str, int]], int]


@dataclass(frozen=True)
class BoardSnapshot:
    """Everything a board of one variant (or one tournament's board), its crosstable and
    its Elo plot are computed from."""

    variant: str
    tournament: TournamentInfo | None        # the board's tournament, when it is one's
    ratings: LeaderboardInputs               # the rows' material (outcomes, sums, Elo, crashes)
    tournaments: list[str]                   # the tournaments the board counts
    game_options: dict[str, dict[str, Any] | None]   # per tournament, as stored (registry.game_options)
    tests: dict[str, AbTestGames]            # the A/B tests among the tournaments, with their games
    outcomes: list[Outcome]                  # every distinct outcome and its count (the crosstable)
    # The Elo plot's material, read only when asked for (``elo_limit``, at most that many
    # points a line): the variant's tracks (a board of every match) or the tournament's
    # Elo changes in counting order (a tournament's board); empty when not read.
    elo_limit: int | None = None
    elo_tracks: list[EloTrack] = field(default_factory=list)
    elo_steps: list[BotEloStep] = field(default_factory=list)


def board_snapshot(session: Session, variant: str | None, tournament_id: str | None, elo_limit: int | None,
                   where: str) -> BoardSnapshot:
    """The board of ``variant`` over its completed matches (only ``tournament_id``'s, when
    given: ``NotStored`` if there is no such tournament), in the caller's one transaction.

    ``variant`` None takes the tournament's: the one its settings name, else that of its
    first stored match (a tournament organised elsewhere), else the engine's first."""
    tournament = None
    if tournament_id is None:
        if variant is None:
            raise ValueError("a board without a tournament needs its variant")
        ratings = leaderboard_inputs(session, variant, None)
        tournaments = sorted(t for t in ratings.games_by_tournament if t)
        settings = stored_settings(session, tournaments)
        options = game_options(session, settings, tournaments)
    else:
        tournament = get_tournament(session, tournament_id, where)
        tournaments = [tournament_id]
        settings = {tournament_id: tournament.typed_settings}
        options = game_options(session, settings, tournaments)
        played = str((options[tournament_id] or {}).get("variant") or VARIANTS[0])
        variant = variant or tournament.typed_settings.named_variant or played
        ratings = leaderboard_inputs(session, variant, tournament_id)
    tests = {t: AbTestGames(settings[t], list_matches(session, None, t, None, settings[t].games + 1))
             for t in tournaments if settings[t].sprt is not None}
    tracks: list[EloTrack] = []       # the Elo plot's, when asked for: the variant's or the tournament's
    steps: list[BotEloStep] = []
    if elo_limit is not None and tournament_id is None:
        tracks = elo_tracks(session.connection(), variant, elo_limit)
    elif elo_limit is not None and tournament_id is not None:
        steps = tournament_elo_steps(session.connection(), variant, tournament_id)
    return BoardSnapshot(variant, tournament, ratings, tournaments, options, tests,
                         outcomes(session, variant, tournament_id), elo_limit, tracks, steps)


@dataclass(frozen=True)
class TournamentSnapshot:
    """Everything a tournament's page is computed from: its board, of the variant its
    settings name (the engine's default when they name none; the tournament itself is
    ``board.tournament``), and its newest stored matches."""

    board: BoardSnapshot
    matches: list[MatchSummary]                  # newest first


def tournament_snapshot(session: Session, tournament_id: str, match_limit: int, where: str) -> TournamentSnapshot:
    """The tournament's snapshot, in the caller's one transaction: ``NotStored`` if there is
    no such tournament; at most ``match_limit`` of its matches."""
    variant = get_tournament(session, tournament_id, where).typed_settings.variant
    return TournamentSnapshot(board_snapshot(session, variant, tournament_id, None, where),
                              list_matches(session, None, tournament_id, None, match_limit))


@dataclass(frozen=True)
class BotSnapshot:
    """Everything a bot's page is computed from but the boards it shows its place on."""

    name: str
    games: BotGames                              # every stored seat of the bot, and its faults
    crashes: dict[str | None, CrashSummary]      # per variant (None: not known), in variant order
    last_crash: BotCrash | None                  # its newest crash, with its tournament (None: none)
    # Per variant the bot has a seat in: its sums on that variant's board (None: no
    # completed match there), and the completed matches stored (what a kept board is
    # computed again by when it changed: see arena.web.bots.Boards).
    aggregates: dict[str, SeatAggregate | None]
    completed: dict[str, int]
    classic_limit: int                           # at most this many of its newest classic matches ...
    newest_classic: NewestClassic                # ... whose results give its exact bids by hand size
    recent: list[MatchSummary]                   # its newest matches, newest first
    tournaments: list[TournamentInfo]            # every stored tournament (the code stamps of its bots)


def bot_snapshot(session: Session, name: str, recent: int, classic_limit: int) -> BotSnapshot:
    """The bot's snapshot, in the caller's one transaction: its ``recent`` newest matches,
    and its ``classic_limit`` newest completed classic ones' results."""
    games = bot_games(session.connection(), name)
    variants = sorted({seat.variant for seat in games.seats})
    aggregates = {variant: next((a for a in seat_aggregates(session, variant, None) if a.bot == name), None)
                  for variant in variants}
    return BotSnapshot(
        name, games, crashes_per_variant(session, name), last_crash(session.connection(), name), aggregates,
        {variant: match_count(session, variant, "completed") for variant in variants},
        classic_limit, newest_classic(session.connection(), name, classic_limit),
        list_matches(session, None, None, name, recent), list_tournaments(session))
