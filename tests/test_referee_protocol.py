"""Engine <-> wire conversions (arena/protocol.py): no server, no processes."""

from __future__ import annotations

import json

import pytest

from arena import protocol
from arena.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import Decision, GameConfig, Prediction, new_game

BID = Decision(seat=0, kind="bid", options=(0, 1, 2))
PLAY = Decision(seat=0, kind="play", options=("b7", "W1"))
TRUMP = Decision(seat=0, kind="trump", options=("blue", "green", "red", "yellow"))
PAY = Decision(seat=0, kind="pay", options=("purple", "white"))
PREDICT = Decision(seat=0, kind="predict", options=None)


def option(text: str, request_id: int = 5) -> pb.Action:
    return pb.Action(request_id=request_id, option=text)


def test_every_engine_kind_has_a_wire_kind() -> None:
    assert set(protocol.KIND_TO_WIRE) == {"bid", "play", "trump", "predict", "pay"}
    assert all(protocol.WIRE_TO_KIND[wire] == kind for kind, wire in protocol.KIND_TO_WIRE.items())


def test_options_go_out_as_strings() -> None:
    assert protocol.wire_options(BID) == ["0", "1", "2"]
    assert protocol.wire_options(PLAY) == ["b7", "W1"]
    assert protocol.wire_options(PREDICT) == []


@pytest.mark.parametrize("decision, text, expected", [
    (BID, "2", 2), (BID, "7", 7), (BID, "-1", -1),     # shaped like bids; legality is the engine's call
    (PLAY, "b7", "b7"), (PLAY, "y13", "y13"), (PLAY, "J3", "J3"),
    (TRUMP, "red", "red"), (PAY, "white", "white"),
])
def test_well_shaped_answers_parse(decision: Decision, text: str, expected: object) -> None:
    assert protocol.parse_answer(option(text), decision) == expected


@pytest.mark.parametrize("decision, action", [
    (BID, option("two")), (BID, option("")), (BID, option("1.5")),
    (PLAY, option("banana")), (PLAY, option("b 7")), (PLAY, option("")),
    (TRUMP, option("b7")), (PAY, option("RED")),
    (BID, pb.Action(request_id=5, prediction=pb.Prediction(destroyer=True))),   # a prediction for a bid
    (PLAY, pb.Action(request_id=5)),                                            # no choice at all
    (PREDICT, option("red")),                                                   # an option for a prediction
    (PREDICT, pb.Action(request_id=5, prediction=pb.Prediction(tokens={"pink": 1}))),   # no such colour
    (PREDICT, pb.Action(request_id=5, prediction=pb.Prediction(take_from=[pb.TakeFrom(colour="Red", seat=1)]))),
])
def test_malformed_answers_are_refused(decision: Decision, action: pb.Action) -> None:
    with pytest.raises(protocol.Malformed):
        protocol.parse_answer(action, decision)


def test_predictions_round_trip() -> None:
    prediction = Prediction(tokens={"red": 2, "blue": 1}, take_from=(("red", 2),))
    wire = pb.Action(request_id=1, prediction=protocol.prediction_to_wire(prediction))
    assert protocol.parse_answer(wire, PREDICT) == prediction
    empty = protocol.parse_answer(pb.Action(request_id=1, prediction=pb.Prediction()), PREDICT)
    assert empty == Prediction()


def test_a_decision_request_carries_everything() -> None:
    game = new_game(GameConfig(variant="classic", players=3, seed=1, rounds=2))
    seat = game.to_act()[0]
    decision = game.decision(seat)
    events, _ = game.events_for(seat, 0)
    message = protocol.decision_request(
        match_id="m1", seat=seat, request_id=42, decision=decision,
        observation_json=protocol.dumps(game.observe(seat)), events_json=[protocol.dumps(e) for e in events],
        deadline_ms=1000, time_bank_ms=9500)
    request = pb.ArenaMessage.FromString(message.SerializeToString()).request
    assert (request.match_id, request.seat, request.request_id) == ("m1", seat, 42)
    assert request.kind == protocol.KIND_TO_WIRE[decision.kind]
    assert list(request.options) == [str(o) for o in decision.options]
    assert json.loads(request.observation_json) == json.loads(json.dumps(game.observe(seat)))
    assert [json.loads(e) for e in request.events_json] == json.loads(json.dumps(events))
    assert (request.deadline_ms, request.time_bank_ms) == (1000, 9500)
    assert " " not in request.observation_json     # compact JSON


def test_dumps_is_compact_json() -> None:
    for value in [{"a": [1, 2.5, None, True, "é\n"]}, "x", 3, [], {}, {"nested": {"b": [{}]}}]:
        encoded = protocol.dumps(value)
        assert json.loads(encoded) == value
        assert encoded == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert protocol.dumps({1: "k"}) == '{"1":"k"}'      # as the standard library writes int keys
    with pytest.raises(TypeError):
        protocol.dumps({"x": object()})
