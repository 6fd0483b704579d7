"""The crosstable (arena.results.crosstable): counts checked against a brute-force count
over the places stored in a real SQLite file, filled with real short engine games."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from factories.records import played
from rich.table import Table

from arena.records import MatchRecord
from arena.results.crosstable import FORMATS, Crosstable, Pairing, crosstable, to_json
from arena.results.leaderboard import leaderboard
from arena.results.render import render_crosstable as render
from arena.store import Store

BOTS = ["ann", "bob", "cy", "dee", "eve"]


@pytest.fixture
def games(tmp_path: Path) -> tuple[Store, str, list[MatchRecord]]:
    """Real classic games of 3 to 5 of five bots, half in a tournament; one with a forfeited
    seat; one aborted (never counted); and one Wizard Extreme game (another variant)."""
    store = Store(str(tmp_path / "arena.db"))
    tid = store.create_tournament({"game": {"variant": "classic", "rounds": 3}}, master_seed=1)
    records = []
    for i in range(24):
        size = 3 + i % 3
        seated = [BOTS[(i + k * (1 + i % 2)) % len(BOTS)] for k in range(size)]
        forfeited = [k == 1 for k in range(size)] if i == 5 else None
        record = played(f"m{i}", "classic", seated, seed=i, forfeited=forfeited)
        if i % 2:
            record.tournament_id, record.game_index = tid, i
        records.append(record)
    store.save_matches(records)
    aborted = played("aborted", "classic", ["ann", "bob", "cy"], seed=99)
    aborted.status = "aborted"
    store.save_match(aborted)
    store.save_match(played("x0", "extreme", ["ann", "bob", "cy"], seed=7))
    return store, tid, records


def brute_force(store: Store, variant: str, tournament_id: str | None = None) -> dict[tuple[str, str], Pairing]:
    """Every ordered pair of seats of every completed stored match, counted one by one."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for match in store.list_matches(variant=variant, tournament_id=tournament_id, limit=10_000):
        if match.status != "completed":
            continue
        for i, bot in enumerate(match.bots):
            for j, opponent in enumerate(match.bots):
                if i == j or bot == opponent:
                    continue
                mine, theirs = match.places[i], match.places[j]
                c = counts.setdefault((bot, opponent), Counter())
                c["games"] += 1
                c["ahead" if mine < theirs else "behind" if mine > theirs else "level"] += 1
                c["diff"] += theirs - mine
    return {key: Pairing(*key, c["games"], c["ahead"], c["behind"], c["level"], c["diff"] / c["games"])
            for key, c in counts.items()}


def test_counts_equal_a_brute_force_count_of_the_stored_places(games: tuple[Store, str, list[MatchRecord]]) -> None:
    store, tid, records = games
    for tournament in (None, tid):
        table = crosstable(store, "classic", tournament)
        expected = brute_force(store, "classic", tournament)
        assert table.pairs.keys() == expected.keys()
        for key, pairing in table.pairs.items():
            assert (pairing.games, pairing.ahead, pairing.behind, pairing.level) == (
                expected[key].games, expected[key].ahead, expected[key].behind, expected[key].level)
            assert pairing.avg_place_diff == pytest.approx(expected[key].avg_place_diff)
            # Both directions agree: one's ahead is the other's behind.
            other = table.pairs[(key[1], key[0])]
            assert (other.games, other.ahead, other.behind, other.level) == (
                pairing.games, pairing.behind, pairing.ahead, pairing.level)
            assert other.avg_place_diff == pytest.approx(-pairing.avg_place_diff)
    # The data exercises what the counting must get right: ties, and a forfeit placed last.
    assert any(p.level for p in crosstable(store, "classic").pairs.values())
    forfeit = records[5]
    assert forfeit.forfeited[1] and forfeit.places[1] == len(forfeit.bots)
    assert crosstable(store, "extreme").pairs[("ann", "bob")].games == 1


def test_a_bot_in_two_seats_does_not_play_itself(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "arena.db"))
    record = played("m", "classic", ["ann", "ann", "bob"], seed=3)
    store.save_match(record)
    table = crosstable(store, "classic")
    assert set(table.pairs) == {("ann", "bob"), ("bob", "ann")}
    assert table.pairs[("ann", "bob")].games == 2      # two seats, two meetings
    assert table.pairs == brute_force(store, "classic")


def test_bots_are_in_leaderboard_order(games: tuple[Store, str, list[MatchRecord]]) -> None:
    store, tid, _ = games
    for tournament in (None, tid):
        assert crosstable(store, "classic", tournament).bots == [
            row.bot for row in leaderboard(store, "classic", tournament, samples=20)]


def test_empty(tmp_path: Path) -> None:
    table = crosstable(Store(str(tmp_path / "arena.db")), "classic")
    assert (table.bots, table.pairs) == ([], {})
    assert to_json(table) == {"variant": "classic", "tournament_id": None, "bots": [], "pairs": []}
    for fmt in FORMATS:
        assert render(table, fmt)


def test_formats(games: tuple[Store, str, list[MatchRecord]]) -> None:
    store, tid, _ = games
    table = crosstable(store, "classic", tid)
    data = json.loads(str(render(table, "json")))
    assert data == to_json(table)
    assert data["tournament_id"] == tid and data["bots"] == table.bots
    assert len(data["pairs"]) == len(table.pairs)
    first = data["pairs"][0]
    assert set(first) == {"bot", "opponent", "games", "ahead", "behind", "level", "avg_place_diff"}
    pairing = table.pairs[(first["bot"], first["opponent"])]
    cell = f"{pairing.ahead}-{pairing.behind}-{pairing.level} ({pairing.avg_place_diff:+.2f})"

    md = str(render(table, "md"))
    assert md.startswith(f"# Wizard classic crosstable, tournament {tid}\n")
    assert cell in md and len([line for line in md.splitlines() if line.startswith("| ")]) == len(table.bots) + 1

    page = str(render(table, "html"))
    assert page.startswith("<!DOCTYPE html>") and '<table id="crosstable">' in page
    assert page.count("<tr data-bot=") == len(table.bots)
    assert f'data-opponent="{first["opponent"]}" data-games="{pairing.games}"' in page
    assert isinstance(render(table, "table"), Table)
    with pytest.raises(ValueError, match="unknown crosstable format 'xml'"):
        render(table, "xml")


def test_html_escapes_names() -> None:
    table = Crosstable("classic", None, ["a<b", "c&d"], {
        ("a<b", "c&d"): Pairing("a<b", "c&d", 2, 1, 0, 1, 0.5),
        ("c&d", "a<b"): Pairing("c&d", "a<b", 2, 0, 1, 1, -0.5)})
    page = str(render(table, "html"))
    assert "a&lt;b" in page and "c&amp;d" in page and "a<b" not in page


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


@pytest.mark.slow
def test_cli(games: tuple[Store, str, list[MatchRecord]], tmp_path: Path) -> None:
    store, tid, _ = games
    shown = arena("crosstable", "--db", "arena.db", "--tournament", tid, "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == to_json(crosstable(store, "classic", tid))
    table = arena("crosstable", "--db", "arena.db", "--variant", "extreme", cwd=tmp_path)
    assert table.returncode == 0 and "Wizard extreme crosstable" in table.stdout
    for args, message in [(["--format", "csv"], "not one of"), (["--variant", "chess"], "not one of"),
                          (["--tournament", "nope"], "nope"), (["--tournament", tid, "--variant", "extreme"],
                                                               "is classic, not extreme")]:
        done = arena("crosstable", "--db", "arena.db", *args, cwd=tmp_path)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert message in done.stderr and done.stdout == ""
