"""Answers every request honestly, then sends the very same answer a second time."""

import asyncio
import random

import grpc

from _common import Report, hello, honest_answer, open_stream, parse_args


async def main() -> None:
    args = parse_args(__doc__)
    rng = random.Random(args.seed)
    report = Report(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
        if message.WhichOneof("msg") == "request":
            answer = honest_answer(message.request, rng)
            await call.write(answer)
            await call.write(answer)
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
