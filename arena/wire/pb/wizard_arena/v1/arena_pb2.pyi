from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    BID: _ClassVar[DecisionKind]
    PLAY: _ClassVar[DecisionKind]
    TRUMP: _ClassVar[DecisionKind]
    PREDICT: _ClassVar[DecisionKind]
    PAY: _ClassVar[DecisionKind]
DECISION_KIND_UNSPECIFIED: DecisionKind
BID: DecisionKind
PLAY: DecisionKind
TRUMP: DecisionKind
PREDICT: DecisionKind
PAY: DecisionKind

class BotMessage(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("name", "version", "variants", "max_matches", "events_only")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_ONLY_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    max_matches: int
    events_only: bool
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., max_matches: _Optional[int] = ..., events_only: _Optional[bool] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("request_id", "option", "prediction", "bot_error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    PREDICTION_FIELD_NUMBER: _ClassVar[int]
    BOT_ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    option: str
    prediction: Prediction
    bot_error: str
    def __init__(self, request_id: _Optional[int] = ..., option: _Optional[str] = ..., prediction: _Optional[_Union[Prediction, _Mapping]] = ..., bot_error: _Optional[str] = ...) -> None: ...

class Prediction(_message.Message):
    __slots__ = ("destroyer", "tokens", "take_from")
    class TokensEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DESTROYER_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    TAKE_FROM_FIELD_NUMBER: _ClassVar[int]
    destroyer: bool
    tokens: _containers.ScalarMap[str, int]
    take_from: _containers.RepeatedCompositeFieldContainer[TakeFrom]
    def __init__(self, destroyer: _Optional[bool] = ..., tokens: _Optional[_Mapping[str, int]] = ..., take_from: _Optional[_Iterable[_Union[TakeFrom, _Mapping]]] = ...) -> None: ...

class TakeFrom(_message.Message):
    __slots__ = ("colour", "seat")
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    colour: str
    seat: int
    def __init__(self, colour: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class ArenaMessage(_message.Message):
    __slots__ = ("welcome", "match_started", "request", "fault", "match_ended")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_started: MatchStarted
    request: DecisionRequest
    fault: Fault
    match_ended: MatchEnded
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., fault: _Optional[_Union[Fault, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_id", "bot_name", "server_version", "protocol_version", "max_matches", "events_only")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_ONLY_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    bot_name: str
    server_version: str
    protocol_version: int
    max_matches: int
    events_only: bool
    def __init__(self, bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., server_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., max_matches: _Optional[int] = ..., events_only: _Optional[bool] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "variant", "seat", "players", "bot_names", "options_json", "seed", "move_time_ms", "time_bank_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BOT_NAMES_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    variant: str
    seat: int
    players: int
    bot_names: _containers.RepeatedScalarFieldContainer[str]
    options_json: str
    seed: int
    move_time_ms: int
    time_bank_ms: int
    def __init__(self, match_id: _Optional[str] = ..., variant: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[int] = ..., bot_names: _Optional[_Iterable[str]] = ..., options_json: _Optional[str] = ..., seed: _Optional[int] = ..., move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "seat", "request_id", "kind", "options", "observation_json", "events_json", "deadline_ms", "time_bank_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_JSON_FIELD_NUMBER: _ClassVar[int]
    EVENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    request_id: int
    kind: DecisionKind
    options: _containers.RepeatedScalarFieldContainer[str]
    observation_json: str
    events_json: _containers.RepeatedScalarFieldContainer[str]
    deadline_ms: int
    time_bank_ms: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., options: _Optional[_Iterable[str]] = ..., observation_json: _Optional[str] = ..., events_json: _Optional[_Iterable[str]] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("match_id", "request_id", "kind", "message", "faults", "forfeited")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    kind: str
    message: str
    faults: int
    forfeited: bool
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., kind: _Optional[str] = ..., message: _Optional[str] = ..., faults: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_id", "seat", "totals", "places", "result_json", "forfeited", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    result_json: str
    forfeited: bool
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., result_json: _Optional[str] = ..., forfeited: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class SpectateRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class SpectatorUpdate(_message.Message):
    __slots__ = ("match_id", "events_json")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    events_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., events_json: _Optional[_Iterable[str]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("variant", "limit")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    variant: str
    limit: int
    def __init__(self, variant: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class MatchSummary(_message.Message):
    __slots__ = ("match_id", "variant", "status", "bot_names", "totals", "places", "tournament_id", "options_json", "private")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BOT_NAMES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    variant: str
    status: str
    bot_names: _containers.RepeatedScalarFieldContainer[str]
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    tournament_id: str
    options_json: str
    private: bool
    def __init__(self, match_id: _Optional[str] = ..., variant: _Optional[str] = ..., status: _Optional[str] = ..., bot_names: _Optional[_Iterable[str]] = ..., totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., tournament_id: _Optional[str] = ..., options_json: _Optional[str] = ..., private: _Optional[bool] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchSummary]
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchSummary, _Mapping]]] = ...) -> None: ...

class LeaderboardRequest(_message.Message):
    __slots__ = ("variant", "min_games")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    MIN_GAMES_FIELD_NUMBER: _ClassVar[int]
    variant: str
    min_games: int
    def __init__(self, variant: _Optional[str] = ..., min_games: _Optional[int] = ...) -> None: ...

class LeaderboardRow(_message.Message):
    __slots__ = ("rank", "bot", "rating", "interval", "elo", "games", "average_score", "average_place", "exact_bid_rate", "faults", "think_p50_ms", "think_p99_ms", "timeouts", "lower_score_is_better")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    ELO_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    AVERAGE_SCORE_FIELD_NUMBER: _ClassVar[int]
    AVERAGE_PLACE_FIELD_NUMBER: _ClassVar[int]
    EXACT_BID_RATE_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    THINK_P50_MS_FIELD_NUMBER: _ClassVar[int]
    THINK_P99_MS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    LOWER_SCORE_IS_BETTER_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    rating: float
    interval: float
    elo: float
    games: int
    average_score: float
    average_place: float
    exact_bid_rate: float
    faults: int
    think_p50_ms: float
    think_p99_ms: float
    timeouts: int
    lower_score_is_better: bool
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., rating: _Optional[float] = ..., interval: _Optional[float] = ..., elo: _Optional[float] = ..., games: _Optional[int] = ..., average_score: _Optional[float] = ..., average_place: _Optional[float] = ..., exact_bid_rate: _Optional[float] = ..., faults: _Optional[int] = ..., think_p50_ms: _Optional[float] = ..., think_p99_ms: _Optional[float] = ..., timeouts: _Optional[int] = ..., lower_score_is_better: _Optional[bool] = ...) -> None: ...

class LeaderboardResponse(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[LeaderboardRow]
    def __init__(self, rows: _Optional[_Iterable[_Union[LeaderboardRow, _Mapping]]] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ConnectedBot(_message.Message):
    __slots__ = ("name", "version", "variants", "free_slots", "connections")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    FREE_SLOTS_FIELD_NUMBER: _ClassVar[int]
    CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    free_slots: int
    connections: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., free_slots: _Optional[int] = ..., connections: _Optional[int] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[ConnectedBot]
    def __init__(self, bots: _Optional[_Iterable[_Union[ConnectedBot, _Mapping]]] = ...) -> None: ...

class RunMatchRequest(_message.Message):
    __slots__ = ("match_id", "config_json", "bots", "bot_seeds", "move_time_ms", "time_bank_ms", "max_faults", "tournament_id", "game_index", "private")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    BOT_SEEDS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    config_json: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    bot_seeds: _containers.RepeatedScalarFieldContainer[int]
    move_time_ms: int
    time_bank_ms: int
    max_faults: int
    tournament_id: str
    game_index: int
    private: bool
    def __init__(self, match_id: _Optional[str] = ..., config_json: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., bot_seeds: _Optional[_Iterable[int]] = ..., move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_faults: _Optional[int] = ..., tournament_id: _Optional[str] = ..., game_index: _Optional[int] = ..., private: _Optional[bool] = ...) -> None: ...

class RunMatchResponse(_message.Message):
    __slots__ = ("record_json", "record", "stored")
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    record_json: str
    record: MatchRecord
    stored: bool
    def __init__(self, record_json: _Optional[str] = ..., record: _Optional[_Union[MatchRecord, _Mapping]] = ..., stored: _Optional[bool] = ...) -> None: ...

class MatchRecord(_message.Message):
    __slots__ = ("match_id", "config_json", "bots", "bot_versions", "totals", "places", "forfeited", "result_json", "actions_json", "latencies_ms", "faults", "tournament_id", "game_index", "status", "started_at", "finished_at", "time_bank_ms", "bank_used_ms", "private")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    LATENCIES_MS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_USED_MS_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    config_json: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    bot_versions: _containers.RepeatedScalarFieldContainer[str]
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[bool]
    result_json: str
    actions_json: bytes
    latencies_ms: _containers.RepeatedScalarFieldContainer[float]
    faults: _containers.RepeatedCompositeFieldContainer[RecordedFault]
    tournament_id: str
    game_index: int
    status: str
    started_at: str
    finished_at: str
    time_bank_ms: float
    bank_used_ms: _containers.RepeatedScalarFieldContainer[float]
    private: bool
    def __init__(self, match_id: _Optional[str] = ..., config_json: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., bot_versions: _Optional[_Iterable[str]] = ..., totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[bool]] = ..., result_json: _Optional[str] = ..., actions_json: _Optional[bytes] = ..., latencies_ms: _Optional[_Iterable[float]] = ..., faults: _Optional[_Iterable[_Union[RecordedFault, _Mapping]]] = ..., tournament_id: _Optional[str] = ..., game_index: _Optional[int] = ..., status: _Optional[str] = ..., started_at: _Optional[str] = ..., finished_at: _Optional[str] = ..., time_bank_ms: _Optional[float] = ..., bank_used_ms: _Optional[_Iterable[float]] = ..., private: _Optional[bool] = ...) -> None: ...

class RecordedFault(_message.Message):
    __slots__ = ("seat", "bot", "kind", "message", "request_id", "at")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot: str
    kind: str
    message: str
    request_id: int
    at: str
    def __init__(self, seat: _Optional[int] = ..., bot: _Optional[str] = ..., kind: _Optional[str] = ..., message: _Optional[str] = ..., request_id: _Optional[int] = ..., at: _Optional[str] = ...) -> None: ...
