"""An honest bot over TLS: answers every request at once with a random legal option,
on a channel that trusts the CA in --tls-ca (and presents --tls-cert/--tls-key, for an
arena that asks for a client certificate).

Usage: python tests/bots/tls_bot.py --arena HOST:PORT --token T --name N --tls-ca FILE
                                    [--tls-cert FILE --tls-key FILE] [--max-matches K]
"""

import asyncio
import random
import sys

import grpc
from _common import hello, honest_answer, parse_args

from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc


def tls_args() -> tuple[str, str | None, str | None]:
    """--tls-ca, --tls-cert and --tls-key, taken off sys.argv before _common's parser sees it."""
    found: dict[str, str | None] = {"--tls-ca": None, "--tls-cert": None, "--tls-key": None}
    rest = [sys.argv[0]]
    args = iter(sys.argv[1:])
    for arg in args:
        if arg in found:
            found[arg] = next(args)
        else:
            rest.append(arg)
    sys.argv = rest
    ca = found["--tls-ca"]
    if ca is None:
        sys.exit("tls_bot.py needs --tls-ca FILE")
    return ca, found["--tls-cert"], found["--tls-key"]


async def main() -> None:
    ca, cert, key = tls_args()
    args = parse_args(__doc__)

    def read(path: str | None) -> bytes | None:
        return open(path, "rb").read() if path else None

    credentials = grpc.ssl_channel_credentials(read(ca), read(key), read(cert))
    rng = random.Random(args.seed)
    async with grpc.aio.secure_channel(args.arena, credentials) as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {args.token}"),))
        await call.write(hello(args))
        while (message := await call.read()) is not grpc.aio.EOF:
            if message.WhichOneof("msg") == "request":
                await call.write(honest_answer(message.request, rng))


if __name__ == "__main__":
    asyncio.run(main())
