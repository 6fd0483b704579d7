"""An honest bot: answers every request at once with a random legal option.

Usage: python tests/bots/random_bot.py --arena HOST:PORT --token T --name N [--max-matches K]
"""

import asyncio

from _common import honest, parse_args, play


async def main() -> None:
    await play(parse_args(__doc__), honest)


if __name__ == "__main__":
    asyncio.run(main())
