"""Online Elo: the rating that moves after every stored match, in the order matches were stored.

It is cheap, and shows a trend, but depends on that order (the leaderboard sorts by
the Bradley–Terry fit instead, see ``arena.stats.ratings``; ``docs/ratings.md``
explains both for users)::

    >>> [round(r, 3) for r in elo_update([1200.0, 1000.0], places=[1, 2], ks=[32.0, 32.0])]
    [1207.688, 992.312]

:func:`rate_matches` is what the store runs when it saves matches: the bots' Elo changes
over a batch of new matches (:class:`EloChange`, its ``rating_history`` rows), from their
current ratings, without a database.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

START_ELO = 1500.0
NEW_BOT_GAMES = 30        # a bot's first 30 games move its rating faster...
K_NEW = 32.0              # ...with this K
K_SETTLED = 16.0          # ...and this K afterwards

# An elo_ratings key: (bot id, variant).
EloKey = tuple[int, str]


@dataclass(slots=True)
class EloChange:
    """One bot's online Elo moving after one match: a ``rating_history`` row.

    Slots, not frozen: made for every bot of every saved match (see ``arena.stats.matches``)."""

    match_pk: int
    bot_id: int
    variant: str
    elo_before: float
    elo_after: float
    games: int                       # the bot's rated matches in this variant, this one included


def k_factor(games_played: int) -> float:
    """The K a bot uses in its next match, given the matches it has already played.

    >>> k_factor(0), k_factor(29), k_factor(30)
    (32.0, 32.0, 16.0)
    """
    return K_NEW if games_played < NEW_BOT_GAMES else K_SETTLED


def pair_score(place_a: int, place_b: int) -> float:
    """A's score against B from their final places: better (lower) place 1, shared 0.5.

    >>> pair_score(1, 3), pair_score(2, 2), pair_score(4, 1)
    (1.0, 0.5, 0.0)
    """
    if place_a < place_b:
        return 1.0
    return 0.5 if place_a == place_b else 0.0


def expected_score(rating_a: float, rating_b: float) -> float:
    """The Elo expectation of A against B.

    >>> round(expected_score(1200, 1000), 4)
    0.7597
    """
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))


def elo_deltas(
    ratings: Sequence[float],
    places: Sequence[int],
    ks: Sequence[float],
    owners: Sequence[Hashable] | None = None,
) -> list[float]:
    """The rating change of every seat after one match.

    Each seat plays a pairwise game against every other seat; the pair's weight is
    K/(N−1) with the seat's own K, so a match moves a rating about as much as one
    two-player game whatever N is. All pairs use the ratings from before the match.
    Seats with the same ``owner`` (one bot in two seats) are not compared with each
    other: a bot cannot win against itself.

    >>> [round(d, 3) for d in elo_deltas([1500, 1500, 1500], [1, 2, 2], [32, 32, 32])]
    [16.0, -8.0, -8.0]
    """
    seats = len(ratings)
    if not (len(places) == len(ks) == seats):
        raise ValueError("ratings, places and ks need one entry per seat")
    if owners is None:
        owners = list(range(seats))
    deltas = [0.0] * seats
    if seats < 2:
        return deltas
    for a in range(seats):
        total = 0.0
        for b in range(seats):
            if a != b and owners[a] != owners[b]:
                total += pair_score(places[a], places[b]) - expected_score(ratings[a], ratings[b])
        deltas[a] = ks[a] / (seats - 1) * total
    return deltas


def elo_update(ratings: Sequence[float], places: Sequence[int], ks: Sequence[float]) -> list[float]:
    """The seats' ratings after one match (see :func:`elo_deltas`).

    >>> [round(r, 3) for r in elo_update([1500, 1500], [1, 1], [32, 32])]
    [1500.0, 1500.0]
    """
    return [r + d for r, d in zip(ratings, elo_deltas(ratings, places, ks))]


@dataclass(slots=True)
class RatedMatch:
    """What the online Elo reads of a match: its bots by seat, as the store's ids (which
    tell one bot in two seats apart from two bots), and their places."""

    pk: int                  # matches.id
    variant: str
    completed: bool          # only a completed match is rated
    bot_ids: list[int]       # by seat
    places: list[int]        # by seat


def rate_matches(ratings: Mapping[EloKey, tuple[float, int]], matches: Sequence[RatedMatch]) -> list[EloChange]:
    """The online Elo changes of new matches, in order, from the bots' current ``(elo, games)``
    by ``(bot id, variant)`` (a bot not in ``ratings`` starts at ``START_ELO`` with 0 games).

    Only completed matches between at least two different bots are rated. A bot in two
    seats of one match moves once, by the sum of its seats' changes.

    >>> changes = rate_matches({}, [RatedMatch(1, "classic", True, bot_ids=[7, 9], places=[1, 2])])
    >>> [(c.bot_id, round(c.elo_after, 1), c.games) for c in changes]
    [(7, 1516.0, 1), (9, 1484.0, 1)]
    """
    current = dict(ratings)
    changes = []
    for match in matches:
        if not match.completed or len(set(match.bot_ids)) < 2:
            continue
        before = [current.get((bot_id, match.variant), (START_ELO, 0)) for bot_id in match.bot_ids]
        deltas = elo_deltas(
            [elo for elo, _ in before], match.places, [k_factor(games) for _, games in before], owners=match.bot_ids
        )
        change: dict[int, float] = {}
        for bot_id, delta in zip(match.bot_ids, deltas):     # one bot in two seats: both seats count
            change[bot_id] = change.get(bot_id, 0.0) + delta
        for bot_id, delta in change.items():
            elo, games = current.get((bot_id, match.variant), (START_ELO, 0))
            current[(bot_id, match.variant)] = (elo + delta, games + 1)
            changes.append(EloChange(match.pk, bot_id, match.variant, elo, elo + delta, games + 1))
    return changes
