"""From a decision request to the message that answers it: the request read for the bot,
the bot's answer checked against the options, and the fallback when anything fails.

Every request is answered: when the bot's method raises, or returns what is not among the
options, or this SDK cannot read the request, the answer is the first option (or no
prediction), and ``Action.bot_error`` says why (the arena records it as a ``bot_error``
fault, so a bot's own bug is never hidden from its author). The wire layer converts both
ways (``arena.wire.protocol``). The client (``arena.sdk.client``) calls the bot on a
lane between :func:`read_request` and :func:`reply`; ``name`` is the bot's, for the log.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any, cast

from arena.sdk.bot import BadAnswer, Bot
from arena.sdk.matches import _Seat
from arena.wire import protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2
from engine import PREDICT
from engine.observations import Observation

log = logging.getLogger("arena.sdk")   # the SDK's one logger, whichever module logs

BOT_ERROR_CHARS = 200   # the arena keeps this much of Action.bot_error


def read_request(name: str | None, seat: _Seat, request: arena_pb2.DecisionRequest
                 ) -> tuple[str, Observation, list[dict[str, Any]] | None, list[Any]] | arena_pb2.BotMessage:
    """Set the seat's state on its bot and read the request: (kind, observation, events
    or None, options), or the fallback when this SDK cannot read it (its bug, not the bot's)."""
    bot = seat.bot
    bot.rng, bot.match = seat.rng, seat.info
    bot.deadline_ms, bot.time_bank_ms = request.deadline_ms, request.time_bank_ms
    kind = protocol.kind_from_wire(request.kind)
    try:
        # The engine's observation as JSON, parsed into the shape it had (an events-only
        # arena sends none: then it is empty).
        obs = cast(Observation, protocol.observation_from_wire(request) if request.observation_json else {})
        events = (protocol.events_from_wire(request)
                  if request.events_json and type(bot).on_events is not Bot.on_events else None)
        options = protocol.options_from_wire(kind, request.options)
    except Exception as error:
        log.error("%s: cannot read a %s request of match %s; sending the fallback:\n%s",
                  name, request.kind, request.match_id, traceback.format_exc())
        return fallback(request, kind, f"the SDK could not read the request: {_one_line(error)}")
    return kind, obs, events, options


def fallback_after(name: str | None, request: arena_pb2.DecisionRequest, kind: str,
                   error: Exception) -> arena_pb2.BotMessage:
    """The fallback for a method that raised (or answered what cannot be an answer)."""
    if isinstance(error, BadAnswer):
        log.error("%s: %s in match %s; sending the fallback", name, error, request.match_id)
        return fallback(request, kind, str(error))
    # The bot's bug: log it, answer something legal, say why.
    log.error("%s: %s decision failed in match %s; sending the fallback:\n%s",
              name, kind, request.match_id, "".join(traceback.format_exception(error)))
    return fallback(request, kind, f"{kind} raised {type(error).__name__}: {_one_line(error)}")


def reply(name: str | None, request: arena_pb2.DecisionRequest, kind: str, options: list[Any],
          action: Any) -> arena_pb2.BotMessage:
    """The answer message for the bot's action, or the fallback if it is no option.

    The options arrived as the engine types them (ints for bids): the action is checked
    against them as it is, and only the answer message turns it back into text.
    """
    if kind != PREDICT and action not in options:
        shown = ", ".join(str(o) for o in options[:8]) + (", ..." if len(options) > 8 else "")
        why = f"{kind} returned {action!r}, which is no option (choose from {shown})"
        log.error("%s: %s in match %s; sending the fallback", name, why, request.match_id)
        return fallback(request, kind, why)
    try:
        return protocol.answer_message(request.request_id, kind, action)
    except Exception as error:  # e.g. a prediction of the wrong shape
        log.error("%s: %s answer %r cannot be sent in match %s; sending the fallback:\n%s",
                  name, kind, action, request.match_id, traceback.format_exc())
        return fallback(request, kind, f"{kind} returned {action!r}: {_one_line(error)}")


def fallback(request: arena_pb2.DecisionRequest, kind: str | None, why: str) -> arena_pb2.BotMessage:
    """The first option (or no prediction), marked as the SDK's answer for ``why``."""
    if kind == PREDICT or not request.options:
        message = protocol.answer_message(request.request_id, PREDICT, None)
    else:
        message = protocol.answer_message(request.request_id, kind or "", request.options[0])
    message.action.bot_error = why[:BOT_ERROR_CHARS]
    return message


def _one_line(error: BaseException) -> str:
    """An exception's message on one line, short enough for ``Action.bot_error``.

    >>> _one_line(ValueError("no card\\n'zz99'"))
    "no card 'zz99'"
    """
    return " ".join(str(error).split())[:BOT_ERROR_CHARS]
