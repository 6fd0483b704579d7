"""Exact bids by hand size (1-5, 6-10, 11-15, 16-20 cards): the pure split of a classic
result (arena.stats.summaries.band_bid_counts), a bot's newest matches read from the
store (arena.results.browse.hand_size_bids), the bot page of ``arena web`` and the
ladder's table. Real engine games of random decisions, in a real database.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from factories.records import played
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from arena.bench.ladder import Ladder, LadderRow, tournament_hand_sizes
from arena.records import MatchRecord, final_places
from arena.results.browse import HAND_SIZE_MATCHES, hand_size_bids
from arena.stats.summaries import HAND_SIZE_BANDS, band_bid_counts, classic_bid_counts
from arena.store import Store
from arena.web import pages
from arena.web.app import create_app
from arena.web.bots import bot_json
from engine import GameConfig, new_game
from engine.classic import hand_sizes


def random_game(config: GameConfig, seed: int) -> dict[str, Any]:
    """The result (as stored) of a real engine game of random decisions."""
    game = new_game(config)
    rng = random.Random(seed)
    while not game.is_over:
        for seat in game.to_act():
            game.apply(seat, game.random_action(seat, rng))
    return game.result().to_json()


def full_game(match_id: str, bots: list[str], seed: int) -> MatchRecord:
    """A real 20-round classic game of three seats (hands of 1 to 20 cards: every band),
    random decisions, wrapped as the referee would (``factories.played`` plays 3 rounds)."""
    config = GameConfig(variant="classic", players=len(bots), seed=seed, rounds=20)
    result = random_game(config, seed)
    return MatchRecord(
        match_id=match_id, variant="classic", config=config.to_dict(), seed=seed, bots=bots,
        bot_versions=["1"] * len(bots), totals=list(result["totals"]),
        places=final_places(list(result["totals"]), [False] * len(bots), True), forfeited=[False] * len(bots),
        result=result, actions=[], latencies_ms=[])


@settings(max_examples=25, deadline=None)
@given(players=st.integers(min_value=3, max_value=6), amigo=st.booleans(), cut=st.integers(min_value=1, max_value=20),
       seed=st.integers(min_value=0, max_value=10**6))
def test_the_bands_split_the_exact_bids_without_losing_any(players: int, amigo: bool, cut: int, seed: int) -> None:
    config = (GameConfig(variant="classic", players=players, length="amigo", seed=seed) if amigo else
              GameConfig(variant="classic", players=players, rounds=min(cut, 60 // players), seed=seed))
    result = random_game(config, seed)
    rounds, exact = classic_bid_counts(result, players)
    seats = list(range(players))
    bands = band_bid_counts(config.to_dict(), result, seats)
    assert [(b.low, b.high) for b in bands] == list(HAND_SIZE_BANDS)
    assert sum(b.rounds for b in bands) == sum(r or 0 for r in rounds)
    assert sum(b.exact for b in bands) == sum(e or 0 for e in exact)
    # Every round falls in the band of its hand size: each band holds players × its rounds.
    sizes = hand_sizes(config)
    for band in bands:
        assert band.rounds == players * sum(1 for size in sizes if band.low <= size <= band.high)
        assert band.rate is None if band.rounds == 0 else 0.0 <= band.rate <= 1.0  # type: ignore[operator]


def test_a_config_the_engine_cannot_read_adds_nothing() -> None:
    bands = band_bid_counts({"variant": "classic", "players": 9}, {"rounds": [[{"bid": 1, "tricks": 1}]]}, [0])
    assert all(b.rounds == 0 and b.rate is None for b in bands)


def fill(store: Store) -> list[MatchRecord]:
    """Classic games of ann, bob and cy (one with ann in two seats, one aborted) and an
    Extreme one; the classic records that count, oldest first."""
    counted = []
    for i in range(4):
        record = full_game(f"c{i}", ["ann", "bob", "cy"][i % 3:] + ["ann", "bob", "cy"][:i % 3], 40 + i)
        store.save_match(record)
        counted.append(record)
    twice = full_game("twice", ["ann", "bob", "ann"], 60)
    store.save_match(twice)
    counted.append(twice)
    aborted = full_game("aborted", ["ann", "bob", "cy"], 61)
    aborted.status = "aborted"
    store.save_match(aborted)
    store.save_match(played("x0", "extreme", ["ann", "bob", "dee"], 70))
    return counted


def test_a_bots_bands_add_up_to_the_boards_exact_bids(store: Store) -> None:
    fill(store)
    figures = hand_size_bids(store, "ann")
    assert (figures.matches, figures.limit, figures.capped) == (5, HAND_SIZE_MATCHES, False)
    board = next(a for a in store.seat_aggregates("classic") if a.bot == "ann")
    assert sum(b.rounds for b in figures.bands) == board.rounds == 6 * 20      # 4 + 2 seats (twice), 20 rounds
    assert sum(b.exact for b in figures.bands) == board.exact_bids
    assert [b.rounds for b in figures.bands] == [6 * 5] * 4
    assert hand_size_bids(store, "dee").matches == 0                            # Extreme only: no bids


def test_only_the_newest_matches_are_read(tmp_path: Path) -> None:
    with Store(str(tmp_path / "arena.db")) as store:
        counted = fill(store)
        figures = hand_size_bids(store, "ann", limit=2)
    assert (figures.matches, figures.capped) == (2, True)
    expected = None
    for record in counted[-2:]:
        seats = [s for s, bot in enumerate(record.bots) if bot == "ann"]
        expected = band_bid_counts(record.config.to_dict(), record.result_json(), seats, expected)
    assert figures.bands == expected


def test_the_bot_page_shows_exact_bids_per_hand_size(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        fill(store)
    client = TestClient(create_app(str(path)))
    data = client.get("/api/bots/ann").json()
    classic = next(v for v in data["variants"] if v["variant"] == "classic")
    extreme = next(v for v in data["variants"] if v["variant"] == "extreme")
    assert extreme["by_hand_size"] is None
    bands = classic["by_hand_size"]["bands"]
    assert [b["cards"] for b in bands] == ["1-5", "6-10", "11-15", "16-20"]
    # The page's overall rate counts the same rounds: completed matches, every seat.
    assert sum(b["rounds"] for b in bands) == classic["rounds"] == 6 * 20
    assert sum(b["exact_bids"] for b in bands) == round(classic["exact_bid_rate"] * classic["rounds"])
    page = client.get("/bots/ann").text
    table = page.split('<table id="bot-hand-sizes"', 1)[1].split("</table>", 1)[0]
    for band in bands:
        assert f'<tr data-cards="{band["cards"]}"><td>{band["cards"]}</td><td>{band["rounds"]}</td>' in table
        assert f'{100 * band["exact_bid_rate"]:.1f}%' in table
    assert "Over all its 5 completed classic matches" in page
    assert 'id="bot-hand-sizes"' not in client.get("/bots/dee").text          # no classic match, no table


def test_the_bot_page_says_when_it_read_only_the_newest_matches(tmp_path: Path) -> None:
    with Store(str(tmp_path / "arena.db")) as store:
        fill(store)
        data = bot_json(store, "ann")
        classic = next(v for v in data["variants"] if v["variant"] == "classic")
        classic["by_hand_size"] = hand_size_bids(store, "ann", limit=2).to_json()
    page = pages.bot(data)
    assert "Over its 2 most recent completed classic matches (the page reads no more)" in page


def test_the_ladder_shows_each_bots_bands(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    with Store(str(path)) as store:
        fill(store)
    hand_sizes_by_bot = tournament_hand_sizes(str(path), ["ann", "bob"])
    rows = [LadderRow("ann", 1510.0, 40.0, 5, 0.3, 1.9, 1.0, 2.0, 0, 0),
            LadderRow("bob", 1490.0, 40.0, 5, 0.3, 2.1, 1.0, 2.0, 0, 0)]
    table = Ladder("classic", 5, ["arena"], rows, {}, hand_sizes_by_bot).table()
    lines = table.splitlines()
    head = lines.index("exact bids by cards per hand (rounds in brackets):")
    assert lines[head + 1].split() == ["bot", "1-5", "6-10", "11-15", "16-20"]
    ann = lines[head + 2].split()
    assert ann[0] == "ann" and ann[2] == "(30)"
    first = hand_sizes_by_bot["ann"].bands[0]
    assert ann[1] == f"{100 * first.exact / first.rounds:.1f}%"
    assert Ladder("extreme", 5, ["arena"], rows, {}).table().count("cards per hand") == 0


@pytest.mark.parametrize("bot", ["bob"])
def test_a_bot_in_every_seat_of_its_matches_counts_each_seat(tmp_path: Path, bot: str) -> None:
    with Store(str(tmp_path / "arena.db")) as store:
        store.save_match(full_game("solo", [bot, bot, bot], 5))
        figures = hand_size_bids(store, bot)
    assert figures.matches == 1 and sum(b.rounds for b in figures.bands) == 3 * 20
