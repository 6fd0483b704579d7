"""A match's action log in its one serialised form: JSON of one flat list
``[seat, action, seat, action, ...]``.

The log is ``MatchRecord.actions``, ``[seat, action]`` pairs in the engine's order. The
store keeps this form (zlib-compressed, ``arena.store.codec``) and ``RunMatch`` sends it
(``MatchRecord.actions_json`` of the contract); both go through these functions. A flat
list encodes twice as fast as a list of pairs.

    >>> dumps([[0, 1], [1, "b7"]])
    b'[0,1,1,"b7"]'
    >>> loads(b'[0,1,1,"b7"]')
    [[0, 1], [1, 'b7']]
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

from arena.wire import jsonc


def flatten(actions: Sequence[Sequence[Any]]) -> list[Any]:
    """The pairs as one list; ``ValueError`` when an entry is not a ``[seat, action]`` pair."""
    flat = list(chain.from_iterable(actions))      # twice as fast as unpacking each pair
    if len(flat) != 2 * len(actions):
        raise ValueError(f"every logged action must be a [seat, action] pair ({len(actions)} actions "
                         f"hold {len(flat)} items)")
    return flat


def flat_json(flat: list[Any]) -> bytes:
    """The serialised form of a log already :func:`flatten`-ed."""
    return jsonc.dumps_bytes(flat)


def dumps(actions: Sequence[Sequence[Any]]) -> bytes:
    """The serialised form of the log; ``ValueError`` as :func:`flatten`."""
    return flat_json(flatten(actions))


def loads(data: bytes | str) -> list[list[Any]]:
    """The ``[seat, action]`` pairs of a serialised log; ``ValueError`` for text that is not
    a JSON list of pairs."""
    flat = jsonc.loads(data)
    if not isinstance(flat, list) or len(flat) % 2:
        raise ValueError("an action log is a JSON list of seats and actions, in pairs")
    return [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)]
