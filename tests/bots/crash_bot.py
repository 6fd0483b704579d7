"""An SDK bot that plays the first legal option and exits (code 1, mid-match) after
playing its ``CRASH_AFTER``-th card: a bot that simply dies during a tournament."""

from __future__ import annotations

import os
from typing import Any

from arena.sdk import Bot, run

CRASH_AFTER = 40
played = 0


class Crash(Bot):
    name = "crash"

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        global played
        played += 1
        if played >= CRASH_AFTER:
            print(f"crash bot: exiting after card {played}", flush=True)
            os._exit(1)
        return options[0]


if __name__ == "__main__":
    run(Crash)
