"""What a finished match leaves behind: the values the referee hands to storage and ratings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from operator import itemgetter
from typing import Any, NamedTuple

from engine import Action, GameConfig, GameResult, SeatRound, action_from_json, action_to_json

FAULT_KINDS = ("timeout", "illegal", "malformed", "unexpected", "disconnect", "bot_error")


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class FaultRecord:
    """One recorded fault: what a bot did wrong, where and when."""

    seat: int
    bot: str
    kind: str                # one of FAULT_KINDS
    message: str
    request_id: int | None = None
    at: datetime = field(default_factory=utcnow)


@dataclass
class BotCrash:
    """A bot process the arena started that ended while it should have been playing:
    it exited, crashed, or was killed for a limit (``reason`` says which, in words:
    "exited with code 1", "killed by signal 9 (SIGKILL)", "killed: out of memory (limit
    512 MiB)", "did not connect within 30 s").

    ``restarted`` says whether the arena started it again afterwards; the bot's seats in
    matches it was playing went through the disconnect rule (grace, then forfeit).
    """

    bot: str
    reason: str
    exit_code: int | None = None         # None: it was killed by a signal, or never exited
    tournament_id: str | None = None
    variant: str | None = None           # the tournament's variant (boards are per variant)
    worker: str = ""                     # which arena process saw it ("host:pid")
    restarted: bool = False
    at: datetime = field(default_factory=utcnow)


class LoggedAction(NamedTuple):
    """One entry of a match's action log: the seat that acted and the engine's action
    (an ``int`` bid, a card code or colour ``str``, a :class:`engine.Prediction`).

    A pair, so ``for seat, action in record.actions`` reads it, and
    ``engine.replay_record`` replays a log of them. Its one serialised form is
    :mod:`arena.wire.action_log`'s.
    """

    seat: int
    action: Action


def logged_actions(pairs: Iterable[Sequence[Any]]) -> list[LoggedAction]:
    """A log of ``[seat, action]`` pairs with actions in their JSON form (a log read back
    from JSON, a record made by hand) as a list of :class:`LoggedAction`. The engine's own
    ``game.actions`` holds its values already: ``LoggedAction(seat, action)`` of each.

    >>> logged_actions([[0, 2], [1, {"tokens": {"red": 1}}]])[1]
    LoggedAction(seat=1, action=Prediction(destroyer=False, tokens={'red': 1}, take_from=()))
    """
    # Made in C loops rather than by unpacking each pair in Python (a log is read whole
    # with every match loaded); the log of a classic game holds no prediction to read.
    entries = list(map(_logged_action, pairs))
    if dict in set(map(type, map(_action_of, entries))):
        for i, (seat, action) in enumerate(entries):
            if isinstance(action, dict):
                entries[i] = LoggedAction(seat, action_from_json(action))
    return entries


_logged_action = partial(tuple.__new__, LoggedAction)
_action_of = itemgetter(1)


@dataclass
class MatchRecord:
    """A finished match, complete enough to replay it through the engine.

    ``actions`` is the action log, a :class:`LoggedAction` per decision in the engine's
    order (replay it with ``engine.replay_record(config, actions)``; pairs with actions
    in their JSON form are read into them when the record is made, and :meth:`to_json`
    writes them back as such pairs). ``latencies_ms`` runs
    parallel to it: the bot's round trip for that decision, or ``None`` when the
    referee played the fallback. ``places`` are final places after forfeits: a
    forfeited seat is placed last (several forfeits share the last place).

    ``time_bank_ms`` is the time bank each seat started with, and ``bank_used_ms`` per
    seat how much of it the referee drew (the starting bank minus the bank left at the
    end, so ``bank_used_ms[seat] == time_bank_ms`` when the seat emptied it). That is the
    referee's own accounting, which also charges answers that were lost to a dropped
    connection, so it cannot be worked out from ``latencies_ms`` alone. Both are ``None``
    in records made before they existed (and in a record from an older server).

    ``config`` and ``result`` are the engine's values (``result`` is ``None`` for an
    aborted match); a mapping in their stored JSON form is read into them when the
    record is made, and :meth:`to_json` writes them back in that form.
    """

    match_id: str
    variant: str
    config: GameConfig
    seed: int
    bots: list[str]                      # bot names by seat
    bot_versions: list[str]
    totals: list[int]
    places: list[int]
    forfeited: list[bool]
    result: GameResult | None            # None: the match was aborted
    actions: list[LoggedAction]
    latencies_ms: list[float | None]
    faults: list[FaultRecord] = field(default_factory=list)
    tournament_id: str | None = None
    game_index: int | None = None        # the slot in the tournament schedule
    status: str = "completed"            # "completed" or "aborted"
    started_at: datetime = field(default_factory=utcnow)
    finished_at: datetime = field(default_factory=utcnow)
    time_bank_ms: float | None = None
    bank_used_ms: list[float] | None = None   # by seat
    private: bool = False                # its deal is played again elsewhere (MatchSpec.private)

    def __post_init__(self) -> None:
        if not isinstance(self.config, GameConfig):
            self.config = GameConfig.from_dict(self.config)
        if self.result is not None and not isinstance(self.result, GameResult):
            self.result = game_result(self.result)
        if not all(type(entry) is LoggedAction for entry in self.actions):
            self.actions = logged_actions(self.actions)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data: the engine's config and result in their stored
        forms (``GameConfig.to_dict()``, ``GameResult.to_json()``, ``{}`` when aborted),
        the actions as ``[seat, action_json]`` pairs, times as ISO 8601."""
        data = asdict(self)
        data["config"] = self.config.to_dict()
        data["result"] = self.result_json()
        data["actions"] = [[seat, action_to_json(action)] for seat, action in self.actions]
        data["started_at"] = self.started_at.isoformat()
        data["finished_at"] = self.finished_at.isoformat()
        for fault in data["faults"]:
            fault["at"] = fault["at"].isoformat()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchRecord:
        data = dict(data)
        data["faults"] = [
            FaultRecord(**{**f, "at": datetime.fromisoformat(f["at"])}) for f in data.get("faults", [])
        ]
        data["started_at"] = datetime.fromisoformat(data["started_at"])
        data["finished_at"] = datetime.fromisoformat(data["finished_at"])
        return cls(**data)

    def result_json(self) -> dict[str, Any]:
        """The result in its stored form: ``GameResult.to_json()``, ``{}`` when aborted."""
        return {} if self.result is None else self.result.to_json()


def game_result(data: Mapping[str, Any]) -> GameResult | None:
    """The engine's result of its JSON form (``GameResult.to_json()``); ``None`` for the
    empty result of an aborted match.

    >>> result = GameResult("classic", (20, -10), (1, 2), ((SeatRound(20, bid=1, tricks=1), SeatRound(-10, 0, 1)),),
    ...                     higher_is_better=True)
    >>> game_result(result.to_json()) == result, game_result({})
    (True, None)
    """
    if not data:
        return None
    return GameResult(
        variant=data["variant"], totals=tuple(data["totals"]), places=tuple(data["places"]),
        rounds=tuple(tuple(SeatRound(**seat) for seat in rnd) for rnd in data["rounds"]),
        higher_is_better=data["higher_is_better"],
    )


def final_places(totals: list[int], forfeited: list[bool], higher_is_better: bool) -> list[int]:
    """Places after forfeits: seats that played on are ranked by totals (shared on ties),
    forfeited seats share the last place.

    >>> final_places([100, 50, 80, 120], [False, False, False, True], higher_is_better=True)
    [1, 3, 2, 4]
    """
    players = len(totals)
    sign = -1 if higher_is_better else 1
    keys = [sign * t for t in totals]
    last = 1 + forfeited.count(False)
    places = []
    for seat in range(players):
        if forfeited[seat]:
            places.append(last)
        else:
            better = sum(1 for o in range(players) if not forfeited[o] and keys[o] < keys[seat])
            places.append(1 + better)
    return places


@dataclass
class MatchSpec:
    """What the referee needs to run one match. ``None`` limits use the referee's defaults.

    ``config`` is the engine's ``GameConfig`` (it carries the deal seed), validated when
    the spec is made: a spec that exists describes a game the engine can play. A mapping
    (a stored or wire config) is read with ``GameConfig.from_dict`` first.
    ``bots`` names the bot for each seat; ``bot_seeds`` are handed to the bots in
    ``MatchStarted.seed`` so a bot's own randomness replays too. ``private``: its deal
    is played again by other matches (the rotations of a duplicate deal), so its cards
    are hands still to come and no spectator may see them until those are played.
    """

    config: GameConfig
    bots: list[str]
    match_id: str = ""
    bot_seeds: list[int] | None = None
    move_time: float | None = None      # seconds per decision
    time_bank: float | None = None      # seconds per match
    max_faults: int | None = None
    tournament_id: str | None = None
    game_index: int | None = None
    private: bool = False

    def __post_init__(self) -> None:
        """Raise ``engine.ConfigError`` for a config the engine cannot play, ``ValueError``
        when the bots do not fill its table.

        >>> MatchSpec(config={"variant": "classic", "players": 3, "seed": 1}, bots=["a", "b", "c"]).config.players
        3
        >>> MatchSpec(config=GameConfig(players=3), bots=["a", "b"])
        Traceback (most recent call last):
        ...
        ValueError: the config is for 3 players but 2 bots were named
        """
        if not isinstance(self.config, GameConfig):
            self.config = GameConfig.from_dict(self.config)
        self.config.validate()
        if self.config.players != len(self.bots):
            raise ValueError(f"the config is for {self.config.players} players but {len(self.bots)} bots were named")
