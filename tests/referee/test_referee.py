"""The referee against real misbehaving bots: every fault is recorded exactly, the match
always finishes, and the honest bots' games are unaffected.

One real server (127.0.0.1, port 0) for the module (``module_arena_server``); three honest bot processes stay
connected throughout; each test starts its own fault bot process. Games are short
(classic, 2 rounds) and limits small (0.2 s per decision, grace 1 s).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest
from bots.harness import ArenaThread, assert_played_honestly, read_report, seat_faults

from arena.records import MatchSpec
from engine import replay_record

HONEST = ["honest0", "honest1", "honest2"]
FAST = {"move_time": 0.2, "time_bank": 0.3}


def _report_until(report: Path, msg: str, timeout: float = 5.0) -> list[dict]:
    """The bot's report once it has logged a ``msg`` message: the bot process writes it
    some time after the server sent it, possibly after run_match has returned."""
    deadline = time.monotonic() + timeout
    while True:
        received = read_report(report)
        if any(m["msg"] == msg for m in received):
            return received
        assert time.monotonic() < deadline, f"the bot never reported {msg!r}"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def arena(module_arena_server: Any) -> ArenaThread:
    # Keepalive every 0.5 s (5 s in production) so a frozen bot is found within the test.
    return module_arena_server(bots=HONEST, move_time=0.2, time_bank=0.3, max_faults=3, grace=1.0, keepalive_ms=500)


def test_honest_match_completes_and_replays(arena: ArenaThread) -> None:
    # honest0 fills two seats: both are played over its one connection.
    record = arena.run_match(["honest0", "honest1", "honest2", "honest0"], config={
        "variant": "classic", "players": 4, "seed": 5, "rounds": 3})
    assert record.status == "completed"
    assert record.faults == []
    assert_played_honestly(record, [0, 1, 2, 3])
    assert len(record.latencies_ms) == len(record.actions)
    game = replay_record(record.config, record.actions)
    assert list(game.result().totals) == record.totals


def test_extreme_match_completes(arena: ArenaThread) -> None:
    record = arena.run_match(HONEST, config={"variant": "extreme", "players": 3, "seed": 2, "rounds": 1})
    assert record.status == "completed" and record.variant == "extreme"
    assert_played_honestly(record, [0, 1, 2])


def test_slow_bot_times_out_and_late_answers_do_not_count_twice(arena: ArenaThread) -> None:
    # 0.6 s answers: the first uses up the 0.3 s bank and times out at 0.5 s, the second
    # times out at 0.2 s. Both late answers still arrive and must be discarded silently.
    arena.start_bot("slow_bot.py", "slow", "--slow", "2", "--sleep-ms", "600")
    record = arena.run_match(["slow", *HONEST], **FAST)
    assert seat_faults(record, 0) == ["timeout", "timeout"]
    assert not record.forfeited[0]
    assert_played_honestly(record, [1, 2, 3])
    seat0 = [ms for (seat, _), ms in zip(record.actions, record.latencies_ms) if seat == 0]
    assert seat0[:2] == [None, None] and all(ms is not None for ms in seat0[2:])


def test_time_bank_absorbs_a_slow_answer(arena: ArenaThread, tmp_path: Path) -> None:
    report = tmp_path / "banked.jsonl"
    arena.start_bot("slow_bot.py", "banked", "--slow", "1", "--sleep-ms", "350", report=report)
    # A 30 s bank: however busy the machine, the slow answer cannot use it all.
    record = arena.run_match(["banked", *HONEST], move_time=0.2, time_bank=30.0)
    assert record.faults == []
    first = next(ms for (seat, _), ms in zip(record.actions, record.latencies_ms) if seat == 0)
    requests = [m for m in read_report(report) if m["msg"] == "request"]
    assert requests[0]["time_bank_ms"] == 30000 and requests[0]["deadline_ms"] == 200
    # The referee's accounting, not a time: the answer (asleep past its limit whatever the
    # load) went past the limit, and the next request's bank is down by exactly the time
    # past the limit that the log records for it (one measurement; whole ms on the wire).
    past_limit = first - requests[0]["deadline_ms"]
    charged = requests[0]["time_bank_ms"] - requests[1]["time_bank_ms"]
    assert past_limit > 0 and abs(charged - past_limit) <= 1


def test_illegal_cards_are_faults_and_the_third_forfeits(arena: ArenaThread, tmp_path: Path) -> None:
    report = tmp_path / "illegal.jsonl"
    arena.start_bot("illegal_bot.py", "illegal", report=report)
    record = arena.run_match(["illegal", *HONEST], config={
        "variant": "classic", "players": 4, "seed": 1, "rounds": 3})
    assert seat_faults(record, 0) == ["illegal"] * 3
    assert record.forfeited == [True, False, False, False]
    assert record.places[0] == 4
    assert_played_honestly(record, [1, 2, 3])
    received = _report_until(report, "match_ended")
    faults = [m for m in received if m["msg"] == "fault"]
    assert [f["faults"] for f in faults] == [1, 2, 3] and [f["forfeited"] for f in faults] == [False, False, True]
    ended = [m for m in received if m["msg"] == "match_ended"]
    assert ended and ended[-1]["forfeited"] and ended[-1]["places"][0] == 4
    # After forfeiting, the seat gets no more requests.
    last_fault_at = received.index(faults[-1])
    assert not any(m["msg"] == "request" for m in received[last_fault_at:])


def test_garbage_and_wrong_request_ids(arena: ArenaThread) -> None:
    # It quits once it has forfeited: leaving after a forfeit is no further fault.
    bot = arena.start_bot("garbage_bot.py", "garbage", "--quit-on-forfeit", "1")
    record = arena.run_match(["garbage", *HONEST], config={"variant": "classic", "players": 4, "seed": 1,
                                                           "rounds": 4})
    assert bot.wait(30) == 4
    # An unparseable bid, an answer naming a request id never sent to it, a
    # prediction for a BID request.
    assert seat_faults(record, 0) == ["malformed", "unexpected", "malformed"]
    assert record.forfeited[0] and record.places[0] == 4
    assert_played_honestly(record, [1, 2, 3])


def test_a_repeated_answer_is_ignored_whatever_the_delay(arena: ArenaThread, tmp_path: Path) -> None:
    # Each answer is sent twice at once, once more with the next answer, and again after
    # the match ended: never applied twice, never a fault, never a Fault message.
    report = tmp_path / "double.jsonl"
    arena.start_bot("double_bot.py", "double", report=report)
    record = arena.run_match(["double", *HONEST], config={"variant": "classic", "players": 4, "seed": 1,
                                                          "rounds": 3})
    assert_played_honestly(record, [0, 1, 2, 3])
    again = arena.run_match(["double", *HONEST], config={"variant": "classic", "players": 4, "seed": 2,
                                                         "rounds": 2})
    assert_played_honestly(again, [0, 1, 2, 3])     # the repeats after the first match charged nothing here
    assert not [m for m in read_report(report) if m["msg"] == "fault"]


def test_silent_bot_times_out_three_times_and_forfeits(arena: ArenaThread) -> None:
    arena.start_bot("silent_bot.py", "silent")
    record = arena.run_match(["silent", *HONEST], **FAST)
    assert seat_faults(record, 0) == ["timeout"] * 3
    assert record.forfeited[0] and record.places[0] == 4
    assert_played_honestly(record, [1, 2, 3])


def test_a_dead_bot_forfeits_after_the_grace_period(arena: ArenaThread) -> None:
    bot = arena.start_bot("dying_bot.py", "dying", "--answers", "2")
    started = time.monotonic()
    record = arena.run_match(["dying", *HONEST], **FAST)
    assert bot.wait(30) == 3
    assert seat_faults(record, 0) == ["disconnect"]
    assert record.forfeited[0] and record.places[0] == 4
    assert time.monotonic() - started >= 1.0      # it waited out the grace period
    assert_played_honestly(record, [1, 2, 3])


def test_a_frozen_bot_is_found_by_keepalive(arena: ArenaThread) -> None:
    bot = arena.start_bot("random_bot.py", "frozen")
    bot.send_signal(signal.SIGSTOP)     # alive, connected, and answering nothing (not even pings)
    try:
        # A 60 s limit: a seat lost to the limit would be a timeout; a disconnect is keepalive's.
        record = arena.run_match(["frozen", *HONEST], move_time=60.0, time_bank=0.0, timeout=120)
    finally:
        bot.send_signal(signal.SIGCONT)
    assert seat_faults(record, 0) == ["disconnect"]
    assert record.forfeited[0]
    assert_played_honestly(record, [1, 2, 3])


@pytest.mark.parametrize("overlap", [0, 1], ids=["away-300ms", "new-stream-first"])
def test_reconnect_within_grace_gets_the_seat_back(arena: ArenaThread, tmp_path: Path, overlap: int) -> None:
    report = tmp_path / "reconnect.jsonl"
    name = f"comeback{overlap}"
    arena.start_bot("reconnect_bot.py", name, "--answers", "2", "--away-ms", "300", "--overlap", str(overlap),
                    report=report)
    record = arena.run_match([name, *HONEST], **FAST)
    assert seat_faults(record, 0) == ["disconnect"]
    assert not record.forfeited[0]
    assert_played_honestly(record, [1, 2, 3])
    received = _report_until(report, "match_ended")
    first = [m for m in received if m["session"] == 1]
    second = [m for m in received if m["session"] == 2]
    dropped = [m for m in first if m["msg"] == "request"][-1]     # the one it walked away from
    assert [m["msg"] for m in second[:4]] == ["welcome", "match_started", "fault", "request"]
    assert second[1]["match_id"] == record.match_id and second[1]["seat"] == 0
    assert second[2]["kind"] == "disconnect" and second[2]["faults"] == 1
    resent = second[3]
    assert resent["request_id"] == dropped["request_id"] and resent["kind"] == dropped["kind"]
    # Every event of the match so far, from the first deal on.
    assert resent["events"][0]["type"] == "round_start" and resent["events"][0]["round"] == 1
    assert len(resent["events"]) > len(dropped["events"])
    assert any(m["msg"] == "match_ended" for m in second)


def test_time_used_before_a_disconnect_is_charged_to_the_bank(arena: ArenaThread, tmp_path: Path) -> None:
    # It thinks 350 ms on a 200 ms limit, then drops: the re-sent request shows the
    # bank down by what went past the limit, not a fresh bank.
    report = tmp_path / "thinker.jsonl"
    arena.start_bot("reconnect_bot.py", "thinker", "--answers", "0", "--think-ms", "350", "--away-ms", "100",
                    report=report)
    # A 30 s bank: however busy the machine, the 350 ms cannot use it all.
    record = arena.run_match(["thinker", *HONEST], move_time=0.2, time_bank=30.0)
    assert seat_faults(record, 0) == ["disconnect"]
    received = _report_until(report, "match_ended")
    first = [m for m in received if m["session"] == 1 and m["msg"] == "request"]
    resent = [m for m in received if m["session"] == 2 and m["msg"] == "request"][0]
    assert first[0]["time_bank_ms"] == 30000 and resent["request_id"] == first[0]["request_id"]
    # It thought past its limit before dropping: the re-sent request's bank is smaller, not fresh.
    assert resent["time_bank_ms"] < first[0]["time_bank_ms"]


def test_a_stray_message_before_the_answer_is_one_fault(arena: ArenaThread) -> None:
    # Hello again, then the real answer: the Hello is taken as the (faulty) answer and
    # the fallback is played; the real answer after it is late, not a second fault.
    arena.start_bot("stray_bot.py", "stray")
    record = arena.run_match(["stray", *HONEST], config={"variant": "classic", "players": 4, "seed": 2, "rounds": 3})
    assert seat_faults(record, 0) == ["unexpected"]
    assert not record.forfeited[0]
    assert_played_honestly(record, [1, 2, 3])


def test_a_stuck_match_does_not_slow_another(arena: ArenaThread) -> None:
    """A match waiting 60 s on a silent bot: a whole match beside it ends meanwhile."""
    arena.start_bot("silent_bot.py", "mute")
    stuck = arena.submit(arena.arena.host.run_match(_spec(["mute", *HONEST], seed=3, move_time=60.0, time_bank=0.0)))
    deadline = time.monotonic() + 30
    while "mute" not in [name for name, info in arena.arena.host.connected_bots().items() if info.free_slots == 0]:
        assert time.monotonic() < deadline, "the stuck match never seated its bot"
        time.sleep(0.01)
    honest = arena.run_match(HONEST, config={"variant": "classic", "players": 3, "seed": 4, "rounds": 2})
    assert not stuck.done()
    assert_played_honestly(honest, [0, 1, 2])
    stuck.cancel()
    while arena.arena.host.connected_bots()["mute"].free_slots != 1:   # its seat back for the tests after
        assert time.monotonic() < deadline + 30
        time.sleep(0.01)


def _spec(bots: list[str], seed: int, **limits: float) -> MatchSpec:
    return MatchSpec(config={"variant": "classic", "players": len(bots), "seed": seed, "rounds": 2},
                     bots=bots, **limits)


def test_a_cancelled_match_gives_its_seats_back(arena: ArenaThread, tmp_path: Path) -> None:
    report = tmp_path / "quiet.jsonl"
    arena.start_bot("silent_bot.py", "quiet", report=report)
    running = arena.submit(arena.arena.host.run_match(_spec(["quiet", *HONEST], seed=6, move_time=5.0, time_bank=0.0)))
    while "quiet" not in [name for name, info in arena.arena.host.connected_bots().items() if info.free_slots == 0]:
        time.sleep(0.01)
    running.cancel()
    deadline = time.monotonic() + 5
    while arena.arena.host.connected_bots()["quiet"].free_slots != 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not arena.arena.host.running
    while not (ended := [m for m in read_report(report) if m["msg"] == "match_ended"]):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert ended[0]["reason"].startswith("aborted")

