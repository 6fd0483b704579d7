"""A spy: plays honestly (random legal answers) and records everything it receives.

Every message from the arena goes, complete, to the --report file as one JSON line:
``{"dir": "in", "at": <unix time>, "msg": <oneof name>, "message": <MessageToDict>, "raw": <hex>}``
(``message`` with proto field names and default values included, ``raw`` the serialized
bytes, so nothing is lost). Every answer it sends is a line with ``"dir": "out"``.
The spy tests (tests/security/spy_checks.py) read the file afterwards and look for what the
spy could abuse.

Usage: python tests/bots/spy_bot.py --arena HOST:PORT --token T --name N [--max-matches K] --report FILE
"""

import asyncio
import json
import random
import sys
import time
from typing import Any

import grpc
from _common import hello, honest_answer, open_stream, parse_args
from google.protobuf.json_format import MessageToDict


def as_dict(message: Any) -> dict[str, Any]:
    """The message as a dict, default values included (seat 0, empty lists), so that
    every field the arena set, even to zero, is in the report."""
    try:
        return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    except TypeError:  # protobuf before 5.26
        return MessageToDict(message, preserving_proto_field_name=True, including_default_value_fields=True)


class Recorder:
    def __init__(self, path: str | None) -> None:
        self._file = open(path, "a", buffering=1) if path else None

    def write(self, direction: str, message: Any, which: str | None) -> None:
        if self._file is None:
            return
        entry = {"dir": direction, "at": time.time(), "msg": which, "message": as_dict(message),
                 "raw": message.SerializeToString().hex()}
        self._file.write(json.dumps(entry) + "\n")


async def main() -> None:
    args = parse_args(__doc__)
    rng = random.Random(args.seed)
    recorder = Recorder(args.report)
    channel, call = open_stream(args)
    await call.write(hello(args))
    try:
        while (message := await call.read()) is not grpc.aio.EOF:
            which = message.WhichOneof("msg")
            recorder.write("in", message, which)
            if which == "request":
                answer = honest_answer(message.request, rng)
                recorder.write("out", answer, answer.WhichOneof("msg"))
                await call.write(answer)
    except grpc.aio.AioRpcError as error:   # the arena went away: the report is complete
        print(f"spy {args.name}: stream ended: {error.code()}", file=sys.stderr)
    await channel.close()


if __name__ == "__main__":
    asyncio.run(main())
