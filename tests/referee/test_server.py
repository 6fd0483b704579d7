"""The gRPC surface of the arena, from real clients: auth, seats, privacy, health,
reflection, spectating, listing, and the organiser calls.

One real server on 127.0.0.1 (port 0) for the module (``module_arena_server``), with
three honest bot processes.
The test's own clients are ordinary synchronous grpc clients on the test thread.
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bots.harness import ADMIN_TOKEN, ArenaThread, assert_played_honestly, read_report, seat_faults
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.records import MatchRecord, MatchSpec
from arena.referee.server import SeatingError
from arena.wire import calls, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import replay_record

HONEST = ["honest0", "honest1", "honest2"]


@pytest.fixture(scope="module")
def arena(module_arena_server: Any) -> ArenaThread:
    return module_arena_server(bots=HONEST, move_time=0.5, time_bank=1.0, max_faults=3, grace=1.0)


@pytest.fixture()
def channel(arena: ArenaThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(arena.address) as channel:
        yield channel


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def open_play(channel: grpc.Channel, token: str | None, name: str) -> tuple[Any, queue.Queue[Any]]:
    """A raw Play call that has sent Hello; feed more messages through the returned queue."""
    outgoing: queue.Queue[Any] = queue.Queue()
    outgoing.put(pb.BotMessage(hello=pb.Hello(name=name, version="t", max_matches=1)))
    metadata = bearer(token) if token is not None else ()
    call = pb_grpc.ArenaStub(channel).Play(iter(outgoing.get, None), metadata=metadata)
    return call, outgoing


# ---------------------------------------------------------------------- authentication


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_a_bad_or_missing_token_is_refused(channel: grpc.Channel, token: str | None) -> None:
    call, outgoing = open_play(channel, token, "honest0")
    with pytest.raises(grpc.RpcError) as refused:
        next(call)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    outgoing.put(None)


def test_hello_must_name_the_tokens_bot(channel: grpc.Channel) -> None:
    call, outgoing = open_play(channel, "token-honest0", "impostor")
    with pytest.raises(grpc.RpcError) as refused:
        next(call)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    outgoing.put(None)


def test_a_stream_that_never_says_hello_is_closed(arena_server: Any) -> None:
    impatient = arena_server(local_bots={"honest0": "token-honest0"}, hello_timeout=0.5)
    with grpc.insecure_channel(impatient.address) as channel:
        outgoing: queue.Queue[Any] = queue.Queue()   # nothing is ever sent
        call = pb_grpc.ArenaStub(channel).Play(iter(outgoing.get, None), metadata=bearer("token-honest0"))
        with pytest.raises(grpc.RpcError) as closed:
            next(call)
        assert closed.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        outgoing.put(None)


def test_a_good_token_is_welcomed(arena: ArenaThread, channel: grpc.Channel) -> None:
    call, outgoing = open_play(channel, "token-honest1", "honest1")
    first = next(call)
    assert first.WhichOneof("msg") == "welcome"
    assert first.welcome.bot_name == "honest1" and first.welcome.protocol_version == 1
    outgoing.put(None)
    call.cancel()


def test_organiser_calls_need_the_admin_token(channel: grpc.Channel) -> None:
    stub = pb_grpc.ArenaStub(channel)
    for metadata in ((), bearer("token-honest0")):
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListBots(pb.ListBotsRequest(), metadata=metadata)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    bots = {bot.name: bot for bot in stub.ListBots(pb.ListBotsRequest(), metadata=bearer(ADMIN_TOKEN)).bots}
    assert set(HONEST) <= set(bots)
    assert bots["honest0"].connections >= 1 and bots["honest0"].free_slots >= 1


def test_run_match_over_grpc(channel: grpc.Channel) -> None:
    stub = pb_grpc.ArenaStub(channel)
    request = pb.RunMatchRequest(config_json=json.dumps({"variant": "classic", "players": 3, "seed": 9, "rounds": 2}),
                                 bots=HONEST, bot_seeds=[1, 2, 3], tournament_id="t1", game_index=7)
    with pytest.raises(grpc.RpcError) as refused:
        stub.RunMatch(request)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    reply = stub.RunMatch(request, metadata=bearer(ADMIN_TOKEN))
    record, stored = calls.match_played(reply)
    assert record.status == "completed" and record.bots == HONEST and not stored   # an arena without a store
    assert record.tournament_id == "t1" and record.game_index == 7
    # The deprecated JSON form is still filled, with the same record, for organisers that read it.
    assert MatchRecord.from_json(json.loads(reply.record_json)) == record
    with pytest.raises(grpc.RpcError) as bad:
        stub.RunMatch(pb.RunMatchRequest(config_json='{"variant": "poker"}', bots=HONEST),
                      metadata=bearer(ADMIN_TOKEN))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# ---------------------------------------------------------------------- seats and privacy


def test_a_bot_cannot_answer_another_seats_request(arena: ArenaThread, tmp_path: Path) -> None:
    # Hidden bids: every seat has an open request at once, with consecutive ids in the
    # bidding order 1, 2, 3, 0. The cheat in seat 1 answers with seat 2's request id.
    witness_report, cheat_report = tmp_path / "witness.jsonl", tmp_path / "cheat.jsonl"
    arena.start_bot("cheat_bot.py", "cheat", "--cheats", "1", "--offset", "1", report=cheat_report)
    arena.start_bot("random_bot.py", "witness", report=witness_report)
    record = arena.run_match(["honest0", "cheat", "witness", "honest1"], config={
        "variant": "classic", "players": 4, "seed": 11, "rounds": 2, "bidding": "hidden"})
    cheat_first = next(m for m in read_report(cheat_report) if m["msg"] == "request")
    witness_ids = {m["request_id"] for m in read_report(witness_report) if m["msg"] == "request"}
    assert cheat_first["request_id"] + 1 in witness_ids     # it really named seat 2's request
    assert seat_faults(record, 1) == ["unexpected"]
    assert record.faults[0].request_id == cheat_first["request_id"]
    assert_played_honestly(record, [0, 2, 3])


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_observations_on_the_wire_hold_no_other_hand(arena: ArenaThread, tmp_path: Path, variant: str) -> None:
    report = tmp_path / f"observer-{variant}.jsonl"
    arena.start_bot("random_bot.py", f"observer-{variant}", report=report)
    config = {"variant": variant, "players": 3, "seed": 21, "rounds": 2 if variant == "classic" else 1}
    record = arena.run_match([f"observer-{variant}", "honest0", "honest1"], config=config)
    assert_played_honestly(record, [0, 1, 2])
    requests = [m for m in read_report(report) if m["msg"] == "request"]
    own_turns = [i for i, (seat, _) in enumerate(record.actions) if seat == 0]
    assert len(requests) == len(own_turns)
    hidden_cards_seen = 0
    for request, turn in zip(requests, own_turns):
        game = replay_record(record.config, record.actions[:turn])
        # Exactly the engine's view of seat 0 at that moment ...
        assert request["observation"] == json.loads(json.dumps(game.observe(0)))
        # ... which holds none of the cards in the other players' hands.
        others = set(game.observe(1)["hand"]) | set(game.observe(2)["hand"])
        assert not others & _strings(request["observation"])
        assert not others & _strings(request["events"])
        hidden_cards_seen += len(others)
    assert hidden_cards_seen > 0     # the check had something to find


def test_a_stream_may_ask_for_events_only(arena: ArenaThread, tmp_path: Path) -> None:
    # Hello.events_only: requests come without the observation, and their events still
    # add up to everything the seat may know, in order, at every turn.
    report = tmp_path / "events-only.jsonl"
    arena.start_bot("random_bot.py", "events-only", "--events-only", report=report)
    config = {"variant": "classic", "players": 3, "seed": 23, "rounds": 3}
    record = arena.run_match(["honest0", "events-only", "honest1"], config=config)
    assert_played_honestly(record, [0, 1, 2])
    received = read_report(report)
    assert [m["events_only"] for m in received if m["msg"] == "welcome"] == [True]
    requests = [m for m in received if m["msg"] == "request"]
    own_turns = [i for i, (seat, _) in enumerate(record.actions) if seat == 1]
    assert len(requests) == len(own_turns) > 0
    events: list[Any] = []
    for request, turn in zip(requests, own_turns):
        assert request["observation"] is None
        events += request["events"]
        game = replay_record(record.config, record.actions[:turn])
        assert events == [json.loads(e) for e in protocol.events_json(game.events_for(1, 0)[0])]


# ---------------------------------------------------------------------- public calls


def test_health_and_reflection(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "wizard_arena.v1.Arena"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = {service.name for service in next(replies).list_services_response.service}
    assert {"wizard_arena.v1.Arena", "grpc.health.v1.Health"} <= names


def test_spectate_streams_public_events_live(arena: ArenaThread, channel: grpc.Channel) -> None:
    arena.start_bot("slow_bot.py", "ponder", "--slow", "3", "--sleep-ms", "150")
    spec = MatchSpec(config={"variant": "classic", "players": 3, "seed": 5, "rounds": 2},
                     bots=["ponder", "honest0", "honest1"], match_id="watched-1", move_time=0.5, time_bank=1.0)
    running = arena.submit(arena.arena.host.run_match(spec))
    while "watched-1" not in arena.arena.host.running:
        time.sleep(0.01)
    stream = pb_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id="watched-1"))
    events = []
    live = False
    for message in stream:
        live = live or not running.done()
        events.extend(json.loads(e) for e in message.events_json)
    record: MatchRecord = running.result(30)
    assert live and record.faults == []
    game = replay_record(record.config, record.actions)
    assert events == json.loads(json.dumps(game.events_for(None, 0)[0]))
    assert not any(event["type"] == "hand" for event in events)
    # A finished match can still be watched from the start.
    again = [json.loads(e) for m in pb_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id="watched-1"))
             for e in m.events_json]
    assert again == events
    with pytest.raises(grpc.RpcError) as missing:
        next(pb_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id="no-such-match")))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_list_matches(arena: ArenaThread, channel: grpc.Channel) -> None:
    record = arena.run_match(HONEST, match_id="listed-classic")
    arena.run_match(HONEST, match_id="listed-extreme", config={"variant": "extreme", "players": 3, "seed": 1,
                                                               "rounds": 1})
    stub = pb_grpc.ArenaStub(channel)
    listed = {m.match_id: m for m in stub.ListMatches(pb.ListMatchesRequest(variant="classic")).matches}
    assert "listed-extreme" not in listed
    assert listed["listed-classic"].status == "finished"
    assert list(listed["listed-classic"].totals) == record.totals
    assert list(listed["listed-classic"].bot_names) == HONEST
    newest = stub.ListMatches(pb.ListMatchesRequest(limit=1)).matches
    assert [m.match_id for m in newest] == ["listed-extreme"]


# ---------------------------------------------------------------------- Python API


def test_waiting_for_absent_bots_names_them(arena: ArenaThread) -> None:
    with pytest.raises(TimeoutError, match="ghost"):
        arena.call(arena.arena.host.wait_connected(["honest0", "ghost"], 0.2))
    arena.arena.host.seat_timeout = 0.3
    try:
        with pytest.raises(SeatingError, match="ghost"):
            arena.run_match(["honest0", "ghost", "honest1"])
    finally:
        arena.arena.host.seat_timeout = 10.0


def test_connected_bots(arena: ArenaThread) -> None:
    bots = arena.arena.host.connected_bots()
    assert bots["honest2"].connections == 1 and bots["honest2"].free_slots == 4
    assert bots["honest2"].version == "test-1" and bots["honest2"].variants == []


def test_a_taken_port_is_an_error(arena: ArenaThread, arena_server: Any) -> None:
    with pytest.raises(OSError, match="cannot listen"):
        arena_server(port=arena.port)
