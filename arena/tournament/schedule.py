"""The tournament schedule: which bots sit where, with which cards, in every game.

Two formats share the same tables and seat rotations and differ only in the deals:

- *duplicate*: every deal is played once for each cyclic rotation of the seats, so
  each bot at the table meets the same cards from every seat and the luck of the
  deal cancels out. A bot that remembers what it saw knows the deal of the rotations
  it has yet to play: for bots you trust (or sandbox).
- *independent*: every game has its own deal, so nothing a bot sees says anything
  about another game's cards. Costs more games for the same confidence
  (``arena bench deals`` measures how many).

With more bots than seats, tables are drawn so that every bot plays equally often
and meets every other about equally often.

Everything derives from the master seed, the tournament's secret, so a schedule is
recomputed identically when a tournament is resumed::

    >>> games = make_schedule(["a", "b", "c", "d"], players=4, games=8, master_seed=1)
    >>> len(games), games[0].seed == games[3].seed, games[0].seed == games[4].seed
    (8, True, False)
    >>> [g.bots for g in games[:4]] == [games[0].bots[r:] + games[0].bots[:r] for r in range(4)]
    True
    >>> other = make_schedule(["a", "b", "c", "d"], players=4, games=8, master_seed=1, deals="independent")
    >>> [g.bots for g in other] == [g.bots for g in games], len({g.seed for g in other})
    (True, 8)
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import random
import secrets
from collections import Counter
from dataclasses import dataclass

DEAL_FORMATS = ("duplicate", "independent")


class ScheduleError(ValueError):
    """A lineup or game count that cannot make a fair schedule."""


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the tournament. Games that share ``deal`` share the cards (``seed``):
    in the duplicate format the rotations of a table, in the independent one no two
    games. ``table`` counts the drawn tables; its rotations are ``rotation`` 0..P-1."""

    index: int
    deal: int
    rotation: int
    bots: tuple[str, ...]        # by seat
    seed: int                    # the engine's deal seed
    bot_seeds: tuple[int, ...]   # by seat, for the bots' own randomness
    table: int


def new_master_seed() -> int:
    """A fresh random master seed for a tournament: 63 bits, all of what a seed may hold,
    so that nobody can search the seeds that would produce what they see."""
    return secrets.randbits(63)


def derive_seed(master_seed: int, *parts: object) -> int:
    """A 63-bit seed from the master seed and a label, the same on every machine."""
    text = ":".join(str(p) for p in (master_seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def bot_seed_key(master_seed: int) -> bytes:
    """The key of the bots' seeds, derived from the master seed (the tournament's secret)."""
    return hmac.new(str(master_seed).encode(), b"wizard-arena bot seeds", hashlib.sha256).digest()


def bot_seed(key: bytes, index: int, seat: int) -> int:
    """The 63-bit seed handed to the bot in ``seat`` of game ``index`` (``MatchStarted.seed``).

    An HMAC-SHA256 keyed by :func:`bot_seed_key`: a bot sees its own seed and the game
    index (in the match id), but without the key that says nothing about the master
    seed, the deals or any other seat's seed.
    """
    mac = hmac.new(key, f"{index}:{seat}".encode(), hashlib.sha256).digest()
    return int.from_bytes(mac[:8], "big") >> 1


def games_unit(bots: int, players: int) -> int:
    """The smallest number of games in which every bot plays equally often:
    whole rotations of enough tables that every bot sits out equally."""
    return players * (bots // math.gcd(bots, players))


def round_games(requested: int, bots: int, players: int) -> int:
    """``requested`` rounded up to whole duplicate sets (at least one)."""
    unit = games_unit(bots, players)
    return max(1, math.ceil(requested / unit)) * unit


def draw_tables(bots: list[str], players: int, tables: int, rng: random.Random) -> list[tuple[str, ...]]:
    """``tables`` tables of ``players`` bots each, balanced in games and meetings.

    Each table is the set of bots that have played least, and among those the set whose
    members have met each other least (every possible table is scored while there are
    at most a few thousand; beyond that, seats are filled greedily). When ``tables`` is
    a multiple of ``bots / gcd(bots, players)`` every bot plays exactly equally often.
    The seating order around each table is shuffled (rotations then cover it).
    """
    played: Counter[str] = Counter()
    met: Counter[tuple[str, str]] = Counter()

    def cost(table: tuple[str, ...]) -> tuple[int, int, float]:
        meetings = sum(met[pair] ** 2 for pair in itertools.combinations(sorted(table), 2))
        return sum(played[b] for b in table), meetings, rng.random()

    small = math.comb(len(bots), players) <= 3000
    result = []
    for _ in range(tables):
        if small:
            best = min(itertools.combinations(bots, players), key=cost)
            chosen = list(best)
        else:
            chosen = []
            for _seat in range(players):
                rest = [b for b in bots if b not in chosen]
                chosen.append(min(rest, key=lambda b: cost((*chosen, b))[0:2] + (rng.random(),)))
        for b in chosen:
            played[b] += 1
        for pair in itertools.combinations(sorted(chosen), 2):
            met[pair] += 1
        rng.shuffle(chosen)
        result.append(tuple(chosen))
    return result


def make_schedule(bots: list[str], players: int, games: int, master_seed: int,
                  deals: str = "duplicate") -> list[ScheduledGame]:
    """The full schedule of ``games`` games (already rounded with :func:`round_games`).

    ``deals`` is ``"duplicate"`` (one deal per table, played in every rotation) or
    ``"independent"`` (a deal per game); the tables, rotations and bot seeds are the same.
    """
    if deals not in DEAL_FORMATS:
        raise ScheduleError(f"deals must be {' or '.join(DEAL_FORMATS)} (got {deals!r})")
    if len(set(bots)) != len(bots):
        raise ScheduleError("every bot in the lineup needs its own name")
    if len(bots) < players:
        raise ScheduleError(f"{players}-player tables need at least {players} bots (the lineup has {len(bots)})")
    if games % players:
        raise ScheduleError(f"games must be a multiple of the table size {players} (got {games})")
    rng = random.Random(derive_seed(master_seed, "tables"))
    tables = draw_tables(list(bots), players, games // players, rng)
    return _rotations(tables, players, master_seed, deals)


def _rotations(tables: list[tuple[str, ...]], players: int, master_seed: int, deals: str) -> list[ScheduledGame]:
    """Every table in every seat rotation, with its deal (one per table when duplicate,
    one per game when independent) and the bots' seeds."""
    key = bot_seed_key(master_seed)
    schedule = []
    for number, table in enumerate(tables):
        for rotation in range(players):
            index = number * players + rotation
            if deals == "duplicate":
                deal, seed = number, derive_seed(master_seed, "deal", number)
            else:
                deal, seed = index, derive_seed(master_seed, "game deal", index)
            seated = table[rotation:] + table[:rotation]
            bot_seeds = tuple(bot_seed(key, index, seat) for seat in range(players))
            schedule.append(ScheduledGame(index, deal, rotation, seated, seed, bot_seeds, number))
    return schedule


def gauntlet_schedule(bot: str, opponents: list[str], players: int, games: int, master_seed: int,
                      deals: str = "duplicate") -> list[ScheduledGame]:
    """A gauntlet: every table is ``bot`` and ``players - 1`` of ``opponents``, drawn so
    that each opponent plays and meets the others equally often; each table is played
    in every rotation, as in :func:`make_schedule` (``games`` already rounded with
    :func:`gauntlet_games`).

    >>> games = gauntlet_schedule("me", ["a", "b", "c"], players=3, games=9, master_seed=1)
    >>> all("me" in g.bots for g in games), sorted({g.bots.index("me") for g in games})
    (True, [0, 1, 2])
    """
    if bot in opponents:
        raise ScheduleError(f"the gauntlet's bot {bot!r} cannot be its own opponent")
    if len(opponents) < players - 1:
        raise ScheduleError(f"{players}-player tables need {players - 1} opponents besides {bot} "
                            f"(the lineup has {len(opponents)})")
    if games % players:
        raise ScheduleError(f"games must be a multiple of the table size {players} (got {games})")
    rng = random.Random(derive_seed(master_seed, "gauntlet tables"))
    drawn = draw_tables(list(opponents), players - 1, games // players, rng)
    # The bot's seat at each table is its own draw; the rotations then seat it everywhere.
    tables = [table[:at] + (bot,) + table[at:] for table in drawn for at in [rng.randrange(players)]]
    return _rotations(tables, players, master_seed, deals)


def gauntlet_games(requested: int, opponents: int, players: int) -> int:
    """``requested`` rounded up so that every opponent plays equally often (whole
    rotations of enough tables); at least one such unit."""
    unit = players * (opponents // math.gcd(opponents, players - 1))
    return max(1, math.ceil(requested / unit)) * unit
