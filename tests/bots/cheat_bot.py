"""Answers its first --cheats requests with the request id of the *next* request
(with hidden bidding that is another seat's open request), then honestly.
"""

import asyncio
import random

from _common import honest, parse_args, play

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb


async def main() -> None:
    args = parse_args(__doc__, {"cheats": 1, "offset": 1})

    def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
        if message.WhichOneof("msg") != "request" or requests > args.cheats:
            return honest(message, requests, rng)
        request = message.request
        return [pb.BotMessage(action=pb.Action(request_id=request.request_id + args.offset,
                                               option=request.options[0]))]

    await play(args, respond)


if __name__ == "__main__":
    asyncio.run(main())
