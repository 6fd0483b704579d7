"""Answers its first --slow requests only after sleeping --sleep-ms, then honestly at once.
With --hold FILE, no request after the first --hold-after is answered while FILE exists:
a test holds a match at a decision until it is ready for what comes next (with a
--move-time long enough to wait).

Every request is handled in its own task, so a sleeping answer does not delay the
next one. The late answers are still sent: the referee must discard them without
counting a second fault.
"""

import asyncio
import os
import random

import grpc
from _common import Report, hello, honest_answer, open_stream, parse_args

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb


async def main() -> None:
    args = parse_args(__doc__, {"slow": 2, "sleep-ms": 600, "hold": "", "hold-after": 0})
    rng = random.Random(args.seed)
    report = Report(args.report)
    channel, call = open_stream(args)
    write_lock = asyncio.Lock()   # grpc allows one write at a time per call

    async def answer(request: pb.DecisionRequest, delay: float, held: bool) -> None:
        while held and os.path.exists(args.hold):
            await asyncio.sleep(0.02)
        await asyncio.sleep(delay)
        async with write_lock:
            await call.write(honest_answer(request, rng))

    await call.write(hello(args))
    requests = 0
    tasks = set()
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
        if message.WhichOneof("msg") == "request":
            requests += 1
            delay = args.sleep_ms / 1000 if requests <= args.slow else 0.0
            held = bool(args.hold) and requests > args.hold_after
            task = asyncio.create_task(answer(message.request, delay, held))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
