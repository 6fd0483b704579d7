"""Plays cards it does not hold (well-formed card codes that are not among the options).

Bids, trumps, predictions and payments are answered honestly, so every fault is "illegal".
"""

import asyncio
import random

import grpc

from _common import Report, hello, honest_answer, open_stream, parse_args
from arena.pb.wizard_arena.v1 import arena_pb2 as pb

ALL_CARDS = [f"{suit}{rank}" for suit in "bgry" for rank in range(1, 14)] + [f"{c}{i}" for c in "WJ" for i in (1, 2, 3, 4)]


async def main() -> None:
    args = parse_args(__doc__)
    rng = random.Random(args.seed)
    report = Report(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
        if message.WhichOneof("msg") != "request":
            continue
        request = message.request
        if request.kind == pb.PLAY:
            not_held = [card for card in ALL_CARDS if card not in request.options]
            await call.write(pb.BotMessage(action=pb.Action(request_id=request.request_id,
                                                             option=rng.choice(not_held))))
        else:
            await call.write(honest_answer(request, rng))
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
