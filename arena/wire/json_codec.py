"""The arena's one JSON codec: compact text out, and two ways back in.

Every JSON string the arena writes (observations and events on the wire, results,
records, the store's logs) is compact: no spaces, UTF-8 (non-ASCII characters are not
escaped). :func:`dumps` writes it with orjson, because the referee encodes an
observation for every decision and the standard library's encoder takes several times
as long over the same 2 KB (``arena bench referee-work`` measures a decision's whole
cost, docs/speed.md). What orjson refuses (integers beyond 64 bits) goes to the
standard library instead, so nothing the standard library can write fails here.

Reading: :func:`loads` reads what the standard library reads, exactly (every integer
stays an integer). :func:`loads_fast` is orjson, for the arena's own JSON on a hot
path (the SDK parses an observation for every decision); it reads integers beyond 64
bits as floats, and the arena writes none there.

>>> dumps({"hand": ["b7", "W1"], "bid": None, 3: True})
'{"hand":["b7","W1"],"bid":null,"3":true}'
>>> loads('{"seed": 1180591620717411303424}')
{'seed': 1180591620717411303424}
>>> loads_fast(b'{"hand":["b7"]}')
{'hand': ['b7']}
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps", "dumps_bytes", "fragment", "loads", "loads_fast"]


_OPTIONS = orjson.OPT_NON_STR_KEYS   # int keys written as strings, as json writes them


def dumps(value: Any) -> str:
    """Compact JSON text, as every JSON string of the arena is written.

    The same text as ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
    for the values the arena writes (dicts, lists, strings, ints, floats, None).

    >>> dumps({"name": "Zoë", "totals": [120, -10]})
    '{"name":"Zoë","totals":[120,-10]}'
    """
    # orjson called here, not through dumps_bytes: one Python call less per event on
    # the referee's hot path.
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except TypeError:
        return _stdlib_dumps(value)


def dumps_bytes(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes (see :func:`dumps`).

    >>> dumps_bytes({"a": [1, None], 2: 2**70})
    b'{"a":[1,null],"2":1180591620717411303424}'
    """
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except TypeError:
        return _stdlib_dumps(value).encode()


def fragment(value: Any) -> orjson.Fragment:
    """``value`` encoded now, to be written as it is wherever a later :func:`dumps` meets
    it: a part that many documents share is encoded once (the referee's finished
    rounds, the same in every seat's observation for a whole round).

    Only orjson writes a fragment: a document that holds one and also an integer beyond
    64 bits (which only the standard library writes) is refused with a TypeError. The
    referee's observations hold no such integer.

    >>> part = fragment([{"round": 1, "scores": [20, -10]}])
    >>> dumps({"round": 2, "round_history": part})
    '{"round":2,"round_history":[{"round":1,"scores":[20,-10]}]}'
    """
    return orjson.Fragment(dumps_bytes(value))


def _stdlib_dumps(value: Any) -> str:
    # orjson refuses integers beyond 64 bits; json writes them (and refuses the same
    # unserialisable values orjson does, with a TypeError too). Its ASCII escaping is
    # left as the store has always written such rows.
    return json.dumps(value, separators=(",", ":"), check_circular=False)


def loads(text: str | bytes) -> Any:
    """Parse JSON exactly as the standard library does (big integers stay integers).

    For text from outside the arena's hot path: an organiser's config, a stored row.
    """
    return json.loads(text)


def loads_fast(text: str | bytes) -> Any:
    """Parse JSON with orjson: several times faster than :func:`loads`, for the JSON the
    arena writes on every decision (observations, events). Integers beyond 64 bits
    would come back as floats; the arena writes none there."""
    return orjson.loads(text)
