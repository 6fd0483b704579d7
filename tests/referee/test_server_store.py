"""The arena with a database: store tokens, stored matches, leaderboard, spectating a
stored match, auto-match, and ``serve()`` as a real process stopped by SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bots.harness import ADMIN_TOKEN, ArenaThread, bot_command

from arena.referee.automatch import AutoMatch
from arena.store import Store
from arena.wire import calls
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc
from engine import replay_record

BOTS = ["alpha", "beta", "gamma"]
CONFIG = {"variant": "classic", "players": 3, "seed": 4, "rounds": 2}


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store") / "arena.db"


@pytest.fixture(scope="module")
def store(db: Path) -> Iterator[Store]:
    store = Store(str(db))
    yield store
    store.close()


@pytest.fixture(scope="module")
def arena(store: Store, module_arena_server: Any) -> ArenaThread:
    arena = module_arena_server(store=store, move_time=0.5, time_bank=1.0, grace=1.0)
    for i, name in enumerate(BOTS):   # registered bots, connecting with their stored tokens
        arena.start_bot("random_bot.py", name, "--seed", str(i), max_matches=2, token=store.register_bot(name))
    return arena


def test_run_match_stores_the_record(arena: ArenaThread, store: Store) -> None:
    with grpc.insecure_channel(arena.address) as channel:
        reply = pb_grpc.ArenaStub(channel).RunMatch(
            pb.RunMatchRequest(match_id="stored-1", config_json=json.dumps(CONFIG), bots=BOTS, game_index=-1),
            metadata=bearer(ADMIN_TOKEN))
    record, stored_there = calls.match_played(reply)
    assert stored_there
    stored = store.load_match("stored-1")
    assert stored.totals == record.totals and stored.actions == record.actions and stored.bots == BOTS
    assert stored.game_index is None


def test_list_matches_and_leaderboard_come_from_the_store(arena: ArenaThread) -> None:
    with grpc.insecure_channel(arena.address) as channel:
        stub = pb_grpc.ArenaStub(channel)
        for i in range(2):
            stub.RunMatch(pb.RunMatchRequest(match_id=f"board-{i}", config_json=json.dumps(CONFIG), bots=BOTS),
                          metadata=bearer(ADMIN_TOKEN))
        listed = {m.match_id: m for m in stub.ListMatches(pb.ListMatchesRequest()).matches}
        assert {"board-0", "board-1"} <= set(listed) and listed["board-0"].status == "finished"
        rows = stub.GetLeaderboard(pb.LeaderboardRequest(variant="classic")).rows
        assert {row.bot for row in rows} == set(BOTS)
        assert [row.rank for row in rows] == [1, 2, 3] and all(row.games >= 2 for row in rows)
        # Think times as the CLI's board shows them; classic scores: higher is better.
        assert all(0 < row.think_p50_ms <= row.think_p99_ms for row in rows)
        assert not any(row.lower_score_is_better for row in rows)
        with pytest.raises(grpc.RpcError) as bad:
            stub.GetLeaderboard(pb.LeaderboardRequest(variant="poker"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_rotated_token_stops_working_at_once(arena: ArenaThread, store: Store) -> None:
    def first_reply(token: str) -> pb.ArenaMessage:
        with grpc.insecure_channel(arena.address) as channel:
            hello = pb.BotMessage(hello=pb.Hello(name="rotating", version="t", max_matches=1))
            call = pb_grpc.ArenaStub(channel).Play(iter([hello]), metadata=bearer(token))
            reply = next(call)
            call.cancel()
            return reply

    old = store.register_bot("rotating")
    assert first_reply(old).WhichOneof("msg") == "welcome"
    new = store.register_bot("rotating", rotate=True)
    with pytest.raises(grpc.RpcError) as refused:
        first_reply(old)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert first_reply(new).WhichOneof("msg") == "welcome"


def test_a_stored_match_can_be_spectated(arena: ArenaThread, store: Store) -> None:
    record = arena.run_match(BOTS, match_id="replayed-1", config=CONFIG)
    arena.call(arena.arena.host.save(record))
    arena.arena.host.recent.clear()          # forget it: only the store knows it now
    with grpc.insecure_channel(arena.address) as channel:
        events = [json.loads(e) for m in pb_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id="replayed-1"))
                  for e in m.events_json]
    game = replay_record(record.config, record.actions)
    assert events == json.loads(json.dumps(game.events_for(None, 0)[0]))


def test_auto_match_keeps_idle_bots_playing(tmp_path: Path, arena_server: Any) -> None:
    store = Store(str(tmp_path / "auto-match.db"))
    arena = arena_server(store=store, move_time=0.5, time_bank=1.0,
                         auto_match=AutoMatch("classic", players=3, rounds=1, interval=0.1))
    try:
        for name in BOTS:
            arena.start_bot("random_bot.py", name, wait=False, token=store.register_bot(name))
        deadline = time.monotonic() + 20
        while store.match_count("classic") < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        matches = store.list_matches(variant="classic")
        assert len(matches) >= 3
        assert all(sorted(m.bots) == sorted(BOTS) and m.faults == 0 for m in matches)
    finally:
        arena.close()   # before its store (the fixture's own close is then a no-op)
        store.close()


def test_serve_runs_until_sigterm_and_stores_matches(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    with Store(str(db)) as store:
        tokens = {name: store.register_bot(name) for name in BOTS}
    env = {**os.environ, "ARENA_ADMIN_TOKEN": "served-admin", "GRPC_VERBOSITY": "ERROR"}
    server = subprocess.Popen(
        [sys.executable, "-c", "import asyncio, sys; from arena.referee.server import serve; "
         f"asyncio.run(serve(port=0, db_path={str(db)!r}, move_time=0.5, time_bank=1.0, grace=1.0))"],
        stdout=subprocess.PIPE, text=True, env=env)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert server.stdout is not None
        address = re.search(r"listening on (\S+)", server.stdout.readline()).group(1)
        assert server.stdout.readline().strip() == "admin token: served-admin"
        bots = [subprocess.Popen(bot_command("random_bot.py", address, tokens[name], name), env=env)
                for name in BOTS]
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.ArenaStub(channel)
            deadline = time.monotonic() + 20
            while len(stub.ListBots(pb.ListBotsRequest(), metadata=bearer("served-admin")).bots) < 3:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            stub.RunMatch(pb.RunMatchRequest(match_id="served-1", config_json=json.dumps(CONFIG), bots=BOTS),
                          metadata=bearer("served-admin"))
        for bot in bots:   # leave first, so the graceful stop has no stream to wait for
            bot.terminate()
            bot.wait(10)
        server.send_signal(signal.SIGTERM)
        assert server.wait(15) == 0
    finally:
        for process in [*bots, server]:
            if process.poll() is None:
                process.kill()
            process.wait(10)
    with Store(str(db)) as store:
        assert store.load_match("served-1").bots == BOTS
