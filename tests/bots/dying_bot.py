"""Answers --answers requests honestly, then dies on the next one (the process exits at once)."""

import asyncio
import os
import random

from _common import honest, parse_args, play

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb


async def main() -> None:
    args = parse_args(__doc__, {"answers": 3})

    def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
        if message.WhichOneof("msg") == "request" and requests > args.answers:
            os._exit(3)   # no goodbye: like a crash
        return honest(message, requests, rng)

    await play(args, respond)


if __name__ == "__main__":
    asyncio.run(main())
