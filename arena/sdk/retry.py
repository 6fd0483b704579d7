"""The retry policy: how one connection ended, which ends are worth another attempt,
and how long to wait before it.

:class:`_SessionEnd` reads grpc's status of a finished connection (:data:`FATAL_CODES`
are the refusals retrying cannot fix); :class:`_Outage` is the time without a connection,
with its backoff (about 0.1 s, doubling up to :data:`RETRY_MAX_DELAY`, jittered) until
:data:`RETRY_FOR` runs out. The client (``arena.sdk.client``) applies it; the numbers are
here, in one place, as the package docstring and docs/protocol.md section 10 describe them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import grpc

# The retry policy (see the package docstring, arena.sdk, and docs/protocol.md section 10).
RETRY_FIRST_DELAY = 0.1   # s: quick, so a bot that lost its connection mid-match is back
                          # well inside the arena's grace period (5 s by default)
RETRY_MAX_DELAY = 5.0     # s: the backoff doubles up to this
RETRY_FOR = 60.0          # s without a connection before the bot gives up (exit 1)
# How long one attempt may take to get its Welcome. grpc alone waits 20 s for a
# connection to a host that never answers; the arena answers a Hello at once.
CONNECT_TIMEOUT = 10.0

# Status codes that mean "the arena will not take this bot": retrying cannot help.
FATAL_CODES = frozenset({
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
})

# What to check when the arena refuses the bot, by status code.
_REFUSAL_HINTS = {
    grpc.StatusCode.UNAUTHENTICATED: " (check --token or ARENA_TOKEN: `arena bot register NAME` prints the token)",
    grpc.StatusCode.PERMISSION_DENIED: " (check --name or ARENA_BOT_NAME, or leave it out: the token names the bot)",
}


@dataclass
class _SessionEnd:
    """How one connection ended."""

    code: grpc.StatusCode | None  # None: the connection was never made / broke locally
    details: str
    welcomed: bool

    def status_lost(self) -> bool:
        """True when grpc reported INTERNAL "Internal error from Core": a write of ours
        crossed the end of the call and the arena's real status (perhaps a refusal) was
        replaced (docs/protocol.md, section 10)."""
        return self.code is grpc.StatusCode.INTERNAL and "Internal error from Core" in self.details

    def reason(self) -> str:
        """The failure in a few words: grpc's own details are long and mostly the same
        for every cause ("failed to connect to all addresses; last error: ...")."""
        details = self.details
        for clue, meaning in _FAILURE_CLUES:
            if clue in details:
                return meaning
        if self.code is None:   # ended on our side (a timeout): the details say it all
            return details or "no connection"
        return f"{self.code.name}: {details[:200]}" if details else self.code.name


# How many times in a row an attempt whose answer grpc lost is repeated at once.
_ASK_AGAIN = 3

# Substrings of grpc's status details, and what they mean to a bot author.
_FAILURE_CLUES: tuple[tuple[str, str], ...] = (
    ("Connection refused", "connection refused"),
    # A Unix socket: no file at the path (the arena is not up yet, or another path), or
    # one this user may not open.
    ("No such file or directory", "no such socket"),
    ("Permission denied", "permission denied"),
    ("errors resolving", "unknown host"),
    ("DNS resolution failed", "unknown host"),
    ("Connection reset", "connection reset"),
    ("Socket closed", "connection closed"),
    ("Connection timed out", "connection timed out"),
    ("Network is unreachable", "network unreachable"),
    ("No route to host", "no route to host"),
)


@dataclass
class _Outage:
    """The time without a connection: when it began, how often we tried, the next delay."""

    since: float          # time.monotonic() when the outage began
    lost: bool            # a connection was lost (else: none was made yet)
    attempts: int         # failed attempts to connect so far
    delay: float = RETRY_FIRST_DELAY

    def next_wait(self, jitter: random.Random) -> float:
        """The wait before the next attempt: the delay times 0.5-1.5, capped (jitter
        spreads the reconnects of many bots after an arena restart); then double it."""
        wait = min(self.delay * (0.5 + jitter.random()), RETRY_MAX_DELAY)
        self.delay = min(self.delay * 2, RETRY_MAX_DELAY)
        return wait
