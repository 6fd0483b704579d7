"""Says Hello again before its first answer, then answers every request honestly."""

import asyncio
import random

from _common import hello, honest, parse_args, play

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb


async def main() -> None:
    args = parse_args(__doc__)

    def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
        answers = honest(message, requests, rng)
        if message.WhichOneof("msg") == "request" and requests == 1:
            return [hello(args), *answers]
        return answers

    await play(args, respond)


if __name__ == "__main__":
    asyncio.run(main())
