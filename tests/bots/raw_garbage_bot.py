"""Says Hello, then answers every decision request at once with bytes that are no
protobuf message at all (``ff ff ff ff``): what a bot with a broken serialiser sends.
It never answers in a readable form."""

import asyncio

import grpc
from _common import hello, parse_args

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb


async def main() -> None:
    args = parse_args(__doc__)
    garbage = bytes.fromhex("ffffffff")
    channel = grpc.aio.insecure_channel(args.arena)
    # The Play method with the bot's side sent as raw bytes (no serialiser).
    call = channel.stream_stream("/wizard_arena.v1.Arena/Play", request_serializer=lambda raw: raw,
                                 response_deserializer=pb.ArenaMessage.FromString)(
        metadata=(("authorization", f"Bearer {args.token}"),))
    await call.write(hello(args).SerializeToString())
    while (message := await call.read()) is not grpc.aio.EOF:
        if message.WhichOneof("msg") == "request":
            await call.write(garbage)
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
