"""Engine <-> wire conversions (arena/wire/: protocol.py, calls.py, json_codec.py): no server, no processes."""

from __future__ import annotations

import json

import pytest
from factories.records import played

from arena.records import FaultRecord, MatchRecord, MatchSpec
from arena.wire import calls, json_codec, protocol
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
        observation=game.observe(seat), events=events,
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
        encoded = json_codec.dumps(value)
        assert json.loads(encoded) == value
        assert encoded == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert json_codec.dumps({1: "k"}) == '{"1":"k"}'      # as the standard library writes int keys
    with pytest.raises(TypeError):
        json_codec.dumps({"x": object()})


def test_the_json_codec_handles_what_orjson_alone_does_not() -> None:
    big = {"seed": 2**70, "name": "Zoë"}
    # Integers beyond 64 bits: written as the standard library writes them (the store's
    # rows always were), and read back exactly by loads.
    assert json_codec.dumps(big) == json.dumps(big, separators=(",", ":"))
    assert json_codec.loads(json_codec.dumps(big)) == big
    assert json_codec.loads_fast(b'{"hand":["b7"]}') == {"hand": ["b7"]}


# ---------------------------------------------------------------------- the bot's side


@pytest.mark.parametrize("decision", [BID, PLAY, TRUMP, PAY])
def test_options_come_back_as_the_engine_types_them(decision: Decision) -> None:
    kind = protocol.kind_from_wire(protocol.KIND_TO_WIRE[decision.kind])
    assert kind == decision.kind
    assert protocol.options_from_wire(kind, protocol.wire_options(decision)) == list(decision.options or ())


@pytest.mark.parametrize("variant, decision, action", [
    ("classic", BID, 2), ("classic", BID, -1), ("classic", PLAY, "W1"), ("classic", TRUMP, "red"),
    ("extreme", PAY, "white"), ("extreme", PREDICT, Prediction(destroyer=True)),
    ("extreme", PREDICT, Prediction(tokens={"red": 2}, take_from=(("red", 1),))),
])
def test_an_answer_reaches_the_referee_as_the_bot_gave_it(variant: str, decision: Decision, action: object) -> None:
    message = protocol.answer_message(9, decision.kind, action)
    assert message.action.request_id == 9
    assert protocol.parse_answer(message.action, decision, variant) == action


def test_a_prediction_answer_may_be_json_or_nothing() -> None:
    as_json = protocol.answer_message(1, "predict", {"tokens": {"blue": 1}}).action
    assert protocol.parse_answer(as_json, PREDICT, "extreme") == Prediction(tokens={"blue": 1})
    nothing = protocol.answer_message(1, "predict", None).action
    assert protocol.parse_answer(nothing, PREDICT, "extreme") == Prediction()
    with pytest.raises(ValueError):
        protocol.answer_message(1, "predict", {"tokens": "lots"})


# ---------------------------------------------------------------------- organiser calls


def test_run_match_requests_round_trip() -> None:
    spec = MatchSpec(config=GameConfig(variant="extreme", players=3, seed=2**63 - 1), bots=["a", "b", "c"],
                     match_id="m7", bot_seeds=[1, 2, 3], move_time=0.25, time_bank=2.0, max_faults=5,
                     tournament_id="t1", game_index=0, private=True)
    assert calls.match_spec(calls.run_match_request(spec)) == spec
    defaults = calls.match_spec(pb.RunMatchRequest(bots=["a", "b", "c", "d"], game_index=-1))
    assert defaults.config == GameConfig() and defaults.move_time is None and defaults.game_index is None
    with pytest.raises(ValueError):
        calls.match_spec(pb.RunMatchRequest(config_json="[1, 2]"))


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_a_played_record_crosses_the_wire_whole(variant: str) -> None:
    record = played("m1", variant, ["a", "b", "c"], seed=5)
    record.latencies_ms[1] = None                   # the referee played the fallback
    record.faults = [FaultRecord(1, "b", "timeout", "no answer", 12), FaultRecord(2, "c", "disconnect", "gone")]
    record.tournament_id, record.game_index, record.time_bank_ms = "t1", 3, 2000.0
    record.bank_used_ms = [0.0, 2000.0, 12.5]
    reply = pb.RunMatchResponse.FromString(calls.run_match_response(record, stored=True).SerializeToString())
    assert calls.match_played(reply) == (record, True)
    # The deprecated JSON form still holds the same record, for organisers that read it.
    assert MatchRecord.from_json(json.loads(reply.record_json)) == record


def test_an_aborted_record_of_an_older_kind_crosses_the_wire_whole() -> None:
    record = played("m2", "classic", ["a", "b", "c"], seed=6)
    record.status, record.result, record.time_bank_ms, record.bank_used_ms = "aborted", None, None, None
    back, stored = calls.match_played(calls.run_match_response(record, stored=False))
    assert back == record and back.result_json() == {} and not stored
