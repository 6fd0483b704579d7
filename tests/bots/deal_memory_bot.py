"""An SDK bot that plays legally (the first option) and remembers the deals it was dealt:
for every match, the first hand it holds, printed as a ``DEAL_MEMORY {json}`` line with
the match id and an id drawn when its process started. The arena copies its output to
the bot's log, so a test can tell which process played which match, and whether one
process saw two rotations of a deal (and so the cards a rival holds in the other)."""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
from typing import Any

from arena.sdk import Bot, run

PROCESS = f"{os.getpid()}-{secrets.token_hex(8)}"
PRINTING = threading.Lock()    # the SDK runs each match on a thread of its own
seen: set[str] = set()


class DealMemory(Bot):
    name = "deal-memory"

    def remember(self, obs: dict[str, Any]) -> None:
        match = self.match.match_id if self.match is not None else ""
        with PRINTING:
            if match in seen:
                return
            seen.add(match)
            line = {"process": PROCESS, "match": match, "hand": sorted(obs.get("hand") or [])}
            sys.stdout.write("DEAL_MEMORY " + json.dumps(line) + "\n")   # one write: a whole line
            sys.stdout.flush()

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        self.remember(obs)
        return options[0]

    def predict(self, obs: dict[str, Any]) -> Any:
        self.remember(obs)
        return None

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        self.remember(obs)
        return options[0]


if __name__ == "__main__":
    run(DealMemory)
