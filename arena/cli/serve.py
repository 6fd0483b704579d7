"""``arena serve``: the referee as a long-running server (arena.referee.server).

Its limits default to the referee's own (arena.referee.limits).
"""

from __future__ import annotations

import asyncio
import socket

import typer

from arena.cli.common import DbOption, check_choice, db_location, fail, open_store
from arena.referee.limits import GRACE, MAX_FAULTS, MAX_SECONDS, MOVE_TIME, TIME_BANK
from engine import VARIANTS


def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(50051, help="Port to listen on (0: any free port)."),
    db: str | None = DbOption,
    move_time: float = typer.Option(MOVE_TIME, help="Seconds per decision."),
    time_bank: float = typer.Option(TIME_BANK, help="Extra seconds per match."),
    max_faults: int = typer.Option(MAX_FAULTS, help="Faults before a bot forfeits a match."),
    grace: float = typer.Option(GRACE, help="Seconds a disconnected bot has to reconnect."),
    ladder: str | None = typer.Option(None, help="Keep seating idle connected bots in matches of this variant."),
    quiet: bool = typer.Option(False, "--quiet", help="Log only warnings (default: connections, matches, faults)."),
) -> None:
    """Run the referee: bots connect, organisers run matches on it."""
    from arena.referee.server import serve as serve_forever  # imported here: it brings grpc

    check_choice(ladder, VARIANTS, "--ladder")
    if not 0 <= port <= 65535:
        raise typer.BadParameter("must be between 0 and 65535", param_hint="--port")
    for name, value in (("--move-time", move_time), ("--time-bank", time_bank), ("--grace", grace)):
        if not 0 <= value <= MAX_SECONDS:     # also refuses nan and inf
            raise typer.BadParameter(f"must be a number of seconds from 0 to {MAX_SECONDS:g}", param_hint=name)
    check_port_free(host, port)
    open_store(db, must_exist=False)  # refuse a foreign database before binding the port
    try:
        asyncio.run(serve_forever(host=host, port=port, db_path=db_location(db), move_time=move_time,
                                  time_bank=time_bank, max_faults=max_faults, grace=grace, ladder_variant=ladder,
                                  quiet=quiet))
    except OSError as error:   # the port was taken between the check and grpc's bind
        fail(str(error))


def check_port_free(host: str, port: int) -> None:
    """Refuse a taken port or an unknown host in one line, before grpc tries (and logs
    its own multi-line complaint on stderr)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as probe:
            # As grpc binds: a port whose old connections linger in TIME-WAIT (a restart
            # right after a stop) is free, one with a listener is not.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error.strerror or error}")
