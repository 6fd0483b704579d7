"""`arena web` as its own process (``WebServer``), read over HTTP (``http_fetch``);
``wait_for`` a condition, ``first_line`` of a server process."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SERVER_START_SECONDS = 30
WEB_BOTS = ["ann", "bob", "cy<&>"]     # the web tests' database (conftest.py's web_db): a name that must be escaped
# (status, body, the Location header if any) of one GET.
Fetch = Callable[[str], tuple[int, str, str]]


def http_fetch(base: str) -> Fetch:
    def fetch(path: str) -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(base + path, timeout=120) as answer:
                return answer.status, answer.read().decode(), ""
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), error.headers.get("Location", "")

    return fetch


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout:g} s"
        time.sleep(0.1)


def first_line(process: subprocess.Popen[str], timeout: float) -> tuple[str, queue.Queue[str]]:
    """The first line a server process prints (its address), "" if none comes within
    ``timeout`` seconds; and the queue its later lines go to. Its stdout is read on a
    thread, so that a chatty server never blocks on a full pipe."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
    try:
        return lines.get(timeout=timeout), lines
    except queue.Empty:
        return "", lines


def _read_lines(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))


class WebServer:
    """`arena web --port 0 ARGS` on ``db`` as a real process; ``url`` is the address it
    prints, its stderr goes to ``web.stderr`` beside the database."""

    def __init__(self, db: Path, *args: str) -> None:
        self.stderr_path = db.parent / "web.stderr"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "arena.cli", "web", "--db", str(db), "--port", "0",
                                         *args], cwd=db.parent, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        first, _ = first_line(self.process, SERVER_START_SECONDS)
        if not first.startswith("serving http://"):
            self.stop()
            pytest.fail(f"arena web did not start: stdout {first!r}, stderr:\n{self.stderr_path.read_text()}",
                        pytrace=False)
        self.url = first.split()[1].rstrip("/")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stderr.close()
