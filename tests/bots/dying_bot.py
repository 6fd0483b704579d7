"""Answers --answers requests honestly, then dies on the next one (the process exits at once)."""

import asyncio
import os
import random

import grpc

from _common import Report, hello, honest_answer, open_stream, parse_args


async def main() -> None:
    args = parse_args(__doc__, {"answers": 3})
    rng = random.Random(args.seed)
    report = Report(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    requests = 0
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
        if message.WhichOneof("msg") == "request":
            requests += 1
            if requests > args.answers:
                os._exit(3)   # no goodbye: like a crash
            await call.write(honest_answer(message.request, rng))


if __name__ == "__main__":
    asyncio.run(main())
