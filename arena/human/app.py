"""The page a person plays on, and its JSON API (``docs/play.md``).

``GET /`` is the table (``templates/play.html`` and ``static/play.js``);
``GET /api/play/state`` the seat's view (:meth:`arena.human.seat.HumanSeat.state`),
``?since=VERSION`` waiting up to 20 s for a newer one, ``?events=N`` leaving out the
first N events (a page that has them); ``POST /api/play/answer`` takes
``{"request_id": N, "option": "..."}`` or ``{"request_id": N, "prediction": {...}}``;
``POST /api/play/again`` (``{}``) starts another match once this one is stored.
Refusals are JSON ``{"error": "..."}`` with 400 (no option, bad JSON), 409 (a
request that is not open) or 415 (a body not sent as ``application/json``), never a
traceback.

Only the person's own browser may play. The server answers only requests addressed to
``127.0.0.1`` or ``localhost`` (Starlette's ``TrustedHostMiddleware``; another name is a
page elsewhere reaching it through DNS rebinding, refused with a plain-text 400), and
takes an answer only as ``application/json``: a page of another origin cannot send that
without the browser asking first (CORS), while as text/plain or a form it could play
for the person.

The arena's viewer (``arena web``'s app over the same database) is mounted behind
these routes, so the page links to the stored match at ``/matches/ID``.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from arena.human.seat import AnswerRefused, HumanSeat

templates = Jinja2Templates(directory=str(resources.files("arena.human") / "templates"))
MAX_BODY = 16 * 1024     # an answer is a few dozen bytes
MAX_VERSION_DIGITS = 18  # ?since= is a state's version, far below 10**18
HOSTS = ["127.0.0.1", "localhost"]   # the names the page is reached by (it listens on loopback)


def _seat(request: Request) -> HumanSeat:
    seat: HumanSeat = request.app.state.seat
    return seat


def _refusal(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _number(text: str | None) -> int | None:
    """A query parameter's whole number (ASCII digits, below 10**18), else None."""
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > MAX_VERSION_DIGITS:
        return None
    return int(text)


def _not_json(request: Request) -> JSONResponse | None:
    """The refusal of a POST not sent as JSON (which a page elsewhere could send unasked)."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return _refusal(415, "an answer is sent as Content-Type: application/json")
    return None


async def table_page(request: Request) -> Response:
    """The table: everything on it is drawn by play.js from the state."""
    seat = _seat(request)
    return templates.TemplateResponse(request, "play.html", {"name": seat.name, "variant": seat.variant})


async def state_json(request: Request) -> Response:
    """The seat's view; with ``?since=VERSION``, once it is newer than that (or after 20 s);
    with ``?events=N``, its events from the N-th on."""
    seat = _seat(request)
    since, events = request.query_params.get("since"), request.query_params.get("events")
    if events is not None and _number(events) is None:
        return _refusal(400, "events takes the number of events the page has")
    if since is not None:
        version = _number(since)
        if version is None:
            return _refusal(400, "since takes the version number of a state")
        await seat.changed_since(version)
    return JSONResponse(seat.state(_number(events) or 0), headers={"Cache-Control": "no-store"})


async def answer_json(request: Request) -> Response:
    """The person's answer to the open request: 200 when taken, else 400 or 409 with why."""
    seat = _seat(request)
    if (not_json := _not_json(request)) is not None:
        return not_json
    body = await request.body()
    if len(body) > MAX_BODY:
        return _refusal(400, f"an answer is a small JSON object (this one has {len(body)} bytes)")
    try:
        data: Any = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _refusal(400, 'the body must be JSON: {"request_id": N, "option": "..."}')
    if not isinstance(data, dict) or "request_id" not in data:
        return _refusal(400, 'the body must be a JSON object with "request_id" and "option" (or "prediction")')
    unknown = sorted(set(data) - {"request_id", "option", "prediction"})
    if unknown:
        return _refusal(400, f"unknown field(s) {', '.join(unknown)}: an answer has request_id and option "
                        "(or prediction)")
    try:
        seat.answer(data["request_id"], data.get("option"), data.get("prediction"))
    except AnswerRefused as refused:
        return _refusal(refused.status, refused.message)
    return JSONResponse({"accepted": True, "request_id": data["request_id"]})


async def again_json(request: Request) -> Response:
    """Another match, with a new deal and the same bots: 200 once asked for, 409 while
    this one is not over and stored."""
    if (not_json := _not_json(request)) is not None:
        return not_json
    try:
        _seat(request).ask_again()
    except AnswerRefused as refusal:
        return _refusal(refusal.status, refusal.message)
    return JSONResponse({"accepted": True})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _refusal(exc.status_code, str(exc.detail))


async def _server_error(request: Request, exc: Exception) -> Response:
    return _refusal(500, f"the play server failed: {type(exc).__name__}")


routes: list[BaseRoute] = [
    Route("/", table_page),
    Route("/api/play/state", state_json),
    Route("/api/play/answer", answer_json, methods=["POST"]),
    Route("/api/play/again", again_json, methods=["POST"]),
    Mount("/play/static", app=StaticFiles(directory=str(resources.files("arena.human") / "static")), name="play"),
]


def create_app(seat: HumanSeat, db: str | None = None) -> Starlette:
    """The page and the API over ``seat``; with ``db``, the viewer of that database behind them."""
    extra: list[BaseRoute] = []
    if db is not None:
        from arena.web.app import create_app as viewer_app

        extra.append(Mount("/", app=viewer_app(db)))
    app = Starlette(routes=[*routes, *extra],
                    middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=HOSTS)],
                    exception_handlers={HTTPException: _http_error, Exception: _server_error})
    app.state.seat = seat
    return app
