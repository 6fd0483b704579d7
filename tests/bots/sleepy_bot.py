"""An SDK bot that takes --sleep-ms over every decision, then answers the first option.

Its own options, before the SDK's (--arena, --token, --max-matches, --processes, ...):

* ``--sleep-ms MS`` (default 600): how long each decision takes; ``time.sleep`` in a
  plain method, which the SDK runs on the match's thread;
* ``--async``: ``async def`` methods that ``await asyncio.sleep`` instead, which the SDK
  runs as tasks on its event loop;
* ``--shared``: one instance for every seat (the SDK then answers them one at a time);
* ``--report FILE``: one JSON line per decision: match, seat, kind, when the method
  began and ended (``time.monotonic()``, one clock for every process), the thread and the
  process that ran it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from typing import Any

from arena.sdk import Bot, run

OPTIONS = argparse.ArgumentParser(add_help=False)
OPTIONS.add_argument("--sleep-ms", type=float, default=600.0)
OPTIONS.add_argument("--async", dest="use_async", action="store_true")
OPTIONS.add_argument("--shared", action="store_true")
OPTIONS.add_argument("--report", default=None)
SETTINGS, REST = OPTIONS.parse_known_args(sys.argv[1:])
REPORT = open(SETTINGS.report, "a", buffering=1) if SETTINGS.report else None
LOCK = threading.Lock()


def note(bot: Bot, kind: str, began: float) -> None:
    if REPORT is None:
        return
    assert bot.match is not None
    entry = {"match": bot.match.match_id, "seat": bot.match.seat, "kind": kind, "began": began,
             "ended": time.monotonic(), "thread": threading.current_thread().name, "pid": os.getpid()}
    with LOCK:
        REPORT.write(json.dumps(entry) + "\n")


class Sleepy(Bot):
    name = "sleepy"
    version = "1.0"

    def decide(self, kind: str, options: list[Any]) -> Any:
        began = time.monotonic()
        time.sleep(SETTINGS.sleep_ms / 1000)
        note(self, kind, began)
        return options[0] if options else None

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        return self.decide("bid", options)

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        return self.decide("play", options)

    def trump(self, obs: dict[str, Any], options: list[str]) -> str:
        return self.decide("trump", options)

    def pay(self, obs: dict[str, Any], options: list[str]) -> str:
        return self.decide("pay", options)

    def predict(self, obs: dict[str, Any]) -> None:
        return self.decide("predict", [])


class AsyncSleepy(Bot):
    name = "sleepy"
    version = "1.0-async"

    async def decide(self, kind: str, options: list[Any]) -> Any:
        began = time.monotonic()
        await asyncio.sleep(SETTINGS.sleep_ms / 1000)
        note(self, kind, began)
        return options[0] if options else None

    async def bid(self, obs: dict[str, Any], options: list[int]) -> int:  # type: ignore[override]
        return await self.decide("bid", options)

    async def play(self, obs: dict[str, Any], options: list[str]) -> str:  # type: ignore[override]
        return await self.decide("play", options)

    async def trump(self, obs: dict[str, Any], options: list[str]) -> str:  # type: ignore[override]
        return await self.decide("trump", options)

    async def pay(self, obs: dict[str, Any], options: list[str]) -> str:  # type: ignore[override]
        return await self.decide("pay", options)

    async def predict(self, obs: dict[str, Any]) -> None:  # type: ignore[override]
        return await self.decide("predict", [])


if __name__ == "__main__":
    chosen: type[Bot] = AsyncSleepy if SETTINGS.use_async else Sleepy
    run(chosen() if SETTINGS.shared else chosen, REST)
