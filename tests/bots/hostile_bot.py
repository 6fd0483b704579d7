"""A hostile SDK bot: it plays legally (the first option) while it tries every attack a
bot author who wants to win would try, and prints what it got as ``HOSTILE {json}``
lines on its output (which the arena keeps in the bot's log).

What to attack comes from ``hostile.json`` beside this file (the test writes it):
``canary`` a file outside the bot's folder, ``database`` the arena's database,
``logs`` other bots' log files, ``programs`` other bots' program files, ``port`` a TCP
listener on 127.0.0.1 that is not the referee, ``pid`` the test's own process,
``env`` a variable the organiser set, ``marker`` a word to tag the process it leaves
behind. Each attack records what it got; the test asserts that every one got nothing.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from arena.sdk import Bot, MatchInfo, run

CONFIG: dict[str, Any] = {}     # hostile.json, read when it runs
SQLITE = b"SQLite format 3\x00"


REPORTING = threading.Lock()   # the SDK runs each match's hooks on a thread of its own


def report(attack: str, got: Any) -> None:
    with REPORTING:
        # One write of the whole line: print writes the line and its end apart, and the
        # SDK's log lines (to the same file, from another thread) could come in between.
        sys.stdout.write("HOSTILE " + json.dumps({"attack": attack, "got": got}) + "\n")
        sys.stdout.flush()


def read(path: str) -> str | list[str] | None:
    """The start of a file, the names in a folder, or None when it cannot be read."""
    try:
        if Path(path).is_dir():
            return sorted(os.listdir(path))
        text = Path(path).read_bytes()[:64].decode("latin-1")
        return text or None     # an empty file is what a hidden one looks like
    except OSError:
        return None


def find_databases(roots: list[str], depth: int = 5, budget: int = 20000) -> list[str]:
    """Every SQLite file the bot can read under ``roots`` (its cwd, its parents, /proc's cwds, /)."""
    found, todo, seen = [], [(root, 0) for root in roots], set()
    while todo and budget > 0:
        folder, level = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            try:
                real = os.path.realpath(entry.path)
                if real in seen or real.startswith(("/proc/", "/sys/", "/dev/")):
                    continue
                seen.add(real)
                if entry.is_dir() and level < depth:
                    todo.append((entry.path, level + 1))
                elif entry.is_file():
                    with open(entry.path, "rb") as handle:
                        if handle.read(16) == SQLITE:
                            found.append(entry.path)
            except OSError:
                continue
    return found


def other_processes() -> dict[str, Any]:
    """Processes outside the bot's own, their tokens, and whether it can signal one."""
    mine = {os.getpid(), os.getppid()}
    seen, tokens = [], []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [w.decode("latin-1") for w in cmdline if w]
        if int(pid) not in mine and words and "hostile_bot" not in " ".join(words):
            seen.append(" ".join(words)[:80])
        if "--token" in words:
            token = words[words.index("--token") + 1] if words.index("--token") + 1 < len(words) else ""
            if token and token != os.environ.get("ARENA_TOKEN"):
                tokens.append(token)
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            environ = []
        for item in environ:
            if item.startswith(b"ARENA_TOKEN=") and item[12:].decode() != os.environ.get("ARENA_TOKEN"):
                tokens.append(item[12:].decode())
    signalled = None
    try:
        os.kill(int(CONFIG["pid"]), 0)
        signalled = f"pid {CONFIG['pid']} exists and may be signalled"
        try:       # it may be a process of the sandbox that has the same number
            parent = Path(f"/proc/{CONFIG['pid']}/cmdline").read_bytes()
            if b"pytest" in parent or b"arena" in parent:
                os.kill(int(CONFIG["pid"]), signal.SIGSTOP)
                os.kill(int(CONFIG["pid"]), signal.SIGCONT)
                signalled = f"stopped and continued pid {CONFIG['pid']}"
        except OSError:
            pass
    except OSError:
        pass
    return {"others": seen, "tokens": tokens, "signalled": signalled}


def network() -> dict[str, Any]:
    got: dict[str, Any] = {}
    try:
        with socket.create_connection(("127.0.0.1", int(CONFIG["port"])), timeout=2) as conn:
            conn.sendall(b"hostile")
            got["tcp"] = f"connected to 127.0.0.1:{CONFIG['port']}"
    except OSError as error:
        got["tcp"] = None if error.errno else str(error)
    listener = socket.socket()
    try:
        listener.bind(("0.0.0.0", 0))
        listener.listen()
        got["listening_port"] = listener.getsockname()[1]   # the test tries to reach it
    except OSError:
        got["listening_port"] = None
    LISTENERS.append(listener)
    return got


def resources() -> dict[str, Any]:
    got: dict[str, Any] = {}
    # 1 GiB in a child, so that the bot itself plays on (the limit is over all its processes).
    child = subprocess.run([sys.executable, "-c", "b = bytearray(1 << 30); b[::4096] = b'x' * len(b[::4096]); "
                            "print('allocated')"], capture_output=True, text=True)
    got["allocated_1gib"] = "allocated" in child.stdout
    children = []
    for _ in range(100):
        try:
            children.append(subprocess.Popen(["sleep", "30"]))
        except OSError:
            break
    got["processes_started"] = len(children)
    for proc in children:
        proc.kill()
        proc.wait()
    written = 0
    try:
        with open("/tmp/big", "wb") as big:
            block = b"x" * (1 << 20)
            for _ in range(1024):
                big.write(block)
                written += 1
    except OSError:
        pass
    got["wrote_mib"] = written
    with __import__("contextlib").suppress(OSError):
        os.unlink("/tmp/big")
    try:
        Path(__file__).with_name("planted.txt").write_text("x")
        got["wrote_own_folder"] = True
    except OSError:
        got["wrote_own_folder"] = False
    return got


def leave_behind() -> None:
    """A double-forked, setsid'd sleeper that should outlive the run (it must not)."""
    subprocess.Popen(["/bin/sh", "-c", f"setsid sleep 600 {CONFIG['marker']} >/dev/null 2>&1 &"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait()


LISTENERS: list[socket.socket] = []
MATCHES_IN_PROCESS = 0


class Hostile(Bot):
    name = "hostile"

    def on_match_start(self, info: MatchInfo) -> None:
        global MATCHES_IN_PROCESS
        MATCHES_IN_PROCESS += 1
        marks = Path("/tmp/matches-seen")
        try:
            before = marks.read_text().split()
        except OSError:
            before = []
        with open(marks, "a") as out:
            out.write(info.match_id + "\n")
        report("state", {"matches_in_process": MATCHES_IN_PROCESS, "matches_on_disk": len(before),
                         "match": info.match_id})

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        return options[0]

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        return options[0]

    def trump(self, obs: dict[str, Any], options: list[str]) -> str:
        return options[0]

    def pay(self, obs: dict[str, Any], options: list[str]) -> str:
        return options[0]


def attack() -> None:
    CONFIG.update(json.loads(Path(__file__).with_name("hostile.json").read_text()))
    started = time.monotonic()
    report("canary", read(CONFIG["canary"]))
    report("database", read(CONFIG["database"]))
    roots = [os.getcwd(), *[str(p) for p in Path(os.getcwd()).parents], "/"]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            roots.append(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            pass
    report("databases_found", find_databases(roots))
    report("logs", {path: read(path) for path in CONFIG["logs"]})
    report("programs", {path: read(path) for path in CONFIG["programs"]})
    report("processes", other_processes())
    report("environment", {"organiser_variable": os.environ.get(CONFIG["env"]), "names": sorted(os.environ)})
    report("network", network())
    if CONFIG.get("resources", True):   # not where nothing would stop it (the unconfined run)
        report("resources", resources())
    leave_behind()
    report("done", round(time.monotonic() - started, 1))


if __name__ == "__main__":
    attack()
    run(Hostile)
