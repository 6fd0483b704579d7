"""The ladder (``arena serve --ladder VARIANT``): keep seating idle connected bots in matches."""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from typing import TYPE_CHECKING

from arena.records import MatchSpec
from arena.referee.seating import SeatingError

if TYPE_CHECKING:
    from arena.referee.server import ArenaServer

log = logging.getLogger(__name__)


async def ladder_loop(arena: ArenaServer, variant: str = "classic", players: int = 4, rounds: int | None = None,
                      interval: float = 1.0) -> None:
    """Whenever ``players`` connected bots that play ``variant`` have a free slot, seat a
    random few of them in a new match (stored when it ends). Runs until cancelled."""
    rng = random.Random()
    registry = arena.registry
    while True:
        idle = sorted(name for name, conns in registry.by_name.items()
                      if any(c.plays(variant) and c.free_slots() > 0 for c in conns))
        if len(idle) >= players:
            bots = rng.sample(idle, players)
            # Deal seeds are secrets: unguessable, never derived from anything a bot sees.
            config = {"variant": variant, "players": players, "seed": secrets.randbits(63)}
            if rounds is not None:
                config["rounds"] = rounds
            arena.spawn(_ladder_match(arena, MatchSpec(config=config, bots=bots)))
            await asyncio.sleep(0)   # let the match take its seats before looking again
            continue
        await registry.wait_for_change(interval)


async def _ladder_match(arena: ArenaServer, spec: MatchSpec) -> None:
    try:
        record = await arena.run_match(spec)
    except SeatingError as error:
        log.info("ladder: %s", error)
        return
    await arena.save(record)
