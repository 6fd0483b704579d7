"""What a seat is sent with each request, checked against the engine at every request:
the events since its last request (the referee encodes public events once for every
seat and spectator) and its own observation. In-process: a link that answers at once,
no gRPC."""

from __future__ import annotations

import asyncio
import itertools
import random
import time

import pytest

from arena.records import MatchSpec
from arena.referee.limits import Limits
from arena.referee.match import OpenRequest, Referee
from arena.wire import json_codec, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import GameConfig


class CheckingLink:
    """Answers every request at once with a random option, after checking what came with it."""

    def __init__(self, name: str, rng: random.Random, events_only: bool = False) -> None:
        self.name = name
        self.version = "test"
        self.events_only = events_only
        self.rng = rng
        self.referee: Referee | None = None
        self.received: dict[int, list[str]] = {}   # seat -> every event JSON it was sent
        self.requests = 0
        self._open: dict[int, OpenRequest] = {}

    def send(self, message: pb.ArenaMessage) -> None:
        if message.WhichOneof("msg") != "request":
            return
        request = message.request
        referee = self.referee
        assert referee is not None
        game = referee.game
        seat = request.seat
        sent = self.received.setdefault(seat, [])
        sent.extend(request.events_json)
        # Everything the seat may see so far, exactly, in order; and its observation now.
        assert sent == protocol.events_json(game.events_for(seat, 0)[0])
        assert request.observation_json == ("" if self.events_only else json_codec.dumps(game.observe(seat)))
        self.requests += 1
        if request.kind == pb.PREDICT:
            action = pb.Action(request_id=request.request_id, prediction=pb.Prediction())
        else:
            action = pb.Action(request_id=request.request_id, option=self.rng.choice(list(request.options)))
        answer = pb.BotMessage(action=action)
        asyncio.get_running_loop().call_soon(self._open[request.request_id].deliver, answer, time.monotonic())

    def open_request(self, request: OpenRequest) -> None:
        self._open[request.request_id] = request

    def close_request(self, request: OpenRequest) -> None:
        self._open.pop(request.request_id, None)

    def join(self, referee: Referee, seat: int) -> None:
        self.referee = referee

    def leave(self, referee: Referee, seat: int) -> None:
        pass


@pytest.mark.parametrize("config", [
    GameConfig(variant="classic", players=4, seed=3, rounds=4),
    GameConfig(variant="classic", players=3, seed=8, rounds=3, bidding="hidden"),
    GameConfig(variant="classic", players=5, seed=4, rounds=5, bidding="secret"),
    GameConfig(variant="extreme", players=3, seed=2, rounds=2),
    # Public events are encoded once for the whole process: this match finds most of
    # its plays and bids already encoded by the first one.
    GameConfig(variant="classic", players=4, seed=11, rounds=4),
], ids=["classic", "classic-hidden", "classic-secret", "extreme", "classic-again"])
def test_each_request_carries_exactly_the_seats_new_events(config: GameConfig) -> None:
    rng = random.Random(config.seed)
    bots = [f"b{i}" for i in range(config.players)]
    links = [CheckingLink(name, rng, events_only=i == 1) for i, name in enumerate(bots)]   # one asks for events only
    ids = itertools.count(1)
    referee = Referee(MatchSpec(config=config, bots=bots, match_id="m1"), list(links),
                      limits=Limits(move_time=1.0, time_bank=0.0, max_faults=3, grace=1.0),
                      next_request_id=lambda: next(ids))
    spectator_cursor = 0
    public: list[str] = []

    async def play() -> None:
        nonlocal spectator_cursor
        task = asyncio.ensure_future(referee.run())
        while not task.done():   # a spectator reading along, as Spectators.batches does
            events, spectator_cursor = referee.public_json(spectator_cursor)
            public.extend(events)
            await asyncio.sleep(0)
        record = task.result()
        assert record.status == "completed" and record.faults == []

    asyncio.run(play())
    assert sum(link.requests for link in links) == len(referee.game.actions)
    events, _ = referee.public_json(spectator_cursor)
    assert public + events == protocol.events_json(referee.game.events_for(None, 0)[0])
