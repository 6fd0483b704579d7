"""A match's action log in its one serialised form: JSON of one flat list
``[seat, action, seat, action, ...]``, each action in its JSON form
(``engine.action_to_json``: a prediction as its object).

The log is ``MatchRecord.actions``, a :class:`arena.records.LoggedAction` per decision
in the engine's order. The store keeps this form (zlib-compressed, ``arena.store.codec``)
and ``RunMatch`` sends it (``MatchRecord.actions_json`` of the contract); both go
through these functions. A flat list encodes twice as fast as a list of pairs.

    >>> from engine import Prediction
    >>> dumps([LoggedAction(0, 1), LoggedAction(1, "b7"), LoggedAction(2, Prediction(destroyer=True))])
    b'[0,1,1,"b7",2,{"destroyer":true,"tokens":{},"take_from":[]}]'
    >>> loads(b'[0,1,1,"b7"]')
    [LoggedAction(seat=0, action=1), LoggedAction(seat=1, action='b7')]
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

from arena.records import LoggedAction, logged_actions
from arena.wire import json_codec
from engine import Prediction


def flatten(actions: Sequence[LoggedAction]) -> list[Any]:
    """The log as one list of seats and actions in their JSON form; ``ValueError`` when
    an entry is not a ``(seat, action)`` pair."""
    flat: list[Any] = list(chain.from_iterable(actions))   # twice as fast as unpacking each pair
    if len(flat) != 2 * len(actions):
        raise ValueError(f"every logged action must be a [seat, action] pair ({len(actions)} actions "
                         f"hold {len(flat)} items)")
    for i in range(1, len(flat), 2):               # predictions (Wizard Extreme) to their JSON form
        if type(flat[i]) is Prediction:
            flat[i] = flat[i].to_json()
    return flat


def flat_json(flat: list[Any]) -> bytes:
    """The serialised form of a log already :func:`flatten`-ed."""
    return json_codec.dumps_bytes(flat)


def dumps(actions: Sequence[LoggedAction]) -> bytes:
    """The serialised form of the log; ``ValueError`` as :func:`flatten`."""
    return flat_json(flatten(actions))


def loads(data: bytes | str) -> list[LoggedAction]:
    """The log of its serialised form; ``ValueError`` for text that is not a JSON list of
    seats and actions in pairs."""
    flat = json_codec.loads(data)
    if not isinstance(flat, list) or len(flat) % 2:
        raise ValueError("an action log is a JSON list of seats and actions, in pairs")
    return logged_actions(zip(flat[0::2], flat[1::2]))
