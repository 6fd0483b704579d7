"""The referee's own work per decision: matches played in this process through
:class:`arena.referee.match.Referee`, with links that answer at once (no gRPC, no
other process), so that only the match loop's Python is left: the engine's decision
and observation, the request message and its JSON, the events, reading the answer,
the request's future and timer, the event loop's scheduling.

``arena bench referee-work`` plays ``matches`` 4-player classic games at once,
``repeats`` times, and prints the CPU per decision of each repeat and their minimum,
with full observations and (``events_only``) without. On a shared machine whose
speed moves between runs, count instructions instead of seconds: under valgrind's
callgrind (``valgrind --tool=callgrind arena bench referee-work --repeats 1`` and
``--repeats 2``) the difference of the two totals, over one repeat's decisions, is
the instructions of one decision, the same on every run of the same code.

    >>> figures = bench_referee_work(matches=2, repeats=1)
    >>> figures["decisions"] > 0 and figures["cpu_us_per_decision"] > 0
    True
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from arena.records import MatchSpec
from arena.referee.limits import Limits
from arena.referee.match import OpenRequest, Referee
from arena.referee.server import tune_gc
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import GameConfig


class InstantLink:
    """A bot that answers every request with its first option (an empty prediction) on
    the event loop's next turn, as a connection's reader hands over an answer."""

    def __init__(self, events_only: bool) -> None:
        self.name = "instant"
        self.version = "bench"
        self.events_only = events_only
        self._open: dict[int, OpenRequest] = {}

    def send(self, message: pb.ArenaMessage) -> None:
        if message.WhichOneof("msg") == "request":
            asyncio.get_running_loop().call_soon(self._answer, message.request)

    def _answer(self, request: pb.DecisionRequest) -> None:
        if request.kind == pb.PREDICT:
            action = pb.Action(request_id=request.request_id, prediction=pb.Prediction())
        else:
            action = pb.Action(request_id=request.request_id, option=request.options[0])
        waiting = self._open.get(request.request_id)
        if waiting is not None:
            waiting.deliver(pb.BotMessage(action=action), time.monotonic())

    def open_request(self, request: OpenRequest) -> None:
        self._open[request.request_id] = request

    def close_request(self, request: OpenRequest) -> None:
        self._open.pop(request.request_id, None)

    def join(self, referee: Referee, seat: int) -> None:
        pass

    def leave(self, referee: Referee, seat: int) -> None:
        pass


async def _play(matches: int, repeats: int, events_only: bool) -> dict[str, Any]:
    ids = itertools.count(1)
    limits = Limits(move_time=1.0, time_bank=0.0, max_faults=3, grace=1.0)
    per_repeat: list[float] = []
    decisions = 0
    for repeat in range(repeats):
        referees = [Referee(MatchSpec(config=GameConfig(variant="classic", players=4, seed=100 + i),
                                      bots=["a", "b", "c", "d"], match_id=f"m{repeat}-{i}"),
                            [InstantLink(events_only) for _ in range(4)], limits=limits,
                            next_request_id=lambda: next(ids))
                    for i in range(matches)]
        started = time.process_time()
        records = await asyncio.gather(*(referee.run() for referee in referees))
        cpu = time.process_time() - started
        decisions = sum(len(record.actions) for record in records)
        per_repeat.append(cpu / decisions * 1e6)
    return {"matches": matches, "events_only": int(events_only), "decisions": decisions,
            "cpu_us_per_decision": min(per_repeat), "cpu_us_per_decision_by_repeat": [round(x, 1) for x in per_repeat]}


def bench_referee_work(matches: int = 64, repeats: int = 3, events_only: bool = False) -> dict[str, Any]:
    """``matches`` games at once, ``repeats`` times (the same games each time); the CPU
    per decision of each repeat (µs) and their minimum; ``decisions`` is one repeat's."""
    tune_gc()   # the collector settings arena serve runs with
    return asyncio.run(_play(matches, repeats, events_only))
