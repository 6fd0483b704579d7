"""Spies in local tournaments: a whole `arena tournament` with spy bots
(tests/bots/spy_bot.py) in its seats, checked for (a)-(d) as tests/security/spy_checks.py
says, and the controls that make "0 leaks" mean something. Run with ``-s`` for a summary
of what was tried.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from spy_checks import (
    RANDOM_BOT,
    SPY,
    CardCheck,
    Findings,
    Received,
    analyse_spies,
    arena_cli,
    assert_no_leaks,
    attack_seeds,
    bot_option,
    check_duplicate_overlap,
    check_spy_match,
    load_tournament,
    read_spy,
    replay_record,
    report,
)

from arena.records import MatchRecord

# Whole tournaments as processes: `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow


def assert_the_checks_catch_planted_leaks(settings: dict[str, Any], records: list[MatchRecord],
                                          spies: dict[str, tuple[list[Received], dict[int, dict[str, Any]]]],
                                          deals: str) -> None:
    """Controls: the same checks find leaks planted in copies of what a spy received and
    of the records, so that "0 leaks" above means something."""
    record = records[0]
    players = record.config.players
    # (a) The deal seed, or the master seed, among the numbers.
    found = attack_seeds("control", {7, record.seed}, records, settings)
    assert any("reproduces the first deal of" in leak and record.match_id in leak for leak in found.leaks), found.leaks
    found = attack_seeds("control", {settings["seed"]}, records, settings)
    assert any("as the master seed derives" in leak for leak in found.leaks), found.leaks

    spy, (messages, answers) = next(iter(spies.items()))
    record = next(r for r in records if spy in r.bots)
    seat = record.bots.index(spy)
    replayed = replay_record(record)
    stream = [m for m in messages if m.body.get("match_id") == record.match_id]
    neighbour = (seat + 1) % players
    card = sorted(replayed.start[neighbour])[0]

    def doctored(change: Callable[[list[Received]], None]) -> tuple[CardCheck, Findings]:
        copy = [Received(m.msg, json.loads(json.dumps(m.body)), m.at, m.full) for m in stream]
        change(copy)
        check, bids = CardCheck("control"), Findings("control")
        check_spy_match(check, bids, spy, replayed, seat, copy, answers)
        return check, bids

    def first_request(copy: list[Received]) -> dict[str, Any]:
        return next(m for m in copy if m.msg == "request").body

    # (b) A card of the neighbour's first hand in the observation, in an event, in free text.
    def in_observation(copy: list[Received]) -> None:
        body = first_request(copy)
        body["observation_json"] = json.dumps({**json.loads(body["observation_json"]), "hint": card})

    def in_event(copy: list[Received]) -> None:
        body = first_request(copy)
        body["events_json"] = [*body["events_json"], json.dumps({"type": "hand", "cards": [card]})]

    def in_text(copy: list[Received]) -> None:
        copy[0].body["bot_names"] = [*copy[0].body["bot_names"], f"seat {neighbour} holds {card}"]

    for plant in (in_observation, in_event, in_text):
        check, _ = doctored(plant)
        assert any(card in leak for leak in check.found.leaks), (plant.__name__, check.found.leaks)
    # Unrevealed bids: another seat's bid shown while bidding.
    if record.variant == "classic" and record.config.bidding != "open":
        def bid_shown(copy: list[Received]) -> None:
            for message in copy:
                if message.msg == "request":
                    observation = json.loads(message.body["observation_json"])
                    if observation["phase"] == "bid":
                        observation["bids"][neighbour] = 1
                        message.body["observation_json"] = json.dumps(observation)
                        return
            raise AssertionError("the spy never bid")

        _, bids = doctored(bid_shown)
        assert bids.leaks, "a shown bid went unnoticed"
    # (c) Two rotations of one deal made to overlap.
    if deals == "duplicate":
        a, b = [r for r in records if r.seed == record.seed][:2]
        shifted = MatchRecord.from_json({**b.to_json(), "started_at": a.started_at.isoformat(),
                                         "finished_at": a.finished_at.isoformat()})
        others_ = [r if r is not b else shifted for r in records]
        found = check_duplicate_overlap("control", others_, {spy: []})
        assert any("at once" in leak for leak in found.leaks), found.leaks


LOCAL = [
    # variant, players, rounds, bidding, deals, spies (the other seats: honest random bots)
    pytest.param("classic", 4, 3, "open", "duplicate", 3, id="classic-open-4p-duplicate"),
    pytest.param("classic", 5, 5, "hidden", "independent", 4, id="classic-hidden-5p-independent"),
    pytest.param("classic", 4, 5, "secret", "independent", 3, id="classic-secret-4p-independent"),
    pytest.param("classic", 5, 3, "secret", "duplicate", 4, id="classic-secret-5p-duplicate"),
    pytest.param("classic", 4, 3, "hidden", "duplicate", 3, id="classic-hidden-4p-duplicate"),
    pytest.param("extreme", 3, 1, None, "independent", 2, id="extreme-3p-independent"),
    pytest.param("extreme", 4, 1, None, "duplicate", 3, id="extreme-4p-duplicate"),
    pytest.param("extreme", 5, 1, None, "independent", 4, id="extreme-5p-independent"),
]


@pytest.mark.parametrize("variant,players,rounds,bidding,deals,spies", LOCAL)
def test_spies_in_a_local_tournament_learn_nothing(tmp_path: Path, variant: str, players: int, rounds: int,
                                                   bidding: str | None, deals: str, spies: int) -> None:
    """A whole `arena tournament` with spies in all seats but one (or all); two tables'
    worth of games, so that in the duplicate format two deals could run at once."""
    db = tmp_path / "t.db"
    names = [f"spy{i}" for i in range(1, spies + 1)]
    lineup = [bot_option(SPY, name, tmp_path / f"{name}.jsonl", 4) for name in names]
    lineup += [bot_option(RANDOM_BOT, f"honest{i}", None, 4) for i in range(players - spies)]
    # Unconfined: the spies write their reports where the test reads them. What is tested
    # here is what the arena tells them; what confinement adds is tests/security/test_confinement.py's.
    args = ["tournament", "--no-samples", "--variant", variant, "--players", str(players), "--rounds", str(rounds),
            "--games", str(2 * players), "--deals", deals, "--concurrency", "4", "--db", str(db),
            "--sandbox", "none"]
    if bidding is not None:
        args += ["--bidding", bidding]
    for option in lineup:
        args += ["--bot", option]
    done = arena_cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    tid, settings, records = load_tournament(db)
    assert settings.get("deals") == deals
    title = f"{variant} {bidding + ' ' if bidding else ''}{players}p {deals}"
    reports = {name: read_spy(tmp_path / f"{name}.jsonl") for name in names}
    findings = analyse_spies(title, settings, records, reports, deals)
    report(f"{title}, {len(records)} games", findings)
    assert_no_leaks(findings)
    assert_the_checks_catch_planted_leaks(settings, records, reports, deals)
