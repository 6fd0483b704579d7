"""The event log both variants keep: what happened, in order, and who may see it.

An event is stored as a compact tuple ``(visible_to, type, *payload)``: ``visible_to``
is :data:`PUBLIC` or the one seat that may see a private event (its own hand, its own
hidden bid), ``type`` a short string, the payload ints and tuples (cards as ints,
hands as masks). Appending a tuple is all a game does on its hot path; the dicts that
bots and spectators see (``docs/engine.md``, "Events") are built only when someone
asks, by the variant's ``as_dict``::

    >>> log = EventLog()
    >>> log.append((PUBLIC, "bid", 1, 2))
    >>> log.append((0, "hand", 0b101))
    >>> as_dict = lambda e: {"type": e[1], "data": list(e[2:])}
    >>> log.visible_to(None, 0, as_dict)
    ([{'type': 'bid', 'data': [1, 2]}], 2)
    >>> log.visible_to(0, 1, as_dict)
    ([{'type': 'hand', 'data': [5]}], 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PUBLIC = -1  # the ``visible_to`` of an event everybody may see

Event = tuple[Any, ...]  # (visible_to, type, *payload)


class EventLog(list[Event]):
    """An append-only list of event tuples. A ``list`` so that appending stays a plain
    ``list.append``: a game logs every card played."""

    __slots__ = ()

    def visible_to(self, seat: int | None, start: int,
                   as_dict: Callable[[Event], dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """The events ``seat`` may see from position ``start`` on, as dicts (public ones and
        its own private ones; ``None``: public only), and the position to ask from next
        time. Positions count every event, private ones too, so one position serves every
        viewer. ``ValueError`` for a position outside the log."""
        events, end = self.since(start)
        viewer = PUBLIC if seat is None else seat
        return [as_dict(e) for e in events if e[0] == PUBLIC or e[0] == viewer], end

    def since(self, start: int) -> tuple[list[Event], int]:
        """Every event from position ``start`` on, private ones too, as stored, and the
        position to ask from next time. ``ValueError`` for a position outside the log.

        >>> log = EventLog([(PUBLIC, "bid", 1, 2), (0, "hand", 0b101)])
        >>> log.since(1)
        ([(0, 'hand', 5)], 2)
        """
        if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= len(self):
            raise ValueError(f"start must be a log position 0..{len(self)} (got {start!r})")
        return self[start:], len(self)

    def snapshot(self) -> list[list[Any]]:
        """Every event, private ones too, as lists: part of a game's ``snapshot()``."""
        return [list(e) for e in self]


def check_viewer(seat: int | None, players: int) -> None:
    """``ValueError`` unless ``seat`` is ``None`` (a spectator) or a seat of the table.

    >>> check_viewer(4, players=4)
    Traceback (most recent call last):
    ...
    ValueError: seat must be None or 0..3 (got 4)
    """
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players):
        raise ValueError(f"seat must be None or 0..{players - 1} (got {seat!r})")
