"""An SDK bot that thinks only over its plays: ``--play-ms MS`` (default 1600) of
``time.sleep`` before each play, every other decision answered at once (the first
option, no prediction). Its bids are quick and its plays slow, which the check must not
read as answers queued behind each other.

Its own option before the SDK's (--arena, --token, --max-matches, ...).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from arena.sdk import Bot, run

OPTIONS = argparse.ArgumentParser(add_help=False)
OPTIONS.add_argument("--play-ms", type=float, default=1600.0)
SETTINGS, REST = OPTIONS.parse_known_args(sys.argv[1:])


class SlowPlayer(Bot):
    name = "slow-player"
    version = "1.0"

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        return options[0]

    def trump(self, obs: dict[str, Any], options: list[str]) -> str:
        return options[0]

    def pay(self, obs: dict[str, Any], options: list[str]) -> str:
        return options[0]

    def predict(self, obs: dict[str, Any]) -> None:
        return None

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        time.sleep(SETTINGS.play_ms / 1000)
        return options[0]


if __name__ == "__main__":
    run(SlowPlayer, REST)
