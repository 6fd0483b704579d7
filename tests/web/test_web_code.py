"""Which code played: a tournament's page and its JSON, and the bot's page, show the
stamp of each started bot's own files (``arena.tournament.bot_files.CodeStamp``) stored
with the tournament's lineup; never the bot's command or folder. A real SQLite file,
read through Starlette's TestClient."""

from __future__ import annotations

from pathlib import Path

from factories.records import played
from starlette.testclient import TestClient

from arena.store import Store
from arena.web.app import create_app

SHA = "0123456789abcdef" * 4
LINEUP = [{"name": "ann", "command": ["/srv/secret-folder/ann.py"], "cwd": "/srv/secret-folder",
           "stamp": {"sha256": SHA, "files": 3, "bytes": 4096}},
          {"name": "bo", "command": ["python3", "-m", "sample_bots.random_bot"]},
          {"name": "cy", "command": ["python3", "-m", "sample_bots.random_bot"]}]


def test_the_tournament_and_bot_pages_show_which_code_played(tmp_path: Path) -> None:
    with Store(str(tmp_path / "arena.db")) as store:
        tid = store.create_tournament({"game": {"variant": "classic", "players": 3}, "bots": LINEUP}, master_seed=1)
        record = played("c0", "classic", ["ann", "bo", "cy"], seed=1)
        record.tournament_id, record.game_index = tid, 0
        store.save_match(record)
    client = TestClient(create_app(str(tmp_path / "arena.db")))
    data = client.get(f"/api/tournaments/{tid}").json()
    assert data["code"] == {"ann": {"sha256": SHA, "files": 3, "bytes": 4096}}
    page = client.get(f"/tournaments/{tid}").text
    assert "sha256 0123456789ab…, 3 files, 4.0 KiB" in page and "secret-folder" not in page
    assert client.get("/api/bots/ann").json()["code"] == [{"tournament": tid, "sha256": SHA, "files": 3,
                                                            "bytes": 4096}]
    assert f"sha256 {SHA}" in client.get("/bots/ann").text
    assert client.get("/api/bots/bo").json()["code"] == []
