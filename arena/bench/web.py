"""The web benchmark: how fast ``arena web`` answers over many stored matches, through real HTTP.

Targets (issue 11): the leaderboard page over 100,000 stored matches in under 1 s, a
match page in under 200 ms. Run it with ``arena bench web``::

    >>> figures = bench_web(matches=40, repeat=1)
    >>> figures["matches"], figures["leaderboard_page_median_ms"] > 0
    (40, True)

The database is filled with the store benchmark's generator (:func:`arena.bench.store.
fill_leaderboard`: 1-round classic games at random 4-player tables of 12 bots), plus
:data:`FULL_MATCHES` full-length (15-round, about 540 decisions) games, one of which is
the match whose pages are timed. Then the real app (:func:`arena.web.app.create_app`)
is served by uvicorn in a thread on 127.0.0.1 (a port the system picks), and a client
in this process times each page with plain HTTP requests, a new connection each (the
connect counted: what a first visit costs), the pages in turn, ``repeat`` rounds. The
yardstick, measured in the same run through the same server, is a static file
(``/static/style.css``): each page's ratio to it says how the figure compares on a
machine twice as fast or slow. No request is discarded: the max includes the first,
cold one.
"""

from __future__ import annotations

import http.client
import os
import random
import statistics
import tempfile
import threading
import time
from typing import Any

from arena.bench.store import fill_leaderboard, played_match
from arena.store import Store
from engine import ConfigError

MATCHES = 100_000
REPEAT = 5
FULL_MATCHES = 10            # full-length games among the stored ones: the match pages show one
YARDSTICK = "/static/style.css"
YARDSTICK_PER_ROUND = 3      # yardstick requests per round, between the pages


def fill(path: str, matches: int, bots: int = 12, seed: int = 1) -> float:
    """Fill a fresh database at ``path`` with ``matches`` stored classic matches (the
    first :data:`FULL_MATCHES` or fewer full-length: ``full-0``, ...; the rest the store
    benchmark's leaderboard matches); return the seconds it took, playing included."""
    started = time.perf_counter()
    rng = random.Random(seed)
    pool = [f"bot{i:02d}" for i in range(bots)]
    strength = {name: rng.gauss(0.0, 0.7) for name in pool}
    full = min(FULL_MATCHES, matches)
    store = Store(path)
    try:
        store.save_matches([played_match(rng, f"full-{i}", rng.sample(pool, 4), strength=strength)
                            for i in range(full)])
        fill_leaderboard(store, matches - full, rng, pool, strength)
    finally:
        store.close()
    return time.perf_counter() - started


def _viewed_match(store: Store) -> str:
    """The match whose pages are timed: ``full-0`` if it is stored, else the newest classic match."""
    try:
        store.load_match("full-0")
        return "full-0"
    except Exception:
        newest = store.list_matches(variant="classic", limit=1)
        if not newest:
            raise ConfigError("--db: the database holds no classic match to show (leave --db out, or name a "
                              "file that does not exist yet, to have one filled)") from None
        return newest[0].match_id


class _Server:
    """The app served by uvicorn in a daemon thread on 127.0.0.1, a port the system picked."""

    def __init__(self, db: str) -> None:
        import uvicorn

        from arena.web.app import create_app, listening_socket

        self.app = create_app(db)
        self.sock = listening_socket("127.0.0.1", 0)     # as `arena web` listens
        self.port: int = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        self.app.state.store.close()


def _get(port: int, path: str) -> float:
    """GET ``path`` on a new connection and read the whole body; the seconds it took,
    connecting included. A non-200 answer is an error."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    elapsed = time.perf_counter() - started
    if response.status != 200:
        raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
    return elapsed


def bench_web(matches: int = MATCHES, repeat: int = REPEAT, db: str | None = None,
              seed: int = 1) -> dict[str, Any]:
    """Fill (or reuse) a database, serve it, and time the pages; return the figures as a dict.

    ``db``: a SQLite file. If it exists it is used as is (``matches`` is then ignored and
    the stored count reported; ``fill_seconds`` is 0); otherwise it is filled and kept.
    Without it a temporary file is filled and removed afterwards.

    For each page, ``<page>_median_ms`` and ``<page>_max_ms`` over ``repeat`` requests and
    ``<page>_ratio``, its median over the yardstick's (``yardstick_median_ms``).
    """
    with tempfile.TemporaryDirectory() as scratch:
        path = db or os.path.join(scratch, "bench-web.db")
        fill_seconds = 0.0
        if not os.path.exists(path):
            fill_seconds = fill(path, matches, seed=seed)
        store = Store(path)
        try:
            stored = store.match_count(variant="classic")
            match_id = _viewed_match(store)
            decisions = len(store.load_match(match_id).actions)
        finally:
            store.close()

        pages = {
            "leaderboard_page": "/leaderboard/classic",
            "leaderboard_api": "/api/leaderboard/classic",
            "match_page": f"/matches/{match_id}",
            "match_api": f"/api/matches/{match_id}",
            "crosstable_page": "/crosstable/classic",
            "index_page": "/",
            "bot_page": "/bots/bot00",
        }
        times: dict[str, list[float]] = {name: [] for name in pages}
        yardstick: list[float] = []
        with _Server(path) as server:
            _get(server.port, YARDSTICK)             # the server's first request: not timed
            for _ in range(repeat):
                for name, page in pages.items():
                    times[name].append(_get(server.port, page))
                    yardstick.append(_get(server.port, YARDSTICK))
                yardstick += [_get(server.port, YARDSTICK) for _ in range(YARDSTICK_PER_ROUND)]

    bare_ms = 1000 * statistics.median(yardstick)
    figures: dict[str, Any] = {
        "matches": stored,
        "fill_seconds": round(fill_seconds, 1),
        "repeat": repeat,
        "match_id": match_id,
        "match_decisions": decisions,
        "yardstick_median_ms": round(bare_ms, 2),
    }
    for name, seconds in times.items():
        median_ms = 1000 * statistics.median(seconds)
        figures[f"{name}_median_ms"] = round(median_ms, 1)
        figures[f"{name}_max_ms"] = round(1000 * max(seconds), 1)
        figures[f"{name}_ratio"] = round(median_ms / bare_ms, 1)
    return figures
