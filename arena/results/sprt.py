"""A stored A/B test (``arena sprt``), read from the store: its monitor over the games
stored so far, its result as data, and that result in one line.

The test itself (units, bounds, the log-likelihood ratio, :class:`SprtMonitor` over games
as they end) is pure and lives below the store, in ``arena.stats.sprt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.settings import TournamentSettings
from arena.stats.sprt import SprtMonitor, SprtSettings, bounds_of, games_per_set, monitor_from, status_line
from arena.store import MatchSummary, Store


def stored_monitor(store: Store, tournament_id: str, sprt: SprtSettings, players: int, games: int) -> SprtMonitor:
    """The monitor of a stored A/B test (its settings, table size and game limit) over
    the games stored so far."""
    return monitor_of(sprt, players, store.list_matches(tournament_id=tournament_id, limit=games + 1))


def monitor_of(sprt: SprtSettings, players: int, stored: Sequence[MatchSummary]) -> SprtMonitor:
    """The monitor of an A/B test over these of its stored games."""
    return monitor_from(sprt, players, ((m.game_index, m.bots, m.places) for m in stored),
                        aborted=[m.game_index for m in stored if m.status != "completed" and m.game_index is not None])


def ab_test_result(store: Store, tournament_id: str, settings: TournamentSettings) -> dict[str, Any]:
    """A stored A/B test's result as data, read from the store (:func:`test_result`)."""
    return test_result(settings, store.list_matches(tournament_id=tournament_id, limit=settings.games + 1))


def test_result(settings: TournamentSettings, stored: Sequence[MatchSummary]) -> dict[str, Any]:
    """An A/B test's result as data (the leaderboards' metadata carries it), from its
    stored settings (those of an A/B test: ``settings.sprt`` is set) and games: the bots,
    the bounds, the decision and the figures at it, and ``summary`` in words."""
    sprt = settings.sprt
    if sprt is None:
        raise ValueError("not the settings of an A/B test")
    players = settings.players
    status = monitor_of(sprt, players, stored).current()

    def number(x: float) -> float | None:
        return None if x != x else round(x, 4)     # nan (undefined) as null

    bounds = bounds_of(sprt)
    return {"candidate": sprt.candidate, "baseline": sprt.baseline, "alpha": sprt.alpha, "beta": sprt.beta,
            "elo0": bounds.elo0,
            "elo1": bounds.elo1,
            "decision": status.decision, "sets": status.units, "games": status.units * games_per_set(players),
            "llr": number(status.llr), "elo": number(status.elo), "elo_low": number(status.elo_low),
            "elo_high": number(status.elo_high), "los": number(status.los),
            "summary": f"{sprt.candidate} vs {sprt.baseline}: {status.decision or 'undecided'} · "
                       + status_line(status, players)}


def summary(store: Store, tournament_id: str, settings: TournamentSettings) -> str | None:
    """An A/B test in one line for ``arena tournaments`` (None for any other tournament):
    ``new vs old: H1 · LLR 3.02 [...] · ...``."""
    return str(ab_test_result(store, tournament_id, settings)["summary"]) if settings.sprt is not None else None
