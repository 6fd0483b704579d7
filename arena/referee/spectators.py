"""Spectators: the public events of a match, live while it runs, replayed after.

A spectator reads the match's public log at its own pace (a cursor, no queue): the
referee never waits for it, and a crowd costs one write per spectator per batch (at
most every SPECTATOR_BATCH_SECONDS). One whose stream takes more than
SPECTATOR_WRITE_TIMEOUT to accept a batch is dropped, never waited for. A match no
longer in memory is replayed from the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import grpc

from arena.referee.match import Referee
from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import replay_record

if TYPE_CHECKING:
    from arena.store import Store

# At most this many per match and in all.
MAX_SPECTATORS_PER_MATCH = 64
MAX_SPECTATORS = 512
SPECTATOR_BATCH_SECONDS = 0.2
SPECTATOR_WRITE_TIMEOUT = 5.0
SPECTATOR_REPLAY_BATCH = 500   # events per message when a stored match is replayed
PRIVATE = ("is private: its deal is played again by other matches (a duplicate format's rotations), "
           "so its cards are hands still to come; its replay is in the organiser's database, "
           "shown by arena web once every game of the deal is stored")


class Spectators:
    """Every spectator of the arena. ``find`` gives a match still in memory (running or
    recently finished), ``store`` the rest."""

    def __init__(self, find: Callable[[str], Referee | None], store: Store | None) -> None:
        self.find = find
        self.store = store
        self.count = 0

    async def serve(self, request: pb.SpectateRequest, context: grpc.aio.ServicerContext) -> None:
        """The ``Spectate`` call: batches written with ``context.write`` (not yielded), so
        that a spectator that stops reading is dropped after a timeout instead of holding
        its batch forever."""
        try:
            async for batch in self.batches(request.match_id):
                update = pb.SpectatorUpdate(match_id=request.match_id, events_json=batch)
                try:
                    await asyncio.wait_for(context.write(update), SPECTATOR_WRITE_TIMEOUT)
                except TimeoutError:
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                        f"spectator too slow: a batch waited over {SPECTATOR_WRITE_TIMEOUT:g} s")
        except LookupError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {protocol.clip(request.match_id)}")
        except OverflowError as error:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))
        except PermissionError as error:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(error))

    async def batches(self, match_id: str) -> AsyncIterator[list[str]]:
        """The public events of a match as JSON, in batches, from its start; live while it runs.

        Raises ``LookupError`` for an unknown match, ``PermissionError`` for a private one
        (``MatchSpec.private``: the referee cannot know when the rest of its deal has been
        played, so it never shows it) and ``OverflowError`` when the match or the arena
        has all the spectators it takes.
        """
        referee = self.find(match_id)
        if referee is not None and referee.spec.private:
            raise PermissionError(f"match {protocol.clip(match_id)} {PRIVATE}")
        if referee is None:
            events = await self._stored_public_events(match_id)
            for start in range(0, len(events), SPECTATOR_REPLAY_BATCH):
                yield protocol.events_json(events[start:start + SPECTATOR_REPLAY_BATCH])
            return
        if referee.spectators >= MAX_SPECTATORS_PER_MATCH or self.count >= MAX_SPECTATORS:
            raise OverflowError(f"match {match_id} already has {referee.spectators} spectators "
                                f"(at most {MAX_SPECTATORS_PER_MATCH} a match, {MAX_SPECTATORS} in all)")
        referee.spectators += 1
        self.count += 1
        try:
            cursor = 0
            while True:
                events, cursor = referee.public_json(cursor)
                if events:
                    yield events
                if referee.finished:
                    events, cursor = referee.public_json(cursor)
                    if events:
                        yield events
                    return
                await referee.wait_for_change()
                await asyncio.sleep(SPECTATOR_BATCH_SECONDS)   # gather a batch
        finally:
            referee.spectators -= 1
            self.count -= 1

    async def _stored_public_events(self, match_id: str) -> list[Any]:
        if self.store is None:
            raise LookupError(match_id)
        store = self.store

        def load() -> list[Any]:
            from arena.store import StoreError

            try:
                record = store.load_match(match_id)
            except StoreError:
                raise LookupError(match_id) from None
            if record.private:
                raise PermissionError(f"match {protocol.clip(match_id)} {PRIVATE}")
            return replay_record(record.config, record.actions).events_for(None, 0)[0]

        return await asyncio.to_thread(load)
