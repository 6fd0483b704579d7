"""``arena play`` running: the page's web server and the matches, on one event loop.

The web server (uvicorn on a socket bound beforehand, so that the URL is printed before
anything starts) serves the page while :func:`arena.human.session.play_match` starts the
referee and the bots and plays the match. When the match ends it is stored, the lines
saying so are printed, and the page stays up (for the result, the viewer and "play
again", which plays another match at the same table) until Ctrl-C or SIGTERM. Either
during a match ends it unstored.

The signals are the command's, not uvicorn's: they close the seat first, which answers
every page's waiting request (the long poll of ``GET /api/play/state?since=``), so the
server stops with no request left for it to cancel, and the one line of the command's
end is all that is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn

from arena.human.app import create_app
from arena.human.seat import HumanSeat
from arena.human.session import PlaySettings, next_deal, play_match

# The page is for the person at this machine: it listens on loopback only.
HOST = "127.0.0.1"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def viewer_command(db: str) -> str:
    """The command that shows the stored match later.

    >>> viewer_command("games.db")
    'arena web --db games.db'
    """
    import shlex

    return f"arena web --db {shlex.quote(db)}"


class PageServer(uvicorn.Server):
    """uvicorn without signal handlers of its own: :func:`run` has them."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def serve(settings: PlaySettings, sock: socket.socket, say: Callable[[str], None],
          complain: Callable[[str], None]) -> int:
    """:func:`run` until it ends or Ctrl-C (or SIGTERM, which stops it the same way: the
    bots are stopped, the referee too); the exit code: 0 once the last match was stored,
    1 when one could not be played, 130 when stopped during a match (it is not stored)."""
    seat = HumanSeat(address="", token="", name=settings.name, variant=settings.config.variant)
    # Until run() has its handlers (a moment at the start), a signal is a KeyboardInterrupt.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return asyncio.run(run(settings, seat, sock, say, complain))
    except KeyboardInterrupt:
        complain("stopped before the match ended: nothing stored")
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


async def run(settings: PlaySettings, seat: HumanSeat, sock: socket.socket, say: Callable[[str], None],
              complain: Callable[[str], None]) -> int:
    """Serve the page on ``sock`` and play in ``seat``, telling ``say`` how it goes
    (``complain`` why it failed) until SIGINT or SIGTERM; the exit code as :func:`serve`."""
    from arena.web.protocol import MAX_HEAD, LingeringH11Protocol

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    app = create_app(seat, settings.db)
    # As arena web: a request head too long gets a clean 414 or 431, not a reset connection.
    server = PageServer(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5,
                                       http=LingeringH11Protocol, h11_max_incomplete_event_size=MAX_HEAD))
    serving: asyncio.Future[Any] = asyncio.ensure_future(server.serve(sockets=[sock]))
    stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    try:
        return await _matches(settings, seat, serving, stopped, say, complain)
    finally:
        stopped.cancel()
        seat.close()              # every waiting page is answered now
        server.should_exit = True
        await serving
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


async def _matches(settings: PlaySettings, seat: HumanSeat, serving: asyncio.Future[Any],
                   stopped: asyncio.Future[Any], say: Callable[[str], None],
                   complain: Callable[[str], None]) -> int:
    """Play a match, then another each time the page asks, until ``stopped`` (or the
    server stops by itself); the exit code."""
    command = viewer_command(settings.db)
    while True:
        match: asyncio.Future[Any] = asyncio.ensure_future(play_match(settings, seat, say, command))
        await asyncio.wait({serving, match, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if not match.done():
            match.cancel()
            await asyncio.gather(match, return_exceptions=True)
            lost = "nothing stored" if seat.game == 1 else "it is not stored (the earlier ones are)"
            if stopped.done():
                complain(f"stopped before the match ended: {lost}")
                return 130
            complain(f"the page's server stopped before the match ended: {lost}")
            return 1
        failed = match.exception()
        if failed is not None:
            complain(f"the match could not be played: {seat.problem or failed}")
            return 1
        record = match.result()
        you = settings.seat
        say(f"match {record.match_id} {record.status}: "
            + ", ".join(f"{bot} {total} (#{place})"
                        for bot, total, place in zip(record.bots, record.totals, record.places))
            + f"; you were {record.bots[you]}, place {record.places[you]} of {len(record.places)}")
        say(f"stored in {settings.db}; the page links to its replay, and `{command}` shows it later")
        say("the page stays up until Ctrl-C; its \"play again\" deals another match")
        again: asyncio.Future[Any] = asyncio.ensure_future(seat.wait_again())
        await asyncio.wait({serving, stopped, again}, return_when=asyncio.FIRST_COMPLETED)
        if not again.done():
            again.cancel()
            return 0
        settings = next_deal(settings)
        seat.new_match()
        say(f"another match: you in seat {settings.seat}")
