"""Hostile clients against a real arena: each probe found by a black-box attack on
``arena serve`` (issue 8), as a test. Real server on 127.0.0.1 port 0, a real SQLite
store in a temp dir, honest bots as real processes, and raw grpc clients in the test.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bots.harness import ArenaThread, assert_played_honestly, read_report, seat_faults
from factories import ROOT

from arena.records import MatchSpec
from arena.referee import connections, spectators
from arena.store import Store
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

HONEST = ["honest0", "honest1", "honest2"]
FAST = {"move_time": 0.2, "time_bank": 0.3}
# How long a test waits for what must happen (a message, a match's end): generous, for a
# busy machine; a passing test never waits it out.
WAIT = 60.0


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = Store(str(tmp_path_factory.mktemp("hostile") / "arena.db"))
    yield store
    store.close()


@pytest.fixture(scope="module")
def arena(store: Store, module_arena_server: Any) -> ArenaThread:   # the store outlives the arena
    return module_arena_server(bots=HONEST, store=store, move_time=0.2, time_bank=0.3, max_faults=3, grace=1.0)


@pytest.fixture()
def channel(arena: ArenaThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(arena.address) as channel:
        yield channel


class RawBot:
    """A Play stream driven by the test: put messages in, read what the arena sends."""

    def __init__(self, channel: grpc.Channel, token: str, hello: pb.Hello | None) -> None:
        self.outgoing: queue.Queue[Any] = queue.Queue()
        if hello is not None:
            self.outgoing.put(pb.BotMessage(hello=hello))
        self.call = pb_grpc.ArenaStub(channel).Play(iter(self.outgoing.get, None), metadata=bearer(token))
        self.received: queue.Queue[Any] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.received.put(message)
        except grpc.RpcError as error:
            self.received.put(error)
        else:
            self.received.put(None)

    def send(self, message: pb.BotMessage) -> None:
        self.outgoing.put(message)

    def next(self, timeout: float = WAIT) -> Any:
        """The next message, an RpcError when the call ended with a status, None at a clean end."""
        return self.received.get(timeout=timeout)

    def until(self, which: str, timeout: float = WAIT) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            message = self.next(max(0.01, deadline - time.monotonic()))
            if message is None or isinstance(message, grpc.RpcError) or message.WhichOneof("msg") == which:
                return message

    def close(self) -> None:
        self.outgoing.put(None)
        self.call.cancel()


def answer_until_the_end(bot: RawBot) -> Any:
    """Answer every request with its first option until MatchEnded; return that message."""
    while True:
        message = bot.next()
        assert message is not None and not isinstance(message, grpc.RpcError), message
        if message.WhichOneof("msg") == "match_ended":
            return message
        if message.WhichOneof("msg") == "request":
            request = message.request
            bot.send(pb.BotMessage(action=pb.Action(request_id=request.request_id, option=request.options[0])))


def registered(store: Store, name: str) -> str:
    return store.register_bot(name, rotate=name in {b.name for b in store.list_bots()})


# ---------------------------------------------------------------------- Hello


@pytest.mark.parametrize("hello, code, words", [
    (pb.Hello(name="probe", variants=["poker"]), grpc.StatusCode.INVALID_ARGUMENT, "accepted: classic, extreme"),
    (pb.Hello(name="probe", variants=["CLASSIC"]), grpc.StatusCode.INVALID_ARGUMENT, "accepted: classic, extreme"),
    (pb.Hello(name="x" * 100_000), grpc.StatusCode.INVALID_ARGUMENT, "at most 64 characters"),
    (pb.Hello(name="probe", version="v" * 100_000), grpc.StatusCode.INVALID_ARGUMENT, "at most 128 characters"),
    (pb.Hello(name="y" * 60), grpc.StatusCode.PERMISSION_DENIED, "belongs to bot 'probe'"),
])
def test_hello_is_validated_and_refusals_stay_short(channel: grpc.Channel, store: Store, hello: pb.Hello,
                                                    code: grpc.StatusCode, words: str) -> None:
    bot = RawBot(channel, registered(store, "probe"), hello)
    refused = bot.next()
    assert isinstance(refused, grpc.RpcError), refused
    assert refused.code() == code and words in refused.details()
    assert len(refused.details()) < 200          # never the client's field echoed back whole
    bot.close()


def test_max_matches_is_capped_and_the_name_may_be_left_out(channel: grpc.Channel, store: Store) -> None:
    bot = RawBot(channel, registered(store, "greedy-slots"), pb.Hello(max_matches=1_000_000))
    welcome = bot.next()
    assert welcome.WhichOneof("msg") == "welcome"
    assert welcome.welcome.bot_name == "greedy-slots"       # the token says who it is
    assert welcome.welcome.max_matches == connections.MAX_MATCHES_PER_STREAM
    bot.close()


# ---------------------------------------------------------------------- tokens


@pytest.mark.parametrize("how", ["rotate", "remove"])
def test_a_rotated_or_removed_token_ends_live_streams(arena: ArenaThread, channel: grpc.Channel, store: Store,
                                                      how: str) -> None:
    name = f"revoked-{how}"
    bot = RawBot(channel, registered(store, name), pb.Hello(name=name))
    assert bot.next().WhichOneof("msg") == "welcome"
    store.register_bot(name, rotate=True) if how == "rotate" else store.remove_bot(name)
    # The referee looks again every TOKEN_CHECK_SECONDS (arena.referee.auth); a stream it did not end
    # would run on until WAIT has passed.
    ended = bot.until("never")
    assert isinstance(ended, grpc.RpcError) and ended.code() == grpc.StatusCode.UNAUTHENTICATED
    assert name not in arena.arena.host.connected_bots()


# ---------------------------------------------------------------------- strays and floods


def test_a_stray_with_no_open_request_is_charged_to_no_seat(arena: ArenaThread, channel: grpc.Channel,
                                                            store: Store) -> None:
    bot = RawBot(channel, registered(store, "stray-idle"), pb.Hello(name="stray-idle"))
    assert bot.next().WhichOneof("msg") == "welcome"
    match = arena.submit(arena.arena.host.run_match(MatchSpec(
        config={"variant": "classic", "players": 4, "seed": 31, "rounds": 1}, bots=["stray-idle", *HONEST])))
    answer_until_the_end(bot)
    record = match.result(WAIT)
    assert seat_faults(record, 0) == []
    # Between matches: nothing is open. A stray is told, and charged to nobody.
    bot.send(pb.BotMessage(hello=pb.Hello(name="stray-idle")))
    notice = bot.until("fault").fault
    assert notice.match_id == "" and notice.faults == 0 and not notice.forfeited
    assert arena.arena.host.running == {}      # and no match was touched
    bot.close()


def test_a_flood_closes_the_stream_with_one_fault(arena: ArenaThread, channel: grpc.Channel,
                                                                   store: Store) -> None:
    bot = RawBot(channel, registered(store, "flood"), pb.Hello(name="flood"))
    assert bot.next().WhichOneof("msg") == "welcome"
    match = arena.submit(arena.arena.host.run_match(MatchSpec(
        config={"variant": "classic", "players": 4, "seed": 33, "rounds": 2}, bots=["flood", *HONEST], **FAST)))
    request = bot.until("request").request
    # 10,000 answers naming a request that is not open (a flood of "late answers"): each
    # is ignored, but each draws on the stream's allowance.
    for _ in range(10_000):
        bot.send(pb.BotMessage(action=pb.Action(request_id=request.request_id - 1, option="b1")))
    ended = bot.until("never")
    assert isinstance(ended, grpc.RpcError) and ended.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "flood" in ended.details()
    record = match.result(WAIT)
    faults = [f for f in record.faults if f.seat == 0]
    # One recorded fault: the closed stream, saying why; the seat forfeits after the grace.
    assert [f.kind for f in faults] == ["disconnect"] and "flood" in faults[0].message
    assert record.forfeited[0] and record.status == "completed"
    assert_played_honestly(record, [1, 2, 3])
    # Fault replies were bounded: none for ignored answers.
    left = []
    while not bot.received.empty():
        left.append(bot.received.get())
    assert not [m for m in left if not isinstance(m, grpc.RpcError) and m is not None
                and m.WhichOneof("msg") == "fault"]


# ---------------------------------------------------------------------- forfeits and reconnects


def test_a_bot_that_comes_back_after_forfeiting_hears_the_end(arena: ArenaThread, tmp_path: Path) -> None:
    report = tmp_path / "late.jsonl"
    # Away 1.6 s, the grace period is 1 s: the seat has forfeited when it returns.
    arena.start_bot("reconnect_bot.py", "late", "--answers", "1", "--away-ms", "1600", report=report)
    record = arena.run_match(["late", *HONEST], config={"variant": "classic", "players": 4, "seed": 34,
                                                        "rounds": 3}, **FAST)
    assert record.forfeited[0] and seat_faults(record, 0) == ["disconnect"]
    deadline = time.monotonic() + WAIT
    while not [m for m in read_report(report) if m.get("session") == 2 and m["msg"] == "match_ended"]:
        assert time.monotonic() < deadline, "the returning bot never got MatchEnded"
        time.sleep(0.05)
    second = [m for m in read_report(report) if m.get("session") == 2]
    assert [m["msg"] for m in second] == ["welcome", "match_started", "match_ended"]
    assert second[-1]["match_id"] == record.match_id and second[-1]["forfeited"]


# ---------------------------------------------------------------------- secrets


def test_match_started_carries_no_deal_seed(arena: ArenaThread, channel: grpc.Channel, store: Store) -> None:
    bot = RawBot(channel, registered(store, "seedless"), pb.Hello(name="seedless"))
    assert bot.next().WhichOneof("msg") == "welcome"
    deal_seed = 987_654_321_987
    match = arena.submit(arena.arena.host.run_match(MatchSpec(
        config={"variant": "classic", "players": 4, "seed": deal_seed, "rounds": 1}, bots=["seedless", *HONEST])))
    started = bot.until("match_started").match_started
    options = json.loads(started.options_json)
    assert "seed" not in options and options["rounds"] == 1
    assert started.seed != deal_seed
    request = bot.until("request").request
    assert str(deal_seed) not in str(started) + str(request)
    bot.send(pb.BotMessage(action=pb.Action(request_id=request.request_id, option=request.options[0])))
    answer_until_the_end(bot)
    match.result(WAIT)
    bot.close()


def test_a_bot_never_plays_one_deal_twice_at_once(arena: ArenaThread) -> None:
    # Two rotations of one deal asked for at once: the second waits for the first.
    config = {"variant": "classic", "players": 3, "seed": 35, "rounds": 2}
    first = arena.submit(arena.arena.host.run_match(MatchSpec(config=config, bots=HONEST, match_id="deal-r0")))
    second = arena.submit(arena.arena.host.run_match(MatchSpec(config=config, bots=HONEST[1:] + HONEST[:1],
                                                          match_id="deal-r1")))
    one, two = first.result(WAIT), second.result(WAIT)
    assert one.finished_at <= two.started_at


# ---------------------------------------------------------------------- spectators


def test_spectators_are_capped_per_match(arena: ArenaThread, channel: grpc.Channel, monkeypatch) -> None:
    monkeypatch.setattr(spectators, "MAX_SPECTATORS_PER_MATCH", 2)
    arena.start_bot("slow_bot.py", "dawdle", "--slow", "50", "--sleep-ms", "100")
    match = arena.submit(arena.arena.host.run_match(MatchSpec(
        config={"variant": "classic", "players": 3, "seed": 36, "rounds": 2}, bots=["dawdle", *HONEST[:2]],
        match_id="crowded", move_time=1.0, time_bank=1.0)))
    while "crowded" not in arena.arena.host.running:
        time.sleep(0.01)
    stub = pb_grpc.ArenaStub(channel)
    watching = [stub.Spectate(pb.SpectateRequest(match_id="crowded")) for _ in range(2)]
    firsts = [next(w) for w in watching]
    assert all(f.events_json for f in firsts)
    with pytest.raises(grpc.RpcError) as full:
        next(stub.Spectate(pb.SpectateRequest(match_id="crowded")))
    assert full.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    for w in watching:
        w.cancel()
    match.result(WAIT)


def test_seats_handed_back_respect_the_streams_capacity_and_variants(arena: ArenaThread, channel: grpc.Channel,
                                                                     store: Store) -> None:
    # Found by the fuzzer: a dropped stream's seats went to the bot's other stream even
    # when that one was full, or did not play the variant.
    token = registered(store, "split")
    both = RawBot(channel, token, pb.Hello(max_matches=1))
    assert both.next().WhichOneof("msg") == "welcome"
    classic_only = RawBot(channel, token, pb.Hello(max_matches=1, variants=["classic"]))
    assert classic_only.next().WhichOneof("msg") == "welcome"
    slow = {"move_time": 5.0, "time_bank": 0.0}
    extreme = arena.submit(arena.arena.host.run_match(MatchSpec(
        config={"variant": "extreme", "players": 3, "seed": 37, "rounds": 1}, bots=["split", *HONEST[:2]],
        match_id="split-extreme", **slow)))
    classic = arena.submit(arena.arena.host.run_match(MatchSpec(
        config={"variant": "classic", "players": 3, "seed": 38, "rounds": 2}, bots=["split", *HONEST[:2]],
        match_id="split-classic", **slow)))
    assert both.until("match_started").match_started.match_id == "split-extreme"
    assert classic_only.until("match_started").match_started.match_id == "split-classic"
    both.close()                        # its extreme seat has nowhere to go: it waits, then forfeits
    time.sleep(0.5)
    streams = arena.arena.host.roster.by_name["split"]
    assert [sorted(r.match_id for r in c.matches()) for c in streams] == [["split-classic"]]
    classic_only.close()
    assert extreme.result(WAIT).forfeited[0] and classic.result(WAIT).forfeited[0]
    seen = []
    while not classic_only.received.empty():
        message = classic_only.received.get()
        if message is not None and not isinstance(message, grpc.RpcError):
            seen.append(message)
    assert not [m for m in seen if m.WhichOneof("msg") == "match_started"
                and m.match_started.match_id == "split-extreme"]


def test_the_readme_sdk_bot_plays_under_whatever_name_its_token_has(arena: ArenaThread, store: Store) -> None:
    # The README's example hard-codes name = "random"; registered as "my-bot", it must
    # still connect (the SDK names no bot in Hello unless told to) and play.
    token = registered(store, "my-bot")
    script = ROOT / "sample_bots" / "random_bot.py"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_NAME"}
    bot = subprocess.Popen([sys.executable, str(script), "--arena", arena.address, "--token", token], env=env)
    try:
        arena.call(arena.arena.host.wait_connected(["my-bot"], 20))
        record = arena.run_match(["my-bot", *HONEST[:2]], config={"variant": "classic", "players": 3, "seed": 39,
                                                                 "rounds": 2})
        assert_played_honestly(record, [0, 1, 2])
    finally:
        bot.terminate()
        bot.wait(10)


def test_two_streams_with_one_token_are_both_welcomed_and_either_plays(arena: ArenaThread, channel: grpc.Channel,
                                                                        store: Store) -> None:
    # A bot may multiplex: several streams under one token are one bot with more room.
    token = registered(store, "twin")
    streams = [RawBot(channel, token, pb.Hello(variants=["classic"], max_matches=1)) for _ in range(2)]
    try:
        for stream in streams:
            welcome = stream.until("welcome")
            assert welcome.welcome.bot_name == "twin"
        future = arena.submit(arena.arena.host.run_match(MatchSpec(
            config={"variant": "classic", "players": 3, "seed": 41, "rounds": 2}, bots=["twin", *HONEST[:2]],
            match_id="twin-1", **FAST)))
        deadline = time.monotonic() + WAIT
        playing = None
        while playing is None and time.monotonic() < deadline:
            for stream in streams:
                try:
                    message = stream.received.get(timeout=0.05)
                except queue.Empty:
                    continue
                if message is not None and not isinstance(message, grpc.RpcError) \
                        and message.WhichOneof("msg") == "match_started":
                    playing = stream
        assert playing is not None, "neither stream was seated"
        ended = answer_until_the_end(playing)
        assert ended.match_ended.match_id == "twin-1"
        record = future.result(WAIT)
        assert record.status == "completed" and not seat_faults(record, 0)
    finally:
        for stream in streams:
            stream.close()


def test_every_refused_stream_is_logged_with_its_peer(arena_server: Any, store: Store,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """The first refused stream of a peer, or of a bot, is logged at once with its peer; the
    rest of the next 10 s are summarised in one line (tests/referee/test_rate_limits.py),
    so this takes an arena of its own that has refused nothing yet."""
    fresh = arena_server(store=store)
    registered(store, "probe")
    caplog.set_level("WARNING", logger="arena.referee.auth")
    with grpc.insecure_channel(fresh.address) as channel:
        for token, hello in (("not-a-token", pb.Hello()),
                             (registered(store, "probe"), pb.Hello(name="someone-else"))):
            refused = RawBot(channel, token, hello).next()
            assert isinstance(refused, grpc.RpcError)
    deadline = time.monotonic() + WAIT
    while len([r for r in caplog.records if "refused a Play stream" in r.getMessage()]) < 2:
        assert time.monotonic() < deadline, caplog.text
        time.sleep(0.05)
    lines = [r.getMessage() for r in caplog.records if "refused a Play stream" in r.getMessage()]
    assert all("127.0.0.1" in line for line in lines), lines
    assert "unknown bot token" in lines[0] and "bot probe" in lines[1] and "PERMISSION_DENIED" in lines[1]
