"""Answers its first --cheats requests with the request id of the *next* request
(with hidden bidding that is another seat's open request), then honestly.
"""

import asyncio
import random

import grpc

from _common import Report, hello, honest_answer, open_stream, parse_args
from arena.pb.wizard_arena.v1 import arena_pb2 as pb


async def main() -> None:
    args = parse_args(__doc__, {"cheats": 1, "offset": 1})
    rng = random.Random(args.seed)
    report = Report(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    requests = 0
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
        if message.WhichOneof("msg") != "request":
            continue
        requests += 1
        request = message.request
        if requests <= args.cheats:
            await call.write(pb.BotMessage(action=pb.Action(request_id=request.request_id + args.offset,
                                                             option=request.options[0])))
        else:
            await call.write(honest_answer(request, rng))
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
