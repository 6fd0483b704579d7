"""Bots reach an arena that serves TLS: the Python SDK (so every Python sample bot and the
Python starter), the Node.js sample bot and the Node.js starter.

Real processes throughout. A throwaway PKI made with the ``openssl`` command line (a CA,
a server certificate for localhost, 127.0.0.1 and ::1, a client certificate, a second CA
nobody uses, and a certificate for another host); a real :class:`ArenaServer` whose TCP
port speaks TLS only (``start(tls=...)``), with a plaintext Unix socket beside it for the
bot that uses one. Then:

* the bots play real matches over TLS without a fault, with the CA given as ``--tls-ca``,
  as ``ARENA_TLS_CA`` alone (an organiser's script), or as the system's roots (``--tls``
  with the roots file pointed at the test CA); a bot on the Unix socket stays plaintext
  with ``ARENA_TLS_CA`` set; with client certificates required, bots that present one play;
* what goes wrong says so in one line: a bot that trusts another CA, one that trusts the
  system's roots, one that dials a host the certificate is not for, and one that speaks
  TLS to a plaintext arena exit with status 2 at once (not after the 60 s of retries);
  so does a bot in plaintext at the TLS port (the Python SDK and the Node.js bot ask the
  address whether it speaks TLS); a bot without the client certificate the arena asks
  for retries with a line that says what to check; an unreadable CA file is one line at
  the start.

The Node.js cases follow ``tests/sample_bots/test_sample_bots.py``: they skip without node.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from factories import ROOT
from factories.bots import node_or_skip, python_bot

from arena import sdk
from arena.records import MatchRecord, MatchSpec
from arena.referee.server import ArenaServer

NODE_BOT = ROOT / "sample_bots" / "node_bot"
# Stand for the arena's address in a bot's command line and environment, filled in once
# the arena has its port: by IP address, and by name.
ARENA = "{arena}"
ARENA_BY_NAME = "{arena-by-name}"
# Half the 60 s a bot retries for (the rest is slack for a busy machine): a handshake
# failure must end the bot at once, with status 2, where a retrying bot ends with 1.
QUICK = 30.0


NODE = ["node", str(NODE_BOT / "bot.js")]


# ---------------------------------------------------------------- a throwaway PKI


@dataclass(frozen=True)
class Pki:
    """The PEM files of the test's certificates (keys are unencrypted EC P-256)."""

    folder: Path

    def __getattr__(self, name: str) -> str:
        """``pki.ca`` is ca.pem, ``pki.client_key`` client-key.pem."""
        if name.startswith("_"):
            raise AttributeError(name)
        return str(self.folder / f"{name.replace('_', '-')}.pem")


def openssl(folder: Path, *args: str) -> None:
    done = subprocess.run(["openssl", *args], cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"openssl {' '.join(args[:2])} failed: {done.stderr}"


def make_pki(folder: Path) -> Pki:
    """A CA and what it signs, and a stranger CA, with the openssl command line."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "stranger-ca"):
        openssl(folder, "req", "-x509", *ec, "-days", "2", "-subj", f"/CN=Test {ca}",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout", f"{ca}-key.pem", "-out", f"{ca}.pem")
    leaves = {   # name -> (subject, extensions)
        "server": ("localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n"),
        "other-host": ("elsewhere.example", "subjectAltName=DNS:elsewhere.example\nextendedKeyUsage=serverAuth\n"),
        "client": ("bot", "extendedKeyUsage=clientAuth\n"),
    }
    for serial, (name, (subject, extensions)) in enumerate(leaves.items(), start=1):
        (folder / f"{name}.ext").write_text("basicConstraints=CA:FALSE\n" + extensions)
        openssl(folder, "req", *ec, "-subj", f"/CN={subject}", "-keyout", f"{name}-key.pem", "-out", f"{name}.csr")
        openssl(folder, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
                "-set_serial", str(serial), "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem")
    return Pki(folder)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command line is not installed: no certificates for the TLS tests")
    return make_pki(tmp_path_factory.mktemp("pki"))


def server_tls(pki: Pki, certificate: str = "server", client_certificates: bool = False) -> Any:
    """The arena's TLS settings, as ``arena serve --tls-cert --tls-key [--tls-client-ca]`` loads them."""
    from arena.tls import load_server_tls

    return load_server_tls(Path(getattr(pki, certificate)), Path(getattr(pki, f"{certificate}_key")),
                           Path(pki.ca) if client_certificates else None)


# ---------------------------------------------------------------- running bots against an arena


def fill(text: str, port: int) -> str:
    """``text`` with the arena's address in place of ARENA and ARENA_BY_NAME."""
    return text.replace(ARENA, f"127.0.0.1:{port}").replace(ARENA_BY_NAME, f"localhost:{port}")


def bot_env(env: dict[str, str | None], port: int) -> dict[str, str]:
    """The bot's environment: ours with ``env`` on top (None removes a variable), and no
    grpc log level, so that what the bot prints is what a bot author sees."""
    merged: dict[str, str | None] = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    merged.pop("GRPC_VERBOSITY", None)
    return {key: fill(value, port) for key, value in merged.items() if value is not None}


async def start_arena(tls: Any, unix_socket: Path | None = None, tokens: tuple[str, ...] = ()) -> ArenaServer:
    arena = ArenaServer(move_time=2.0)
    for name in tokens:
        arena.host.add_local_bot(name, f"token-{name}")
    await arena.start("127.0.0.1", 0, unix_socket=unix_socket, tls=tls)
    return arena


async def play(tls: Any, bots: dict[str, tuple[list[str], dict[str, str | None]]],
               unix_socket: Path | None = None) -> tuple[list[MatchRecord], dict[str, str]]:
    """Start an arena (its TCP port with ``tls``) and every bot (name -> its command and
    extra environment, ``{arena}`` standing for the arena's ``127.0.0.1:PORT``; each gets
    its one-run ``--token``); play a classic and an Extreme match between them; stop the
    bots, each of which must exit 0 on SIGTERM without a traceback or a failed decision.
    Returns the records and every bot's stderr."""
    arena = await start_arena(tls, unix_socket, tuple(bots))
    names = list(bots)
    procs: list[asyncio.subprocess.Process] = []
    try:
        for name, (command, env) in bots.items():
            procs.append(await asyncio.create_subprocess_exec(
                *[fill(part, arena.port) for part in command], "--token", f"token-{name}", cwd=ROOT,
                env=bot_env(env, arena.port), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE))
        await arena.host.wait_connected(names, 30)
        records = []
        for i, variant in enumerate(("classic", "extreme")):
            config = {"variant": variant, "players": len(names), "seed": 60 + i, "rounds": 3}
            spec = MatchSpec(config=config, bots=names, bot_seeds=[10 * i + s for s in range(len(names))])
            records.append(await asyncio.wait_for(arena.host.run_match(spec), 120))
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
        ended = [await asyncio.wait_for(proc.communicate(), 15) for proc in procs]
        await arena.stop(0)
    stderr = {name: err.decode() for name, (_, err) in zip(names, ended)}
    for name, proc in zip(names, procs):
        assert proc.returncode == 0, f"{name} exited with {proc.returncode} after SIGTERM:\n{stderr[name][-2000:]}"
        assert "Traceback" not in stderr[name] and "decision failed" not in stderr[name], stderr[name]
    return records, stderr


def assert_clean(records: list[MatchRecord], names: list[str]) -> None:
    """Every match completed with every seat answering: no fault, no forfeit, no fallback."""
    assert [record.variant for record in records] == ["classic", "extreme"]
    for record in records:
        assert record.status == "completed" and record.bots == names
        assert record.faults == [], [f"{f.bot}: {f.kind}: {f.message}" for f in record.faults]
        assert not any(record.forfeited)
        assert record.latencies_ms and all(ms is not None for ms in record.latencies_ms)


@dataclass
class Ended:
    """How a bot process that was meant to fail ended."""

    code: int
    lines: list[str]
    seconds: float


async def run_alone(tls: Any, command: list[str], env: dict[str, str | None] | None = None,
                    timeout: float = 30) -> Ended:
    """Start an arena (``tls`` None: plaintext) and one bot that is not expected to play;
    wait for the bot to exit by itself."""
    arena = await start_arena(tls)
    try:
        began = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *[fill(part, arena.port) for part in command], cwd=ROOT, env=bot_env(env or {}, arena.port),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        try:
            _, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            _, err = await proc.communicate()
            raise AssertionError(f"the bot did not exit within {timeout} s:\n{err.decode()}") from None
        assert proc.returncode is not None
        return Ended(proc.returncode, err.decode().strip().splitlines(), time.monotonic() - began)
    finally:
        await arena.stop(0)


# ---------------------------------------------------------------- bots playing over TLS


def test_the_python_sample_bots_play_over_tls(pki: Pki, socket_path: Path) -> None:
    """--tls-ca by an IP address and by name, ARENA_TLS_CA alone, --tls through the roots
    file grpc reads; a bot on the Unix socket stays plaintext though ARENA_TLS_CA is set."""
    bots: dict[str, tuple[list[str], dict[str, str | None]]] = {
        "random": (python_bot("random") + ["--arena", ARENA, "--tls-ca", pki.ca], {}),
        "heuristic": (python_bot("heuristic"), {"ARENA_ADDRESS": ARENA_BY_NAME, "ARENA_TLS_CA": pki.ca}),
        "greedy": (python_bot("greedy") + ["--arena", ARENA],
                   {"ARENA_TLS": "1", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": pki.ca}),
        "cautious": (python_bot("cautious") + ["--arena", f"unix:{socket_path}"], {"ARENA_TLS_CA": pki.ca}),
    }
    records, stderr = asyncio.run(play(server_tls(pki), bots, unix_socket=socket_path))
    assert_clean(records, list(bots))
    for name in ("random", "heuristic", "greedy"):
        assert " over TLS as " in stderr[name], stderr[name]
    assert f"connected to unix:{socket_path} as " in stderr["cautious"], stderr["cautious"]


def test_the_node_sample_bot_plays_over_tls(pki: Pki) -> None:
    """--tls-ca, ARENA_TLS_CA alone, and --tls trusting Node's roots plus NODE_EXTRA_CA_CERTS;
    Node's warning about an IP address as TLS server name stays out of the log."""
    node_or_skip()
    bots: dict[str, tuple[list[str], dict[str, str | None]]] = {
        "node-heuristic": (NODE + ["--arena", ARENA, "--tls-ca", pki.ca], {}),
        "node-env": (NODE, {"ARENA_ADDRESS": ARENA, "ARENA_TLS_CA": pki.ca}),
        # grpc-js reads GRPC_DEFAULT_SSL_ROOTS_FILE_PATH instead of Node's roots when it is set.
        "node-system": (NODE + ["--arena", ARENA_BY_NAME, "--tls"],
                        {"NODE_EXTRA_CA_CERTS": pki.ca, "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": None}),
        "random": (python_bot("random") + ["--arena", ARENA, "--tls-ca", pki.ca], {}),
    }
    records, stderr = asyncio.run(play(server_tls(pki), bots))
    assert_clean(records, list(bots))
    for name in ("node-heuristic", "node-env", "node-system"):
        assert " over TLS as " in stderr[name], stderr[name]
        assert "DEP0123" not in stderr[name], stderr[name]


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_starter_bot_plays_over_tls(lang: str, pki: Pki, tmp_path: Path) -> None:
    """The bots `arena new-bot` writes, as written, with --tls-ca (the Python one through
    the SDK's command line, the Node.js one through its own)."""
    env: dict[str, str | None] = {}
    if lang == "node":
        node_or_skip()
        env["NODE_PATH"] = str(NODE_BOT / "node_modules")   # the sample bot's packages, the same versions
    from arena.starter.new_bot import write_bot

    starter = write_bot("starter", lang, tmp_path / "starter")
    runner = sys.executable if lang == "python" else "node"
    bots: dict[str, tuple[list[str], dict[str, str | None]]] = {
        "starter": ([runner, str(starter.script), "--arena", ARENA, "--tls-ca", pki.ca], env),
        "starter-env": ([runner, str(starter.script)], {**env, "ARENA_ADDRESS": ARENA, "ARENA_TLS_CA": pki.ca}),
        "random": (python_bot("random") + ["--arena", ARENA, "--tls-ca", pki.ca], {}),
        "heuristic": (python_bot("heuristic") + ["--arena", ARENA, "--tls-ca", pki.ca], {}),
    }
    records, _ = asyncio.run(play(server_tls(pki), bots))
    assert_clean(records, list(bots))


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_starter_bot_that_trusts_another_ca_stops_at_once(lang: str, pki: Pki, tmp_path: Path) -> None:
    env: dict[str, str | None] = {}
    if lang == "node":
        node_or_skip()
        env["NODE_PATH"] = str(NODE_BOT / "node_modules")
    from arena.starter.new_bot import write_bot

    starter = write_bot("starter", lang, tmp_path / "starter")
    command = [sys.executable if lang == "python" else "node", str(starter.script), "--arena", ARENA_BY_NAME,
               "--token", "t", "--tls-ca", pki.stranger_ca]
    ended = asyncio.run(run_alone(server_tls(pki), command, env))
    assert ended.code == 2 and ended.seconds < QUICK, ended
    assert len(ended.lines) == 1 and "TLS handshake with localhost:" in ended.lines[0], ended.lines
    assert "check --tls-ca" in ended.lines[0] and "it must be the CA that signed the arena's certificate" in \
        ended.lines[0], ended.lines


def test_bots_with_client_certificates_play_where_the_arena_asks_for_them(pki: Pki) -> None:
    """Mutual TLS: options for the SDK, ARENA_TLS_CERT and ARENA_TLS_KEY for the Node.js bot."""
    client = ["--tls-cert", pki.client, "--tls-key", pki.client_key]
    bots: dict[str, tuple[list[str], dict[str, str | None]]] = {
        "random": (python_bot("random") + ["--arena", ARENA, "--tls-ca", pki.ca, *client], {}),
        "heuristic": (python_bot("heuristic") + ["--arena", ARENA], {
            "ARENA_TLS_CA": pki.ca, "ARENA_TLS_CERT": pki.client, "ARENA_TLS_KEY": pki.client_key}),
    }
    from factories.bots import node_available

    if node_available() is None:
        bots["node-heuristic"] = (NODE + ["--arena", ARENA, "--tls-ca", pki.ca], {
            "ARENA_TLS_CERT": pki.client, "ARENA_TLS_KEY": pki.client_key})
    else:
        bots["random2"] = (python_bot("random") + ["--arena", ARENA, "--tls-ca", pki.ca, *client], {})
    records, _ = asyncio.run(play(server_tls(pki, client_certificates=True), bots))
    assert_clean(records, list(bots))


def test_a_bot_client_embedded_in_a_program_takes_its_tls_settings(pki: Pki) -> None:
    """BotClient(tls=...) connects, is welcomed, and stops on request; with a CA that did not
    sign the arena's certificate its run() returns 2 at once."""

    async def go() -> tuple[list[str], int, float]:
        arena = await start_arena(server_tls(pki), tokens=("embedded",))
        try:
            client = sdk.BotClient(bot=sdk.Bot, arena=f"localhost:{arena.port}", token="token-embedded",
                                   tls=sdk.Tls.from_files(ca=pki.ca), give_up_after=5)
            running = asyncio.create_task(client.run())
            await arena.host.wait_connected(["embedded"], 10)
            connected = sorted(arena.host.connected_bots())
            client.stop()
            assert await asyncio.wait_for(running, 10) == 0
            began = time.monotonic()
            stranger = sdk.BotClient(bot=sdk.Bot, arena=f"127.0.0.1:{arena.port}", token="token-embedded",
                                     tls=sdk.Tls.from_files(ca=pki.stranger_ca))
            code = await asyncio.wait_for(stranger.run(), 30)
            return connected, code, time.monotonic() - began
        finally:
            await arena.stop(0)

    connected, code, took = asyncio.run(go())
    assert connected == ["embedded"]
    assert code == 2 and took < QUICK


# ---------------------------------------------------------------- what a mismatch says


def lang_bot(lang: str) -> list[str]:
    if lang == "node":
        node_or_skip()
        return NODE
    return python_bot("random")


@pytest.mark.parametrize("lang", ["python", "node"])
@pytest.mark.parametrize("case", ["another CA", "the system's roots", "another host's certificate",
                                  "TLS to a plaintext arena"])
def test_a_handshake_that_cannot_succeed_ends_the_bot_at_once_in_one_line(lang: str, case: str, pki: Pki) -> None:
    """Exit status 2 in a few seconds, though the bot would retry for 60 s, and one line that
    says the handshake failed and what to check. (The system's roots are grpc's own, or
    the file GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names: the system bundle, without the test CA.)"""
    bot = lang_bot(lang)
    tls, options, expected = {
        "another CA": (server_tls(pki), ["--tls-ca", pki.stranger_ca],
                       "check --tls-ca (or ARENA_TLS_CA): it must be the CA that signed the arena's certificate"),
        "the system's roots": (server_tls(pki), ["--tls"], "not signed by a CA this system trusts"),
        "another host's certificate": (server_tls(pki, "other_host"), ["--tls-ca", pki.ca],
                                       "the arena's certificate is not for 127.0.0.1"),
        "TLS to a plaintext arena": (None, ["--tls-ca", pki.ca], "does not use TLS"),
    }[case]
    ended = asyncio.run(run_alone(tls, bot + ["--arena", ARENA, "--token", "t", "--retry-for", "60", *options]))
    assert ended.code == 2, ended
    assert ended.seconds < QUICK, ended
    assert len(ended.lines) == 1, ended.lines
    assert "TLS handshake with 127.0.0.1:" in ended.lines[0] and expected in ended.lines[0], ended.lines


@pytest.mark.parametrize("lang", ["node"])
def test_a_plaintext_bot_at_a_tls_port_is_told_to_use_tls(lang: str, pki: Pki) -> None:
    """The arena closes the connection without a word, which grpc cannot tell from an arena
    going down: the Node.js bot asks the address for a TLS handshake and, answered, exits
    with one line and no retry (the Python SDK does the same: tests/cli/test_cli_traps.py)."""
    bot = lang_bot(lang)
    ended = asyncio.run(run_alone(server_tls(pki), bot + ["--arena", ARENA, "--token", "t", "--retry-for", "60"]))
    assert ended.code == 2, ended
    assert len(ended.lines) == 1 and "uses TLS, and this bot connected without it" in ended.lines[0], ended.lines
    assert "--tls-ca FILE" in ended.lines[0] and "retrying" not in ended.lines[0]


@pytest.mark.parametrize("lang", ["python", "node"])
def test_a_bot_without_the_client_certificate_the_arena_asks_for_is_told_so(lang: str, pki: Pki) -> None:
    bot = lang_bot(lang)
    ended = asyncio.run(run_alone(server_tls(pki, client_certificates=True),
                                  bot + ["--arena", ARENA, "--token", "t", "--retry-for", "1", "--tls-ca", pki.ca]))
    assert ended.code == 1, ended
    hinted = [line for line in ended.lines if "give --tls-cert FILE and --tls-key FILE" in line]
    assert hinted and "retrying" in hinted[0], ended.lines


# ---------------------------------------------------------------- the command line


def run_bot(command: list[str], env: dict[str, str | None] | None = None) -> tuple[int, list[str]]:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30, env=bot_env(env or {}, 0))
    return done.returncode, done.stderr.strip().splitlines()


@pytest.mark.parametrize("lang", ["python", "node"])
def test_tls_files_that_cannot_be_used_are_one_line_and_status_2(lang: str, pki: Pki, tmp_path: Path) -> None:
    """Checked before any connection: a missing CA file (option or variable), a key given as
    the CA, a certificate without its key, a key that is not the certificate's."""
    bot = lang_bot(lang) + ["--arena", "127.0.0.1:9", "--token", "t"]
    missing = str(tmp_path / "nowhere.pem")
    cases: list[tuple[list[str], dict[str, str | None], str]] = [
        (["--tls-ca", missing], {}, "--tls-ca: cannot read"),
        ([], {"ARENA_TLS_CA": missing}, "ARENA_TLS_CA: cannot read"),
        (["--tls-ca", pki.ca_key], {}, "is not a PEM certificate"),
        (["--tls-ca", pki.ca, "--tls-cert", pki.client], {}, "needs both --tls-cert and --tls-key"),
        (["--tls-ca", pki.ca, "--tls-cert", pki.client, "--tls-key", pki.server_key], {},
         "private key of the certificate in"),
    ]
    if lang == "python":
        cases.append(([], {"ARENA_TLS": "maybe"}, "ARENA_TLS='maybe': give 1 (TLS) or 0 (plaintext)"))
    for args, env, expected in cases:
        code, lines = run_bot(bot + args, env)
        assert code == 2, (args, env, lines)
        assert len(lines) == 1 and "error:" in lines[0] and expected in lines[0], (args, env, lines)


def test_the_sdk_reads_tls_settings_from_options_and_the_environment(pki: Pki,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The options win over the variables; ARENA_TLS=0 turns the variables off; no setting is plaintext."""
    for variable in ("ARENA_TLS", "ARENA_TLS_CA", "ARENA_TLS_CERT", "ARENA_TLS_KEY"):
        monkeypatch.delenv(variable, raising=False)
    assert sdk.parse_args(["--token", "t"]).tls is None
    assert sdk.parse_args(["--token", "t", "--tls"]).tls == sdk.Tls()
    with open(pki.ca, "rb") as file:
        ca = file.read()
    monkeypatch.setenv("ARENA_TLS_CA", pki.stranger_ca)
    assert sdk.parse_args(["--token", "t", "--tls-ca", pki.ca]).tls == sdk.Tls(root_certificates=ca, ca_file=pki.ca)
    assert sdk.parse_args(["--token", "t"]).tls.ca_file == pki.stranger_ca
    monkeypatch.setenv("ARENA_TLS_CERT", pki.client)
    monkeypatch.setenv("ARENA_TLS_KEY", pki.client_key)
    assert sdk.parse_args(["--token", "t"]).tls.certificate_chain is not None
    monkeypatch.setenv("ARENA_TLS", "0")
    assert sdk.parse_args(["--token", "t"]).tls is None
    assert sdk.parse_args(["--token", "t", "--tls-ca", pki.ca]).tls.certificate_chain is None


def test_a_unix_socket_stays_plaintext_whatever_the_tls_settings(pki: Pki) -> None:
    client = sdk.BotClient(bot=sdk.Bot, arena="unix:/run/arena/referee.sock", token="t",
                           tls=sdk.Tls.from_files(ca=pki.ca))
    assert client._credentials is None
    assert sdk.BotClient(bot=sdk.Bot, arena="127.0.0.1", token="t", tls=sdk.Tls())._credentials is not None
