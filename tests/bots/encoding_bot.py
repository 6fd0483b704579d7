"""A bot that plays through arena.wire.encoding: it reads each request as the SDK does,
encodes the observation, picks a random legal action index from the mask (a Wizard
Extreme prediction one step at a time, to "done"), and writes every step's vector,
legal indices and chosen index to the report file.

Usage: python tests/bots/encoding_bot.py --arena HOST:PORT --token T --name N --report FILE [--max-matches K]
"""

import asyncio
import json
import random
from typing import Any

import grpc
from _common import open_stream, parse_args

from arena.wire import protocol
from arena.wire.encoding import Pending, decode, encode, legal_indices
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import Prediction


def answer(request: pb.DecisionRequest, rng: random.Random, report: Any) -> pb.BotMessage:
    kind = protocol.kind_from_wire(request.kind)
    obs = protocol.observation_from_wire(request)
    options = protocol.options_from_wire(kind, request.options)
    pending: Pending = ()
    while True:
        legal = legal_indices(obs, options, pending)
        index = rng.choice(legal)
        report.write(json.dumps({"match_id": request.match_id, "seat": request.seat, "vector": encode(obs, pending),
                                 "legal": legal, "index": index}) + "\n")
        step = decode(obs, index, pending)
        if isinstance(step, tuple):
            pending = step
            continue
        action = step.to_json() if isinstance(step, Prediction) else step
        return protocol.answer_message(request.request_id, kind, action)


async def main() -> None:
    args = parse_args(__doc__)
    rng = random.Random(args.seed)
    channel, call = open_stream(args)
    await call.write(pb.BotMessage(hello=pb.Hello(name=args.name, version="encoding-1",
                                                  max_matches=args.max_matches)))
    with open(args.report, "a", buffering=1) as report:
        while (message := await call.read()) is not grpc.aio.EOF:
            if message.WhichOneof("msg") == "request":
                await call.write(answer(message.request, rng, report))
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
