"""The public calls' rate limits, from real clients against a real server on 127.0.0.1
(port 0) and on its Unix socket: an excess gets RESOURCE_EXHAUSTED naming the limit,
connections and peers draw on allowances of their own, and refused Play streams leave
one summary line on the console, not one per stream.

The limits are small here (``SMALL``) so a few calls reach them; the defaults are in
``arena.referee.rate_limits`` and docs/serve.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bots.harness import ArenaThread

from arena.referee.rate_limits import CallLimit, Limiter, Rate, RateLimits, RefusalLog, peer_host
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

# Per connection 3 at once, per peer 5 at once; refilled slowly enough that a test's few
# calls never see a refill (0.01 a second: one more call in 100 s).
SLOW = 0.01
SMALL = RateLimits(
    list_matches=CallLimit("ListMatches calls", Rate(3, SLOW), Rate(5, SLOW)),
    get_leaderboard=CallLimit("GetLeaderboard calls", Rate(3, SLOW), Rate(5, SLOW)),
    spectate=CallLimit("Spectate calls", Rate(3, SLOW), Rate(5, SLOW)),
    refused_play=CallLimit("refused Play streams", Rate(3, SLOW), Rate(5, SLOW)),
    refusal_delay=0.01,
    summary_seconds=1.0,
)


@pytest.fixture()
def arena(arena_server: Any, socket_path: Path) -> ArenaThread:
    """A limited arena, also listening on a Unix socket (as the tournament's referee does)."""
    started: ArenaThread = arena_server(rate_limits=SMALL)
    started.call(started.arena.stop(0))
    port = started.call(started.arena.start("127.0.0.1", 0, unix_socket=socket_path))
    started.address = f"127.0.0.1:{port}"
    return started


def list_matches(channel: grpc.Channel) -> grpc.StatusCode:
    try:
        pb_grpc.ArenaStub(channel).ListMatches(pb.ListMatchesRequest(), timeout=10)
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


def play_with(channel: grpc.Channel, token: str | None) -> grpc.RpcError:
    """A Play stream that says Hello with ``token``: the error that ends it."""
    metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
    call = pb_grpc.ArenaStub(channel).Play(iter([pb.BotMessage(hello=pb.Hello(name="x"))]), metadata=metadata,
                                           timeout=10)
    with pytest.raises(grpc.RpcError) as refused:
        list(call)
    return refused.value


# Channels of one process to the same address share one connection unless each has a
# subchannel pool of its own.
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


@pytest.fixture()
def channels(arena: ArenaThread) -> Iterator[list[grpc.Channel]]:
    """Three channels to the arena's TCP port, each on a connection of its own."""
    opened = [grpc.insecure_channel(arena.address, options=OWN_CONNECTION) for _ in range(3)]
    try:
        yield opened
    finally:
        for channel in opened:
            channel.close()


def test_one_call_over_a_connections_allowance_is_resource_exhausted(channels: list[grpc.Channel]) -> None:
    codes = [list_matches(channels[0]) for _ in range(4)]
    assert codes == [grpc.StatusCode.OK] * 3 + [grpc.StatusCode.RESOURCE_EXHAUSTED]
    with pytest.raises(grpc.RpcError) as refused:
        pb_grpc.ArenaStub(channels[0]).ListMatches(pb.ListMatchesRequest(), timeout=10)
    assert refused.value.details() == ("rate limit: at most 3 at once and 0.01 a second ListMatches calls per "
                                       "connection, 5 at once and 0.01 a second per peer (ipv4:127.0.0.1); "
                                       "try again later")


def test_another_connection_has_its_own_allowance_and_the_peer_one_for_all(channels: list[grpc.Channel]) -> None:
    first, second, third = channels
    assert [list_matches(first) for _ in range(3)] == [grpc.StatusCode.OK] * 3
    assert list_matches(first) == grpc.StatusCode.RESOURCE_EXHAUSTED
    # A second connection (another port of 127.0.0.1) is not held to the first one's limit,
    # but to the peer's: 5 calls of 127.0.0.1 in all.
    assert [list_matches(second) for _ in range(3)] == [grpc.StatusCode.OK] * 2 + [grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert list_matches(third) == grpc.StatusCode.RESOURCE_EXHAUSTED
    # Each call has an allowance of its own.
    stub = pb_grpc.ArenaStub(third)
    with pytest.raises(grpc.RpcError) as no_store:
        stub.GetLeaderboard(pb.LeaderboardRequest(), timeout=10)
    assert no_store.value.code() == grpc.StatusCode.FAILED_PRECONDITION   # this arena has no database


def test_the_unix_socket_is_a_peer_of_its_own(arena: ArenaThread, channels: list[grpc.Channel],
                                              socket_path: Path) -> None:
    """grpc names every Unix-socket connection ``unix:``: they share one allowance, apart
    from the TCP peers'."""
    assert [list_matches(channels[0]) for _ in range(4)][-1] == grpc.StatusCode.RESOURCE_EXHAUSTED
    unix = f"unix:{socket_path}"
    with grpc.insecure_channel(unix, options=OWN_CONNECTION) as one, \
            grpc.insecure_channel(unix, options=OWN_CONNECTION) as two:
        assert [list_matches(one) for _ in range(3)] == [grpc.StatusCode.OK] * 3
        assert list_matches(two) == grpc.StatusCode.RESOURCE_EXHAUSTED   # the same peer and "connection"


def test_spectate_is_limited(channels: list[grpc.Channel]) -> None:
    codes = []
    for _ in range(4):
        try:
            list(pb_grpc.ArenaStub(channels[0]).Spectate(pb.SpectateRequest(match_id="none"), timeout=10))
        except grpc.RpcError as error:
            codes.append(error.code())
    assert codes == [grpc.StatusCode.NOT_FOUND] * 3 + [grpc.StatusCode.RESOURCE_EXHAUSTED]


def test_bad_token_streams_past_the_limit_are_refused_and_summarised(
        arena: ArenaThread, channels: list[grpc.Channel], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="arena.referee")
    arena.call(arena.arena.host.wait_connected([], 1))
    errors = [play_with(channels[0], None)] + [play_with(channels[0], "not-a-token") for _ in range(9)]
    codes = [error.code() for error in errors]
    assert codes == [grpc.StatusCode.UNAUTHENTICATED] * 3 + [grpc.StatusCode.RESOURCE_EXHAUSTED] * 7
    assert "refused Play streams per connection" in errors[-1].details()
    # A bot with a good token is still welcomed from the same connection.
    arena.arena.host.add_local_bot("good", "good-token")
    call = pb_grpc.ArenaStub(channels[0]).Play(iter([pb.BotMessage(hello=pb.Hello(name="good"))]),
                                               metadata=(("authorization", "Bearer good-token"),), timeout=10)
    assert next(call).WhichOneof("msg") == "welcome"
    call.cancel()
    arena.call(arena.arena.stop(0))          # writes the summary that is due
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused ")]
    assert lines == ["refused a Play stream from ipv4:127.0.0.1: UNAUTHENTICATED missing or unknown bot token",
                     "refused 9 more Play streams from ipv4:127.0.0.1 in the last 0 s (2 with a bad token, "
                     "7 over the rate limit)"], lines


def test_the_summary_comes_once_an_interval() -> None:
    clock = [0.0]
    logged: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    logger = logging.getLogger("test-refusals")
    logger.addHandler(Collect())
    refusals = RefusalLog(logger, interval=10.0, clock=lambda: clock[0])
    for second in range(25):
        clock[0] = float(second)
        for _ in range(10):
            refusals.refused("unix:", "with a bad token", "UNAUTHENTICATED missing or unknown bot token")
        refusals.flush()
    # The first at once; the rest of seconds 0 to 10 when 10 s have passed, then seconds 11 to 20.
    assert logged == ["refused a Play stream from unix: UNAUTHENTICATED missing or unknown bot token",
                      "refused 109 more Play streams from unix: in the last 10 s (109 with a bad token)",
                      "refused 100 more Play streams from unix: in the last 10 s (100 with a bad token)"]


def test_a_bucket_refills_and_forgets_its_idle_callers() -> None:
    clock = [0.0]
    limiter = Limiter(CallLimit("calls", Rate(2, 4.0), Rate(10, 100.0)), lambda: clock[0])
    assert [limiter.take("ipv4:10.0.0.1:1") is None for _ in range(3)] == [True, True, False]
    clock[0] = 0.25                                   # one token back (4 a second)
    assert [limiter.take("ipv4:10.0.0.1:1") is None for _ in range(2)] == [True, False]
    assert peer_host("ipv4:10.0.0.1:1") == "ipv4:10.0.0.1"
    for port in range(100):                           # a hundred short connections
        limiter.take(f"ipv4:10.0.0.2:{port}")
    clock[0] = 10.0                                   # all refilled: forgotten at the next spend
    limiter.take("ipv4:10.0.0.3:1")
    assert len(limiter._connections) == 1 and len(limiter._peers) == 1
