"""What ``arena bot check`` plays, and the settings it is run with: :data:`PLAN` (the
matches), :data:`OPPONENTS`, :class:`CheckSettings` from the command line
(:func:`settings_from_args`), and :func:`schedule`, the plan made concrete (deals,
tables, the bot's seat) and reproducible from a seed.
"""

from __future__ import annotations

import random
import re
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.records import MatchSpec
from arena.referee.limits import MAX_SECONDS
from arena.tournament.lineup import BotEntry, LineupError, check_name, parse_bot_option
from arena.tournament.sandbox import SandboxMode
from arena.tournament.settings import DEFAULTS, MIN_MOVE_TIME, parse_bot_env
from engine import TRUMP, VARIANTS, GameConfig, new_game, variant

# Matches played at once on the bot's connection (fewer if its Hello asks for fewer).
# A tournament plays 4; 2 is enough to catch a bot whose matches trip over each other
# (state kept per bot instead of per match) and keeps a 2-core machine responsive.
CONCURRENCY = 2
# How many deals are tried, per classic match, to find one where the bot must choose
# trump; a full game simulates in a few milliseconds.
TRUMP_SEARCH = 60
# Seconds the bot has to start and say Hello (--connect-timeout).
CONNECT_TIMEOUT = 30.0


@dataclass(frozen=True)
class PlannedMatch:
    """One match of the check: the variant, the table size and any other game options."""

    variant: str
    players: int
    options: dict[str, Any] = field(default_factory=dict)   # more GameConfig fields

    def config(self, seed: int) -> GameConfig:
        return GameConfig(variant=self.variant, players=self.players, seed=seed, **self.options).validate()


# What is played, in this order (the README's "Bot author's guide" lists the same).
PLAN: tuple[PlannedMatch, ...] = (
    PlannedMatch("classic", 3),                                # 20-card hands; all 60 cards in the last round
    PlannedMatch("classic", 4, {"plus_minus_one": True}),      # the last bidder may not make the bids add up
    PlannedMatch("classic", 5, {"bidding": "hidden"}),         # everyone bids at once
    PlannedMatch("classic", 6, {"bidding": "secret"}),         # bids stay unknown until the round is scored
    PlannedMatch("classic", 4, {"length": "amigo"}),           # hand sizes 1, 3, 5, ...: not the round number
    PlannedMatch("extreme", 3),
    PlannedMatch("extreme", 4),
    PlannedMatch("extreme", 5),
)

# The opponents, by the name they play under; a 6-player table needs five.
OPPONENTS: tuple[tuple[str, str], ...] = (
    ("heuristic", "sample_bots.heuristic_bot:HeuristicBot"),
    ("random", "sample_bots.random_bot:RandomBot"),
    ("greedy", "sample_bots.greedy_bot:GreedyBot"),
    ("cautious", "sample_bots.cautious_bot:CautiousBot"),
    ("random-2", "sample_bots.random_bot:RandomBot"),
)


# ---------------------------------------------------------------------- settings


@dataclass
class CheckSettings:
    """What ``arena bot check`` was asked to do."""

    entry: BotEntry                      # the bot, as parse_bot_option made it
    command: str                         # as the user wrote it, for the report
    variants: tuple[str, ...] = VARIANTS  # at most these (--variant narrows it to one)
    move_time: float = DEFAULTS.move_time   # as in a tournament
    time_bank: float = DEFAULTS.time_bank
    seed: int = 0
    connect_timeout: float = CONNECT_TIMEOUT
    sandbox: str = DEFAULTS.sandbox      # as in a tournament: confined where bubblewrap works
    bot_env: dict[str, str] = field(default_factory=dict)   # --bot-env, as in a tournament

    @property
    def name(self) -> str:
        return self.entry.name


@dataclass
class ScheduledMatch:
    """A planned match made concrete: its spec (deal, table) and the bot's seat."""

    planned: PlannedMatch
    spec: MatchSpec
    seat: int

    @property
    def config(self) -> GameConfig:
        return self.spec.config


# ---------------------------------------------------------------------- the command line


def default_name(argv: list[str]) -> str:
    """The name a bot is checked under when none is given: its script's, else the
    ``-m`` module's, else its program's (a script called ``bot``, ``main``, ... is
    named after its folder).

    >>> default_name(["python3", "my_bot.py", "--fast"])
    'my_bot'
    >>> default_name(["node", "wizbot/bot.js"])
    'wizbot'
    >>> default_name(["/usr/bin/python3", "-m", "sample_bots.random_bot"])
    'random_bot'
    >>> default_name(["./Mr Bot!"]), default_name(["wizzy/bot.py"])
    ('Mr-Bot', 'wizzy')
    """
    words = [w for w in argv if not w.startswith("-")]
    name = Path(argv[0]).stem if argv else "bot"
    if "-m" in argv[:-1]:
        name = argv[argv.index("-m") + 1].rpartition(".")[2]
    else:
        scripts = [w for w in words if re.search(r"\.(py|js|mjs|cjs|ts|rb|pl|sh|jar|exe)$", w)]
        if scripts:
            path = Path(scripts[0])
            name = path.stem
            if name in ("bot", "main", "index", "run", "__main__", "app", "agent"):
                name = path.parent.name or Path.cwd().name
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-_.")[:40]
    return name or "bot"


def settings_from_args(command: str, *, name: str | None = None, variant: str | None = None,
                       move_time: float = DEFAULTS.move_time, time_bank: float = DEFAULTS.time_bank,
                       seed: int | None = None, connect_timeout: float = CONNECT_TIMEOUT,
                       sandbox: str = DEFAULTS.sandbox, bot_env: list[str] | None = None) -> CheckSettings:
    """Check the arguments of ``arena bot check`` (a LineupError says what is wrong, in
    one line) and return the settings. Nothing is started or written."""
    if not command.strip():
        raise LineupError("COMMAND is empty: give the command that starts your bot, e.g. './my_bot.py'")
    if name is None:
        try:
            name = default_name(shlex.split(command))
        except ValueError:      # parse_bot_option says what is wrong with the quoting
            name = "bot"
    check_name(name)
    if variant is not None and variant not in VARIANTS:
        raise LineupError(f"--variant must be one of {', '.join(VARIANTS)} (got {variant!r})")
    for option, value, least in (("--move-time", move_time, MIN_MOVE_TIME), ("--time-bank", time_bank, 0.0)):
        if not least <= value <= MAX_SECONDS:      # also refuses nan and inf
            raise LineupError(f"{option} must be a number of seconds from {least:g} to {MAX_SECONDS:g}")
    if not 0 < connect_timeout <= MAX_SECONDS:
        raise LineupError(f"--connect-timeout must be a number of seconds above 0, at most {MAX_SECONDS:g}")
    if seed is not None and not 0 <= seed < 2**63:
        raise LineupError("--seed must be between 0 and 2**63 - 1")
    modes = [mode.value for mode in SandboxMode]
    if sandbox not in modes:
        raise LineupError(f"--sandbox must be {', '.join(modes[:-1])} or {modes[-1]} (got {sandbox!r})")
    env = parse_bot_env(bot_env or [])
    entry = parse_bot_option(f"{name}={command}")    # exactly as --bot reads it
    return CheckSettings(entry=entry, command=command, variants=(variant,) if variant else VARIANTS,
                         move_time=move_time, time_bank=time_bank,
                         seed=secrets.randbits(63) if seed is None else seed, connect_timeout=connect_timeout,
                         sandbox=sandbox, bot_env=env)


# ---------------------------------------------------------------------- the matches


def opponent_names(bot: str) -> list[str]:
    """The opponents' names, none equal to the checked bot's.

    >>> opponent_names("random")[:3]
    ['heuristic', 'random-sample', 'greedy']
    """
    return [name if name != bot else f"{name}-sample" for name, _ in OPPONENTS]


def chooses_trump(config: GameConfig, seat: int) -> bool:
    """Whether ``seat`` must choose trump somewhere in this classic deal (it deals a
    round whose turned-up card is a Wizard). The deals follow from the seed alone,
    whatever is played, so one game played at random tells.

    >>> chooses_trump(GameConfig(variant="extreme", players=3, seed=1), 0)
    False
    """
    if TRUMP not in variant(config.variant).decision_kinds:
        return False
    game = new_game(config)
    rng = random.Random(0)
    while not game.is_over:
        for who in game.to_act():
            if who == seat and game.decision(who).kind == TRUMP:
                return True
            game.apply(who, game.random_action(who, rng))
    return False


def schedule(bot: str, variants: list[str], seed: int) -> dict[str, list[ScheduledMatch]]:
    """The matches of :data:`PLAN` for ``variants``, reproducible from ``seed``.

    The bot's seat is drawn for every match and the opponents rotate; every classic
    deal is one where the bot must choose trump, when one turns up within
    :data:`TRUMP_SEARCH` tries.

    >>> matches = schedule("me", ["classic", "extreme"], seed=7)
    >>> [(m.config.players, m.spec.bots[m.seat]) for m in matches["extreme"]]
    [(3, 'me'), (4, 'me'), (5, 'me')]
    >>> all(chooses_trump(m.config, m.seat) for m in matches["classic"])
    True
    >>> schedule("me", ["extreme"], seed=7)["extreme"][0].spec == matches["extreme"][0].spec
    True
    """
    others = opponent_names(bot)
    out: dict[str, list[ScheduledMatch]] = {variant: [] for variant in variants}
    for index, planned in enumerate(PLAN):
        if planned.variant not in out:
            continue
        # One generator per match: checking one variant plays the same deals as both.
        rng = random.Random(f"arena-bot-check/{seed}/{index}")
        seat = rng.randrange(planned.players)
        table = (others[index % len(others):] + others[:index % len(others)])[:planned.players - 1]
        deal = rng.getrandbits(63)
        for _ in range(TRUMP_SEARCH if TRUMP in variant(planned.variant).decision_kinds else 0):
            if chooses_trump(planned.config(deal), seat):
                break
            deal = rng.getrandbits(63)
        spec = MatchSpec(config=planned.config(deal), bots=table[:seat] + [bot] + table[seat:],
                         match_id=f"check-{index + 1}-{planned.variant}-{planned.players}p",
                         bot_seeds=[rng.getrandbits(63) for _ in range(planned.players)])
        out[planned.variant].append(ScheduledMatch(planned, spec, seat))
    return out
