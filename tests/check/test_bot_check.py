"""`arena bot check` and `arena new-bot`, run as a bot author runs them: the real command,
real bot processes, a real referee. Settings are short wherever a test is not about
the check's coverage.

Every command runs with TMPDIR in the test's folder, so a test can see what the check
left behind (its log folder only when something failed: a passed check removes it, also
when it has notes).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from factories import ROOT

# Every test runs the arena command as its own process: end to end (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

BOTS = ROOT / "tests" / "bots"
# Short limits for a bot that times out: a timeout then costs 0.1 s, not 11 s.
QUICK = ["--move-time", "0.1", "--time-bank", "0.1"]


def arena(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    temp = cwd.parent / f"{cwd.name}-tmp"
    temp.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "TMPDIR": str(temp)})


def left_behind(cwd: Path) -> list[Path]:
    """The check's temporary folders still there."""
    return sorted((cwd.parent / f"{cwd.name}-tmp").glob("arena-check-*"))


def test_a_sample_bot_passes_and_its_think_time_is_shown(tmp_path: Path) -> None:
    done = arena("bot", "check", f"{sys.executable} -m sample_bots.random_bot", "--seed", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("random_bot (")
    assert "plays classic and extreme" in out
    # The whole plan: every table size, the special rules, both variants.
    for words in ("3 players, 20 rounds (the last deals all 60 cards: no trump)", "±1 rule", "hidden bidding",
                  "secret bidding", "6 players, 10 rounds", "amigo length", "3 players, 6 rounds of 15 tricks",
                  "5 players, 5 rounds of 15 tricks"):
        assert words in out
    assert out.count("\n  ok ") == 8 and "FAULTS" not in out
    # Every classic deal makes the bot choose trump once at least.
    assert re.search(r"answered 67 bids, [5-9] trump choices, 553 plays", out)
    timings = re.findall(r"time per decision: median ([\d.]+) ms, p99 ([\d.]+) ms, max ([\d.]+) ms "
                         r"\(limit 1000 ms \+ a 10000 ms bank per match", out)
    assert len(timings) == 2
    for median, p99, slowest in timings:
        assert 0 < float(median) <= float(p99) <= float(slowest) < 1000
    assert out.rstrip().splitlines()[-1].startswith("PASSED: 8 matches (classic, extreme) in ")
    assert "Traceback" not in done.stderr
    assert left_behind(tmp_path) == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bot, limits, expected", [
    ("illegal_bot.py", [], ["illegal: seat", "cannot play"]),
    ("garbage_bot.py", [], ["malformed: a bid is a whole number", "unexpected: answer names request"]),
    ("silent_bot.py", QUICK, ["timeout: no answer within 200 ms", "timeout: no answer within 100 ms"]),
])
def test_a_misbehaving_bot_fails_and_every_fault_is_named(tmp_path: Path, bot: str, limits: list[str],
                                                          expected: list[str]) -> None:
    name = bot.removesuffix(".py")
    done = arena("bot", "check", f"{sys.executable} {BOTS / bot} --name {name}", "--variant", "classic",
                 "--seed", "1", *limits, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    for text in expected:
        assert text in out
    assert "3 faults, forfeited" in out and "4 matches not played: a forfeit ends the variant's check" in out
    assert "\nextreme" not in out        # --variant classic: no extreme section
    verdict = [line for line in out.splitlines() if line.startswith("FAILED: 1 match (classic)")]
    assert verdict and "3 faults" in verdict[0]
    # The bot's output and the arena's log are kept, and the report says where.
    (kept,) = left_behind(tmp_path)
    assert f"its output, and the arena's log: {kept}" in out
    assert (kept / f"{name}.log").exists() and "fault" in (kept / "arena.log").read_text()


@pytest.mark.parametrize("bot, expected", [
    # Bytes that are no BotMessage at all: the referee ends the stream.
    ("raw_garbage_bot.py", "time per decision: none answered: its answers were not valid messages (Error parsing "
     "message with type 'wizard_arena.v1.BotMessage'"),
    # Messages, but answers no decision can take.
    ("garbage_bot.py", "time per decision: none answered (the first fault, malformed: a bid is a whole number"),
], ids=["raw-bytes", "malformed-answers"])
def test_a_bot_whose_every_answer_was_wrong_is_told_what_was_wrong_not_that_it_was_late(
        tmp_path: Path, bot: str, expected: str) -> None:
    name = bot.removesuffix("_bot.py").replace("_", "-")
    done = arena("bot", "check", f"{sys.executable} {BOTS / bot} --name {name}", "--name", name,
                 "--variant", "classic", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert expected in done.stdout, done.stdout
    assert "no decision answered in time" not in done.stdout


def test_a_slow_bot_draws_on_its_bank_and_is_told(tmp_path: Path) -> None:
    """Late but within the bank: no fault, but the bank used and a note about the time."""
    command = f"{sys.executable} {BOTS / 'slow_bot.py'} --name slow_bot --slow 1 --sleep-ms 300"
    done = arena("bot", "check", command, "--variant", "extreme", "--move-time", "0.2", "--time-bank", "1",
                 "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # 300 ms against a 200 ms limit: about 100 ms from the bank (more on a busy machine).
    used = re.search(r"bank used: ([\d.]+) ms in one match", done.stdout)
    assert used and 100 <= float(used.group(1)) < 1000
    slowest = re.search(r"note: its slowest decision took ([\d.]+) ms, over 50% of the 200 ms limit", done.stdout)
    assert slowest and float(slowest.group(1)) >= 300
    assert "queued behind each other" not in done.stdout     # one slow answer, in its own task
    assert "PASSED: 3 matches (extreme)" in done.stdout
    assert left_behind(tmp_path) == [] and "its output, and the arena's log" not in done.stdout


SLEEPY = f"{sys.executable} {BOTS / 'sleepy_bot.py'}"


@pytest.mark.parametrize("bot, move_time, cause", [
    # One instance for every seat: the SDK answers its matches one at a time, so while one
    # match waits for an answer the other's takes twice as long.
    (f"{SLEEPY} --shared --sleep-ms 25", "0.08", r"and its plays queued behind each other: a median of "
     r"([\d.]+) ms while another of its matches waited for an answer too, ([\d.]+) ms otherwise\. .*"
     r"--processes 2 plays in two processes"),
    # The bot's class: each match on its own thread, 25 ms whether the other match waits or not.
    (f"{SLEEPY} --sleep-ms 25", "0.04", r": its own time per play, as long while another match waited for "
     r"it as when none did \(median ([\d.]+) ms against ([\d.]+) ms\); on a busier machine it may time out"),
], ids=["answers-one-at-a-time", "answers-each-match-on-its-own"])
def test_the_note_on_slow_decisions_says_whether_they_queued_behind_each_other(
        tmp_path: Path, bot: str, move_time: str, cause: str) -> None:
    done = arena("bot", "check", bot, "--variant", "extreme", "--move-time", move_time, "--time-bank", "5",
                 "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: its slowest decision took")]
    assert len(notes) == 1, done.stdout
    found = re.search(cause, notes[0])
    assert found, notes[0]
    beside, alone = map(float, found.groups())
    assert alone >= 20     # the bot's own 25 ms (no upper bound: a busy machine lengthens it)
    assert (beside >= 1.5 * alone) if "--shared" in bot else (beside < 1.5 * alone)
    assert left_behind(tmp_path) == []


def test_a_bot_slow_only_over_its_plays_is_not_told_its_answers_queued(tmp_path: Path) -> None:
    """Its plays take 1.6 times the limit and its bids nothing: slow plays came beside
    another match's, quick bids alone, which says nothing of queueing. The note compares
    plays with plays, or names no cause; never the GIL and --processes."""
    bot = f"{sys.executable} {BOTS / 'slow_player_bot.py'} --play-ms 160"
    done = arena("bot", "check", bot, "--variant", "classic", "--move-time", "0.1", "--time-bank", "1",
                 "--seed", "1", cwd=tmp_path)
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: its slowest decision took")]
    assert len(notes) == 1, done.stdout + done.stderr
    assert "queued" not in notes[0] and "--processes" not in notes[0] and "GIL" not in notes[0], notes[0]
    assert notes[0].endswith(": on a busier machine it may time out") or "its own time per play" in notes[0], notes[0]


def test_a_bot_in_two_processes_is_checked_on_both_connections(tmp_path: Path) -> None:
    done = arena("bot", "check", f"{SLEEPY} --sleep-ms 1 --processes 2", "--variant", "extreme", "--seed", "1",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "takes 2 matches at once on 2 connections" in done.stdout.splitlines()[0]
    assert "PASSED: 3 matches (extreme)" in done.stdout


HOOK_BUG_BOT = """\
from arena.sdk import Bot, run


class HookBug(Bot):
    variants = ("extreme",)

    def on_match_start(self, info):
        raise RuntimeError("bug in a hook")


if __name__ == "__main__":
    run(HookBug)
"""


def test_a_passed_check_removes_its_folder_and_quotes_the_error_its_note_counts(tmp_path: Path) -> None:
    """A hook that raises is no fault (the referee never sees it): the check passes, its
    folder goes, so the note gives the error itself rather than a path that is gone."""
    (tmp_path / "hook_bug.py").write_text(HOOK_BUG_BOT)
    done = arena("bot", "check", "hook_bug.py", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith("note: its output has 3 error reports (a traceback"), notes
    assert notes[0].endswith("is only there; the first: RuntimeError: bug in a hook")
    assert "PASSED: 3 matches (extreme)" in done.stdout
    assert left_behind(tmp_path) == [] and "its output, and the arena's log" not in done.stdout


BUGGY_BOT = """\
from arena.sdk import Bot, run


class Buggy(Bot):
    variants = ("classic",)

    def bid(self, obs, options):
        return 1 // 0          # the SDK logs it and answers the first option


if __name__ == "__main__":
    run(Buggy)
"""


def test_a_bot_whose_code_raises_fails_with_the_reason_and_its_tracebacks(tmp_path: Path) -> None:
    """The SDK answers a raising method with the first option and says so: a bot_error
    fault naming the exception, and a note pointing at the tracebacks in its output."""
    (tmp_path / "buggy.py").write_text(BUGGY_BOT)
    done = arena("bot", "check", "buggy.py", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "plays classic only" in done.stdout and "\nextreme" not in done.stdout
    assert "bot_error: bid raised ZeroDivisionError: integer division or modulo by zero" in done.stdout
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and re.match(r"note: its output has \d+ error reports \(a traceback", notes[0])
    (kept,) = left_behind(tmp_path)
    assert f"see {kept / 'buggy.log'}" in notes[0]
    assert re.search(r"FAILED: \d+ match(es)? \(classic\) in [\d.]+ s: \d+ faults \(\d+ bot_error\)", done.stdout)


def test_a_bot_that_exits_at_start_is_one_line_with_its_last_output(tmp_path: Path) -> None:
    (tmp_path / "quitter.py").write_text('print("loading")\nraise SystemExit("cannot load weights.bin")\n')
    done = arena("bot", "check", "quitter.py", "--sandbox", "none", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stdout.strip().splitlines()
    (kept,) = left_behind(tmp_path)
    assert line == (f"quitter (quitter.py) never connected: it exited with code 1 before it connected; "
                    f"its last output: loading | cannot load weights.bin (its output and the arena's log: {kept})")
    assert "Traceback" not in done.stderr


def test_a_bot_refused_at_hello_is_told_why(tmp_path: Path) -> None:
    done = arena("bot", "check", f"{sys.executable} {BOTS / 'random_bot.py'} --name someone-else", cwd=tmp_path)
    assert done.returncode == 1
    (line,) = done.stdout.strip().splitlines()
    assert "never connected" in line
    assert "the arena refused its stream: PERMISSION_DENIED this token belongs to bot 'random_bot', not " \
           "'someone-else'" in line


def test_a_bot_that_dies_mid_match_is_reported(tmp_path: Path) -> None:
    done = arena("bot", "check", f"{sys.executable} {BOTS / 'dying_bot.py'} --name dying_bot --answers 20",
                 "--seed", "1", cwd=tmp_path)
    assert done.returncode == 1
    # The exit may be seen before the lost connection: a disconnect fault may or may not be listed.
    assert re.search(r"\n  CUT +3 players, 20 rounds .*; seat \d: cut short: the bot exited\n", done.stdout)
    assert "it exited with code 3 during the classic matches" in done.stdout
    assert "4 matches not played: the check could not go on" in done.stdout


def test_a_bot_gets_its_bot_env_variables_as_in_a_tournament(tmp_path: Path) -> None:
    (tmp_path / "keyed.py").write_text(
        "import os, runpy\n"
        "if os.environ.get('WIZ_KEY') != 'k1':\n"
        "    raise SystemExit(f\"WIZ_KEY is {os.environ.get('WIZ_KEY')!r}\")\n"
        "runpy.run_module('sample_bots.random_bot', run_name='__main__')\n")
    without = arena("bot", "check", f"{sys.executable} keyed.py", "--variant", "extreme", cwd=tmp_path)
    assert without.returncode == 1 and "WIZ_KEY is None" in without.stdout
    done = arena("bot", "check", f"{sys.executable} keyed.py", "--variant", "extreme", "--bot-env", "WIZ_KEY=k1",
                 "--seed", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("PASSED: 3 matches (extreme) in ")


def test_a_variant_the_bot_does_not_play_has_nothing_to_check(tmp_path: Path) -> None:
    command = f"{sys.executable} {BOTS / 'random_bot.py'} --name random_bot --variants extreme"
    done = arena("bot", "check", command, "--variant", "classic", cwd=tmp_path)
    assert done.returncode == 1
    assert "plays extreme only" in done.stdout
    assert "it plays extreme only (its Hello's variants): nothing to check in classic" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["./no_such_bot.py"], "not found"),
    (["python3 'unclosed"], "No closing quotation"),
    (["  "], "COMMAND is empty"),
    (["true", "--variant", "chess"], "--variant must be one of classic, extreme"),
    (["true", "--move-time", "0"], "--move-time must be a number of seconds"),
    (["true", "--name", "no spaces please"], "bad bot name"),
    (["true", "--seed", "-1"], "--seed must be between 0 and 2**63 - 1"),
    (["true", "--nonsense"], "No such option"),
    (["true", "--bot-env", "ARENA_TOKEN=x"], "--bot-env ARENA_TOKEN: the ARENA_ variables are the arena's own"),
    (["true", "--bot-env", "NO VALUE"], "--bot-env takes NAME=VALUE"),
])
def test_bad_arguments_are_one_line_exit_2_and_nothing_written(tmp_path: Path, args: list[str],
                                                               message: str) -> None:
    done = arena("bot", "check", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert message in line and "Traceback" not in done.stderr
    assert done.stdout == "" and list(tmp_path.iterdir()) == [] and left_behind(tmp_path) == []


# ---------------------------------------------------------------------- arena new-bot


def test_a_new_python_bot_passes_the_check_as_written(tmp_path: Path) -> None:
    made = arena("new-bot", "wizzy", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (tmp_path / "wizzy").iterdir()) == ["README.md", "bot.py"]
    bot = (tmp_path / "wizzy" / "bot.py").read_text()
    for method in ("def bid(", "def trump(", "def play(", "def predict(", "def pay("):
        assert method in bot
    assert "class WizzyBot(Bot):" in bot and "Your logic here" in bot
    readme = (tmp_path / "wizzy" / "README.md").read_text()
    assert "arena bot check wizzy/bot.py" in readme and "arena tournament --bot wizzy=wizzy/bot.py" in readme
    assert "arena bot check wizzy/bot.py" in made.stdout
    checked = arena("bot", "check", "wizzy/bot.py", "--seed", "2", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("wizzy (wizzy/bot.py) connected")
    assert "PASSED: 8 matches (classic, extreme)" in checked.stdout and "note:" not in checked.stdout


def test_a_new_node_bot_passes_the_check_as_written(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the Node.js template")
    made = arena("new-bot", "nodey", "--lang", "node", "--dir", "bots/nodey", cwd=tmp_path, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    folder = tmp_path / "bots" / "nodey"
    assert {"README.md", "bot.js", "package.json", "arena.proto", "node_modules"} <= {p.name for p in folder.iterdir()}
    assert "ran npm install" in made.stdout
    from arena.wire.proto_gen import INSTALLED_PROTO

    assert (folder / "arena.proto").read_text() == INSTALLED_PROTO.read_text()
    checked = arena("bot", "check", "bots/nodey/bot.js", "--seed", "2", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "PASSED: 8 matches (classic, extreme)" in checked.stdout and "note:" not in checked.stdout


@pytest.mark.parametrize("args, message", [
    (["bad name"], "bad bot name"),
    (["ok", "--lang", "rust"], "--lang must be one of python, node"),
    (["taken"], "already exists and is not empty"),
    (["ok", "--dir", "taken"], "already exists and is not empty"),
    (["ok", "--dir", "taken/file.txt"], "exists and is not a folder"),
])
def test_new_bot_refusals_are_one_line_exit_2_and_write_nothing(tmp_path: Path, args: list[str],
                                                                message: str) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file.txt").write_text("mine")
    done = arena("new-bot", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert message in line and "Traceback" not in done.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["taken", "taken/file.txt"]


def test_new_bot_writes_into_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    done = arena("new-bot", "mine", "--dir", "here", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.access(tmp_path / "here" / "bot.py", os.X_OK)
    assert "arena bot check here/bot.py" in done.stdout and "--bot mine=here/bot.py" in done.stdout
