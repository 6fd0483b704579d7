"""Leaderboards: aggregates, ranking, the five formats and export (arena.leaderboard)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from arena.leaderboard import FORMATS, LeaderboardRow, export, leaderboard, render
from arena.records import FaultRecord, MatchRecord
from arena.store import Store


def classic(match_id: str, seats: list[tuple[str, int, int, int]], faults: list[FaultRecord] | None = None,
            tournament_id: str | None = None, game_index: int | None = None) -> MatchRecord:
    """A classic record from ``(bot, total, place, exact bids out of 2 rounds)`` per seat."""
    rounds = [[{"score": 0, "bid": 1, "tricks": 1 if exact > r else 0} for _, _, _, exact in seats] for r in range(2)]
    return MatchRecord(
        match_id=match_id, variant="classic", config={"variant": "classic", "players": len(seats)}, seed=0,
        bots=[s[0] for s in seats], bot_versions=["1"] * len(seats), totals=[s[1] for s in seats],
        places=[s[2] for s in seats], forfeited=[False] * len(seats),
        result={"variant": "classic", "rounds": rounds}, actions=[], latencies_ms=[], faults=faults or [],
        tournament_id=tournament_id, game_index=game_index,
    )


def extreme(match_id: str, seats: list[tuple[str, int, int]]) -> MatchRecord:
    return MatchRecord(
        match_id=match_id, variant="extreme", config={"variant": "extreme"}, seed=0,
        bots=[s[0] for s in seats], bot_versions=["1"] * len(seats), totals=[s[1] for s in seats],
        places=[s[2] for s in seats], forfeited=[False] * len(seats), result={"variant": "extreme"},
        actions=[], latencies_ms=[],
    )



@pytest.fixture
def filled(store: Store) -> Store:
    """ann beats bob beats cy, mostly; some faults; one tournament of two games."""
    tid = store.create_tournament({"games": 2}, master_seed=1)
    store.save_match(classic("m1", [("ann", 120, 1, 2), ("bob", 60, 2, 1), ("cy", 10, 3, 0)],
                             faults=[FaultRecord(2, "cy", "timeout", "late"), FaultRecord(2, "cy", "illegal", "x")],
                             tournament_id=tid, game_index=0))
    store.save_match(classic("m2", [("bob", 90, 1, 2), ("ann", 80, 2, 2), ("cy", 0, 3, 0)],
                             tournament_id=tid, game_index=1))
    store.save_match(classic("m3", [("cy", 30, 2, 1), ("ann", 100, 1, 1), ("bob", 30, 2, 0)]))
    store.save_match(classic("m4", [("ann", 50, 1, 1), ("dee", 40, 2, 1)]))
    return store


def test_aggregates_and_order(filled: Store) -> None:
    rows = leaderboard(filled, "classic", samples=50)
    assert [r.bot for r in rows] == ["ann", "bob", "dee", "cy"]
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    assert rows == sorted(rows, key=lambda r: -r.rating)
    ann = next(r for r in rows if r.bot == "ann")
    assert ann.games == 4
    assert ann.avg_score == pytest.approx((120 + 80 + 100 + 50) / 4)
    assert ann.avg_place == pytest.approx((1 + 2 + 1 + 1) / 4)
    assert ann.exact_bid_rate == pytest.approx((2 + 2 + 1 + 1) / 8)
    cy = next(r for r in rows if r.bot == "cy")
    assert cy.faults == 2 and cy.games == 3 and cy.exact_bid_rate == pytest.approx(1 / 6)
    assert ann.elo == pytest.approx(filled.current_elo("classic")["ann"][0])
    # Ratings are relative to the mean, so they average to 1500.
    assert sum(r.rating for r in rows) / len(rows) == pytest.approx(1500.0)
    assert all(r.interval > 0 for r in rows)


def test_min_games_hides_but_still_fits(filled: Store) -> None:
    everyone = leaderboard(filled, "classic", samples=50)
    regulars = leaderboard(filled, "classic", min_games=3, samples=50)
    assert [r.bot for r in regulars] == [r.bot for r in everyone if r.bot != "dee"]
    assert [r.rank for r in regulars] == [1, 2, 3]
    assert {r.bot: r.rating for r in regulars} == {r.bot: r.rating for r in everyone if r.bot != "dee"}


def test_tournament_board(filled: Store) -> None:
    [tournament] = filled.list_tournaments()
    rows = leaderboard(filled, "classic", tournament_id=tournament.id, samples=50)
    assert sorted(r.bot for r in rows) == ["ann", "bob", "cy"]
    assert all(r.games == 2 for r in rows)
    assert next(r for r in rows if r.bot == "cy").faults == 2


def test_board_is_reproducible(filled: Store) -> None:
    assert leaderboard(filled, "classic", samples=50) == leaderboard(filled, "classic", samples=50)
    assert leaderboard(filled, "classic", samples=50, seed=1) != leaderboard(filled, "classic", samples=50)


def test_the_same_matches_give_the_same_board_in_any_database(tmp_path: Path) -> None:
    # Another database holds other bots too and saw the matches in another order (in
    # other tournaments): bot ids and stored outcome rows differ, the board must not.
    rng = random.Random(5)
    orders = [[1, 2, 3, 4], [2, 1, 4, 3], [4, 3, 2, 1]]
    matches = [classic(f"m{i}", [(bot, 0, place, 0) for bot, place in zip(["ann", "bob", "cy", "dee"], rng.choice(orders))])
               for i in range(30)]
    with Store(str(tmp_path / "one.db")) as one, Store(str(tmp_path / "two.db")) as two:
        one.save_matches(matches)
        two.ensure_bot("zed")
        two.ensure_bot("dee")
        other = two.create_tournament({}, master_seed=1)
        for i, record in enumerate(reversed(matches)):
            record.tournament_id, record.game_index = (other, i) if i % 2 else (None, None)
            two.save_match(record)
        def board(store: Store) -> list[LeaderboardRow]:
            # Online Elo depends on the order matches were played in; nothing else may.
            return [dataclasses.replace(row, elo=None) for row in leaderboard(store, "classic", samples=50)]

        assert board(one) == board(two)


def test_empty_and_extreme(store: Store) -> None:
    assert leaderboard(store, "classic") == []
    store.save_match(extreme("x1", [("ann", 3, 1), ("bob", 9, 3), ("cy", 5, 2)]))
    store.save_match(extreme("x2", [("ann", 4, 2), ("bob", 9, 3), ("cy", 1, 1)]))
    rows = leaderboard(store, "extreme")
    assert [r.bot for r in rows][-1] == "bob"
    assert all(r.exact_bid_rate is None for r in rows)
    assert leaderboard(store, "classic") == []


def test_more_games_tighter_interval(tmp_path: Path) -> None:
    def board(matches: int) -> dict[str, LeaderboardRow]:
        rng = random.Random(matches)
        with Store(str(tmp_path / f"{matches}.db")) as store:
            store.save_matches([
                classic(f"m{i}", [(bot, 0, place, 0) for bot, place in
                                  zip(["ann", "bob", "cy"], rng.choice([[1, 2, 3], [1, 3, 2], [2, 1, 3], [3, 2, 1]]))])
                for i in range(matches)
            ])
            return {r.bot: r for r in leaderboard(store, "classic", samples=100)}

    small, large = board(40), board(640)
    for bot in ("ann", "bob", "cy"):
        assert large[bot].interval < small[bot].interval / 2


# --------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------


def test_table(filled: Store) -> None:
    rows = leaderboard(filled, "classic", samples=50)
    console = Console(record=True, width=140)
    table = render(rows, "table", "classic", console=console)
    assert isinstance(table, Table) and table.row_count == 4
    text = console.export_text()
    assert "ann" in text and "Exact bids" in text and "±" in text


def test_table_fits_an_80_column_terminal_whole(filled: Store) -> None:
    row = LeaderboardRow(1, "node-heuristic", 1727.4, 68.2, 1591.0, 32, -360.6, 1.91, 0.496, 12, 0)
    console = Console(record=True, width=80)
    render([row], "table", "classic", console=console)
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 80
    for cell in ("node-heuristic", "1727", "±68", "1591", "-360.6", "1.91", "49.6%", "12", "Faults"):
        assert cell in text, cell


def test_markdown(filled: Store) -> None:
    text = render(leaderboard(filled, "classic", samples=50), "md", "classic")
    lines = text.splitlines()
    assert lines[0].startswith("| # | Bot | Rating | ± | Elo |")
    assert len(lines) == 2 + 4 and lines[2].startswith("| 1 | ann |")


def test_csv(filled: Store) -> None:
    rows = leaderboard(filled, "classic", samples=50)
    parsed = list(csv.DictReader(io.StringIO(render(rows, "csv", "classic"))))
    assert [p["bot"] for p in parsed] == [r.bot for r in rows]
    assert float(parsed[0]["rating"]) == pytest.approx(rows[0].rating, abs=1e-3)
    assert "exact_bid_rate" in parsed[0]


def test_json(filled: Store) -> None:
    rows = leaderboard(filled, "classic", samples=50)
    data = json.loads(render(rows, "json", "classic"))
    assert data["variant"] == "classic"
    assert [r["bot"] for r in data["rows"]] == [r.bot for r in rows]
    assert data["rows"][0]["games"] == rows[0].games


def test_html_is_standalone_and_escaped(store: Store) -> None:
    store.save_match(classic("m1", [("<script>alert(1)</script>", 10, 1, 1), ("b&b", 0, 2, 0)]))
    page = render(leaderboard(store, "classic"), "html", "classic")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script>" not in page and "&lt;script&gt;" in page and "b&amp;b" in page


def test_extreme_formats_have_no_exact_bids(store: Store) -> None:
    store.save_match(extreme("x1", [("ann", 3, 1), ("bob", 9, 2)]))
    rows = leaderboard(store, "extreme")
    assert "Exact bids" not in render(rows, "md", "extreme")
    assert "exact_bid_rate" not in render(rows, "csv", "extreme")


def test_unknown_format(filled: Store) -> None:
    assert set(FORMATS) == {"table", "md", "csv", "json", "html"}
    with pytest.raises(ValueError, match="unknown leaderboard format 'xml'"):
        render([], "xml", "classic")


def test_export_writes_one_set_per_variant(filled: Store, tmp_path: Path) -> None:
    target = tmp_path / "leaderboards"
    written = export(filled, target)
    assert sorted(p.name for p in written) == ["classic.html", "classic.json", "classic.md"]
    filled.save_match(extreme("x1", [("ann", 3, 1), ("bob", 9, 2)]))
    written = export(filled, target)
    assert sorted(p.name for p in written) == [
        "classic.html", "classic.json", "classic.md", "extreme.html", "extreme.json", "extreme.md"]
    assert json.loads((target / "extreme.json").read_text())["rows"][0]["bot"] == "ann"
    assert (target / "classic.md").read_text().startswith("| # | Bot |")


def test_rows_are_dataclasses_with_the_documented_fields() -> None:
    row = LeaderboardRow(1, "a", 1500.0, 10.0, None, 3, 1.0, 2.0, None, 0, 0)
    assert render([row], "md", "classic").splitlines()[2] == "| 1 | a | 1500 | ±10 | – | 3 | 1.0 | 2.00 | – | 0 |"
