"""TLS on the arena's TCP port: ``arena serve --tls-cert/--tls-key [--tls-client-ca]``, the
organiser's clients (``arena tournament --server --tls-ca``, the web's referee channel),
``arena tls-cert``, and plaintext refused off loopback.

Real processes and real handshakes with CAs the tests make; servers on 127.0.0.1, port 0.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from bots.harness import BOTS_DIR
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.referee.server import ArenaServer
from arena.store import Store
from arena.tls import ClientTls, TlsError, load_server_tls, make_certificates, speaks_tls, tls_problem
from arena.tournament.settings import TournamentSettings
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc as pb_grpc

ADMIN = "tls-admin-token"
# The arena command chooses grpc's log level itself (one line per failure); the raw test
# bots are told.
ENV = {name: value for name, value in os.environ.items() if name not in ("GRPC_VERBOSITY", "ARENA_TLS_CA")}
ENV.update(ARENA_ADMIN_TOKEN=ADMIN, COLUMNS="200")
BOT_ENV = {**ENV, "GRPC_VERBOSITY": "ERROR"}


@dataclass(frozen=True)
class Pki:
    """The files the tests use: the arena's CA and certificate (``ca``, ``cert``, ``key``,
    for 127.0.0.1 and localhost), an unrelated CA (``other_ca``), and for mutual TLS a
    client CA with a client certificate it signed, plus one signed by no CA the arena knows."""

    ca: Path
    cert: Path
    key: Path
    other_ca: Path
    other_key: Path            # the key of the other CA's server certificate: not ``cert``'s
    client_ca: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path
    stranger_key: Path


def _client_certificate(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA and a client certificate it signed (clientAuth), written to ``folder``."""
    folder.mkdir()
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} client CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "client.pem", folder / "client-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    root = tmp_path_factory.mktemp("pki")
    arena = make_certificates("127.0.0.1", root / "arena", days=1, local=True)
    other = make_certificates("127.0.0.1", root / "other", days=1)
    client_ca, client_cert, client_key = _client_certificate(root / "client", "organiser")
    _, stranger_cert, stranger_key = _client_certificate(root / "stranger", "stranger")
    return Pki(arena.ca, arena.certificate, arena.key, other.ca, other.key, client_ca, client_cert, client_key,
               stranger_cert, stranger_key)


def arena_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def run_arena(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(arena_command(*args), capture_output=True, text=True, env=ENV, timeout=timeout)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command printed (exit code 2, nothing else on stderr)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


class Served:
    """An ``arena serve`` process, its address and its first lines."""

    def __init__(self, *args: str, db: Path) -> None:
        self.process = subprocess.Popen(arena_command("serve", "--port", "0", "--db", str(db), *args),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        assert self.process.stdout is not None
        self.first_line = self.process.stdout.readline()
        found = re.match(r"arena listening on (\S+):(\d+)", self.first_line)
        assert found, (self.first_line, self.process.stderr.read() if self.process.poll() is not None else "")
        self.address = f"127.0.0.1:{found.group(2)}"
        self.host = found.group(1)

    def stop(self) -> str:
        """Stop it; what it wrote on stderr."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate(timeout=5)
        return err


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[type[Served]]:
    started: list[Served] = []

    class Tracked(Served):
        def __init__(self, *args: str, db: Path | None = None) -> None:
            super().__init__(*args, db=db or tmp_path / f"served-{len(started)}.db")
            started.append(self)

    yield Tracked
    for server in started:
        server.stop()


def health(address: str, credentials: grpc.ChannelCredentials | None) -> grpc.RpcError | int:
    """The health check's status over a plaintext (``credentials`` None) or TLS channel,
    or the error the call ended with."""
    channel = grpc.secure_channel(address, credentials) if credentials else grpc.insecure_channel(address)
    with channel:
        try:
            return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10).status
        except grpc.RpcError as error:
            return error


def trusting(ca: Path, cert: Path | None = None, key: Path | None = None) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(ca.read_bytes(), key.read_bytes() if key else None,
                                        cert.read_bytes() if cert else None)


SERVING = health_pb2.HealthCheckResponse.SERVING


# --------------------------------------------------------------------------- arena serve over TLS


def test_tls_serve_speaks_tls_only(pki: Pki, serve: type[Served]) -> None:
    server = serve("--tls-cert", str(pki.cert), "--tls-key", str(pki.key))
    assert server.first_line.strip().endswith("(TLS)")
    assert health(server.address, trusting(pki.ca)) == SERVING
    assert health(f"localhost:{server.address.rpartition(':')[2]}", trusting(pki.ca)) == SERVING

    plaintext = health(server.address, None)
    assert isinstance(plaintext, grpc.RpcError) and plaintext.code() == grpc.StatusCode.UNAVAILABLE
    assert speaks_tls(server.address)
    assert tls_problem(plaintext, server.address, None) == (
        f"{server.address} speaks TLS: pass --tls-ca FILE (the CA that signed its certificate) or --tls")

    wrong_ca = health(server.address, trusting(pki.other_ca))
    assert isinstance(wrong_ca, grpc.RpcError) and wrong_ca.code() == grpc.StatusCode.UNAVAILABLE
    assert tls_problem(wrong_ca, server.address, ClientTls(pki.other_ca)) == (
        f"the TLS handshake with {server.address} failed: certificate verify failed: unable to get local issuer "
        f"certificate (is --tls-ca {pki.other_ca} the CA that signed the arena's certificate?)")
    assert "Traceback" not in server.stop()


def test_a_tls_client_of_a_plaintext_arena_is_told_so(pki: Pki, serve: type[Served]) -> None:
    server = serve()
    assert server.first_line.strip() == f"arena listening on {server.address}"
    failed = health(server.address, trusting(pki.ca))
    assert isinstance(failed, grpc.RpcError)
    assert not speaks_tls(server.address)
    assert tls_problem(failed, server.address, ClientTls(pki.ca)) == (
        f"{server.address} does not speak TLS: drop --tls-ca {pki.ca}")
    assert tls_problem(failed, server.address, None) is None     # plaintext to plaintext: not a TLS matter


def test_mutual_tls_refuses_a_client_without_a_certificate(pki: Pki, serve: type[Served]) -> None:
    server = serve("--tls-cert", str(pki.cert), "--tls-key", str(pki.key), "--tls-client-ca", str(pki.client_ca))
    assert server.first_line.strip().endswith("(TLS, client certificates required)")
    assert health(server.address, trusting(pki.ca, pki.client_cert, pki.client_key)) == SERVING

    anonymous = health(server.address, trusting(pki.ca))
    assert isinstance(anonymous, grpc.RpcError) and anonymous.code() == grpc.StatusCode.UNAVAILABLE
    assert "closed the connection after the TLS handshake: does it require a client certificate" in (
        tls_problem(anonymous, server.address, ClientTls(pki.ca)) or "")
    stranger = health(server.address, trusting(pki.ca, pki.stranger_cert, pki.stranger_key))
    assert isinstance(stranger, grpc.RpcError) and stranger.code() == grpc.StatusCode.UNAVAILABLE
    assert isinstance(health(server.address, None), grpc.RpcError)


# --------------------------------------------------------------------------- plaintext only where safe


def test_plaintext_off_loopback_needs_insecure(tmp_path: Path) -> None:
    line = one_error_line(run_arena("serve", "--host", "0.0.0.0", "--port", "0", "--db", str(tmp_path / "a.db")))
    assert line.startswith("arena: error: --host 0.0.0.0 reaches beyond this machine")
    assert "--tls-cert FILE --tls-key FILE" in line and "--insecure" in line
    assert not (tmp_path / "a.db").exists()

    # --insecure: it starts, with one warning line. Stopped at once; nothing connects to it.
    process = subprocess.Popen(arena_command("serve", "--host", "0.0.0.0", "--port", "0", "--insecure",
                                             "--db", str(tmp_path / "b.db")),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert process.stdout is not None
        assert re.match(r"arena listening on 0\.0\.0\.0:\d+$", process.stdout.readline().strip())
    finally:
        process.terminate()
        _, err = process.communicate(timeout=15)
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "serving plaintext on 0.0.0.0 (--insecure)" in warnings[0], err


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_loopback_stays_plaintext_by_default(host: str) -> None:
    from arena.cli.serve import server_tls

    assert server_tls(host, None, None, None, insecure=False) is None


# --------------------------------------------------------------------------- bad TLS input


@pytest.mark.parametrize("case, expected", [
    ("missing key file", "--tls-key {missing}: no such file"),
    ("missing cert file", "--tls-cert {missing}: no such file"),
    ("not PEM", "--tls-key {junk}: not a PEM key"),
    ("cert that is a key", "--tls-cert {key}: not a PEM certificate"),
    ("damaged key", "--tls-key {damaged}: not a usable private key"),
    ("mismatch", "--tls-key {other_key} is not the key of --tls-cert {cert}"),
    ("cert without key", "--tls-cert needs --tls-key"),
    ("key without cert", "--tls-key needs --tls-cert"),
    ("client CA unreadable", "--tls-client-ca {missing}: no such file"),
    ("client CA not PEM", "--tls-client-ca {junk}: not a PEM certificate"),
    ("client CA without TLS", "--tls-client-ca needs --tls-cert and --tls-key"),
    ("TLS and insecure", "--insecure is for serving plaintext"),
])
def test_bad_tls_input_is_one_line(pki: Pki, tmp_path: Path, case: str, expected: str) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key at all\n")
    damaged = tmp_path / "damaged-key.pem"
    damaged.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    missing = tmp_path / "nowhere.pem"
    cert, key = str(pki.cert), str(pki.key)
    args = {
        "missing key file": ["--tls-cert", cert, "--tls-key", str(missing)],
        "missing cert file": ["--tls-cert", str(missing), "--tls-key", key],
        "not PEM": ["--tls-cert", cert, "--tls-key", str(junk)],
        "cert that is a key": ["--tls-cert", key, "--tls-key", key],
        "damaged key": ["--tls-cert", cert, "--tls-key", str(damaged)],
        "mismatch": ["--tls-cert", cert, "--tls-key", str(pki.other_key)],
        "cert without key": ["--tls-cert", cert],
        "key without cert": ["--tls-key", key],
        "client CA unreadable": ["--tls-cert", cert, "--tls-key", key, "--tls-client-ca", str(missing)],
        "client CA not PEM": ["--tls-cert", cert, "--tls-key", key, "--tls-client-ca", str(junk)],
        "client CA without TLS": ["--tls-client-ca", str(pki.client_ca)],
        "TLS and insecure": ["--tls-cert", cert, "--tls-key", key, "--insecure"],
    }[case]
    db = tmp_path / "never.db"
    line = one_error_line(run_arena("serve", "--port", "0", "--db", str(db), *args))
    names = {"missing": missing, "junk": junk, "key": key, "damaged": damaged, "other_key": pki.other_key,
             "cert": cert}
    assert line.startswith("arena: error: " + expected.format(**names)), line
    assert not db.exists()


def test_load_server_tls_accepts_what_tls_cert_writes(pki: Pki) -> None:
    tls = load_server_tls(pki.cert, pki.key, pki.client_ca)
    assert tls.certificate_chain == pki.cert.read_bytes() and tls.client_ca == pki.client_ca.read_bytes()
    with pytest.raises(TlsError, match="is not the key of"):
        load_server_tls(pki.cert, pki.other_key)


# --------------------------------------------------------------------------- arena tls-cert


def test_tls_cert_writes_a_ca_and_a_key_only_its_owner_reads(tmp_path: Path, serve: type[Served]) -> None:
    out = tmp_path / "certs"
    made = run_arena("tls-cert", "127.0.0.1", "--out", str(out), "--days", "2")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in out.iterdir()) == ["ca.pem", "server-key.pem", "server.pem"]
    assert stat.S_IMODE((out / "server-key.pem").stat().st_mode) == 0o600
    assert re.search(rf"{re.escape(str(out / 'ca.pem'))} +the CA certificate: give it to bot authors", made.stdout)
    assert f"arena serve --host 127.0.0.1 --tls-cert {out / 'server.pem'} --tls-key {out / 'server-key.pem'}" \
        in made.stdout
    assert "--arena 127.0.0.1:50051 --tls-ca ca.pem --token" in made.stdout
    certificate = x509.load_pem_x509_certificate((out / "server.pem").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert names.get_values_for_type(x509.DNSName) == []     # localhost only with --local

    server = serve("--tls-cert", str(out / "server.pem"), "--tls-key", str(out / "server-key.pem"))
    assert health(server.address, trusting(out / "ca.pem")) == SERVING

    again = one_error_line(run_arena("tls-cert", "127.0.0.1", "--out", str(out)))
    assert again == f"arena: error: {out / 'ca.pem'} exists; remove it, or pass another --out"
    assert one_error_line(run_arena("tls-cert", "no such host!", "--out", str(tmp_path / "x"))) == (
        "arena: error: 'no such host!' is neither a host name nor an IP address")


def test_tls_cert_names_a_dns_host_and_local_names_when_asked(tmp_path: Path) -> None:
    made = make_certificates("Arena.Example.org", tmp_path, local=True)
    assert made.names == ("DNS:arena.example.org", "DNS:localhost", "IP:127.0.0.1", "IP:::1")
    ca = x509.load_pem_x509_certificate(made.ca.read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not list(tmp_path.glob("*ca-key*"))     # the CA's key is never written


# --------------------------------------------------------------------------- the organiser's clients


def _register(db: Path, names: list[str]) -> dict[str, str]:
    with Store(str(db)) as store:
        return {name: store.register_bot(name) for name in names}


def _wait_for_bots(address: str, credentials: grpc.ChannelCredentials, count: int) -> None:
    with grpc.secure_channel(address, credentials) as channel:
        stub = pb_grpc.ArenaStub(channel)
        deadline = time.monotonic() + 30
        while len(stub.ListBots(pb.ListBotsRequest(), metadata=(("authorization", f"Bearer {ADMIN}"),),
                                timeout=5).bots) < count:
            assert time.monotonic() < deadline, "the TLS bots did not connect"
            time.sleep(0.1)


@pytest.mark.slow
def test_a_tournament_on_a_tls_server(pki: Pki, tmp_path: Path, serve: type[Served]) -> None:
    served_db = tmp_path / "served.db"
    names = ["tls-a", "tls-b", "tls-c"]
    tokens = _register(served_db, names)
    server = serve("--tls-cert", str(pki.cert), "--tls-key", str(pki.key), "--move-time", "0.5", db=served_db)
    bots = [subprocess.Popen([sys.executable, str(BOTS_DIR / "tls_bot.py"), "--arena", server.address,
                              "--token", tokens[name], "--name", name, "--tls-ca", str(pki.ca), "--seed", str(i)],
                             env=BOT_ENV) for i, name in enumerate(names)]
    try:
        _wait_for_bots(server.address, trusting(pki.ca), len(names))
        db = tmp_path / "organiser.db"
        common = ["tournament", "--server", server.address, "--players", "3", "--rounds", "1", "--games", "3",
                  "--db", str(db)]

        plaintext = one_error_line(run_arena(*common))
        assert plaintext == (f"arena: error: {server.address} speaks TLS: pass --tls-ca FILE (the CA that signed "
                             "its certificate) or --tls")
        wrong = one_error_line(run_arena(*common, "--tls-ca", str(pki.other_ca)))
        assert wrong == (f"arena: error: the TLS handshake with {server.address} failed: certificate verify failed: "
                         f"unable to get local issuer certificate (is --tls-ca {pki.other_ca.resolve()} the CA that "
                         "signed the arena's certificate?)")
        assert one_error_line(run_arena(*common, "--tls-ca", str(tmp_path / "none.pem"))) == (
            f"arena: error: --tls-ca {tmp_path / 'none.pem'}: no such file")
        if db.exists():
            with Store(str(db)) as store:
                assert store.list_tournaments() == []

        # The CA from the environment, as a relative path: stored absolute, for --resume.
        played = subprocess.run(arena_command(*common), capture_output=True, text=True, timeout=120,
                                cwd=pki.ca.parent, env={**ENV, "ARENA_TLS_CA": pki.ca.name})
        assert played.returncode == 0, played.stderr
        assert "3 games played" in played.stdout, played.stdout
        with Store(str(db)) as store:
            (info,) = store.list_tournaments()
            settings = TournamentSettings.from_dict(info.settings)
            assert (settings.tls, settings.tls_ca) == (True, str(pki.ca.resolve()))
            assert settings.client_tls() == ClientTls(pki.ca.resolve())
            assert len(store.finished_game_indexes(info.id)) == 3
        # Duplicate deals: the server is told each match is private, and keeps it from spectators.
        duplicate = subprocess.run(arena_command(*common, "--deals", "duplicate", "--tls-ca", str(pki.ca)),
                                   capture_output=True, text=True, timeout=120, env=ENV)
        assert duplicate.returncode == 0, duplicate.stderr
        with Store(str(db)) as store:
            rotations = [m for m in store.list_matches(limit=10) if m.match_id.startswith(
                next(t.id for t in store.list_tournaments() if t.settings.get("deals") == "duplicate"))]
        assert len(rotations) == 3 and all(m.private for m in rotations)
        with Store(str(served_db)) as served:
            assert all(served.load_match(m.match_id).private for m in rotations)
    finally:
        for bot in bots:
            bot.terminate()
            bot.wait(10)


def test_tls_ca_only_with_a_server(tmp_path: Path, pki: Pki) -> None:
    line = one_error_line(run_arena("tournament", "--tls-ca", str(pki.ca), "--db", str(tmp_path / "t.db")))
    assert line == ("arena: error: --tls-ca and --tls are for --server: the arena's own referee is on this machine, "
                    "in plaintext")
    both = one_error_line(run_arena("tournament", "--server", "127.0.0.1:1", "--tls-ca", str(pki.ca), "--tls",
                                    "--admin-token", "x", "--db", str(tmp_path / "t.db")))
    assert both == "arena: error: --tls-ca FILE trusts that CA, --tls the system's: pass one of them"


def test_the_web_asks_a_tls_referee_over_tls(pki: Pki) -> None:
    from arena.web import live

    async def scenario() -> tuple[tuple[list, list[str]], tuple[list, list[str]]]:
        arena = ArenaServer(admin_token=ADMIN)
        port = await arena.start("127.0.0.1", 0, tls=load_server_tls(pki.cert, pki.key))
        address = f"127.0.0.1:{port}"
        try:
            plain = await asyncio.to_thread(live.running_matches, [address])
            live.REFEREE_TLS[address] = ClientTls(pki.ca)
            secure = await asyncio.to_thread(live.running_matches, [address])
            return plain, secure
        finally:
            live.REFEREE_TLS.pop(address, None)
            await arena.stop(0)

    (_, plain_problems), (matches, problems) = asyncio.run(scenario())
    assert len(plain_problems) == 1 and "speaks TLS: pass --tls-ca FILE" in plain_problems[0]
    assert (matches, problems) == ([], [])


def test_the_unix_socket_stays_plaintext_beside_a_tls_port(pki: Pki, tmp_path: Path) -> None:
    socket = tmp_path / "referee.sock"

    async def scenario() -> tuple[int, int | str]:
        arena = ArenaServer(admin_token=ADMIN)
        port = await arena.start("127.0.0.1", 0, unix_socket=socket, tls=load_server_tls(pki.cert, pki.key))
        try:
            async with grpc.aio.insecure_channel(f"unix:{socket}") as channel:
                local = (await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                                        timeout=10)).status
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                try:
                    await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
                    tcp: int | str = "answered in plaintext"
                except grpc.aio.AioRpcError as error:
                    tcp = error.code().name
            return local, tcp
        finally:
            await arena.stop(0)

    assert asyncio.run(scenario()) == (SERVING, "UNAVAILABLE")


def test_tls_settings_survive_the_store_round_trip() -> None:
    settings = TournamentSettings(server="arena.example.org:50051", tls=True)
    again = TournamentSettings.from_dict(json.loads(json.dumps(settings.to_dict())))
    assert again.client_tls() == ClientTls(None)      # --tls: the system's roots
    assert TournamentSettings(server="h:1").client_tls() is None


def test_remote_arena_says_what_to_check(pki: Pki) -> None:
    from arena.tournament.runner import RemoteArena

    async def scenario() -> tuple[list[str], str, str]:
        arena = ArenaServer(admin_token=ADMIN)
        port = await arena.start("127.0.0.1", 0, tls=load_server_tls(pki.cert, pki.key))
        address = f"127.0.0.1:{port}"
        try:
            async with RemoteArena(address, ADMIN, ClientTls(pki.ca)) as remote:
                bots = await remote.connected_bots("classic")
            failures = []
            for tls in (ClientTls(None), None):
                async with RemoteArena(address, ADMIN, tls) as remote:
                    with pytest.raises(TlsError) as raised:
                        await remote.connected_bots("classic")
                    failures.append(str(raised.value))
            return bots, failures[0], failures[1]
        finally:
            await arena.stop(0)

    bots, system_roots, plaintext = asyncio.run(scenario())
    assert bots == []
    assert system_roots.endswith("certificate verify failed: unable to get local issuer certificate (the system's "
                                 "CAs do not trust it: pass --tls-ca FILE with the CA that signed it)")
    assert "speaks TLS: pass --tls-ca FILE" in plaintext


def test_web_tls_ca_must_be_a_certificate(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    Store(str(db)).close()
    line = one_error_line(run_arena("web", "--referee", "127.0.0.1:1", "--tls-ca", str(tmp_path / "no.pem"),
                                    "--port", "0", "--db", str(db)))
    assert line == f"arena: error: --tls-ca {tmp_path / 'no.pem'}: no such file"


def test_web_client_key_must_be_its_certificates(tmp_path: Path, pki: Pki) -> None:
    db = tmp_path / "arena.db"
    Store(str(db)).close()
    line = one_error_line(run_arena("web", "--referee", "127.0.0.1:1", "--tls-ca", str(pki.ca),
                                    "--tls-cert", str(pki.client_cert), "--tls-key", str(pki.stranger_key),
                                    "--port", "0", "--db", str(db)))
    assert line == (f"arena: error: --tls-key {pki.stranger_key} is not the key of --tls-cert {pki.client_cert} "
                    "(it does not match the certificate's public key)")


def test_a_certificate_for_another_name_is_said_so(tmp_path: Path) -> None:
    from arena.tournament.runner import RemoteArena

    made = make_certificates("arena.example.org", tmp_path, days=1)

    async def scenario() -> str:
        arena = ArenaServer(admin_token=ADMIN)
        port = await arena.start("127.0.0.1", 0, tls=load_server_tls(made.certificate, made.key))
        try:
            async with RemoteArena(f"127.0.0.1:{port}", ADMIN, ClientTls(made.ca)) as remote:
                with pytest.raises(TlsError) as raised:
                    await remote.connected_bots("classic")
            return str(raised.value)
        finally:
            await arena.stop(0)

    assert "failed: the arena's certificate is not for 127.0.0.1 (connect with a name the certificate has" in (
        asyncio.run(scenario()))


def test_the_organisers_client_certificate_reaches_a_mutual_tls_arena(pki: Pki, serve: type[Served],
                                                                        tmp_path: Path) -> None:
    """arena serve --tls-client-ca admits the organiser's own calls only with a client
    certificate: arena tournament --server takes --tls-cert/--tls-key (or ARENA_TLS_CERT
    and ARENA_TLS_KEY) and stores them for --resume."""
    from arena.tournament.runner import RemoteArena
    from arena.tournament.settings import TournamentSettings

    server = serve("--tls-cert", str(pki.cert), "--tls-key", str(pki.key), "--tls-client-ca", str(pki.client_ca))

    async def bots(tls: ClientTls) -> list[str]:
        async with RemoteArena(server.address, ADMIN, tls) as remote:
            return await remote.connected_bots("classic")

    assert asyncio.run(bots(ClientTls(pki.ca, pki.client_cert, pki.client_key))) == []
    with pytest.raises(TlsError, match="does it require a client certificate"):
        asyncio.run(bots(ClientTls(pki.ca)))
    # The command line reaches it too: with no bot connected it stops at the lineup, past TLS.
    done = subprocess.run(arena_command("tournament", "--server", server.address, "--tls-ca", str(pki.ca),
                                        "--db", str(tmp_path / "t.db")), capture_output=True, text=True,
                          timeout=60, env={**ENV, "ARENA_TLS_CERT": str(pki.client_cert),
                                           "ARENA_TLS_KEY": str(pki.client_key)})
    assert done.returncode == 2 and "TLS" not in done.stderr and "certificate" not in done.stderr, done.stderr
    settings = TournamentSettings(server="h:1", tls=True, tls_ca=str(pki.ca), tls_cert=str(pki.client_cert),
                                  tls_key=str(pki.client_key))
    assert TournamentSettings.from_dict(settings.to_dict()).client_tls() == ClientTls(pki.ca, pki.client_cert,
                                                                                      pki.client_key)
    half = run_arena("tournament", "--server", server.address, "--tls-ca", str(pki.ca), "--tls-cert",
                     str(pki.client_cert))
    assert half.returncode == 2 and "both --tls-cert FILE and --tls-key FILE" in one_error_line(half)
