"""The arena's gRPC calls: one method per call of ``proto/wizard_arena/v1/arena.proto``,
each a few lines handing over to the room's other modules (the shape of grpc's
route_guide example). It is given what it uses when the server starts: the match host,
its roster and tokens, the spectators, the store, the Hello timeout and the log of
refused streams."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import grpc

from arena.referee import auth, listing
from arena.referee.seating import SeatingError
from arena.wire import calls, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import VARIANTS, ConfigError, GameConfig

if TYPE_CHECKING:
    from arena.referee.auth import Tokens
    from arena.referee.host import MatchHost
    from arena.referee.rate_limits import RefusalLog
    from arena.referee.seating import Roster
    from arena.referee.spectators import Spectators
    from arena.store import Store

log = logging.getLogger(__name__)


class ArenaServicer(pb_grpc.ArenaServicer):
    """The arena's calls; authentication happened before (:class:`arena.referee.auth.AuthInterceptor`)."""

    def __init__(self, host: MatchHost, roster: Roster, tokens: Tokens, spectators: Spectators,
                 store: Store | None, hello_timeout: float, refusals: RefusalLog) -> None:
        self._host = host
        self._roster = roster
        self._tokens = tokens
        self._spectators = spectators
        self._store = store
        self._hello_timeout = hello_timeout
        self._refusals = refusals

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        """One bot's stream, from Hello to disconnect (docs/protocol.md)."""
        roster = self._roster
        admitted = await auth.admit(context, self._tokens, self._hello_timeout, roster.streams_of,
                                    roster.streams_with_token, self._refusals)
        if admitted is None:   # gone before saying Hello
            return
        conn = roster.connect(admitted.name, admitted.hello, admitted.token)
        log.info("bot %s connected from %s (%s, version %s, %d slots)", conn.name, context.peer(), conn.conn_id,
                 protocol.clip(conn.version), conn.capacity)
        try:
            await conn.serve(context)
        finally:
            roster.disconnect(conn)
            log.info("bot %s disconnected (%s)", conn.name, conn.conn_id)
        if conn.ended is not None:
            await context.abort(*conn.ended)

    async def Spectate(self, request: pb.SpectateRequest, context: grpc.aio.ServicerContext) -> None:
        await self._spectators.serve(request, context)

    async def ListMatches(self, request: pb.ListMatchesRequest,
                          context: grpc.aio.ServicerContext) -> pb.ListMatchesResponse:
        await _check_variant(request.variant, context)
        matches = await listing.list_matches(self._host.running_matches(), self._host.finished_matches(), self._store,
                                             request.variant, min(request.limit or 50, listing.MAX_LIST_MATCHES))
        return pb.ListMatchesResponse(matches=matches)

    async def GetLeaderboard(self, request: pb.LeaderboardRequest,
                             context: grpc.aio.ServicerContext) -> pb.LeaderboardResponse:
        store = self._store
        if store is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "this arena has no database")
            raise AssertionError("abort returns by raising")   # for the type checker
        variant = request.variant or GameConfig.variant      # the engine's default variant
        await _check_variant(variant, context)
        return pb.LeaderboardResponse(rows=await listing.leaderboard(store, variant, request.min_games))

    async def ListBots(self, request: pb.ListBotsRequest, context: grpc.aio.ServicerContext) -> pb.ListBotsResponse:
        return pb.ListBotsResponse(bots=[
            pb.ConnectedBot(name=b.name, version=b.version, variants=b.variants, free_slots=b.free_slots,
                            connections=b.connections)
            for b in self._roster.info().values()
        ])

    async def RunMatch(self, request: pb.RunMatchRequest, context: grpc.aio.ServicerContext) -> pb.RunMatchResponse:
        try:
            record = await self._host.run_match(calls.match_spec(request))
        except (ConfigError, ValueError) as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except SeatingError as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        return calls.run_match_response(record, stored=await self._host.save(record))


async def _check_variant(variant: str, context: grpc.aio.ServicerContext) -> None:
    """Refuse a variant that is neither ``""`` nor one of the engine's."""
    if variant and variant not in VARIANTS:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                            f"unknown variant {protocol.clip(variant)}; accepted: {', '.join(VARIANTS)}")
