"""``arena web``: the pages and the JSON API through Starlette's TestClient, over a real
SQLite database filled with real engine games (classic with open, hidden and secret
bids, and Wizard Extreme), one tournament among them; and ``arena web`` as a real
process (its ``serving`` line, a fetch over HTTP, its one-line errors).
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from factories.records import played
from factories.web_server import WEB_BOTS
from starlette.testclient import TestClient

from arena.store import Store, StoreUnavailable
from arena.web.app import create_app
from engine import action_to_json

PY = sys.executable


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def board_rows(html: str) -> list[tuple[str, float]]:
    """(bot, rating) of each body row of ``<table id="board">``, in page order."""
    table = html.split('<table id="board"', 1)[1].split("</table>", 1)[0]
    return [(name.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"), float(rating))
            for name, rating in re.findall(r'<tr data-bot="([^"]*)" data-rating="([^"]*)">', table)]


# -- leaderboard -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("variant, with_tournament", [("classic", False), ("extreme", False), ("classic", True)])
def test_leaderboard_page_and_api_equal_the_cli_json(web_client: TestClient, web_db: tuple[Path, str], variant: str,
                                                     with_tournament: bool) -> None:
    path, tournament = web_db
    query = f"?tournament={tournament}" if with_tournament else ""
    cli = arena("leaderboard", "--variant", variant, *(["--tournament", tournament] if with_tournament else []),
                "--format", "json", "--db", str(path), cwd=path.parent)
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert expected["rows"]
    page = web_client.get(f"/leaderboard/{variant}{query}")
    assert page.status_code == 200
    assert board_rows(page.text) == [(row["bot"], row["rating"]) for row in expected["rows"]]
    data = web_client.get(f"/api/leaderboard/{variant}{query}").json()
    for board in (data, expected):
        board["metadata"].pop("generated_at")
    assert data == expected
    assert 'id="metadata"' in page.text and "arena " in page.text and 'class="bar"' in page.text


def test_leaderboard_escapes_names_and_is_sortable(web_client: TestClient) -> None:
    page = web_client.get("/leaderboard/classic").text
    assert 'data-bot="cy&lt;&amp;&gt;"' in page and "cy<&>" not in page
    assert 'class="sortable"' in page and 'data-sort="num"' in page
    assert '<script src="/static/viewer.js">' in page and "http://" not in page and "https://" not in page


# -- the match viewer ----------------------------------------------------------------------


@pytest.mark.parametrize("match_id", ["open-0", "hidden-1", "secret-2", "extreme-1"])
def test_match_steps_end_on_the_stored_totals(web_client: TestClient, web_db: tuple[Path, str], match_id: str) -> None:
    with Store(str(web_db[0])) as store:
        record = store.load_match(match_id)
    data = web_client.get(f"/api/matches/{match_id}").json()
    steps = data["steps"]
    assert data["record"]["totals"] == record.totals
    assert len(steps) == len(record.actions) + 1
    assert [s["index"] for s in steps] == list(range(len(steps)))
    assert steps[0]["totals"] == [0] * len(record.bots)
    assert steps[-1]["totals"] == record.totals
    for step, (seat, action) in zip(steps[1:], record.actions):
        assert (step["seat"], step["action"]) == (seat, action_to_json(action))
    assert all(e["text"] for s in steps for e in s["events"])
    types = {e["type"] for s in steps for e in s["events"]}
    assert "round_end" in types and "trick" in types and "hand" in types
    if match_id.startswith(("hidden", "secret")):
        # Face-down bids: the table sees that a seat bid, and every bid only when revealed.
        assert "bid" not in types and {"bid_made", "bids_revealed"} <= types
    # Who is taking the trick so far: nobody between tricks; once a trick ends, its winner
    # is the seat that was taking it before its last card, or the seat that played that card.
    assert steps[0]["winning"] is None
    for before, step in zip(steps, steps[1:]):
        trick = next((e for e in step["events"] if e["type"] == "trick"), None)
        if trick is not None:
            assert step["winning"] is None and trick["winner"] in (before["winning"], step["seat"])


def test_match_page_has_the_controls(web_client: TestClient) -> None:
    page = web_client.get("/matches/extreme-0")
    assert page.status_code == 200
    for element in ('id="first"', 'id="prev"', 'id="next"', 'id="last"', 'id="play"', 'id="step"',
                    'id="totals"', 'data-api="/api/matches/extreme-0"'):
        assert element in page.text
    assert web_client.get("/static/viewer.js").status_code == 200
    assert web_client.get("/static/style.css").status_code == 200


# -- index, tournaments, crosstable ----------------------------------------------------------


def test_index_and_tournament_pages(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    tournament = web_db[1]
    index = web_client.get("/").text
    assert 'href="/leaderboard/classic"' in index and 'href="/leaderboard/extreme"' in index
    assert f'href="/tournaments/{tournament}"' in index
    listed = web_client.get("/api/tournaments").json()
    assert [(t["id"], t["variant"], t["matches"]) for t in listed] == [(tournament, "classic", 6)]
    page = web_client.get(f"/tournaments/{tournament}").text
    assert all(f'href="/matches/hidden-{i}"' in page for i in range(6)) and "secret-0" not in page
    assert f"/leaderboard/classic?tournament={tournament}" in page


def test_a_tab_names_the_page_and_the_site_once(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    assert "<title>Wizard Arena</title>" in web_client.get("/").text
    page = web_client.get(f"/tournaments/{web_db[1]}").text
    assert f"<title>Tournament {web_db[1]} · Wizard Arena</title>" in page


def test_crosstable(web_client: TestClient) -> None:
    data = web_client.get("/api/crosstable/classic").json()
    assert set(data["bots"]) == set(WEB_BOTS) and data["variant"] == "classic"
    page = web_client.get("/crosstable/classic")
    assert page.status_code == 200 and '<table id="crosstable">' in page.text


def test_tournament_page_and_api(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    tournament = web_db[1]
    data = web_client.get(f"/api/tournaments/{tournament}").json()
    assert data["id"] == tournament and data["status"] == "completed" and data["games_stored"] == 6
    assert data["resume_command"] is None and data["settings"]["game"]["bidding"] == "hidden"
    assert sorted(row["bot"] for row in data["board"]) == sorted(WEB_BOTS)
    assert sorted(m["match_id"] for m in data["matches"]) == [f"hidden-{i}" for i in range(6)]
    page = web_client.get(f"/tournaments/{tournament}").text
    assert 'id="status">completed<' in page and 'id="interrupted"' not in page
    # The settings in words: the game's options as the match pages word them, not as keys.
    assert re.search(r"<dt>Game</dt><dd>classic: \d+ players[^<]*, hidden", page) and "game: " not in page
    assert 'id="tournament-board"' in page
    assert 'href="/bots/cy%3C%26%3E"' in page and '<script src="/static/tournament.js">' in page
    assert web_client.get("/static/tournament.js").status_code == 200
    polled = web_client.get(f"/api/tournaments/{tournament}?matches=0").json()
    assert "matches" not in polled and polled["games_stored"] == 6 and polled["board"] == data["board"]
    assert polled["last_game_at"] == max(m["finished_at"] for m in data["matches"])
    assert web_client.get("/api/tournaments/t-nope").status_code == 404


def test_a_running_tournament_nobody_runs_is_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with Store(str(path)) as store:
        tournament = store.create_tournament({"game": {"variant": "classic", "players": 3}, "games": 10},
                                             master_seed=1, status="running")
        record = played("r-0", "classic", WEB_BOTS, 1)
        record.tournament_id, record.game_index = tournament, 0
        store.save_match(record)
    # A lock file nobody holds: the process that ran it is gone.
    (tmp_path / "arena-logs" / tournament).mkdir(parents=True)
    (tmp_path / "arena-logs" / tournament / ".lock").write_text("")
    client = TestClient(create_app(str(path)))
    data = client.get(f"/api/tournaments/{tournament}").json()
    assert (data["status"], data["stored_status"]) == ("interrupted", "running")
    assert (data["games_stored"], data["games_scheduled"]) == (1, 10)
    # The file by its name: its folder is the organiser's, not the spectators'.
    assert data["resume_command"] == f"arena tournament --resume {tournament} --db runs.db"
    page = client.get(f"/tournaments/{tournament}").text
    assert str(tmp_path) not in page
    assert 'id="interrupted"' in page and f"arena tournament --resume {tournament}" in page
    assert 'id="progress">1 / 10<' in page
    assert [t["status"] for t in client.get("/api/tournaments").json()] == ["interrupted"]


def test_bot_page_and_api(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    data = web_client.get("/api/bots/ann").json()
    assert data["bot"] == "ann" and data["games"] == 6 + 3 + 3 + 3
    assert data["versions"] == [{"version": "1", "games": 15}]
    by_variant = {v["variant"]: v for v in data["variants"]}
    assert (by_variant["classic"]["games"], by_variant["extreme"]["games"]) == (12, 3)
    assert by_variant["extreme"]["exact_bid_rate"] is None
    assert 0 <= by_variant["classic"]["exact_bid_rate"] <= 1
    board = {r["bot"]: r for r in web_client.get("/api/leaderboard/classic").json()["rows"]}
    assert by_variant["classic"]["think_p50_ms"] == pytest.approx(board["ann"]["think_p50_ms"], abs=1e-3)
    assert by_variant["classic"]["think_p99_ms"] == pytest.approx(board["ann"]["think_p99_ms"], abs=1e-3)
    with Store(str(web_db[0])) as store:
        listed = store.list_matches(variant="classic", bot="ann", limit=100)
        seats = [(m.bots.index("ann"), m.places[m.bots.index("ann")]) for m in listed]
        records = [store.load_match(m.match_id) for m in listed]
    # Exact: ann's own slowest answer, not the slowest of any seat.
    own = [latency for r in records for (seat, _), latency in zip(r.actions, r.latencies_ms)
           if seat == r.bots.index("ann") and latency is not None]
    assert by_variant["classic"]["think_max_ms"] == max(own)
    for entry in by_variant["classic"]["by_seat"]:
        places = [place for seat, place in seats if seat == entry["seat"]]
        assert entry["players"] == 3 and entry["games"] == len(places)
        assert entry["avg_place"] == pytest.approx(sum(places) / len(places))
    assert sum(e["games"] for e in by_variant["classic"]["by_seat"]) == 12
    assert data["faults"] == [{"kind": "timeout", "count": 1, "matches": ["open-0"]}]
    page = web_client.get("/bots/ann")
    assert page.status_code == 200
    assert 'id="bot-faults"' in page.text and 'href="/matches/open-0"' in page.text
    assert 'id="bot-seats"' in page.text and 'id="bot-variants"' in page.text
    assert web_client.get("/bots/bob").text.count("No faults.") == 1


def test_bot_names_link_to_their_pages(web_client: TestClient) -> None:
    escaped = web_client.get("/bots/cy%3C%26%3E")
    assert escaped.status_code == 200 and "cy&lt;&amp;&gt;" in escaped.text and "cy<&>" not in escaped.text
    for path in ("/leaderboard/classic", "/crosstable/classic"):
        page = web_client.get(path).text
        assert all(f'href="/bots/{name}"' in page for name in ("ann", "bob", "cy%3C%26%3E"))


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/matches/nope", "/leaderboard/chess", "/leaderboard/classic?tournament=t-nope",
                                  "/leaderboard/extreme?tournament={t}", "/tournaments/t-nope", "/crosstable/chess",
                                  "/bots/nobody", "/no/such/page"])
def test_unknown_ids_are_a_404_page(web_client: TestClient, web_db: tuple[Path, str], path: str) -> None:
    answer = web_client.get(path.format(t=web_db[1]))
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html") and 'id="error"' in answer.text
    assert "Traceback" not in answer.text


def test_unknown_ids_are_a_404_in_the_api(web_client: TestClient) -> None:
    for path in ("/api/matches/nope", "/api/leaderboard/chess", "/api/crosstable/chess", "/api/bots/nobody",
                 "/api/tournaments/t-nope"):
        answer = web_client.get(path)
        assert answer.status_code == 404 and "error" in answer.json()


def test_writing_methods_are_a_405_in_the_shape_of_the_path(web_client: TestClient) -> None:
    api = web_client.post("/api/tournaments")
    assert api.status_code == 405 and api.headers["allow"] == "GET, HEAD"
    assert api.json() == {"error": "POST is not allowed on /api/tournaments: this server only reads (GET, HEAD)"}
    page = web_client.delete("/leaderboard/classic")
    assert page.status_code == 405 and page.headers["content-type"].startswith("text/html")
    assert 'id="error">DELETE is not allowed on /leaderboard/classic' in page.text


def test_a_locked_database_is_a_503_page(web_db: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    # What the store raises when SQLite stays locked past the busy timeout (a real lock:
    # tests/store/test_store_errors.py; reads are never blocked in WAL mode).
    app = create_app(str(web_db[0]))

    def locked(*args: Any, **kwargs: Any) -> None:
        raise StoreUnavailable("database is locked")

    monkeypatch.setattr(app.state.store, "board_snapshot", locked)
    monkeypatch.setattr(app.state.store, "load_match", locked)
    client = TestClient(app)
    for path in ("/leaderboard/classic", "/matches/open-0"):
        answer = client.get(path)
        assert answer.status_code == 503 and "the database is busy" in answer.text and "Traceback" not in answer.text
    assert client.get("/api/leaderboard/classic").status_code == 503


# -- the command ---------------------------------------------------------------------------


@pytest.mark.slow
def test_arena_web_serves_on_a_free_port(web_db: tuple[Path, str]) -> None:
    path = web_db[0]
    process = subprocess.Popen([PY, "-m", "arena.cli", "web", "--db", str(path), "--port", "0"], cwd=path.parent,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        found = re.fullmatch(r"serving (http://127\.0\.0\.1:(\d+))", line)
        assert found, line
        with urllib.request.urlopen(found.group(1) + "/", timeout=30) as answer:
            assert answer.status == 200 and b"/leaderboard/classic" in answer.read()
        # The same port again: taken, one line and exit code 2.
        taken = arena("web", "--db", str(path), "--port", found.group(2), cwd=path.parent)
        assert taken.returncode == 2 and taken.stderr.count("\n") == 1 and "cannot listen" in taken.stderr
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_arena_web_refuses_a_missing_database(tmp_path: Path) -> None:
    done = arena("web", "--db", str(tmp_path / "none.db"), "--port", "0", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "no arena database" in done.stderr
    assert not (tmp_path / "none.db").exists()


# -- static export: self-contained replay pages --------------------------------------------


URL = re.compile(r"https?://")


def embedded_data(html: str) -> Any:
    found = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', html, re.S)
    assert found, "no embedded match data"
    return json.loads(found[1])


def test_exported_replay_embeds_the_match_and_needs_no_server(web_db: tuple[Path, str], tmp_path: Path) -> None:
    from arena.web.export import write_replays

    with Store(str(web_db[0])) as store:
        written = write_replays(store, tmp_path, ["hidden-1", "extreme-0"])
        record = store.load_match("hidden-1")
    assert written == [tmp_path / "matches" / "hidden-1.html", tmp_path / "matches" / "extreme-0.html"]
    html = written[0].read_text(encoding="utf-8")
    data = embedded_data(html)
    assert data["record"]["totals"] == record.totals and data["steps"][-1]["totals"] == record.totals
    for element in ('id="first"', 'id="prev"', 'id="next"', 'id="last"', 'id="play"', 'id="step"', 'id="totals"'):
        assert element in html
    # Everything inline: no server route, no stylesheet or script file, no web address.
    assert "data-api" not in html and "/static/" not in html and 'src="' not in html
    assert 'href="/' not in html and 'href="../classic.html"' in html
    assert "<style>" in html and "function startViewer" in html
    assert not URL.search(html)
    # The bot "cy<&>" is in the JSON: no "</" can end the script element early.
    assert "</" not in html.split('id="match-data">', 1)[1].split("</script>", 1)[0]


def test_leaderboard_export_writes_the_chosen_replays(web_db: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "boards"
    done = arena("leaderboard", "--db", str(web_db[0]), "--export", str(out), "--replays", "open-0,secret-1",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (out / "matches").iterdir()) == ["open-0.html", "secret-1.html"]
    assert (out / "classic.html").exists()
    done = arena("leaderboard", "--db", str(web_db[0]), "--export", str(out / "n"), "--replays", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The newest two of each board: classic and extreme.
    assert len(list((out / "n" / "matches").iterdir())) == 4


@pytest.mark.parametrize("replays", ["nope-1", "0", "open-0,,x", "../x"])
def test_bad_replays_write_nothing(web_db: tuple[Path, str], tmp_path: Path, replays: str) -> None:
    out = tmp_path / "boards"
    done = arena("leaderboard", "--db", str(web_db[0]), "--export", str(out), "--replays", replays, cwd=tmp_path)
    assert done.returncode == 2
    assert "--replays" in done.stderr
    assert not out.exists()


# -- a site for people -----------------------------------------------------------------------


def test_the_index_says_when_in_words_and_who_won(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    page = web_client.get("/").text
    # "3 hours ago" in the cell, the date itself (UTC) in its title.
    assert re.search(r'<time datetime="[^"]+" title="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d UTC">[^<]*ago<', page) \
        or re.search(r'<time datetime="[^"]+" title="[^"]+ UTC">just now<', page)
    with Store(str(web_db[0])) as store:
        newest = store.list_matches(limit=1)[0]
    winners = ", ".join(b for b, place in zip(newest.bots, newest.places) if place == 1)
    row = re.search(rf'<tr><td><a href="/matches/{re.escape(newest.match_id)}">.*?</tr>', page)
    assert row and f'<td class="winner">{winners}</td>' in html.unescape(row[0])
    # Extreme's penalty points say which way they count, on its matches and its board's link.
    assert "(penalty points: lower is better)" in page


def test_every_board_links_its_crosstable(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    tournament = web_db[1]
    assert 'id="crosstable-link" href="/crosstable/extreme"' in web_client.get("/leaderboard/extreme").text
    board = web_client.get(f"/leaderboard/classic?tournament={tournament}").text
    assert f'id="crosstable-link" href="/crosstable/classic?tournament={tournament}"' in board
    assert 'href="/crosstable/classic"' in web_client.get("/").text


def test_a_rating_that_is_only_a_bound_shows_as_a_bound(web_db: tuple[Path, str]) -> None:
    from arena.web import api, pages

    with Store(str(web_db[0])) as store:
        board = api.leaderboard(store, "classic")
    row = board["rows"][-1]
    row["bound"] = "upper"
    page = pages.render("leaderboard.html", board=board, tournament_id=None, elo=None)
    cells = re.search(rf'<tr data-bot="{re.escape(row["bot"])}"[^>]*>(.*?)</tr>', html.unescape(page))
    assert cells, page
    assert f'<td data-value="{row["rating"]}">≤{row["rating"]:.0f}</td><td data-value="">– ' in cells[1]
    assert 'class="range"' not in cells[1]
