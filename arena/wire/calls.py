"""The organiser's and the public calls (``RunMatch``, ``ListMatches``, ``Spectate``): their
messages and the plain values they carry, both ways.

The wire sits below ``arena.records``, so these functions take and give plain values:
a match spec as the keyword arguments of :class:`arena.records.MatchSpec` (times in
seconds, ``None`` for "the arena's default"), a record as its JSON dict. The organiser
(``arena tournament --server``) writes a ``RunMatchRequest`` with
:func:`run_match_request`; the arena reads it back with :func:`run_match_fields`:

>>> fields = dict(match_id="m1", config={"variant": "classic", "players": 3, "seed": 9},
...               bots=["a", "b", "c"], bot_seeds=None, move_time=0.5, time_bank=None,
...               max_faults=None, tournament_id=None, game_index=None, private=False)
>>> request = run_match_request(**fields)
>>> request.move_time_ms, request.time_bank_ms, request.game_index
(500, 0, -1)
>>> run_match_fields(request) == fields
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.wire import jsonc
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import options_of


def run_match_request(*, match_id: str, config: Mapping[str, Any], bots: Sequence[str],
                      bot_seeds: Sequence[int] | None = None, move_time: float | None = None,
                      time_bank: float | None = None, max_faults: int | None = None,
                      tournament_id: str | None = None, game_index: int | None = None,
                      private: bool = False) -> pb.RunMatchRequest:
    """The ``RunMatchRequest`` for a match spec (``None`` limits: the arena's defaults)."""
    return pb.RunMatchRequest(
        match_id=match_id, config_json=jsonc.dumps(config), bots=bots, bot_seeds=bot_seeds or [],
        move_time_ms=round((move_time or 0) * 1000), time_bank_ms=round((time_bank or 0) * 1000),
        max_faults=max_faults or 0, tournament_id=tournament_id or "",
        game_index=-1 if game_index is None else game_index, private=private,
    )


def run_match_fields(request: pb.RunMatchRequest) -> dict[str, Any]:
    """The match spec a ``RunMatchRequest`` asks for, as ``MatchSpec`` keyword arguments
    (0 limits mean the arena's default); ``ValueError`` if its config is no JSON object."""
    config = jsonc.loads(request.config_json) if request.config_json else {}
    if not isinstance(config, dict):
        raise ValueError("config_json must be a JSON object (an engine GameConfig)")
    return dict(
        match_id=request.match_id,
        config=config,
        bots=list(request.bots),
        bot_seeds=list(request.bot_seeds) or None,
        move_time=request.move_time_ms / 1000 if request.move_time_ms else None,
        time_bank=request.time_bank_ms / 1000 if request.time_bank_ms else None,
        max_faults=request.max_faults or None,
        tournament_id=request.tournament_id or None,
        game_index=request.game_index if request.game_index >= 0 else None,
        private=request.private,
    )


def run_match_response(record: Mapping[str, Any]) -> pb.RunMatchResponse:
    """The answer to ``RunMatch``: the finished match's record (``MatchRecord.to_json()``)."""
    return pb.RunMatchResponse(record_json=jsonc.dumps(record))


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
    options = "" if config is None else jsonc.dumps(options_of(config))
    return pb.MatchSummary(match_id=match_id, variant=variant,
                           status="finished" if status == "completed" else status,
                           bot_names=bots, totals=totals, places=places, tournament_id=tournament_id or "",
                           options_json=options, private=private)
