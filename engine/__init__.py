"""The rules of Wizard (classic) and Wizard Extreme: pure Python, no I/O, deterministic.

Create a game, step it, observe it, read the result::

    >>> import random
    >>> from engine import GameConfig, new_game, replay
    >>> game = new_game(GameConfig(variant="classic", players=4, seed=1, rounds=2))
    >>> rng = random.Random(0)
    >>> while not game.is_over:
    ...     for seat in game.to_act():          # one seat, or several for hidden bids
    ...         game.apply(seat, game.random_action(seat, rng))
    >>> len(game.result().totals)
    4
    >>> replay(game.config, game.actions).snapshot() == game.snapshot()
    True

Every game, whatever its variant, satisfies the protocol :class:`engine.game.Game`
(``ClassicGame`` and ``ExtremeGame`` declare it as their base class):

``config``, ``players``        the validated :class:`GameConfig`, the number of seats
``is_over``                    True once the last round is scored
``actions``                    every applied ``(seat, action)``, for :func:`replay`
``to_act()``                   seats that must decide now (empty when over)
``decision(seat)``             a :class:`Decision`: kind, legal options, fallback
``legal_actions(seat)``        the legal options (``()`` for a prediction)
``random_action(seat, rng)``   a uniformly random legal action (any legal prediction)
``apply(seat, action)``        play it; :class:`IllegalAction` leaves the state unchanged
``observe(seat)``              what that seat may know, as a JSON-serialisable dict
                               (``seat=None``: what a spectator may know)
``events_for(seat, start)``    ``(events, next_start)``: the events that seat may see
                               from position ``start`` of the event log
``logged_events(start)``       ``(events, next_start)``: every event from there, private
                               ones too, as the log keeps them (tuples); ``event_dict(e)``
                               gives one's dict (the referee's side: it sends each seat
                               its own part)
``result()``                   the :class:`GameResult` (only once the game is over)
``snapshot()``                 the full state (hidden parts too), for equality checks

What a variant is (its table sizes, length, score order, decision kinds, cards,
options) is its record, :func:`variant`: code outside the engine asks it rather than
testing the variant's name::

    >>> variant("extreme").higher_is_better, variant("classic").default_rounds(4)
    (False, 15)

A stored match is its config (a dict, seed included) and its ``[seat, action]`` log;
:func:`replay_record` rebuilds the game from them, and :func:`options_of` gives a
config without its deal seed (what may be shown while the deals are secret)::

    >>> stored = game.config.to_dict()
    >>> replay_record(stored, game.actions).snapshot() == game.snapshot()
    True
    >>> options_of(stored) == game.config.options() == {k: v for k, v in stored.items() if k != "seed"}
    True

The modules: ``core`` (config, decisions, actions, results, errors), ``game`` (the
protocol), ``variants`` (each variant's record, the records by name), ``events`` (the
event log), ``masks`` (card sets as bit masks), ``classic_cards`` and ``extreme_cards``
(each variant's cards), ``classic`` and ``extreme`` (the rules), ``describe`` (events
in words, for people).

The observation and event fields are documented in ``docs/engine.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.classic import ClassicGame
from engine.core import (
    BID,
    DECISION_KINDS,
    PAY,
    PLAY,
    PREDICT,
    TRUMP,
    Action,
    ConfigError,
    Decision,
    EngineError,
    GameConfig,
    GameResult,
    IllegalAction,
    Prediction,
    SeatAction,
    SeatRound,
    action_from_json,
    action_to_json,
    options_of,
    places_from_totals,
)
from engine.events import PUBLIC, Event
from engine.extreme import ExtremeGame
from engine.game import Game
from engine.variants import VARIANT_RECORDS, VARIANTS, Variant, variant
from engine.worlds import Deal, sample_deal, sample_world, void_suits

__all__ = [
    "BID", "PLAY", "TRUMP", "PREDICT", "PAY", "DECISION_KINDS", "VARIANTS",
    "VARIANT_RECORDS", "Variant", "variant",
    "Action", "ConfigError", "Decision", "EngineError", "GameConfig", "GameResult",
    "IllegalAction", "Prediction", "SeatAction", "SeatRound", "action_from_json", "action_to_json", "options_of",
    "places_from_totals",
    "ClassicGame", "ExtremeGame", "Game", "new_game", "replay", "replay_record", "PUBLIC", "Event",
    "Deal", "sample_deal", "sample_world", "void_suits",
]


def new_game(config: GameConfig) -> Game:
    """A new game at its first decision. Raises :class:`ConfigError` for a bad config."""
    config.validate()
    return VARIANT_RECORDS[config.variant].new_game(config)


def replay(config: GameConfig, actions: Iterable[SeatAction | Sequence[Any]]) -> Game:
    """Re-apply a logged action sequence, ``(seat, action)`` pairs as in ``game.actions``;
    the result equals the original game state.

    Pairs with actions in their JSON form (a snapshot's ``"actions"``, a log read back
    from JSON) replay the same, since :meth:`~engine.game.Game.apply` reads a prediction's
    object as the :class:`Prediction` and every other action is its own JSON form::

        >>> game = new_game(GameConfig(variant="extreme", players=3, seed=4, rounds=2))
        >>> while not game.is_over:
        ...     game.apply(game.to_act()[0], game.decision(game.to_act()[0]).default)
        >>> again = replay(game.config, game.snapshot()["actions"])
        >>> again.actions == game.actions, again.snapshot() == game.snapshot()
        (True, True)
    """
    game = new_game(config)
    for seat, action in actions:
        game.apply(seat, action)
    return game


def replay_record(config: GameConfig | Mapping[str, Any], actions: Iterable[SeatAction | Sequence[Any]]) -> Game:
    """:func:`replay` of a stored match: its config (a ``MatchRecord.config``, or as
    stored: ``GameConfig.to_dict()``'s form) and its action log (or the start of it), in
    either form :func:`replay` reads (a ``MatchRecord.actions`` holds the engine's values).
    Raises what ``GameConfig.from_dict`` and ``replay`` raise: :class:`ConfigError` for a
    config the engine cannot read, :class:`IllegalAction` for a log its rules refuse."""
    return replay(config if isinstance(config, GameConfig) else GameConfig.from_dict(config), actions)
