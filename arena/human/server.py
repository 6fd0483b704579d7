"""``arena play`` running: the page's web server and the match, on one event loop.

The web server (uvicorn on a socket bound beforehand, so that the URL is printed before
anything starts) serves the page while :func:`arena.human.session.play_match` starts the
referee and the bots and plays the match. When the match ends it is stored, the lines
saying so are printed, and the page stays up (for the result and the viewer) until
Ctrl-C or SIGTERM. Either during the match ends it unstored.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable

from arena.human.app import create_app
from arena.human.seat import HumanSeat
from arena.human.session import PlaySettings, play_match

# The page is for the person at this machine: it listens on loopback only.
HOST = "127.0.0.1"


def viewer_command(db: str) -> str:
    """The command that shows the stored match later.

    >>> viewer_command("games.db")
    'arena web --db games.db'
    """
    import shlex

    return f"arena web --db {shlex.quote(db)}"


def serve(settings: PlaySettings, sock: socket.socket, say: Callable[[str], None],
          complain: Callable[[str], None]) -> int:
    """:func:`run` until it ends or Ctrl-C (or SIGTERM, which stops it the same way: the
    bots are stopped, the referee too); the exit code: 0 once the match was stored, 1
    when it could not be played, 130 when stopped before its end (nothing stored)."""
    seat = HumanSeat(address="", token="", name=settings.name, variant=settings.config.variant)
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return asyncio.run(run(settings, seat, sock, say, complain))
    except KeyboardInterrupt:
        if seat.stored is not None:
            return 0
        complain("stopped before the match ended: nothing stored")
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


async def run(settings: PlaySettings, seat: HumanSeat, sock: socket.socket, say: Callable[[str], None],
              complain: Callable[[str], None]) -> int:
    """Serve the page on ``sock`` and play in ``seat``, telling ``say`` how it goes
    (``complain`` why it failed); 0 once served to the end, 1 when the match could not
    be played. Ctrl-C ends it with KeyboardInterrupt (uvicorn passes the signal on)."""
    import uvicorn

    from arena.web.protocol import MAX_HEAD, LingeringH11Protocol

    app = create_app(seat, settings.db)
    # As arena web: a request head too long gets a clean 414 or 431, not a reset connection.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1,
                                           http=LingeringH11Protocol, h11_max_incomplete_event_size=MAX_HEAD))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    command = viewer_command(settings.db)
    match = asyncio.ensure_future(play_match(settings, seat, say, command))
    await asyncio.wait({serving, match}, return_when=asyncio.FIRST_COMPLETED)
    if not match.done():          # the server stopped by itself: stop the match too
        match.cancel()
        await asyncio.gather(match, return_exceptions=True)
        complain("the page's server stopped before the match ended: nothing stored")
        return 1
    failed = match.exception()
    if failed is not None:
        complain(f"the match could not be played: {seat.problem or failed}")
        server.should_exit = True
        await serving
        return 1
    record = match.result()
    you = settings.seat
    say(f"match {record.match_id} {record.status}: "
        + ", ".join(f"{bot} {total} (#{place})" for bot, total, place in zip(record.bots, record.totals, record.places))
        + f"; you were {record.bots[you]}, place {record.places[you]} of {len(record.places)}")
    say(f"stored in {settings.db}; the page links to its replay, and `{command}` shows it later")
    say("the page stays up until Ctrl-C")
    await serving
    return 0
