"""Bots reach the arena over a Unix domain socket: ``--arena unix:/PATH`` (or
``unix:///PATH``, or the same in ``ARENA_ADDRESS``).

A bot the arena runs in a sandbox without a network has no other way to the referee,
and is started with exactly such an address. Real processes throughout: a real
:class:`ArenaServer` listening on 127.0.0.1 (port 0) and on a socket in the test's
folder, the Python sample bots, the Node.js sample bot and both starter templates
connected through the socket alone, playing real matches without a fault. Then what a
bad ``unix:`` address does (one line, exit 2); that a bot whose socket is missing says
so and retries, even when an ``ARENA_PARENT_PID`` that is not its parent's leaked into
its environment (as it would into a sandbox with its own process ids), while a bot
whose real launcher has gone still exits; and that a bot comes back through the socket
when the arena is killed and started again.

The Node.js cases follow ``tests/sample_bots/test_sample_bots.py``: they skip without node (its
packages are installed with ``npm ci`` when missing).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from factories import ROOT
from factories.bots import node_or_skip, python_bot

from arena import sdk
from arena.records import MatchRecord, MatchSpec
from arena.referee.server import ArenaServer

NODE_BOT = ROOT / "sample_bots" / "node_bot"
# Two short matches: every decision kind of both variants, in a few seconds.
CONFIGS = ({"variant": "classic", "players": 4, "seed": 41, "rounds": 4},
           {"variant": "extreme", "players": 4, "seed": 42, "rounds": 4})


async def play_over_unix(socket: Path, bots: dict[str, tuple[list[str], dict[str, str]]],
                         configs: tuple[dict[str, Any], ...] = CONFIGS) -> list[MatchRecord]:
    """Start an arena on TCP and on ``socket``, and every bot (name -> its command and
    extra environment; the command gets ``--token``, the address is the bot's own
    business); play ``configs`` between them; stop the bots (each must exit 0 on
    SIGTERM, without a traceback or a failed decision) and the arena."""
    arena = ArenaServer(move_time=2.0)
    await arena.start("127.0.0.1", 0, unix_socket=socket)
    names = list(bots)
    procs: list[asyncio.subprocess.Process] = []
    try:
        for name, (command, env) in bots.items():
            arena.host.add_local_bot(name, f"token-{name}")
            procs.append(await asyncio.create_subprocess_exec(
                *command, "--token", f"token-{name}", cwd=ROOT,
                env={**os.environ, "GRPC_VERBOSITY": "ERROR", "PYTHONPATH": str(ROOT), **env},
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE))
        await arena.host.wait_connected(names, 30)
        records = []
        for i, config in enumerate(configs):
            spec = MatchSpec(config=config, bots=names, bot_seeds=[10 * i + s for s in range(len(names))])
            records.append(await asyncio.wait_for(arena.host.run_match(spec), 120))
        return records
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
        ended = [await asyncio.wait_for(proc.communicate(), 15) for proc in procs]
        await arena.stop(0)
        for name, proc, (_, err) in zip(names, procs, ended):
            stderr = err.decode()
            assert proc.returncode == 0, f"{name} exited with {proc.returncode} after SIGTERM:\n{stderr[-2000:]}"
            assert "Traceback" not in stderr and "decision failed" not in stderr, f"{name} logged errors:\n{stderr}"


def assert_clean(records: list[MatchRecord], names: list[str]) -> None:
    """Every match completed with every seat answering: no fault, no forfeit, no fallback."""
    for record, config in zip(records, CONFIGS):
        assert record.status == "completed" and record.variant == config["variant"]
        assert record.bots == names
        assert record.faults == [], [f"{f.bot}: {f.kind}: {f.message}" for f in record.faults]
        assert not any(record.forfeited)
        assert record.latencies_ms and all(ms is not None for ms in record.latencies_ms)


def connected_over_unix(caplog: pytest.LogCaptureFixture) -> set[str]:
    """The bots the arena logged as connected from a Unix socket: grpc names such a peer
    ``unix:`` (a client's socket has no path of its own), a TCP one ``ipv4:HOST:PORT``."""
    return {str(record.args[0]) for record in caplog.records
            if record.name == "arena.referee.servicer" and record.msg.startswith("bot %s connected from")
            and isinstance(record.args, tuple) and str(record.args[1]).startswith("unix:")}


# ---------------------------------------------------------------- bots playing over the socket


def test_the_python_sample_bots_play_over_a_unix_socket(socket_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Both of grpc's forms on the command line, and the address from ARENA_ADDRESS alone."""
    caplog.set_level(logging.INFO, logger="arena.referee.servicer")
    bots = {
        "random": (python_bot("random") + ["--arena", f"unix:{socket_path}"], {}),
        "heuristic": (python_bot("heuristic") + ["--arena", f"unix://{socket_path}"], {}),   # unix:///PATH
        "greedy": (python_bot("greedy"), {"ARENA_ADDRESS": f"unix:{socket_path}"}),
        # As the arena starts a bot: the same address on the command line and in the environment.
        "cautious": (python_bot("cautious") + ["--arena", f"unix:{socket_path}", "--name", "cautious"],
                     {"ARENA_ADDRESS": f"unix:{socket_path}"}),
    }
    records = asyncio.run(play_over_unix(socket_path, bots))
    assert_clean(records, list(bots))
    assert connected_over_unix(caplog) == set(bots)


def test_the_node_sample_bot_plays_over_a_unix_socket(socket_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """grpc-js takes ``unix:///PATH`` (the form whose parsing differs most) and ``unix:/PATH``
    from ARENA_ADDRESS; the bot adds no port to either."""
    node_or_skip()
    caplog.set_level(logging.INFO, logger="arena.referee.servicer")
    bots = {
        "node-heuristic": (["node", str(NODE_BOT / "bot.js"), "--arena", f"unix://{socket_path}"], {}),
        "node-env": (["node", str(NODE_BOT / "bot.js")], {"ARENA_ADDRESS": f"unix:{socket_path}"}),
        "random": (python_bot("random") + ["--arena", f"unix:{socket_path}"], {}),
        "heuristic": (python_bot("heuristic") + ["--arena", f"unix:{socket_path}"], {}),
    }
    records = asyncio.run(play_over_unix(socket_path, bots))
    assert_clean(records, list(bots))
    assert connected_over_unix(caplog) == set(bots)


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_starter_bot_plays_over_a_unix_socket(lang: str, tmp_path: Path, socket_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """The bots `arena new-bot` writes, as written, started as the arena will start them
    in a sandbox (``--arena unix:PATH`` and ``ARENA_ADDRESS``)."""
    env = {"ARENA_ADDRESS": f"unix:{socket_path}"}
    if lang == "node":
        node_or_skip()
        # The sample bot's packages (the same versions): no npm install for the test.
        env["NODE_PATH"] = str(NODE_BOT / "node_modules")
    # Imported here: the starter room imports the tournament's, which the other cases need not.
    from arena.starter.new_bot import write_bot

    caplog.set_level(logging.INFO, logger="arena.referee.servicer")
    starter = write_bot("starter", lang, tmp_path / "starter")
    command = [sys.executable if lang == "python" else "node", str(starter.script), "--arena", f"unix:{socket_path}"]
    bots = {
        "starter": (command, env),
        "random": (python_bot("random") + ["--arena", f"unix:{socket_path}"], {}),
        "random2": (python_bot("random") + ["--arena", f"unix:{socket_path}"], {}),
        "heuristic": (python_bot("heuristic") + ["--arena", f"unix:{socket_path}"], {}),
    }
    records = asyncio.run(play_over_unix(socket_path, bots))
    assert_clean(records, list(bots))
    assert connected_over_unix(caplog) == set(bots)


# ---------------------------------------------------------------- addresses refused, sockets missing


@pytest.mark.parametrize("address", ["unix:/run/arena/referee.sock", "unix:///run/arena/referee.sock",
                                     " unix:/tmp/a.sock ", "unix:/" + "x" * (sdk.MAX_SOCKET_PATH_BYTES - 1)])
def test_unix_addresses_go_to_grpc_as_they_are(address: str) -> None:
    assert sdk.arena_target(address) == address.strip()


BAD_UNIX = {
    "unix:": "empty",
    "unix:referee.sock": "relative",
    "unix:./referee.sock": "relative",
    "unix://arena/referee.sock": "three slashes",
    "unix:/run/arena/": "names a folder",
    "unix:/" + "x" * sdk.MAX_SOCKET_PATH_BYTES: "at most 107",
    "unix-abstract:arena": "unix:/PATH",
}


@pytest.mark.parametrize("address", list(BAD_UNIX))
def test_bad_unix_addresses_are_one_line_value_errors(address: str) -> None:
    with pytest.raises(ValueError, match=BAD_UNIX[address]) as error:
        sdk.arena_target(address)
    assert "\n" not in str(error.value)


def run_bot(command: list[str], env: dict[str, str] | None = None, timeout: float = 30) -> tuple[int, list[str]]:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "GRPC_VERBOSITY": "ERROR", **(env or {})})
    return done.returncode, done.stderr.strip().splitlines()


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_bad_unix_address_ends_the_bot_with_one_line_and_status_2(lang: str) -> None:
    if lang == "node":
        node_or_skip()
    bot = python_bot("random") if lang == "python" else ["node", str(NODE_BOT / "bot.js")]
    for args, env in ((["--arena", "unix:referee.sock"], {}), (["--arena", "unix:"], {}),
                      ([], {"ARENA_ADDRESS": "unix://arena/referee.sock"})):
        code, lines = run_bot(bot + args + ["--token", "t"], env)
        assert code == 2, (args, env, lines)
        assert len(lines) == 1 and "error:" in lines[0] and "unix:" in lines[0], (args, env, lines)


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_missing_socket_is_retried_and_said_once_even_with_a_foreign_parent_pid(lang: str, tmp_path: Path) -> None:
    """No socket at the path: the bot says so once, retries, and gives up after
    ``--retry-for`` (exit 1). ARENA_PARENT_PID names a process that is not the bot's
    parent (pid 1): it was never the launcher, so the bot is not taken for an orphan
    of a gone arena (which would exit 0 at the first failed attempt)."""
    if lang == "node":
        node_or_skip()
    bot = python_bot("random") if lang == "python" else ["node", str(NODE_BOT / "bot.js")]
    address = f"unix:{tmp_path / 'nobody.sock'}"
    code, lines = run_bot(bot + ["--arena", address, "--token", "t", "--retry-for", "1.5"],
                          {"ARENA_PARENT_PID": "1"})
    assert code == 1, lines
    retrying = [line for line in lines if "retrying" in line]
    assert len(retrying) == 1 and address in retrying[0], lines
    hint = "(no such socket)" if lang == "python" else "ENOENT"
    assert hint in retrying[0], retrying


LAUNCHER = """
import os, subprocess, sys, time
log = open(sys.argv[1], "w")
bot = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                       env={**os.environ, "ARENA_PARENT_PID": str(os.getpid()), "GRPC_VERBOSITY": "ERROR"})
print(bot.pid, flush=True)
time.sleep(3)   # the bot is up (it has noted its parent) and retrying; then its launcher goes
"""


def exited(pid: int) -> bool:
    """The process is gone, or a zombie its new parent has not reaped yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_bot_whose_launcher_is_gone_still_exits(lang: str, tmp_path: Path) -> None:
    """The other side of the rule above: ARENA_PARENT_PID named the bot's parent when it
    started, and that process has exited, so the bot stops retrying and exits, long
    before its ``--retry-for``."""
    if lang == "node":
        node_or_skip()
    bot = python_bot("random") if lang == "python" else ["node", str(NODE_BOT / "bot.js")]
    log = tmp_path / "bot.log"
    started = subprocess.run([sys.executable, "-c", LAUNCHER, str(log), *bot, "--arena",
                              f"unix:{tmp_path / 'nobody.sock'}", "--token", "t", "--retry-for", "30"],
                             cwd=ROOT, capture_output=True, text=True, timeout=30)
    pid = int(started.stdout)
    for _ in range(200):   # up to 20 s: the backoff after the launcher's exit is at most 5 s
        if exited(pid):
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the bot did not exit after its launcher:\n{log.read_text()}")
    assert "the arena that started this bot has exited; exiting" in log.read_text(), log.read_text()


SERVER = """
import asyncio, sys
from pathlib import Path
from arena.referee.server import ArenaServer

async def serve() -> None:
    arena = ArenaServer()
    arena.host.add_local_bot("comeback", "token-comeback")
    await arena.start("127.0.0.1", 0, unix_socket=Path(sys.argv[1]))
    print("listening", flush=True)
    await asyncio.Event().wait()

asyncio.run(serve())
"""


def start_arena_process(socket: Path) -> subprocess.Popen[str]:
    """An arena in a process of its own (so that it can be killed), listening on ``socket``."""
    arena = subprocess.Popen([sys.executable, "-c", SERVER, str(socket)], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env={**os.environ, "GRPC_VERBOSITY": "ERROR", "PYTHONPATH": str(ROOT)})
    assert arena.stdout is not None and arena.stdout.readline().strip() == "listening"
    return arena


def wait_for_lines(log: Path, text: str, count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while log.read_text().count(text) < count:
        assert time.monotonic() < deadline, f"no {count} x {text!r} in the bot's log:\n{log.read_text()}"
        time.sleep(0.1)


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_bot_reconnects_through_the_socket_after_the_arena_restarts(lang: str, socket_path: Path,
                                                                    tmp_path: Path) -> None:
    """The arena is killed (``kill -9``: its socket file stays behind, refusing) and started
    again on the same path: the bot says it lost the connection, and comes back."""
    if lang == "node":
        node_or_skip()
    bot = python_bot("random") if lang == "python" else ["node", str(NODE_BOT / "bot.js")]
    log = tmp_path / "bot.log"
    arena = start_arena_process(socket_path)
    with open(log, "w") as out:
        proc = subprocess.Popen(bot + ["--arena", f"unix:{socket_path}", "--token", "token-comeback",
                                       "--retry-for", "30"], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=out, env={**os.environ, "GRPC_VERBOSITY": "ERROR"})
    try:
        wait_for_lines(log, f"connected to unix:{socket_path}", 1)
        arena.kill()
        arena.wait(10)
        wait_for_lines(log, "lost the connection to", 1)
        arena = start_arena_process(socket_path)
        wait_for_lines(log, f"connected to unix:{socket_path}", 2)
    finally:
        proc.terminate()
        code = proc.wait(10)
        arena.kill()
        arena.wait(10)
    assert code == 0, log.read_text()
    assert "Traceback" not in log.read_text(), log.read_text()


def test_a_deep_tmpdir_puts_the_referee_socket_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A socket path holds at most 107 bytes: under a deep $TMPDIR (CI's pytest folders
    are) the local referee's socket folder goes to /tmp, and a server still binds there."""
    from arena.tournament.lineup import SOCKET_PATH_MAX, socket_folder

    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr("tempfile.tempdir", None)
    folder = socket_folder()
    try:
        assert folder.parent == Path("/tmp")
        socket = folder / "referee.sock"
        assert len(os.fsencode(socket)) <= SOCKET_PATH_MAX

        async def bind() -> None:
            server = ArenaServer()
            await server.start("127.0.0.1", 0, unix_socket=socket)
            await server.stop()
        asyncio.run(bind())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_socket_path_too_long_to_bind_is_said(tmp_path: Path) -> None:
    socket = tmp_path / ("s" * 120) / "referee.sock"

    async def bind() -> None:
        await ArenaServer().start("127.0.0.1", 0, unix_socket=socket)
    with pytest.raises(OSError, match="a socket path holds at most 107"):
        asyncio.run(bind())
