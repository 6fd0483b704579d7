"""The interface every game offers, whatever its variant: :class:`Game`.

The referee, the benchmarks and the tools drive a game through these members only,
so a new variant is a new class that satisfies this protocol (as OpenSpiel's games
each implement its ``State``). ``ClassicGame`` and ``ExtremeGame`` declare it as
their base class, so mypy checks both against it; ``tests/engine/test_game.py``
plays both through it.

    >>> import random
    >>> from engine import GameConfig, new_game
    >>> game: Game = new_game(GameConfig(variant="extreme", players=3, seed=2, rounds=1))
    >>> rng = random.Random(0)
    >>> while not game.is_over:
    ...     for seat in game.to_act():
    ...         game.apply(seat, game.random_action(seat, rng))
    >>> game.result().higher_is_better, len(game.actions) > 45
    (False, True)

A seat is an ``int`` ``0..players-1``, clockwise; ``None`` as a viewer is a spectator.
"""

from __future__ import annotations

import random
from typing import Any, Protocol, runtime_checkable

from engine.core import Action, Decision, GameConfig, GameResult, SeatAction
from engine.events import Event
from engine.observations import Observation


@runtime_checkable
class Game(Protocol):
    """One game from the first deal to the final result; pure and deterministic.

    The state changes only through :meth:`apply`; everything else reads it. The
    attributes are read-only by convention: plain attributes rather than properties
    because every playout loop reads ``is_over`` once per decision.
    """

    config: GameConfig
    """The validated configuration (variant, table size, seed, options)."""
    players: int
    """The number of seats."""
    is_over: bool
    """True once the last round is scored: nobody is to act any more."""
    actions: list[SeatAction]
    """Every applied ``(seat, action)`` in order, the action as the engine's value (a
    prediction as a :class:`~engine.core.Prediction`): :func:`engine.replay` rebuilds the
    game from it, and :meth:`snapshot` gives it in its JSON form."""

    def to_act(self) -> tuple[int, ...]:
        """The seats that must decide now: one, or several for hidden bids; ``()`` when over."""
        ...

    def decision(self, seat: int) -> Decision:
        """What ``seat`` must decide now; :class:`~engine.core.IllegalAction` (kind ``None``) if nothing."""
        ...

    def legal_actions(self, seat: int) -> tuple[Action, ...]:
        """The legal options of ``seat`` in their fixed order; ``()`` when it has nothing to
        decide, and for a prediction (whose possibilities the observation describes)."""
        ...

    def random_action(self, seat: int, rng: random.Random) -> Action:
        """A random legal action of ``seat`` (uniform over the options; any legal prediction)."""
        ...

    def apply(self, seat: int, action: Any) -> None:
        """Play ``action`` for ``seat``. An illegal one raises
        :class:`~engine.core.IllegalAction` and changes nothing."""
        ...

    def observe(self, seat: int | None, *, round_history: bool = True) -> Observation:
        """What ``seat`` may know now, as a JSON-serialisable dict (typed in
        :mod:`engine.observations`); ``None``: a spectator.

        ``round_history=False`` leaves the field ``round_history`` ``None``, in its
        place. The finished rounds are the same for every viewer and change only as a
        round ends (at every decision the list holds ``round - 1`` of them), so a caller
        that encodes an observation for every decision, as the referee does, builds and
        encodes them once a round instead: in a late round they are the largest part."""
        ...

    def events_for(self, seat: int | None, start: int = 0) -> tuple[list[dict[str, Any]], int]:
        """``(events, next_start)``: the events ``seat`` may see from log position ``start`` on."""
        ...

    def logged_events(self, start: int = 0) -> tuple[list[Event], int]:
        """``(events, next_start)``: every event from log position ``start`` on, private
        ones too, as the log keeps them: tuples ``(visible_to, type, *payload)`` of ints,
        strings and tuples, ``visible_to`` :data:`~engine.events.PUBLIC` or the one seat
        that may see it. For a caller that hands each viewer its own part and encodes
        each event once for all of them (the referee, whose events to a seat are the same
        as :meth:`events_for`'s); never for a bot."""
        ...

    def event_dict(self, event: Event) -> dict[str, Any]:
        """One of :meth:`logged_events`' events in the form :meth:`events_for` gives it."""
        ...

    def winning_seat(self) -> int | None:
        """The seat whose card is taking the trick in progress so far (public: every card
        of a trick is face up); ``None`` between tricks."""
        ...

    def result(self) -> GameResult:
        """The final result; :class:`~engine.core.EngineError` while the game is running."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The full state, hidden parts included: equal snapshots mean equal games."""
        ...
