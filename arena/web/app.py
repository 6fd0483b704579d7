"""The Starlette app of ``arena web``: routes, the store, and how failures look.

Read-only: the endpoints only read the store (``request.app.state.store``). Each resource
has one data function (``api``'s, fed by the request) that serves both its page (a
template of ``pages.templates``) and its JSON under ``/api/``. An unknown variant,
tournament or match is a 404 page (JSON under ``/api/``); a private match a 403; a
locked or busy database a 503 page; never a traceback. The endpoints are plain
functions: Starlette runs them in its thread pool, so a slow query does not stall the
other requests. Served by ``arena web``, the app answers only requests addressed to the
hosts it is served as, with a target of a sane length (``arena.web.guard``: 400 and 414,
in the same shapes).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from arena.results import elo_history
from arena.store import Store, StoreError, StoreUnavailable
from arena.web import api, disclosure, live, viewer
from arena.web.bots import Boards
from arena.web.guard import AllowedHosts, RequestGuard
from arena.web.pages import templates, url

log = logging.getLogger(__name__)


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host:port`` (0: a port the system picks), for uvicorn's
    ``sockets=``. ``OSError`` when it cannot listen (a taken port...).

    The protocol is named (``IPPROTO_TCP``, not the default 0) because asyncio sets
    TCP_NODELAY on accepted connections only when their protocol says TCP; without it
    every answer on a kept-alive connection waited ~40 ms (Nagle's algorithm holding the
    body until the client's delayed ACK of the headers).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def create_app(db: str, referees: Sequence[str] = (), hosts: AllowedHosts | None = None) -> Starlette:
    """The web app over the arena database at ``db`` (a path or a database URL);
    ``referees`` (HOST:PORT) are asked for live matches besides the database's running
    tournaments (``arena.web.live``). The bot pages keep each variant's board rows
    (``arena.web.bots.Boards``) until a match of that variant is stored.

    ``hosts``: the hosts it answers (``arena.web.guard``); ``arena web`` always gives
    them. None answers any ``Host``: for the app inside another that checks it (``arena
    play`` mounts this one) and for tests that call it in-process."""
    middleware = [] if hosts is None else [Middleware(RequestGuard, hosts=hosts, refuse=error)]
    app = Starlette(routes=routes, exception_handlers=exception_handlers, middleware=middleware)
    app.state.store = Store(db)
    app.state.boards = Boards()
    app.state.db = db
    app.state.referees = tuple(referees)
    return app


# -- the request's store and parameters ---------------------------------------------------


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _db(request: Request) -> str:
    """The database as ``arena web --db`` was given it (run locks are looked for beside it)."""
    db: str = request.app.state.db
    return db


def _tournament_param(request: Request) -> str | None:
    return request.query_params.get("tournament") or None


def _page(request: Request, template: str, **context: Any) -> Response:
    return templates.TemplateResponse(request, template, context)


# -- the data: one function per resource, for its page and its JSON ----------------------


def _referees(request: Request) -> list[str]:
    """The referees to ask for live matches: ``--referee``'s and the running tournaments'."""
    return live.referees(_store(request), _db(request), request.app.state.referees)


def live_now(request: Request, tournament_id: str | None = None) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """(referees asked, their running matches (of ``tournament_id`` only, if given), problems)."""
    asked = _referees(request)
    found, problems = live.running_matches(asked)
    return asked, [m.to_json() for m in found if tournament_id in (None, m.tournament_id)], problems


def leaderboard_data(request: Request) -> dict[str, Any]:
    return api.leaderboard(_store(request), request.path_params["variant"], _tournament_param(request))


def elo_data(request: Request) -> dict[str, Any]:
    return api.elo(_store(request), request.path_params["variant"], _tournament_param(request))


def crosstable_data(request: Request) -> dict[str, Any]:
    """``arena.results.crosstable`` of the variant (and tournament) asked for."""
    return api.crosstable(_store(request), request.path_params["variant"], _tournament_param(request))


def tournament_data(request: Request, with_matches: bool = True) -> dict[str, Any]:
    """``api.tournament``, with the matches of it being played now while it runs."""
    data = api.tournament(_store(request), _db(request), request.path_params["tournament_id"], with_matches)
    data["live"] = live_now(request, data["id"])[1] if data["status"] == "running" else []
    return data


def tournaments_data(request: Request) -> list[dict[str, Any]]:
    return api.tournaments(_store(request), _db(request))


def bot_data(request: Request) -> dict[str, Any]:
    return api.bot(_store(request), request.path_params["name"], request.app.state.boards)


def match_data(request: Request) -> dict[str, Any]:
    return api.match(_store(request), request.path_params["match_id"])


def live_data(request: Request) -> dict[str, Any]:
    """Every referee asked, the matches they are playing now, and why some could not be asked."""
    asked, playing, problems = live_now(request)
    return {"referees": asked, "matches": playing, "problems": problems}


def running(request: Request) -> live.LiveMatch:
    """The running match ``match_id``; NotFound when no referee known plays it, Withheld
    when it is private (its cards are hands of games still to come)."""
    match_id = request.path_params["match_id"]
    for found in live.running_matches(_referees(request))[0]:
        if found.match_id == match_id:
            if found.private:
                raise api.Withheld(disclosure.withheld_message(match_id, None))
            return found
    raise api.NotFound(f"no referee known to this server is playing a match {match_id!r} now")


# -- pages ---------------------------------------------------------------------------------


def index(request: Request) -> Response:
    asked, playing, _ = live_now(request)
    return _page(request, "index.html", variants=_store(request).variants(), tournaments=tournaments_data(request),
                 matches=api.matches(_store(request), limit=50), live_now=playing if asked else None)


def leaderboard_page(request: Request) -> Response:
    """The board, and under it each bot's online Elo over its games (in the board's order):
    both from one snapshot of the store."""
    snapshot = api.board_snapshot(_store(request), request.path_params["variant"], _tournament_param(request),
                                  elo_history.LIMIT)
    board = api.board_json(snapshot)
    elo = api.elo_json(snapshot, order=[row["bot"] for row in board["rows"]])
    return _page(request, "leaderboard.html", board=board, tournament_id=_tournament_param(request), elo=elo)


def crosstable_page(request: Request) -> Response:
    return _page(request, "crosstable.html", crosstable=crosstable_data(request))


def tournament_page(request: Request) -> Response:
    return _page(request, "tournament.html", tournament=tournament_data(request))


def bot_page(request: Request) -> Response:
    return _page(request, "bot.html", bot=bot_data(request))


def match_page(request: Request) -> Response:
    """The match viewer; without JavaScript, the match's rounds in rows (viewer.played_rounds)."""
    data = match_data(request)
    return _page(request, "match.html", match_id=request.path_params["match_id"], record=data["record"],
                 played=viewer.played_rounds(data), live_events=None, standalone=None)


def live_page(request: Request) -> Response:
    """``/live``: the running matches of every referee known (the page reloads every 5 s)."""
    return _page(request, "live.html", listing=live_data(request))


def live_match_page(request: Request) -> Response:
    """The live viewer of a running match; one that is over redirects to its replay."""
    match_id = request.path_params["match_id"]
    try:
        found = running(request)
    except api.NotFound:
        try:
            _store(request).load_match(match_id)
        except StoreError:
            raise api.NotFound(f"no referee known to this server is playing a match {match_id!r} now, "
                               "and none is stored under that id") from None
        return RedirectResponse(url=url("matches", match_id), status_code=303)  # over: its replay
    record = {"bots": found.bots, "variant": found.variant, "config": found.options,
              "tournament_id": found.tournament_id}
    return _page(request, "match.html", match_id=match_id, record=record,
                 live_events=url("api", "live", match_id, "events"), standalone=None)


# -- JSON ----------------------------------------------------------------------------------


def leaderboard_json(request: Request) -> Response:
    return JSONResponse(leaderboard_data(request))


def elo_json(request: Request) -> Response:
    return JSONResponse(elo_data(request))


def crosstable_json(request: Request) -> Response:
    return JSONResponse(crosstable_data(request))


def tournament_json(request: Request) -> Response:
    return JSONResponse(tournament_data(request, with_matches=request.query_params.get("matches") != "0"))


def tournaments_json(request: Request) -> Response:
    return JSONResponse(tournaments_data(request))


def bot_json(request: Request) -> Response:
    return JSONResponse(bot_data(request))


def match_json(request: Request) -> Response:
    return JSONResponse(match_data(request))


def live_json(request: Request) -> Response:
    return JSONResponse(live_data(request))


async def live_events(request: Request) -> Response:
    """The running match's public events as Server-Sent Events (see ``arena.web.live``)."""
    found = await run_in_threadpool(running, request)
    # no-cache and no buffering: each event must reach the page as it is sent.
    return StreamingResponse(live.stream(found, url("matches", found.match_id)), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


routes: list[BaseRoute] = [
    Route("/", index),
    Route("/leaderboard/{variant}", leaderboard_page),
    Route("/tournaments/{tournament_id}", tournament_page),
    Route("/matches/{match_id}", match_page),
    Route("/bots/{name}", bot_page),
    Route("/api/bots/{name}", bot_json),
    Route("/api/tournaments/{tournament_id}", tournament_json),
    Route("/api/leaderboard/{variant}", leaderboard_json),
    Route("/api/elo/{variant}", elo_json),
    Route("/api/tournaments", tournaments_json),
    Route("/api/matches/{match_id}", match_json),
    Route("/crosstable/{variant}", crosstable_page),
    Route("/api/crosstable/{variant}", crosstable_json),
    Route("/live", live_page),
    Route("/api/live", live_json),
    Route("/live/{match_id}", live_match_page),
    Route("/api/live/{match_id}/events", live_events),
    Mount("/static", app=StaticFiles(directory=str(resources.files("arena.web") / "static")), name="static"),
]


# -- failures ------------------------------------------------------------------------------


def error(request: Request, status: int, message: str) -> Response:
    """A failure as the path asks for it: ``{"error": message}`` under ``/api/``, else the error page."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return templates.TemplateResponse(request, "error.html", {"status": status, "message": message},
                                      status_code=status)


async def not_found(request: Request, exc: Exception) -> Response:
    """A route that does not exist, an unknown variant, tournament, match or bot: 404."""
    return error(request, 404, str(exc) if isinstance(exc, api.NotFound) else f"nothing at {request.url.path}")


async def method_not_allowed(request: Request, exc: Exception) -> Response:
    """A POST, PUT... on a read-only path: 405, with the methods it takes (``Allow``)."""
    given = (getattr(exc, "headers", None) or {}).get("Allow", "GET, HEAD")
    allowed = ", ".join(sorted(given.split(", ")))     # Starlette's order is a set's
    answer = error(request, 405, f"{request.method} is not allowed on {request.url.path}: this server only "
                   f"reads ({allowed})")
    answer.headers["Allow"] = allowed
    return answer


async def withheld(request: Request, exc: Exception) -> Response:
    """A private match whose cards may not be shown yet: 403."""
    return error(request, 403, str(exc))


async def database_unreadable(request: Request, exc: Exception) -> Response:
    """A busy, locked or unreadable database: 503. The page says which of busy or
    unreadable, not the driver's words (a PostgreSQL server's host and port, a file's
    path); those go to the server's log."""
    log.warning("%s %s: the database could not be read: %s", request.method, request.url.path, exc)
    busy = any(word in str(exc).lower() for word in ("locked", "busy"))
    return error(request, 503, "the database is busy (locked by a writer); try again in a moment" if busy
                 else "the database could not be reached or read just now; the server's log says why")


async def server_error(request: Request, exc: Exception) -> Response:
    return error(request, 500, "the server failed on this request; the log says why")


exception_handlers: dict[Any, Any] = {
    404: not_found,
    405: method_not_allowed,
    api.NotFound: not_found,
    api.Withheld: withheld,
    StoreUnavailable: database_unreadable,
    StoreError: database_unreadable,
    500: server_error,
}
