"""Answers --answers requests, then on the next one drops its connection, waits
--away-ms, reconnects with the same token and plays on honestly (answering the
re-sent request). Everything received goes to --report, tagged with the session.
"""

import asyncio
import random

import grpc

from _common import Report, hello, honest_answer, open_stream, parse_args


async def main() -> None:
    args = parse_args(__doc__, {"answers": 3, "away-ms": 300})
    rng = random.Random(args.seed)
    report = Report(args.report)
    requests = 0
    for session in (1, 2):
        channel, call = open_stream(args)
        await call.write(hello(args))
        while (message := await call.read()) is not grpc.aio.EOF:
            report.write(message, session=session)
            if message.WhichOneof("msg") == "request":
                requests += 1
                if session == 1 and requests > args.answers:
                    break
                await call.write(honest_answer(message.request, rng))
        call.cancel()
        await channel.close()
        if session == 1:
            await asyncio.sleep(args.away_ms / 1000)


if __name__ == "__main__":
    asyncio.run(main())
