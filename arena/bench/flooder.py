"""A flooding bot, for ``arena bench flood`` and the tests: it plays legally (a random
legal answer, as ``sample_bots.random_bot`` does) while ``--flood-threads`` threads (16)
call the referee it was given as fast as it answers: ``ListMatches``,
``GetLeaderboard``, ``Spectate`` (a running match, its first batch) and ``Play`` streams
with a made-up token, in turn, each thread on a connection of its own.

    python -m arena.bench.flooder --arena unix:/run/arena/referee.sock --token T [--flood-threads 16]

Every 2 s, and when it stops, it prints what its calls got as one ``FLOOD {json}`` line
(the calls by status code) on its output, which the arena keeps in the bot's log.
"""

from __future__ import annotations

import collections
import json
import secrets
import sys
import threading
import time
from typing import Any

import grpc

from arena.sdk import Bot, run
from arena.sdk.cli import parse_args
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

THREADS = 16
REPORT_SECONDS = 2.0
CALL_TIMEOUT = 5.0


class FloodingBot(Bot):
    """Plays as the random sample bot does; the flood runs beside it."""

    name = "flooder"
    version = "1.0"

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        return self.rng.choice(options)

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        return self.rng.choice(options)

    trump = pay = play

    def predict(self, obs: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": {}}


class Flood:
    """The flooding threads and their tally (calls by ``call status``)."""

    def __init__(self, target: str, threads: int) -> None:
        self.target = target
        self.threads = threads
        self.tally: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self.match_id = "none"        # a running match, once a ListMatches names one

    def start(self) -> None:
        for index in range(self.threads):
            threading.Thread(target=self._hammer, args=(index,), name=f"flood-{index}", daemon=True).start()
        threading.Thread(target=self._report, name="flood-report", daemon=True).start()

    def _count(self, call: str, code: grpc.StatusCode) -> None:
        with self._lock:
            self.tally[f"{call} {code.name}"] += 1

    def _hammer(self, index: int) -> None:
        channel = grpc.insecure_channel(self.target, options=[("grpc.use_local_subchannel_pool", 1)])
        stub = pb_grpc.ArenaStub(channel)
        calls = (self._list, self._leaderboard, self._spectate, self._bad_play)
        turn = index
        while True:
            call = calls[turn % len(calls)]
            turn += 1
            try:
                call(stub)
                self._count(call.__name__.lstrip("_"), grpc.StatusCode.OK)
            except grpc.RpcError as error:
                code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
                self._count(call.__name__.lstrip("_"), code)

    def _list(self, stub: pb_grpc.ArenaStub) -> None:
        listed = stub.ListMatches(pb.ListMatchesRequest(), timeout=CALL_TIMEOUT)
        running = [m.match_id for m in listed.matches if m.status == "running"]
        if running:
            self.match_id = running[0]

    def _leaderboard(self, stub: pb_grpc.ArenaStub) -> None:
        stub.GetLeaderboard(pb.LeaderboardRequest(), timeout=CALL_TIMEOUT)

    def _spectate(self, stub: pb_grpc.ArenaStub) -> None:
        call = stub.Spectate(pb.SpectateRequest(match_id=self.match_id), timeout=CALL_TIMEOUT)
        try:
            next(call, None)
        finally:
            call.cancel()

    def _bad_play(self, stub: pb_grpc.ArenaStub) -> None:
        hello = pb.BotMessage(hello=pb.Hello(name=FloodingBot.name))
        call = stub.Play(iter([hello]), metadata=(("authorization", f"Bearer {secrets.token_hex(24)}"),),
                         timeout=CALL_TIMEOUT)
        for _ in call:
            pass

    def _report(self) -> None:
        while True:
            time.sleep(REPORT_SECONDS)
            self.report()

    def report(self) -> None:
        with self._lock:
            line = "FLOOD " + json.dumps(dict(sorted(self.tally.items())))
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    """Start the flood on the address the bot was given, then play (the SDK's ``run``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    threads = THREADS
    if "--flood-threads" in argv:
        at = argv.index("--flood-threads")
        threads = int(argv[at + 1])
        del argv[at:at + 2]
    flood = Flood(parse_args(argv, default_name=FloodingBot.name).arena, threads)
    flood.start()
    try:
        run(FloodingBot, argv)
    finally:
        flood.report()


if __name__ == "__main__":
    main()
