"""Answers its requests, in turn, with: an unparseable option, a wrong request id, a
prediction where an option is due, and then honestly again (after the referee made it
forfeit this bot gets no more requests anyway). With --quit-on-forfeit 1 it exits as
soon as a Fault says it forfeited.
"""

import asyncio
import os
import random

from _common import honest, parse_args, play

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb


def bad_answer(request: pb.DecisionRequest, n: int) -> pb.BotMessage:
    if n % 3 == 1:
        return pb.BotMessage(action=pb.Action(request_id=request.request_id, option="banana!"))
    if n % 3 == 2:
        return pb.BotMessage(action=pb.Action(request_id=request.request_id + 10**9, option=request.options[0]))
    return pb.BotMessage(action=pb.Action(request_id=request.request_id, prediction=pb.Prediction(destroyer=True)))


async def main() -> None:
    args = parse_args(__doc__, {"bad": 3, "quit-on-forfeit": 0})

    def respond(message: pb.ArenaMessage, requests: int, rng: random.Random) -> list[pb.BotMessage]:
        which = message.WhichOneof("msg")
        if which == "fault" and message.fault.forfeited and args.quit_on_forfeit:
            os._exit(4)
        if which == "request" and requests <= args.bad:
            return [bad_answer(message.request, requests)]
        return honest(message, requests, rng)

    await play(args, respond)


if __name__ == "__main__":
    asyncio.run(main())
