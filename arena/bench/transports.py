"""The ways into a benchmark's servers: TCP on loopback, a Unix socket, TLS with a
throwaway certificate; and the client channel the benchmark's processes open.

``arena bench referee`` measures the referee and its bare yardsticks over each
(:mod:`arena.bench.echo`, :mod:`arena.bench.referee_bots`); they share these helpers.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc

from arena.tls import ClientTls, ServerTls, load_server_tls, make_certificates

# The client side uses the same generous limits as the SDK so big payloads are not refused.
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 16 * 1024 * 1024)]


@contextlib.contextmanager
def socket_path() -> Iterator[Path]:
    """A path for a Unix socket in a fresh folder of its own (short: a socket path has at
    most 107 bytes), removed afterwards with whatever was bound there."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        yield Path(folder) / "referee.sock"


def unix_address(socket: Path) -> str:
    """grpc's address of a Unix socket."""
    return f"unix:{socket}"


def transport_of(context: grpc.aio.ServicerContext) -> str:
    """``"unix"``, ``"tls"`` or ``"tcp"``: how a server-side call came in; grpc names a Unix
    socket's client ``unix:`` and a TCP one ``ipv4:HOST:PORT``, and says ``ssl`` in the
    call's auth context when it came over TLS."""
    if context.peer().startswith("unix:"):
        return "unix"
    security = context.auth_context().get("transport_security_type") or []
    return "tls" if b"ssl" in security else "tcp"


@dataclass(frozen=True)
class BenchTls:
    """A throwaway CA and the certificate for 127.0.0.1 it signed: the server's side and
    the CA file its clients trust."""

    server: ServerTls
    ca: Path


@contextlib.contextmanager
def throwaway_tls() -> Iterator[BenchTls]:
    """A fresh CA and certificate for 127.0.0.1 (valid one day), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-tls-") as folder:
        made = make_certificates("127.0.0.1", Path(folder), days=1)
        yield BenchTls(load_server_tls(made.certificate, made.key), made.ca)


def open_channel(address: str, tls_ca: str | None) -> grpc.aio.Channel:
    """A client channel of the benchmark's processes: over TLS trusting ``tls_ca`` when given."""
    if tls_ca:
        return ClientTls(Path(tls_ca)).secure_channel(address, CLIENT_OPTIONS)
    return grpc.aio.insecure_channel(address, options=CLIENT_OPTIONS)

