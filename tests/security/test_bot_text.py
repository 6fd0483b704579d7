"""A bot's text never reaches a screen raw: a bot whose ``Hello.version``, class name and
error messages carry escape sequences (an OSC window title, a screen clear, C1 controls,
a bidi override: tests/bots/escape_bot.py) plays a real ``arena tournament``; then the
arena's own log lines, ``arena show``, ``arena matches``, ``arena leaderboard``, the store
and ``arena web``'s pages and JSON hold no control character. The bot's own output
(its log file) is its own, and not looked at.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from factories import TEST_BOTS
from factories.commands import arena_stdout
from factories.web_server import WebServer

from arena.referee import auth
from arena.store import Store
from arena.wire.bot_text import REPLACEMENT
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb

ESCAPE_BOT = TEST_BOTS / "escape_bot.py"
RANDOM = f"{sys.executable} -m sample_bots.random_bot"
# `arena` as `python -m arena.cli`, with every log line of the arena at INFO on stderr
# (a connection's version, each fault's message), not only the warnings.
LOGGED_ARENA = ("import logging, runpy, sys; logging.basicConfig(level=logging.INFO); "
                "sys.argv = ['arena', *sys.argv[1:]]; runpy.run_module('arena.cli', run_name='__main__')")


def controls(text: str) -> set[str]:
    """The characters of ``text`` that act on a terminal or turn text around (line breaks
    and tabs of the output's own layout aside)."""
    return {c for c in text if not c.isprintable() and c not in "\n\t"}


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included (a JSON escape ``\\u001b`` is an ESC too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def assert_clean(text: str, where: str) -> None:
    found = controls(text)
    assert not found, f"{where} holds {sorted(map(ascii, found))}"


def assert_clean_json(value: Any, where: str) -> None:
    for text in strings(value):
        assert_clean(text, where)


def test_a_hostile_name_is_refused_in_printable_words() -> None:
    """Hello.name must be the token's bot: a name with escapes is refused, and the refusal
    (the status the bot gets, the warning the arena logs) quotes it escaped."""
    hello = pb.BotMessage(hello=pb.Hello(name="esc\x1b]0;pwned\x07\x9b2J\u202e"))
    code, details = auth.hello_problem(hello, "esc") or (None, "")
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert_clean(details, "the refusal")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_bots_escape_sequences_reach_no_output(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    done = subprocess.run(
        [sys.executable, "-c", LOGGED_ARENA, "tournament", "--no-samples", "--players", "3", "--rounds", "2",
         "--games", "3", "--bot", f"esc={sys.executable} {ESCAPE_BOT}", "--bot", f"r1={RANDOM}",
         "--bot", f"r2={RANDOM}", "--db", str(db)],
        cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert_clean(done.stdout, "arena tournament's output")
    assert_clean(done.stderr, "the arena's log lines")
    assert "bot esc connected" in done.stderr and "bot_error fault" in done.stderr, done.stderr   # they were logged

    # The store keeps the version and the faults' messages clean (the text around stays).
    store = Store(str(db))
    try:
        matches = arena_stdout("matches", "--db", str(db), "--format", "json", cwd=tmp_path)
        listed = json.loads(matches)
        assert_clean_json(listed, "arena matches --format json")
        ids = [m["match_id"] for m in listed]
        assert ids
        for match_id in ids:
            record = store.load_match(match_id)
            version = record.bot_versions[record.bots.index("esc")]
            assert version.startswith("1.0") and REPLACEMENT in version and "evil" in version
            assert_clean(version, "the stored version")
            errors = [f.message for f in record.faults if f.kind == "bot_error"]
            assert errors and all("bid raised ValueError" in m for m in errors)
            for message in errors:
                assert_clean(message, "a stored fault")
    finally:
        store.close()

    for match_id in ids:
        shown = arena_stdout("show", "--db", str(db), match_id, cwd=tmp_path)
        assert f"esc 1.0{REPLACEMENT}" in shown and "bot_error" in shown, shown
        assert_clean(shown, f"arena show {match_id}")
    assert_clean(arena_stdout("leaderboard", "--db", str(db), cwd=tmp_path), "arena leaderboard")
    assert_clean_json(json.loads(arena_stdout("leaderboard", "--db", str(db), "--format", "json", cwd=tmp_path)),
                      "arena leaderboard --format json")

    web = WebServer(db)
    try:
        tournament = listed[0]["tournament_id"]
        pages = ["/", "/leaderboard/classic", f"/tournaments/{tournament}", "/bots/esc",
                 *(f"/matches/{match_id}" for match_id in ids)]
        apis = ["/api/leaderboard/classic", f"/api/tournaments/{tournament}", "/api/bots/esc",
                *(f"/api/matches/{match_id}" for match_id in ids)]
        for path in pages:
            with urllib.request.urlopen(web.url + path, timeout=60) as answer:
                assert_clean(answer.read().decode(), f"arena web {path}")
        for path in apis:
            with urllib.request.urlopen(web.url + path, timeout=60) as answer:
                body = answer.read().decode()
            assert_clean(body, f"arena web {path}")
            assert_clean_json(json.loads(body), f"arena web {path}")
        with urllib.request.urlopen(web.url + "/api/bots/esc", timeout=60) as answer:
            assert f"1.0{REPLACEMENT}" in answer.read().decode("utf-8")   # the version is there, cleaned
    finally:
        web.stop()
