"""Ctrl-C (SIGINT) and SIGTERM stop ``arena play`` with one line, whatever pages wait.

A page follows the match with a long poll (``GET /api/play/state?since=VERSION``) that
the server holds open for up to 20 s; the signal must answer it and end the command
with the one line that says what was lost, no server traceback.
"""

from __future__ import annotations

import http.client
import json
import signal
import urllib.parse
from collections.abc import Callable

import pytest

from .conftest import Play


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_long_poll_ends_in_one_line(play: Callable[..., Play], sig: signal.Signals) -> None:
    game = play("--variant", "classic", "--players", "3", "--rounds", "1", "--seed", "3")
    state = game.state()
    while state["decision"] is None:          # the seat is playing: the page has a match to follow
        assert state["status"] != "failed", state["problem"]
        state = game.state(since=state["version"])
    address = urllib.parse.urlsplit(game.url)
    poll = http.client.HTTPConnection(address.hostname or "", address.port, timeout=60)
    poll.request("GET", f"/api/play/state?since={state['version']}")
    assert game.state()["version"] == state["version"]     # the server is past the poll's arrival, which waits
    game.process.send_signal(sig)
    answer = poll.getresponse()
    assert answer.status == 200 and json.loads(answer.read())["status"] in ("closed", "over")
    assert game.process.wait(timeout=60) == 130
    assert game.stderr is not None
    lines = game.stderr.read_text().splitlines()
    assert lines == ["arena: stopped before the match ended: nothing stored"], lines
