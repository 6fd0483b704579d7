"""The Play stream's messages (``proto/wizard_arena/v1/arena.proto``) and the engine's
values: every conversion between them, in both directions, on both sides.

The referee thinks in engine terms (a :class:`engine.Decision`; an action that is an
``int`` bid, a card code or colour ``str``, or a :class:`engine.Prediction`); bots
see protobuf messages whose options are always strings. This module is the only place
that knows how one maps to the other: the referee uses the arena's side (a decision
out, an answer in), the SDK the bot's side (a request in, an answer out), and a value
keeps its engine type everywhere else. One classic bid, there and back:

>>> decision = Decision(seat=0, kind=BID, options=(0, 1, 2))
>>> request = decision_request(match_id="m1", seat=0, request_id=7, decision=decision,
...                            observation={"hand": ["b7"]}, events=[], deadline_ms=1000,
...                            time_bank_ms=10_000).request
>>> request.options, request.observation_json                         # the arena sends
(['0', '1', '2'], '{"hand":["b7"]}')
>>> kind = kind_from_wire(request.kind)                               # the SDK reads
>>> kind, options_from_wire(kind, request.options)
('bid', [0, 1, 2])
>>> answer = answer_message(request.request_id, kind, 2)              # the SDK answers
>>> answer.action.option
'2'
>>> parse_answer(answer.action, decision, "classic")                  # the referee reads
2

Reading an answer is parsing, not judging. :func:`parse_answer` turns the bot's text
into the engine's action and raises :class:`Malformed` when it names nothing the
variant has: a bid must be a whole number written the canonical way (``"0"``,
``"3"``, ``"-1"``; never ``"03"``), a card one of the variant's card codes, a colour
one of the variant's colour names, a prediction must come as a ``Prediction`` and only
for a ``PREDICT`` request. Whether a well-shaped action is *legal* now (a card you
hold, a bid in range, a colour on offer) is decided once, by the engine: ``game.apply``
raises :class:`engine.IllegalAction`. That split is the fault table of
``docs/protocol.md``: malformed versus illegal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from arena.wire import bot_text, json_codec
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import BID, PAY, PLAY, PREDICT, TRUMP, VARIANT_RECORDS, Action, Decision, Prediction

PROTOCOL_VERSION = 1

# The decision kinds, engine name <-> wire enum: the one table of them.
KIND_TO_WIRE: dict[str, pb.DecisionKind] = {
    BID: pb.BID, PLAY: pb.PLAY, TRUMP: pb.TRUMP, PREDICT: pb.PREDICT, PAY: pb.PAY,
}
WIRE_TO_KIND: dict[int, str] = {wire: kind for kind, wire in KIND_TO_WIRE.items()}

# A bid is written the canonical way: no sign on zero, no leading zeros, no "+", no
# spaces; at most three digits (no round has more tricks than that).
_BID = re.compile(r"0|-?[1-9][0-9]{0,2}")
# What each variant's answers may name (from its record): its card codes, and its colour
# names (the trump suits of classic; the token colours of Wizard Extreme, white included).
CARD_CODES: dict[str, frozenset[str]] = {name: frozenset(v.cards) for name, v in VARIANT_RECORDS.items()}
COLOUR_NAMES: dict[str, frozenset[str]] = {name: frozenset(v.action_colours) for name, v in VARIANT_RECORDS.items()}
CARD_HELP = {name: f"cards are {v.cards_in_words}" for name, v in VARIANT_RECORDS.items()}
# More than there are tokens in the game (27): no legal prediction needs so many pairs.
MAX_TAKE_FROM = 32
# How much of a bot's text the arena keeps (bot_message_from_wire): Action.bot_error to
# BOT_ERROR_CHARS, any other string to MAX_TEXT_CHARS (Hello.name and Hello.version are
# refused past their own, smaller limits before they are read: arena.referee.auth).
BOT_ERROR_CHARS = 200
MAX_TEXT_CHARS = 1000
TEXT_LIMITS = {pb.Action.DESCRIPTOR.fields_by_name["bot_error"].full_name: BOT_ERROR_CHARS}
_BOT_TEXT = bot_text.MessageCleaner(TEXT_LIMITS, MAX_TEXT_CHARS)


class Malformed(ValueError):
    """An answer that is not even shaped like an answer to this request."""


def clip(text: str, limit: int = 40) -> str:
    """``repr`` of a client's string, cut to ``limit`` characters: error messages never
    echo a client's field back whole (a 100 KB name would overflow gRPC's metadata).

    >>> clip("x" * 100, 5)
    "'xxxxx'… (100 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def bot_message_from_wire(message: pb.BotMessage) -> pb.BotMessage:
    """A bot's message as the arena takes it in: every string in it, at any depth, made
    safe to keep and show (:func:`arena.wire.bot_text.clean`), in place, and returned.

    The referee calls this on each message it reads from a ``Play`` stream, before
    anything else looks at it (``arena.referee.auth.admit`` on the Hello,
    ``Connection.read_loop`` on the rest), so the store, the logs, the terminal and the web only
    ever get clean text: a ``Hello.version`` is stored with every match, an
    ``Action.bot_error`` becomes a fault's message (at most :data:`BOT_ERROR_CHARS`
    characters kept). Answers are parsed after cleaning; a replaced character is never
    part of a valid option, so a malformed answer stays malformed.

    >>> hello = bot_message_from_wire(pb.BotMessage(hello=pb.Hello(version="2.1\\x1b]0;pwned\\x07\\n")))
    >>> hello.hello.version
    '2.1\\ufffd '
    >>> len(bot_message_from_wire(pb.BotMessage(action=pb.Action(bot_error="x" * 500))).action.bot_error)
    200
    """
    _BOT_TEXT.clean(message)
    return message


# ------------------------------------------------------------------ options and answers


def wire_options(decision: Decision) -> list[str]:
    """The decision's legal options as wire strings (bids ``3`` become ``"3"``); ``[]`` for a prediction."""
    if decision.options is None:
        return []
    return [str(option) for option in decision.options]


def kind_from_wire(kind: int) -> str:
    """The engine's name of a wire decision kind; ``""`` for one this version does not know.

    >>> kind_from_wire(pb.PLAY), kind_from_wire(99)
    ('play', '')
    """
    return WIRE_TO_KIND.get(kind, "")


def options_from_wire(kind: str, options: Sequence[str]) -> list[Action]:
    """A request's options as the engine types them: ints for a bid, strings otherwise
    (the inverse of :func:`wire_options`; ``ValueError`` for a bid that is no number).

    >>> options_from_wire(BID, ["0", "1"]), options_from_wire(PLAY, ["b7"])
    ([0, 1], ['b7'])
    """
    if kind == BID:
        return [int(option) for option in options]
    return list(options)


def answer_message(request_id: int, kind: str, action: Action | Mapping[str, Any] | None) -> pb.BotMessage:
    """The ``Action`` answering a request with an engine action (the bot's side).

    A prediction may also be given as its JSON form or ``None`` (take nothing);
    ``ValueError`` if it is not one.

    >>> answer_message(3, PREDICT, {"tokens": {"red": 2}}).action.prediction.tokens["red"]
    2
    """
    if kind == PREDICT:
        prediction = Prediction() if action is None else Prediction.from_json(action)
        return pb.BotMessage(action=pb.Action(request_id=request_id, prediction=prediction_to_wire(prediction)))
    return pb.BotMessage(action=pb.Action(request_id=request_id, option=str(action)))


def parse_answer(action: pb.Action, decision: Decision, variant: str) -> Action:
    """The engine action an ``Action`` message stands for, or :class:`Malformed` (the arena's side).

    The request id is not checked here (the connection routes answers by id).

    >>> play = Decision(seat=0, kind=PLAY, options=("b7", "W1"))
    >>> parse_answer(pb.Action(option="b7"), play, "classic")
    'b7'
    >>> parse_answer(pb.Action(option="b14"), play, "classic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    arena.wire.protocol.Malformed: 'b14' is not a card of classic (cards are b1..b13, g1..g13, ...)
    >>> parse_answer(pb.Action(option="01"), Decision(seat=0, kind=BID, options=(0, 1)), "classic")
    Traceback (most recent call last):
    ...
    arena.wire.protocol.Malformed: a bid is a whole number written as "0", "1", "2"... (got '01')
    """
    which = action.WhichOneof("choice")
    if decision.kind == PREDICT:
        if which != "prediction":
            raise Malformed("a PREDICT request needs an Action with a prediction")
        return prediction_from_wire(action.prediction, variant)
    if which != "option":
        raise Malformed(f"a {decision.kind.upper()} request needs an Action with an option string"
                        + (", not a prediction" if which == "prediction" else ""))
    option = action.option
    if decision.kind == BID:
        if not _BID.fullmatch(option):
            raise Malformed(f"a bid is a whole number written as \"0\", \"1\", \"2\"... (got {clip(option)})")
        return int(option)
    if decision.kind == PLAY:
        if option not in CARD_CODES[variant]:
            raise Malformed(f"{clip(option)} is not a card of {variant} ({CARD_HELP[variant]})")
        return option
    if option not in COLOUR_NAMES[variant]:
        raise Malformed(f"a {decision.kind.upper()} answer is one of {', '.join(sorted(COLOUR_NAMES[variant]))} "
                        f"(got {clip(option)})")
    return option


def prediction_from_wire(message: pb.Prediction, variant: str = "extreme") -> Prediction:
    """The engine :class:`Prediction` for a wire ``Prediction``; :class:`Malformed` if it cannot be one."""
    tokens = dict(message.tokens)
    take_from = [[pair.colour, pair.seat] for pair in message.take_from]
    if len(take_from) > MAX_TAKE_FROM:
        raise Malformed(f"a prediction lists at most {MAX_TAKE_FROM} take_from pairs (got {len(take_from)})")
    # A name that is no colour of the variant is a shape error, like "pink" for PAY; a
    # real colour the rules do not allow here is the engine's call (illegal).
    for colour in [*tokens, *(colour for colour, _ in take_from)]:
        if colour not in COLOUR_NAMES[variant]:
            raise Malformed(f"a prediction names tokens by colour, such as \"red\" (got {clip(colour)})")
    try:
        return Prediction.from_json({"destroyer": message.destroyer, "tokens": tokens, "take_from": take_from})
    except ValueError as error:
        raise Malformed(str(error)[:200]) from None


def prediction_to_wire(prediction: Prediction) -> pb.Prediction:
    """The wire form of a :class:`Prediction` (tokens taken 0 times are left out)."""
    return pb.Prediction(
        destroyer=prediction.destroyer,
        tokens={colour: n for colour, n in prediction.tokens.items() if n},
        take_from=[pb.TakeFrom(colour=colour, seat=seat) for colour, seat in prediction.take_from],
    )


# ------------------------------------------------------------------ observations and events


def events_json(events: Sequence[Any]) -> list[str]:
    """Engine events as the wire carries them: one compact JSON string each (to a seat
    in ``DecisionRequest.events_json``, to spectators in ``SpectatorUpdate.events_json``)."""
    dumps = json_codec.dumps
    return [dumps(event) for event in events]


def observation_from_wire(request: pb.DecisionRequest) -> dict[str, Any]:
    """A request's observation as the engine wrote it (the bot's side; read on every
    decision, so with the fast parser)."""
    observation: dict[str, Any] = json_codec.loads_fast(request.observation_json)
    return observation


def events_from_wire(request: pb.DecisionRequest) -> list[dict[str, Any]]:
    """A request's events, oldest first (the bot's side)."""
    return [json_codec.loads_fast(event) for event in request.events_json]


# ------------------------------------------------------------------ arena -> bot messages


def decision_request(*, match_id: str, seat: int, request_id: int, decision: Decision,
                     observation: Mapping[str, Any] | str | None, events: Sequence[Any] = (), deadline_ms: int,
                     time_bank_ms: int, encoded_events: Sequence[str] | None = None) -> pb.ArenaMessage:
    """One ``DecisionRequest`` (the engine's decision, observation and new events), wrapped in its ``ArenaMessage``.

    ``observation`` None leaves ``observation_json`` empty (a stream whose Hello asked
    for events only); a ``str`` is the observation already in its wire form.
    ``encoded_events``, when given, are the new events already in their wire form (see
    :func:`events_json`), encoded once for every seat that sees them; ``events`` is
    then ignored.
    """
    # Filled in place: half the cost of building a DecisionRequest and copying it into
    # its ArenaMessage (the referee builds one for every decision).
    message = pb.ArenaMessage()
    request = message.request
    request.match_id = match_id
    request.seat = seat
    request.request_id = request_id
    request.kind = KIND_TO_WIRE[decision.kind]
    if decision.options is not None:
        request.options.extend([str(option) for option in decision.options])
    if observation is not None:
        request.observation_json = observation if isinstance(observation, str) else json_codec.dumps(observation)
    request.events_json.extend(events_json(events) if encoded_events is None else encoded_events)
    request.deadline_ms = deadline_ms
    request.time_bank_ms = time_bank_ms
    return message


def match_started(*, match_id: str, variant: str, seat: int, bot_names: Sequence[str], options: Mapping[str, Any],
                  seed: int, move_time_ms: int, time_bank_ms: int) -> pb.ArenaMessage:
    """``MatchStarted`` for one seat; ``options`` is the game config without its deal seed."""
    return pb.ArenaMessage(match_started=pb.MatchStarted(
        match_id=match_id, variant=variant, seat=seat, players=len(bot_names), bot_names=bot_names,
        options_json=json_codec.dumps(options), seed=seed, move_time_ms=move_time_ms, time_bank_ms=time_bank_ms,
    ))


def match_ended(*, match_id: str, seat: int, totals: Sequence[int], places: Sequence[int], result_json: str,
                forfeited: bool, reason: str) -> pb.ArenaMessage:
    """``MatchEnded`` for one seat; ``result_json`` is encoded once for every seat."""
    return pb.ArenaMessage(match_ended=pb.MatchEnded(
        match_id=match_id, seat=seat, totals=totals, places=places, result_json=result_json,
        forfeited=forfeited, reason=reason,
    ))


def fault(*, match_id: str, request_id: int | None, kind: str, message: str, faults: int,
          forfeited: bool) -> pb.ArenaMessage:
    """A ``Fault``; ``match_id`` ``""`` and no request for a message charged to no seat."""
    return pb.ArenaMessage(fault=pb.Fault(
        match_id=match_id, request_id=request_id or 0, kind=kind, message=message, faults=faults,
        forfeited=forfeited,
    ))


def welcome(*, bot_id: str, bot_name: str, server_version: str, max_matches: int,
            events_only: bool = False) -> pb.ArenaMessage:
    """The ``Welcome`` that admits a stream."""
    return pb.ArenaMessage(welcome=pb.Welcome(
        bot_id=bot_id, bot_name=bot_name, server_version=server_version, protocol_version=PROTOCOL_VERSION,
        max_matches=max_matches, events_only=events_only,
    ))
