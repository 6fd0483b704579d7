"""The Python SDK answers each match on its own: one slow decision never delays another match.

* real bot processes (``tests/bots/sleepy_bot.py``) against the real referee (the
  ``arena_server`` fixture): a bot that takes 600 ms per decision plays two matches at
  once under a 1 s limit and a 0.5 s bank without a timeout, with plain and with
  ``async def`` methods; ``--processes 2`` plays on two connections from two processes
  that go when their parent goes;
* a scripted arena (a real grpc.aio server in this process) sends several requests of
  two matches at once, to see the order the SDK calls the bot in: one match's hooks and
  decisions in turn, never two at once, the two matches side by side; and that stopping
  does not wait for a bot still thinking, nor leaves a thread behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from bots.harness import read_report
from factories import ROOT

from arena import sdk
from arena.records import MatchRecord, MatchSpec
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc

SLEEPY = ROOT / "tests" / "bots" / "sleepy_bot.py"
TOKEN = "concurrency-token"
OBS = {"variant": "classic", "players": 3, "seat": 0, "round": 1, "hand_size": 1, "hand": ["b7"], "trump": None,
       "trump_card": None, "bids": [None, None, None], "tricks_won": [0, 0, 0], "trick": [], "played": [],
       "lead_suit": None}


# ---------------------------------------------------------------- the real referee, real bot processes


def classic(seed: int, rounds: int = 2) -> dict[str, Any]:
    return {"variant": "classic", "players": 3, "seed": seed, "rounds": rounds}


def play_at_once(arena: Any, specs: list[MatchSpec], timeout: float = 60) -> list[MatchRecord]:
    """Run the matches at the same time on the referee; their records."""
    futures = [arena.submit(arena.arena.host.run_match(spec)) for spec in specs]
    return [future.result(timeout) for future in futures]


def wait_for_streams(arena: Any, name: str, streams: int, slots: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = arena.arena.host.connected_bots().get(name)
        if info is not None and (info.connections, info.free_slots) == (streams, slots):
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} never had {streams} streams with {slots} slots: {arena.arena.host.connected_bots()}")


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["began"] < b["ended"] and b["began"] < a["ended"]


@pytest.mark.slow
@pytest.mark.parametrize("style", [[], ["--async"]], ids=["plain-methods", "async-def-methods"])
def test_a_bot_that_thinks_600_ms_plays_two_matches_at_once_without_a_timeout(
        arena_server: Any, tmp_path: Path, style: list[str]) -> None:
    """600 ms a decision, 1 s limit, 0.5 s bank, two matches at once: answered one at a
    time the second match's requests would wait 1.2 s, drain the bank and time out."""
    arena = arena_server(bots=["honest0", "honest1"], move_time=1.0, time_bank=0.5)
    report = tmp_path / "sleepy.jsonl"
    arena.start_bot("sleepy_bot.py", "sleepy", "--sleep-ms", "600", *style, report=report, max_matches=2)
    records = play_at_once(arena, [
        MatchSpec(config=classic(1), bots=["sleepy", "honest0", "honest1"], match_id="left"),
        MatchSpec(config=classic(2), bots=["honest1", "sleepy", "honest0"], match_id="right"),
    ])
    for record, seat in zip(records, (0, 1)):
        assert record.status == "completed"
        assert [f for f in record.faults if f.seat == seat] == [], record.faults
        mine = [ms for (who, _), ms in zip(record.actions, record.latencies_ms) if who == seat]
        assert len(mine) >= 5 and all(ms is not None and ms >= 590 for ms in mine), mine
        assert record.bank_used_ms is not None and record.bank_used_ms[seat] < 500   # the bank is not all gone
    seen = read_report(report)
    left = [d for d in seen if d["match"] == "left"]
    right = [d for d in seen if d["match"] == "right"]
    assert left and right
    # Really side by side (the bot's own report of when it thought, not the arena's
    # latencies, which a busy machine lengthens): most of one match's thinking overlapped
    # the other's.
    assert sum(any(overlap(a, b) for b in right) for a in left) >= len(left) - 1
    threads = {d["thread"] for d in seen}
    if style:
        assert threads == {"MainThread"}     # async def: tasks on the event loop
    else:
        assert len(threads) == 2 and "MainThread" not in threads   # a thread per match


@pytest.mark.slow
def test_processes_2_plays_on_two_connections_and_stops_with_its_parent(arena_server: Any, tmp_path: Path) -> None:
    arena = arena_server(bots=["honest0", "honest1"], move_time=1.0, time_bank=0.5)
    report = tmp_path / "sleepy.jsonl"
    parent = arena.start_bot("sleepy_bot.py", "sleepy", "--sleep-ms", "50", "--processes", "2", report=report,
                             max_matches=2)
    wait_for_streams(arena, "sleepy", streams=2, slots=2)    # one match each
    records = play_at_once(arena, [
        MatchSpec(config=classic(3), bots=["sleepy", "honest0", "honest1"], match_id="one"),
        MatchSpec(config=classic(4), bots=["honest0", "sleepy", "honest1"], match_id="two"),
    ])
    assert all(record.faults == [] for record in records)
    seen = read_report(report)
    by_match = {match: {d["pid"] for d in seen if d["match"] == match} for match in ("one", "two")}
    assert len(by_match["one"]) == len(by_match["two"]) == 1 and by_match["one"] != by_match["two"]
    children = by_match["one"] | by_match["two"]
    assert parent.pid not in children
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(60) == 0
    assert not any(alive(pid) for pid in children)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def children_of(pid: int) -> set[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    if not path.exists():
        pytest.skip("needs Linux's /proc/PID/task/PID/children")
    return {int(word) for word in path.read_text().split()}


@pytest.mark.slow
def test_the_processes_leave_when_their_parent_is_killed(arena_server: Any) -> None:
    arena = arena_server()
    parent = arena.start_bot("sleepy_bot.py", "sleepy", "--processes", "2", max_matches=2)
    wait_for_streams(arena, "sleepy", streams=2, slots=2)
    children = children_of(parent.pid)
    assert len(children) == 2
    parent.kill()          # no chance to stop them itself
    parent.wait(60)
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    # Orphans are reaped by init (or a subreaper) once they exit; a zombie is gone too.
    assert not [pid for pid in children if alive(pid) and not zombie(pid)]
    assert arena.arena.host.connected_bots().get("sleepy") is None


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
def test_processes_refused_by_the_arena_exit_2_together(arena_server: Any) -> None:
    arena = arena_server()
    done = subprocess.run([sys.executable, str(SLEEPY), "--arena", arena.address, "--token", "not-a-token",
                           "--processes", "2"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("refused by the arena: UNAUTHENTICATED") >= 1
    assert "[1/2]" in done.stderr or "[2/2]" in done.stderr     # each process's lines say which it is


@pytest.mark.slow
def test_the_sdk_benchmark_measures_one_process_and_two_beside_its_yardstick() -> None:
    from arena.bench.sdk import bench_sdk

    figures = bench_sdk(matches=2, rounds=2, runs=1, work=20_000, yardstick_seconds=0.2)
    assert figures["processes_1_decisions"] == figures["processes_2_decisions"] >= 10
    for key in ("bare_one_process_per_s", "bare_two_processes_per_s", "processes_1_decisions_per_s",
                "processes_2_decisions_per_s", "two_over_one", "processes_2_of_bare"):
        assert figures[key] > 0, key
    assert figures["bare_ms_per_decision"] == pytest.approx(1000 / figures["bare_one_process_per_s"], rel=0.01)


def test_the_sdk_cpu_benchmark_answers_the_same_requests_through_the_sdk_and_the_bare_client() -> None:
    """`arena bench sdk --cpu`, as small as it goes: the three bots (the SDK with plain
    methods, with async def ones, and the bare client) play the same match (the same
    requests, checked), and each reports its CPU per decision."""
    from arena.bench.sdk import bench_sdk_cpu

    figures = bench_sdk_cpu(matches=1, rounds=1, runs=1)
    assert figures["same_requests"] is True
    assert figures["decisions_per_bot"] >= 1
    bare = figures["bare_cpu_us_per_decision"]
    assert bare > 0
    for bot in ("sdk", "sdk_async"):
        assert figures[f"{bot}_cpu_us_per_decision"] > 0
        assert figures[f"{bot}_over_bare"] == pytest.approx(figures[f"{bot}_cpu_us_per_decision"] / bare, rel=0.05)


# ---------------------------------------------------------------- the command line


def test_processes_come_from_the_option_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_PROCESSES", raising=False)
    monkeypatch.delenv("ARENA_PROCESS", raising=False)
    assert sdk.parse_args(["--token", "t"]).processes == 1
    assert sdk.parse_args(["--token", "t", "--processes", "3"]).processes == 3
    monkeypatch.setenv("ARENA_PROCESSES", "2")
    args = sdk.parse_args(["--token", "t", "--max-matches", "4"])
    assert (args.processes, args.max_matches, args.process) == (2, 4, None)
    # Process 2 of 3 (what supervise() tells each one) plays its share and starts none.
    monkeypatch.setenv("ARENA_PROCESS", "2/3")
    args = sdk.parse_args(["--token", "t", "--max-matches", "4"])
    assert (args.processes, args.max_matches, args.process) == (1, 1, (2, 3))


@pytest.mark.parametrize("argv, env, message", [
    (["--processes", "0"], {}, "--processes must be from 1 to 32"),
    (["--processes", "33"], {}, "--processes must be from 1 to 32"),
    ([], {"ARENA_PROCESSES": "many"}, "ARENA_PROCESSES='many' is not a number"),
    ([], {"ARENA_PROCESS": "3/2"}, "ARENA_PROCESS='3/2' is not I/N"),
])
def test_bad_processes_are_one_line_and_exit_2(argv: list[str], env: dict[str, str], message: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("ARENA_PROCESSES", "ARENA_PROCESS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit_:
        sdk.parse_args(["--token", "t", *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


# ---------------------------------------------------------------- a scripted arena: the order of calls

Script = Callable[["Stream"], Awaitable[None]]


class Stream:
    """The arena's side of one bot connection."""

    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        self.context = context

    async def send(self, **fields: Any) -> None:
        await self.context.write(pb.ArenaMessage(**fields))

    async def start(self, match_id: str) -> None:
        await self.send(match_started=pb.MatchStarted(match_id=match_id, variant="classic", seat=0, players=3,
                                                      bot_names=["me", "x", "y"], seed=7, move_time_ms=1000))

    async def request(self, match_id: str, request_id: int) -> None:
        await self.send(request=pb.DecisionRequest(
            match_id=match_id, seat=0, request_id=request_id, kind=pb.PLAY, options=["b7", "r3"],
            observation_json=json.dumps({**OBS, "n": request_id}), deadline_ms=1000))

    async def end(self, match_id: str) -> None:
        await self.send(match_ended=pb.MatchEnded(match_id=match_id, seat=0, totals=[1, 2, 3], places=[3, 2, 1],
                                                  result_json="{}", reason="completed"))

    async def answers(self, count: int) -> list[int]:
        """The request ids of the next ``count`` answers, in the order they came."""
        ids = []
        for _ in range(count):
            message = await asyncio.wait_for(self.context.read(), 10)
            assert message is not grpc.aio.EOF and message.WhichOneof("msg") == "action"
            ids.append(message.action.request_id)
        return ids


class ScriptedArena(arena_pb2_grpc.ArenaServicer):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        hello = await context.read()
        assert hello.WhichOneof("msg") == "hello"
        await context.write(pb.ArenaMessage(welcome=pb.Welcome(bot_id="b1", bot_name="me", server_version="scripted",
                                                               protocol_version=1)))
        await self.script(Stream(context))


async def play_script(bot: type[sdk.Bot] | sdk.Bot, script: Script, *, stop_after: float | None = None,
                      max_matches: int = 2) -> tuple[int, float]:
    """Connect ``bot`` to an arena that runs ``script``; its exit code and the seconds it ran
    (``stop_after``: call stop() that long after the start instead of waiting for the end)."""
    server = grpc.aio.server()
    arena_pb2_grpc.add_ArenaServicer_to_server(ScriptedArena(script), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = sdk.BotClient(bot=bot, arena=f"127.0.0.1:{port}", token=TOKEN, max_matches=max_matches)
    began = time.monotonic()
    try:
        task = asyncio.create_task(client.run())
        if stop_after is not None:
            await asyncio.sleep(stop_after)
            client.stop()
        code = await asyncio.wait_for(task, 60)
        return code, time.monotonic() - began
    finally:
        await server.stop(None)


async def until(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Wait, on the scripted arena's side with the stream still open, until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the bot did not get there in time"
        await asyncio.sleep(0.01)


class Calls:
    """What the bots were asked, by match: ("start"|"end"|request number, began, ended, thread)."""

    def __init__(self) -> None:
        self.by_match: dict[str, list[tuple[Any, float, float, str]]] = {}
        self.lock = threading.Lock()

    def add(self, bot: sdk.Bot, what: Any, began: float) -> None:
        assert bot.match is not None
        with self.lock:
            self.by_match.setdefault(bot.match.match_id, []).append(
                (what, began, time.monotonic(), threading.current_thread().name))


def ordered_bots(calls: Calls) -> list[type[sdk.Bot]]:
    """The same bot twice: plain methods (on the match's thread) and async def ones (on the loop)."""

    class Plain(sdk.Bot):
        def on_match_start(self, info: sdk.MatchInfo) -> None:
            began = time.monotonic()
            time.sleep(0.02)
            calls.add(self, "start", began)

        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            began = time.monotonic()
            time.sleep(self.rng.uniform(0.01, 0.05))
            calls.add(self, obs["n"], began)
            return options[-1]

        def on_match_end(self, result: sdk.MatchResult) -> None:
            calls.add(self, "end", time.monotonic())

    class Async(sdk.Bot):
        async def on_match_start(self, info: sdk.MatchInfo) -> None:  # type: ignore[override]
            began = time.monotonic()
            await asyncio.sleep(0.02)
            calls.add(self, "start", began)

        async def play(self, obs: dict[str, Any], options: list[str]) -> str:  # type: ignore[override]
            began = time.monotonic()
            await asyncio.sleep(self.rng.uniform(0.01, 0.05))
            calls.add(self, obs["n"], began)
            return options[-1]

        async def on_match_end(self, result: sdk.MatchResult) -> None:  # type: ignore[override]
            calls.add(self, "end", time.monotonic())

    return [Plain, Async]


@pytest.mark.parametrize("kind", [0, 1], ids=["plain-methods", "async-def-methods"])
def test_one_matchs_hooks_and_decisions_stay_in_order_while_another_match_runs_beside_it(kind: int) -> None:
    """Five requests of each of two matches arrive at once: each match's calls come one
    after another in the order asked (its answers too), the two matches overlap."""
    calls = Calls()
    bot = ordered_bots(calls)[kind]
    answered: list[int] = []

    async def script(s: Stream) -> None:
        await s.start("m1")
        await s.start("m2")
        for n in range(1, 6):
            await s.request("m1", n)
            await s.request("m2", 10 + n)
        answered.extend(await s.answers(10))
        await s.end("m1")
        await s.end("m2")
        # The stream stays open until both end hooks ran: once it closes, the bot gives
        # its queued hooks only LANE_GRACE (1 s), which a loaded machine can miss.
        await until(lambda: all(calls.by_match.get(m, [("",)])[-1][0] == "end" for m in ("m1", "m2")))

    code, _ = asyncio.run(play_script(bot, script))
    assert code == 0
    assert [n for n in answered if n < 10] == [1, 2, 3, 4, 5]
    assert [n for n in answered if n > 10] == [11, 12, 13, 14, 15]
    for match, first in (("m1", 1), ("m2", 11)):
        seen = calls.by_match[match]
        assert [what for what, *_ in seen] == ["start", first, first + 1, first + 2, first + 3, first + 4, "end"]
        for (_, _, ended, _), (_, began, _, _) in zip(seen, seen[1:]):
            assert ended <= began, f"two calls of {match} at once"
    left, right = calls.by_match["m1"], calls.by_match["m2"]
    assert any(a[1] < b[2] and b[1] < a[2] for a in left[1:6] for b in right[1:6]), "the matches never overlapped"
    threads = [{thread for *_, thread in calls.by_match[m]} for m in ("m1", "m2")]
    if kind == 0:
        assert len(threads[0]) == len(threads[1]) == 1 and threads[0] != threads[1]   # a thread per match
    else:
        assert threads[0] == threads[1] == {"MainThread"}


def test_a_shared_bot_instance_answers_its_seats_one_at_a_time() -> None:
    """A bot instance is every seat's: its rng and match attributes are set before each
    call, so the SDK never calls it for two matches at once."""
    calls = Calls()
    shared = ordered_bots(calls)[0]()

    async def script(s: Stream) -> None:
        await s.start("m1")
        await s.start("m2")
        for n in range(1, 4):
            await s.request("m1", n)
            await s.request("m2", 10 + n)
        await s.answers(6)

    code, _ = asyncio.run(play_script(shared, script))
    assert code == 0
    everything = sorted((c for seen in calls.by_match.values() for c in seen), key=lambda c: c[1])
    assert len(everything) == 8
    for (_, _, ended, _), (_, began, _, _) in zip(everything, everything[1:]):
        assert ended <= began


def test_stopping_does_not_wait_for_a_bot_still_thinking() -> None:
    release = threading.Event()
    thinking = threading.Event()

    class Ponderer(sdk.Bot):
        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            thinking.set()
            release.wait(30)
            return options[0]

    async def script(s: Stream) -> None:
        await s.start("m1")
        await s.request("m1", 1)
        await asyncio.sleep(30)

    try:
        code, took = asyncio.run(play_script(Ponderer, script, stop_after=0.5))
        assert thinking.is_set()
        # Waiting for the bot would take the 30 s it ponders; the slack is for a busy machine.
        assert code == 0 and took < 15
        (lane,) = [t for t in threading.enumerate() if t.name.endswith("match m1")]
        assert lane.daemon       # left to end with the process, never joined
    finally:
        release.set()
    lane.join(30)
    assert not lane.is_alive()   # once the bot's code returned, the thread ended


def test_a_match_that_ends_while_its_bot_thinks_leaves_no_thread_or_task_behind() -> None:
    """The arena ends the match (the bot timed out, say) while the bot still thinks: the late
    answer is sent (the arena ignores it), then the match's thread and task end."""
    leftover: dict[str, Any] = {}

    class Late(sdk.Bot):
        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            time.sleep(0.3)
            return options[0]

    async def script(s: Stream) -> None:
        await s.start("m1")
        await s.request("m1", 1)
        await asyncio.sleep(0.05)
        await s.end("m1")
        assert await s.answers(1) == [1]
        await asyncio.sleep(0.2)
        leftover["threads"] = [t.name for t in threading.enumerate() if "match m1" in t.name]
        leftover["tasks"] = [t for t in asyncio.all_tasks() if "_run_lane" in repr(t.get_coro())]

    code, _ = asyncio.run(play_script(Late, script))
    assert code == 0
    assert leftover == {"threads": [], "tasks": []}


def test_a_bot_whose_method_calls_sys_exit_still_exits_with_its_code() -> None:
    class Quitter(sdk.Bot):
        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            sys.exit(7)

    async def script(s: Stream) -> None:
        await s.start("m1")
        await s.request("m1", 1)
        await asyncio.sleep(30)

    with pytest.raises(SystemExit) as exit_:
        asyncio.run(play_script(Quitter, script))
    assert exit_.value.code == 7
