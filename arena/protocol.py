"""Conversions between the engine and the wire (``proto/wizard_arena/v1/arena.proto``).

The referee thinks in engine terms (a :class:`engine.Decision`, an action that is an
``int``, a card code ``str`` or a :class:`engine.Prediction`); bots see protobuf
messages whose options are always strings. This module is the only place that knows
how one maps to the other, so the referee and the server stay free of wire details.

Answer checking happens in two steps. :func:`parse_answer` checks the *shape* of an
answer (a bid must be a whole number, a card must look like a card code, a prediction
must come as a ``Prediction`` and only for a ``PREDICT`` request, ...) and raises
:class:`Malformed` otherwise. Whether a well-shaped answer is *legal* is the engine's
call: ``game.apply`` raises :class:`engine.IllegalAction`.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import orjson

from arena.pb.wizard_arena.v1 import arena_pb2 as pb
from engine.core import BID, PAY, PLAY, PREDICT, TRUMP, Action, Decision, Prediction

PROTOCOL_VERSION = 1

KIND_TO_WIRE: dict[str, int] = {BID: pb.BID, PLAY: pb.PLAY, TRUMP: pb.TRUMP, PREDICT: pb.PREDICT, PAY: pb.PAY}
WIRE_TO_KIND: dict[int, str] = {wire: kind for kind, wire in KIND_TO_WIRE.items()}

# Shapes of well-formed options. A card code is a suit/colour letter (or W/J for
# Wizards and Jesters) followed by a number: "b7", "W1", "J3", "r15".
_CARD_CODE = re.compile(r"[A-Za-z][0-9]{1,2}")
_BID = re.compile(r"-?[0-9]{1,3}")
# Trump suits (classic) and token colours (extreme; white is the joker token).
_COLOUR_NAMES = frozenset({"blue", "green", "red", "yellow", "purple", "white", "black"})


class Malformed(ValueError):
    """An answer that is not even shaped like an answer to this request."""


def dumps(value: Any) -> str:
    """Compact JSON, as every JSON string on the wire is encoded (UTF-8, no spaces).

    orjson, because the referee encodes an observation for every decision: a late-game
    classic observation (2 KB) takes about 9 µs here against 60-90 µs with the standard
    library's encoder, the largest single cost of a decision before.

    >>> dumps({"hand": ["b7", "W1"], "bid": None, 3: True})
    '{"hand":["b7","W1"],"bid":null,"3":true}'
    """
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def wire_options(decision: Decision) -> list[str]:
    """The decision's legal options as wire strings (bids ``3`` become ``"3"``); ``[]`` for a prediction."""
    if decision.options is None:
        return []
    return [str(option) for option in decision.options]


def parse_answer(action: pb.Action, decision: Decision) -> Action:
    """The engine action an ``Action`` message stands for, or :class:`Malformed`.

    The request id is not checked here (the referee routes answers by id).
    """
    which = action.WhichOneof("choice")
    if decision.kind == PREDICT:
        if which != "prediction":
            raise Malformed("a PREDICT request needs an Action with a prediction")
        return prediction_from_wire(action.prediction)
    if which != "option":
        raise Malformed(f"a {decision.kind.upper()} request needs an Action with an option string"
                        + (", not a prediction" if which == "prediction" else ""))
    option = action.option
    if decision.kind == BID:
        if not _BID.fullmatch(option):
            raise Malformed(f"a bid is a whole number such as \"2\" (got {option[:40]!r})")
        return int(option)
    if decision.kind == PLAY:
        if not _CARD_CODE.fullmatch(option):
            raise Malformed(f"a card is a card code such as \"b7\" (got {option[:40]!r})")
        return option
    if option not in _COLOUR_NAMES:
        raise Malformed(f"a {decision.kind} answer is a colour name such as \"blue\" (got {option[:40]!r})")
    return option


def prediction_from_wire(message: pb.Prediction) -> Prediction:
    """The engine :class:`Prediction` for a wire ``Prediction``; :class:`Malformed` if it cannot be one."""
    data = {
        "destroyer": message.destroyer,
        "tokens": dict(message.tokens),
        "take_from": [[pair.colour, pair.seat] for pair in message.take_from],
    }
    # A name that is no colour at all is a shape error, like "pink" for PAY; a real
    # colour the rules do not allow here is the engine's call (illegal).
    for colour in [*data["tokens"], *(colour for colour, _ in data["take_from"])]:
        if colour not in _COLOUR_NAMES:
            raise Malformed(f"a prediction names tokens by colour, such as \"red\" (got {colour[:40]!r})")
    try:
        return Prediction.from_json(data)
    except ValueError as error:
        raise Malformed(str(error)) from None


def prediction_to_wire(prediction: Prediction) -> pb.Prediction:
    """The wire form of a :class:`Prediction` (used by test bots and documentation examples)."""
    return pb.Prediction(
        destroyer=prediction.destroyer,
        tokens={colour: n for colour, n in prediction.tokens.items() if n},
        take_from=[pb.TakeFrom(colour=colour, seat=seat) for colour, seat in prediction.take_from],
    )


# ------------------------------------------------------------------ arena -> bot messages


def decision_request(*, match_id: str, seat: int, request_id: int, decision: Decision, observation_json: str,
                     events_json: Sequence[str], deadline_ms: int, time_bank_ms: int) -> pb.ArenaMessage:
    """One ``DecisionRequest``, wrapped in its ``ArenaMessage``."""
    return pb.ArenaMessage(request=pb.DecisionRequest(
        match_id=match_id,
        seat=seat,
        request_id=request_id,
        kind=KIND_TO_WIRE[decision.kind],
        options=wire_options(decision),
        observation_json=observation_json,
        events_json=events_json,
        deadline_ms=deadline_ms,
        time_bank_ms=time_bank_ms,
    ))


def match_started(*, match_id: str, variant: str, seat: int, bot_names: Sequence[str], options_json: str,
                  seed: int, move_time_ms: int, time_bank_ms: int) -> pb.ArenaMessage:
    return pb.ArenaMessage(match_started=pb.MatchStarted(
        match_id=match_id, variant=variant, seat=seat, players=len(bot_names), bot_names=bot_names,
        options_json=options_json, seed=seed, move_time_ms=move_time_ms, time_bank_ms=time_bank_ms,
    ))


def match_ended(*, match_id: str, seat: int, totals: Sequence[int], places: Sequence[int], result_json: str,
                forfeited: bool, reason: str) -> pb.ArenaMessage:
    return pb.ArenaMessage(match_ended=pb.MatchEnded(
        match_id=match_id, seat=seat, totals=totals, places=places, result_json=result_json,
        forfeited=forfeited, reason=reason,
    ))


def fault(*, match_id: str, request_id: int | None, kind: str, message: str, faults: int,
          forfeited: bool) -> pb.ArenaMessage:
    return pb.ArenaMessage(fault=pb.Fault(
        match_id=match_id, request_id=request_id or 0, kind=kind, message=message, faults=faults,
        forfeited=forfeited,
    ))


def welcome(*, bot_id: str, bot_name: str, server_version: str) -> pb.ArenaMessage:
    return pb.ArenaMessage(welcome=pb.Welcome(
        bot_id=bot_id, bot_name=bot_name, server_version=server_version, protocol_version=PROTOCOL_VERSION,
    ))
