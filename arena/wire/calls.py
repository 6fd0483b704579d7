"""The organiser's and the public calls (``RunMatch``, ``ListMatches``, ``Spectate``): their
messages and the arena's values they carry, both ways.

The organiser (``arena tournament --server``) asks for a :class:`~arena.records.MatchSpec`
with :func:`run_match_request`; the arena reads it back with :func:`match_spec`, plays
it, and answers with :func:`run_match_response`: the :class:`~arena.records.MatchRecord`
and whether it stored it, which the organiser reads with :func:`match_played`.

>>> spec = MatchSpec(config=GameConfig(variant="classic", players=3, seed=9), bots=["a", "b", "c"],
...                  match_id="m1", move_time=0.5)
>>> request = run_match_request(spec)
>>> request.move_time_ms, request.time_bank_ms, request.game_index
(500, 0, -1)
>>> match_spec(request) == spec
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from arena.records import FaultRecord, MatchRecord, MatchSpec
from arena.wire import action_log, json_codec
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import GameConfig, options_of


def run_match_request(spec: MatchSpec) -> pb.RunMatchRequest:
    """The ``RunMatchRequest`` for a match spec (``None`` limits: the arena's defaults)."""
    return pb.RunMatchRequest(
        match_id=spec.match_id, config_json=json_codec.dumps(spec.config.to_dict()), bots=spec.bots,
        bot_seeds=spec.bot_seeds or [], move_time_ms=round((spec.move_time or 0) * 1000),
        time_bank_ms=round((spec.time_bank or 0) * 1000), max_faults=spec.max_faults or 0,
        tournament_id=spec.tournament_id or "", game_index=-1 if spec.game_index is None else spec.game_index,
        private=spec.private,
    )


def match_spec(request: pb.RunMatchRequest) -> MatchSpec:
    """The match spec a ``RunMatchRequest`` asks for (0 limits mean the arena's default);
    ``ValueError`` if its config is no JSON object, ``engine.ConfigError`` or
    ``ValueError`` if it is no game for its bots (:class:`~arena.records.MatchSpec`)."""
    config = json_codec.loads(request.config_json) if request.config_json else {}
    if not isinstance(config, dict):
        raise ValueError("config_json must be a JSON object (an engine GameConfig)")
    return MatchSpec(
        config=GameConfig.from_dict(config),
        bots=list(request.bots),
        match_id=request.match_id,
        bot_seeds=list(request.bot_seeds) or None,
        move_time=request.move_time_ms / 1000 if request.move_time_ms else None,
        time_bank=request.time_bank_ms / 1000 if request.time_bank_ms else None,
        max_faults=request.max_faults or None,
        tournament_id=request.tournament_id or None,
        game_index=request.game_index if request.game_index >= 0 else None,
        private=request.private,
    )


def run_match_response(record: MatchRecord, stored: bool) -> pb.RunMatchResponse:
    """The answer to ``RunMatch``: the finished match's record (also as the deprecated
    ``record_json``, for organisers written before ``record``) and whether the arena
    stored it."""
    return pb.RunMatchResponse(record_json=json_codec.dumps(record.to_json()), record=record_message(record),
                               stored=stored)


def match_played(response: pb.RunMatchResponse) -> tuple[MatchRecord, bool]:
    """The record a ``RunMatchResponse`` carries, and whether the arena stored it."""
    return match_record(response.record), response.stored


def record_message(record: MatchRecord) -> pb.MatchRecord:
    """A match record as the contract's ``MatchRecord``.

    >>> from arena.records import utcnow
    >>> record = MatchRecord(match_id="m1", variant="classic", config=GameConfig(players=3, seed=4), seed=4,
    ...                      bots=["a", "b", "c"], bot_versions=["1"] * 3, totals=[0, 0, 0], places=[1, 1, 1],
    ...                      forfeited=[False] * 3, result=None, actions=[[0, 1]], latencies_ms=[None],
    ...                      faults=[FaultRecord(0, "a", "timeout", "late", 7)], status="aborted")
    >>> match_record(record_message(record)) == record
    True
    """
    message = pb.MatchRecord(
        match_id=record.match_id, config_json=json_codec.dumps(record.config.to_dict()), bots=record.bots,
        bot_versions=record.bot_versions, totals=record.totals, places=record.places, forfeited=record.forfeited,
        result_json=json_codec.dumps(record.result_json()), actions_json=action_log.dumps(record.actions),
        latencies_ms=[math.nan if ms is None else ms for ms in record.latencies_ms],
        faults=[_fault_message(fault) for fault in record.faults], tournament_id=record.tournament_id or "",
        game_index=-1 if record.game_index is None else record.game_index, status=record.status,
        started_at=record.started_at.isoformat(), finished_at=record.finished_at.isoformat(),
        bank_used_ms=record.bank_used_ms or [], private=record.private,
    )
    if record.time_bank_ms is not None:
        message.time_bank_ms = record.time_bank_ms
    return message


def match_record(message: pb.MatchRecord) -> MatchRecord:
    """The match record a ``MatchRecord`` message holds."""
    config = GameConfig.from_dict(json_codec.loads(message.config_json))
    has_bank = message.HasField("time_bank_ms")
    return MatchRecord(
        match_id=message.match_id, variant=config.variant, config=config, seed=config.seed,
        bots=list(message.bots), bot_versions=list(message.bot_versions), totals=list(message.totals),
        places=list(message.places), forfeited=list(message.forfeited), result=json_codec.loads(message.result_json),
        actions=action_log.loads(message.actions_json),
        latencies_ms=[None if math.isnan(ms) else ms for ms in message.latencies_ms],
        faults=[_fault_record(fault) for fault in message.faults], tournament_id=message.tournament_id or None,
        game_index=message.game_index if message.game_index >= 0 else None, status=message.status,
        started_at=datetime.fromisoformat(message.started_at), finished_at=datetime.fromisoformat(message.finished_at),
        time_bank_ms=message.time_bank_ms if has_bank else None,
        bank_used_ms=list(message.bank_used_ms) if has_bank else None, private=message.private,
    )


def _fault_message(fault: FaultRecord) -> pb.RecordedFault:
    message = pb.RecordedFault(seat=fault.seat, bot=fault.bot, kind=fault.kind, message=fault.message,
                               at=fault.at.isoformat())
    if fault.request_id is not None:
        message.request_id = fault.request_id
    return message


def _fault_record(message: pb.RecordedFault) -> FaultRecord:
    return FaultRecord(seat=message.seat, bot=message.bot, kind=message.kind, message=message.message,
                       request_id=message.request_id if message.HasField("request_id") else None,
                       at=datetime.fromisoformat(message.at))


def match_summary(*, match_id: str, variant: str, status: str, bots: Sequence[str], totals: Sequence[int],
                  places: Sequence[int] = (), tournament_id: str | None = None,
                  config: Mapping[str, Any] | None = None, private: bool = False) -> pb.MatchSummary:
    """One line of ``ListMatches``: ``status`` is ``running``, or a record's status, where
    ``completed`` is called ``finished`` on the wire. ``config`` (a running match's engine
    config) goes out without its deal seed, from which the hands could be rebuilt.

    >>> line = match_summary(match_id="m", variant="classic", status="completed", bots=["a"], totals=[3],
    ...                      config={"variant": "classic", "seed": 7, "bidding": "hidden"})
    >>> line.status, line.options_json
    ('finished', '{"variant":"classic","bidding":"hidden"}')
    """
    options = "" if config is None else json_codec.dumps(options_of(config))
    return pb.MatchSummary(match_id=match_id, variant=variant,
                           status="finished" if status == "completed" else status,
                           bot_names=bots, totals=totals, places=places, tournament_id=tournament_id or "",
                           options_json=options, private=private)
