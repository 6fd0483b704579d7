"""Connects, says Hello, and never answers anything."""

import asyncio

import grpc
from _common import Report, hello, open_stream, parse_args


async def main() -> None:
    args = parse_args(__doc__)
    report = Report(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    while (message := await call.read()) is not grpc.aio.EOF:
        report.write(message)
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
