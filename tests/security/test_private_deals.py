"""Private matches: in the duplicate format a game's cards are the hands of its deal's
other rotations, so no spectator sees them until every game of the deal is played.

Checked as a spectator trying to learn a deal before it is played would: the referee's
``Spectate`` of a private match (running, just finished, stored), the replay page, its
JSON and its exported file while the deal's other rotations are still to come, the live
pages of a running private match; then that everything is shown once the deal is played
out, or the tournament has finished (``arena.web.disclosure.cards_shown``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from bots.harness import ADMIN_TOKEN
from factories.records import played
from factories.tournaments import running_tournament
from starlette.testclient import TestClient

from arena.records import MatchRecord
from arena.store import Store
from arena.tournament.lineup import BotEntry
from arena.tournament.runner import match_spec
from arena.tournament.settings import TournamentSettings, schedule_of
from arena.web.app import create_app
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc
from engine import GameConfig

BOTS = ["ann", "bob", "cy"]


def test_a_duplicate_tournament_plays_private_matches_and_an_independent_one_does_not() -> None:
    for deals, private in (("duplicate", True), ("independent", False)):
        settings = TournamentSettings(game=GameConfig(variant="classic", players=3), games=3, seed=1, deals=deals,
                                      bots=[BotEntry(name, []) for name in BOTS])
        assert all(match_spec(settings, "t", game).private is private for game in schedule_of(settings))


def test_a_private_match_is_withheld_until_its_deal_is_played_out(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(str(db)) as store:
        tournament, ids, _ = running_tournament(store, stored=4)   # deal 0 played out, deal 1 once
        assert store.deal_progress(tournament, 3).played == 1 and store.deal_progress(tournament, 0).done
    client = TestClient(create_app(str(db)))
    for path in (f"/matches/{ids[3]}", f"/api/matches/{ids[3]}"):
        answer = client.get(path)
        assert answer.status_code == 403, path
        assert "private until every game of its deal has been played (1 of 3 are)" in answer.text
        assert '"steps"' not in answer.text and "match-data" not in answer.text
    # The other rotations of deal 0 are played: its games are shown, the seed still is not.
    record = client.get(f"/api/matches/{ids[0]}").json()["record"]
    assert record["seed"] is None and record["private"] is True and record["actions"]
    # The tournament page lists the withheld match (its result is no secret) and links to its refusal.
    assert ids[3] in client.get(f"/tournaments/{tournament}").text
    # An export of "all" leaves it out and says so; naming it is refused with one line.
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(db), "--export", str(out),
                           "--replays", "all"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (out / "matches").iterdir()) == sorted(f"{i}.html" for i in ids[:3])
    assert "left out the replays of 1 private matches" in done.stderr
    assert ids[3] not in "".join(p.read_text() for p in out.rglob("*") if p.is_file() and "matches" not in p.parts)
    named = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(db), "--export",
                            str(tmp_path / "named"), "--replays", ids[3]], capture_output=True, text=True, timeout=120)
    assert named.returncode == 2 and "private until every game" in named.stderr and "Traceback" not in named.stderr
    # The deal's last rotations are stored: shown, with the tournament still running.
    with Store(str(db)) as store:
        settings = TournamentSettings.from_dict(store.get_tournament(tournament).settings)
        for game in schedule_of(settings)[4:]:
            record = played(ids[game.index], "classic", list(game.bots), game.seed)
            record.tournament_id, record.game_index, record.private = tournament, game.index, True
            store.save_match(record)
        assert store.get_tournament(tournament).status == "running"
    assert client.get(f"/api/matches/{ids[3]}").status_code == 200


def test_a_finished_tournament_shows_its_private_matches(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(str(db)) as store:
        tournament, ids, _ = running_tournament(store, stored=4)
        store.set_tournament_status(tournament, "finished")     # e.g. ended with games left out
    assert TestClient(create_app(str(db))).get(f"/matches/{ids[3]}").status_code == 200


def test_independent_deals_are_shown_as_soon_as_stored(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(str(db)) as store:
        _, ids, _ = running_tournament(store, stored=4, deals="independent")
    assert TestClient(create_app(str(db))).get(f"/api/matches/{ids[3]}").status_code == 200


def test_an_older_record_without_the_flag_reads_as_not_private() -> None:
    data = played("m", "classic", BOTS, 3).to_json()
    del data["private"]
    assert MatchRecord.from_json(data).private is False


# -- the referee's public calls ------------------------------------------------------------------


def spectate(address: str, match_id: str) -> grpc.RpcError | list[pb.SpectatorUpdate]:
    with grpc.insecure_channel(address) as channel:
        try:
            return list(arena_pb2_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id=match_id), timeout=30))
        except grpc.RpcError as error:
            return error


def run_match_request(match_id: str, private: bool) -> pb.RunMatchRequest:
    config = {"variant": "classic", "players": 3, "seed": 5, "rounds": 4}
    return pb.RunMatchRequest(match_id=match_id, config_json=json.dumps(config), bots=BOTS, private=private,
                              move_time_ms=2000)


def test_spectate_refuses_a_private_match_running_finished_and_stored(arena_server: Any, tmp_path: Path) -> None:
    with Store(str(tmp_path / "serve.db")) as store:
        arena = arena_server(bots=BOTS, store=store)
        with grpc.insecure_channel(arena.address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            # A slow private match (a bot thinking 20 ms a decision) to look at while it runs.
            slow = arena.start_bot("slow_bot.py", "slow", "--slow", "1000000", "--sleep-ms", "20")
            request = run_match_request("secret-1", private=True)
            request.bots[:] = ["ann", "bob", "slow"]
            answer: dict[str, Any] = {}
            thread = threading.Thread(target=lambda: answer.update(
                reply=stub.RunMatch(request, metadata=[("authorization", f"Bearer {ADMIN_TOKEN}")], timeout=120)))
            thread.start()
            deadline = time.monotonic() + 30
            while not any(m.match_id == "secret-1" for m in stub.ListMatches(pb.ListMatchesRequest()).matches):
                assert time.monotonic() < deadline, "the private match never ran"
                time.sleep(0.05)
            listed = {m.match_id: m for m in stub.ListMatches(pb.ListMatchesRequest()).matches}["secret-1"]
            assert listed.status == "running" and listed.private
            running = spectate(arena.address, "secret-1")
            assert isinstance(running, grpc.RpcError), "a running private match was shown"
            assert running.code() == grpc.StatusCode.PERMISSION_DENIED and "is private" in running.details()
            thread.join(120)
            assert "reply" in answer
            arena.stop_bot(slow)
            # Finished (in memory and stored): still refused; listed as private.
            finished = spectate(arena.address, "secret-1")
            assert isinstance(finished, grpc.RpcError) and finished.code() == grpc.StatusCode.PERMISSION_DENIED
            stub.RunMatch(run_match_request("open-1", private=False),
                          metadata=[("authorization", f"Bearer {ADMIN_TOKEN}")], timeout=120)
            listed_all = {m.match_id: m.private for m in stub.ListMatches(pb.ListMatchesRequest()).matches}
            assert listed_all == {"secret-1": True, "open-1": False}
            shown = spectate(arena.address, "open-1")
            assert isinstance(shown, list) and shown
        assert store.load_match("secret-1").private and not store.load_match("open-1").private
        arena.close()
    # Stored, served by a referee that did not play it: refused.
    with Store(str(tmp_path / "serve.db")) as store:
        other = arena_server(store=store)
        stored = spectate(other.address, "secret-1")
        assert isinstance(stored, grpc.RpcError) and stored.code() == grpc.StatusCode.PERMISSION_DENIED
        assert isinstance(spectate(other.address, "open-1"), list)
        other.close()


@pytest.mark.slow
def test_a_running_duplicate_match_cannot_be_watched_in_arena_web(tmp_path: Path,
                                                                  web_over: Any) -> None:
    """A real local duplicate tournament: arena web lists its running match as private,
    and its live page and event stream refuse it."""
    from factories.live import get_json, slow_tournament
    from factories.web_server import http_fetch, wait_for

    db = tmp_path / "arena.db"
    hold = tmp_path / "hold"      # the first match waits at its first decision: running until the test ends
    hold.touch()
    runner = slow_tournament(tmp_path, db, "--rounds", "3", "--games", "3", "--deals", "duplicate", hold=hold)
    try:
        # arena web refuses a database that is not there yet
        wait_for(lambda: db.exists() and db.stat().st_size > 0, "the tournament's database")
        base = web_over(db)
        wait_for(lambda: bool(get_json(f"{base}/api/live")["matches"]), "a running match")
        match = get_json(f"{base}/api/live")["matches"][0]
        assert match["private"] is True
        fetch = http_fetch(base)
        assert "private until every game of its deal is played" in fetch("/live")[1]
        for path in (f"/live/{match['match_id']}", f"/api/live/{match['match_id']}/events"):
            status, body, _ = fetch(path)
            assert status == 403 and "is private" in body, (path, status, body[:300])
    finally:
        runner.kill()
        runner.wait()
