"""A tournament's settings: every default and every check of ``arena tournament``, once.

:class:`TournamentSettings` (``arena.settings``, the value every room reads) is the one
object behind the command's options: its fields' defaults are the defaults the help
shows, :func:`build_settings` checks a :class:`TournamentRequest` (the command line as
given) into one, and it is stored with the tournament so that ``--resume`` needs nothing
else. The time limits and the faults default to the referee's own (arena.referee.limits),
the game options to the engine's (:class:`engine.GameConfig`); :func:`schedule_of` gives
its games.

>>> settings = TournamentSettings(game=GameConfig(players=3), games=3, bots=[BotEntry(n, ["./" + n]) for n in "abc"])
>>> len(schedule_of(settings)), sorted(schedule_of(settings)[0].bots)
(3, ['a', 'b', 'c'])
>>> DEFAULTS.games, DEFAULTS.move_time, DEFAULTS.time_bank, DEFAULTS.max_faults, DEFAULTS.concurrency
(40, 1.0, 10.0, 3, 4)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from arena.referee.limits import MAX_SECONDS

# The value lives in arena.settings; the tournament room imports it (and BotEntry) from
# here, beside the checks that make one.
from arena.settings import BotEntry as BotEntry
from arena.settings import SprtSettings, TournamentSettings
from arena.tls import read_pem
from arena.tournament.lineup import LINEUPS, LineupError, parse_bot_option, sample_lineup
from arena.tournament.sandbox import SandboxMode
from arena.tournament.schedule import (
    DEAL_FORMATS,
    ScheduledGame,
    ScheduleError,
    gauntlet_games,
    gauntlet_schedule,
    make_schedule,
    new_master_seed,
    round_games,
)
from engine import VARIANT_RECORDS, ConfigError, GameConfig

# Where the arena keeps its database unless --db (or ARENA_DB) says otherwise.
DEFAULT_DB = "arena.db"
# A worker's lease on a deal lasts this long unless renewed (every third of it), so a
# worker that stops (killed, its machine gone) gives its deal back within this time.
LEASE_SECONDS = 30.0
# The shortest decision limit: the wire counts milliseconds, and 0 there means "the
# server's default".
MIN_MOVE_TIME = 0.001
# Upper bounds that keep a mistyped number from a run that never ends or a count past the
# wire's 32-bit fields: a million games is weeks of play; 256 matches at once is four
# times the 64 one bot's stream may hold; a fault limit is a small number.
MAX_GAMES = 1_000_000
MAX_CONCURRENCY = 256
MAX_FAULT_LIMIT = 1000


def schedule_of(settings: TournamentSettings) -> list[ScheduledGame]:
    """Every game of the tournament ``settings`` describe, from its master seed: an A/B
    test's sets, a gauntlet's tables or a round robin's."""
    if settings.sprt is not None:
        from arena.tournament.sprt import games_per_set, sprt_schedule

        return sprt_schedule(settings.sprt.candidate, settings.sprt.baseline, settings.opponents(), settings.players,
                             settings.games // games_per_set(settings.players), settings.seed)
    if settings.gauntlet is not None:
        return gauntlet_schedule(settings.gauntlet, settings.opponents(), settings.players, settings.games,
                                 settings.seed, settings.deals)
    return make_schedule(settings.bot_names(), settings.players, settings.games, settings.seed, settings.deals)


DEFAULTS = TournamentSettings()


@dataclass
class TournamentRequest:
    """The command line as given; ``None`` means "not given"."""

    db: str
    variant: str | None = None
    rounds: int | None = None
    players: int | None = None
    games: int | None = None
    seed: int | None = None
    move_time: float | None = None
    time_bank: float | None = None
    max_faults: int | None = None
    concurrency: int | None = None
    deals: str | None = None
    bidding: str | None = None
    plus_minus_one: bool | None = None
    length: str | None = None
    destroyer_penalty: int | None = None
    bots: list[str] = field(default_factory=list)
    no_samples: bool = False
    server: str | None = None
    admin_token: str | None = None
    tls_ca: str | None = None       # with --server: the CA certificate that signed its certificate
    tls: bool | None = None         # with --server: TLS, trusting the system's roots
    tls_cert: str | None = None     # with --server over TLS: the organiser's client certificate
    tls_key: str | None = None      # and its key
    resume: str | None = None
    # arena sprt: the two bots under test (NAME=COMMAND) and the test's bounds; the
    # opponents are ``bots`` (or the sample bots).
    candidate: str | None = None
    baseline: str | None = None
    elo0: float | None = None
    elo1: float | None = None
    alpha: float | None = None
    beta: float | None = None
    gauntlet: str | None = None     # a bot of the lineup that plays every table
    workers: int | None = None      # local workers: 1 (None) plays here; 0 only shows progress (arena worker plays)
    lineup: str | None = None       # "samples" (None) or "ladder": the sample bots plus the learned and search bots
    sandbox: str | None = None      # auto (None), bwrap or none
    fresh_per_match: bool | None = None
    shared_processes: bool | None = None
    memory_limit: int | None = None       # MiB
    process_limit: int | None = None
    file_size_limit: int | None = None    # MiB
    open_files_limit: int | None = None
    bot_env: list[str] | None = None      # NAME=VALUE
    command: str = "tournament"           # the command given: "tournament" or "sprt"

    def given_game_options(self) -> list[str]:
        """The options a ``--resume`` refuses (the stored tournament has its own).

        >>> TournamentRequest("arena.db", games=8, bots=["x=y"]).given_game_options()
        ['--games', '--bot']
        """
        skip = {"db", "admin_token", "resume", "no_samples", "bots", "candidate", "baseline", "workers", "command"}
        named = [f"--{f.name.replace('_', '-')}" for f in fields(self)
                 if f.name not in skip and getattr(self, f.name) is not None]
        if self.bots:
            named.append("--bot")
        if self.no_samples:
            named.append("--no-samples")
        named += [f"--{name}" for name in ("candidate", "baseline") if getattr(self, name) is not None]
        return named


def check_numbers(req: TournamentRequest) -> None:
    """Refuse a number, format or address no tournament can run with (a ConfigError).

    >>> check_numbers(TournamentRequest("arena.db", games=0))
    Traceback (most recent call last):
    ...
    engine.core.ConfigError: --games must be at least 1 (got 0)
    """
    games = "--max-games" if req.candidate is not None or req.baseline is not None else "--games"   # arena sprt's
    checks: list[tuple[str, float | None, float, float, bool]] = [   # option, value, least, most, in seconds
        (games, req.games, 1, MAX_GAMES, False), ("--concurrency", req.concurrency, 1, MAX_CONCURRENCY, False),
        ("--max-faults", req.max_faults, 1, MAX_FAULT_LIMIT, False),
        ("--move-time", req.move_time, MIN_MOVE_TIME, MAX_SECONDS, True),
        ("--time-bank", req.time_bank, 0.0, MAX_SECONDS, True),
    ]
    for option, value, least, most, seconds in checks:
        if value is None:
            continue
        if value < least:
            raise ConfigError(f"{option} must be at least {least} (got {value})")
        if not value <= most:     # also catches nan
            raise ConfigError(f"{option} must be a number of seconds up to {most:g} (got {value})" if seconds
                              else f"{option} must be at most {most:,} (got {value})")
    if req.seed is not None and not 0 <= req.seed < 2**63:     # checked before anything is written
        raise ConfigError(f"--seed must be between 0 and 2**63 - 1 (got {req.seed})")
    if req.lineup is not None and req.lineup not in LINEUPS:
        raise ConfigError(f"--lineup must be {' or '.join(LINEUPS)} (got {req.lineup!r})")
    if req.lineup is not None and req.no_samples:
        raise ConfigError("--lineup chooses the sample bots to include; drop --no-samples or --lineup")
    if req.deals is not None and req.deals not in DEAL_FORMATS:
        raise ConfigError(f"--deals must be {' or '.join(DEAL_FORMATS)} (got {req.deals!r})")
    if req.server is not None and (":" not in req.server or not req.server.rsplit(":", 1)[1].isdigit()):
        raise ConfigError(f"--server takes HOST:PORT (got {req.server!r})")
    if (req.tls_ca is not None or req.tls) and req.server is None:
        raise ConfigError("--tls-ca and --tls are for --server: the arena's own referee is on this machine, "
                          "in plaintext")
    if req.tls_ca is not None and req.tls:
        raise ConfigError("--tls-ca FILE trusts that CA, --tls the system's: pass one of them")
    if (req.tls_cert is None) != (req.tls_key is None):
        raise ConfigError("a client certificate takes both --tls-cert FILE and --tls-key FILE")
    if req.tls_cert is not None and req.tls_ca is None and not req.tls:
        raise ConfigError("--tls-cert and --tls-key are for a --server that serves TLS: pass --tls-ca FILE or --tls")
    modes = [mode.value for mode in SandboxMode]
    if req.sandbox is not None and req.sandbox not in modes:
        raise ConfigError(f"--sandbox must be {', '.join(modes[:-1])} or {modes[-1]} (got {req.sandbox!r})")
    # The largest values are what the kernel takes: 1 TiB, its default pid_max, nr_open.
    limits = [("--memory-limit", req.memory_limit, 32, 1 << 20), ("--process-limit", req.process_limit, 8, 1 << 22),
              ("--file-size-limit", req.file_size_limit, 1, 1 << 20),
              ("--open-files-limit", req.open_files_limit, 32, 1 << 20)]
    for option, value, minimum, maximum in limits:
        if value is not None and not minimum <= value <= maximum:
            raise ConfigError(f"{option} must be from {minimum} to {maximum:,} (got {value})")
    if req.fresh_per_match and req.shared_processes:
        raise ConfigError("--fresh-per-match starts a process for every match, --shared-processes keeps one a bot: "
                          "pass one of them")
    if req.server is not None and (req.sandbox or req.fresh_per_match or req.shared_processes or req.bot_env
                                   or any(value is not None for _, value, _, _ in limits)):
        raise ConfigError("with --server the bots run wherever their authors started them; drop the sandbox, "
                          "limit and --bot-env options")
    parse_bot_env(req.bot_env or [])


def checked_ca(path: Path) -> Path:
    """``--tls-ca FILE`` as an absolute path, once it is known to be a readable PEM
    certificate (a one-line TlsError otherwise)."""
    return checked_pem(path, "--tls-ca", "certificate")


def checked_pem(path: Path, option: str, what: str) -> Path:
    """A TLS file option as an absolute path (kept for --resume), once it is known to be
    a readable PEM ``what`` ("certificate" or "key"; a one-line TlsError otherwise)."""
    read_pem(path, option, what)
    return path.resolve()


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_bot_env(items: list[str]) -> dict[str, str]:
    """``--bot-env NAME=VALUE`` options as a dict: variables the organiser passes to every
    bot (a confined bot's environment is otherwise cleared); a ConfigError for a bad one.

    >>> parse_bot_env(["OMP_NUM_THREADS=1", "MODEL=/opt/model.bin"])
    {'OMP_NUM_THREADS': '1', 'MODEL': '/opt/model.bin'}
    >>> parse_bot_env(["ARENA_TOKEN=x"])
    Traceback (most recent call last):
    ...
    engine.core.ConfigError: --bot-env ARENA_TOKEN: the ARENA_ variables are the arena's own
    """
    env: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not ENV_NAME.match(name):
            raise ConfigError(f"--bot-env takes NAME=VALUE with a variable name of letters, digits and '_' "
                              f"(got {item!r})")
        if name.startswith("ARENA_"):
            raise ConfigError(f"--bot-env {name}: the ARENA_ variables are the arena's own")
        env[name] = value
    return env


def build_settings(req: TournamentRequest, notice: Callable[[str], None]) -> TournamentSettings:
    """Settings for a new tournament, validated through the engine's own config checks.
    What the request leaves out is the default of :class:`TournamentSettings`; the games
    are set by :func:`finalize_games` once the lineup is known."""
    check_numbers(req)
    given: dict[str, Any] = {"variant": req.variant, "players": req.players, "rounds": req.rounds,
                             "length": req.length, "bidding": req.bidding, "plus_minus_one": req.plus_minus_one,
                             "destroyer_penalty": req.destroyer_penalty}
    # An option of the other variant (not among the record's options) is refused even at
    # its default value, which the engine's config cannot tell from "not given"
    # (--destroyer-penalty 4 with classic). An unknown variant gets the engine's error below.
    record = VARIANT_RECORDS.get(req.variant or GameConfig.variant)
    if record is not None:
        foreign = {name for name, value in given.items() if value is not None and name != "variant"
                   and name not in record.options}
        if "destroyer_penalty" in foreign:
            raise ConfigError("destroyer penalty is a Wizard Extreme option; classic has no destroyer")
        if foreign:
            raise ConfigError("--length, --bidding and --plus-minus-one are classic options; "
                              "extreme predicts with tokens")
    # The engine's own checks give the clear errors: rounds too large, contradictory options...
    game = GameConfig(**{k: v for k, v in given.items() if v is not None}).validate()
    # Numbers not given keep the defaults of TournamentSettings.
    numbers: dict[str, Any] = {"move_time": req.move_time, "time_bank": req.time_bank,
                               "max_faults": req.max_faults, "concurrency": req.concurrency,
                               "sandbox": req.sandbox, "fresh_per_match": req.fresh_per_match,
                               "shared_processes": req.shared_processes,
                               "memory_limit_mb": req.memory_limit, "process_limit": req.process_limit,
                               "file_size_limit_mb": req.file_size_limit, "open_files_limit": req.open_files_limit}
    settings = TournamentSettings(
        game=game,
        # The master seed is the tournament's secret: a fresh 63-bit one unless given.
        seed=req.seed if req.seed is not None else new_master_seed(),
        seed_given=req.seed is not None,
        server=req.server,
        tls=req.tls_ca is not None or bool(req.tls),
        tls_ca=str(checked_ca(Path(req.tls_ca))) if req.tls_ca is not None else None,
        tls_cert=str(checked_pem(Path(req.tls_cert), "--tls-cert", "certificate")) if req.tls_cert else None,
        tls_key=str(checked_pem(Path(req.tls_key), "--tls-key", "key")) if req.tls_key else None,
        # Bots the arena starts itself are the organiser's; bots on a server are anyone's.
        deals=req.deals if req.deals is not None else ("independent" if req.server else DEFAULTS.deals),
        bot_env=parse_bot_env(req.bot_env or []),
        **{name: value for name, value in numbers.items() if value is not None},
    )
    if req.candidate is not None or req.baseline is not None:
        return _sprt_settings(req, settings, notice)
    if req.server is None:
        own = [parse_bot_option(text) for text in req.bots]  # check these before any npm install
        entries = ([] if req.no_samples else sample_lineup(notice, lineup=req.lineup or "samples")) + own
        names = [e.name for e in entries]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise LineupError(f"two bots are named {duplicate!r}")
        settings.bots = entries
        check_gauntlet(settings, req.gauntlet)
    elif req.bots or req.no_samples:
        raise LineupError("with --server the lineup is the bots connected to that server; drop --bot/--no-samples")
    if req.gauntlet is not None:
        settings.format, settings.gauntlet = "gauntlet", req.gauntlet
    return settings


def check_gauntlet(settings: TournamentSettings, name: str | None) -> None:
    """A gauntlet's bot must be one of the lineup (a LineupError otherwise)."""
    if name is not None and name not in settings.bot_names():
        raise LineupError(f"--gauntlet {name}: no bot of that name in the lineup ({', '.join(settings.bot_names())})")


# An A/B test stops when it is decided; this is its default limit: in arena bench sprt's
# model a 0/20 test at 4 seats needs about 2200 games on average, and the tail is long.
SPRT_MAX_GAMES = 6000


def _sprt_settings(req: TournamentRequest, settings: TournamentSettings,
                   notice: Callable[[str], None]) -> TournamentSettings:
    """The settings of ``arena sprt``: the candidate, the baseline, the opponents (the
    sample bots unless ``--opponent`` names some) and the bounds, all checked."""
    from arena.stats.sprt import SprtBounds

    if req.candidate is None or req.baseline is None:
        raise ConfigError("an A/B test needs both --candidate and --baseline (NAME=COMMAND)")
    if req.server is not None:
        raise ConfigError("arena sprt runs its bots itself; --server is not supported")
    bounds = SprtBounds(*(value if value is not None else default for value, default in
                          ((req.elo0, 0.0), (req.elo1, 20.0), (req.alpha, 0.05), (req.beta, 0.05))))
    try:
        bounds.check()
    except ValueError as error:
        raise ConfigError(str(error)) from None
    candidate, baseline = parse_bot_option(req.candidate), parse_bot_option(req.baseline)
    if candidate.command == baseline.command and candidate.cwd == baseline.cwd:
        raise ConfigError(f"the candidate and the baseline run the same command ({' '.join(candidate.command)}): "
                          "nothing to compare")
    tested = {candidate.name, baseline.name}
    if len(tested) < 2:
        raise LineupError(f"the candidate and the baseline are both named {candidate.name!r}")
    if req.bots:
        opponents = [parse_bot_option(text) for text in req.bots]
    elif req.no_samples:
        opponents = []
    else:   # the sample bots, but never one that shares a tested bot's name
        opponents = [e for e in sample_lineup(notice, lineup=req.lineup or "samples") if e.name not in tested]
    names = [e.name for e in (candidate, baseline, *opponents)]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise LineupError(f"two bots are named {duplicate!r}")
    settings.bots = [candidate, baseline, *opponents]
    settings.format, settings.deals = "sprt", "duplicate"
    settings.sprt = SprtSettings(candidate.name, baseline.name, bounds.elo0, bounds.elo1, bounds.alpha, bounds.beta)
    return settings


def finalize_games(settings: TournamentSettings, requested: int | None, notice: Callable[[str], None]) -> None:
    """Set ``settings.games`` for its lineup: ``requested`` (or the default) rounded up to
    whole sets of seat rotations; a ScheduleError when the lineup cannot fill a table.

    >>> settings = TournamentSettings(bots=[BotEntry(n, []) for n in "abcde"])
    >>> finalize_games(settings, 6, print)
    games rounded up from 6 to 20 so that every bot plays every seat equally often (5 bots, 4 seats)
    >>> settings.games
    20
    """
    if settings.sprt is not None:
        _finalize_sprt_games(settings, requested, notice)
        return
    if settings.gauntlet is not None:
        _finalize_gauntlet_games(settings, requested, notice)
        return
    wanted = requested if requested is not None else DEFAULTS.games
    bots = len(settings.bots)
    if bots < settings.players:
        raise ScheduleError(f"{settings.players}-player tables need at least {settings.players} bots "
                            f"(the lineup has {bots})")
    settings.games = round_games(wanted, bots, settings.players)
    if settings.games != wanted:
        notice(f"games rounded up from {wanted} to {settings.games} so that every bot plays every seat "
               f"equally often ({bots} bots, {settings.players} seats)")
    schedule_of(settings)  # raises ScheduleError for an impossible lineup


def _finalize_sprt_games(settings: TournamentSettings, requested: int | None, notice: Callable[[str], None]) -> None:
    """An A/B test's limit in whole sets (every rotation, both sides): at least one set."""
    from arena.tournament.sprt import games_per_set

    per_set = games_per_set(settings.players)
    opponents = len(settings.opponents())
    if opponents < settings.players - 1:
        raise ScheduleError(f"{settings.players}-player tables need {settings.players - 1} opponents besides the "
                            f"bot under test (there are {opponents})")
    wanted = requested if requested is not None else SPRT_MAX_GAMES
    settings.games = max(1, -(-wanted // per_set)) * per_set
    if settings.games != wanted:
        notice(f"the game limit is rounded up from {wanted} to {settings.games}: whole sets of {per_set} games "
               f"(each of {settings.players} seats, once for each side)")
    schedule_of(settings)


def _finalize_gauntlet_games(settings: TournamentSettings, requested: int | None,
                             notice: Callable[[str], None]) -> None:
    """A gauntlet's games, rounded up so that every opponent plays equally often."""
    check_gauntlet(settings, settings.gauntlet)
    opponents = len(settings.opponents())
    if opponents < settings.players - 1:
        raise ScheduleError(f"{settings.players}-player tables need {settings.players - 1} opponents besides "
                            f"{settings.gauntlet} (the lineup has {opponents})")
    wanted = requested if requested is not None else DEFAULTS.games
    settings.games = gauntlet_games(wanted, opponents, settings.players)
    if settings.games != wanted:
        notice(f"games rounded up from {wanted} to {settings.games} so that every opponent meets "
               f"{settings.gauntlet} equally often ({opponents} opponents, {settings.players} seats)")
    schedule_of(settings)
