"""Live matches in ``arena web``: found through the referees' public calls, relayed as
Server-Sent Events, and never carrying what a seat still hides.

The end-to-end tests run `arena tournament` and `arena web` as their own processes and
read the event stream as a page would; then they replay the stored match to each step
the stream sent and check every card named in it was public by then (``factories.moment``).
The live page in a real browser is in tests/web/browser/test_live.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from factories.live import card_names, moment, running_match, slow_tournament
from factories.records import played
from starlette.testclient import TestClient

from arena.store import Store
from arena.web.app import create_app
from arena.web.live import LiveMatch, LiveSteps, stream

PY = sys.executable


def read_stream(url: str, opened: Callable[[], None] = lambda: None, timeout: float = 120.0) -> list[tuple[str, Any]]:
    """Every (event, data) of a Server-Sent Events stream, until the server ends it;
    ``opened`` is called once the server has answered."""
    messages: list[tuple[str, Any]] = []
    event = ""
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        opened()
        for raw in answer:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: "):
                messages.append((event, json.loads(line[len("data: "):])))
    return messages


def wait_for_file(path: Path) -> None:
    import time

    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not created"
        time.sleep(0.1)
    time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.parametrize("variant, options", [
    ("extreme", ["--variant", "extreme", "--rounds", "1", "--seed", "3"]),
    ("classic", ["--variant", "classic", "--bidding", "hidden", "--rounds", "7", "--seed", "4"]),
])
def test_the_event_stream_names_only_cards_already_public(tmp_path: Path, web_over: Callable[[Path], str], variant: str,
                                                          options: list[str]) -> None:
    db = tmp_path / "live.db"
    # The match waits at its first decision until the stream is open (``hold``): a short
    # match, on a busy machine, could otherwise end between the listing and the request.
    hold = tmp_path / "hold"
    hold.touch()
    runner = slow_tournament(tmp_path, db, *options, "--games", "1", sleep_ms=10, hold=hold)
    try:
        wait_for_file(db)
        url = web_over(db)
        match_id = running_match(url)
        listed = urllib.request.urlopen(f"{url}/api/live", timeout=10).read().decode()
        assert match_id in listed and '"seed"' not in listed     # the deal seed would give every hand away
        messages = read_stream(f"{url}/api/live/{match_id}/events", opened=hold.unlink)
        assert runner.wait(timeout=120) == 0, (tmp_path / "tournament.out").read_text()
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert messages[-1] == ("end", {"replay": f"/matches/{match_id}"})
    steps: dict[int, dict[str, Any]] = {}
    for event, data in messages[:-1]:
        assert event == "steps"
        for step in data["steps"]:
            steps[step["index"]] = step     # a step sent again (it grew) replaces the first
    record = _record(db, match_id)
    # Every decision arrived, in order, as one step each, with the right seat.
    assert sorted(steps) == list(range(len(record["actions"]) + 1))
    assert [steps[k]["seat"] for k in range(1, len(steps))] == [seat for seat, _ in record["actions"]]
    assert steps[len(steps) - 1]["totals"] == record["totals"]
    for k, step in steps.items():
        truth = moment(record, k)
        named = card_names(json.dumps(step), variant)
        assert named <= truth.public, f"step {k} names cards not yet public: {named - truth.public}"
        kinds = {e["type"] for e in step["events"]}
        assert "hand" not in kinds and "seed" not in json.dumps(step)
        if variant == "classic":     # hidden bidding: a bid's value only once all are revealed
            assert "bid" not in kinds, step


@pytest.mark.slow
def test_more_pages_than_a_referee_admits_spectators_share_one_stream(tmp_path: Path,
                                                                      web_over: Callable[[Path], str]) -> None:
    # The referee admits 64 spectators a match; arena web asks it once however many watch.
    # The match waits at its first decision until all 70 pages have their stream (``hold``).
    import threading
    from concurrent.futures import ThreadPoolExecutor

    db = tmp_path / "live.db"
    hold = tmp_path / "hold"
    hold.touch()
    runner = slow_tournament(tmp_path, db, "--variant", "classic", "--rounds", "6", "--seed", "5", "--games", "1",
                             sleep_ms=10, hold=hold)
    waiting = [70]
    lock = threading.Lock()

    def opened() -> None:
        with lock:
            waiting[0] -= 1
            if waiting[0] == 0:
                hold.unlink()

    try:
        wait_for_file(db)
        url = web_over(db)
        match_id = running_match(url)
        with ThreadPoolExecutor(70) as pool:
            pages = list(pool.map(lambda url: read_stream(url, opened), [f"{url}/api/live/{match_id}/events"] * 70))
        assert runner.wait(timeout=120) == 0, (tmp_path / "tournament.out").read_text()
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    decisions = len(_record(db, match_id)["actions"])
    for messages in pages:
        assert messages[-1] == ("end", {"replay": f"/matches/{match_id}"}), messages[-1]
        steps = {step["index"]: step for _, data in messages[:-1] for step in data["steps"]}
        assert sorted(steps) == list(range(decisions + 1))


def _record(db: Path, match_id: str) -> dict[str, Any]:
    with Store(str(db)) as store:
        return store.load_match(match_id).to_json()


def test_live_steps_follow_decisions_and_totals() -> None:
    record = played("steps", "classic", ["ann", "bob", "cy"], 1, bidding="secret")
    from engine import replay_record

    game = replay_record(record.config, record.actions)
    public, _ = game.events_for(None, 0)
    live = LiveSteps(record.bots, "secret")
    # In uneven batches, as the referee sends them.
    for start in range(0, len(public), 7):
        live.add(public[start:start + 7])
    assert len(live.steps) == len(record.actions) + 1
    assert [s.seat for s in live.steps[1:]] == [seat for seat, _ in record.actions]
    assert live.steps[-1].totals == record.totals
    assert live.since(len(live.steps) - 1)["start"] == len(live.steps) - 1


@pytest.fixture
def empty_client(tmp_path: Path) -> TestClient:
    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        store.save_match(played("done-1", "classic", ["ann", "bob", "cy"], 2))
    return TestClient(create_app(str(path), ["127.0.0.1:1"]), follow_redirects=False)


def test_a_referee_that_does_not_answer_is_one_line_on_the_live_page(empty_client: TestClient) -> None:
    page = empty_client.get("/live")
    assert page.status_code == 200
    assert "the referee at 127.0.0.1:1 did not answer: UNAVAILABLE" in page.text
    listing = empty_client.get("/api/live").json()
    assert listing["referees"] == ["127.0.0.1:1"] and listing["matches"] == []
    assert "Playing now" in empty_client.get("/").text


def test_a_referee_gone_from_a_live_stream_is_named_by_its_status(tmp_path: Path) -> None:
    # grpc.aio's errors are not grpc.Call: the viewer once showed "error (<AioRpcError of RPC ...")
    import asyncio
    import socket

    with socket.socket() as closed:           # a port this test opened, then closed: refused
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
    match = LiveMatch("m-1", "classic", ["ann", "bob", "cy"], [0, 0, 0], None, {}, address)

    async def messages() -> list[str]:
        return [message async for message in stream(match, "/matches/m-1")]

    [failure] = asyncio.run(messages())
    assert failure.startswith("event: failure\n")
    message = json.loads(failure.split("data: ", 1)[1])["message"]
    assert message.startswith("the referee stopped the stream: UNAVAILABLE (") and "AioRpcError" not in message


def test_silent_referees_cost_a_page_one_wait_once(tmp_path: Path) -> None:
    # Referees that take the connection and never answer: asked at once, they hold a page
    # LIST_TIMEOUT (2 s), not that times their number; and the next pages do not ask them
    # at all (no new connection reaches them).
    import socket
    import time

    from arena.web.live import LIST_TIMEOUT

    path = tmp_path / "arena.db"
    Store(str(path)).close()
    silent = [socket.socket() for _ in range(30)]
    try:
        for referee in silent:
            referee.bind(("127.0.0.1", 0))
            referee.listen()
            referee.setblocking(False)
        addresses = [f"127.0.0.1:{s.getsockname()[1]}" for s in silent]
        client = TestClient(create_app(str(path), addresses))
        started = time.monotonic()
        first = client.get("/live").text
        waited = time.monotonic() - started
        assert all(f"the referee at {a} did not answer: DEADLINE_EXCEEDED" in first for a in addresses)
        # One after another they would take 30 x 2 s: half of that is slack for a busy machine.
        assert waited < len(silent) * LIST_TIMEOUT / 2, f"{len(silent)} silent referees held the page {waited:.1f} s"
        asked = [_connections(referee) for referee in silent]
        assert all(asked), asked
        for page in ("/", "/live", "/api/live"):
            client.get(page)
        assert [_connections(referee) for referee in silent] == [0] * len(silent)
        assert "it is asked again within 30 s" in client.get("/live").text
    finally:
        for referee in silent:
            referee.close()


def _connections(listening: Any) -> int:
    """How many connections wait to be accepted on ``listening`` (a non-blocking socket);
    each is accepted and closed."""
    count = 0
    while True:
        try:
            connection, _ = listening.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def test_a_live_link_to_a_finished_match_goes_to_its_replay(empty_client: TestClient) -> None:
    answer = empty_client.get("/live/done-1")
    assert answer.status_code == 303 and answer.headers["location"] == "/matches/done-1"
    assert empty_client.get("/live/nope").status_code == 404
    assert empty_client.get("/api/live/nope/events").status_code == 404


def test_without_referees_the_live_page_says_why(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    Store(str(path)).close()
    client = TestClient(create_app(str(path)))
    assert "No referee to ask" in client.get("/live").text
    assert "Playing now" not in client.get("/").text


@pytest.mark.parametrize("bad", ["nohost", "host:port", "host:0", ":50051"])
def test_a_bad_referee_address_is_one_line_and_exit_2(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "arena.db"
    Store(str(path)).close()
    done = subprocess.run([PY, "-m", "arena.cli", "web", "--db", str(path), "--port", "0", "--referee", bad],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--referee" in done.stderr and "Traceback" not in done.stderr
