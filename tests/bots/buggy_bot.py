"""A bot whose own code is wrong, played through the SDK: it bids "lots", plays "zz99",
and its trump choice raises. The SDK answers each decision with its first option and
marks it (``Action.bot_error``), so the arena records a ``bot_error`` fault for each.

Usage: python tests/bots/buggy_bot.py --arena HOST:PORT --token T [--name N]
"""

from arena.sdk import Bot, run


class Buggy(Bot):
    def bid(self, obs, options):  # type: ignore[no-untyped-def]
        return "lots"

    def play(self, obs, options):  # type: ignore[no-untyped-def]
        return "zz99"

    def trump(self, obs, options):  # type: ignore[no-untyped-def]
        raise KeyError("no trump idea")


if __name__ == "__main__":
    run(Buggy)
