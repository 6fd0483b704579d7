"""Answers every request honestly, then repeats answers: the same answer again at once,
the previous request's answer again with the next one (a repeat one decision later),
and every answer of a match again once the match has ended (a repeat after its end).
"""

import asyncio
import random

from _common import honest, parse_args, play

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb

sent: dict[str, list[pb.BotMessage]] = {}


def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
    which = message.WhichOneof("msg")
    if which == "request":
        answers = honest(message, requests, rng)
        earlier = sent.setdefault(message.request.match_id, [])
        repeats = answers * 2 + earlier[-1:]
        earlier.extend(answers)
        return repeats
    if which == "match_ended":
        return sent.pop(message.match_ended.match_id, [])
    return []


async def main() -> None:
    await play(parse_args(__doc__), respond)


if __name__ == "__main__":
    asyncio.run(main())
