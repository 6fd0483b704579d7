"""What every test bot shares: the command line, connecting, and an honest answer.

The test bots are raw gRPC clients (no SDK) so the referee is tested against exactly
what arrives on the wire. Each script is a separate process started by the tests.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc


def parse_args(description: str, extra: dict[str, Any] | None = None) -> argparse.Namespace:
    """--arena HOST:PORT --token T --name N [--max-matches K] [--report FILE] plus ``extra`` int options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--arena", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--max-matches", type=int, default=1)
    parser.add_argument("--variants", default="", help="comma separated; empty: both")
    parser.add_argument("--report", default=None, help="append one JSON line per received message")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--events-only", action="store_true", help="ask for requests without the observation")
    for option, default in (extra or {}).items():
        parser.add_argument(f"--{option}", type=type(default), default=default)
    return parser.parse_args()


def open_stream(args: argparse.Namespace) -> tuple[grpc.aio.Channel, Any]:
    """A channel and a started Play call carrying the bot's token."""
    channel = grpc.aio.insecure_channel(args.arena)
    call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {args.token}"),))
    return channel, call


def hello(args: argparse.Namespace) -> pb.BotMessage:
    variants = [v for v in args.variants.split(",") if v]
    return pb.BotMessage(hello=pb.Hello(name=args.name, version="test-1", variants=variants,
                                        max_matches=args.max_matches, events_only=args.events_only))


def honest_answer(request: pb.DecisionRequest, rng: random.Random) -> pb.BotMessage:
    """A random legal answer; for a prediction, no destroyer and no tokens (always legal)."""
    if request.kind == pb.PREDICT:
        return pb.BotMessage(action=pb.Action(request_id=request.request_id, prediction=pb.Prediction()))
    return pb.BotMessage(action=pb.Action(request_id=request.request_id, option=rng.choice(list(request.options))))


class Report:
    """Appends what the bot received to a JSON-lines file the test reads afterwards."""

    def __init__(self, path: str | None) -> None:
        self._file = open(path, "a", buffering=1) if path else None

    def write(self, message: pb.ArenaMessage, **extra: Any) -> None:
        if self._file is None:
            return
        which = message.WhichOneof("msg")
        entry: dict[str, Any] = {"msg": which, **extra}
        body = getattr(message, which)
        if which == "request":
            entry.update(match_id=body.match_id, seat=body.seat, request_id=body.request_id, kind=body.kind,
                         options=list(body.options),
                         observation=json.loads(body.observation_json) if body.observation_json else None,
                         events=[json.loads(e) for e in body.events_json], deadline_ms=body.deadline_ms,
                         time_bank_ms=body.time_bank_ms)
        elif which == "welcome":
            entry.update(events_only=body.events_only)
        elif which == "match_started":
            entry.update(match_id=body.match_id, seat=body.seat, bot_names=list(body.bot_names))
        elif which == "fault":
            entry.update(match_id=body.match_id, request_id=body.request_id, kind=body.kind,
                         faults=body.faults, forfeited=body.forfeited, message=body.message)
        elif which == "match_ended":
            entry.update(match_id=body.match_id, seat=body.seat, places=list(body.places),
                         forfeited=body.forfeited, reason=body.reason)
        self._file.write(json.dumps(entry) + "\n")


Respond = Callable[[pb.ArenaMessage, int, random.Random], Sequence[pb.BotMessage]]


async def play(args: argparse.Namespace, respond: Respond) -> None:
    """The loop every simple test bot runs: Hello, then for each message from the arena
    record it and write what ``respond(message, requests_so_far, rng)`` returns.

    ``requests_so_far`` counts the DecisionRequests received, this one included.
    """
    rng = random.Random(args.seed)
    report = Report(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    requests = 0
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
        if message.WhichOneof("msg") == "request":
            requests += 1
        for answer in respond(message, requests, rng):
            await call.write(answer)
    await channel.close()


def honest(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
    """The honest bot's rule: a random legal answer to every request."""
    return [honest_answer(message.request, rng)] if message.WhichOneof("msg") == "request" else []
