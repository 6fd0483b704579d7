"""Leaderboards: aggregates, ranking, the five formats and export (arena.results.leaderboard)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from factories.records import classic_record as classic
from factories.records import extreme_record as extreme
from factories.records import played
from rich.console import Console
from rich.table import Table

from arena.records import FaultRecord, MatchRecord
from arena.results.elo_history import LIMIT
from arena.results.export import export
from arena.results.leaderboard import FORMATS, LeaderboardRow, board, leaderboard
from arena.results.render import render, render_board
from arena.stats.ratings import pairwise_from_tables
from arena.stats.think_times import RESOLUTION
from arena.store import BoardSnapshot, Store


def every_board(store: Store) -> list[BoardSnapshot]:
    """What ``arena leaderboard --export`` exports: the board of every variant, with its Elo plot."""
    return [store.board_snapshot(variant, elo_limit=LIMIT) for variant in store.variants()]


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
    # ann played 3 deals (m1 and m2 share the tournament's seed: one deal), enough for an
    # interval; bob and cy played 2, dee 1: theirs are not known.
    assert ann.interval is not None and ann.interval > 0
    assert [r.bot for r in rows if r.interval is None] == ["bob", "dee", "cy"]


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
    bots = ["ann", "bob", "cy", "dee"]
    matches = [classic(f"m{i}", [(bot, 0, place, 0) for bot, place in zip(bots, rng.choice(orders))])
               for i in range(30)]
    for i, record in enumerate(matches):
        # Each its own deal: tournament matches sharing a seed would be one unit of the
        # bootstrap (a duplicate deal), which is a difference the board must show.
        record.seed = i
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
    row = LeaderboardRow(1, "node-heuristic", 1727.4, 68.2, 1591.0, 32, -360.6, 1.91, 0.496, 12, 0, 0.52, 31.4, 3)
    console = Console(record=True, width=80)
    render([row], "table", "classic", console=console)
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 80
    for cell in ("node-heuristic", "1727", "±68", "1591", "-360.6", "1.91", "49.6%", "12", "Faults",
                 "0.52", "31.4", "p50", "p99", "Time-", " 3"):
        assert cell in text, cell


def test_a_wide_terminal_gets_one_line_headers(filled: Store) -> None:
    console = Console(record=True, width=160)
    render(leaderboard(filled, "classic", samples=50), "table", "classic", console=console)
    text = console.export_text()
    assert "Avg score" in text and "Think p50 ms" in text and "Think p99 ms" in text and "Timeouts" in text


def test_markdown(filled: Store) -> None:
    text = render(leaderboard(filled, "classic", samples=50), "md", "classic")
    lines = text.splitlines()
    assert lines[0].startswith("| # | Bot | Rating | ± | Elo |")
    assert len([line for line in lines if line.startswith("|")]) == 2 + 4 and lines[2].startswith("| 1 | ann |")
    # dee played one match and lost it: its rating says only "at most this"
    assert lines[-1].startswith("**Note:** ≤: dee never won a pairwise game")


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
    written = export(every_board(filled), target)
    crosstables = ["classic-crosstable.html", "classic-crosstable.json", "classic-crosstable.md"]
    assert sorted(p.name for p in written) == [*crosstables, "classic.csv", "classic.html", "classic.json",
                                               "classic.md"]
    filled.save_match(extreme("x1", [("ann", 3, 1), ("bob", 9, 2)]))
    written = export(every_board(filled), target)
    assert sorted(p.name for p in written) == [
        *crosstables, "classic.csv", "classic.html", "classic.json", "classic.md",
        "extreme-crosstable.html", "extreme-crosstable.json", "extreme-crosstable.md",
        "extreme.csv", "extreme.html", "extreme.json", "extreme.md"]
    assert json.loads((target / "extreme.json").read_text())["rows"][0]["bot"] == "ann"
    assert (target / "classic.md").read_text().startswith("# Wizard classic leaderboard\n")


def test_rows_are_dataclasses_with_the_documented_fields() -> None:
    row = LeaderboardRow(1, "a", 1500.0, 10.0, None, 3, 1.0, 2.0, None, 0, 0)
    assert (row.think_p50_ms, row.think_p99_ms, row.timeouts) == (None, None, 0)
    assert render([row], "md", "classic").splitlines()[2] == \
        "| 1 | a | 1500 | ±10 | – | 3 | 1.0 | 2.00 | – | – | – | 0 | 0 |"


# --------------------------------------------------------------------------------------
# Think times, timeouts, metadata, Wizard Extreme's score order
# --------------------------------------------------------------------------------------

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _tournament_of(games: dict[str, list[MatchRecord]], prefix: str) -> str:
    """The id of the fixture's tournament whose match ids start with ``prefix``."""
    return next(t for t, records in games.items() if records[0].match_id.startswith(prefix))


def _latencies_of(records: list[MatchRecord], bot: str) -> list[float]:
    """The latencies of the decisions ``bot`` answered in ``records``."""
    return [latency for record in records for (seat, _), latency in zip(record.actions, record.latencies_ms)
            if record.bots[seat] == bot and latency is not None]


def test_think_times_are_the_percentiles_of_the_answered_decisions(
        played_boards: tuple[Store, dict[str, list[MatchRecord]]]) -> None:
    store, games = played_boards
    everything = [r for records in games.values() for r in records]
    for tournament, records in [(None, everything)] + [(t, r) for t, r in games.items() if t]:
        rows = leaderboard(store, "classic", tournament_id=tournament, samples=20)
        assert rows
        for row in rows:
            latencies = _latencies_of(records, row.bot)
            for percent, value in ((50, row.think_p50_ms), (99, row.think_p99_ms)):
                exact = float(np.percentile(latencies, percent, method="inverted_cdf"))
                assert value == pytest.approx(exact, rel=RESOLUTION + 1e-9), (tournament, row.bot, percent)


def test_timeouts_are_counted_per_bot(played_boards: tuple[Store, dict[str, list[MatchRecord]]]) -> None:
    store, games = played_boards
    rows = {r.bot: r for r in leaderboard(store, "classic", samples=20)}
    assert {bot: row.timeouts for bot, row in rows.items()} == {"ann": 1, "bob": 0, "cy": 1, "dee": 0}
    assert rows["cy"].faults == 2 and rows["ann"].faults == 1       # the aborted match counts for neither
    three = _tournament_of(games, "three")
    assert {r.bot: r.timeouts for r in leaderboard(store, "classic", tournament_id=three, samples=20)} == \
        {"ann": 1, "bob": 0, "cy": 1}


def test_metadata_of_a_board(played_boards: tuple[Store, dict[str, list[MatchRecord]]]) -> None:
    from arena.referee.server import SERVER_VERSION

    store, games = played_boards
    three, four = _tournament_of(games, "three"), _tournament_of(games, "four")
    result = board(store.board_snapshot("classic"), samples=20, generated_at=T0)
    meta = result.metadata
    assert meta.generated_at == "2025-03-01T12:00:00Z"
    assert (meta.variant, meta.score_order, meta.arena_version) == ("classic", "higher_is_better", SERVER_VERSION)
    assert meta.tournaments == sorted([three, four, "t-remote"])
    assert (meta.games, meta.games_outside_tournaments) == (8, 1)
    # The remote tournament's options come from its match: the same as the 3-player one's.
    classic_options = {"rounds": 3, "length": "standard", "bidding": "open", "plus_minus_one": False}
    assert sorted((s.options["players"], s.tournaments, s.games) for s in meta.option_sets) == [
        (3, sorted([three, "t-remote"]), 5), (4, [four], 2)]
    assert all(s.options == {"players": s.options["players"], **classic_options} for s in meta.option_sets)
    one = board(store.board_snapshot("classic", four), min_games=2, samples=20).metadata
    assert (one.tournaments, one.games, one.games_outside_tournaments, one.min_games) == ([four], 2, 0, 2)
    assert [(s.options["players"], s.tournaments) for s in one.option_sets] == [(4, [four])]


def test_every_export_format_carries_the_metadata(played_boards: tuple[Store, dict[str, list[MatchRecord]]],
                                                  tmp_path: Path) -> None:
    store, games = played_boards
    result = board(store.board_snapshot("classic"), samples=20, generated_at=T0)
    tournaments = result.metadata.tournaments
    version = result.metadata.arena_version

    md = render_board(result, "md")
    assert isinstance(md, str)
    head = md.split("\n| # | Bot |")[0]
    assert head.startswith("# Wizard classic leaderboard\n")
    for text in ("**Generated:** 2025-03-01T12:00:00Z", f"arena {version}", ", ".join(tournaments),
                 "1 games outside tournaments", "(they differ between tournaments)", "players 4, rounds 3",
                 "**Games:** 8", "higher scores are better"):
        assert text in head, text

    page = render_board(result, "html")
    assert isinstance(page, str)
    assert '<dl class="metadata">' in page and "<dt>Generated</dt><dd>2025-03-01T12:00:00Z" in page
    assert all(t in page for t in tournaments) and "<dt>Games</dt><dd>8</dd>" in page

    data = json.loads(str(render_board(result, "json")))
    assert data["metadata"]["generated_at"] == "2025-03-01T12:00:00Z"
    assert data["metadata"]["tournaments"] == tournaments and data["metadata"]["games"] == 8
    assert data["metadata"]["score_order"] == "higher_is_better" and data["metadata"]["arena_version"] == version
    assert len(data["metadata"]["option_sets"]) == 2
    assert [r["bot"] for r in data["rows"]] == [r.bot for r in result.rows]

    # CSV: a naive reader sees ordinary rows; the metadata is in meta_* columns of each.
    parsed = list(csv.DictReader(io.StringIO(str(render_board(result, "csv")))))
    assert [p["bot"] for p in parsed] == [r.bot for r in result.rows]
    for line in parsed:
        assert line["meta_generated_at"] == "2025-03-01T12:00:00Z" and line["meta_variant"] == "classic"
        assert line["meta_tournaments"].split() == tournaments and line["meta_games"] == "8"
        assert line["meta_arena_version"] == version and line["meta_score_order"] == "higher_is_better"
        assert len(json.loads(line["meta_option_sets"])) == 2
    assert float(parsed[0]["think_p50_ms"]) == pytest.approx(result.rows[0].think_p50_ms, abs=1e-4)

    written = export(every_board(store), tmp_path / "boards", generated_at=T0)
    assert sorted(p.name for p in written) == ["classic-crosstable.html", "classic-crosstable.json",
                                               "classic-crosstable.md", "classic.csv", "classic.html",
                                               "classic.json", "classic.md"]
    assert json.loads((tmp_path / "boards" / "classic.json").read_text())["metadata"]["games"] == 8
    assert "**Generated:** 2025-03-01T12:00:00Z" in (tmp_path / "boards" / "classic.md").read_text()
    assert '<dl class="metadata">' in (tmp_path / "boards" / "classic.html").read_text()
    assert "meta_generated_at" in (tmp_path / "boards" / "classic.csv").read_text().splitlines()[0]


def test_the_cli_writes_the_metadata_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.cli import main

    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        tid = store.create_tournament({"game": {"variant": "extreme", "players": 3, "rounds": 2}}, master_seed=1)
        for i in range(2):
            record = played(f"x{i}", "extreme", ["ann", "bob", "cy"], seed=i)
            record.tournament_id, record.game_index = tid, i
            store.save_match(record)

    def run(*args: str) -> str:
        with pytest.raises(SystemExit) as done:
            main(["leaderboard", "--db", str(path), *args])
        assert done.value.code == 0
        return capsys.readouterr().out

    assert json.loads(run("--variant", "extreme", "--format", "json"))["metadata"]["tournaments"] == [tid]
    assert f"**Tournaments:** {tid}" in run("--variant", "extreme", "--format", "md")
    assert "<dt>Tournaments</dt><dd>" + tid in run("--variant", "extreme", "--format", "html")
    parsed = list(csv.DictReader(io.StringIO(run("--variant", "extreme", "--format", "csv"))))
    assert {p["meta_tournaments"] for p in parsed} == {tid} and "avg_score_lower_is_better" in parsed[0]
    run("--export", str(tmp_path / "out"))
    exported = json.loads((tmp_path / "out" / "extreme.json").read_text())
    assert exported["metadata"]["option_sets"] == [
        {"options": {"players": 3, "rounds": 2, "destroyer_penalty": 4}, "tournaments": [tid], "games": 2}]


def test_extreme_says_lower_scores_are_better_in_every_format(store: Store) -> None:
    store.save_match(extreme("x1", [("ann", 3, 1), ("bob", 9, 2)]))
    result = board(store.board_snapshot("extreme"), samples=20)
    wide, narrow = Console(record=True, width=160), Console(record=True, width=80)
    render_board(result, "table", console=wide)
    render_board(result, "table", console=narrow)
    assert "Avg score (lower is better)" in wide.export_text()
    folded = narrow.export_text()
    assert "(lower is" in folded and "better)" in folded and max(map(len, folded.splitlines())) <= 80
    assert "| Avg score (lower is better) |" in str(render_board(result, "md"))
    assert "lower scores are better" in str(render_board(result, "md"))
    assert "<th>Avg score (lower is better)</th>" in str(render_board(result, "html"))
    header = str(render_board(result, "csv")).splitlines()[0].split(",")
    assert "avg_score_lower_is_better" in header and "avg_score" not in header
    assert json.loads(str(render_board(result, "json")))["metadata"]["score_order"] == "lower_is_better"
    # Classic keeps its plain header, and says the opposite where it says anything.
    store.save_match(classic("c1", [("ann", 50, 1, 1), ("bob", 10, 2, 0)]))
    plain = board(store.board_snapshot("classic"), samples=20)
    plain_md = str(render_board(plain, "md"))
    assert "| Avg score |" in plain_md and "higher scores are better" in plain_md
    assert "avg_score" in str(render_board(plain, "csv")).splitlines()[0].split(",")


# --------------------------------------------------------------------------------------
# Deals, shared places only, groups that never met, ratings that are only bounds
# --------------------------------------------------------------------------------------


def _render_all(result: Any) -> dict[str, str]:
    """Every format of a board as text (the table as a wide terminal prints it)."""
    console = Console(record=True, width=200)
    render_board(result, "table", console=console)
    texts = {fmt: str(render_board(result, fmt)) for fmt in ("md", "html", "json", "csv")}
    return {**texts, "table": console.export_text()}


def test_tournament_matches_reach_the_rating_with_their_deal(store: Store) -> None:
    # Two deals of one tournament, each played in two rotations (one engine seed each),
    # and a match outside any tournament: three units for the bootstrap, not five.
    tid = store.create_tournament({"deals": "duplicate"}, master_seed=1)
    for index, (seed, seats) in enumerate([(7, [("ann", 9, 1, 0), ("bob", 1, 2, 0)]),
                                           (7, [("bob", 5, 1, 0), ("ann", 2, 2, 0)]),
                                           (8, [("ann", 9, 1, 0), ("bob", 1, 2, 0)]),
                                           (8, [("bob", 1, 2, 0), ("ann", 9, 1, 0)])]):
        record = classic(f"t{index}", seats, tournament_id=tid, game_index=index)
        record.seed = seed
        store.save_match(record)
    store.save_match(classic("alone", [("ann", 9, 1, 0), ("bob", 1, 2, 0)]))
    inputs = store.board_snapshot("classic").ratings
    [(bots, places, deal)] = inputs.deals
    assert len(deal) == 4 and deal[0] == deal[1] != deal[2] == deal[3]
    assert [inputs.bots[b] for b in bots[0]] == ["ann", "bob"] and places[0].tolist() == [1, 2]
    assert sum(int(counts.sum()) for _, _, counts in inputs.tables) == 1     # the match outside
    games = pairwise_from_tables(inputs.tables, len(inputs.bots), deals=inputs.deals)
    assert (games.matches, games.unit_count) == (5, 3)
    # One tournament's board reads only its own matches, with the same deals.
    own = store.board_snapshot("classic", tid).ratings
    assert own.tables == [] and len(own.deals[0][2]) == 4


def test_a_match_of_shared_places_only_is_rated(store: Store) -> None:
    # Every seat forfeited: all share the last place, and every pairwise result is a half.
    store.save_match(played("all-out", "classic", ["ann", "bob", "cy", "dee"], seed=3, forfeited=[True] * 4))
    rows = leaderboard(store, "classic", samples=20)
    assert [row.rating for row in rows] == pytest.approx([1500.0] * 4)
    assert {row.bound for row in rows} == {None}
    assert "| 1500 |" in render(rows, "md", "classic")


def test_groups_that_never_met_are_named_on_every_format(store: Store) -> None:
    for i in range(6):
        store.save_match(classic(f"a{i}", [("ann", 9, 1 + i % 2, 0), ("bob", 5, 2 - i % 2, 0)]))
        store.save_match(classic(f"c{i}", [("cy", 9, 1 + (i % 3 == 0), 0), ("dee", 5, 2 - (i % 3 == 0), 0)]))
    result = board(store.board_snapshot("classic"), samples=50)
    by_bot = {row.bot: row for row in result.rows}
    assert {bot: row.group for bot, row in by_bot.items()} == {"ann": 1, "bob": 1, "cy": 2, "dee": 2}
    # Each group is centred on its own: ann and bob are even, cy won 4 of 6 against dee.
    assert by_bot["ann"].rating == pytest.approx(1500.0) and by_bot["bob"].rating == pytest.approx(1500.0)
    assert by_bot["cy"].rating + by_bot["dee"].rating == pytest.approx(3000.0)
    note = "The bots fall into 2 groups that never played each other"
    texts = _render_all(result)
    for fmt in ("md", "html", "table"):
        assert note in texts[fmt].replace("\n", " ") or note in texts[fmt], fmt
        assert "A: ann, bob; B: cy, dee" in texts[fmt], fmt
    data = json.loads(texts["json"])
    assert any(n.startswith(note) for n in data["notes"])
    assert {r["bot"]: r["group"] for r in data["rows"]} == {"ann": 1, "bob": 1, "cy": 2, "dee": 2}
    assert {p["bot"]: p["group"] for p in csv.DictReader(io.StringIO(texts["csv"]))}["dee"] == "2"
    # A connected board has no groups and no note (one win each way: one would leave a
    # group that never lost to the other, and its ratings only bounds).
    store.save_match(classic("bridge", [("ann", 9, 1, 0), ("cy", 5, 2, 0)]))
    store.save_match(classic("back", [("ann", 5, 2, 0), ("cy", 9, 1, 0)]))
    joined = board(store.board_snapshot("classic"), samples=20)
    assert {row.group for row in joined.rows} == {None}
    assert json.loads(str(render_board(joined, "json")))["notes"] == []


def test_a_perfect_record_is_only_a_lower_bound(store: Store) -> None:
    for i in range(5):
        places = [1, 2 + i % 2, 3 - i % 2]
        store.save_match(classic(f"m{i}", [("ace", 50, places[0], 0), ("bob", 20, places[1], 0),
                                           ("cy", 10, places[2], 0)]))
    result = board(store.board_snapshot("classic"), samples=50)
    ace = result.rows[0]
    assert (ace.bot, ace.bound) == ("ace", "lower") and [r.bound for r in result.rows[1:]] == [None, None]
    texts = _render_all(result)
    shown = f"≥{ace.rating:.0f}"
    for fmt in ("md", "html", "table"):
        assert shown in texts[fmt] and "ace never lost a pairwise game" in texts[fmt].replace("\n", " "), fmt
    data = json.loads(texts["json"])
    assert data["rows"][0]["bound"] == "lower" and "only a lower bound" in data["notes"][0]
    assert [p["bound"] for p in csv.DictReader(io.StringIO(texts["csv"]))] == ["lower", "", ""]
