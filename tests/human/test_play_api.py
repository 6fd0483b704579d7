"""``arena play``'s JSON API against a real referee and real sample bots (docs/play.md).

A whole short match is played through ``GET /api/play/state`` and ``POST
/api/play/answer``, answering the first option; the stored match must be the one the
API ended on. Bad answers (no option, a stale ``request_id``, a second answer to the
same request, a prediction the engine refuses) are refused with 400 or 409 and leave
the decision pending.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from arena.store import Store

from .conftest import Play

CLASSIC = ("--variant", "classic", "--players", "3", "--rounds", "2", "--seed", "5")


def next_decision(play: Play, state: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
    """The next state with a decision pending, or with the match stored (or failed)."""
    deadline = time.monotonic() + timeout
    while state["decision"] is None and state["stored"] is None and state["status"] != "failed":
        assert time.monotonic() < deadline, f"no decision and no end within {timeout} s: {state['status']}"
        state = play.state(since=state["version"])
    return state


def first_option(decision: dict[str, Any]) -> dict[str, Any]:
    if decision["kind"] == "predict":
        return {"request_id": decision["request_id"], "prediction": {"destroyer": False, "tokens": {}}}
    return {"request_id": decision["request_id"], "option": decision["options"][0]}


def play_out(play: Play) -> dict[str, Any]:
    """Answer every decision with its first option until the match is stored; the last state."""
    state = next_decision(play, play.state())
    while state["stored"] is None:
        assert state["status"] != "failed", state["problem"]
        status, body = play.answer(first_option(state["decision"]))
        assert status == 200, body
        state = next_decision(play, play.state())
    return state


def test_the_api_plays_a_whole_match_and_it_is_stored(play: Callable[..., Play]) -> None:
    game = play(*CLASSIC)
    state = play_out(game)
    assert state["status"] == "over" and state["over"] and state["faults"] == []
    match = state["match"]
    assert match["bots"][match["seat"]] == "you" and len(match["bots"]) == 3
    assert all(name in ("you", "heuristic", "greedy") for name in match["bots"])
    # What the seat saw: its own hand only, every seat's bids (open bidding), round 2 at the end.
    assert state["observation"]["round"] == 2 and len(state["observation"]["bids"]) == 3
    assert not any(event["type"] == "hand" and event.get("seat") not in (None, match["seat"])
                   for event in state["events"])
    # The plays after the person's last decision are in the events too, up to the end.
    assert state["events"][-1]["type"] == "game_over" and state["events"][-1]["totals"] == state["result"]["totals"]
    tail = game.state(events=5)
    assert tail["events_from"] == 5 and tail["events"] == state["events"][5:]
    store = Store(str(game.db))
    try:
        record = store.load_match(state["stored"]["match_id"])
    finally:
        store.close()
    assert record.totals == state["result"]["totals"]
    assert record.places == state["result"]["places"]
    assert record.bots == match["bots"] and record.status == "completed"
    assert state["stored"]["viewer"] == f"/matches/{record.match_id}"
    printed = game.output()
    assert any(line.startswith(f"match {record.match_id} completed") for line in printed), printed
    assert any(f"arena web --db {game.db}" in line for line in printed), printed
    assert game.stop() == 0      # SIGTERM once the match is stored: a clean end


def test_bad_answers_are_refused_and_the_decision_stays(play: Callable[..., Play]) -> None:
    game = play(*CLASSIC)
    state = next_decision(game, game.state())
    decision = state["decision"]
    rid = decision["request_id"]
    refusals = [
        ({"request_id": rid, "option": "r99"}, 400, "is not an option"),
        ({"request_id": rid, "option": 3}, 400, "option"),
        ({"request_id": rid, "prediction": {"tokens": {}}}, 400, "option"),
        ({"request_id": rid + 1000, "option": decision["options"][0]}, 409, "not open"),
        ({"request_id": str(rid), "option": decision["options"][0]}, 400, "request_id"),
        ({"option": decision["options"][0]}, 400, "request_id"),
        ({"request_id": rid, "option": decision["options"][0], "extra": 1}, 400, "unknown field"),
        (b"{not json", 400, "JSON"),
    ]
    for body, status, words in refusals:
        got, answer = game.answer(body)
        assert (got, words in answer.get("error", "")) == (status, True), (body, got, answer)
    # Nothing was lost: the same request is still open, with the same options, in both "tabs".
    again, other_tab = game.state(), game.state()
    assert again["decision"]["request_id"] == rid == other_tab["decision"]["request_id"]
    assert again["decision"]["options"] == decision["options"]
    assert again["faults"] == []
    # The first answer counts; the same answer from a second tab is refused.
    assert game.answer(first_option(decision))[0] == 200
    status, body = game.answer(first_option(decision))
    assert status == 409 and "answered already" in body["error"], body
    for since in ("x", "%C2%B2", "9" * 30):     # not ASCII digits, or no version ever reached
        assert game.request(f"/api/play/state?since={since}")[0] == 400, since
        assert game.request(f"/api/play/state?events={since}")[0] == 400, since
    # Another match starts only once this one is stored, and only from the person's browser.
    status, body = game.request("/api/play/again", {})
    assert status == 409 and "once this one is over" in body["error"], body
    assert game.request("/api/play/again", {}, headers={"Content-Type": "text/plain"})[0] == 415
    # Only the person's own browser plays: an answer that a page elsewhere could send
    # without asking (text/plain), or one addressed to another host name (DNS
    # rebinding), is refused.
    later = first_option(next_decision(game, game.state())["decision"])
    assert game.request("/api/play/answer", later, headers={"Content-Type": "text/plain"})[0] == 415
    assert game.request("/api/play/state", headers={"Host": "evil.example"}) == (400, "Invalid host header")
    assert game.request("/api/play/answer", later, headers={"Host": "evil.example"})[0] == 400
    # A request line too long for the server is a clean 414, and the page goes on.
    assert game.request("/api/play/state?since=" + "1" * (1 << 20))[0] == 414
    assert game.state()["decision"]["request_id"] == later["request_id"]


@pytest.mark.slow
def test_extreme_predictions_are_checked_by_the_engine(play: Callable[..., Play]) -> None:
    game = play("--variant", "extreme", "--players", "3", "--rounds", "1", "--seed", "2")
    state = next_decision(game, game.state())
    while state["decision"] is not None and state["decision"]["kind"] != "predict":
        assert game.answer(first_option(state["decision"]))[0] == 200
        state = next_decision(game, game.state())
    decision = state["decision"]
    assert decision is not None and decision["options"] == []
    rid = decision["request_id"]
    for prediction, words in (({"tokens": {"red": 99}}, "cannot have"), ({"tokens": {"white": 1}}, "coloured"),
                              ({"tokens": "red"}, "tokens"), ({"colour": "red"}, "unknown field"),
                              ({"tokens": {}, "take_from": 3}, "take_from")):
        status, body = game.answer({"request_id": rid, "prediction": prediction})
        assert status == 400 and words in body["error"], (prediction, body)
    status, body = game.answer({"request_id": rid, "option": "red"})
    assert status == 400 and "prediction" in body["error"]
    assert game.state()["decision"]["request_id"] == rid
    assert game.answer({"request_id": rid, "prediction": {"tokens": {"red": 1}}})[0] == 200
    state = play_out(game)
    assert state["faults"] == [] and state["result"]["totals"]
