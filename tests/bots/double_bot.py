"""Answers every request honestly, then sends the very same answer a second time."""

import asyncio
import random

from _common import honest, parse_args, play
from arena.pb.wizard_arena.v1 import arena_pb2 as pb


def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
    return honest(message, requests, rng) * 2   # the same answer twice


async def main() -> None:
    await play(parse_args(__doc__), respond)


if __name__ == "__main__":
    asyncio.run(main())
