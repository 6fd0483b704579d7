"""A tournament's settings as they are stored with it, typed: the value every room reads.

:class:`TournamentSettings` is what ``arena tournament`` stores with a tournament
(:meth:`TournamentSettings.to_dict`, JSON values only) and what every reader gets back
(:meth:`TournamentSettings.from_dict`): the tournament room (``--resume``, the workers),
the store (an A/B test's game limit, a tournament's game options), the results, the web
and the command line. Its parts are typed too: the lineup as :class:`BotEntry` values
(with the :class:`BotFiles` each command names and the :class:`CodeStamp` of its code),
an A/B test as :class:`SprtSettings`, the bots' limits as :class:`BotLimits`; the game
options are the engine's (:meth:`TournamentSettings.game_config`).

It sits below the store, on the engine alone, so that every reader can import it. The
checks of the command line that make one (``build_settings``) stay in
``arena.tournament.settings``, the schedule it makes in ``arena.tournament.schedule``,
an A/B test's statistics in ``arena.stats.sprt``.

Settings stored by an earlier version lack the keys added since, and those of a
tournament organised elsewhere (the stub a server keeps for the matches it played for
``arena tournament --server``) hold little more than its variant. :meth:`from_dict` gives
every missing key its default, once, here:

>>> old = TournamentSettings.from_dict({"game": {"variant": "extreme", "players": 3}, "games": 6, "seed": 9,
...                                     "bots": [{"name": "a", "command": ["./a"]}]})
>>> old.deals, old.format, old.sprt, old.server, old.tls, old.shared_processes, old.organised_elsewhere
('duplicate', 'round-robin', None, None, False, False, False)
>>> stub = TournamentSettings.from_dict({"organised_elsewhere": True})
>>> stub.organised_elsewhere, stub.named_variant, stub.variant
(True, None, 'classic')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from arena.tls import ClientTls
from engine import GameConfig

# The time control and fault limit of a match unless its organiser says otherwise; the
# referee's defaults too (arena.referee.limits takes them from here).
MOVE_TIME = 1.0     # seconds per decision
TIME_BANK = 10.0    # extra seconds per match, drawn on when a decision takes longer
MAX_FAULTS = 3      # faults that forfeit a match

MIB = 1 << 20


# -- the lineup -------------------------------------------------------------------------


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _path(text: object) -> Path | None:
    return Path(str(text)) if text else None


@dataclass(frozen=True)
class CodeStamp:
    """Which code a bot ran: the SHA-256 of its own files (each file's path relative to the
    copy, whether it is executable, and its content; a link's target), their count and
    size (arena.tournament.bot_files takes it).

    >>> CodeStamp("ab" * 32, 3, 2048).describe()
    'sha256 abababababab, 3 files, 2.0 KiB'
    """

    sha256: str
    files: int
    bytes: int

    def describe(self) -> str:
        size = f"{self.bytes / MIB:.1f} MiB" if self.bytes >= MIB else f"{self.bytes / 1024:.1f} KiB"
        return f"sha256 {self.sha256[:12]}, {self.files} file{'s' if self.files != 1 else ''}, {size}"

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "files": self.files, "bytes": self.bytes}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CodeStamp:
        return cls(str(data["sha256"]), int(data["files"]), int(data["bytes"]))


@dataclass(frozen=True)
class BotFiles:
    """What a bot's command names: its program, its own folder (None: it sees its program
    alone, for ``shared_because``), and the other paths it names, each readable alone
    (arena.tournament.bot_files finds them). Paths are absolute as spelled, not resolved,
    so that the sandbox has them where the command names them."""

    program: Path | None
    folder: Path | None = None
    data: tuple[Path, ...] = ()
    shared_because: str | None = None

    @property
    def own(self) -> Path | None:
        """What is copied: the own folder, else the program alone."""
        return self.folder or self.program

    def to_json(self) -> dict[str, Any]:
        return {"program": _text(self.program), "folder": _text(self.folder), "data": [str(p) for p in self.data],
                "shared_because": self.shared_because}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BotFiles:
        data_paths = tuple(Path(p) for p in data.get("data") or [])
        return cls(_path(data.get("program")), _path(data.get("folder")), data_paths, data.get("shared_because"))


@dataclass
class BotEntry:
    """A bot the arena starts: its name and its command (before the arena's own arguments)."""

    name: str
    command: list[str]
    cwd: Path | None = None
    # Sample bots understand these; foreign commands get them only through the environment.
    extra_args: bool = False
    env: dict[str, str] = field(default_factory=dict)   # added to the process's environment
    readable: list[Path] = field(default_factory=list)  # folders a confined bot may read besides its own
    # What its command names (arena.tournament.bot_files), and the stamp of its own files
    # when the tournament was made: a run whose copy differs refuses to start the bot.
    files: BotFiles | None = None
    stamp: CodeStamp | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form. A bot without a command (one connected to a server, which the
        arena does not start) is stored by its name alone.

        >>> BotEntry("a", ["./a"], Path("/bots")).to_json()
        {'name': 'a', 'command': ['./a'], 'cwd': '/bots', 'extra_args': False, 'env': {}, 'readable': []}
        >>> BotEntry.from_json(BotEntry("b", []).to_json())
        BotEntry(name='b', command=[], cwd=None, extra_args=False, env={}, readable=[], files=None, stamp=None)
        """
        if not self.command:
            return {"name": self.name}
        stored = {"name": self.name, "command": list(self.command), "cwd": str(self.cwd) if self.cwd else None,
                  "extra_args": self.extra_args, "env": dict(self.env), "readable": [str(p) for p in self.readable]}
        if self.files is not None:
            stored["files"] = self.files.to_json()
        if self.stamp is not None:
            stored["stamp"] = self.stamp.to_json()
        return stored

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BotEntry:
        return cls(str(data["name"]), list(data.get("command") or []), Path(data["cwd"]) if data.get("cwd") else None,
                   bool(data.get("extra_args")), dict(data.get("env") or {}),
                   [Path(p) for p in data.get("readable") or []],
                   BotFiles.from_json(data["files"]) if isinstance(data.get("files"), dict) else None,
                   CodeStamp.from_json(data["stamp"]) if isinstance(data.get("stamp"), dict) else None)


@dataclass(frozen=True)
class BotLimits:
    """What one bot may use, over all of its processes (arena.tournament.bot_limits says
    how each limiter enforces them). CPU has no number: every bot gets an equal share
    (cgroup ``cpu.shares``/``cpu.weight``), so a bot with 8 spinning threads gets no more
    than one with 1; rlimits cannot do that."""

    memory_mb: int = 512         # over all the bot's processes
    processes: int = 64          # processes and threads
    file_size_mb: int = 64       # largest file it may write
    open_files: int = 256        # per process


# -- an A/B test ------------------------------------------------------------------------

# The scale an A/B test's bounds are stored on since they are the leaderboard's Elo.
LEADERBOARD_SCALE = "leaderboard"


@dataclass(frozen=True)
class SprtSettings:
    """An A/B test as its tournament stores it: the two bots and the bounds.

    ``scale`` is ``"leaderboard"``: the bounds are Elo on the leaderboard's scale. A test
    stored before that has no scale (None); it gave its bounds as Elo on the set score,
    and ``arena.stats.sprt.bounds_of`` reads them as the leaderboard Elo of that unit.

    >>> old = SprtSettings.from_json({"candidate": "new", "baseline": "old", "elo0": 0, "elo1": 10,
    ...                               "alpha": 0.05, "beta": 0.05})
    >>> old.scale, "scale" in old.to_json()
    (None, False)
    """

    candidate: str
    baseline: str
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    scale: str | None = LEADERBOARD_SCALE

    def to_json(self) -> dict[str, object]:
        """The stored form (a test without a scale is stored as it was, without one)."""
        data: dict[str, object] = {"candidate": self.candidate, "baseline": self.baseline, "elo0": self.elo0,
                                   "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}
        if self.scale is not None:
            data["scale"] = self.scale
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SprtSettings:
        def number(key: str, default: float | None = None) -> float:
            value = data.get(key, default)
            if not isinstance(value, int | float):
                raise ValueError(f"the stored A/B test has no number {key!r}")
            return float(value)

        scale = data.get("scale")
        return cls(str(data["candidate"]), str(data["baseline"]), number("elo0"), number("elo1"),
                   number("alpha", 0.05), number("beta", 0.05), scale if isinstance(scale, str) else None)


# -- the tournament ---------------------------------------------------------------------


def stored_game(options: Any) -> GameConfig | None:
    """The game of stored settings: their options over the engine's defaults (older
    settings stored only those they changed); None when they name no game. An option this
    engine does not know (stored by a later version) is left out here, and its value
    unchecked: the engine's checks refuse it when a match is made.

    >>> game = stored_game({"variant": "extreme", "players": 3, "sparkle": 1})
    >>> game.variant, game.players, game.destroyer_penalty
    ('extreme', 3, 4)
    >>> stored_game({}) is None
    True
    """
    if not isinstance(options, Mapping) or not options:
        return None
    known = {f.name for f in fields(GameConfig)} - {"seed"}
    return GameConfig(**{k: v for k, v in options.items() if k in known})


@dataclass
class TournamentSettings:
    """Every setting of a tournament; stored with it so ``--resume`` needs nothing else.

    ``game`` is the game every match plays, the engine's :class:`GameConfig` with its
    seed unused (every deal gets its own from the master ``seed``: :meth:`game_config`);
    None only when the stored settings name no game (the stub of a tournament organised
    elsewhere, stored before stubs kept their variant). ``deals`` is the format,
    ``duplicate`` or ``independent`` (arena.tournament.schedule).
    """

    game: GameConfig | None = field(default_factory=GameConfig)
    games: int = 40
    seed: int = 0
    # Whether the organiser gave ``seed`` (``--seed``): only then is it echoed when a run
    # starts; a drawn seed is shown once the tournament has finished. Settings stored
    # before this field existed read as drawn, the safe side.
    seed_given: bool = False
    move_time: float = MOVE_TIME
    time_bank: float = TIME_BANK
    max_faults: int = MAX_FAULTS
    concurrency: int = 4
    server: str | None = None
    # How the organiser's calls reach ``server``: TLS (``tls``), trusting the CA certificate
    # at ``tls_ca`` (an absolute path, so that --resume works from any folder) or, without
    # it, the system's roots; plaintext when ``tls`` is false.
    tls: bool = False
    tls_ca: str | None = None
    # The organiser's client certificate and key (absolute paths), for a server that
    # requires one (arena serve --tls-client-ca).
    tls_cert: str | None = None
    tls_key: str | None = None
    # Settings stored before this field existed were duplicate.
    deals: str = "duplicate"
    # The lineup: the bots this arena starts (remote bots, by name only, without a command).
    bots: list[BotEntry] = field(default_factory=list)
    # "round-robin"; "gauntlet": every table has the bot ``gauntlet`` and opponents from
    # the rest; or "sprt": a duplicate A/B test (arena.tournament.sprt) of the two bots
    # and the bounds in ``sprt``, the other bots being the opponents and ``games`` the
    # limit (whole sets).
    format: str = "round-robin"
    sprt: SprtSettings | None = None
    gauntlet: str | None = None
    # How the bots this arena starts run (a SandboxMode of arena.tournament.sandbox):
    # confined with bubblewrap where it works ("auto"), always ("bwrap") or never
    # ("none"); a fresh process for every match; one process a bot for every game,
    # rotations of a deal included (trusted bots; else no process plays one deal twice,
    # and settings stored before this field read so too); the limits of each bot over all
    # its processes; the variables the organiser passes to them (a confined bot's
    # environment is cleared).
    sandbox: str = "auto"
    fresh_per_match: bool = False
    shared_processes: bool = False
    memory_limit_mb: int = BotLimits.memory_mb
    process_limit: int = BotLimits.processes
    file_size_limit_mb: int = BotLimits.file_size_mb
    open_files_limit: int = BotLimits.open_files
    bot_env: dict[str, str] = field(default_factory=dict)
    # The stub a server stores for the matches it plays for a tournament organised by
    # another arena (``arena tournament --server``): only its variant is known, and only
    # such a stub stores this key.
    organised_elsewhere: bool = False

    @property
    def named_variant(self) -> str | None:
        """The variant the stored game names; None when it names none (a stub stored before
        stubs kept their variant)."""
        return self.game.variant if self.game is not None else None

    @property
    def variant(self) -> str:
        """The variant played: the one the game names, else the engine's default."""
        return self.named_variant or GameConfig.variant

    @property
    def players(self) -> int:
        return (self.game or GameConfig()).players

    def game_config(self, seed: int) -> GameConfig:
        """The game dealt from ``seed`` (the engine's default game when none is stored)."""
        return replace(self.game or GameConfig(), seed=seed)

    def client_tls(self) -> ClientTls | None:
        """How to reach :attr:`server`: over TLS (trusting :attr:`tls_ca`, or the system's
        roots) or, None, in plaintext.

        >>> TournamentSettings(server="h:1", tls=True, tls_ca="/etc/arena/ca.pem").client_tls()
        ClientTls(ca=PosixPath('/etc/arena/ca.pem'), cert=None, key=None)
        """
        if not self.tls:
            return None
        return ClientTls(Path(self.tls_ca) if self.tls_ca else None, Path(self.tls_cert) if self.tls_cert else None,
                         Path(self.tls_key) if self.tls_key else None)

    def bot_limits(self) -> BotLimits:
        return BotLimits(memory_mb=self.memory_limit_mb, processes=self.process_limit,
                         file_size_mb=self.file_size_limit_mb, open_files=self.open_files_limit)

    def bot_names(self) -> list[str]:
        return [b.name for b in self.bots]

    def stamps(self) -> dict[str, CodeStamp]:
        """The stamp of each bot's own files when the tournament was made, by name (the
        bots the arena started; a bot without a stamp is left out)."""
        return {b.name: b.stamp for b in self.bots if b.stamp is not None}

    def opponents(self) -> list[str]:
        """Every bot but the one(s) under test: an A/B test's candidate and baseline, a
        gauntlet's bot (in a round robin, every bot)."""
        tested = (self.sprt.candidate, self.sprt.baseline) if self.sprt else (self.gauntlet,)
        return [name for name in self.bot_names() if name not in tested]

    def describe(self) -> str:
        """The tournament in words, for its start line.

        >>> TournamentSettings(games=8, deals="independent", bots=[BotEntry("a", []), BotEntry("b", [])]).describe()
        'classic, 2 bots (a, b), 8 games, independent deals'
        """
        if self.sprt is not None:
            s = self.sprt
            return (f"{self.variant}, SPRT {s.candidate} against {s.baseline}, elo0 {s.elo0:g}, "
                    f"elo1 {s.elo1:g}, alpha {s.alpha:g}, beta {s.beta:g}, up to {self.games} games, "
                    f"opponents {', '.join(self.opponents())}")
        if self.gauntlet is not None:
            return (f"{self.variant}, gauntlet of {self.gauntlet} against {len(self.opponents())} bots "
                    f"({', '.join(self.opponents())}), {self.games} games, {self.deals} deals")
        return (f"{self.variant}, {len(self.bots)} bots ({', '.join(self.bot_names())}), "
                f"{self.games} games, {self.deals} deals")

    def to_dict(self) -> dict[str, Any]:
        """The stored form: JSON values only (``organised_elsewhere`` only when true).

        >>> settings = TournamentSettings(games=8, bots=[BotEntry("a", ["./a"]), BotEntry("b", ["./b"])])
        >>> TournamentSettings.from_dict(settings.to_dict()) == settings
        True
        """
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update(game=self.game.options() if self.game is not None else {},
                    bots=[b.to_json() for b in self.bots], bot_env=dict(self.bot_env),
                    sprt=self.sprt.to_json() if self.sprt else None)
        if not self.organised_elsewhere:
            del data["organised_elsewhere"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TournamentSettings:
        """The settings of a stored tournament: what ``data`` lacks gets its default (the
        field's, and no game for settings that name none); keys it does not know are
        left out."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["game"] = stored_game(values.get("game"))
        values["bots"] = [BotEntry.from_json(b) for b in values.get("bots") or []]
        values["bot_env"] = dict(values.get("bot_env") or {})
        values["organised_elsewhere"] = bool(values.get("organised_elsewhere"))
        if values.get("sprt") is not None:
            values["sprt"] = SprtSettings.from_json(values["sprt"])
        return cls(**values)
