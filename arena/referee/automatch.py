"""Auto-match (``arena serve --auto-match VARIANT``): keep seating idle connected bots in
matches of no tournament.

What it does, as docs/serve.md tells organisers: whenever at least ``players`` (4) of the
connected bots play ``variant`` and have a free match slot (a stream plays up to its
Hello's ``max_matches`` at once), it picks ``players`` of them at random, in random seat
order, and starts a full-length match with the server's time limits and a fresh secret
deal seed. Each bot sits at most once at a table; a bot with more slots plays more
matches at once. Finished matches are stored with no tournament (so on the variant's board
of the server's database, never a tournament's).
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from dataclasses import dataclass

from arena.records import MatchSpec
from arena.referee.host import MatchHost
from arena.referee.seating import Roster, SeatingError
from engine import GameConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AutoMatch:
    """What auto-match seats: ``players`` bots that play ``variant``, for matches of
    ``rounds`` rounds (None: the full length), looking for idle bots at least every
    ``interval`` seconds."""

    variant: str = "classic"
    players: int = 4
    rounds: int | None = None
    interval: float = 1.0


async def auto_match(settings: AutoMatch, roster: Roster, host: MatchHost) -> None:
    """Whenever ``settings.players`` connected bots of ``roster`` that play the variant
    have a free slot, seat a random ``players`` of them in a new match on ``host`` (stored
    when it ends); look again after every connect, disconnect or finished match, and at
    least every ``settings.interval`` seconds. Runs until cancelled."""
    rng = random.Random()
    while True:
        idle = roster.idle(settings.variant)
        if len(idle) >= settings.players:
            bots = rng.sample(idle, settings.players)
            # Deal seeds are secrets: unguessable, never derived from anything a bot sees.
            config = GameConfig(variant=settings.variant, players=settings.players, seed=secrets.randbits(63),
                                rounds=settings.rounds)
            host.spawn(_play(host, MatchSpec(config=config, bots=bots)))
            await asyncio.sleep(0)   # let the match take its seats before looking again
            continue
        await roster.wait_for_change(settings.interval)


async def _play(host: MatchHost, spec: MatchSpec) -> None:
    try:
        record = await host.run_match(spec)
    except SeatingError as error:
        log.info("auto-match: %s", error)
        return
    await host.save(record)
