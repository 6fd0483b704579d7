"""A bot whose text tries to act on the organiser's terminal, played through the SDK.

Its ``Hello.version`` and its class name carry escape sequences (an OSC window title, a
screen clear, a C1 CSI, a bidi override), and every bid raises an exception whose message
carries more, so the SDK answers with its first option and sends that message as
``Action.bot_error``. It plays legally otherwise. The arena must keep and show none of
these characters (tests/security/test_bot_text.py).

Usage: python tests/bots/escape_bot.py --arena HOST:PORT --token T [--name N]
"""

from arena.sdk import Bot, run

TITLE = "\x1b]0;pwned\x07"           # OSC: set the window title, ended by BEL
CLEAR = "\x1b[2J\x1b[H"              # CSI: clear the screen, cursor home
C1 = "\x9b31m\x9d0;c1\x9c"           # the same in 8-bit C1 controls
BIDI = "\u202eevil\u202c"            # right-to-left override


class Escape(Bot):
    name = f"esc{TITLE}{CLEAR}"
    version = f"1.0{TITLE}{CLEAR}{C1}{BIDI}\x1bP+q\x1b\\\x00\x7f"

    def bid(self, obs, options):  # type: ignore[no-untyped-def]
        raise ValueError(f"{TITLE}bid{CLEAR}{C1}{BIDI}\x07\x08")

    def play(self, obs, options):  # type: ignore[no-untyped-def]
        return self.rng.choice(options)

    def trump(self, obs, options):  # type: ignore[no-untyped-def]
        return options[0]


if __name__ == "__main__":
    run(Escape)
