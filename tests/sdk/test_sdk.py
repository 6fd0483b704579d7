"""The Python bot SDK (arena/sdk/).

Two layers:

* a scripted fake arena (a real grpc.aio server on 127.0.0.1, in this process) pins
  the SDK's side of the conversation: Hello, request ids, option conversion, the
  fallback after a bot bug, reconnecting, refusing, clean exits;
* the real ``ArenaServer`` (the ``arena_server`` fixture) with bot *processes* playing
  whole matches;
* bot *processes* on the command line: the arena's address, retrying (one line on
  stderr, then success or giving up), and the exit codes (0 clean, 1 gave up, 2 refused
  or a bad command line).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from factories import ROOT
from factories.network import DroppingProxy

from arena import sdk
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc

TOKEN = "secret-token"

Script = Callable[["FakeStream"], Awaitable[None]]


# ---------------------------------------------------------------- a scripted fake arena


@dataclass
class FakeStream:
    """One bot connection on the fake arena, seen from the server side."""

    context: grpc.aio.ServicerContext
    hello: pb.Hello | None = None

    async def send(self, **fields: Any) -> None:
        await self.context.write(pb.ArenaMessage(**fields))

    async def receive(self) -> pb.BotMessage:
        message = await asyncio.wait_for(self.context.read(), 5)
        assert message is not grpc.aio.EOF, "the bot closed its stream"
        return message

    async def ask(self, request_id: int, kind: int, options: list[str], obs: dict[str, Any],
                  match_id: str = "m1", seat: int = 0) -> pb.Action:
        await self.send(request=pb.DecisionRequest(
            match_id=match_id, seat=seat, request_id=request_id, kind=kind, options=options,
            observation_json=json.dumps(obs), deadline_ms=1000))
        message = await self.receive()
        assert message.WhichOneof("msg") == "action"
        assert message.action.request_id == request_id
        return message.action


@dataclass
class FakeArena(arena_pb2_grpc.ArenaServicer):
    """Runs one script per connection, in order; the last one repeats."""

    scripts: list[Script]
    connections: int = 0
    tokens_seen: list[str] = field(default_factory=list)

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        auth = dict(context.invocation_metadata()).get("authorization", "")
        self.tokens_seen.append(auth)
        if auth != f"Bearer {TOKEN}":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "bad token")
        stream = FakeStream(context)
        first = await stream.receive()
        assert first.WhichOneof("msg") == "hello"
        stream.hello = first.hello
        script = self.scripts[min(self.connections, len(self.scripts) - 1)]
        self.connections += 1
        await stream.send(welcome=pb.Welcome(bot_id="b1", bot_name=first.hello.name, server_version="fake",
                                             protocol_version=1))
        await script(stream)


async def serve(arena: FakeArena, address: str = "127.0.0.1:0") -> tuple[grpc.aio.Server, int]:
    """Start the fake arena; OSError if ``address`` cannot be bound (a taken port)."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])   # a taken port must fail
    arena_pb2_grpc.add_ArenaServicer_to_server(arena, server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:   # grpc's way of saying the bind failed (or it returns 0)
        port = 0
    if port == 0:
        await server.stop(None)
        raise OSError(f"cannot listen on {address}")
    await server.start()
    return server, port


CLASSIC_OBS: dict[str, Any] = {
    "variant": "classic", "players": 3, "seat": 0, "round": 2, "hand_size": 2, "hand": ["b7", "W1"],
    "trump": "red", "trump_card": "r3", "bids": [None, None, None], "tricks_won": [0, 0, 0],
    "trick": [], "played": [], "lead_suit": None,
}
EXTREME_OBS: dict[str, Any] = {
    "variant": "extreme", "players": 3, "seat": 0, "hand": ["r9", "y2"], "supply": {"red": 5, "blue": 3},
    "destroyer_free": True, "tokens": [{"red": 1}, {}, {}],
}


def started(match_id: str = "m1", seat: int = 0, seed: int = 42) -> pb.MatchStarted:
    return pb.MatchStarted(match_id=match_id, variant="classic", seat=seat, players=3,
                           bot_names=["x", "y", "z"], options_json="{}", seed=seed, move_time_ms=1000)


def ended(match_id: str = "m1", seat: int = 0) -> pb.MatchEnded:
    return pb.MatchEnded(match_id=match_id, seat=seat, totals=[30, 10, -10], places=[1, 2, 3],
                         result_json="{}", reason="completed")


async def run_client(bot: type[sdk.Bot] | sdk.Bot, arena: FakeArena, *, token: str = TOKEN,
                     timeout: float = 10, **kwargs: Any) -> tuple[int, sdk.BotClient]:
    server, port = await serve(arena)
    client = sdk.BotClient(bot=bot, arena=f"127.0.0.1:{port}", token=token, **kwargs)
    try:
        code = await asyncio.wait_for(client.run(), timeout)
    finally:
        await server.stop(None)
    return code, client


# ---------------------------------------------------------------- bots used by the tests


class RecordingBot(sdk.Bot):
    """Answers deterministically and remembers what it was given."""

    name = "recorder"
    version = "9.9"
    variants = ("classic",)

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, Any]] = []
        self.started: list[sdk.MatchInfo] = []
        self.results: list[sdk.MatchResult] = []
        self.faults: list[sdk.FaultInfo] = []

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        self.seen.append(("bid", options))
        return max(options)

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        self.seen.append(("play", obs["hand"]))
        return self.rng.choice(options)

    def predict(self, obs: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": {"red": 2}, "take_from": [["red", 1]]}

    def on_match_start(self, info: sdk.MatchInfo) -> None:
        self.started.append(info)

    def on_match_end(self, result: sdk.MatchResult) -> None:
        self.results.append(result)

    def on_fault(self, fault: sdk.FaultInfo) -> None:
        self.faults.append(fault)


class BuggyBot(sdk.Bot):
    """Every decision goes wrong in a different way."""

    name = "buggy"

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        raise RuntimeError("bug in bid")

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        return "not-a-card"

    def predict(self, obs: dict[str, Any]) -> Any:
        return {"tokens": "lots"}

    def on_match_start(self, info: sdk.MatchInfo) -> None:
        raise RuntimeError("bug in a hook")


# ---------------------------------------------------------------- fake-arena tests


def test_conversation_hello_answers_hooks_and_clean_close() -> None:
    async def script(s: FakeStream) -> None:
        assert s.hello is not None
        # No name unless one was given: the token says which bot this is.
        assert (s.hello.name, s.hello.version, list(s.hello.variants), s.hello.max_matches) == \
            ("", "9.9", ["classic"], 2)
        await s.send(match_started=started())
        bid = await s.ask(7, pb.BID, ["0", "1", "2"], CLASSIC_OBS)
        assert bid.option == "2"  # max(options) computed on ints, sent back as a string
        play = await s.ask(8, pb.PLAY, ["b7", "W1"], CLASSIC_OBS)
        assert play.option in ("b7", "W1")
        pred = await s.ask(9, pb.PREDICT, [], EXTREME_OBS)
        assert pred.WhichOneof("choice") == "prediction"
        assert dict(pred.prediction.tokens) == {"red": 2}
        assert [(t.colour, t.seat) for t in pred.prediction.take_from] == [("red", 1)]
        await s.send(fault=pb.Fault(match_id="m1", request_id=8, kind="illegal", message="no", faults=1))
        await s.send(match_ended=ended())
        # Returning ends the stream with status OK: the bot must exit cleanly.

    bot = RecordingBot()
    code, client = asyncio.run(run_client(bot, FakeArena([script]), max_matches=2))
    assert code == 0
    assert bot.seen[0] == ("bid", [0, 1, 2])
    assert [i.match_id for i in bot.started] == ["m1"] and bot.started[0].seed == 42
    assert bot.results[0].place == 1 and bot.results[0].totals == (30, 10, -10)
    assert bot.faults[0].kind == "illegal"
    assert client.seats == {}  # the ended match was forgotten


def test_bot_bugs_send_the_fallback_and_the_bot_keeps_playing() -> None:
    async def script(s: FakeStream) -> None:
        await s.send(match_started=started())
        assert (await s.ask(1, pb.BID, ["0", "1"], CLASSIC_OBS)).option == "0"
        assert (await s.ask(2, pb.PLAY, ["b7", "W1"], CLASSIC_OBS)).option == "b7"
        pred = await s.ask(3, pb.PREDICT, [], EXTREME_OBS)
        assert pred.WhichOneof("choice") == "prediction"
        assert not pred.prediction.destroyer and not pred.prediction.tokens
        # A request the SDK does not know at all still gets an answer.
        assert (await s.ask(4, 99, ["x"], CLASSIC_OBS)).option == "x"
        await s.send(match_ended=ended())

    code, _ = asyncio.run(run_client(BuggyBot, FakeArena([script])))
    assert code == 0


def test_events_reach_bots_that_ask_for_them() -> None:
    class Listener(sdk.Bot):
        name = "listener"
        heard: list[dict[str, Any]] = []

        def on_events(self, events: list[dict[str, Any]]) -> None:
            Listener.heard.extend(events)

    async def script(s: FakeStream) -> None:
        await s.send(match_started=started())
        await s.send(request=pb.DecisionRequest(
            match_id="m1", seat=0, request_id=1, kind=pb.PLAY, options=["b7"],
            observation_json=json.dumps(CLASSIC_OBS),
            events_json=[json.dumps({"type": "play", "seat": 2, "card": "g3"})]))
        assert (await s.receive()).action.option == "b7"
        await s.send(match_ended=ended())

    code, _ = asyncio.run(run_client(Listener, FakeArena([script])))
    assert code == 0
    assert Listener.heard == [{"type": "play", "seat": 2, "card": "g3"}]


def test_seeded_rng_replays_and_each_seat_gets_its_own_bot() -> None:
    answers: list[list[str]] = []

    def script_for(run: list[str]) -> Script:
        async def script(s: FakeStream) -> None:
            for seat in (0, 1):
                await s.send(match_started=started(seat=seat, seed=1234 + seat))
            options = [f"b{r}" for r in range(1, 14)]
            for i in range(20):
                run.append((await s.ask(i, pb.PLAY, options, CLASSIC_OBS, seat=i % 2)).option)
        return script

    for _ in range(2):
        run: list[str] = []
        _, client = asyncio.run(run_client(RecordingBot, FakeArena([script_for(run)]), max_matches=2))
        answers.append(run)
    bots = [seat.bot for seat in client.seats.values()]
    assert len(bots) == 2 and bots[0] is not bots[1]  # a bot class: one instance per seat
    assert answers[0] == answers[1]
    assert len(set(answers[0])) > 3  # really random, not a constant


def test_reconnects_after_a_dropped_connection_and_keeps_the_seat() -> None:
    async def first(s: FakeStream) -> None:
        await s.send(match_started=started())
        await s.ask(1, pb.PLAY, ["b1", "b2", "b3"], CLASSIC_OBS)
        await s.context.abort(grpc.StatusCode.UNAVAILABLE, "arena restarting")

    async def second(s: FakeStream) -> None:
        await s.send(match_started=started())  # re-sent after a reconnect: same seat
        await s.ask(2, pb.PLAY, ["b1", "b2", "b3"], CLASSIC_OBS)
        await s.send(match_ended=ended())

    bot = RecordingBot()
    arena = FakeArena([first, second])
    code, _ = asyncio.run(run_client(bot, arena))
    assert code == 0
    assert arena.connections == 2
    assert len(bot.started) == 1  # the repeated MatchStarted did not restart the match


def test_bad_token_is_fatal() -> None:
    async def never(s: FakeStream) -> None:  # pragma: no cover - the token is refused first
        raise AssertionError("should not be reached")

    code, _ = asyncio.run(run_client(RecordingBot, FakeArena([never]), token="wrong"))
    assert code == 2


def test_gives_up_when_no_arena_answers() -> None:
    async def go() -> int:
        client = sdk.BotClient(bot=RecordingBot, arena="127.0.0.1:1", token=TOKEN, give_up_after=0.5)
        return await asyncio.wait_for(client.run(), 10)

    assert asyncio.run(go()) == 1


def test_stop_ends_a_waiting_bot() -> None:
    async def idle(s: FakeStream) -> None:
        await asyncio.sleep(600)   # the session would end by itself only after the bound below

    async def go() -> int:
        server, port = await serve(FakeArena([idle]))
        client = sdk.BotClient(bot=RecordingBot, arena=f"127.0.0.1:{port}", token=TOKEN)
        task = asyncio.create_task(client.run())
        await asyncio.sleep(0.5)
        client.stop()
        try:
            return await asyncio.wait_for(task, 30)
        finally:
            await server.stop(None)

    assert asyncio.run(go()) == 0


def test_command_line_needs_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    with pytest.raises(SystemExit):
        sdk.parse_args(["--arena", "127.0.0.1:1"])
    monkeypatch.setenv("ARENA_TOKEN", "t")
    args = sdk.parse_args(["--arena", "h:1", "--max-matches", "3", "--seed", "5"])
    assert (args.token, args.arena, args.max_matches, args.seed) == ("t", "h:1", 3, 5)


# ---------------------------------------------------------------- what the SDK imports


def test_the_sdk_imports_only_grpc_protobuf_and_the_wire() -> None:
    """A bot author installs the arena for the SDK alone: importing it must not pull in
    the store, the referee, the results or their libraries (lint-imports checks the
    code; this checks what really gets loaded)."""
    forbidden = ["sqlmodel", "sqlalchemy", "numpy", "rich", "typer", "arena.referee", "arena.store",
                 "arena.results", "arena.records", "arena.tournament", "arena.cli"]
    check = ("import sys, arena.sdk; "
             f"print(sorted(m for m in sys.modules if any(m == f or m.startswith(f + '.') for f in {forbidden!r})))")
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


# ---------------------------------------------------------------- the arena's address


@pytest.mark.parametrize(("given", "target"), [
    ("127.0.0.1", "127.0.0.1:50051"),
    ("localhost", "localhost:50051"),   # grpc alone would dial localhost:443
    ("arena.example.org:6000", "arena.example.org:6000"),
    (" 10.0.0.7:1 ", "10.0.0.7:1"),
    ("[::1]", "[::1]:50051"),
    ("[::1]:6000", "[::1]:6000"),
    ("::1", "[::1]:50051"),
    ("fe80::1", "[fe80::1]:50051"),
])
def test_arena_addresses_get_the_default_port(given: str, target: str) -> None:
    assert sdk.arena_target(given) == target


def test_the_default_port_is_the_one_arena_serve_listens_on() -> None:
    cli = pytest.importorskip("arena.cli.serve")
    port_option = inspect.signature(cli.serve).parameters["port"].default
    assert getattr(port_option, "default", port_option) == sdk.DEFAULT_PORT == 50051


@pytest.mark.parametrize("bad", [
    "", "   ", "host:", "host:abc", "host:0", "host:65536", "host:-1", "host:5²", ":50051",
    "[::1", "[::1]x", "[nonsense]", "[::1]:", "::1:50051", "http://host:50051", "dns:///host",
    "a b", "host/path",
])
def test_bad_arena_values_are_refused_in_one_line(bad: str, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError):
        sdk.arena_target(bad)
    with pytest.raises(SystemExit) as exit_:
        sdk.parse_args(["--arena", bad, "--token", "t"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--arena" in err, err
    # The same value from the environment names the variable instead.
    monkeypatch.setenv("ARENA_ADDRESS", bad)
    if bad.strip():   # an empty ARENA_ADDRESS counts as unset
        with pytest.raises(SystemExit):
            sdk.parse_args(["--token", "t"])
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "ARENA_ADDRESS=" in err, err


def test_the_address_comes_from_the_environment_or_defaults_to_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_ADDRESS", raising=False)
    assert sdk.parse_args(["--token", "t"]).arena == "127.0.0.1:50051"
    monkeypatch.setenv("ARENA_ADDRESS", "arena.lan")
    assert sdk.parse_args(["--token", "t"]).arena == "arena.lan:50051"
    assert sdk.parse_args(["--token", "t", "--arena", "[::1]:7"]).arena == "[::1]:7"


def test_retry_for_and_its_old_name() -> None:
    assert sdk.parse_args(["--token", "t"]).retry_for == sdk.RETRY_FOR == 60
    assert sdk.parse_args(["--token", "t", "--retry-for", "2.5"]).retry_for == 2.5
    assert sdk.parse_args(["--token", "t", "--give-up-after", "30"]).retry_for == 30


def test_an_ipv6_arena_is_reached_in_brackets() -> None:
    async def bye(s: FakeStream) -> None:
        pass

    async def go() -> int:
        try:
            server, port = await serve(FakeArena([bye]), "[::1]:0")
        except OSError:
            pytest.skip("no IPv6 loopback here")
        try:
            client = sdk.BotClient(bot=RecordingBot, arena=f"[::1]:{port}", token=TOKEN)
            return await asyncio.wait_for(client.run(), 10)
        finally:
            await server.stop(None)

    assert asyncio.run(go()) == 0


# ---------------------------------------------------------------- bot processes: connecting, retrying, exiting


async def start_bot(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    """The random sample bot as a process, as a bot author starts it."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sample_bots.random_bot", *args, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


async def finish(proc: asyncio.subprocess.Process, timeout: float) -> tuple[int, list[str]]:
    """Wait for a bot process: its exit code and its stderr lines (killed if too slow)."""
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        _, err = await proc.communicate()
        raise AssertionError(f"the bot did not exit within {timeout} s; stderr:\n{err.decode()}") from None
    assert proc.returncode is not None
    return proc.returncode, err.decode().splitlines()


def free_port() -> int:
    """A port nobody listens on (now): bind one, note it, let it go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_bad_arena_values_end_the_bot_process_with_status_2_and_one_line() -> None:
    async def go() -> list[tuple[int, list[str]]]:
        procs = [await start_bot("--arena", "host:abc", "--token", TOKEN),
                 await start_bot("--arena", "127.0.0.1:99999", "--token", TOKEN),
                 await start_bot("--token", TOKEN, env={"ARENA_ADDRESS": "[::1"})]
        return [await finish(proc, 15) for proc in procs]

    for code, lines in asyncio.run(go()):
        assert code == 2
        assert len(lines) == 1 and "error:" in lines[0], lines


def test_an_arena_given_without_a_port_is_dialled_on_50051() -> None:
    """`--arena 127.0.0.1` reaches a (fake, but real grpc) arena on 50051, the port
    `arena serve` uses by default; skipped when something else has that port."""
    async def bye(s: FakeStream) -> None:
        pass   # returning ends the stream with OK: the bot should exit with 0

    async def go() -> tuple[int, list[str], int]:
        arena = FakeArena([bye])
        try:
            server, _ = await serve(arena, f"127.0.0.1:{sdk.DEFAULT_PORT}")
        except OSError:
            pytest.skip(f"port {sdk.DEFAULT_PORT} is taken on this machine")
        try:
            proc = await start_bot("--arena", "127.0.0.1", "--token", TOKEN, "--retry-for", "5")
            code, lines = await finish(proc, 20)
        finally:
            await server.stop(None)
        return code, lines, arena.connections

    code, lines, connections = asyncio.run(go())
    assert connections == 1
    assert code == 0
    assert any("connected to 127.0.0.1:50051 as" in line for line in lines), lines


def test_a_bot_without_an_arena_says_once_that_it_retries_then_gives_up() -> None:
    async def go() -> tuple[int, list[str], float]:
        began = time.monotonic()
        proc = await start_bot("--arena", f"127.0.0.1:{free_port()}", "--token", TOKEN, "--retry-for", "2")
        code, lines = await finish(proc, 60)
        return code, lines, time.monotonic() - began

    code, lines, took = asyncio.run(go())
    assert code == 1
    assert 2 <= took < 30   # it gives up after its 2 s, not a bound on speed: the slack is for a busy machine
    assert len(lines) == 2, lines
    assert "cannot reach 127.0.0.1:" in lines[0]
    assert "(connection refused); retrying with backoff up to 5 s for 2 s" in lines[0]
    assert "gave up after 2 s and " in lines[1]
    attempts = int(lines[1].split(" and ")[1].split()[0])
    assert attempts >= 4   # 0.1, 0.2, 0.4, 0.8 s... apart: several attempts behind one line


def test_the_retrying_bot_connects_when_the_arena_comes_and_exits_0_when_it_stops(arena_server: Any) -> None:
    """The arena starts after the bot (one "retrying" line, then "connected ... after"),
    then stops cleanly as `arena serve` does on SIGTERM: the bot exits with 0."""

    async def go() -> tuple[int, list[str]]:
        port = free_port()
        proc = await start_bot("--arena", f"127.0.0.1:{port}", "--token", "tok-late", "--retry-for", "20")
        await asyncio.sleep(1.0)   # the bot starts and fails a few times meanwhile
        try:
            arena = await asyncio.to_thread(arena_server, port=port, local_bots={"late": "tok-late"})
            try:
                await asyncio.to_thread(arena.call, arena.arena.host.wait_connected(["late"], 15))
            finally:
                await asyncio.to_thread(arena.call, arena.arena.stop())   # what `arena serve` does on SIGTERM
        except BaseException:
            proc.kill()   # do not leave it retrying for 20 s
            await proc.wait()
            raise
        return await finish(proc, 15)

    code, lines = asyncio.run(go())
    assert code == 0, lines
    assert sum("retrying" in line for line in lines) == 1, lines
    assert any("connected to 127.0.0.1:" in line and " after " in line for line in lines), lines
    assert "ended the session (it is stopping)" in lines[-1]


def test_a_bad_token_ends_the_bot_process_with_2_without_retrying(arena_server: Any) -> None:
    arena = arena_server()

    async def go() -> tuple[int, list[str]]:
        # -v: every retry would be logged ("next attempt in ..."), so no such line is the proof.
        proc = await start_bot("--arena", arena.address, "--token", "not-a-token", "-v")
        return await finish(proc, 60)

    code, lines = asyncio.run(go())
    assert code == 2
    assert [line for line in lines if "refused by the arena: UNAUTHENTICATED" in line], lines
    assert not [line for line in lines if "retry" in line or "next attempt" in line], lines


def test_bot_process_exits_cleanly_on_sigterm() -> None:
    """A real bot process waiting for matches leaves promptly and with status 0: well
    before its session would end by itself (the arena holds it open for 600 s)."""

    async def go() -> tuple[int, float]:
        async def idle(s: FakeStream) -> None:
            await asyncio.sleep(600)

        arena = FakeArena([idle])
        server, port = await serve(arena)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(ROOT / "sample_bots" / "random_bot.py"),
                "--arena", f"127.0.0.1:{port}", "--token", TOKEN,
                stderr=asyncio.subprocess.PIPE)
            deadline = time.monotonic() + 60
            while arena.connections == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert arena.connections == 1, "the bot never connected"
            stopped_at = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 60)
            return code, time.monotonic() - stopped_at
        finally:
            await server.stop(None)

    code, took = asyncio.run(go())
    assert code == 0
    assert took < 30   # not the 600 s of the session: the slack is for a busy machine


# ---------------------------------------------------------------- the real arena


def match_of_bot_processes(arena_server: Any, scripts: dict[str, str], bots: list[str],
                           config: dict[str, Any]) -> Any:
    """One match on a real arena between SDK bot processes, one per name of ``scripts``
    (its script's path), each taking up to 2 seats; its record once they are stopped."""
    arena = arena_server(local_bots={name: f"tok-{name}" for name in scripts})
    procs = [subprocess.Popen([sys.executable, script, "--arena", arena.address, "--token", f"tok-{name}",
                               "--max-matches", "2"],
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
             for name, script in scripts.items()]
    try:
        return arena.run_match(bots, bot_seeds=list(range(1, len(bots) + 1)), config=config)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)


def test_sdk_bot_plays_a_full_match_on_the_real_arena(arena_server: Any) -> None:
    """Two SDK bot processes (one seated twice via max_matches) finish a match with no faults."""
    record = match_of_bot_processes(
        arena_server, {name: str(ROOT / "sample_bots" / f"{name}_bot.py") for name in ("random", "heuristic")},
        ["random", "heuristic", "random", "heuristic"], {"variant": "classic", "players": 4, "seed": 11, "rounds": 5})
    assert record.status == "completed"
    assert record.faults == []
    assert len(record.totals) == 4


# An events-only SDK bot: it keeps its hand from the events alone, and fails its
# decision (a bot_error fault) if an observation comes or an option is not in that hand.
TRACKER = """
from arena.sdk import Bot, run

class Tracker(Bot):
    name = "tracker"
    events_only = True

    def on_match_start(self, info):
        self.hand = set()

    def on_events(self, events):
        for event in events:
            if event["type"] == "hand":
                self.hand = set(event["cards"])
            elif event["type"] == "play" and event["seat"] == self.match.seat:
                self.hand.discard(event["card"])

    def play(self, obs, options):
        if obs:
            raise ValueError("an observation came")
        if not set(options) <= self.hand:
            raise ValueError(f"options {options} are not all in the hand {sorted(self.hand)}")
        return sorted(options)[0]

run(Tracker)
"""


def test_an_events_only_sdk_bot_plays_from_the_events_alone(arena_server: Any, tmp_path: Any) -> None:
    script = tmp_path / "tracker.py"
    script.write_text(TRACKER)
    record = match_of_bot_processes(
        arena_server, {"tracker": str(script), "random": str(ROOT / "sample_bots" / "random_bot.py")},
        ["tracker", "random", "random"], {"variant": "classic", "players": 3, "seed": 12, "rounds": 6})
    assert record.status == "completed"
    assert record.faults == []     # every one of its decisions found its options in the hand it kept


def test_sdk_bot_reconnects_into_its_seat_on_the_real_arena(arena_server: Any) -> None:
    """The network drops mid-match; the bot reconnects within the grace period, gets its
    seat back and the match completes with the bot still playing (only the disconnect
    itself is recorded as a fault)."""
    from arena.records import MatchSpec

    arena = arena_server(grace=60.0, local_bots={"flaky": "tok-flaky"})

    class SlowRandom(sdk.Bot):
        name = "flaky"

        def play(self, obs: dict[str, Any], options: list[str]) -> str:
            time.sleep(0.002)  # stretch the match a little so the drop lands inside it
            return self.rng.choice(options)

    async def go() -> tuple[Any, int, int, float]:
        proxy = DroppingProxy(arena.port)
        proxy_port = await proxy.start()
        client = sdk.BotClient(bot=SlowRandom, arena=f"127.0.0.1:{proxy_port}", token="tok-flaky", max_matches=4)
        bot_task = asyncio.create_task(client.run())
        try:
            spec = MatchSpec(config={"variant": "classic", "players": 3, "seed": 5, "rounds": 12},
                             bots=["flaky"] * 3)
            record = await proxy.run_match_dropping_midway(arena, spec)
            for _ in range(200):  # MatchEnded may still be on its way to the bot
                if not client.seats:
                    break
                await asyncio.sleep(0.01)
            assert proxy.dropped_at is not None
            back_after = min(t for t in proxy.accepted_at if t > proxy.dropped_at) - proxy.dropped_at
            return record, proxy.accepted, len(client.seats), back_after
        finally:
            client.stop()
            await asyncio.wait_for(bot_task, 10)
            await proxy.stop()

    record, connections, open_seats, back_after = asyncio.run(go())
    assert record.status == "completed"
    assert connections >= 2
    # Back well inside the 60 s grace (half of it: the slack is for a busy machine); that the
    # retries start 0.1 s apart is counted by the give-up test's attempts.
    assert back_after < 30.0
    assert not any(record.forfeited)
    assert {f.kind for f in record.faults} == {"disconnect"}
    assert open_seats == 0
