"""``arena web`` answers only the hosts it is served as (against DNS rebinding), and
answers a request line or headers too long with 414 or 431 rather than a reset
connection: a real ``arena web`` process, read over real sockets."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories.web_server import WebServer
from starlette.testclient import TestClient

from arena.store import Store
from arena.web.app import create_app
from arena.web.guard import MAX_TARGET, AllowedHosts, host_name_problem
from arena.web.protocol import MAX_HEAD

PATHS = ["/", "/api/tournaments", "/static/style.css"]    # a page, the API, an asset


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    """`arena web --allowed-host arena.example.org` over an empty arena database."""
    db = tmp_path_factory.mktemp("hosts") / "arena.db"
    Store(str(db)).close()
    web = WebServer(db, "--allowed-host", "arena.example.org")
    yield web
    web.stop()


def get(url: str, host: str | None = None) -> tuple[int, str]:
    """The status and the body of ``GET url``, sent with ``Host: host`` when given."""
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def raw_exchange(url: str, head: bytes) -> bytes:
    """Send ``head`` on a fresh connection to ``url``'s server; all it answers, until it closes."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(head)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_a_foreign_host_is_refused(server: WebServer, path: str) -> None:
    status, body = get(server.url + path, host="evil.example.com")
    assert status == 400, body
    words = json.loads(body)["error"] if path.startswith("/api/") else body
    assert "not served as 'evil.example.com'" in words.replace("&#39;", "'") and "--allowed-host" in words
    assert path.startswith("/api/") or '<p class="error" id="error">' in body


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_its_own_names_and_the_allowed_host_are_answered(server: WebServer, path: str) -> None:
    port = server.url.rsplit(":", 1)[1]
    for host in (None, f"127.0.0.1:{port}", "localhost", f"localhost:{port}", f"[::1]:{port}", "arena.example.org",
                 "Arena.Example.Org:443"):
        status, body = get(server.url + path, host=host)
        assert status == 200, (host, body[:300])


@pytest.mark.slow
def test_a_request_without_a_host_is_refused(server: WebServer) -> None:
    answer = raw_exchange(server.url, b"GET /api/tournaments HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ") and b"the request has no Host header" in answer


@pytest.mark.slow
def test_a_huge_query_string_is_a_414_and_the_server_goes_on(server: WebServer) -> None:
    # 1 MB: h11 gives up on the request line after MAX_HEAD bytes; the answer is still read.
    line = b"GET /api/tournaments?q=" + b"a" * 2**20 + b" HTTP/1.1\r\n"
    answer = raw_exchange(server.url, line + b"Host: 127.0.0.1\r\n\r\n")
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 414 ") and rest.endswith(b"the URL is too long\n"), answer[:500]
    assert f"longer than {MAX_HEAD:,} bytes".encode() in rest
    # The same through an ordinary client, which writes all of it before reading.
    assert get(server.url + "/?q=" + "a" * 2**20)[0] == 414
    # Headers too long are a 431.
    answer = raw_exchange(server.url, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 2**20 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ") and answer.endswith(b"headers are longer than 16,384 bytes\n")
    assert get(server.url + "/api/tournaments") == (200, "[]")


@pytest.mark.slow
def test_a_long_target_that_arrives_whole_is_a_414_in_the_site_s_shape(server: WebServer) -> None:
    # Past MAX_TARGET but within MAX_HEAD: h11 takes it, the app refuses it.
    status, body = get(server.url + "/api/tournaments?q=" + "a" * MAX_TARGET)
    assert status == 414 and "at most 8,192" in json.loads(body)["error"]
    status, body = get(server.url + "/?q=" + "a" * MAX_TARGET)
    assert status == 414 and '<p class="error" id="error">' in body
    assert get(server.url + "/?q=" + "a" * (MAX_TARGET - 10))[0] == 200


@pytest.mark.slow
@pytest.mark.parametrize("value", ["arena.example.org:443", "https://arena.example.org/", ""])
def test_a_bad_allowed_host_is_one_line_and_exit_2(tmp_path: Path, value: str) -> None:
    Store(str(tmp_path / "arena.db")).close()
    done = subprocess.run([sys.executable, "-m", "arena.cli", "web", "--db", str(tmp_path / "arena.db"), "--port", "0",
                           "--allowed-host", value], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "--allowed-host" in done.stderr and repr(value) in done.stderr


@pytest.mark.slow
def test_the_allowed_hosts_come_from_the_environment_too(tmp_path: Path) -> None:
    Store(str(tmp_path / "arena.db")).close()
    done = subprocess.run([sys.executable, "-m", "arena.cli", "web", "--db", str(tmp_path / "arena.db"), "--port", "0"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "ARENA_WEB_ALLOWED_HOSTS": "ok.example bad:443"})
    assert done.returncode == 2 and "'bad:443'" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_the_app_refuses_a_foreign_host_in_process(tmp_path: Path) -> None:
    Store(str(tmp_path / "arena.db")).close()
    app = create_app(str(tmp_path / "arena.db"), hosts=AllowedHosts.serving("127.0.0.1"))
    evil, own = TestClient(app, base_url="http://evil.example.com"), TestClient(app, base_url="http://127.0.0.1:8000")
    answer = evil.get("/api/tournaments")
    assert answer.status_code == 400 and "evil.example.com" in answer.json()["error"]
    assert evil.get("/").status_code == 400 and own.get("/").status_code == 200
    assert own.get("/api/tournaments?q=" + "a" * MAX_TARGET).status_code == 414


def test_the_hosts_a_server_answers() -> None:
    own = AllowedHosts.serving("127.0.0.1", ["arena.example.org"])
    assert [own.admits(host) for host in ("127.0.0.1:8000", "LOCALHOST", "[0:0::1]:8000", "arena.example.org.")] \
        == [True] * 4
    assert not any(own.admits(host) for host in ("evil.example.com", "10.0.0.5", "::1", "localhost:x", "", None))
    assert [host_name_problem(name) is None for name in ("box.lan", "10.0.0.5", "::1", "[::1]", "a b", "-x.example",
                                                         "x.example:80", "x.example/", "")] == [True] * 4 + [False] * 5
    # Bound to a name or an address: that one too.
    assert AllowedHosts.serving("192.168.1.20").admits("192.168.1.20:8000")
    assert AllowedHosts.serving("box.lan").admits("BOX.lan")
    # Bound to every interface: any IP address (a rebinding needs a name), names only when given.
    for wildcard in ("0.0.0.0", "::"):
        every = AllowedHosts.serving(wildcard)
        assert every.admits("192.168.1.20:8000") and every.admits("[fe80::1]") and every.admits("localhost")
        assert not every.admits("evil.example.com") and not every.admits("box.lan")
