"""Answers --answers requests, then on the next one drops its connection (after thinking
--think-ms) and plays on honestly over a new one (same token), answering the re-sent
request.

By default it is away for --away-ms before reconnecting. With --overlap 1 it opens
the new stream (and is welcomed) *before* dropping the old one, as a bot does that
reconnects faster than the arena notices its old connection is gone. Everything
received goes to --report, tagged with the session (1 or 2).
"""

import asyncio
import random

import grpc
from _common import Report, hello, honest_answer, open_stream, parse_args


async def main() -> None:
    args = parse_args(__doc__, {"answers": 3, "away-ms": 300, "overlap": 0, "think-ms": 0})
    rng = random.Random(args.seed)
    report = Report(args.report)

    async def connect() -> tuple[grpc.aio.Channel, object]:
        channel, call = open_stream(args)
        await call.write(hello(args))
        return channel, call

    channel, call = await connect()
    requests = 0
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message, session=1)
        if message.WhichOneof("msg") == "request":
            requests += 1
            if requests > args.answers:
                await asyncio.sleep(args.think_ms / 1000)
                break
            await call.write(honest_answer(message.request, rng))
    if args.overlap:
        new_channel, new_call = await connect()
        report.write(await new_call.read(), session=2)      # the Welcome, before leaving
    call.cancel()
    await channel.close()
    if not args.overlap:
        await asyncio.sleep(args.away_ms / 1000)
        new_channel, new_call = await connect()
    while (message := await new_call.read()) is not grpc.aio.EOF:
        report.write(message, session=2)
        if message.WhichOneof("msg") == "request":
            await new_call.write(honest_answer(message.request, rng))
    await new_channel.close()


if __name__ == "__main__":
    asyncio.run(main())
