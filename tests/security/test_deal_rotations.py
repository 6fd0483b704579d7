"""No bot process plays two games of one deal: ``arena tournament`` (a real referee,
real bot processes in real bubblewrap sandboxes, a real SQLite file) with a test bot
that prints, for every match, the hand it was dealt and an id drawn when its process
started (tests/bots/deal_memory_bot.py). In the duplicate format every deal is played
once per seat rotation, so a process that played two of them would know, from its own
hand in one, the cards a rival holds in the other.

By default each rotation of a deal goes to a process of its own; with
``--shared-processes`` one process plays them all (and does see two hands of a deal,
which shows that the check is real).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from factories import TEST_BOTS
from factories.bots import needs_bwrap

from arena.store import Store

PY = sys.executable
ENV = {**os.environ, "COLUMNS": "200"}
BOT = TEST_BOTS / "deal_memory_bot.py"
BOTS = ("m1", "m2", "m3")


Seen = dict[str, dict[str, list[tuple[int, str]]]]   # bot -> process id -> (deal seed, hand) per match


def play(tmp_path: Path, *options: str) -> tuple[str, Seen]:
    """Two deals of three rotations, three deal-memory bots, confined: the command's
    output, and what each bot's processes reported, with each match's deal seed from
    the store."""
    db = tmp_path / "arena.db"
    done = subprocess.run([PY, "-m", "arena.cli", "tournament", "--rounds", "1", "--players", "3", "--games", "6",
                           "--no-samples", *(arg for name in BOTS for arg in ("--bot", f"{name}={PY} {BOT}")),
                           "--sandbox", "bwrap", "--db", str(db), *options],
                          cwd=tmp_path, capture_output=True, text=True, timeout=240, env=ENV)
    assert done.returncode == 0, done.stderr
    store = Store(str(db))
    (tournament,) = store.list_tournaments()
    assert store.finished_game_indexes(tournament.id) == set(range(6))
    deal_of = {m.match_id: store.load_match(m.match_id).seed for m in store.tournament_matches(tournament.id, range(6))}
    assert len(set(deal_of.values())) == 2        # two deals, each in three rotations
    seen: Seen = {}
    for name in BOTS:
        by_process: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for line in (tmp_path / "arena-logs" / tournament.id / f"{name}.log").read_text().splitlines():
            if line.startswith("DEAL_MEMORY "):
                item = json.loads(line.removeprefix("DEAL_MEMORY "))
                by_process[item["process"]].append((deal_of[item["match"]], " ".join(item["hand"])))
        assert sum(map(len, by_process.values())) == 6, f"{name} reported {dict(by_process)}"
        seen[name] = dict(by_process)
    return done.stdout, seen


@pytest.mark.slow
@needs_bwrap()
def test_no_bot_process_plays_two_rotations_of_a_deal(tmp_path: Path) -> None:
    output, seen = play(tmp_path)
    assert "no bot process plays two games of one deal" in output
    for name, by_process in seen.items():
        assert len(by_process) == 3, f"{name}: a process for each rotation, {len(by_process)} found"
        for process, matches in by_process.items():
            deals = Counter(deal for deal, _ in matches)
            assert sorted(deals.values()) == [1, 1], f"{name} process {process} played {matches}"


@pytest.mark.slow
@needs_bwrap()
def test_shared_processes_play_every_rotation_and_see_a_rivals_cards(tmp_path: Path) -> None:
    output, seen = play(tmp_path, "--shared-processes")
    assert "one process a bot plays every game (--shared-processes)" in output
    for name, by_process in seen.items():
        (matches,) = by_process.values()
        assert sorted(Counter(deal for deal, _ in matches).values()) == [3, 3], (name, matches)
        # The one process held every seat's hand of each deal: in one rotation the cards
        # a rival holds in the others.
        for deal in {deal for deal, _ in matches}:
            assert len({hand for d, hand in matches if d == deal}) == 3, (name, matches)


def test_shared_processes_is_saved_and_older_settings_read_the_new_default(tmp_path: Path) -> None:
    from arena.tournament.settings import TournamentRequest, TournamentSettings, build_settings

    request = TournamentRequest(db=str(tmp_path / "a.db"), shared_processes=True, no_samples=True,
                                bots=[f"a={PY} -c pass", f"b={PY} -c pass"])
    settings = build_settings(request, lambda line: None)
    assert TournamentSettings.from_dict(settings.to_dict()).shared_processes is True
    older = settings.to_dict()
    del older["shared_processes"]
    assert TournamentSettings.from_dict(older).shared_processes is False


def test_shared_processes_and_a_fresh_process_per_match_are_refused_together(tmp_path: Path) -> None:
    done = subprocess.run([PY, "-m", "arena.cli", "tournament", "--fresh-per-match", "--shared-processes"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "pass one of them" in done.stderr and not (tmp_path / "arena.db").exists()
