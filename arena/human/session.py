"""One person's match: the lineup, the referee and its bots, the person's seat, the record.

:class:`PlaySettings` is ``arena play``'s command line checked; :func:`choose_bots`
fills the other seats (the bots named with ``--bots`` first, then the sample bots);
:func:`play_match` runs the match the way a tournament runs one: a
:class:`~arena.tournament.runner.LocalArena` (a loopback referee and the bots as
confined processes, through the same sandbox and limits), one more one-run token for
the person's :class:`~arena.human.seat.HumanSeat`, ``run_match``, and the record saved
through the :class:`~arena.store.Store` like any other match.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import secrets
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.human.seat import HumanSeat
from arena.records import MatchRecord, MatchSpec
from arena.store import Store
from arena.tournament.lineup import BotEntry, LineupError, check_name, parse_bot_option, sample_lineup
from arena.tournament.runner import LocalArena
from arena.tournament.settings import TournamentSettings
from engine import GameConfig, replay_record

# A person's limits: 10 minutes a decision, and a 10-minute bank on top, for every seat
# (the bots answer in milliseconds either way). Faults forfeit as in any match.
MOVE_TIME = 600.0
TIME_BANK = 600.0
# The sample bots in the order they take the seats the --bots leave free.
SAMPLE_ORDER = ("heuristic", "greedy", "cautious", "random", "node-heuristic")
CONNECT_SECONDS = 15.0


@dataclass
class PlaySettings:
    """``arena play`` as given, checked: the game, the person's name, the other seats' bots."""

    config: GameConfig
    name: str
    bots: list[BotEntry]
    db: str
    sandbox: str = "auto"
    seat: int = 0
    bot_seeds: list[int] = field(default_factory=list)

    @property
    def seats(self) -> list[str]:
        """Names by seat: the person at :attr:`seat`, the bots around."""
        names = [bot.name for bot in self.bots]
        return [*names[:self.seat], self.name, *names[self.seat:]]


def parse_bots(text: str | None) -> list[BotEntry]:
    """``--bots NAME=CMD,NAME=CMD``: the bots, each checked as ``--bot`` checks one.

    >>> [b.name for b in parse_bots("a=python3 -c pass, b=python3 -c pass")]
    ['a', 'b']
    >>> parse_bots("a")
    Traceback (most recent call last):
    ...
    arena.tournament.lineup.LineupError: --bots takes NAME=CMD,NAME=CMD (got 'a')
    """
    items = [item.strip() for item in (text or "").split(",") if item.strip()]
    for item in items:
        if "=" not in item:
            raise LineupError(f"--bots takes NAME=CMD,NAME=CMD (got {item!r})")
    return [parse_bot_option(item) for item in items]


def choose_bots(own: list[BotEntry], players: int, you: str, notice: Callable[[str], None]) -> list[BotEntry]:
    """The bots of the other ``players - 1`` seats: ``own`` first, then sample bots; a
    LineupError when they are too many, share a name, or cannot fill the table."""
    try:
        check_name(you)
    except LineupError:
        raise LineupError(f"--name {you!r}: use 1-40 letters, digits, '-', '_' or '.'") from None
    wanted = players - 1
    if len(own) > wanted:
        raise LineupError(f"--bots names {len(own)} bots, but a {players}-player table has {wanted} other seats")
    names = [bot.name for bot in own]
    duplicate = next((n for n in names if names.count(n) > 1 or n == you), None)
    if duplicate is not None:
        raise LineupError(f"two players are named {duplicate!r} (--name is the person's)")
    bots = list(own)
    if len(bots) < wanted:
        need_node = wanted - len(bots) > len(SAMPLE_ORDER) - 1
        samples = {bot.name: bot for bot in sample_lineup(notice, with_node=need_node)}
        for name in SAMPLE_ORDER:
            if len(bots) < wanted and name in samples and name not in names and name != you:
                bots.append(samples[name])
    if len(bots) < wanted:
        raise LineupError(f"a {players}-player table needs {wanted} bots besides you; there are {len(bots)} "
                          "(name more with --bots)")
    return bots


def new_settings(config: GameConfig, name: str, bots: list[BotEntry], db: str, sandbox: str = "auto",
                 seed: int | None = None) -> PlaySettings:
    """Settings with the deal, the person's seat and the bots' seeds drawn from ``seed``
    (or at random: a fresh deal every time).

    >>> a = new_settings(GameConfig(players=3), "me", [BotEntry("x", []), BotEntry("y", [])], "a.db", seed=1)
    >>> b = new_settings(GameConfig(players=3), "me", [BotEntry("x", []), BotEntry("y", [])], "a.db", seed=1)
    >>> a == b, a.seats[a.seat], a.config.seed != 0
    (True, 'me', True)
    """
    rng = random.Random(seed if seed is not None else secrets.randbits(63))
    dealt = dataclasses.replace(config, seed=rng.getrandbits(63))
    return PlaySettings(config=dealt, name=name, bots=bots, db=db, sandbox=sandbox,
                        seat=rng.randrange(config.players), bot_seeds=[rng.getrandbits(63) for _ in bots])


def next_deal(settings: PlaySettings) -> PlaySettings:
    """The same table for another match ("play again"): a new deal, seat and seeds."""
    return new_settings(settings.config, settings.name, settings.bots, settings.db, settings.sandbox)


def tournament_settings(settings: PlaySettings) -> TournamentSettings:
    """What :class:`LocalArena` needs: the bots, the sandbox, the limits."""
    return TournamentSettings(game=dataclasses.replace(settings.config, seed=0), games=1, move_time=MOVE_TIME,
                              time_bank=TIME_BANK, concurrency=1, bots=list(settings.bots), sandbox=settings.sandbox)


async def play_match(settings: PlaySettings, seat: HumanSeat, notice: Callable[[str], None],
                     viewer_command: str) -> MatchRecord:
    """Start the referee and the bots, connect the person's seat, play the match and store it.

    ``seat`` is told every step (``seat.fail`` when the match cannot be played, which
    is raised too). The bots' output goes to a temporary folder, removed afterwards
    unless a bot failed to start."""
    folder = Path(tempfile.mkdtemp(prefix="arena-play-"))
    keep = False
    db_path = Path(settings.db.removeprefix("sqlite:///"))
    hidden = [db_path.resolve()] if "://" not in settings.db else []
    store = Store(settings.db)
    try:
        async with LocalArena(tournament_settings(settings), folder / "logs", notice=notice, hidden=hidden) as arena:
            seat.token = arena.referee.admit(settings.name)
            seat.address = arena.address
            connection = asyncio.ensure_future(seat.run())
            try:
                await seat.connected(CONNECT_SECONDS)
                seeds = settings.bot_seeds
                spec = MatchSpec(config=settings.config, bots=settings.seats, match_id=f"play-{uuid.uuid4().hex[:12]}",
                                 bot_seeds=[*seeds[:settings.seat], 0, *seeds[settings.seat:]],
                                 move_time=MOVE_TIME, time_bank=TIME_BANK)
                record = await arena.run_match(spec)
            finally:
                await asyncio.sleep(0.2)      # let the seat read its MatchEnded
                connection.cancel()
                await asyncio.gather(connection, return_exceptions=True)
        # The plays after the person's last decision came with no request: the seat's
        # view of the whole match (its own events and the public ones) from the record.
        seen, _ = replay_record(record.config, record.actions).events_for(settings.seat, 0)
        seat.finish_events(seen)
        await asyncio.to_thread(store.save_match, record)
        seat.mark_stored(record.match_id, viewer_command)
        return record
    except BaseException as error:
        keep = not isinstance(error, asyncio.CancelledError)
        if seat.problem is None and not isinstance(error, asyncio.CancelledError):
            where = str(folder / "logs")
            seat.fail(str(error) if where in str(error) else f"{error} (the bots' output is in {where})")
        raise
    finally:
        store.close()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
