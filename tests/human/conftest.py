"""Fixtures for ``arena play``'s tests: the command as a real process (a real referee,
real confined sample bots, a real SQLite file), and for the browser test a real Chromium.

``play`` (test): ``play(*options)`` starts ``arena play --port 0 --db DB *options`` in a
temporary folder and returns a :class:`Play` (its URL, its database, ``get``/``post``
on its API); every one started is stopped at the end of the test.

``browser``, ``page`` and ``screenshot`` are the browser tests' own (browser_fixtures.py):
Debian's Chromium driven by Playwright (skipped without it, failing in CI), a page whose
console errors fail the test, pictures saved under test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser_fixtures import browser, page, screenshot  # noqa: F401  (the fixtures, for these tests)
from factories.web_server import first_line

START_SECONDS = 30


@dataclass
class Play:
    """A running ``arena play``: its page's URL, its database, what it printed."""

    process: subprocess.Popen[str]
    url: str
    db: Path
    lines: queue.Queue[str]
    printed: list[str] = field(default_factory=list)
    stderr: Path | None = None

    def request(self, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """``GET`` (or ``POST`` a JSON ``body``) ``path``: the status and the JSON answer
        (the text, where the answer is not JSON). ``headers`` replace the defaults."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path.lstrip("/"), data=data, method="GET" if data is None
                                         else "POST", headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def state(self, since: int | None = None, events: int | None = None) -> dict[str, Any]:
        query = "&".join(f"{key}={value}" for key, value in (("since", since), ("events", events)) if value is not None)
        status, body = self.request("/api/play/state" + (f"?{query}" if query else ""))
        assert status == 200, body
        return body

    def answer(self, body: Any) -> tuple[int, Any]:
        return self.request("/api/play/answer", body)

    def output(self, timeout: float = 10.0) -> list[str]:
        """What it printed so far, waiting up to ``timeout`` for the line of the stored match."""
        deadline = timeout
        while not any(line.startswith("stored in") for line in self.printed) and deadline > 0:
            try:
                self.printed.append(self.lines.get(timeout=0.5))
            except queue.Empty:
                deadline -= 0.5
        return self.printed

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


@pytest.fixture
def play(tmp_path: Path) -> Iterator[Callable[..., Play]]:
    """Start ``arena play`` processes; all are stopped after the test."""
    started: list[Play] = []

    def start(*options: str) -> Play:
        db = tmp_path / "play.db"
        process = subprocess.Popen([sys.executable, "-m", "arena.cli", "play", "--port", "0", "--db", str(db),
                                    *options], cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=(tmp_path / "play.stderr").open("w"), text=True)
        first, lines = first_line(process, START_SECONDS)
        if not first.startswith("play at http://"):
            process.kill()
            pytest.fail(f"arena play did not start: {first!r}\n{(tmp_path / 'play.stderr').read_text()}")
        running = Play(process, first.split()[2], db, lines, [first], tmp_path / "play.stderr")
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
