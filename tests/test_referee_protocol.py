"""Engine <-> wire conversions (arena/wire/protocol.py): no server, no processes."""

from __future__ import annotations

import json

import pytest

from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
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


@pytest.mark.parametrize("variant, decision, text, expected", [
    # Shaped like answers of the variant; whether they are legal now is the engine's call.
    ("classic", BID, "2", 2), ("classic", BID, "7", 7), ("classic", BID, "-1", -1), ("classic", BID, "0", 0),
    ("classic", PLAY, "b7", "b7"), ("classic", PLAY, "y13", "y13"), ("classic", PLAY, "J3", "J3"),
    ("extreme", PLAY, "p15", "p15"), ("extreme", PLAY, "r12", "r12"),
    ("classic", TRUMP, "red", "red"), ("extreme", PAY, "white", "white"), ("extreme", PAY, "purple", "purple"),
])
def test_well_shaped_answers_parse(variant: str, decision: Decision, text: str, expected: object) -> None:
    assert protocol.parse_answer(option(text), decision, variant) == expected


@pytest.mark.parametrize("variant, decision, action", [
    ("classic", BID, option("two")), ("classic", BID, option("")), ("classic", BID, option("1.5")),
    # Answers are verbatim: one way to write each bid.
    ("classic", BID, option("00")), ("classic", BID, option("01")), ("classic", BID, option("+1")),
    ("classic", BID, option("-0")), ("classic", BID, option(" 1")), ("classic", BID, option("1000")),
    ("classic", PLAY, option("banana")), ("classic", PLAY, option("b 7")), ("classic", PLAY, option("")),
    # Shaped like a card code but no card of the variant.
    ("classic", PLAY, option("x7")), ("classic", PLAY, option("b14")), ("classic", PLAY, option("W5")),
    ("classic", PLAY, option("b07")), ("classic", PLAY, option("p3")), ("extreme", PLAY, option("W1")),
    ("extreme", PLAY, option("J1")), ("extreme", PLAY, option("p16")),
    ("classic", TRUMP, option("b7")), ("classic", TRUMP, option("purple")), ("extreme", PAY, option("RED")),
    ("extreme", PAY, option("pink")),
    ("classic", BID, pb.Action(request_id=5, prediction=pb.Prediction(destroyer=True))),   # a prediction for a bid
    ("classic", PLAY, pb.Action(request_id=5)),                                            # no choice at all
    ("extreme", PREDICT, option("red")),                                                   # an option for a prediction
    ("extreme", PREDICT, pb.Action(request_id=5, prediction=pb.Prediction(tokens={"pink": 1}))),   # no such colour
    ("extreme", PREDICT, pb.Action(request_id=5, prediction=pb.Prediction(
        take_from=[pb.TakeFrom(colour="Red", seat=1)]))),
    ("extreme", PREDICT, pb.Action(request_id=5, prediction=pb.Prediction(
        take_from=[pb.TakeFrom(colour="red", seat=1)] * 100))),                             # absurdly many pairs
])
def test_malformed_answers_are_refused(variant: str, decision: Decision, action: pb.Action) -> None:
    with pytest.raises(protocol.Malformed):
        protocol.parse_answer(action, decision, variant)


def test_a_malformed_message_never_echoes_a_long_field_whole() -> None:
    with pytest.raises(protocol.Malformed) as refused:
        protocol.parse_answer(option("x" * 100_000), PLAY, "classic")
    assert len(str(refused.value)) < 200


def test_predictions_round_trip() -> None:
    prediction = Prediction(tokens={"red": 2, "blue": 1}, take_from=(("red", 2),))
    wire = pb.Action(request_id=1, prediction=protocol.prediction_to_wire(prediction))
    assert protocol.parse_answer(wire, PREDICT, "extreme") == prediction
    empty = protocol.parse_answer(pb.Action(request_id=1, prediction=pb.Prediction()), PREDICT, "extreme")
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
