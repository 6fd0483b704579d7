"""The Elo plot: each bot's online Elo over its games (``arena.results.elo_history``),
drawn as SVG (``arena.results.elo_plot``) on the leaderboard page and answered by
``/api/elo/{variant}``, over real SQLite stores filled as the leaderboard and web tests fill theirs."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.records import MatchRecord
from arena.results.elo_history import EloLine, downsample, elo_history
from arena.results.elo_plot import elo_svg
from arena.results.leaderboard import leaderboard
from arena.store import Store
from arena.web.app import create_app

SVG = ""     # inline in HTML: no namespace
Boards = tuple[Store, dict[str, list[MatchRecord]]]


def svg_of(html: str) -> str:
    return html[html.index("<svg"):html.index("</svg>") + len("</svg>")]


@pytest.mark.parametrize("scope", ["all", "three", "four"])
def test_the_last_point_is_the_elo_the_board_reports(played_boards: Boards, scope: str) -> None:
    store, games = played_boards
    tournament = None if scope == "all" else next(t for t, r in games.items() if r and r[0].match_id.startswith(scope))
    rows = leaderboard(store, "classic", tournament_id=tournament, samples=10)
    lines = elo_history(store, "classic", tournament, order=[r.bot for r in rows])
    assert [line.bot for line in lines] == [r.bot for r in rows]      # the board's order
    for line, row in zip(lines, rows):
        assert row.elo is not None and line.points[-1][1] == pytest.approx(row.elo)
        xs = [x for x, _ in line.points]
        assert xs == list(range(line.games + 1)) and xs[-1] == line.games
    if tournament is None:      # the whole variant: every rated game, from 1500
        assert all(line.points[0] == (0, 1500.0) for line in lines)
        for line in lines:
            history = store.rating_history(line.bot, "classic")
            assert [y for _, y in line.points[1:]] == pytest.approx([h.elo_after for h in history])


def test_a_thinned_line_keeps_first_and_last_and_the_limit(played_boards: Boards) -> None:
    store, _ = played_boards
    full = {line.bot: line for line in elo_history(store, "classic")}
    for line in elo_history(store, "classic", limit=5):
        whole = full[line.bot].points
        assert len(line.points) <= 5 and line.points[0] == whole[0] and line.points[-1] == whole[-1]
        assert set(line.points) <= set(whole)


def test_downsample_keeps_first_last_and_extremes() -> None:
    rng = random.Random(3)
    for n, limit in [(10, 300), (1000, 300), (100_000, 300), (50, 7)]:
        points = [(x, rng.gauss(1500, 80)) for x in range(n)]
        kept = downsample(points, limit)
        assert len(kept) <= limit and (n > limit or kept == points)
        assert kept[0] == points[0] and kept[-1] == points[-1]
        assert [x for x, _ in kept] == sorted({x for x, _ in kept})
        ys = [y for _, y in points]
        assert min(ys) in [y for _, y in kept] and max(ys) in [y for _, y in kept]


def test_svg_is_xml_and_names_every_bot_in_order() -> None:
    names = [f"bot{i}" for i in range(10)] + ["cy<&>\"'", "a-very-long-bot-name-that-goes-on-and-on"]
    lines = [EloLine(name, 3, [(0, 1500.0), (1, 1500.0 + i), (2, 1490.0 - i), (3, 1510.0)])
             for i, name in enumerate(names)]
    root = ET.fromstring(elo_svg(lines))
    assert root.tag == f"{SVG}svg" and root.get("role") == "img" and "12 bots" in (root.get("aria-label") or "")
    polylines = root.findall(f"{SVG}polyline")
    assert [p.findtext(f"{SVG}title", "").split(":")[0] for p in polylines] == names
    assert [g.findtext(f"{SVG}title") for g in root.findall(f"{SVG}g")] == names       # the legend
    # The palette runs out after 7 colours: the next bots are dashed, so no two lines look alike.
    looks = {(p.get("stroke"), p.get("stroke-dasharray")) for p in polylines}
    assert len(looks) == len(names)


def test_page_and_api(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    _, tournament = web_db
    for query in ("", f"?tournament={tournament}"):
        board = web_client.get(f"/api/leaderboard/classic{query}").json()
        answer = web_client.get(f"/api/elo/classic{query}")
        assert answer.status_code == 200
        data = answer.json()
        assert data["variant"] == "classic" and data["tournament_id"] == (tournament if query else None)
        assert [b["bot"] for b in data["bots"]] == [r["bot"] for r in board["rows"]]
        for line, row in zip(data["bots"], board["rows"]):
            assert line["points"][-1][1] == pytest.approx(row["elo"]) and line["points"][-1][0] == line["games"]
        page = web_client.get(f"/leaderboard/classic{query}").text
        assert '<table id="board"' in page            # the board is still there, plot below it
        root = ET.fromstring(svg_of(page))
        assert [p.findtext(f"{SVG}title", "").split(": Elo")[0] for p in root.findall(f"{SVG}polyline")] == [
            r["bot"] for r in board["rows"]]
    assert web_client.get("/api/elo/nope").status_code == 404
    assert web_client.get("/api/elo/extreme?tournament=" + tournament).status_code == 404    # a classic tournament
    assert web_client.get("/api/elo/classic?tournament=t-none").json()["error"]


def test_no_matches_no_plot(tmp_path: Path) -> None:
    Store(str(tmp_path / "arena.db")).close()
    empty = TestClient(create_app(str(tmp_path / "arena.db")))
    assert empty.get("/api/elo/classic").json()["bots"] == []
    page = empty.get("/leaderboard/classic").text
    assert 'id="elo-empty"' in page and "<svg" not in page
