"""A bot's think-time maximum and time-bank use: what the referee records in the
``MatchRecord``, what the store keeps per seat (and fills in when it upgrades an older
database), and what ``/bots/{name}`` and ``/api/bots/{name}`` show. Real SQLite files in
``tmp_path``; matches go in through the store's own API (``factories.played``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from factories.databases import as_schema_1, as_schema_2
from factories.records import played
from starlette.testclient import TestClient

from arena.records import FaultRecord, MatchRecord
from arena.store import SCHEMA_VERSION, Store
from arena.web.app import create_app

BOTS = ["ann", "bob", "cy"]


def seat_max(record: MatchRecord, seat: int) -> float | None:
    """The seat's slowest answer, straight from the record's log."""
    own = [ms for (acting, _), ms in zip(record.actions, record.latencies_ms) if acting == seat and ms is not None]
    return max(own) if own else None


def set_latency(record: MatchRecord, seat: int, nth: int, ms: float | None) -> None:
    """Give the seat's ``nth`` logged decision the latency ``ms`` (None: a fallback)."""
    index = [i for i, (acting, _) in enumerate(record.actions) if acting == seat][nth]
    record.latencies_ms[index] = ms


def stored_seats(path: Path) -> dict[tuple[str, int], tuple[float | None, float | None]]:
    """``(think_max_ms, bank_used_ms)`` by (match id, seat), read with sqlite3 itself."""
    with sqlite3.connect(path) as db:
        rows = db.execute("select m.match_id, s.seat, s.think_max_ms, s.bank_used_ms from match_seats s "
                          "join matches m on m.id = s.match_pk").fetchall()
    return {(match_id, seat): (think, bank) for match_id, seat, think, bank in rows}


def stored_banks(path: Path) -> dict[str, float | None]:
    with sqlite3.connect(path) as db:
        return dict(db.execute("select match_id, time_bank_ms from matches").fetchall())


def with_bank(record: MatchRecord, bank_ms: float, used: list[float]) -> MatchRecord:
    record.time_bank_ms, record.bank_used_ms = bank_ms, used
    return record


# -- the record --------------------------------------------------------------------------


def test_the_record_carries_bank_use_and_old_records_still_load() -> None:
    record = with_bank(played("r1", "classic", BOTS, seed=1), 1000.0, [0.0, 12.5, 1000.0])
    data = json.loads(json.dumps(record.to_json()))
    assert (data["time_bank_ms"], data["bank_used_ms"]) == (1000.0, [0.0, 12.5, 1000.0])
    assert MatchRecord.from_json(data) == record
    # A record from before the fields existed (an older server's RunMatch reply).
    del data["time_bank_ms"], data["bank_used_ms"]
    old = MatchRecord.from_json(data)
    assert (old.time_bank_ms, old.bank_used_ms) == (None, None)


def test_the_referee_records_what_each_seat_drew_from_its_bank(arena_server: Any, tmp_path: Path) -> None:
    # 2 s per decision, a 0.3 s bank: the slow bot's first 3 s answer draws the whole bank
    # and times out, so its seat ends with an empty bank; the honest seats, answering in
    # milliseconds, have 2 s a decision before they would touch theirs, busy machine or not.
    arena = arena_server(bots=["honest0", "honest1"], move_time=2.0, time_bank=0.3, grace=1.0)
    arena.start_bot("slow_bot.py", "slow", "--slow", "1", "--sleep-ms", "3000")
    record = arena.run_match(["slow", "honest0", "honest1"])
    assert record.time_bank_ms == 300.0
    assert record.bank_used_ms is not None and record.bank_used_ms[0] == 300.0
    assert [f.kind for f in record.faults if f.seat == 0] == ["timeout"]
    assert all(0.0 <= used < 300.0 for used in record.bank_used_ms[1:])
    path = tmp_path / "arena.db"
    with Store(str(path)) as store:
        store.save_match(record)
        assert store.load_match(record.match_id) == record
    slow = TestClient(create_app(str(path))).get("/api/bots/slow").json()["variants"][0]
    assert (slow["time_bank_matches"], slow["time_bank_emptied"], slow["time_bank_used_max_ms"]) == (1, 1, 300.0)


# -- the store ---------------------------------------------------------------------------


def test_each_seat_stores_its_own_slowest_answer_and_bank_use(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    banked = with_bank(played("banked", "classic", BOTS, seed=1), 1000.0, [0.0, 250.5, 1000.0])
    set_latency(banked, 1, 0, 99.0)                  # bob's slow answer is not ann's maximum
    unbanked = played("unbanked", "classic", BOTS, seed=2)
    for nth in range(sum(1 for seat, _ in unbanked.actions if seat == 2)):
        set_latency(unbanked, 2, nth, None)          # cy answered nothing: no maximum
    with Store(str(path)) as store:
        store.save_matches([banked, unbanked])
        assert store.load_match("banked") == banked
        assert store.load_match("unbanked") == unbanked
    seats = stored_seats(path)
    assert seats[("banked", 1)] == (99.0, 250.5)
    for seat, used in enumerate([0.0, 250.5, 1000.0]):
        assert seats[("banked", seat)] == (seat_max(banked, seat), used)
        assert seats[("unbanked", seat)] == (seat_max(unbanked, seat), None)
    assert seats[("unbanked", 2)] == (None, None)
    assert stored_banks(path) == {"banked": 1000.0, "unbanked": None}


def test_a_schema_2_database_is_upgraded_with_think_maxima_and_the_bank_use_it_can_know(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(str(path)) as store:
        tid = store.create_tournament({"game": {"variant": "classic", "players": 3}, "move_time": 0.5,
                                       "time_bank": 2.0}, master_seed=1)
        # In the tournament (its limits are stored): bob is 1200 + 400 ms past the limit,
        # cy timed out (her whole bank), ann was always in time.
        in_tournament = played("t0", "classic", BOTS, seed=1)
        in_tournament.tournament_id, in_tournament.game_index = tid, 0
        set_latency(in_tournament, 1, 0, 1700.0)
        set_latency(in_tournament, 1, 1, 900.0)
        set_latency(in_tournament, 2, 0, None)
        in_tournament.faults = [FaultRecord(2, "cy", "timeout", "late")]
        # Outside any tournament: its limits were never stored, so its bank use stays unknown.
        standalone = with_bank(played("s0", "classic", BOTS, seed=2), 10000.0, [1.0, 2.0, 3.0])
        store.save_matches([in_tournament, standalone])
        url = as_schema_2(store)
    with Store(url) as upgraded:
        with upgraded.engine.connect() as conn:
            assert conn.exec_driver_sql("select value from arena_meta where key = 'schema_version'").scalar() == str(
                SCHEMA_VERSION)
        # The upgraded database goes on like a new one.
        later = with_bank(played("n0", "classic", BOTS, seed=3), 2000.0, [5.0, 6.0, 7.0])
        upgraded.save_match(later)
    seats = stored_seats(path)
    for seat in range(3):
        assert seats[("t0", seat)][0] == seat_max(in_tournament, seat)
        assert seats[("s0", seat)] == (seat_max(standalone, seat), None)
    assert [seats[("t0", seat)][1] for seat in range(3)] == [0.0, 1600.0, 2000.0]
    assert stored_banks(path) == {"t0": 2000.0, "s0": None, "n0": 2000.0}
    cy = TestClient(create_app(str(path))).get("/api/bots/cy").json()["variants"][0]
    assert cy["think_max_ms"] == max(seat_max(r, 2) or 0.0 for r in (in_tournament, standalone, later))
    assert (cy["time_bank_matches"], cy["time_bank_emptied"], cy["time_bank_used_max_ms"]) == (2, 1, 2000.0)
    with Store(url) as again:                      # no second upgrade: the figures stay
        again.list_bots()
    assert stored_seats(path) == seats


def test_a_version_1_database_is_upgraded_through_to_think_maxima(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    records = [played(f"m{i}", "classic", BOTS, seed=i) for i in range(2)]
    with Store(str(path)) as store:
        store.save_matches(records)
        url = as_schema_1(store)
    with Store(url):
        pass
    seats = stored_seats(path)
    assert {key: think for key, (think, _) in seats.items()} == {
        (r.match_id, seat): seat_max(r, seat) for r in records for seat in range(3)}


# -- the page and the API ----------------------------------------------------------------


def test_bot_page_and_api_show_the_exact_maximum_and_time_bank_use(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    matches = [
        with_bank(played("c0", "classic", BOTS, seed=1), 1000.0, [200.0, 0.0, 0.0]),
        with_bank(played("c1", "classic", BOTS, seed=2), 1000.0, [1000.0, 0.0, 0.0]),    # ann emptied it
        with_bank(played("c2", "classic", BOTS, seed=3), 1000.0, [0.0, 0.0, 1000.0]),
        played("c3", "classic", BOTS, seed=4),                   # bank use not known: not counted
        with_bank(played("c4", "classic", BOTS, seed=5), 1000.0, [1000.0, 0.0, 0.0]),    # aborted: left out
        played("x0", "extreme", BOTS, seed=6),
    ]
    set_latency(matches[0], 1, 0, 500.0)         # bob's: not ann's maximum
    set_latency(matches[4], 0, 0, 900.0)         # in the aborted match: not counted
    matches[4].status = "aborted"
    with Store(str(path)) as store:
        store.save_matches(matches)
    client = TestClient(create_app(str(path)))
    data = {v["variant"]: v for v in client.get("/api/bots/ann").json()["variants"]}
    classic = data["classic"]
    assert classic["think_max_ms"] == max(seat_max(r, 0) or 0.0 for r in matches[:4]) < 500.0
    assert (classic["time_bank_matches"], classic["time_bank_used_avg_ms"], classic["time_bank_used_max_ms"],
            classic["time_bank_emptied"]) == (3, 400.0, 1000.0, 1)
    extreme = data["extreme"]
    assert extreme["think_max_ms"] == seat_max(matches[5], 0)
    assert (extreme["time_bank_matches"], extreme["time_bank_used_avg_ms"], extreme["time_bank_used_max_ms"],
            extreme["time_bank_emptied"]) == (0, None, None, 0)

    page = client.get("/bots/ann")
    assert page.status_code == 200
    table = page.text.split('<table id="bot-variants"', 1)[1].split("</table>", 1)[0]
    assert "<th>Time bank used ms: avg / max per match</th><th>Matches that emptied the bank</th>" in table
    classic_row = table.split('<tr data-variant="classic">', 1)[1].split("</tr>", 1)[0]
    assert f"<td>{classic['think_max_ms']:.2f}</td>" in classic_row
    assert '<td class="time-bank-used">400.00 / 1000.00</td><td class="time-bank-emptied">1 of 3</td>' in classic_row
    extreme_row = table.split('<tr data-variant="extreme">', 1)[1].split("</tr>", 1)[0]
    assert '<td class="time-bank-used">–</td><td class="time-bank-emptied">–</td>' in extreme_row
    assert "upper bound" not in page.text and "any seat" not in page.text
