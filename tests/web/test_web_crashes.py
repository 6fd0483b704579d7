"""Bot crashes on ``arena web``: the bot page and its JSON show each variant's crash count
and last reason, its crashes and faults in all and its newest crash with its tournament
(the same numbers the boards count), and the web's board has a Crashes column only when
some bot of it crashed. A real SQLite file in ``tmp_path``, read through Starlette's
TestClient."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from factories.records import played
from starlette.testclient import TestClient

from arena.records import BotCrash, FaultRecord
from arena.store import Store
from arena.web.app import create_app

OOM = "killed: out of memory (limit 512 MiB)"
BOTS = ["ann", "evil", "cy"]


def filled(path: Path, crashes: list[BotCrash], faults: int = 0) -> str:
    """A database of a classic tournament and an extreme game by BOTS, and ``crashes``
    (``t-?`` as their tournament id stands for the tournament's); with ``faults``, each
    classic match charges evil that many timeouts. Returns the tournament's id."""
    with Store(str(path)) as store:
        tid = store.create_tournament({"game": {"variant": "classic", "players": 3}}, master_seed=1)
        for i in range(3):
            record = played(f"c{i}", "classic", BOTS[i:] + BOTS[:i], seed=i)
            record.tournament_id, record.game_index = tid, i
            record.faults = [FaultRecord(record.bots.index("evil"), "evil", "timeout", "no answer within 1 s", k)
                             for k in range(faults)]
            store.save_match(record)
        store.save_match(played("x0", "extreme", BOTS, seed=9))
        for one in crashes:
            if one.tournament_id == "t-?":
                one.tournament_id = tid
            store.save_crash(one)
    return tid


def test_the_bot_page_shows_crashes_per_variant(tmp_path: Path) -> None:
    at = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
    filled(tmp_path / "arena.db", [
        BotCrash("evil", "exited with code 1", 1, "t-?", at=at),
        BotCrash("evil", OOM, None, "t-?", at=at.replace(hour=13)),
        BotCrash("evil", "exited with <code> 2", 2, variant="extreme", at=at),
        BotCrash("ghost", "did not connect within 30 s", None, "t-?", at=at),   # never played a match
    ])
    client = TestClient(create_app(str(tmp_path / "arena.db")))
    data = client.get("/api/bots/evil").json()
    assert data["crashes"] == [
        {"variant": "classic", "count": 2, "last_reason": OOM, "last_at": "2025-05-01T13:00:00+00:00"},
        {"variant": "extreme", "count": 1, "last_reason": "exited with <code> 2",
         "last_at": "2025-05-01T12:00:00+00:00"},
    ]
    page = client.get("/bots/evil").text
    table = page.split('<table id="bot-crashes"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr data-variant="(\w+)"><td>\w+</td><td>(\d+)</td><td>([^<]*)</td>', table) == [
        ("classic", "2", OOM), ("extreme", "1", "exited with &lt;code&gt; 2")]
    assert "2025-05-01 13:00:00" in table and "<code>" not in page
    assert '<p id="bot-crashes">No crashes.</p>' in client.get("/bots/ann").text
    assert client.get("/api/bots/ann").json()["crashes"] == []
    # A bot whose process never got to play has a page: its crashes.
    ghost = client.get("/bots/ghost")
    assert ghost.status_code == 200 and "did not connect within 30 s" in ghost.text
    assert client.get("/bots/nobody").status_code == 404


def test_the_bot_page_shows_its_crash_and_fault_counts_and_its_last_crash(tmp_path: Path) -> None:
    at = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
    tid = filled(tmp_path / "arena.db", [
        BotCrash("evil", "exited with code 1", 1, "t-?", at=at),
        BotCrash("evil", OOM, None, "t-?", restarted=True, at=at.replace(hour=13)),
        BotCrash("evil", "exited with <code> 2", 2, variant="extreme", at=at.replace(hour=9)),
    ], faults=2)
    client = TestClient(create_app(str(tmp_path / "arena.db")))
    data = client.get("/api/bots/evil").json()
    # The boards' counts: crashes over its variants, faults over its matches.
    boards = [client.get(f"/api/leaderboard/{v}").json()["rows"] for v in ("classic", "extreme")]
    evil = [row for rows in boards for row in rows if row["bot"] == "evil"]
    assert data["crash_count"] == sum(row["crashes"] for row in evil) == 3
    assert data["fault_count"] == sum(row["faults"] for row in evil) == 6
    assert data["last_crash"] == {"variant": "classic", "reason": OOM, "exit_code": None, "tournament_id": tid,
                                  "at": "2025-05-01T13:00:00+00:00", "restarted": True}

    page = client.get("/bots/evil").text
    troubles = page.split('<dl class="metadata" id="bot-troubles">', 1)[1].split("</dl>", 1)[0]
    assert '<a id="bot-crash-count" href="#bot-crashes">3</a>' in troubles
    assert '<a id="bot-fault-count" href="#bot-faults">6</a>' in troubles
    last = troubles.split('<dd id="bot-last-crash">', 1)[1].split("</dd>", 1)[0]
    assert f'<span class="reason">{OOM}</span>' in last and 'datetime="2025-05-01T13:00:00+00:00"' in last
    assert f'tournament <a href="/tournaments/{tid}">{tid}</a>' in last and "classic" in last

    # A bot that never crashed nor faulted: zeros, and no last crash.
    ann_data = client.get("/api/bots/ann").json()
    assert (ann_data["crash_count"], ann_data["fault_count"], ann_data["last_crash"]) == (0, 0, None)
    ann = client.get("/bots/ann").text
    assert '<a id="bot-crash-count" href="#bot-crashes">0</a>' in ann and "bot-last-crash" not in ann


def test_the_web_board_has_a_crashes_column_only_when_a_bot_crashed(tmp_path: Path) -> None:
    filled(tmp_path / "clean.db", [BotCrash("evil", OOM, variant="extreme")])
    tid = filled(tmp_path / "crashed.db", [BotCrash("evil", OOM, None, "t-?")])
    clean = TestClient(create_app(str(tmp_path / "clean.db")))
    crashed = TestClient(create_app(str(tmp_path / "crashed.db")))

    page = clean.get("/leaderboard/classic").text
    assert "Crashes" not in page and 'class="crash"' not in page
    assert [row["crashes"] for row in clean.get("/api/leaderboard/classic").json()["rows"]] == [0, 0, 0]
    extreme = clean.get("/leaderboard/extreme").text
    assert "<th data-sort=\"num\" tabindex=\"0\">Crashes</th>" in extreme
    assert f'<p class="crash">crash: evil crashed once: {OOM}</p>' in extreme

    for query in ("", f"?tournament={tid}"):
        page = crashed.get(f"/leaderboard/classic{query}").text
        table = page.split('<table id="board"', 1)[1].split("</table>", 1)[0]
        evil = re.search(r'<tr data-bot="evil"[^>]*>(.*?)</tr>', table)
        assert evil is not None and evil.group(1).endswith("<td>1</td>")
        assert f'<p class="crash">crash: evil crashed once: {OOM}</p>' in page
