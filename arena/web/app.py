"""The Starlette app of ``arena web``: routes, the store, and how failures look.

Read-only: the handlers only read the store. An unknown variant, tournament or match is
a 404 page (JSON under ``/api/``); a locked or busy database a 503 page; never a
traceback. Handlers are plain functions: Starlette runs them in its thread pool, so a
slow query does not stall the other requests.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from sqlalchemy.exc import OperationalError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.results import Store
from arena.store import StoreError
from arena.web import api, disclosure, live, pages

Handler = Callable[[Request], Response]


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _error(request: Request, status: int, message: str) -> Response:
    if _is_api(request):
        return JSONResponse({"error": message}, status_code=status)
    return HTMLResponse(pages.error_page(status, message), status_code=status)


def guarded(handler: Handler) -> Handler:
    """``handler`` with the arena's failures turned into pages: NotFound a 404, Withheld
    a 403, a busy,
    locked or unreadable database a 503 (the message says which)."""
    def run(request: Request) -> Response:
        try:
            return handler(request)
        except api.NotFound as error:
            return _error(request, 404, str(error))
        except api.Withheld as error:
            return _error(request, 403, str(error))
        except (OperationalError, StoreError) as error:
            first = (str(getattr(error, "orig", None) or error).strip().splitlines() or ["database error"])[0]
            return _error(request, 503, f"the database could not be read: {first}")
    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


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


def create_app(db: str, referees: Sequence[str] = ()) -> Starlette:
    """The web app over the arena database at ``db`` (a path or a database URL);
    ``referees`` (HOST:PORT) are asked for live matches besides the database's running
    tournaments (``arena.web.live``)."""
    store = Store(db)

    def tournament_param(request: Request) -> str | None:
        return request.query_params.get("tournament") or None

    def live_now(tournament_id: str | None = None) -> tuple[list[str], list[dict[str, Any]], list[str]]:
        """(referees asked, their running matches (of ``tournament_id`` only, if given), problems)."""
        asked = live.referees(store, db, referees)
        found, problems = live.running_matches(asked)
        return asked, [m.to_json() for m in found if tournament_id in (None, m.tournament_id)], problems

    def index(request: Request) -> Response:
        asked, playing, _ = live_now()
        return HTMLResponse(pages.index(store.variants(), api.tournaments(store, db), api.matches(store, limit=50),
                                        playing if asked else None))

    def leaderboard_page(request: Request) -> Response:
        """The board, and under it each bot's online Elo over its games (in the board's order)."""
        variant, tournament = request.path_params["variant"], tournament_param(request)
        board = api.leaderboard(store, variant, tournament)
        elo = api.elo(store, variant, tournament, order=[row["bot"] for row in board["rows"]])
        return HTMLResponse(pages.leaderboard(board, tournament, elo))

    def leaderboard_api(request: Request) -> Response:
        return JSONResponse(api.leaderboard(store, request.path_params["variant"], tournament_param(request)))

    def tournament_data(request: Request, with_matches: bool = True) -> dict[str, Any]:
        data = api.tournament(store, db, request.path_params["tournament_id"], with_matches)
        data["live"] = live_now(data["id"])[1] if data["status"] == "running" else []
        return data

    def tournament_page(request: Request) -> Response:
        return HTMLResponse(pages.tournament(tournament_data(request)))

    def tournament_api(request: Request) -> Response:
        return JSONResponse(tournament_data(request, with_matches=request.query_params.get("matches") != "0"))

    def bot_page(request: Request) -> Response:
        return HTMLResponse(pages.bot(api.bot(store, request.path_params["name"])))

    def bot_api(request: Request) -> Response:
        return JSONResponse(api.bot(store, request.path_params["name"]))

    def tournaments_api(request: Request) -> Response:
        return JSONResponse(api.tournaments(store, db))

    def match_page(request: Request) -> Response:
        match_id = request.path_params["match_id"]
        data = api.match(store, match_id)
        return HTMLResponse(pages.match(match_id, data["record"]))

    def match_api(request: Request) -> Response:
        return JSONResponse(api.match(store, request.path_params["match_id"]))

    routes: list[Any] = [
        Route("/", guarded(index)),
        Route("/leaderboard/{variant}", guarded(leaderboard_page)),
        Route("/tournaments/{tournament_id}", guarded(tournament_page)),
        Route("/matches/{match_id}", guarded(match_page)),
        Route("/bots/{name}", guarded(bot_page)),
        Route("/api/bots/{name}", guarded(bot_api)),
        Route("/api/tournaments/{tournament_id}", guarded(tournament_api)),
        Route("/api/leaderboard/{variant}", guarded(leaderboard_api)),
        Route("/api/elo/{variant}",
              guarded(lambda request: JSONResponse(api.elo(store, request.path_params["variant"],
                                                           tournament_param(request))))),
        Route("/api/tournaments", guarded(tournaments_api)),
        Route("/api/matches/{match_id}", guarded(match_api)),
        *_crosstable_routes(store, tournament_param),
        *_live_routes(store, live_now),
        Mount("/static", app=StaticFiles(directory=str(resources.files("arena.web") / "static")), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(request, 404, f"nothing at {request.url.path}")

    async def server_error(request: Request, exc: Exception) -> Response:
        return _error(request, 500, "the server failed on this request; the log says why")

    app = Starlette(routes=routes, exception_handlers={404: not_found, 500: server_error})
    app.state.store = store
    return app


def _crosstable_routes(store: Store, tournament_param: Callable[[Request], str | None]) -> list[Route]:
    """``/crosstable/{variant}`` and its JSON, over ``arena.results.crosstable``."""
    def data(request: Request) -> dict[str, Any]:
        from arena.results import crosstable

        variant = request.path_params["variant"]
        tournament = tournament_param(request)
        api.check_variant(variant)
        api.check_tournament(store, variant, tournament)
        return crosstable.to_json(crosstable.crosstable(store, variant, tournament))

    def page(request: Request) -> Response:
        return HTMLResponse(pages.crosstable(data(request)))

    def as_json(request: Request) -> Response:
        return JSONResponse(data(request))

    return [Route("/crosstable/{variant}", guarded(page)), Route("/api/crosstable/{variant}", guarded(as_json))]


LiveNow = Callable[..., tuple[list[str], list[dict[str, Any]], list[str]]]


def _live_routes(store: Store, live_now: LiveNow) -> list[Route]:
    """``/live`` (running matches), ``/live/{match_id}`` (the live viewer) and their API:
    ``/api/live`` and the event stream ``/api/live/{match_id}/events`` (see ``arena.web.live``)."""
    def listing() -> dict[str, Any]:
        asked, playing, problems = live_now()
        return {"referees": asked, "matches": playing, "problems": problems}

    def running(match_id: str) -> live.LiveMatch:
        """The running match ``match_id``; NotFound when no referee known plays it, Withheld
        when it is private (its cards are hands of games still to come)."""
        for found in live.running_matches(live_now()[0])[0]:
            if found.match_id == match_id:
                if found.private:
                    raise api.Withheld(disclosure.withheld_message(match_id, None))
                return found
        raise api.NotFound(f"no referee known to this server is playing a match {match_id!r} now")

    def page(request: Request) -> Response:
        match_id = request.path_params["match_id"]
        try:
            found = running(match_id)
        except api.NotFound:
            try:
                store.load_match(match_id)
            except StoreError:
                raise api.NotFound(f"no referee known to this server is playing a match {match_id!r} now, "
                                   "and none is stored under that id") from None
            return RedirectResponse(url=pages.url("matches", match_id), status_code=303)  # over: its replay
        record = {"bots": found.bots, "variant": found.variant, "config": found.options,
                  "tournament_id": found.tournament_id}
        return HTMLResponse(pages.match(match_id, record, live=pages.url("api", "live", match_id, "events")))

    async def events(request: Request) -> Response:
        match_id = request.path_params["match_id"]
        try:
            found = await run_in_threadpool(running, match_id)
        except api.NotFound as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        except api.Withheld as error:
            return JSONResponse({"error": str(error)}, status_code=403)
        # no-cache and no buffering: each event must reach the page as it is sent.
        return StreamingResponse(live.stream(found, pages.url("matches", match_id)), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return [Route("/live", guarded(lambda request: HTMLResponse(pages.live(listing())))),
            Route("/api/live", guarded(lambda request: JSONResponse(listing()))),
            Route("/live/{match_id}", guarded(page)),
            Route("/api/live/{match_id}/events", events)]

