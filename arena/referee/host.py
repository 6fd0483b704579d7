"""The match host: the bots an arena knows and the matches it plays, without the network.

:class:`MatchHost` holds what hosting matches needs: the tokens that say which bot a
stream belongs to (:class:`~arena.referee.auth.Tokens`), the live connections
(:class:`~arena.referee.seating.Roster`), the matches running and the last
:data:`RECENT_MATCHES` finished, and the background tasks that serve them. It seats a
match, plays it (:class:`~arena.referee.match.Referee`) and stores its record.

It knows nothing of gRPC's server: the server (``arena.referee.server``) listens, checks
calls and hands each call to the servicer, and the servicer and the auto-match call
the host. Nothing here imports either of them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from arena.records import MatchRecord, MatchSpec
from arena.referee.auth import Tokens
from arena.referee.limits import Limits
from arena.referee.match import Referee
from arena.referee.seating import Absence, ConnectedBotInfo, Roster

if TYPE_CHECKING:
    from arena.store import Store

log = logging.getLogger(__name__)

RECENT_MATCHES = 200   # finished matches kept in memory (for spectators and ListMatches)


class MatchHost:
    """The bots and the matches of one arena.

    Bots are known by a token from the store (``arena bot register``) or a one-run token
    given to :meth:`add_local_bot`. :meth:`run_match` does not store the record;
    :meth:`save` does, when there is a store.
    """

    def __init__(self, *, store: Store | None = None, limits: Limits = Limits()) -> None:
        self.store = store
        self.limits = limits
        self.tokens = Tokens(store)
        self.roster = Roster()
        self.seat_timeout = 10.0          # how long run_match waits for busy or absent bots
        # Set by a runner that started every bot itself (LocalArena): the bots it knows
        # to be down, and that any bot still unconnected after seat_timeout is seated
        # absent instead of failing the match (see Roster.seat_when_free).
        self.absent: dict[str, Absence] | None = None
        self.running: dict[str, Referee] = {}
        self.recent: OrderedDict[str, Referee] = OrderedDict()   # finished, newest last
        self._request_ids = itertools.count(1)
        self._background: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background until it ends or the host closes."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def watch_tokens(self) -> None:
        """End the streams of tokens rotated or removed in the store, from now until the
        host closes (:meth:`~arena.referee.auth.Tokens.watch`); nothing without a store."""
        if self.store is not None:
            self.spawn(self.tokens.watch(self.roster))

    def close(self) -> None:
        """Cancel the background tasks and end every ``Play`` stream from our side once
        its queued messages are out, so that its handler returns instead of being
        cancelled by grpc (which logs a traceback each)."""
        for task in list(self._background):
            task.cancel()
        for conns in list(self.roster.by_name.values()):
            for conn in conns:
                conn.finish()

    # -- bots

    def add_local_bot(self, name: str, token: str, max_streams: int | None = None) -> None:
        """Accept ``token`` for bot ``name`` (not stored) until :meth:`remove_local_bot`,
        for at most ``max_streams`` streams at once when given."""
        self.tokens.add_local(name, token, max_streams)

    def remove_local_bot(self, token: str) -> None:
        """Stop accepting ``token`` and end the streams that use it (a bot process that
        was stopped or restarted: whatever it left behind cannot play on)."""
        self.tokens.remove_local(token)
        self.roster.revoke(lambda conn: conn.token != token)

    def connected_bots(self) -> dict[str, ConnectedBotInfo]:
        return self.roster.info()

    async def wait_connected(self, names: list[str], timeout: float) -> None:
        """Wait until every named bot has a connection; TimeoutError names the missing ones."""
        deadline = time.monotonic() + timeout
        while True:
            missing = sorted(set(names) - set(self.roster.by_name))
            if not missing:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"bots not connected after {timeout:g} s: {', '.join(missing)}")
            await self.roster.wait_for_change(left)

    async def wait_for_tokens(self, tokens: list[str], timeout: float) -> None:
        """Wait until a stream that authenticated with each of ``tokens`` is connected;
        TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while any(self.roster.streams_with_token(token) == 0 for token in tokens):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"not connected after {timeout:g} s")
            await self.roster.wait_for_change(left)

    # -- matches

    async def run_match(self, spec: MatchSpec, tokens: dict[str, str] | None = None,
                        absent: dict[str, Absence] | None = None) -> MatchRecord:
        """Seat the named bots (waiting up to ``seat_timeout`` for free slots), play the
        match, and return its record. Does not store it.

        With ``tokens`` each bot they name gets its seats on its stream of that one-run
        token only (the process its runner chose for this match), also when they come back
        after a drop; the caller may change the mapping while the match runs (a process
        restarted with a new token). Where :attr:`absent` is set (and ``absent``
        adds to it for this match), a bot without a connection plays its seats by the
        disconnect rule instead of failing the match."""
        config = spec.config
        if not spec.match_id:
            spec.match_id = uuid.uuid4().hex[:16]
        if spec.match_id in self.running:
            raise ValueError(f"match {spec.match_id!r} is already running")
        if self.absent is not None:
            absent = {**self.absent, **(absent or {})}
        links = await self.roster.seat_when_free(spec.bots, config, self.running.values(), self.seat_timeout,
                                                 absent, tokens)
        referee = Referee(spec, list(links), limits=self.limits,
                          next_request_id=lambda: next(self._request_ids))
        referee.tokens = tokens     # a seat that drops goes back only to a stream they allow
        for seat, link in enumerate(links):
            if link is None:
                name = spec.bots[seat]
                absence = (absent or {}).get(name) or Absence("not connected")
                referee.seat_absent(seat, f"{name} has no connection: {absence.reason}", absence.final)
                if not absence.final:
                    self.roster.wait_for_bot(referee, seat)
        self.running[spec.match_id] = referee
        try:
            record = await referee.run()   # takes the seats before its first await
            log.info("match %s %s: %s%s", spec.match_id, record.status,
                     ", ".join(f"{bot} {total} (#{place})" for bot, total, place
                               in zip(record.bots, record.totals, record.places)),
                     f"; {len(record.faults)} fault{'s' if len(record.faults) != 1 else ''}" if record.faults else "")
            return record
        finally:
            del self.running[spec.match_id]
            self.recent[spec.match_id] = referee
            while len(self.recent) > RECENT_MATCHES:
                self.recent.popitem(last=False)
            self.roster.released()

    def find_match(self, match_id: str) -> Referee | None:
        """A match still in memory: running, or among the last RECENT_MATCHES finished."""
        return self.running.get(match_id) or self.recent.get(match_id)

    def running_matches(self) -> list[Referee]:
        """The matches being played, oldest first."""
        return list(self.running.values())

    def finished_matches(self) -> list[Referee]:
        """The last RECENT_MATCHES finished matches, oldest first."""
        return list(self.recent.values())

    async def save(self, record: MatchRecord) -> bool:
        """Store a record, off the event loop; whether it was stored now (False: there is no
        store, it held the match's slot already, or storing failed: the error is logged, not
        raised)."""
        if self.store is None:
            return False
        try:
            return bool(await asyncio.to_thread(self.store.save_match, record))
        except Exception:
            log.exception("could not store match %s", record.match_id)
            return False
