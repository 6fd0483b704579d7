"""A match seated by one-run tokens (a runner that started each bot's processes itself
and chose one process of each bot for this match): a seat whose stream drops goes back
only to a stream of the token the match's mapping names now, never to another process
of the same bot, which may have played another rotation of the same deal. Real server,
real bot processes (tests/bots)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bots.harness import ArenaThread, assert_played_honestly, read_report, seat_faults

from arena.records import MatchSpec

FAST = {"move_time": 0.3, "time_bank": 0.3}
CONFIG = {"variant": "classic", "players": 3, "seed": 11, "rounds": 3}


def admit(arena: ArenaThread, name: str, token: str) -> None:
    """Accept ``token`` for bot ``name`` (on the server's loop, as a runner does)."""
    arena.loop.call_soon_threadsafe(arena.arena.host.add_local_bot, name, token)


def started(arena: ArenaThread, tokens: dict[str, str]) -> Any:
    """Start the match of ``dying`` (its chosen process), ``b`` and ``c`` with ``tokens``."""
    spec = MatchSpec(config=dict(CONFIG), bots=["dying", "b", "c"], match_id=f"m-{time.monotonic_ns()}", **FAST)
    return arena.submit(arena.arena.host.run_match(spec, tokens=tokens))


def test_a_dropped_seat_goes_to_no_other_process_of_the_bot(arena_server: Any, tmp_path: Path) -> None:
    arena: ArenaThread = arena_server(bots=["b", "c"], grace=1.0)
    admit(arena, "dying", "chosen")
    arena.start_bot("dying_bot.py", "dying", "--answers", "2", token="chosen", wait=False)
    arena.call(arena.arena.host.wait_for_tokens(["chosen"], 30))
    other = tmp_path / "other.jsonl"         # another process of the bot, with a free slot
    admit(arena, "dying", "other")
    arena.start_bot("random_bot.py", "dying", token="other", report=other, max_matches=4, wait=False)
    arena.call(arena.arena.host.wait_for_tokens(["other"], 30))
    tokens = {"dying": "chosen", "b": arena.arena.host.roster.by_name["b"][0].token,
              "c": arena.arena.host.roster.by_name["c"][0].token}
    record = started(arena, tokens).result(60)
    assert seat_faults(record, 0) == ["disconnect"] and record.forfeited[0], record.faults
    assert not any(m["msg"] == "match_started" for m in read_report(other)), "the other process got the seat"
    assert_played_honestly(record, [1, 2])


def test_a_dropped_seat_goes_to_the_token_the_mapping_names_now(arena_server: Any, tmp_path: Path) -> None:
    arena: ArenaThread = arena_server(bots=["b", "c"], grace=5.0)
    admit(arena, "dying", "first")
    first = arena.start_bot("dying_bot.py", "dying", "--answers", "2", token="first", wait=False)
    arena.call(arena.arena.host.wait_for_tokens(["first"], 30))
    tokens = {"dying": "first", "b": arena.arena.host.roster.by_name["b"][0].token,
              "c": arena.arena.host.roster.by_name["c"][0].token}
    match = started(arena, tokens)
    assert first.wait(30) == 3
    # The runner restarts the process with a new token and names it in the live mapping.
    arena.loop.call_soon_threadsafe(tokens.__setitem__, "dying", "restarted")
    admit(arena, "dying", "restarted")
    report = tmp_path / "restarted.jsonl"
    arena.start_bot("random_bot.py", "dying", token="restarted", report=report, wait=False)
    record = match.result(60)
    assert seat_faults(record, 0) == ["disconnect"] and not record.forfeited[0], record.faults
    assert any(m["msg"] == "match_started" for m in read_report(report))
    assert_played_honestly(record, [1, 2])
