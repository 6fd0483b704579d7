"""Secrets that spectators never see: no page, no ``/api/`` answer, no file of
``arena leaderboard --export`` and no public gRPC call shows the master seed, a deal seed
or a bot seed of a tournament that has not finished (``arena.web.disclosure``).

The check is an attacker's. Every route of the real Starlette app is enumerated from the
app itself (a route added later is fetched too, or the test says which parameter it
lacks), every link the answers hold is followed, and every answer, header and exported
file is searched for each secret, in decimal and in hex. The secrets are the ones the
tournament really has: its master seed, and every deal seed and bot seed of its whole
schedule (games not played yet included), as ``arena.tournament.schedule`` derives them.
The organiser's variables passed to the bots (``bot_env``) and the bots' commands are
looked for as well. Once the tournament has finished, its master seed and its deal seeds
must be shown where ``docs/web.md`` says.
"""

from __future__ import annotations

import html
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from itertools import product
from pathlib import Path
from typing import Any

import grpc
import pytest
from factories.live import slow_tournament
from factories.records import played
from factories.web_server import Fetch, http_fetch, wait_for
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from arena.store import Store
from arena.tournament.lineup import BotEntry
from arena.tournament.lock import hold_lock, log_dir_for
from arena.tournament.schedule import derive_seed, new_master_seed
from arena.tournament.settings import TournamentSettings, schedule_of
from arena.web import disclosure
from arena.web.app import create_app
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc
from engine import VARIANTS, GameConfig

PY = sys.executable
BOTS = ["ann", "bob", "cy"]
BOT_ENV_VALUE = "sk-organisers-own-key-5f2c"
BOT_COMMAND_ARG = "--organisers-private-flag"

@dataclass
class Secrets:
    """What must not be shown, by what it is (for the failure message)."""

    numbers: dict[int, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    def add_tournament(self, tournament_id: str, master: int, settings: TournamentSettings) -> None:
        """The master seed and every deal and bot seed of the whole schedule."""
        self.numbers[master] = f"master seed of {tournament_id}"
        self.numbers[derive_seed(master, "tables")] = f"table draw seed of {tournament_id}"
        for game in schedule_of(settings):
            self.numbers[game.seed] = f"deal seed of {tournament_id} game {game.index}"
            for seat, seed in enumerate(game.bot_seeds):
                self.numbers[seed] = f"bot seed of {tournament_id} game {game.index} seat {seat}"

    def found(self, text: str) -> list[str]:
        """Each secret ``text`` holds: a number in decimal or in hex (any case), a text as is."""
        lower = text.lower()
        return ([f"{what} ({value})" for value, what in self.numbers.items()
                 if str(value) in text or f"{value:x}" in lower]
                + [f"{what} ({value!r})" for value, what in self.texts.items() if value in text])


@dataclass
class Arena:
    """A database with a tournament under test ("a", its stored status set by each test),
    a finished tournament ("b"), and a match of no tournament."""

    db: Path
    a: str
    b: str
    a_master: int
    b_master: int
    secrets: Secrets              # tournament a's
    deal_seeds: dict[str, int]    # every stored match's deal seed, by match id
    alone: str                    # the match of no tournament


def settings_of(master: int, games: int) -> TournamentSettings:
    """A duplicate classic tournament of BOTS, with a variable for the bots and private commands."""
    return TournamentSettings(
        game=GameConfig(variant="classic", players=3), games=games, seed=master, deals="duplicate",
        bots=[BotEntry(name, [PY, "bot.py", BOT_COMMAND_ARG]) for name in BOTS],
        bot_env={"ORGANISER_KEY": BOT_ENV_VALUE})


def store_tournament(store: Store, master: int, stored: int, status: str) -> tuple[str, TournamentSettings,
                                                                                   dict[str, int]]:
    """A tournament of 6 scheduled games (two deals, three rotations each) with its
    schedule stored (the bot seeds with it) and its first ``stored`` games played."""
    settings = settings_of(master, 6)
    tournament = store.create_tournament(settings.to_dict(), master, status=status)
    schedule = schedule_of(settings)
    store.put_schedule(tournament, schedule)
    seeds = {}
    for game in schedule[:stored]:
        record = played(f"{tournament}-{game.index:05d}", "classic", list(game.bots), game.seed)
        record.tournament_id, record.game_index, record.private = tournament, game.index, True   # duplicate
        store.save_match(record)
        seeds[record.match_id] = game.seed
    return tournament, settings, seeds


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    db = tmp_path / "arena.db"
    a_master, b_master = new_master_seed(), new_master_seed()
    with Store(str(db)) as store:
        # Deal 0 played in all its rotations, deal 1 in its first only: deal 1's seed
        # (shared by the rotations still to come) is what an attacker wants most.
        a, a_settings, a_seeds = store_tournament(store, a_master, 4, "running")
        b, _, b_seeds = store_tournament(store, b_master, 3, "finished")
        alone_seed = new_master_seed()
        store.save_match(played("alone-0", "classic", BOTS, alone_seed))
    secrets = Secrets(texts={BOT_ENV_VALUE: "a variable passed to the bots", BOT_COMMAND_ARG: "a bot's command"})
    secrets.add_tournament(a, a_master, a_settings)
    return Arena(db, a, b, a_master, b_master, secrets, {**a_seeds, **b_seeds, "alone-0": alone_seed}, "alone-0")


# -- the crawler ---------------------------------------------------------------------------


LINK = re.compile(r'(?:href|src|data-api|data-live)="([^"]*)"')


def route_urls(app: Starlette, values: dict[str, list[str]], queries: list[str]) -> list[str]:
    """Every route of ``app`` with each combination of ``values`` for its path parameters
    (routes without parameters also with each of ``queries``), and every static file."""
    urls: list[str] = []
    for route in app.routes:
        if isinstance(route, Mount):
            folder = resources.files("arena.web") / "static"
            urls += [f"{route.path}/{item.name}" for item in folder.iterdir() if item.is_file()]
            continue
        assert isinstance(route, Route), f"a route of a kind this test does not know: {route!r}"
        names = list(route.param_convertors)
        missing = [name for name in names if name not in values]
        assert not missing, f"route {route.path} has parameters this test gives no values for: {missing}"
        for combination in product(*(values[name] for name in names)):
            path = route.path
            for name, value in zip(names, combination, strict=True):
                path = path.replace("{" + name + "}", urllib.parse.quote(value, safe=""))
            urls.append(path)
            if not names or names == ["variant"] or names == ["tournament_id"]:
                urls += [path + query for query in queries]
    return urls


def links(text: str) -> list[str]:
    """The server paths an answer links to: HTML attributes and JSON strings starting with /."""
    found = [html.unescape(link) for link in LINK.findall(text)]
    found += re.findall(r'"(/(?:matches|live|api|tournaments|bots|leaderboard|crosstable)/[^"\s]*)"', text)
    return [link.split("#", 1)[0] for link in found if link.startswith("/") and not link.startswith("//")]


def crawl(fetch: Fetch, start: list[str], limit: int = 3000) -> dict[str, tuple[int, str]]:
    """Fetch ``start`` and every link found, once each: (status, body and headers) by path."""
    seen: dict[str, tuple[int, str]] = {}
    queue = list(dict.fromkeys(start))
    while queue:
        path = queue.pop(0)
        if path in seen or not path:
            continue
        assert len(seen) < limit, "the crawl does not end: a page links to ever new paths"
        status, body, location = fetch(path)
        seen[path] = (status, body + (f"\nLocation: {location}" if location else ""))
        assert status < 500, f"{path}: {status}\n{body[:500]}"
        queue += [link for link in links(body) + ([location] if location.startswith("/") else []) if link not in seen]
    return seen


def client_fetch(app: Starlette) -> Fetch:
    client = TestClient(app, follow_redirects=False)

    def fetch(path: str) -> tuple[int, str, str]:
        answer = client.get(path)
        return answer.status_code, answer.text, answer.headers.get("location", "")

    return fetch


ERRORS = ["/no/such/page", "/api/no/such", "/matches/m-nope", "/api/matches/m-nope", "/tournaments/t-nope",
          "/api/tournaments/t-nope", "/leaderboard/chess", "/leaderboard/classic?tournament=t-nope",
          "/bots/nobody", "/live/m-nope", "/api/live/m-nope/events"]


def crawl_app(db: Path, fetch: Fetch | None = None, running: Sequence[str] = ()) -> dict[str, tuple[int, str]]:
    """Every route of ``arena web`` over ``db`` (through ``fetch``: by default the app in
    this process), with every tournament, stored match (and ``running`` one) and bot of
    the database, every link found, and the error pages."""
    app = create_app(str(db))
    with Store(str(db)) as store:
        tournaments = [t.id for t in store.list_tournaments()]
        matches = [m.match_id for m in store.list_matches(limit=10_000)]
        bots = sorted({bot for m in store.list_matches(limit=10_000) for bot in m.bots})
    values = {"variant": list(VARIANTS), "tournament_id": tournaments, "match_id": matches + list(running),
              "name": bots}
    queries = [f"?tournament={t}" for t in tournaments] + ["?matches=0"]
    return crawl(fetch or client_fetch(app), route_urls(app, values, queries) + ERRORS)


def assert_hidden(seen: dict[str, tuple[int, str]], secrets: Secrets) -> None:
    leaks = {path: found for path, (_, text) in seen.items() if (found := secrets.found(text))}
    assert not leaks, f"secrets shown: {leaks}"


def exported(db: Path, out: Path, *options: str) -> dict[str, tuple[int, str]]:
    """Every file `arena leaderboard --export OUT --replays all` writes, by path."""
    done = subprocess.run([PY, "-m", "arena.cli", "leaderboard", "--db", str(db), "--export", str(out),
                           "--replays", "all", *options], cwd=db.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    files = {str(path.relative_to(out)): (0, path.read_text(encoding="utf-8"))
             for path in sorted(out.rglob("*")) if path.is_file()}
    # Some replay was written, or left out as private (its deal still being played).
    assert any(name.startswith("matches/") for name in files) or "left out the replays" in done.stderr, sorted(files)
    return {**files, "(its output)": (0, done.stdout + done.stderr)}


def public_calls(address: str, match_ids: list[str],
                 variants: tuple[str, ...] = VARIANTS) -> dict[str, tuple[int, str]]:
    """What a referee's public calls answer: ListMatches, GetLeaderboard, and Spectate of each match."""
    answers: dict[str, tuple[int, str]] = {}
    with grpc.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        for variant in ("", *variants):
            answers[f"ListMatches {variant!r}"] = (0, str(stub.ListMatches(
                pb.ListMatchesRequest(variant=variant, limit=500), timeout=30)))
        for variant in variants:
            try:
                rows = str(stub.GetLeaderboard(pb.LeaderboardRequest(variant=variant), timeout=30))
            except grpc.RpcError as error:      # a referee without a database
                rows = str(error)
            answers[f"GetLeaderboard {variant}"] = (0, rows)
        for match_id in match_ids:
            try:
                updates = list(stub.Spectate(pb.SpectateRequest(match_id=match_id), timeout=120))
            except grpc.RpcError as error:     # a private match (tests/security/test_private_deals.py)
                assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
                answers[f"Spectate {match_id}"] = (0, str(error.details()))
                continue
            assert updates, match_id
            answers[f"Spectate {match_id}"] = (0, "\n".join(str(u) for u in updates))
    return answers


# -- a tournament that has not finished -------------------------------------------------------


@pytest.mark.parametrize("status", ["running", "interrupted", "running, its run gone", "remote"])
def test_no_secret_of_an_unfinished_tournament_is_shown(arena: Arena, status: str, tmp_path: Path,
                                                        arena_server: Any) -> None:
    stored = {"running, its run gone": "running"}.get(status, status)
    with Store(str(arena.db)) as store:
        store.set_tournament_status(arena.a, stored)
    log_dir = log_dir_for(str(arena.db), arena.a)
    lock = hold_lock(log_dir, arena.a) if status == "running" else None
    if status == "running, its run gone":      # a lock file nobody holds: its process died
        log_dir.mkdir(parents=True)
        (log_dir / ".lock").write_text("")
    try:
        seen = crawl_app(arena.db)
        shown = TestClient(create_app(str(arena.db))).get(f"/api/tournaments/{arena.a}").json()["status"]
        assert shown == {"running, its run gone": "interrupted"}.get(status, status)
    finally:
        if lock is not None:
            lock.close()
    # Every page and answer was read: each match viewer, the tournament page, the bots.
    matches = [path for path in seen if path.startswith(f"/api/matches/{arena.a}-")]
    assert len(matches) == 4 and f"/tournaments/{arena.a}" in seen and "/bots/ann" in seen
    assert_hidden(seen, arena.secrets)
    assert_hidden(exported(arena.db, tmp_path / "all"), arena.secrets)
    assert_hidden(exported(arena.db, tmp_path / "one", "--tournament", arena.a), arena.secrets)
    with Store(str(arena.db)) as store:
        server = arena_server(store=store)
        assert_hidden(public_calls(server.address, sorted(arena.deal_seeds)), arena.secrets)
    # The same crawl finds what is meant to be shown: the finished tournament's seeds, the lone match's.
    b_page = seen[f"/tournaments/{arena.b}"][1]
    assert f"<dt>Master seed</dt><dd>{arena.b_master}</dd>" in b_page
    alone = json.loads(seen[f"/api/matches/{arena.alone}"][1])["record"]
    assert alone["seed"] == alone["config"]["seed"] == arena.deal_seeds[arena.alone]


def test_the_settings_say_the_seed_is_hidden_and_keep_the_organisers_things(arena: Arena) -> None:
    client = TestClient(create_app(str(arena.db)))
    data = client.get(f"/api/tournaments/{arena.a}").json()
    assert data["master_seed"] is None and data["settings"]["seed"] is None
    assert data["settings"]["bot_env"] == ["ORGANISER_KEY"] and "bots" not in data["settings"]
    assert data["bots"] == BOTS and data["settings"]["deals"] == "duplicate"
    page = client.get(f"/tournaments/{arena.a}").text
    assert "<dt>Master seed</dt><dd>hidden until the tournament finishes</dd>" in page
    assert "<dt>Variables passed to the bots</dt><dd>ORGANISER_KEY</dd>" in page
    listed = {t["id"]: t for t in client.get("/api/tournaments").json()}
    assert listed[arena.a]["master_seed"] is None and listed[arena.a]["settings"] == data["settings"]
    record = client.get(f"/api/matches/{arena.a}-00000").json()["record"]
    assert record["seed"] is None and "seed" not in record["config"]
    # The viewer still replays it: the steps are made from the stored record.
    assert client.get(f"/api/matches/{arena.a}-00000").json()["steps"][-1]["totals"] == record["totals"]
    # Game 3 is deal 1's first rotation, its others still to come: withheld (tests/security/test_private_deals.py).
    assert client.get(f"/api/matches/{arena.a}-00003").status_code == 403


def test_no_page_names_the_database_s_password_host_or_folder(tmp_path: Path, postgres_url: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An interrupted tournament's resume command names the database without its
    credentials or host (a PostgreSQL URL) or its folders (a SQLite path)."""
    from factories.databases import wipe_postgres

    wipe_postgres(postgres_url)
    monkeypatch.chdir(tmp_path)                  # a URL's run lock lives in the working folder
    password_url = postgres_url.replace("://arena@", "://arena:s3cret-pw@")
    sqlite_path = str(tmp_path / "organiser" / "runs.db")
    (tmp_path / "organiser").mkdir()
    try:
        for db, shown in ((password_url, "'postgresql://…/arena_test'"), (sqlite_path, "runs.db")):
            with Store(db) as store:
                tournament = store.create_tournament({"game": {"variant": "classic"}, "games": 4}, master_seed=5)
            log_dir_for(db, tournament).mkdir(parents=True)
            (log_dir_for(db, tournament) / ".lock").write_text("")        # its run is gone
            client = TestClient(create_app(db))
            data = client.get(f"/api/tournaments/{tournament}").json()
            assert data["status"] == "interrupted"
            assert data["resume_command"] == f"arena tournament --resume {tournament} --db {shown}"
            for path in ("/", "/tournaments", f"/tournaments/{tournament}", "/api/tournaments",
                         f"/api/tournaments/{tournament}"):
                text = client.get(path).text
                for secret in ("s3cret-pw", "arena:", "127.0.0.1", str(tmp_path)):
                    assert secret not in text, (db, path, secret)
    finally:
        wipe_postgres(postgres_url)


def test_a_failing_request_does_not_echo_what_failed(arena: Arena) -> None:
    app = create_app(str(arena.db))

    def failing(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"master seed {arena.a_master} at hand")

    app.state.store.load_match = failing
    client = TestClient(app, raise_server_exceptions=False)
    for path in (f"/matches/{arena.a}-00000", f"/api/matches/{arena.a}-00000"):
        answer = client.get(path)
        assert answer.status_code == 500 and not arena.secrets.found(answer.text), answer.text
        assert "Traceback" not in answer.text


def test_every_setting_is_decided_public_or_private() -> None:
    """A setting added to TournamentSettings is shown by no page until it is named public."""
    from dataclasses import fields

    names = {f.name for f in fields(TournamentSettings)}
    undecided = names - disclosure.PUBLIC_SETTINGS - disclosure.PRIVATE_SETTINGS
    assert not undecided, f"decide in arena.web.disclosure whether spectators may see: {sorted(undecided)}"


# -- after it has finished -------------------------------------------------------------------


def test_a_finished_tournament_shows_its_master_seed_and_deal_seeds(arena: Arena, tmp_path: Path) -> None:
    with Store(str(arena.db)) as store:
        store.set_tournament_status(arena.a, "finished")
    client = TestClient(create_app(str(arena.db)))
    data = client.get(f"/api/tournaments/{arena.a}").json()
    assert data["master_seed"] == data["settings"]["seed"] == arena.a_master
    assert {t["id"]: t["master_seed"] for t in client.get("/api/tournaments").json()}[arena.a] == arena.a_master
    assert f"<dt>Master seed</dt><dd>{arena.a_master}</dd>" in client.get(f"/tournaments/{arena.a}").text
    for match_id, seed in arena.deal_seeds.items():
        record = client.get(f"/api/matches/{match_id}").json()["record"]
        assert record["seed"] == record["config"]["seed"] == seed
    # Still never shown: the organiser's variables and commands.
    assert_hidden(crawl_app(arena.db), Secrets(texts=arena.secrets.texts))
    files = exported(arena.db, tmp_path / "out")
    page = files[f"matches/{arena.a}-00003.html"][1]
    found = re.search(r'id="match-data">(.*?)</script>', page, re.S)
    assert found is not None
    embedded = json.loads(found[1])
    assert embedded["record"]["seed"] == arena.deal_seeds[f"{arena.a}-00003"]


# -- end to end: a real tournament while it runs, interrupted, and another finished ----------------


def stored_matches(db: Path, tournament: str) -> int:
    if not db.exists():
        return 0
    try:
        with Store(str(db)) as store:
            return len(store.list_matches(tournament_id=tournament, limit=10_000))
    except Exception:    # the run is still creating it
        return 0


def tournament_ids(db: Path) -> list[str]:
    try:
        with Store(str(db)) as store:
            return [t.id for t in store.list_tournaments()]
    except Exception:    # the run is still creating it
        return []


def real_secrets(db: Path, tournament: str) -> tuple[Secrets, int]:
    """The secrets of a stored tournament as its own settings derive them, and its master seed."""
    with Store(str(db)) as store:
        info = store.get_tournament(tournament)
    secrets = Secrets()
    secrets.add_tournament(tournament, info.master_seed, TournamentSettings.from_dict(info.settings))
    return secrets, info.master_seed


def live_ids(fetch: Fetch) -> list[str]:
    return [m["match_id"] for m in json.loads(fetch("/api/live")[1])["matches"]]


def assert_live_pages_refused(fetch: Fetch) -> None:
    """A running match's live viewer and event stream answer 403 (private). A match that
    ends between the listing and the two requests answers 404 (no longer live): then the
    next running match is asked."""
    for _ in range(20):
        running = live_ids(fetch)
        if not running:
            time.sleep(0.05)
            continue
        codes = (fetch(f"/live/{running[0]}")[0], fetch(f"/api/live/{running[0]}/events")[0])
        if codes == (403, 403):
            return
        assert 200 not in codes, f"a running private match was shown: {codes}"
    raise AssertionError("no running match stayed live long enough to be asked")


@pytest.mark.slow
def test_a_real_tournament_shows_no_secret_until_it_finishes(tmp_path: Path, web_over: Callable[[Path], str]) -> None:
    db = tmp_path / "arena.db"
    # Its bots stop answering once each process has made the decisions of one game (3
    # rounds at three seats: 3 bids, 6 cards, 3 trumps at most), until the hold file goes:
    # the tournament has stored a game and runs another while the test crawls, however slow.
    hold = tmp_path / "hold"
    hold.touch()
    runner = slow_tournament(tmp_path, db, "--rounds", "3", "--games", "18", "--deals", "duplicate", sleep_ms=10,
                             hold=hold, hold_after=12)
    try:
        wait_for(lambda: bool(tournament_ids(db)), "the tournament being stored")
        first = tournament_ids(db)[0]
        wait_for(lambda: stored_matches(db, first) >= 1, "a stored match")
        fetch = http_fetch(web_over(db))
        wait_for(lambda: bool(live_ids(fetch)), "a running match")
        secrets, _ = real_secrets(db, first)
        # While it runs: the real `arena web` (with its live pages), and the run's referee's public calls.
        running = live_ids(fetch)
        seen = crawl_app(db, fetch, running=running)
        assert json.loads(fetch(f"/api/tournaments/{first}")[1])["status"] == "running"
        assert_hidden(seen, secrets)
        # Duplicate deals: a running match is private, its live viewer and stream refuse it.
        assert_live_pages_refused(fetch)
        referee = (log_dir_for(str(db), first) / "referee").read_text().strip()
        assert_hidden(public_calls(referee, running, ("classic",)), secrets)
        assert_hidden(exported(db, tmp_path / "running"), secrets)
        runner.send_signal(signal.SIGINT)
        hold.unlink()
        assert runner.wait(timeout=60) == 130, (tmp_path / "tournament.out").read_text()
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    # Interrupted (it will be resumed): still hidden. Another tournament, played to its end, shows its seed.
    fast = slow_tournament(tmp_path, db, "--rounds", "2", "--games", "3", sleep_ms=0)
    assert fast.wait(timeout=120) == 0, (tmp_path / "tournament.out").read_text()
    second = next(t for t in tournament_ids(db) if t != first)
    assert json.loads(fetch(f"/api/tournaments/{first}")[1])["status"] == "interrupted"
    seen = crawl_app(db, fetch)
    assert_hidden(seen, secrets)
    assert_hidden(exported(db, tmp_path / "after"), secrets)
    _, master = real_secrets(db, second)
    assert json.loads(fetch(f"/api/tournaments/{second}")[1])["master_seed"] == master
    assert f"<dt>Master seed</dt><dd>{master}</dd>" in seen[f"/tournaments/{second}"][1]



def test_a_database_error_names_neither_its_server_nor_its_file(tmp_path: Path, postgres_url: str) -> None:
    """A 503 (the PostgreSQL server refuses arena web's reconnection) and a 404 (no such
    match in a SQLite file) say what went wrong without the server's address or the path."""
    from factories.databases import wipe_postgres
    from sqlalchemy import create_engine, text

    wipe_postgres(postgres_url)
    Store(postgres_url).close()
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    reader_url = postgres_url.replace("://arena@", "://web_reader@")
    with admin.connect() as conn:
        conn.execute(text("DROP OWNED BY web_reader") if conn.execute(
            text("SELECT 1 FROM pg_roles WHERE rolname = 'web_reader'")).first() else text("SELECT 1"))
        conn.execute(text("DROP ROLE IF EXISTS web_reader"))
        conn.execute(text("CREATE ROLE web_reader LOGIN"))
        conn.execute(text("GRANT USAGE ON SCHEMA public TO web_reader"))
        conn.execute(text("GRANT SELECT ON ALL TABLES IN SCHEMA public TO web_reader"))
    try:
        client = TestClient(create_app(reader_url))
        assert client.get("/api/tournaments").status_code == 200
        with admin.connect() as conn:        # its connections cut, and no new one allowed
            conn.execute(text("ALTER ROLE web_reader NOLOGIN"))
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'web_reader'"))
        port = postgres_url.rsplit(":", 1)[1].split("/")[0]
        for path in ("/", "/api/tournaments", "/", "/api/tournaments"):
            answer = client.get(path)
            assert answer.status_code == 503, (path, answer.text)
            assert "127.0.0.1" not in answer.text and port not in answer.text and "web_reader" not in answer.text
        client.app.state.store.close()
    finally:
        with admin.connect() as conn:
            conn.execute(text("DROP OWNED BY web_reader"))
            conn.execute(text("DROP ROLE web_reader"))
        admin.dispose()
        wipe_postgres(postgres_url)
    sqlite_path = tmp_path / "organiser" / "runs.db"
    sqlite_path.parent.mkdir()
    Store(str(sqlite_path)).close()
    client = TestClient(create_app(str(sqlite_path)))
    for path in ("/matches/nope", "/api/matches/nope", "/tournaments/t-nope", "/api/tournaments/t-nope"):
        answer = client.get(path)
        assert answer.status_code == 404 and "in this database" in answer.text and str(tmp_path) not in answer.text
