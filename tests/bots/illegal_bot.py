"""Plays cards it does not hold (well-formed card codes that are not among the options).

Bids, trumps, predictions and payments are answered honestly, so every fault is "illegal".
"""

import asyncio
import random

from _common import honest, parse_args, play

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine.classic_cards import CODES as ALL_CARDS  # every card code of classic, in card order


def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
    request = message.request
    if message.WhichOneof("msg") != "request" or request.kind != pb.PLAY:
        return honest(message, requests, rng)
    not_held = [card for card in ALL_CARDS if card not in request.options]
    return [pb.BotMessage(action=pb.Action(request_id=request.request_id, option=rng.choice(not_held)))]


async def main() -> None:
    await play(parse_args(__doc__), respond)


if __name__ == "__main__":
    asyncio.run(main())
