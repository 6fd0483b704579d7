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

import json
import re
from typing import Any, Sequence

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


# One encoder for everything: json.dumps with custom separators would build a new
# encoder on every call, which costs more than the encoding of a small observation.
_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)
# JSONEncoder.encode still builds a C encoder object on every call; on the referee's hot
# path (an observation and a few events per decision) building it once and calling it
# directly halves the cost for small events and saves about a quarter for an
# observation. Same output: the arguments are those JSONEncoder.iterencode passes.
_C_ENCODER = (json.encoder.c_make_encoder(None, _ENCODER.default, json.encoder.encode_basestring_ascii, None,
                                          ":", ",", False, False, True)
              if json.encoder.c_make_encoder is not None else None)


def dumps(value: Any) -> str:
    """Compact JSON, as every JSON string on the wire is encoded."""
    if _C_ENCODER is None:   # a Python without the _json accelerator
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


class MatchJson:
    """One match's JSON on the wire, reusing what was already encoded for it.

    The output is always exactly :func:`dumps` of the value; only the work differs:

    - public events are the same for every seat: each is encoded once per match
      (:meth:`add_public`) and its JSON reused for every seat that receives it;
    - an observation's ``round_history`` (most of its bytes late in a game, and the
      same for every seat for a whole round) is encoded again only when it changed.

    Reuse is decided by equality with the value encoded before, never by position
    alone, so a private event or a changed history is always encoded afresh.
    """

    MEMO_KEY = "round_history"

    def __init__(self) -> None:
        self._public: list[tuple[Any, str]] = []     # public events from number _first on, with their JSON
        self._first = 0
        self._memo: tuple[Any, str] | None = None    # the last round_history and its JSON

    def add_public(self, events: Sequence[Any]) -> None:
        """Public events that follow those already added, in order."""
        self._public.extend((event, dumps(event)) for event in events)

    def forget(self, public_seen: int) -> None:
        """Every seat has received the first ``public_seen`` public events: drop them
        (in batches), so a long match does not keep two copies of its whole log."""
        if public_seen - self._first >= 64:
            del self._public[:public_seen - self._first]
            self._first = public_seen

    def events(self, events: Sequence[Any], public_seen: int) -> tuple[list[str], int]:
        """The JSON of ``events`` (a seat's next events: public ones in order, its private
        ones in between), given how many public events that seat already received;
        returns the JSON and the new count. (A seat that starts over after
        :meth:`forget`, e.g. on reconnecting, just gets everything encoded afresh.)"""
        public, first = self._public, self._first
        out = []
        for event in events:
            i = public_seen - first
            if 0 <= i < len(public) and public[i][0] == event:
                out.append(public[i][1])
                public_seen += 1
            else:
                out.append(dumps(event))
        return out, public_seen

    def observation(self, observation: dict[str, Any]) -> str:
        key = self.MEMO_KEY
        history = observation.get(key)
        if not history:
            return dumps(observation)
        if self._memo is None or self._memo[0] != history:
            self._memo = (history, dumps(history))
        # The keys around it keep their order: {before..., "round_history": ..., after...}.
        items = list(observation.items())
        at = next(i for i, (k, _) in enumerate(items) if k == key)
        parts = ["{"]
        if at:
            parts += [dumps(dict(items[:at]))[1:-1], ","]
        parts += [dumps(key), ":", self._memo[1]]
        if at + 1 < len(items):
            parts += [",", dumps(dict(items[at + 1:]))[1:-1]]
        parts.append("}")
        return "".join(parts)


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
