"""Auto-match (``arena serve --auto-match VARIANT``; ``--ladder`` is its old, hidden name):
keep seating idle connected bots in matches of no tournament.

What it does, as docs/serve.md tells organisers: whenever at least ``players`` (4) of the
connected bots play ``variant`` and have a free match slot (a stream plays up to its
Hello's ``max_matches`` at once), it picks ``players`` of them at random, in random seat
order, and starts a full-length match with the server's time limits and a fresh secret
deal seed. Each bot sits at most once at a table; a bot with more slots plays more
matches at once. Finished matches are stored with no tournament (so on the variant's board
of the server's database, never a tournament's). The module keeps its old name: "ladder"
now means the search bots' lineup (``arena tournament --lineup ladder``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from typing import TYPE_CHECKING

from arena.records import MatchSpec
from arena.referee.seating import SeatingError
from engine import GameConfig

if TYPE_CHECKING:
    from arena.referee.server import ArenaServer

log = logging.getLogger(__name__)


async def ladder_loop(arena: ArenaServer, variant: str = "classic", players: int = 4, rounds: int | None = None,
                      interval: float = 1.0) -> None:
    """Whenever ``players`` connected bots that play ``variant`` have a free slot, seat a
    random ``players`` of them in a new match (stored when it ends); look again after
    every connect, disconnect or finished match, and at least every ``interval`` seconds.
    Runs until cancelled."""
    rng = random.Random()
    registry = arena.registry
    while True:
        idle = sorted(name for name, conns in registry.by_name.items()
                      if any(c.plays(variant) and c.free_slots() > 0 for c in conns))
        if len(idle) >= players:
            bots = rng.sample(idle, players)
            # Deal seeds are secrets: unguessable, never derived from anything a bot sees.
            config = GameConfig(variant=variant, players=players, seed=secrets.randbits(63), rounds=rounds)
            arena.spawn(_ladder_match(arena, MatchSpec(config=config, bots=bots)))
            await asyncio.sleep(0)   # let the match take its seats before looking again
            continue
        await registry.wait_for_change(interval)


async def _ladder_match(arena: ArenaServer, spec: MatchSpec) -> None:
    try:
        record = await arena.run_match(spec)
    except SeatingError as error:
        log.info("auto-match: %s", error)
        return
    await arena.save(record)
