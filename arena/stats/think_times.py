"""Think times: log-spaced histograms of decision latencies that merge by adding counts.

A leaderboard shows each bot's median and 99th-percentile think time over every
decision it answered. Reading every stored match log for that would be far too slow
on a large database, so the store keeps, per bot, variant and tournament, a histogram
of those latencies (updated in the transaction that saves a match) and the board adds
a few of them up.

The buckets are log-spaced: ``BUCKETS_PER_DECADE`` (64) per factor of ten, from
``LOWEST_MS`` (0.01 ms) to ``HIGHEST_MS`` (10^6 ms), 512 in all. Each bucket is
10^(1/64) = 3.7% wider than the one below, and a percentile is reported as the
geometric middle of its bucket, so it lies within ``RESOLUTION`` (±1.8%) of the
exact nearest-rank percentile (numpy's ``method="inverted_cdf"``). Latencies below
0.01 ms count in the lowest bucket, latencies above 10^6 ms (17 minutes) in the highest.

    >>> h = LatencyHistogram.of([1.0, 2.0, 3.0, 4.0, 100.0])
    >>> h.decisions, round(h.percentile(50), 2), round(h.percentile(99), 1)
    (5, 3.0, 101.8)
    >>> LatencyHistogram.decode(h.encode()) == h
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

BUCKETS_PER_DECADE = 64
LOWEST_MS = 0.01
DECADES = 8                                     # 0.01 ms .. 10^6 ms
HIGHEST_MS = LOWEST_MS * 10.0 ** DECADES
BUCKETS = BUCKETS_PER_DECADE * DECADES          # 512
# The largest relative distance from a latency to the middle of its bucket.
RESOLUTION = 10.0 ** (1 / (2 * BUCKETS_PER_DECADE)) - 1     # 0.0181

# The stored form (see encode_counts): a 4-byte header, then one little-endian count per
# bucket from the first non-empty bucket to the last (a few hundred bytes). The header
# is the format (1), the width of a count in bytes (4; 8 past 4 billion decisions in
# one bucket) and the first bucket (2 bytes).
_FORMAT = 1
_WIDTHS = {4: "<u4", 8: "<u8"}


def bucket_of(latencies_ms: np.ndarray) -> np.ndarray:
    """The bucket index of each latency (no NaNs here: the caller leaves those out).

    >>> bucket_of(np.array([-1.0, 0.001, 0.01, 1.0, 1.04, 1e9])).tolist()
    [0, 0, 0, 128, 129, 511]
    """
    # Raising the latencies to the lowest bucket first keeps log10 finite; the cast to
    # int truncates, which is the floor for these non-negative values.
    scaled = np.log10(np.maximum(latencies_ms, LOWEST_MS)) * BUCKETS_PER_DECADE
    buckets = (scaled - math.log10(LOWEST_MS) * BUCKETS_PER_DECADE).astype(np.int64)
    return np.minimum(buckets, BUCKETS - 1, out=buckets)


def seat_bucket_counts(latencies_ms: np.ndarray, seats: np.ndarray, players: int) -> np.ndarray:
    """Dense bucket counts per seat, shape ``(players, BUCKETS)``, of the answered decisions.

    ``latencies_ms`` runs parallel to ``seats`` (the seat of each logged action); NaN
    marks a decision the referee played for the bot (a fallback), which is not think
    time and is left out.

    >>> counts = seat_bucket_counts(np.array([1.0, np.nan, 1.0, 10.0]), np.array([0, 0, 1, 1]), 2)
    >>> counts.shape, counts.sum(axis=1).tolist(), int(counts[0, 128])
    ((2, 512), [1, 2], 1)
    """
    answered = ~np.isnan(latencies_ms) & (seats >= 0) & (seats < players)
    keys = seats[answered] * BUCKETS + bucket_of(latencies_ms[answered])
    return np.bincount(keys, minlength=players * BUCKETS).reshape(players, BUCKETS)


def encode_counts(dense: np.ndarray) -> bytes | None:
    """The stored form of dense bucket counts, or None when they are all zero.

    >>> encode_counts(np.zeros(BUCKETS, np.int64)) is None
    True
    >>> len(encode_counts(np.bincount([128, 130], minlength=BUCKETS)))   # header + 3 counts of 4 bytes
    16
    """
    filled = dense.nonzero()[0]
    if filled.size == 0:
        return None
    first = int(filled[0])
    counts = dense[first:int(filled[-1]) + 1]
    width = 4 if counts.max() < 2**32 else 8
    return bytes((_FORMAT, width)) + first.to_bytes(2, "little") + counts.astype(_WIDTHS[width]).tobytes()


def _stored_counts(blob: bytes) -> tuple[int, np.ndarray]:
    """The first bucket and the counts of a stored histogram."""
    blob = bytes(blob)     # a database driver may hand back a memoryview
    if len(blob) < 4 or blob[0] != _FORMAT or blob[1] not in _WIDTHS:
        raise ValueError(f"not a stored think-time histogram: {blob[:4]!r}")
    return int.from_bytes(blob[2:4], "little"), np.frombuffer(blob, dtype=_WIDTHS[blob[1]], offset=4)


def decode_counts(blob: bytes | None) -> np.ndarray:
    """Dense int64 bucket counts from the stored form (None: an empty histogram)."""
    dense = np.zeros(BUCKETS, np.int64)
    if blob:
        first, counts = _stored_counts(blob)
        dense[first:first + counts.size] = counts
    return dense


def add_counts(blob: bytes | None, dense: np.ndarray) -> bytes | None:
    """The stored form of a stored histogram (None: empty) plus dense bucket counts.

    >>> stored = encode_counts(np.bincount([128], minlength=BUCKETS))
    >>> decode_counts(add_counts(stored, np.bincount([128, 129], minlength=BUCKETS)))[127:131].tolist()
    [0, 2, 1, 0]
    """
    if blob:
        first, counts = _stored_counts(blob)
        dense = dense.copy()        # the caller's counts stay as they were
        dense[first:first + counts.size] += counts
    return encode_counts(dense)


@dataclass(frozen=True)
class LatencyHistogram:
    """Counts of think times per log-spaced bucket (see the module docstring).

    Stored trimmed: ``counts[i]`` is the count of bucket ``first + i``. Immutable and
    comparable, so values holding one (``SeatAggregate``) compare as usual.
    """

    first: int = 0
    counts: tuple[int, ...] = ()

    @classmethod
    def of(cls, latencies_ms: Iterable[float | None]) -> LatencyHistogram:
        """The histogram of some latencies (``None`` ones are left out)."""
        values = np.array([math.nan if x is None else x for x in latencies_ms], dtype=np.float64)
        return cls.from_dense(seat_bucket_counts(values, np.zeros(values.size, np.int64), 1)[0])

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> LatencyHistogram:
        filled = np.flatnonzero(dense)
        if filled.size == 0:
            return cls()
        return cls(int(filled[0]), tuple(int(c) for c in dense[filled[0]:filled[-1] + 1]))

    @classmethod
    def decode(cls, blob: bytes | None) -> LatencyHistogram:
        return cls.from_dense(decode_counts(blob))

    @classmethod
    def merge(cls, blobs: Sequence[bytes | None]) -> LatencyHistogram:
        """The sum of several stored histograms."""
        total = np.zeros(BUCKETS, np.int64)
        for blob in blobs:
            total += decode_counts(blob)
        return cls.from_dense(total)

    def dense(self) -> np.ndarray:
        dense = np.zeros(BUCKETS, np.int64)
        dense[self.first:self.first + len(self.counts)] = self.counts
        return dense

    def encode(self) -> bytes | None:
        return encode_counts(self.dense())

    @property
    def decisions(self) -> int:
        """How many latencies the histogram holds."""
        return sum(self.counts)

    def percentile(self, percent: float) -> float | None:
        """The nearest-rank percentile in ms, within ±RESOLUTION; None when empty.

        The nearest-rank ``p``-th percentile of ``n`` values is the ``ceil(p/100 * n)``-th
        smallest, numpy's ``percentile(..., method="inverted_cdf")``.
        """
        if not 0 < percent <= 100:
            raise ValueError(f"percentile must be in (0, 100], not {percent}")
        n = self.decisions
        if n == 0:
            return None
        # round(): 99 / 100 * 100 is 99.00000000000001, whose ceiling would be one rank too far.
        rank = max(1, math.ceil(round(percent / 100 * n, 9)))
        index = int(np.searchsorted(np.cumsum(self.counts), rank))
        return bucket_middle(self.first + index)


def bucket_middle(bucket: int) -> float:
    """The geometric middle of a bucket in ms: what a percentile in it is reported as.

    >>> round(bucket_middle(128), 4)
    1.0182
    """
    return LOWEST_MS * 10.0 ** ((bucket + 0.5) / BUCKETS_PER_DECADE)
