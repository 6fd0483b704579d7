"""Seating: the live connections by bot name, which of them take a match's seats, and the
seats that wait for their bot to come back.

A bot may hold several streams; a match's seat goes to a stream of its bot that plays
the variant and has a free slot. When a stream drops, its seats become *orphans*: the
next stream of that bot with a free slot gets them back (or, for a finished or
forfeited match, hears how it ended). The finished ones are forgotten after
ORPHAN_KEEP_SECONDS, and a bot never has more than ORPHANS_PER_BOT of them.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import grpc

from arena.referee.connections import Connection
from arena.referee.match import Referee
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import GameConfig

ORPHAN_KEEP_SECONDS = 600.0
ORPHANS_PER_BOT = 64


class SeatingError(TimeoutError):
    """The named bots could not all be seated in time."""


@dataclass(frozen=True)
class Absence:
    """Why a bot has no connection, for a match that seats it anyway: its seat starts
    disconnected (a ``disconnect`` fault, then the grace period), and forfeits at once
    when ``final`` (no process of it is coming back)."""

    reason: str
    final: bool = False


@dataclass
class ConnectedBotInfo:
    """A connected bot as ``connected_bots()`` and ``ListBots`` report it."""

    name: str
    version: str
    variants: list[str]     # empty: both
    connections: int
    free_slots: int         # more matches it can take now, over all its connections


def _newest_first(conns: Iterable[Connection]) -> list[Connection]:
    return sorted(conns, key=lambda c: -c.serial)


def _recent_orphans(orphans: list[tuple[Referee, int]]) -> list[tuple[Referee, int]]:
    """The orphaned seats worth keeping: running matches, and matches that ended less
    than ORPHAN_KEEP_SECONDS ago, newest last, at most ORPHANS_PER_BOT."""
    now = time.monotonic()
    kept = [(r, s) for r, s in orphans
            if r.finished_at is None or now - r.finished_at < ORPHAN_KEEP_SECONDS]
    return kept[-ORPHANS_PER_BOT:]


def may_seat(conn: Connection, name: str, tokens: Mapping[str, str] | None) -> bool:
    """Whether ``conn`` may take a seat of bot ``name`` in a match seated with ``tokens``
    (one-run tokens by bot name): any stream of the bot without them or for a bot they
    do not name (one the runner did not start, a person), else only its stream of that
    token, the process the runner chose for this match."""
    return tokens is None or name not in tokens or conn.token == tokens[name]


class Roster:
    """The live connections by bot name, and the seats waiting for their bot to come back."""

    def __init__(self) -> None:
        self.by_name: dict[str, list[Connection]] = {}
        self._orphans: dict[str, list[tuple[Referee, int]]] = {}
        self._ids = itertools.count(1)
        self._changed: asyncio.Event | None = None

    def connect(self, name: str, hello: pb.Hello, token: str) -> Connection:
        """Register a new stream: Welcome it, and give it back seats its bot lost (and
        the endings of matches it forfeited while away)."""
        conn = Connection(next(self._ids), name, hello, token)   # queues the Welcome first
        self.by_name.setdefault(name, []).append(conn)
        self._hand_back(name, self._orphans.pop(name, []), [conn])
        self._notify()
        return conn

    def _hand_back(self, name: str, orphans: list[tuple[Referee, int]], streams: list[Connection]) -> None:
        """Give the bot's orphaned seats to the first of ``streams`` that plays the match's
        variant and has a free slot (a stream never gets more than its ``max_matches``);
        a seat no stream can take keeps waiting (and forfeits when its grace is over).
        The ending of a finished match (MatchStarted, then MatchEnded) needs no slot."""
        waiting = []
        for referee, seat in orphans:
            taker = next((c for c in streams if c.plays(referee.variant) and may_seat(c, name, referee.tokens)
                          and (referee.finished or c.free_slots() > 0)), None)
            if taker is None:
                waiting.append((referee, seat))
            else:
                referee.seat_reconnected(seat, taker)
        if waiting:
            self._orphans[name] = _recent_orphans(waiting)

    def streams_of(self, name: str) -> int:
        return len(self.by_name.get(name, []))

    def disconnect(self, conn: Connection) -> None:
        """The stream is gone: its seats wait for the bot to reconnect.

        If the bot already opened a newer stream (it came back before we noticed the old
        one was dead), that stream takes the seats at once.
        """
        if not conn.alive:
            return
        conn.alive = False
        conns = self.by_name.get(conn.name, [])
        if conn in conns:
            conns.remove(conn)
        if not conns:
            self.by_name.pop(conn.name, None)
        orphans = self._orphans.pop(conn.name, [])
        why = f"the arena closed the stream: {conn.ended[1]}" if conn.ended else "the connection was lost"
        for referee, seat in sorted(conn.seats, key=lambda rs: (rs[0].match_id, rs[1])):
            if referee.seat_disconnected(seat, conn, why, closed_by_arena=conn.ended is not None):
                orphans.append((referee, seat))
        conn.seats.clear()
        # A newer stream of the bot (it came back before we noticed) takes them at once.
        self._hand_back(conn.name, orphans, _newest_first(c for c in conns if c.serial > conn.serial))
        self._notify()

    def revoke(self, still_valid: Callable[[Connection], bool]) -> None:
        """End every stream whose token is no longer its bot's (rotated or removed)."""
        for conns in list(self.by_name.values()):
            for conn in conns:
                if conn.alive and not still_valid(conn):
                    conn.end(grpc.StatusCode.UNAUTHENTICATED, "this bot's token was rotated or removed")

    def released(self) -> None:
        """A match ended: slots are free again, also for seats waiting for one."""
        for name in [n for n in self._orphans if n in self.by_name]:
            self._hand_back(name, self._orphans.pop(name), _newest_first(self.by_name[name]))
        self._notify()

    def seat(self, bots: list[str], variant: str, absent: Mapping[str, Absence] | None = None,
             tokens: Mapping[str, str] | None = None) -> list[Connection | None] | None:
        """Connections for each seat, or None if some bot has no usable connection now.

        Each seat gets a connection of its bot with a free slot, preferring one not yet
        used in this match; when the same bot fills several seats and has no other free
        connection, one connection holds several seats (they share its slot). A bot
        named in ``absent`` that has no connection at all gets ``None`` (its seat starts
        disconnected). With ``tokens`` a bot's seats go only to its stream of that
        token (a process started for this one match).
        """
        chosen: list[Connection | None] = []
        for name in bots:
            conns = [c for c in self.by_name.get(name, []) if c.alive and c.plays(variant)
                     and may_seat(c, name, tokens)]
            fresh = [c for c in conns if c not in chosen and c.free_slots() > 0]
            if fresh:
                chosen.append(max(fresh, key=Connection.free_slots))
                continue
            reused = [c for c in conns if c in chosen]
            if reused:
                chosen.append(reused[0])
            elif absent is not None and name in absent and not conns:
                chosen.append(None)
            else:
                return None
        return chosen

    async def seat_when_free(self, bots: list[str], config: GameConfig, running: Iterable[Referee],
                             timeout: float, absent: Mapping[str, Absence] | None = None,
                             tokens: Mapping[str, str] | None = None) -> list[Connection | None]:
        """Connections for a match's seats, waiting up to ``timeout`` for free slots (and
        for the bots to finish the same deal elsewhere); :class:`SeatingError` says who
        could not be seated. The caller must take the seats before its next ``await``.

        With ``absent`` (the arena started these bots itself, so every name is one of
        its own), a bot that still has no connection when the time is up is seated
        absent too rather than failing the match, and a bot that is connected but busy
        is waited for as long as it takes (its other matches end under their time
        limits): a bot that lost its stream forfeits its seats, it never stops the
        tournament."""
        deadline = time.monotonic() + timeout
        while ((clash := same_deal_clash(running, config, bots))
               or (links := self.seat(bots, config.variant, absent, tokens)) is None):
            left = deadline - time.monotonic()
            if left <= 0:
                if clash:
                    raise SeatingError(f"{clash} within {timeout:g} s")
                if absent is None:
                    missing = self.missing(bots, config.variant)
                    raise SeatingError(f"cannot seat {', '.join(missing)} for a {config.variant} match "
                                       f"within {timeout:g} s (not connected, busy, or not playing it)")
                late = {name: Absence(f"not connected within {timeout:g} s") for name in bots
                        if not any(may_seat(c, name, tokens) for c in self.by_name.get(name, []))}
                if late:
                    absent = {**late, **absent}
                    continue
            await self.wait_for_change(max(left, 1.0))
        return links

    def wait_for_bot(self, referee: Referee, seat: int) -> None:
        """``seat`` of ``referee`` started without its bot: the bot's next stream with a
        free slot takes it (as it takes back the seats of a stream that dropped)."""
        name = referee.spec.bots[seat]
        self._orphans[name] = _recent_orphans([*self._orphans.get(name, []), (referee, seat)])

    def streams_with_token(self, token: str) -> int:
        """The open streams that authenticated with ``token``."""
        return sum(1 for conns in self.by_name.values() for c in conns if c.token == token)

    def missing(self, bots: list[str], variant: str) -> list[str]:
        """Bots with no free connection for ``variant`` now (for error messages)."""
        return sorted({name for name in bots
                       if not any(c.plays(variant) and c.free_slots() > 0 for c in self.by_name.get(name, []))})

    def idle(self, variant: str) -> list[str]:
        """The bots, by name in order, with a stream that plays ``variant`` and has a free slot."""
        return sorted(name for name, conns in self.by_name.items()
                      if any(c.plays(variant) and c.free_slots() > 0 for c in conns))

    def info(self) -> dict[str, ConnectedBotInfo]:
        out: dict[str, ConnectedBotInfo] = {}
        for name, conns in self.by_name.items():
            variants = sorted({v for c in conns for v in c.variants}) if all(c.variants for c in conns) else []
            out[name] = ConnectedBotInfo(name=name, version=conns[-1].version, variants=variants,
                                         connections=len(conns), free_slots=sum(c.free_slots() for c in conns))
        return out

    async def wait_for_change(self, timeout: float) -> None:
        """Return after the next connect, disconnect or released match, or after ``timeout``."""
        if self._changed is None:
            self._changed = asyncio.Event()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None


def same_deal_clash(running: Iterable[Referee], config: GameConfig, bots: list[str]) -> str:
    """Why a match must wait: one of its bots is playing the same deal right now in
    another match (a duplicate rotation), where it would hold another seat's cards.
    Empty when it may start."""
    for referee in running:
        if referee.config.seed == config.seed and referee.config.variant == config.variant:
            shared = sorted(set(bots) & set(referee.spec.bots))
            if shared:
                return (f"{', '.join(shared)} cannot play the same deal twice at once "
                        f"(match {referee.match_id} is still running)")
    return ""
