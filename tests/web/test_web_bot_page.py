"""The bot page's place on each board, its newest matches and its Elo over its games,
through Starlette's TestClient over the web tests' database (``web_db``), and over a
small database where one bot's rating is only a bound.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from factories.records import classic_record
from starlette.testclient import TestClient

from arena.store import Store
from arena.web.app import create_app


def rating_row(page: str, variant: str) -> str:
    """The cells of ``<table id="bot-ratings">``'s row of ``variant`` (unescaped)."""
    found = re.search(rf'<tr data-variant="{variant}" data-rating="[^"]*" data-rank="\d+">(.*?)</tr>',
                      html.unescape(page))
    assert found, page
    return found[1]


def test_the_bot_page_shows_the_boards_rating_and_rank(web_client: TestClient) -> None:
    for variant in ("classic", "extreme"):
        rows = web_client.get(f"/api/leaderboard/{variant}").json()["rows"]
        row = next(r for r in rows if r["bot"] == "ann")
        data = web_client.get("/api/bots/ann").json()
        shown = next(v for v in data["variants"] if v["variant"] == variant)["board"]
        assert shown == {"rank": row["rank"], "of": len(rows), "rating": row["rating"], "interval": row["interval"],
                         "bound": row["bound"], "group": row["group"], "elo": row["elo"], "games": row["games"]}
        cells = rating_row(web_client.get("/bots/ann").text, variant)
        sign = {"lower": "≥", "upper": "≤", "none": "~"}.get(row["bound"] or "", "")
        assert f'<td class="rating">{sign}{row["rating"]:.0f}' in cells
        assert f'<td class="rank">{ordinal(row["rank"])} of {len(rows)}</td>' in cells
        assert f'href="/leaderboard/{variant}"' in cells


def ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"


def test_the_bot_page_lists_its_newest_matches_linked(web_client: TestClient, web_db: tuple[Path, str]) -> None:
    with Store(str(web_db[0])) as store:
        newest = store.list_matches(bot="ann", limit=10)
    data = web_client.get("/api/bots/ann").json()
    assert [m["match_id"] for m in data["recent"]] == [m.match_id for m in newest]
    first, stored = data["recent"][0], newest[0]
    assert first["seats"] == [stored.bots.index("ann")]
    assert first["bot_places"] == [stored.places[stored.bots.index("ann")]]
    page = web_client.get("/bots/ann").text
    table = page.split('<table id="bot-recent"', 1)[1].split("</table>", 1)[0]
    for match in newest:
        assert f'<a href="/matches/{match.match_id}">{match.match_id}</a>' in table
    assert table.count("<time datetime=") == len(newest) and ' UTC">' in table
    winners = ", ".join(html.escape(b) for b, p in zip(stored.bots, stored.places) if p == 1)
    assert f'<td class="winner">{winners}</td>' in table


def test_the_bot_page_plots_its_line_of_the_boards_elo_plot(web_client: TestClient) -> None:
    data = web_client.get("/api/bots/ann").json()
    for variant in ("classic", "extreme"):
        board_line = next(b for b in web_client.get(f"/api/elo/{variant}").json()["bots"] if b["bot"] == "ann")
        line = next(e for e in data["elo"] if e["variant"] == variant)
        assert (line["games"], line["points"]) == (board_line["games"], board_line["points"])
    page = web_client.get("/bots/ann").text
    plot = page.split('<section id="bot-elo">', 1)[1].split("</section>", 1)[0]
    assert plot.count("<polyline") == 2 and "<title>classic: Elo " in plot


def test_a_bound_shows_as_a_bound_on_the_bot_page(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        for i in range(4):     # "last" never finishes ahead of anyone: only an upper bound
            store.save_match(classic_record(f"m{i}", [("ann", 30, 1 + i % 2, 1), ("bob", 20, 2 - i % 2, 1),
                                                      ("last", -10, 3, 0)]))
    client = TestClient(create_app(str(path)))
    row = next(r for r in client.get("/api/leaderboard/classic").json()["rows"] if r["bot"] == "last")
    assert row["bound"] == "upper"
    shown = client.get("/api/bots/last").json()["variants"][0]["board"]
    assert (shown["rating"], shown["bound"], shown["rank"], shown["of"]) == (row["rating"], "upper", 3, 3)
    cells = rating_row(client.get("/bots/last").text, "classic")
    assert f'<td class="rating">≤{row["rating"]:.0f}</td><td class="interval">–</td>' in cells
    assert '<td class="rank">3rd of 3</td>' in cells
    client.app.state.store.close()


def test_the_boards_rows_are_kept_until_a_match_of_the_variant_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        store.save_match(classic_record("m0", [("ann", 30, 1, 1), ("bob", 20, 2, 1)]))
    client = TestClient(create_app(str(path)))
    assert client.get("/api/bots/ann").json()["variants"][0]["board"]["games"] == 1
    with Store(str(path)) as store:
        store.save_match(classic_record("m1", [("ann", 30, 1, 1), ("bob", 20, 2, 1)]))
    data = client.get("/api/bots/ann").json()
    assert data["variants"][0]["board"]["games"] == 2
    assert [m["match_id"] for m in data["recent"]] == ["m1", "m0"]
    client.app.state.store.close()
