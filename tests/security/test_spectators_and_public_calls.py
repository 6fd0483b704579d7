"""Spectators and public calls at a running server: `arena serve` with spy bots
(tests/bots/spy_bot.py) connected, `arena tournament --server`, and meanwhile a spectator
on every match and the public ListMatches/GetLeaderboard calls, all checked for (a)-(d) as
tests/security/spy_checks.py says. Run with ``-s`` for a summary of what was tried.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from spy_checks import (
    ENV,
    PY,
    RANDOM_BOT,
    SPY,
    CardCheck,
    Findings,
    analyse_spies,
    arena_cli,
    as_dict,
    assert_no_leaks,
    attack_seeds,
    integers_in,
    load_tournament,
    nothing_unknown,
    read_spy,
    replay_record,
    report,
)

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

# `arena serve` and a whole tournament as processes: `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow


class Watcher:
    """A spectator and a public caller: lists the matches over and over, spectates every
    one it sees (live when it is still running), and asks for the leaderboard."""

    def __init__(self, address: str, variant: str) -> None:
        self.address = address
        self.variant = variant
        self.stop = threading.Event()
        self.public: list[dict[str, Any]] = []                      # ListMatches/GetLeaderboard answers
        self.spectated: dict[str, list[dict[str, Any]]] = {}        # match id -> SpectatorEvents
        self.live: set[str] = set()
        self.errors: list[str] = []
        self._threads: list[threading.Thread] = []
        self._main = threading.Thread(target=self._run, name="watcher", daemon=True)

    def start(self) -> None:
        self._main.start()

    def _run(self) -> None:
        with grpc.insecure_channel(self.address) as channel:
            stub = pb_grpc.ArenaStub(channel)
            rounds = 0
            while True:
                last = self.stop.is_set()
                try:
                    listed = stub.ListMatches(pb.ListMatchesRequest(limit=200), timeout=10)
                    self.public.append(self._entry(listed))
                    for summary in listed.matches:
                        if summary.match_id not in self.spectated:
                            self.spectated[summary.match_id] = []
                            if summary.status == "running":
                                self.live.add(summary.match_id)
                            thread = threading.Thread(target=self._spectate, args=(summary.match_id,), daemon=True)
                            thread.start()
                            self._threads.append(thread)
                    if rounds % 20 == 0 or last:
                        for variant in (self.variant, ""):
                            board = stub.GetLeaderboard(pb.LeaderboardRequest(variant=variant), timeout=30)
                            self.public.append(self._entry(board))
                except grpc.RpcError as error:
                    self.errors.append(f"{error.code()}: {error.details()}")
                except Exception as error:   # noqa: BLE001 (reported by the test)
                    self.errors.append(repr(error))
                rounds += 1
                if last:
                    return
                # Within the referee's rate limits (docs/protocol.md, section 7): ListMatches
                # 10 times a second, GetLeaderboard (twice) every 2 s.
                time.sleep(0.1)

    def _spectate(self, match_id: str) -> None:
        with grpc.insecure_channel(self.address) as channel:
            try:
                for event in pb_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id=match_id), timeout=60):
                    self.spectated[match_id].append(self._entry(event))
            except grpc.RpcError as error:
                self.errors.append(f"spectate {match_id}: {error.code()}: {error.details()}")
            except Exception as error:   # noqa: BLE001 (reported by the test)
                self.errors.append(f"spectate {match_id}: {error!r}")

    @staticmethod
    def _entry(message: Any) -> dict[str, Any]:
        raw = message.SerializeToString()
        if not nothing_unknown(message, raw):
            raise AssertionError(f"fields unknown to the proto in {message}")
        return {"message": as_dict(message), "raw": raw.hex()}

    def finish(self) -> None:
        self.stop.set()
        self._main.join(60)
        for thread in self._threads:
            thread.join(60)


def register(name: str, db: Path, cwd: Path) -> str:
    done = arena_cli("bot", "register", name, "--db", str(db), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_spectators_and_public_calls_learn_nothing(tmp_path: Path) -> None:
    """`arena serve` with spies and an honest bot connected, `arena tournament --server`,
    and meanwhile a spectator on every match and the public calls, over and over."""
    server_db, organiser_db = tmp_path / "server.db", tmp_path / "organiser.db"
    variant, players, rounds, bidding = "classic", 4, 5, "secret"
    spies = ["spyA", "spyB", "spyC"]
    names = [*spies, "honest"]
    tokens = {name: register(name, server_db, tmp_path) for name in names}
    admin = "spy-test-admin-token-" + os.urandom(8).hex()
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([PY, "-m", "arena.cli", "serve", "--db", str(server_db), "--port", "0", "--quiet"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=log, text=True,
                              env={**ENV, "ARENA_ADMIN_TOKEN": admin})
    processes: list[subprocess.Popen[Any]] = []
    watcher: Watcher | None = None
    try:
        first = server.stdout.readline() if server.stdout else ""
        match = re.search(r"listening on (\S+):(\d+)", first)
        assert match, f"arena serve did not start: {first!r}"
        address = f"127.0.0.1:{match.group(2)}"
        for name in names:
            script = SPY if name in spies else RANDOM_BOT
            command = [PY, str(script), "--arena", address, "--token", tokens[name], "--name", name,
                       "--max-matches", "4"]
            if name in spies:
                command += ["--report", str(tmp_path / f"{name}.jsonl")]
            processes.append(subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=log, stderr=log))
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.ArenaStub(channel)
            deadline = time.monotonic() + 30
            while True:
                connected = {b.name for b in stub.ListBots(pb.ListBotsRequest(), timeout=5,
                                                           metadata=(("authorization", f"Bearer {admin}"),)).bots}
                if connected >= set(names):
                    break
                assert time.monotonic() < deadline, f"bots not connected: {set(names) - connected}"
                time.sleep(0.05)
        watcher = Watcher(address, variant)
        watcher.start()
        done = arena_cli("tournament", "--server", address, "--admin-token", admin, "--db", str(organiser_db),
                         "--variant", variant, "--players", str(players), "--rounds", str(rounds),
                         "--bidding", bidding, "--games", str(2 * players), cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        time.sleep(0.2)
        watcher.finish()
    finally:
        if watcher is not None:
            watcher.stop.set()
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            process.wait(10)
        server.terminate()
        server.wait(10)
        log.close()

    tid, settings, records = load_tournament(organiser_db)
    assert settings.get("deals") == "independent", "with --server the default must be independent deals"
    assert not watcher.errors, watcher.errors
    by_id = {r.match_id: r for r in records}
    assert set(by_id) <= set(watcher.spectated), "a match of the tournament was never spectated"
    title = f"server: {variant} {bidding} {players}p, {len(records)} games"

    # Spectators: (a) and (b), event by event against the replayed public view.
    spectator_numbers: set[int] = set()
    check = CardCheck("spectator")
    bids = Findings("(b) unrevealed bids [spectator]")
    events = 0
    for match_id, record in by_id.items():
        received = watcher.spectated[match_id]
        for entry in received:
            integers_in(entry["message"], spectator_numbers)
            assert entry["message"]["match_id"] == match_id
        # A SpectatorUpdate carries a batch of events (an older protocol sent one per message).
        stream = [json.loads(text) for entry in received
                  for text in entry["message"].get("events_json", [entry["message"].get("event_json")])]
        events += len(stream)
        truth = replay_record(record).events[None]
        assert len(stream) == len(truth), f"spectating {match_id} gave {len(stream)} of {len(truth)} events"
        check.event_stream(f"spectator of {match_id}", stream, truth, None, 0)
        for event in stream:
            bids.tried += 1
            if event.get("type") == "bid":
                bids.leaks.append(f"spectator of {match_id} sees {event} ({bidding} bidding)")
    # Control: a hand planted in a spectator's stream is caught.
    replayed = replay_record(records[0])
    truth = replayed.events[None]
    hand = sorted(replayed.start[0])
    planted = [truth[0][0], {"type": "hand", "seat": 0, "cards": hand}, *(event for event, _ in truth[1:])]
    control = CardCheck("control")
    control.event_stream("control", planted, truth, None, 0)
    assert any(hand[0] in leak for leak in control.found.leaks), control.found.leaks
    live = len(set(by_id) & watcher.live)
    assert live, "no match was spectated live"
    spectator = [attack_seeds("spectator", spectator_numbers, records, settings),
                 check.finish(f"{events} events, {live} of {len(by_id)} matches live"), bids]

    # Public calls: (a).
    public_numbers: set[int] = set()
    for entry in watcher.public:
        integers_in(entry["message"], public_numbers)
    listed = {m["match_id"] for entry in watcher.public for m in entry["message"].get("matches", [])}
    assert set(by_id) <= listed
    public = [attack_seeds(f"public calls, {len(watcher.public)} answers", public_numbers, records, settings)]

    # And the spies at the server: everything of the local tournaments.
    reports = {name: read_spy(tmp_path / f"{name}.jsonl") for name in spies}
    spied = analyse_spies("server spies", settings, records, reports, "independent")
    report(title, spectator + public + spied)
    assert_no_leaks(spectator + public + spied)
