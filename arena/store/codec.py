"""The stored forms of a match's decision log and of times.

A decision log is two blobs in ``match_logs`` (format ``LOG_FORMAT``): the actions as
zlib-compressed JSON, the latencies as raw float64. Times are stored in UTC. (JSON
columns, such as a match's config and result, are compact text from the arena's one
JSON codec, ``arena.wire.json_codec``.)

    >>> decode_log(*encode_log([LoggedAction(0, 1), LoggedAction(1, "b7")], [2.5, None]))
    ([LoggedAction(seat=0, action=1), LoggedAction(seat=1, action='b7')], [2.5, None])
"""

from __future__ import annotations

import math
import sys
import zlib
from array import array
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from arena.records import LoggedAction
from arena.store.errors import StoreError
from arena.wire import action_log
from arena.wire.json_codec import loads

LOG_FORMAT = 1        # match_logs.format


def as_utc(moment: datetime) -> datetime:
    """A time in UTC, as every time is stored and read back; a naive time is taken to be
    UTC already (SQLite returns naive datetimes).

    >>> as_utc(datetime(2025, 3, 1, 12, 0)).isoformat()
    '2025-03-01T12:00:00+00:00'
    """
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def encode_log(actions: Sequence[LoggedAction], latencies_ms: Sequence[float | None]) -> tuple[bytes, bytes]:
    """The compact stored log (about 5.5 KB for a 4-player classic game of 540 decisions).

    Actions: zlib-compressed, in the log's one serialised form (:mod:`arena.wire.action_log`:
    JSON of one flat list ``[seat, action, seat, action, ...]``). Latencies: raw float64,
    little-endian, NaN where the referee played the fallback (exact, and much faster
    than writing 540 floats as text). zlib level 1: level 6 saves 20% of the bytes but
    costs three times the time.
    """
    packed_actions, latencies, _ = pack_log(actions, latencies_ms)
    return packed_actions, latencies.tobytes()


def pack_log(actions: Sequence[LoggedAction],
             latencies_ms: Sequence[float | None]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """:func:`encode_log`'s compressed actions, the latencies as a little-endian float64
    array (None becomes NaN), and the seat of each action: the save path needs all three."""
    try:
        flat = action_log.flatten(actions)
    except ValueError as error:
        raise StoreError(str(error)) from None
    packed_actions = zlib.compress(action_log.flat_json(flat), 1)
    latencies = np.array(latencies_ms, dtype="<f8")
    return packed_actions, latencies, np.array(flat[0::2], dtype=np.int64)


def decode_log(actions: bytes, latencies: bytes) -> tuple[list[LoggedAction], list[float | None]]:
    """The inverse of :func:`encode_log`: ``(actions, latencies)``."""
    pairs = action_log.loads(zlib.decompress(actions))
    packed = array("d")
    packed.frombytes(latencies)
    if sys.byteorder != "little":
        packed.byteswap()
    return pairs, [None if math.isnan(x) else x for x in packed]


def log_seats_and_latencies(actions: bytes, latencies: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The seat of each logged action and the latencies (NaN: a fallback) as arrays, what
    think times are counted from. Raises ``zlib.error``, ``ValueError`` or ``TypeError``
    for a damaged log.

    >>> seats, times = log_seats_and_latencies(*encode_log([LoggedAction(0, 1), LoggedAction(1, "b7")], [2.5, None]))
    >>> seats.tolist(), times.tolist()
    ([0, 1], [2.5, nan])
    """
    flat = loads(zlib.decompress(actions))
    return np.array(flat[0::2], dtype=np.int64), np.frombuffer(latencies, dtype="<f8")


def seat_max_latencies(latencies: np.ndarray, action_seats: np.ndarray, players: int) -> list[float | None]:
    """Each seat's slowest answered decision in ms (``match_seats.think_max_ms``), from a
    log's latencies (NaN: a fallback, no think time) and the seat of each action; None
    for a seat that answered nothing. Raises ``IndexError`` for a seat outside ``players``.

    >>> seat_max_latencies(np.array([2.5, np.nan, 4.0, 1.0]), np.array([0, 1, 1, 0]), 3)
    [2.5, 4.0, None]
    """
    # fmax skips NaN; one unbuffered pass (a boolean mask per seat costs ten times as much
    # on the save path).
    highest = np.full(players, -np.inf)
    np.fmax.at(highest, action_seats, latencies)
    return [float(x) if x != -np.inf else None for x in highest.tolist()]
