"""What a newcomer follows from the README meets no trap.

* the practice loop of docs/bot-authors.md ("Entering a running arena"), run as written
  (only its port changed to a free one) by bash in an empty folder, with the installed
  ``arena`` and ``python`` first on the PATH (as a wheel user has them), twice in a row:
  both times the server starts, the sample bots register and connect, and the tournament
  plays on it;
* ``arena serve --auto-match VARIANT``: a real server
  process seats four real bot processes in matches of no tournament, which its board
  shows; bad values are one line and exit code 2;
* ``arena bot register --rotate`` can be re-run, and without it a taken name is one line
  that names the fix;
* the card examples of docs/rules.md's "Which card wins", which the README links to, hold.

Servers bind 127.0.0.1; databases are SQLite files in the test's folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories import ROOT

from arena.store import Store
from engine import classic, classic_cards, extreme, extreme_cards
from sample_bots import strategy

BIN = Path(sys.executable).parent          # the installed `arena` and `python` (the venv's)
SAMPLE_BOTS = ["random", "heuristic", "greedy", "cautious"]

# Waits as the reader does ("once the server has logged the four connections"): until
# the server's ListBots shows every sample bot connected.
WAIT_FOR_BOTS = """
import os, sys, time
import grpc
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb, arena_pb2_grpc as pb_grpc
address, wanted = sys.argv[1], set(sys.argv[2:])
metadata = (("authorization", "Bearer " + os.environ["ARENA_ADMIN_TOKEN"]),)
deadline = time.monotonic() + 60
with grpc.insecure_channel(address) as channel:
    stub = pb_grpc.ArenaStub(channel)
    while time.monotonic() < deadline:
        try:
            if wanted <= {b.name for b in stub.ListBots(pb.ListBotsRequest(), metadata=metadata, timeout=5).bots}:
                sys.exit(0)
        except grpc.RpcError:
            pass
        time.sleep(0.1)
sys.exit("the sample bots did not connect within 60 s")
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_env(home: Path) -> dict[str, str]:
    """A newcomer's shell: the installed commands first on the PATH, nothing else set."""
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def arena_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=clean_env(cwd))


def practice_loop() -> str:
    """The sh block after "To practise against the sample bots" in docs/bot-authors.md."""
    guide = (ROOT / "docs" / "bot-authors.md").read_text()
    after = guide[guide.index("To practise against the sample bots"):]
    return after[after.index("```sh\n") + len("```sh\n"):after.index("```\n", after.index("```sh\n") + 1)]


def as_test_script(loop: str, port: int, helper: Path) -> str:
    """The loop on ``port`` instead of 50051, the reader's wait done by ``helper``, and a
    final ``wait`` so that the run ends when its server and bots have."""
    lines = []
    for line in loop.replace("50051", str(port)).splitlines():
        if line.startswith("# once the server has logged"):
            line = f"python {helper} 127.0.0.1:{port} {' '.join(SAMPLE_BOTS)}"
        lines.append(line)
    # A failing step ends the script and, through the trap, the server and bots it
    # started, whose open pipes would otherwise hold the test's read until its timeout.
    return "set -e\ntrap 'jobs -p | xargs -r kill 2>/dev/null' EXIT\n" + "\n".join(lines) + "\nwait\n"


@pytest.mark.slow
def test_the_practice_loop_works_in_an_empty_folder_and_again(tmp_path: Path) -> None:
    loop = practice_loop()
    assert "python -m sample_bots." in loop and "--rotate" in loop and "--db practice.db" in loop
    assert "sample_bots/" not in loop, "a path into the checkout: wheel users have no sample_bots/ folder"
    helper = tmp_path / "helper" / "wait_for_bots.py"
    helper.parent.mkdir()
    helper.write_text(WAIT_FOR_BOTS)
    work = tmp_path / "work"
    work.mkdir()
    for run in (1, 2):
        script = as_test_script(loop, free_port(), helper)
        process = subprocess.Popen(["bash", "-c", script], cwd=work, env=clean_env(work), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = process.communicate(timeout=180)
        finally:
            with contextlib.suppress(ProcessLookupError):   # whatever it left behind goes with it
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        assert process.returncode == 0, f"run {run}:\n{out[-3000:]}\n{err[-3000:]}"
        assert "Traceback" not in err and "already registered" not in err, f"run {run}:\n{err[-3000:]}"
        assert "8 games played" in out and all(bot in out for bot in SAMPLE_BOTS), out[-3000:]
        with Store(str(work / "practice.db")) as store:
            assert store.match_count("classic") == 8 * run
            assert {b.name for b in store.list_bots() if b.has_token} == set(SAMPLE_BOTS)
    assert not (work / "arena.db").exists(), "everything goes to --db practice.db"


# ---------------------------------------------------------------- arena serve --auto-match


@pytest.fixture
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """``arena serve --port 0 --db F OPTION classic`` as a process; (its address, F)."""
    db = tmp_path / "served.db"
    server = subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--db", str(db), "--quiet",
                               request.param, "classic"], cwd=tmp_path, env=clean_env(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        listening = re.match(r"arena listening on (127\.0\.0\.1:\d+)", first)
        assert listening, first + (server.stderr.read() if server.poll() is not None and server.stderr else "")
        yield listening.group(1), db
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0


@pytest.mark.slow
@pytest.mark.parametrize("served", ["--auto-match"], indirect=True)
def test_auto_match_seats_connected_bots_in_matches_of_no_tournament(served: tuple[str, Path],
                                                                    tmp_path: Path) -> None:
    address, db = served
    with Store(str(db)) as store:
        tokens = {name: store.register_bot(name) for name in SAMPLE_BOTS}
    bots = [subprocess.Popen([sys.executable, "-m", f"sample_bots.{name}_bot", "--arena", address,
                              "--token", tokens[name]], cwd=tmp_path, env=clean_env(tmp_path),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name in SAMPLE_BOTS]
    try:
        with Store(str(db)) as store:
            deadline = time.monotonic() + 90
            while store.match_count("classic") < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            matches = store.list_matches(variant="classic")
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            bot.wait(10)
    assert len(matches) >= 2
    for match in matches:   # 4 players, full length, of no tournament
        assert match.tournament_id is None and match.game_index is None
        assert sorted(match.bots) == sorted(SAMPLE_BOTS) and match.status == "completed"
    with Store(str(db)) as store:
        record = store.load_match(matches[0].match_id)
    assert record.config.players == 4
    assert classic.hand_sizes(record.config) == tuple(range(1, 16))   # full length
    board = arena_cli("leaderboard", "--db", str(db), "--variant", "classic", cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    assert all(name in board.stdout for name in SAMPLE_BOTS)


BAD_SERVE = [
    (["--auto-match", "chess"], "--auto-match"),
    (["--ladder", "classic"], "No such option: --ladder"),
]


@pytest.mark.slow
@pytest.mark.parametrize("args,message", BAD_SERVE, ids=[" ".join(a) for a, _ in BAD_SERVE])
def test_a_bad_auto_match_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    done = arena_cli("serve", "--port", "0", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_serve_help_names_auto_match_not_its_old_name(tmp_path: Path) -> None:
    done = arena_cli("serve", "--help", cwd=tmp_path)
    assert done.returncode == 0 and "--auto-match" in done.stdout and "--ladder" not in done.stdout


# ---------------------------------------------------------------- arena bot register


@pytest.mark.slow
def test_bot_register_rotate_can_be_run_again(tmp_path: Path) -> None:
    first = arena_cli("bot", "register", "alpha", "--rotate", "--db", "p.db", cwd=tmp_path)
    second = arena_cli("bot", "register", "alpha", "--rotate", "--db", "p.db", cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.startswith("Registered bot alpha") and second.stdout.startswith("New token for bot alpha")
    old, new = first.stdout.splitlines()[-1], second.stdout.splitlines()[-1]
    assert len(old) >= 20 and len(new) >= 20 and old != new
    with Store(str(tmp_path / "p.db")) as store:
        assert store.bot_for_token(new) == "alpha" and store.bot_for_token(old) is None
    taken = arena_cli("bot", "register", "alpha", "--db", "p.db", cwd=tmp_path)
    assert taken.returncode == 2
    assert taken.stderr.strip().splitlines() == [
        "arena: error: bot 'alpha' is already registered (arena bot register alpha --rotate issues a new token)"]


# ---------------------------------------------------------------- the card examples


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a file's headings (a repeated one gets -1, -2, ...)."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in anchors:
            n += 1
            anchor = f"{slug}-{n}"
        anchors.add(anchor)
    return anchors


def test_the_readme_links_to_the_card_summary_and_it_to_both_trick_rules() -> None:
    readme = (ROOT / "README.md").read_text()
    rules = (ROOT / "docs" / "rules.md").read_text()
    links = re.findall(r"\]\(docs/rules\.md#([\w-]+)\)", readme)
    assert "which-card-wins" in links and set(links) <= github_anchors(rules)
    # The summary there links to the trick rules of both variants.
    summary = rules[rules.index("## Which card wins"):]
    inner = re.findall(r"\]\(#([\w-]+)\)", summary)
    assert {"winning-a-trick", "play-1"} <= set(inner) and set(inner) <= github_anchors(rules)
    # play-1 is the second "Play" heading: Wizard Extreme's, where its trick winner is.
    extreme_play = rules[rules.index("### 2. Wizard Extreme"):]
    assert extreme_play.index("#### Play") < extreme_play.index("Winner: the highest red card")


def classic_winner(codes: list[str], trump: str | None) -> str:
    suit = classic_cards.SUITS.index(trump) if trump else classic_cards.NO_SUIT
    return codes[classic.trick_winner([classic_cards.INDEX[c] for c in codes], suit)]


def extreme_winner(codes: list[str]) -> str:
    return codes[extreme.trick_winner([(seat, extreme_cards.INDEX[c]) for seat, c in enumerate(codes)])]


def test_the_card_examples_are_the_engines_rules() -> None:
    rules = " ".join((ROOT / "docs" / "rules.md").read_text().split())
    assert "with red trump and green led, `r2` beats `g13`, `g13` beats `g2`, and `b13` cannot win" in rules
    # Classic, red trump, green led: a trump beats the led suit, ranks compare within it,
    # another suit never wins; the first Wizard wins whatever its number; Jesters lose
    # unless there is nothing else (then the first).
    assert classic_winner(["g13", "r2"], "red") == "r2"
    assert classic_winner(["g2", "g13"], "red") == "g13"
    assert classic_winner(["g2", "b13", "y13"], "red") == "g2"
    assert classic_winner(["g5", "W3", "W1", "r13"], "red") == "W3"
    assert classic_winner(["J2", "g2", "J1"], "red") == "g2"
    assert classic_winner(["J3", "J1", "J2"], None) == "J3"
    # Extreme: red always trump, else the highest of the colour led; ranks go to 15.
    assert extreme_winner(["b9", "g15", "r1"]) == "r1"
    assert extreme_winner(["b3", "g15", "b9"]) == "b9"
    assert "b13" < "b9"   # why ranks must be compared as numbers
    # The helper the README names agrees.
    obs = {"variant": "classic", "trump": "red", "trick": [{"seat": 0, "card": "g13"}]}
    assert strategy.wins_now(obs, "r2") and not strategy.wins_now(obs, "b13") and not strategy.wins_now(obs, "g2")
    assert strategy.wins_now({"variant": "extreme", "trick": [{"seat": 0, "card": "b9"}]}, "r1")
