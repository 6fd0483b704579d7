"""How often a caller may use the referee's public calls: allowances per connection and per peer.

``ListMatches``, ``GetLeaderboard``, ``Spectate`` and refused ``Play`` streams (a
missing or unknown bot token) each have an allowance (:class:`CallLimit`): a burst the
caller may spend at once, refilled at a steady rate, once per connection and once per
peer. A call beyond either is refused with ``RESOURCE_EXHAUSTED`` before any work is
done for it (the interceptor in ``arena.referee.auth`` asks, the servicer never sees it),
after a delay that slows a flooding client down to its own pace of answers.

Who is the caller is what grpc's ``context.peer()`` says:

* TCP: ``ipv4:127.0.0.1:46078`` (``ipv6:[::1]:46078``): the address and port, one per
  connection; the peer is the address without the port, so a client that opens many
  connections from one host still draws on one allowance.
* Unix socket: ``unix:``, the same for every connection (a client's end of a Unix socket
  has no name), with nothing else in grpc's server API to tell two connections apart
  (the auth context says only ``insecure``; an interceptor sees the method and the
  metadata, not the connection). So every client of the socket shares one allowance:
  the confined bots of a run, which have no business calling these at all (a bot
  plays on its ``Play`` stream, and a stream with a valid token is never limited).

The defaults (:data:`DEFAULT_LIMITS`) are far above what an honest client does (the
reasons are beside each); docs/serve.md lists them.

    >>> clock = [0.0]
    >>> limiter = Limiter(CallLimit("ListMatches calls", Rate(2, 1.0), Rate(3, 1.0)), lambda: clock[0])
    >>> [limiter.take("ipv4:10.0.0.1:5000") is None for _ in range(3)]
    [True, True, False]
    >>> limiter.take("ipv4:10.0.0.1:5001") is None, limiter.take("ipv4:10.0.0.1:5002") is None
    (True, False)
    >>> clock[0] = 1.0                      # a second later: one more each
    >>> limiter.take("ipv4:10.0.0.1:5000") is None
    True
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]


def peer_host(peer: str) -> str:
    """The peer of a connection: grpc's peer string without the port (a Unix socket's whole).

    >>> peer_host("ipv4:127.0.0.1:46078"), peer_host("ipv6:[::1]:5000"), peer_host("unix:")
    ('ipv4:127.0.0.1', 'ipv6:[::1]', 'unix:')
    """
    if peer.startswith(("ipv4:", "ipv6:")):
        host, _, port = peer.rpartition(":")
        if port.isdigit():
            return host
    return peer


@dataclass(frozen=True)
class Rate:
    """An allowance's shape: ``burst`` calls at once, refilled at ``per_second``."""

    burst: int
    per_second: float

    def __str__(self) -> str:
        return f"{self.burst} at once and {self.per_second:g} a second"


@dataclass(frozen=True)
class CallLimit:
    """The allowance of one kind of call (``what``, plural: "ListMatches calls")."""

    what: str
    per_connection: Rate
    per_peer: Rate

    def refusal(self, peer: str) -> str:
        """The status message of a call refused for this limit (it names the limit)."""
        return (f"rate limit: at most {self.per_connection} {self.what} per connection, "
                f"{self.per_peer} per peer ({peer_host(peer)}); try again later")


@dataclass(frozen=True)
class RateLimits:
    """Every limited call's allowance; how long a call over it waits for its refusal
    (``refusal_delay``: a client that waits for its answers is slowed to one call a
    second per thread) and how many may wait at once (``max_delayed``; the rest are
    refused at once); and how often refused ``Play`` streams are summarised on the
    console (the first of a bot or peer at once, then one line per interval)."""

    list_matches: CallLimit
    get_leaderboard: CallLimit
    spectate: CallLimit
    refused_play: CallLimit
    refusal_delay: float = 1.0
    max_delayed: int = 1000
    summary_seconds: float = 10.0


DEFAULT_LIMITS = RateLimits(
    # arena web asks ListMatches once per open tournament page every 2 s (and for each
    # live page opened), all on one connection (grpc shares a connection between a
    # process's channels to one address): 20 a second serves 40 pages polling at once,
    # and a burst of 100 as many pages opened together.
    list_matches=CallLimit("ListMatches calls", per_connection=Rate(100, 20.0), per_peer=Rate(100, 20.0)),
    # Nothing of the arena's own calls it (arena web reads its boards from the database);
    # a dashboard refreshes it every few seconds. It reads the whole board: the dearest call.
    get_leaderboard=CallLimit("GetLeaderboard calls", per_connection=Rate(10, 2.0), per_peer=Rate(30, 5.0)),
    # A watcher opens one stream per match it follows: a burst of 70 covers every match of
    # a busy arena at once (64 spectators a match is the most any match takes), arena web
    # follows each live match on one stream whatever the number of its pages.
    spectate=CallLimit("Spectate calls", per_connection=Rate(70, 10.0), per_peer=Rate(200, 20.0)),
    # A bot with a rotated or mistyped token is refused (UNAUTHENTICATED, which the SDK does
    # not retry); a reconnecting bot with a valid token is never counted here.
    refused_play=CallLimit("refused Play streams", per_connection=Rate(5, 1.0), per_peer=Rate(20, 2.0)),
)


@dataclass
class _Bucket:
    allowance: float
    stamp: float


class Buckets:
    """The allowances of one :class:`Rate`, by key, each a bucket: what is left of it, and
    when. A bucket that has refilled is forgotten (a full bucket and none are the same),
    so memory follows the callers of the last ``burst / per_second`` seconds, not every
    caller ever seen."""

    def __init__(self, rate: Rate, clock: Clock) -> None:
        self.rate = rate
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._pruned = clock()

    def available(self, key: str, now: float) -> float:
        bucket = self._buckets.get(key)
        if bucket is None:
            return float(self.rate.burst)
        return min(float(self.rate.burst), bucket.allowance + (now - bucket.stamp) * self.rate.per_second)

    def spend(self, key: str, now: float) -> None:
        self._buckets[key] = _Bucket(self.available(key, now) - 1.0, now)
        if now - self._pruned > 1.0:
            self._prune(now)

    def __len__(self) -> int:
        return len(self._buckets)

    def _prune(self, now: float) -> None:
        self._pruned = now
        full = [key for key in self._buckets if self.available(key, now) >= self.rate.burst]
        for key in full:
            del self._buckets[key]


class Limiter:
    """One :class:`CallLimit`, applied per connection (grpc's peer string) and per peer."""

    def __init__(self, limit: CallLimit, clock: Clock = time.monotonic) -> None:
        self.limit = limit
        self._clock = clock
        self._connections = Buckets(limit.per_connection, clock)
        self._peers = Buckets(limit.per_peer, clock)

    def over(self, peer: str) -> str | None:
        """Why a call from ``peer`` is refused now (the status message), or None; spends nothing."""
        now = self._clock()
        if self._connections.available(peer, now) < 1.0 or self._peers.available(peer_host(peer), now) < 1.0:
            return self.limit.refusal(peer)
        return None

    def spend(self, peer: str) -> None:
        """Count one call from ``peer`` against both allowances."""
        now = self._clock()
        self._connections.spend(peer, now)
        self._peers.spend(peer_host(peer), now)

    def take(self, peer: str) -> str | None:
        """:meth:`over`, and when the call may go ahead, :meth:`spend`."""
        problem = self.over(peer)
        if problem is None:
            self.spend(peer)
        return problem


@dataclass
class _Window:
    opened: float
    counts: dict[str, int] = field(default_factory=dict)   # reason -> streams refused since opened


class RefusalLog:
    """The console's warnings about refused ``Play`` streams, summarised.

    The first refusal of a key (``bot NAME``, or the peer for a token that names no bot)
    is logged at once, with its reason; the ones after it are counted, and when
    ``interval`` seconds have passed since that line, one line says how many there were
    ("refused 412 more Play streams from unix: in the last 10 s (412 with a bad token)").
    A key with nothing new is forgotten. :meth:`flush` writes the lines that are due:
    the server calls it every second, and with ``everything`` when it stops.
    """

    def __init__(self, log: logging.Logger, interval: float = 10.0, clock: Clock = time.monotonic) -> None:
        self._log = log
        self.interval = interval
        self._clock = clock
        self._windows: dict[str, _Window] = {}

    def refused(self, key: str, reason: str, details: str) -> None:
        """One stream refused: ``reason`` in a few words for the count ("with a bad token"),
        ``details`` the whole refusal for the first line."""
        window = self._windows.get(key)
        if window is None:
            self._windows[key] = _Window(self._clock())
            self._log.warning("refused a Play stream from %s: %s", key.rstrip(":"), details)
            return
        window.counts[reason] = window.counts.get(reason, 0) + 1

    def flush(self, everything: bool = False) -> None:
        now = self._clock()
        for key, window in list(self._windows.items()):
            if not everything and now - window.opened < self.interval:
                continue
            if not window.counts:
                del self._windows[key]
                continue
            total = sum(window.counts.values())
            reasons = ", ".join(f"{count} {reason}" for reason, count in window.counts.items())
            self._log.warning("refused %d more Play stream%s from %s in the last %.0f s (%s)", total,
                              "" if total == 1 else "s", key, now - window.opened, reasons)
            if everything:
                del self._windows[key]
            else:
                self._windows[key] = _Window(now)
