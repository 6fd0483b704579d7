"""``arena worker``: play a tournament's games from its database, beside other workers.

See arena.tournament.worker and docs/scaling.md. The database is the one every worker
and the organiser share: PostgreSQL across machines, SQLite on one machine.
"""

from __future__ import annotations

import asyncio

import typer

from arena.cli.common import DbOption, console, db_location, err_console, fail, open_store
from arena.tournament.settings import LEASE_SECONDS


def worker(
    tournament: str | None = typer.Option(None, metavar="ID", help="Only this tournament [default: every "
                                          "running tournament, one after another]", show_default=False),
    slots: int = typer.Option(1, min=1, help="Deals played at once (each its own matches, one after another)."),
    lease: float = typer.Option(LEASE_SECONDS, min=1.0, help="Seconds a claimed deal stays this worker's without a "
                                "renewal (renewed every third of it): how long a killed worker's games wait."),
    db: str | None = DbOption,
) -> None:
    """Claim games of a running tournament under a lease and play them with this machine's referee and bots.

    Start as many as you like, on as many machines as share the database. A worker
    killed mid-game gives its games back when its lease expires (--lease). Exit 0 when
    there is nothing left to play; 2 for an unknown tournament or an unusable database.
    """
    from arena.store import StoreError
    from arena.tournament.command import sigterm_as_ctrl_c
    from arena.tournament.worker import run_worker

    store = open_store(db, must_exist=True)
    if tournament is not None:
        try:
            store.get_tournament(tournament)
        except StoreError as error:
            fail(str(error))

    def notice(message: str) -> None:
        err_console.print(f"[yellow]note:[/] {message}", highlight=False, soft_wrap=True)

    def say(message: str) -> None:
        console.print(message, highlight=False, soft_wrap=True)

    try:
        done = asyncio.run(sigterm_as_ctrl_c(run_worker(store, db_location(db), tournament, slots, notice, say,
                                                        lease_seconds=lease)))
    except KeyboardInterrupt:
        err_console.print("worker stopped: its unfinished games go back to the others when its leases end")
        raise SystemExit(130) from None
    say(f"{done.played} games played in {done.seconds:.1f} s; nothing left to claim.")
