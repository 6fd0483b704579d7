"""The Python bot SDK: write a few methods, get a bot that plays in the arena.

A bot is a subclass of :class:`Bot` with one method per decision kind::

    from arena.sdk import Bot, run

    class MyBot(Bot):
        name = "my-bot"

        def bid(self, obs, options):          # classic: options are ints 0..r
            return options[0]

        def play(self, obs, options):         # both: options are card codes
            return self.rng.choice(options)

    if __name__ == "__main__":
        run(MyBot)

and is started with the standard command line::

    python my_bot.py --arena HOST[:PORT] --token T [--name N] [--max-matches N] [--processes N]
                     [--seed S] [--retry-for SECONDS] [--tls-ca FILE | --tls] [--tls-cert FILE --tls-key FILE] [-v]

(the token may come from the ``ARENA_TOKEN`` environment variable instead, the
address from ``ARENA_ADDRESS``, the matches at once from ``ARENA_MAX_MATCHES``, the
processes from ``ARENA_PROCESSES``, the TLS settings from ``ARENA_TLS_CA``, ``ARENA_TLS=1``,
``ARENA_TLS_CERT`` and ``ARENA_TLS_KEY``). The port defaults to 50051, the port ``arena serve``
listens on; an IPv6 address goes in brackets (``[::1]`` or ``[::1]:50051``). The
arena may also be a Unix domain socket, ``unix:/PATH`` (or ``unix:///PATH``), with an
absolute path: that is how the arena reaches a bot it runs in a sandbox without a
network (``--arena unix:/run/arena/referee.sock``).

TLS. An arena that serves TLS is reached with ``--tls-ca FILE``: the bot then trusts the
CA in FILE (the one the organiser hands out), checks the arena's certificate against it
and against the host name or address in ``--arena``, and sends its token and receives its
hands encrypted. ``--tls`` trusts the usual public CAs instead, for an arena with a
public certificate (grpc's own list, or the file ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``
names). ``--tls-cert FILE --tls-key FILE`` add a client certificate, for an arena that
asks for one. A ``unix:`` address stays plaintext: the socket is local to the machine. A
failed handshake is said in one line, with what to check, and ends the bot (exit 2)::

    ERROR random: TLS handshake with 127.0.0.1:50051 failed: the arena's certificate is not signed by
    the CA in ca.pem (unable to get local issuer certificate); check --tls-ca (or ARENA_TLS_CA): it must
    be the CA that signed the arena's certificate

What the SDK does for you:

* connects with ``grpc.aio`` (keepalive and message limits matching the arena),
  authenticates with ``authorization: Bearer <token>`` and says Hello;
* answers every ``DecisionRequest`` with its ``request_id``, calling your method
  with the parsed observation (a dict, see ``docs/engine.md``) and the options
  already converted (ints for bids, strings otherwise);
* plays several matches at once when ``--max-matches`` > 1, each answered on its own:
  one match's slow decision never holds up another's. Each match has a *lane*: its
  hooks and decisions run one after another, never two at once, a plain method on
  the lane's own thread and an ``async def`` method (``bid``, ``play``, ``trump``,
  ``predict``, ``pay``, or a hook) as a task on the event loop, which alone reads and
  writes the stream. With a bot *class* every seat gets its own instance, so instance
  attributes are per-seat state; with a bot *instance* all seats share it, and then
  one lane answers all of them, one decision at a time;
* ``--processes N`` for a bot whose Python code computes: threads share one core
  (the GIL), processes do not. It plays in N processes, each with its own connection
  and a share of ``--max-matches``, stopped together (see :func:`supervise`);
* gives every seat a ``self.rng`` (``random.Random``) seeded from
  ``MatchStarted.seed`` (mixed with ``--seed`` when given), so a tournament replays;
* survives its own bugs: an exception (or an answer that is not among the options)
  is logged to stderr and the first option (or an empty prediction) is sent instead;
* connects and reconnects as described below, and exits cleanly on SIGTERM/SIGINT.

Connecting and reconnecting. When the arena cannot be reached (not started yet,
restarting) or the connection drops, the bot retries: the first retry after about
0.1 s, then doubling up to :data:`RETRY_MAX_DELAY` (5 s), each wait jittered by
x0.5-1.5 so that many bots do not retry in step. It says so once, on stderr::

    WARNING random: cannot reach 127.0.0.1:50051 (connection refused); retrying with backoff up to 5 s for 60 s

(over a Unix socket: ``cannot reach unix:/run/arena/referee.sock (no such socket)``)

and then nothing until ``connected to 127.0.0.1:50051 after 3.2 s ...`` (``-v`` logs
every attempt). An attempt without the arena's Welcome after
:data:`CONNECT_TIMEOUT` (10 s) counts as failed. After :data:`RETRY_FOR` seconds (60,
``--retry-for``) without a connection it gives up. A connection lost *after* the arena's Welcome is retried at
once (about 0.1 s): the arena keeps the bot's seats for a grace period (5 s by
default), so a bot that comes back in time plays on in its matches. The delay and
the 60 s start again after every Welcome.

It does not retry what retrying cannot fix: a refused token or name, a bad Hello
(the codes in :data:`FATAL_CODES`), a TLS handshake that failed on the arena's
certificate or because one side does not speak TLS (:func:`tls_failure`). It does not
come back after the arena ends the stream with status OK, which is what ``arena serve``
does when it is stopped (SIGTERM, Ctrl-C): that is the end of the session, not a failure.

Exit codes of :func:`run`:

* 0: stopped by SIGTERM/SIGINT, or the arena ended the stream cleanly (status OK),
  or the arena process that launched this bot is gone (see :func:`launcher_gone`);
* 1: gave up: no connection for ``--retry-for`` seconds;
* 2: refused by the arena (bad token, name mismatch, bad Hello), a failed TLS handshake
  (a certificate that does not verify, TLS against a plaintext arena), or a bad command
  line (such as ``--arena host:abc``, ``--arena unix:relative.sock`` or an unreadable
  ``--tls-ca`` file); these print one line on stderr.

With ``--processes N`` the code is the one of the first process to exit by itself
(the others are then stopped), or 0 when the bot was stopped (:func:`supervise`).
"""

# ruff: noqa: E402
from __future__ import annotations

import os

# grpc's core logs a failed TLS handshake on stderr (an INFO line) unless told a level; the
# SDK says in one line what failed and what to check. So a bot process that chose no level
# gets ERROR: grpc reads the variable once, when it is first imported, hence before the
# imports (the file-wide noqa above: imports after code).
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import argparse
import asyncio
import functools
import inspect
import ipaddress
import logging
import queue
import random
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

import grpc

from arena.wire import jsonc, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2, arena_pb2_grpc
from engine import PREDICT, Prediction

__all__ = [
    "Bot", "BotClient", "FaultInfo", "MatchInfo", "MatchResult", "Prediction", "Tls",
    "CHANNEL_OPTIONS", "DEFAULT_PORT", "RETRY_FOR", "RETRY_MAX_DELAY",
    "arena_target", "ask", "ask_async", "check_key_pair", "main", "parse_args", "process_share", "read_pem",
    "run", "supervise", "tls_failure",
]

log = logging.getLogger("arena.sdk")

# The port `arena serve` listens on by default (arena/cli/serve.py); an --arena without a
# port means this one. Left to itself grpc would pick 443, where no arena listens.
DEFAULT_PORT = 50051

# The retry policy (see the module docstring and docs/protocol.md section 10).
RETRY_FIRST_DELAY = 0.1   # s: quick, so a bot that lost its connection mid-match is back
                          # well inside the arena's grace period (5 s by default)
RETRY_MAX_DELAY = 5.0     # s: the backoff doubles up to this
RETRY_FOR = 60.0          # s without a connection before the bot gives up (exit 1)
# How long one attempt may take to get its Welcome. grpc alone waits 20 s for a
# connection to a host that never answers; the arena answers a Hello at once.
CONNECT_TIMEOUT = 10.0

# The arena may send up to 32 MiB (arena/referee/server.py); a bot's answers are tiny.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024

# Keepalive: the arena refuses pings more often than every 5-10 s when no data flows
# (it answers with GOAWAY "too_many_pings"), so ping every 20 s. Pings continue while
# idle (max_pings_without_data 0) so that a vanished arena is noticed while the bot
# waits between matches; ping_timeout makes that take seconds, not a minute.
CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    # Reconnection pacing is ours (see BotClient); keep grpc's own retries out of it.
    ("grpc.enable_retries", 0),
)

# Status codes that mean "the arena will not take this bot": retrying cannot help.
FATAL_CODES = frozenset({
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
})

# What to check when the arena refuses the bot, by status code.
_REFUSAL_HINTS = {
    grpc.StatusCode.UNAUTHENTICATED: " (check --token or ARENA_TOKEN: `arena bot register NAME` prints the token)",
    grpc.StatusCode.PERMISSION_DENIED: " (check --name or ARENA_BOT_NAME, or leave it out: the token names the bot)",
}

# ---------------------------------------------------------------- the arena's address

# A host name or an IPv4 address: letters, digits, '-', '_' and dots.
_HOST_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")

# The longest Unix socket path the kernel takes (sun_path is 108 bytes with its NUL).
# grpc does not refuse a longer one: it fails every attempt with "target uri is not valid".
MAX_SOCKET_PATH_BYTES = 107


def arena_target(address: str) -> str:
    """The grpc target for an ``--arena`` value, always with a port or a socket path;
    ``ValueError`` says in one line what is wrong with a value that is not an address.

    Accepted: ``HOST``, ``HOST:PORT``, ``[IPV6]``, ``[IPV6]:PORT`` and a bare IPv6
    address. Without a port the arena's :data:`DEFAULT_PORT` is meant (grpc would
    otherwise try 443). A Unix domain socket is ``unix:/PATH`` or ``unix:///PATH``
    (grpc's two forms), passed on as it is; the path must be absolute, since the bot's
    working directory is not the arena's.

    >>> arena_target("127.0.0.1")
    '127.0.0.1:50051'
    >>> arena_target("arena.example.org:6000")
    'arena.example.org:6000'
    >>> arena_target("[::1]"), arena_target("[::1]:6000"), arena_target("::1")
    ('[::1]:50051', '[::1]:6000', '[::1]:50051')
    >>> arena_target("localhost:abc")
    Traceback (most recent call last):
    ...
    ValueError: the port 'abc' is not a number
    >>> arena_target("localhost:70000")
    Traceback (most recent call last):
    ...
    ValueError: the port 70000 is out of range (1-65535)
    >>> arena_target("unix:/run/arena/referee.sock"), arena_target("unix:///run/arena/referee.sock")
    ('unix:/run/arena/referee.sock', 'unix:///run/arena/referee.sock')
    >>> arena_target("unix:referee.sock")
    Traceback (most recent call last):
    ...
    ValueError: the socket path 'referee.sock' is relative: give an absolute one, unix:/PATH
    """
    text = address.strip()
    if not text:
        raise ValueError("the address is empty (give HOST or HOST:PORT)")
    if text.startswith("unix:"):
        _check_socket_path(text.removeprefix("unix:"))
        return text
    if "://" in text or text.startswith(("dns:", "ipv4:", "ipv6:", "unix-abstract:", "vsock:")):
        raise ValueError("give HOST, HOST:PORT or unix:/PATH, without another scheme such as http:// or dns:")
    if text.startswith("["):
        bracketed = re.fullmatch(r"\[([^\]]*)\](?::(.*))?", text)
        if bracketed is None:
            raise ValueError("an IPv6 address goes in brackets, the port after them: [::1]:50051")
        host, port = bracketed.group(1), bracketed.group(2)
        if not _is_ipv6(host):
            raise ValueError(f"[{host}] is not an IPv6 address")
        host = f"[{host}]"
    elif text.count(":") > 1:
        # Several colons and no brackets: a bare IPv6 address, or one with a port
        # glued on, which cannot be told apart from the address itself.
        if not _is_ipv6(text):
            raise ValueError("an IPv6 address goes in brackets, the port after them: [::1]:50051")
        host, port = f"[{text}]", None
    else:
        host, colon, port_text = text.partition(":")
        port = port_text if colon else None
        if not host:
            raise ValueError("there is no host before the ':' (give HOST or HOST:PORT)")
        if not _HOST_NAME.fullmatch(host):
            raise ValueError(f"{host!r} is not a host name or an IP address")
    return f"{host}:{_port_number(port)}"


def _check_socket_path(rest: str) -> None:
    """Refuse what follows ``unix:`` unless it names a socket by an absolute path:
    ``/PATH`` or ``///PATH``. (``unix://NAME/PATH`` would make grpc-js read PATH as
    relative, and grpcio refuse it.)

    >>> _check_socket_path("")
    Traceback (most recent call last):
    ...
    ValueError: the socket path after 'unix:' is empty (give unix:/PATH)
    >>> _check_socket_path("//arena/referee.sock")
    Traceback (most recent call last):
    ...
    ValueError: after 'unix://' comes the absolute path: unix:///PATH, with three slashes
    """
    path = rest
    if rest.startswith("//"):
        path = rest[2:]
        if not path.startswith("/"):
            raise ValueError("after 'unix://' comes the absolute path: unix:///PATH, with three slashes")
    if not path:
        raise ValueError("the socket path after 'unix:' is empty (give unix:/PATH)")
    if not path.startswith("/"):
        raise ValueError(f"the socket path {path!r} is relative: give an absolute one, unix:/PATH")
    if path.endswith("/"):
        raise ValueError(f"the socket path {path!r} names a folder: give the socket's own path")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise ValueError(f"the socket path is {len(os.fsencode(path))} bytes long; "
                         f"a Unix socket path has at most {MAX_SOCKET_PATH_BYTES}")


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _port_number(port: str | None) -> int:
    """The port of an address; :data:`DEFAULT_PORT` when none was written."""
    if port is None:
        return DEFAULT_PORT
    if not port:
        raise ValueError("the port after ':' is empty")
    if not re.fullmatch(r"[0-9]+", port):   # not str.isdigit(): that accepts '²'
        raise ValueError(f"the port {port!r} is not a number")
    if not 1 <= int(port) <= 65535:
        raise ValueError(f"the port {int(port)} is out of range (1-65535)")
    return int(port)


# ---------------------------------------------------------------- TLS

# The first line of each kind of PEM block a TLS setting may hold; grpc takes PEM only.
_PEM_BEGIN = {
    "CERTIFICATE": re.compile(rb"-----BEGIN CERTIFICATE-----"),
    "PRIVATE KEY": re.compile(rb"-----BEGIN (?:RSA |EC )?PRIVATE KEY-----"),
}


def read_pem(path: str, kind: str) -> bytes:
    """The bytes of the PEM file at ``path``, which must hold a ``kind`` block
    ("CERTIFICATE" or "PRIVATE KEY"); ``ValueError`` says in one line why it cannot be used.

    Checked when the bot starts: grpc itself takes any bytes and fails only at the first
    connection, with lines of its own on stderr.

    >>> read_pem("/nonexistent/ca.pem", "CERTIFICATE")
    Traceback (most recent call last):
    ...
    ValueError: cannot read '/nonexistent/ca.pem': No such file or directory
    >>> read_pem("/", "CERTIFICATE")
    Traceback (most recent call last):
    ...
    ValueError: cannot read '/': Is a directory
    """
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise ValueError(f"cannot read {path!r}: {error.strerror or error}") from None
    if not _PEM_BEGIN[kind].search(data):
        what = "a PEM certificate (-----BEGIN CERTIFICATE-----)" if kind == "CERTIFICATE" else \
            "an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)"
        raise ValueError(f"{path!r} is not {what}")
    return data


def check_key_pair(cert: str, key: str) -> None:
    """``ValueError`` in one line unless the PEM file ``key`` is the private key of the
    certificate in ``cert``, unencrypted (grpc takes no passphrase).

    Checked with the standard library's ``ssl`` when the bot starts: grpc would refuse
    the pair only when it connects, with lines of its own on stderr.
    """
    try:
        # A password that is never right: an encrypted key fails instead of prompting.
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(cert, key, password=b"\0")
    except ssl.SSLError as error:
        raise ValueError(f"{key!r} is not the unencrypted private key of the certificate in {cert!r} "
                         f"({error.reason or 'unreadable, or encrypted'})") from None
    except OSError as error:
        raise ValueError(f"cannot read {cert!r} or {key!r}: {error.strerror or error}") from None


@dataclass(frozen=True)
class Tls:
    """TLS for the connection to the arena: which CA to trust, and the bot's own
    certificate for an arena that asks for one.

    ``Tls()`` trusts the usual public CAs (``--tls``); ``Tls.from_files(ca="ca.pem")`` the CA
    the organiser handed out (``--tls-ca``). Verification is never switched off: the
    arena's certificate must be signed by a trusted CA and name the host (or address) the
    bot dials. ``ca_file`` is only for messages: where ``root_certificates`` came from.
    """

    root_certificates: bytes | None = None   # PEM: the CAs to trust; None: grpc's default roots
    private_key: bytes | None = None         # PEM: the client certificate's key ...
    certificate_chain: bytes | None = None   # ... and the certificate, both or neither
    ca_file: str | None = None

    def __post_init__(self) -> None:
        if (self.private_key is None) != (self.certificate_chain is None):
            raise ValueError("a client certificate needs both --tls-cert and --tls-key")

    @classmethod
    def from_files(cls, ca: str | None = None, cert: str | None = None, key: str | None = None) -> Tls:
        """TLS settings from PEM files (see :func:`read_pem` for the one-line ``ValueError``)."""
        if (cert is None) != (key is None):
            raise ValueError("a client certificate needs both --tls-cert and --tls-key")
        if cert is not None and key is not None:
            check_key_pair(cert, key)
        return cls(root_certificates=read_pem(ca, "CERTIFICATE") if ca else None,
                   private_key=read_pem(key, "PRIVATE KEY") if key else None,
                   certificate_chain=read_pem(cert, "CERTIFICATE") if cert else None,
                   ca_file=ca)

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(root_certificates=self.root_certificates,
                                            private_key=self.private_key,
                                            certificate_chain=self.certificate_chain)

    def closed_hint(self) -> str:
        """What to check when the arena closed a TLS connection before answering: with
        TLS 1.3 that is how a refused (or missing) client certificate shows."""
        if self.certificate_chain is None:
            return "if the arena asks for a client certificate, give --tls-cert FILE and --tls-key FILE"
        return "the arena may not accept this client certificate (--tls-cert)"


# Said when a plaintext connection was closed before the arena answered: a TLS arena
# closes a connection that does not start a handshake.
_PLAINTEXT_CLOSED_HINT = "if the arena uses TLS, give --tls-ca FILE (or --tls)"


def tls_failure(details: str, tls: Tls | None, arena: str) -> str | None:
    """What the status details of a failed connection say went wrong in its TLS handshake,
    and what to check, in one line; None when they tell of no handshake failure.

    Such a failure comes from the settings on one side or the other, not from an arena that
    is down, so the bot does not retry it. grpc reports it as UNAVAILABLE (the texts are
    grpcio 1.85's, measured against a real arena, docs/protocol.md section 10):

    >>> ca = Tls(root_certificates=b"...", ca_file="ca.pem")
    >>> print(tls_failure("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50051: "
    ...       "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL routines:"
    ...       "OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: unable to get local issuer certificate: OK",
    ...       ca, "127.0.0.1:50051"))
    the arena's certificate is not signed by the CA in ca.pem (unable to get local issuer certificate); \
check --tls-ca (or ARENA_TLS_CA): it must be the CA that signed the arena's certificate
    >>> print(tls_failure("... Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:100000f7:"
    ...       "SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER: Invalid certificate verification context: OK",
    ...       ca, "127.0.0.1:50051"))
    the arena at 127.0.0.1:50051 does not use TLS (WRONG_VERSION_NUMBER); leave out --tls, --tls-ca and \
ARENA_TLS*, or ask the organiser for the arena's TLS address
    >>> print(tls_failure("... Custom verification check failed with error: UNAUTHENTICATED: "
    ...       "Hostname Verification Check failed.", ca, "127.0.0.2:50051"))
    the arena's certificate is not for 127.0.0.2 (Hostname Verification Check failed); connect by a name \
or address the certificate is for (ask the organiser)
    >>> tls_failure("... Failed to connect to remote host: Connection refused", ca, "127.0.0.1:50051") is None
    True
    """
    if tls is None:
        return None
    if "Hostname Verification Check failed" in details:
        host = arena.rpartition(":")[0].strip("[]")
        return (f"the arena's certificate is not for {host} (Hostname Verification Check failed); "
                f"connect by a name or address the certificate is for (ask the organiser)")
    verify = re.search(r"CERTIFICATE_VERIFY_FAILED: (.*?)(?:: OK)?$", details)
    if verify:
        reason = verify.group(1)
        if "expired" in reason or "not yet valid" in reason:
            return (f"the arena's certificate is out of date ({reason}); tell the organiser, "
                    f"or check this machine's clock")
        if tls.root_certificates is not None:
            return (f"the arena's certificate is not signed by the CA in {tls.ca_file or 'root_certificates'} "
                    f"({reason}); check --tls-ca (or ARENA_TLS_CA): it must be the CA that signed the "
                    f"arena's certificate")
        return (f"the arena's certificate is not signed by a CA this system trusts ({reason}); give the CA "
                f"the organiser hands out with --tls-ca FILE (or ARENA_TLS_CA)")
    if "WRONG_VERSION_NUMBER" in details:
        return (f"the arena at {arena} does not use TLS (WRONG_VERSION_NUMBER); leave out --tls, --tls-ca "
                f"and ARENA_TLS*, or ask the organiser for the arena's TLS address")
    if "Failed to create security handshaker" in details:
        return ("grpc could not use the TLS settings (Failed to create security handshaker); check that "
                "--tls-key is the private key of --tls-cert")
    if re.search(r"[Hh]andshake failed", details):   # another refusal, e.g. no protocol version in common
        code = re.search(r"OPENSSL_internal:([A-Z0-9_]+)", details)
        return f"the handshake was refused ({code.group(1) if code else details[-200:]})"
    return None


# ---------------------------------------------------------------- values handed to bots


@dataclass(frozen=True)
class MatchInfo:
    """A match the bot was seated in (from ``MatchStarted``)."""

    match_id: str
    variant: str            # "classic" or "extreme"
    seat: int
    players: int
    bot_names: tuple[str, ...]
    options: dict[str, Any]  # the game configuration (rounds, bidding, ...)
    seed: int
    move_time_ms: int
    time_bank_ms: int


@dataclass(frozen=True)
class MatchResult:
    """How a match ended for one seat (from ``MatchEnded``)."""

    match_id: str
    seat: int
    totals: tuple[int, ...]   # points (classic) or penalties (extreme), by seat
    places: tuple[int, ...]   # 1 = best, by seat
    result: dict[str, Any]    # the full result with the per-round breakdown
    forfeited: bool
    reason: str

    @property
    def place(self) -> int:
        return self.places[self.seat] if self.seat < len(self.places) else 0


@dataclass(frozen=True)
class FaultInfo:
    """An answer the arena did not accept (from ``Fault``)."""

    match_id: str
    request_id: int
    kind: str        # "timeout", "illegal", "malformed", "unexpected", "disconnect", "bot_error"
    message: str
    faults: int      # faults of this seat in this match so far
    forfeited: bool  # the seat now plays by the fallback to the end


# ---------------------------------------------------------------- the class bots extend


class Bot:
    """Base class of a bot. Override the decision methods you care about.

    The defaults play uniformly at random among the legal options and predict
    nothing, so a half-written bot is still a legal one. During a decision
    ``self.rng`` is the seat's seeded ``random.Random`` and ``self.match`` its
    :class:`MatchInfo`.

    Any of the methods may be ``async def``: the SDK then awaits it on its event loop
    instead of calling it on the match's thread (see :class:`BotClient`). Either way one
    seat's methods are never called twice at once.
    """

    name: str = "bot"
    version: str = "0.1"
    variants: tuple[str, ...] = ("classic", "extreme")
    # The current request's limits, set before each decision (0 when unknown, e.g. in-process):
    # the per-decision limit and what is left of the match's time bank, in ms.
    deadline_ms: int = 0
    time_bank_ms: int = 0

    def __init__(self) -> None:
        self.rng: random.Random = random.Random(0)
        self.match: MatchInfo | None = None

    # -- decisions: return one of ``options`` (a Prediction or dict for predict)

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        """Classic: how many tricks this seat will win."""
        return self.rng.choice(options)

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        """Both variants: the card to play (a card code)."""
        return self.rng.choice(options)

    def trump(self, obs: dict[str, Any], options: list[str]) -> str:
        """Classic, a Wizard was turned up: the trump suit the dealer chooses."""
        return self.rng.choice(options)

    def predict(self, obs: dict[str, Any]) -> Prediction | Mapping[str, Any] | None:
        """Extreme: take the destroyer or tokens. ``None`` means take nothing."""
        return Prediction()

    def pay(self, obs: dict[str, Any], options: list[str]) -> str:
        """Extreme: the token (a colour, or "white") returned for a won trick."""
        return self.rng.choice(options)

    # -- optional hooks

    def on_match_start(self, info: MatchInfo) -> None:
        """Called when the bot is seated; ``self.rng`` is already seeded."""

    def on_match_end(self, result: MatchResult) -> None:
        """Called when a match this seat played has ended."""

    def on_fault(self, fault: FaultInfo) -> None:
        """Called when the arena did not accept an answer."""

    def on_events(self, events: list[dict[str, Any]]) -> None:
        """Events since this seat's previous decision, oldest first.

        Only parsed when a subclass overrides this method, so bots that do not care
        pay nothing for them.
        """


class BadAnswer(ValueError):
    """What a bot's method returned cannot be an answer (``ask``): the bot's mistake."""


# The decision kinds; each is answered by the Bot method of the same name.
DECISION_KINDS = frozenset({"bid", "play", "trump", "predict", "pay"})


def ask(bot: Bot, kind: str, obs: dict[str, Any], options: list[Any] | None) -> Any:
    """Call the bot's method for a decision kind ("bid", "play", "trump", "predict", "pay")
    and return its answer as the engine types an action: an int for a bid, a string for
    a card or a colour, and for a prediction whatever ``predict`` returned.

    The one place that maps kinds to methods: the connection uses it, and so can code
    that plays bots in-process against the engine (see ``sample_bots/evaluate.py``).
    A method that is a coroutine (``async def``) needs :func:`ask_async`.
    """
    answer = _call_method(bot, kind, obs, options)
    if inspect.isawaitable(answer):
        if inspect.iscoroutine(answer):
            answer.close()   # never awaited: say so here, not in a RuntimeWarning at exit
        raise TypeError(f"{kind} returned an awaitable (an async def method): use ask_async")
    return _typed(kind, answer)


async def ask_async(bot: Bot, kind: str, obs: dict[str, Any], options: list[Any] | None) -> Any:
    """:func:`ask` for a method that may be ``async def``: its answer is awaited."""
    answer = _call_method(bot, kind, obs, options)
    if inspect.isawaitable(answer):
        answer = await answer
    return _typed(kind, answer)


def _call_method(bot: Bot, kind: str, obs: dict[str, Any], options: list[Any] | None) -> Any:
    if kind == "predict":
        return bot.predict(obs)
    if kind in DECISION_KINDS:
        return getattr(bot, kind)(obs, options or [])
    raise ValueError(f"unknown decision kind {kind!r}")


def _typed(kind: str, answer: Any) -> Any:
    """A method's answer as the engine types the action (``BadAnswer`` for a bid that is no number)."""
    if kind == "bid":
        try:
            return int(answer)
        except (TypeError, ValueError):
            raise BadAnswer(f"bid returned {answer!r}, which is no whole number") from None
    if kind == "predict":
        return answer
    return str(answer)


def _is_async(function: Any) -> bool:
    """Whether a bot's method is ``async def`` (then the SDK awaits it on the event loop)."""
    return inspect.iscoroutinefunction(function)


# ---------------------------------------------------------------- the connection


@dataclass
class _Seat:
    """One seat the bot holds: which bot object plays it and with what randomness."""

    info: MatchInfo
    bot: Bot
    rng: random.Random


# How long a stopping bot waits for its lanes to finish the hooks still queued (on_fault,
# on_match_end after the arena's last messages); a decision still thinking then is left to
# its daemon thread, which ends with the process.
LANE_GRACE = 1.0


class _Thinker:
    """A daemon thread that runs one lane's synchronous calls, one at a time.

    A thread, so that a bot's method that takes its time (sleeps, waits on I/O, or runs a
    C extension that releases the GIL) does not hold up the event loop, and with it every
    other match. A daemon, so that a call still thinking when the bot stops does not keep
    the process alive; ``concurrent.futures`` threads are joined at exit, these are not.
    Started at the first call: a bot whose methods are all ``async def`` never starts one.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._calls: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any],
                                             Callable[[], Any]] | None] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None

    def call(self, function: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run ``function`` on the thread; the future (of the running loop) gets its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.thread is None:
            self.thread = threading.Thread(target=self._work, name=self.name, daemon=True)
            self.thread.start()
        self._calls.put((loop, future, function))
        return future

    def close(self) -> None:
        """Let the thread end once its current call (if any) returns."""
        self._calls.put(None)

    def _work(self) -> None:
        while (item := self._calls.get()) is not None:
            loop, future, function = item
            try:
                outcome: tuple[bool, Any] = (True, function())
            except BaseException as error:   # handed to the loop, which decides what it means
                outcome = (False, error)
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:   # the loop is closed: nobody waits for this answer any more
                return


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():   # cancelled while the thread thought: the lane has stopped
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class _Outbox:
    """One connection's answers, written to its stream by one task in the order they are ready.

    Closed when the connection ends: an answer made for it afterwards is dropped (the arena
    sends a pending request again on the next connection), and so is a request still queued.
    """

    def __init__(self) -> None:
        self.queue: asyncio.Queue[arena_pb2.BotMessage] = asyncio.Queue()
        self.closed = False

    def send(self, message: arena_pb2.BotMessage) -> None:
        if not self.closed:
            self.queue.put_nowait(message)


@dataclass
class _Job:
    """One thing a lane does: a decision (``outbox`` says where its answer goes) or a hook.

    ``work`` is a plain function run on the lane's thread, or, when ``on_loop``, a
    coroutine function awaited on the event loop (a bot's ``async def`` method).
    """

    work: Callable[[], Any]
    on_loop: bool = False
    outbox: _Outbox | None = None


@dataclass
class _Lane:
    """The order one match's work is done in (or, for a shared bot instance, all of it):
    its hooks and decisions one after another, never two at once, while other lanes
    run beside it. One asyncio task takes the jobs in turn; sync work goes to the lane's
    :class:`_Thinker`."""

    thinker: _Thinker
    jobs: asyncio.Queue[_Job | None] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None

    def close(self) -> None:
        """No more jobs: the task ends after the queued ones."""
        self.jobs.put_nowait(None)


@dataclass
class _SessionEnd:
    """How one connection ended."""

    code: grpc.StatusCode | None  # None: the connection was never made / broke locally
    details: str
    welcomed: bool

    def status_lost(self) -> bool:
        """True when grpc reported INTERNAL "Internal error from Core": a write of ours
        crossed the end of the call and the arena's real status (perhaps a refusal) was
        replaced (docs/protocol.md, section 10)."""
        return self.code is grpc.StatusCode.INTERNAL and "Internal error from Core" in self.details

    def reason(self) -> str:
        """The failure in a few words: grpc's own details are long and mostly the same
        for every cause ("failed to connect to all addresses; last error: ...")."""
        details = self.details
        for clue, meaning in _FAILURE_CLUES:
            if clue in details:
                return meaning
        if self.code is None:   # ended on our side (a timeout): the details say it all
            return details or "no connection"
        return f"{self.code.name}: {details[:200]}" if details else self.code.name


# How many times in a row an attempt whose answer grpc lost is repeated at once.
_ASK_AGAIN = 3

# Substrings of grpc's status details, and what they mean to a bot author.
_FAILURE_CLUES: tuple[tuple[str, str], ...] = (
    ("Connection refused", "connection refused"),
    # A Unix socket: no file at the path (the arena is not up yet, or another path), or
    # one this user may not open.
    ("No such file or directory", "no such socket"),
    ("Permission denied", "permission denied"),
    ("errors resolving", "unknown host"),
    ("DNS resolution failed", "unknown host"),
    ("Connection reset", "connection reset"),
    ("Socket closed", "connection closed"),
    ("Connection timed out", "connection timed out"),
    ("Network is unreachable", "network unreachable"),
    ("No route to host", "no route to host"),
)


@dataclass
class _Outage:
    """The time without a connection: when it began, how often we tried, the next delay."""

    since: float          # time.monotonic() when the outage began
    lost: bool            # a connection was lost (else: none was made yet)
    attempts: int         # failed attempts to connect so far
    delay: float = RETRY_FIRST_DELAY

    def next_wait(self, jitter: random.Random) -> float:
        """The wait before the next attempt: the delay times 0.5-1.5, capped (jitter
        spreads the reconnects of many bots after an arena restart); then double it."""
        wait = min(self.delay * (0.5 + jitter.random()), RETRY_MAX_DELAY)
        self.delay = min(self.delay * 2, RETRY_MAX_DELAY)
        return wait


def _mix_seed(match_seed: int, user_seed: int | None) -> int:
    """The seat's rng seed: the arena's seed, mixed with ``--seed`` when one was given."""
    return match_seed if user_seed is None else (user_seed << 64) | match_seed


# The parent when the SDK was loaded, that is when the bot started (see launcher_gone).
_PARENT_AT_START = os.getppid()


def launcher_gone() -> bool:
    """True when the arena process that started this bot (``ARENA_PARENT_PID``) is gone:
    then there is nothing to reconnect to, and an orphaned bot should not linger.

    Only a launcher that was this process's parent at the start counts. A bot in a
    sandbox (its own PID namespace) gets no ``ARENA_PARENT_PID``, and if one leaks into
    it from an outer environment, it names a process in another namespace: the parent
    seen there (the sandbox's init) never matched it, so the bot is not taken for an
    orphan and reconnects as usual. Such a bot ends when its retries run out (exit 1).
    """
    launcher = os.environ.get("ARENA_PARENT_PID", "")
    return launcher.isdigit() and _PARENT_AT_START == int(launcher) != os.getppid()


@dataclass
class BotClient:
    """Plays one bot on one arena connection, reconnecting when it drops.

    ``bot`` is a :class:`Bot` subclass (one instance per seat, each match answered on
    its own lane, beside the others) or an instance (shared by every seat, so one lane
    answers them all, in turn). Use :func:`run` for the command line; use this class
    directly to embed a bot in another program (``await client.run()``,
    ``client.stop()``). ``tls`` connects with TLS (``Tls.from_files(ca="ca.pem")``).
    """

    bot: type[Bot] | Bot
    arena: str
    token: str
    name: str | None = None
    version: str | None = None
    max_matches: int = 1
    seed: int | None = None
    give_up_after: float = RETRY_FOR   # seconds without a connection before exiting (--retry-for)
    channel_options: tuple[tuple[str, Any], ...] = CHANNEL_OPTIONS
    tls: Tls | None = None             # None: plaintext; ignored for a unix: address (the socket is local)
    seats: dict[tuple[str, int], _Seat] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # HOST alone means the arena's default port; unix:/PATH stays as it is
        # (ValueError for a non-address).
        self.arena = arena_target(self.arena)
        # TLS over TCP only: a Unix socket is local, and the arena serves it in plaintext
        # (a confined bot's environment may still carry an organiser's ARENA_TLS_CA).
        self._tls = None if self.arena.startswith("unix:") else self.tls
        if self.tls is not None and self._tls is None:
            log.debug("%s: %s is a Unix socket: connecting without TLS", self.name or self.bot.name, self.arena)
        self._credentials = self._tls.credentials() if self._tls is not None else None
        # The token says which bot this is: Hello names one only when it was given
        # (--name, $ARENA_BOT_NAME), and then it must be the token's. The class's name
        # is for logs until the Welcome tells the registered one.
        self._hello_name = self.name or ""
        # name/version/variants are class attributes: readable on a class or an instance.
        self.name = self.name or self.bot.name
        self.version = self.version or self.bot.version
        self._stopping = False
        self._session_task: asyncio.Task | None = None
        self._call: grpc.aio.StreamStreamCall | None = None     # the current connection's
        self._wake: asyncio.Event | None = None
        # Set while there is no connection: read by _session to say how long it took.
        self._outage: _Outage | None = None
        # Jitter for reconnect delays: never drawn from a bot's seeded rng.
        self._jitter = random.Random()
        # The lanes answering the matches: by match id, or one (key None) for a shared bot
        # instance, whose seats would otherwise race on its rng and match attributes.
        self._lanes: dict[str | None, _Lane] = {}
        # SystemExit (or KeyboardInterrupt) raised by the bot's own code on a lane: it ends
        # the bot, as it would have without threads; run() raises it again.
        self._exit: BaseException | None = None

    # -- lifecycle

    def stop(self) -> None:
        """Leave: end the current connection and do not reconnect."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._session_task is not None:
            self._session_task.cancel()
        # Also end the call itself: on Python 3.11 a task cancel that lands just as
        # asyncio.wait_for's inner read finishes (the Welcome) is swallowed, and the
        # session would read on.
        if self._call is not None:
            self._call.cancel()

    async def run(self) -> int:
        """Connect and play until stopped, refused or unable to reconnect; return an exit code.

        One connection at a time (a :meth:`_session`); between them the retry policy of
        the module docstring, logged once per outage rather than once per attempt.
        """
        try:
            return await self._connect_until_done()
        finally:
            await self._close_lanes(LANE_GRACE)
            if self._exit is not None:
                raise self._exit

    async def _connect_until_done(self) -> int:
        """:meth:`run`'s loop: one connection after another, until there is a reason to stop."""
        self._wake = asyncio.Event()
        self._outage = None
        asked_again = 0   # attempts whose answer grpc lost (see status_lost below)
        while not self._stopping:
            attempt_began = time.monotonic()
            self._session_task = asyncio.create_task(self._session())
            try:
                end = await self._session_task
            except asyncio.CancelledError:
                if self._stopping:
                    break
                raise
            finally:
                self._session_task = None
            if self._stopping:
                break
            if end.code is grpc.StatusCode.OK:
                log.info("%s: the arena ended the session (it is stopping); exiting", self.name)
                return 0
            if end.code in FATAL_CODES:
                log.error("%s: refused by the arena: %s %s%s", self.name, end.code.name, end.details,
                          _REFUSAL_HINTS.get(end.code, ""))
                return 2
            handshake = tls_failure(end.details, self._tls, self.arena)
            if handshake is not None and end.code is grpc.StatusCode.UNAVAILABLE:   # the arena is not down
                log.error("%s: TLS handshake with %s failed: %s", self.name, self.arena, handshake)
                return 2
            if launcher_gone():
                log.info("%s: the arena that started this bot has exited; exiting", self.name)
                return 0
            if end.welcomed:
                asked_again = 0
            elif end.status_lost() and asked_again < _ASK_AGAIN:
                # A refused token ends the call at once, and our Hello can cross that end
                # (a few percent of the time on a busy machine): grpc then loses the
                # refusal. Ask again at once, before saying anything, so that a bad token
                # is a refusal (exit 2), not a "cannot reach".
                asked_again += 1
                log.debug("%s: the arena's answer was lost (%s); asking again", self.name, end.reason())
                continue
            outage = self._outage
            new_outage = outage is None or end.welcomed
            if outage is None or end.welcomed:   # new_outage, spelt out for the type checker
                # After a lost connection the outage starts now; before the first
                # connection it started with this attempt.
                outage = self._outage = _Outage(since=time.monotonic() if end.welcomed else attempt_began,
                                                lost=end.welcomed, attempts=0 if end.welcomed else 1)
            else:
                outage.attempts += 1
            left = outage.since + self.give_up_after - time.monotonic()
            why = self._reason(end)
            if left <= 0:
                log.error("%s: gave up after %.0f s and %d attempt%s: cannot reach %s (%s)", self.name,
                          time.monotonic() - outage.since, outage.attempts, "s" if outage.attempts != 1 else "",
                          self.arena, why)
                return 1
            if new_outage:   # said once; each attempt is logged only under -v (debug)
                log.warning("%s: %s %s (%s); %s with backoff up to %g s for %g s", self.name,
                            "lost the connection to" if outage.lost else "cannot reach", self.arena,
                            why, "reconnecting" if outage.lost else "retrying",
                            RETRY_MAX_DELAY, self.give_up_after)
            # The last wait ends at the give-up time, for one last attempt then.
            wait = min(outage.next_wait(self._jitter), left)
            log.debug("%s: next attempt in %.1f s (%d failed so far, the last: %s)", self.name, wait,
                      outage.attempts, why)
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                pass
        log.info("%s: stopped", self.name)
        return 0

    def _reason(self, end: _SessionEnd) -> str:
        """The failure in a few words, with a hint when the arena closed the connection
        before answering: grpc cannot tell why, and a mismatch of TLS settings (plaintext
        to a TLS arena, a client certificate missing or refused) looks just like that. It
        is still retried: an arena going down looks the same."""
        reason = end.reason()
        closed_at_once = "failed to connect to all addresses" in end.details and "Socket closed" in end.details
        if end.welcomed or not closed_at_once or self.arena.startswith("unix:"):
            return reason
        hint = self._tls.closed_hint() if self._tls is not None else _PLAINTEXT_CLOSED_HINT
        return f"{reason} before the arena answered: {hint}"

    def _connect_timeout(self) -> float:
        """How long this attempt may wait for its Welcome: CONNECT_TIMEOUT, less when the
        retry time runs out sooner (but a second at least, or no attempt could succeed)."""
        since = self._outage.since if self._outage is not None else time.monotonic()
        left = since + self.give_up_after - time.monotonic()
        return min(CONNECT_TIMEOUT, max(left, 1.0))

    async def _session(self) -> _SessionEnd:
        """One connection: Hello, then read the arena's messages until the stream ends.

        Reading never waits for the bot: a request goes to its match's lane (see
        :meth:`_handle`), and the answers come back through this connection's outbox,
        which one writer task sends (grpc allows one write at a time on a call).
        """
        welcomed = False
        outbox = _Outbox()
        writer: asyncio.Task[None] | None = None
        if self._credentials is not None:
            channel = grpc.aio.secure_channel(self.arena, self._credentials, options=self.channel_options)
        else:
            channel = grpc.aio.insecure_channel(self.arena, options=self.channel_options)
        try:
            stub = arena_pb2_grpc.ArenaStub(channel)
            call = self._call = stub.Play(metadata=(("authorization", f"Bearer {self.token}"),))
            if self._stopping:       # stop() came while this call was being made
                call.cancel()
            try:
                timeout = self._connect_timeout()
                try:
                    # Bounded: an unanswering host would hold grpc for 20 s. A timed-out
                    # read breaks the stream (grpc.aio cancels the call), but this one is abandoned anyway.
                    message = await asyncio.wait_for(self._hello(call), timeout)
                except TimeoutError:
                    call.cancel()
                    return _SessionEnd(None, f"no answer within {timeout:.0f} s", False)
                writer = asyncio.create_task(self._write_answers(call, outbox))
                while message is not grpc.aio.EOF:
                    if message.HasField("welcome"):
                        welcomed = True
                        self._welcomed(message.welcome)
                    self._handle(message, outbox)
                    message = await call.read()
            except grpc.aio.AioRpcError as err:
                return _SessionEnd(err.code(), err.details() or "", welcomed)
            except asyncio.InvalidStateError:
                pass  # a read after the call ended: its status says why, below
            code = await call.code()
            return _SessionEnd(code, await call.details() or "", welcomed)
        finally:
            self._call = None
            outbox.closed = True
            if writer is not None:
                writer.cancel()
                await asyncio.gather(writer, return_exceptions=True)
            await channel.close()

    @staticmethod
    async def _write_answers(call: grpc.aio.StreamStreamCall, outbox: _Outbox) -> None:
        """The connection's one writer: send each answer as its lane hands it over."""
        try:
            while True:
                message = await outbox.queue.get()
                await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            pass   # the call ended; the reader sees how, and the session ends with it
        except Exception:   # anything else would leave the bot reading but mute: start over
            log.error("cannot send an answer; reconnecting:\n%s", traceback.format_exc())
            call.cancel()

    async def _hello(self, call: grpc.aio.StreamStreamCall) -> Any:
        """Say Hello; return the arena's first message (a Welcome, or ``grpc.aio.EOF``)."""
        await call.write(arena_pb2.BotMessage(hello=arena_pb2.Hello(
            name=self._hello_name, version=self.version,
            variants=list(self.bot.variants), max_matches=max(1, self.max_matches),
        )))
        return await call.read()

    def _welcomed(self, welcome: arena_pb2.Welcome) -> None:
        """The arena took the bot: log it (with how long it took, after an outage) and
        end the outage, so the next one starts with a quick retry and a full budget."""
        self.name = welcome.bot_name or self.name
        outage, self._outage = self._outage, None
        after = ""
        if outage is not None:
            tries = outage.attempts + 1   # the failed ones and this one
            after = f" after {time.monotonic() - outage.since:.1f} s ({tries} attempt{'s' if tries > 1 else ''})"
        log.info("%s: %s %s%s%s as %s (server %s)", self.name,
                 "reconnected to" if outage is not None and outage.lost else "connected to",
                 self.arena, " over TLS" if self._credentials is not None else "", after, welcome.bot_id,
                 welcome.server_version)

    # -- messages

    def _handle(self, message: arena_pb2.ArenaMessage, outbox: _Outbox) -> None:
        """React to one arena message without waiting for the bot: a request (with the
        outbox its answer goes to) and the hooks are queued on their match's lane."""
        which = message.WhichOneof("msg")
        if which == "request":
            self._ask(message.request, outbox)
        elif which == "match_started":
            self._start_match(message.match_started)
        elif which == "match_ended":
            self._end_match(message.match_ended)
        elif which == "fault":
            self._fault(message.fault)

    def _new_seat(self, info: MatchInfo) -> _Seat:
        bot = self.bot if isinstance(self.bot, Bot) else self.bot()
        return _Seat(info=info, bot=bot, rng=random.Random(_mix_seed(info.seed, self.seed)))

    def _start_match(self, started: arena_pb2.MatchStarted) -> None:
        try:
            options = jsonc.loads(started.options_json) if started.options_json else {}
        except ValueError:
            options = {}
        info = MatchInfo(
            match_id=started.match_id, variant=started.variant, seat=started.seat,
            players=started.players, bot_names=tuple(started.bot_names), options=options,
            seed=started.seed, move_time_ms=started.move_time_ms, time_bank_ms=started.time_bank_ms,
        )
        key = (info.match_id, info.seat)
        if key in self.seats:
            return  # re-sent after a reconnect: keep the seat's rng where it was
        seat = self.seats[key] = self._new_seat(info)
        self._queue_hook(seat, "on_match_start", info)

    def _seat_for(self, match_id: str, seat_no: int) -> _Seat:
        """The seat's state; a request for a match we never saw start (e.g. its
        MatchStarted was lost in a reconnect) gets a seat seeded from the match id."""
        key = (match_id, seat_no)
        seat = self.seats.get(key)
        if seat is None:
            info = MatchInfo(match_id=match_id, variant="", seat=seat_no, players=0, bot_names=(),
                             options={}, seed=sum(match_id.encode()), move_time_ms=0, time_bank_ms=0)
            seat = self.seats[key] = self._new_seat(info)
        return seat

    def _end_match(self, ended: arena_pb2.MatchEnded) -> None:
        seat = self.seats.pop((ended.match_id, ended.seat), None)
        if seat is None:
            return
        try:
            result_data = jsonc.loads(ended.result_json) if ended.result_json else {}
        except ValueError:
            result_data = {}
        result = MatchResult(
            match_id=ended.match_id, seat=ended.seat, totals=tuple(ended.totals),
            places=tuple(ended.places), result=result_data, forfeited=ended.forfeited,
            reason=ended.reason,
        )
        log.info("%s: match %s ended (%s): place %s of %d, totals %s", self.name, ended.match_id,
                 ended.reason or "completed", result.place, len(result.places), list(result.totals))
        self._queue_hook(seat, "on_match_end", result)
        # The match's last seat here: its lane ends after its queued work (a decision still
        # thinking is answered, late and ignored by the arena, and its thread then ends).
        if isinstance(self.bot, type) and not any(match_id == ended.match_id for match_id, _ in self.seats):
            lane = self._lanes.pop(ended.match_id, None)
            if lane is not None:
                lane.close()

    def _fault(self, fault: arena_pb2.Fault) -> None:
        log.warning("%s: fault in match %s (request %d): %s: %s%s", self.name, fault.match_id,
                    fault.request_id, fault.kind, fault.message,
                    " - seat forfeited" if fault.forfeited else "")
        info = FaultInfo(match_id=fault.match_id, request_id=fault.request_id, kind=fault.kind,
                         message=fault.message, faults=fault.faults, forfeited=fault.forfeited)
        for (match_id, _), seat in list(self.seats.items()):
            if match_id == fault.match_id:
                self._queue_hook(seat, "on_fault", info)

    # -- lanes: each match's work in order, the matches beside each other

    def _lane_for(self, seat: _Seat) -> _Lane:
        """The lane of the seat's match (of every seat, for a shared bot instance), started on first use."""
        key = None if isinstance(self.bot, Bot) else seat.info.match_id
        lane = self._lanes.get(key)
        if lane is None:
            where = "all matches" if key is None else f"match {key}"
            lane = self._lanes[key] = _Lane(_Thinker(f"{self.name} {where}"))
            lane.task = asyncio.get_running_loop().create_task(self._run_lane(lane))
        return lane

    def _queue_hook(self, seat: _Seat, hook: str, arg: Any) -> None:
        if _is_async(getattr(seat.bot, hook)):
            self._lane_for(seat).jobs.put_nowait(_Job(functools.partial(self._call_hook_async, seat, hook, arg),
                                                      on_loop=True))
        else:
            self._lane_for(seat).jobs.put_nowait(_Job(functools.partial(self._call_hook, seat, hook, arg)))

    def _ask(self, request: arena_pb2.DecisionRequest, outbox: _Outbox) -> None:
        """Queue a decision on its match's lane; the answer goes to ``outbox``."""
        seat = self._seat_for(request.match_id, request.seat)
        kind = protocol.kind_from_wire(request.kind)
        method = getattr(seat.bot, kind, None) if kind in DECISION_KINDS else None
        on_loop = _is_async(method) or (bool(request.events_json) and _is_async(seat.bot.on_events))
        answer = self._answer_async if on_loop else self._answer
        self._lane_for(seat).jobs.put_nowait(_Job(functools.partial(answer, seat, request), on_loop, outbox))

    async def _run_lane(self, lane: _Lane) -> None:
        """Do a lane's jobs in turn, each answer into its connection's outbox."""
        try:
            while (job := await lane.jobs.get()) is not None:
                if job.outbox is not None and job.outbox.closed:
                    continue   # asked on a connection that is gone: the arena asks again on the next
                try:
                    reply = await (job.work() if job.on_loop else lane.thinker.call(job.work))
                except (SystemExit, KeyboardInterrupt) as error:   # the bot's code ends the bot
                    self._exit = error
                    self.stop()
                    return
                except Exception:   # an SDK bug: _answer and the hooks catch the bot's own errors
                    log.error("%s: a lane failed:\n%s", self.name, traceback.format_exc())
                    continue
                if reply is not None and job.outbox is not None:
                    job.outbox.send(reply)
        finally:
            lane.thinker.close()

    async def _close_lanes(self, grace: float) -> None:
        """End every lane: the jobs already queued get ``grace`` seconds (decisions for a
        connection that is gone are skipped), then the lanes are cancelled. A thread still
        in the bot's code is not waited for: it is a daemon and ends when it returns."""
        lanes, self._lanes = list(self._lanes.values()), {}
        for lane in lanes:
            lane.close()
        tasks = [lane.task for lane in lanes if lane.task is not None]
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=grace)
        for task in late:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- calling the bot (on a lane: its thread, or the loop for an async def method)

    def _call_hook(self, seat: _Seat, hook: str, arg: Any) -> None:
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        try:
            getattr(bot, hook)(arg)
        except Exception:  # a bug in a hook must not end the bot
            log.error("%s: %s raised:\n%s", self.name, hook, traceback.format_exc())

    async def _call_hook_async(self, seat: _Seat, hook: str, arg: Any) -> None:
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        try:
            await getattr(bot, hook)(arg)
        except Exception:  # a bug in a hook must not end the bot
            log.error("%s: %s raised:\n%s", self.name, hook, traceback.format_exc())

    def _answer(self, seat: _Seat, request: arena_pb2.DecisionRequest) -> arena_pb2.BotMessage:
        """Ask the bot, falling back to the first option (or no prediction) if it fails:
        the fallback says why in ``Action.bot_error``, which the arena records as a
        ``bot_error`` fault (a bot's own bug is never hidden from its author).

        The wire layer converts both ways (``arena.wire.protocol``): the options arrive
        as the engine types them (ints for bids), the bot's answer is checked against
        them as it is, and only the answer message turns it back into text. Runs on the
        lane's thread; :meth:`_answer_async` is the same for an ``async def`` method.
        """
        read = self._read(seat, request)
        if isinstance(read, arena_pb2.BotMessage):
            return read
        kind, obs, events, options = read
        try:
            if events is not None:
                seat.bot.on_events(events)
            action = ask(seat.bot, kind, obs, options)
        except Exception as error:
            return self._failed(request, kind, error)
        return self._reply(request, kind, options, action)

    async def _answer_async(self, seat: _Seat, request: arena_pb2.DecisionRequest) -> arena_pb2.BotMessage:
        """:meth:`_answer` for a bot whose method (or ``on_events``) is ``async def``: on the loop."""
        read = self._read(seat, request)
        if isinstance(read, arena_pb2.BotMessage):
            return read
        kind, obs, events, options = read
        try:
            if events is not None:
                on_events: Callable[[list[dict[str, Any]]], Any] = seat.bot.on_events
                heard = on_events(events)
                if inspect.isawaitable(heard):
                    await heard
            action = await ask_async(seat.bot, kind, obs, options)
        except Exception as error:
            return self._failed(request, kind, error)
        return self._reply(request, kind, options, action)

    def _read(self, seat: _Seat, request: arena_pb2.DecisionRequest
              ) -> tuple[str, dict[str, Any], list[dict[str, Any]] | None, list[Any]] | arena_pb2.BotMessage:
        """Set the seat's state on its bot and read the request: (kind, observation, events
        or None, options), or the fallback when this SDK cannot read it (its bug, not the bot's)."""
        bot = seat.bot
        bot.rng, bot.match = seat.rng, seat.info
        bot.deadline_ms, bot.time_bank_ms = request.deadline_ms, request.time_bank_ms
        kind = protocol.kind_from_wire(request.kind)
        try:
            obs = protocol.observation_from_wire(request)
            events = (protocol.events_from_wire(request)
                      if request.events_json and type(bot).on_events is not Bot.on_events else None)
            options = protocol.options_from_wire(kind, request.options)
        except Exception as error:
            log.error("%s: cannot read a %s request of match %s; sending the fallback:\n%s",
                      self.name, request.kind, request.match_id, traceback.format_exc())
            return self._fallback(request, kind, f"the SDK could not read the request: {_one_line(error)}")
        return kind, obs, events, options

    def _failed(self, request: arena_pb2.DecisionRequest, kind: str, error: Exception) -> arena_pb2.BotMessage:
        """The fallback for a method that raised (or answered what cannot be an answer)."""
        if isinstance(error, BadAnswer):
            log.error("%s: %s in match %s; sending the fallback", self.name, error, request.match_id)
            return self._fallback(request, kind, str(error))
        # The bot's bug: log it, answer something legal, say why.
        log.error("%s: %s decision failed in match %s; sending the fallback:\n%s",
                  self.name, kind, request.match_id, "".join(traceback.format_exception(error)))
        return self._fallback(request, kind, f"{kind} raised {type(error).__name__}: {_one_line(error)}")

    def _reply(self, request: arena_pb2.DecisionRequest, kind: str, options: list[Any],
               action: Any) -> arena_pb2.BotMessage:
        """The answer message for the bot's action, or the fallback if it is no option."""
        if kind != PREDICT and action not in options:
            shown = ", ".join(str(o) for o in options[:8]) + (", ..." if len(options) > 8 else "")
            why = f"{kind} returned {action!r}, which is no option (choose from {shown})"
            log.error("%s: %s in match %s; sending the fallback", self.name, why, request.match_id)
            return self._fallback(request, kind, why)
        try:
            return protocol.answer_message(request.request_id, kind, action)
        except Exception as error:  # e.g. a prediction of the wrong shape
            log.error("%s: %s answer %r cannot be sent in match %s; sending the fallback:\n%s",
                      self.name, kind, action, request.match_id, traceback.format_exc())
            return self._fallback(request, kind, f"{kind} returned {action!r}: {_one_line(error)}")

    @staticmethod
    def _fallback(request: arena_pb2.DecisionRequest, kind: str | None, why: str) -> arena_pb2.BotMessage:
        """The first option (or no prediction), marked as the SDK's answer for ``why``."""
        if kind == PREDICT or not request.options:
            message = protocol.answer_message(request.request_id, PREDICT, None)
        else:
            message = protocol.answer_message(request.request_id, kind or "", request.options[0])
        message.action.bot_error = why[:BOT_ERROR_CHARS]
        return message


BOT_ERROR_CHARS = 200   # the arena keeps this much of Action.bot_error


def _one_line(error: BaseException) -> str:
    """An exception's message on one line, short enough for ``Action.bot_error``.

    >>> _one_line(ValueError("no card\\n'zz99'"))
    "no card 'zz99'"
    """
    return " ".join(str(error).split())[:BOT_ERROR_CHARS]


# ---------------------------------------------------------------- the command line


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (and exit status 2),
    without the usage block: the error is what a bot author needs to see."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_args(argv: list[str] | None = None, *, default_name: str = "bot") -> argparse.Namespace:
    """The standard bot command line; ``args.arena`` is a grpc target with a port, or
    a ``unix:`` one with an absolute socket path.

    A mistake (no token, ``--arena host:abc``, ``--arena unix:relative.sock``, a bad
    ``$ARENA_ADDRESS``, an unreadable ``--tls-ca``) ends the process with one line on stderr
    and exit status 2. ``args.tls`` is the :class:`Tls` to connect with, or None (plaintext).
    """
    parser = _OneLineParser(description=f"Wizard Arena bot {default_name!r}")
    parser.add_argument("--arena", metavar="HOST[:PORT]|unix:/PATH",
                        help=f"the arena; the port defaults to {DEFAULT_PORT}, an IPv6 address goes in "
                             f"brackets ([::1]:{DEFAULT_PORT}); unix:/PATH (or unix:///PATH) is a Unix "
                             f"socket, by its absolute path (default: $ARENA_ADDRESS or 127.0.0.1)")
    parser.add_argument("--token", default=os.environ.get("ARENA_TOKEN"),
                        help="the bot's token (default: $ARENA_TOKEN)")
    parser.add_argument("--name", default=os.environ.get("ARENA_BOT_NAME"),
                        help="the registered bot name, checked against the token's (default: "
                             "$ARENA_BOT_NAME, else none: the token says which bot this is)")
    parser.add_argument("--max-matches", type=int, default=None,
                        help="matches to play at once (default: $ARENA_MAX_MATCHES or 1)")
    parser.add_argument("--processes", type=int, default=None, metavar="N",
                        help="play in N processes, each with its own connection and its share of "
                             "--max-matches (at least 1 each): N cores for a bot whose Python code computes, "
                             "which threads cannot give it (the GIL) (default: $ARENA_PROCESSES or 1)")
    parser.add_argument("--seed", type=int, default=None,
                        help="mixed into every match's seed (default: the arena's seeds only)")
    # --give-up-after: the option's first name, still accepted.
    parser.add_argument("--retry-for", "--give-up-after", dest="retry_for", type=float, default=RETRY_FOR,
                        metavar="SECONDS",
                        help=f"seconds without a connection before exiting with status 1 (default {RETRY_FOR:g})")
    tls = parser.add_argument_group("TLS", "for an arena that serves TLS; a unix: address stays plaintext")
    tls.add_argument("--tls-ca", metavar="FILE",
                     help="connect with TLS, trusting the CA certificate in FILE (PEM): the one the organiser "
                          "hands out (default: $ARENA_TLS_CA)")
    tls.add_argument("--tls", dest="tls_on", action="store_true",
                     help="connect with TLS, trusting the usual public CAs (grpc's list, or the file "
                          "$GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names) (default: $ARENA_TLS=1; ARENA_TLS=0 "
                          "turns the ARENA_TLS_* variables off)")
    tls.add_argument("--tls-cert", metavar="FILE",
                     help="a client certificate (PEM), for an arena that asks for one; with --tls-key "
                          "(default: $ARENA_TLS_CERT)")
    tls.add_argument("--tls-key", metavar="FILE", help="its private key (PEM) (default: $ARENA_TLS_KEY)")
    parser.add_argument("--verbose", "-v", action="store_true", help="log more to stderr (every retry)")
    args = parser.parse_args(argv)

    if args.arena is not None:
        address, source = args.arena, f"--arena {args.arena!r}"
    else:
        address = os.environ.get("ARENA_ADDRESS") or "127.0.0.1"
        source = f"ARENA_ADDRESS={address!r}"
    try:
        args.arena = arena_target(address)
    except ValueError as error:
        parser.error(f"{source}: {error}")
    if not args.token:
        parser.error("a token is needed: --token T or ARENA_TOKEN")
    if args.max_matches is None:
        args.max_matches = _env_number(parser, "ARENA_MAX_MATCHES")
    if args.max_matches < 1:
        parser.error("--max-matches must be at least 1")
    if args.processes is None:
        args.processes = _env_number(parser, "ARENA_PROCESSES")
    if not 1 <= args.processes <= MAX_PROCESSES:
        parser.error(f"--processes must be from 1 to {MAX_PROCESSES}")
    # One of the processes --processes started: it plays its share, and starts none.
    args.process = _process_of(parser)
    if args.process is not None:
        index, count = args.process
        args.max_matches = process_share(args.max_matches, count, index)
        args.processes = 1
    if not args.retry_for >= 0:   # also refuses nan
        parser.error("--retry-for must be 0 or more seconds")
    args.give_up_after = args.retry_for   # the attribute's first name, for callers that read it
    args.tls = _tls_settings(args, parser)
    return args


def _env_number(parser: argparse.ArgumentParser, variable: str) -> int:
    """A whole number from the environment (1 when unset); a bad one ends the process (exit 2)."""
    text = os.environ.get(variable) or "1"
    if not re.fullmatch(r"[0-9]+", text.strip()):
        parser.error(f"{variable}={text!r} is not a number")
    return int(text)


def _process_of(parser: argparse.ArgumentParser) -> tuple[int, int] | None:
    """``(I, N)`` from ``ARENA_PROCESS=I/N`` (set by :func:`supervise` for the I-th of N processes), else None."""
    text = os.environ.get(PROCESS_VARIABLE)
    if not text:
        return None
    found = re.fullmatch(r"\s*([0-9]+)/([0-9]+)\s*", text)
    if found is None or not 1 <= int(found.group(1)) <= int(found.group(2)) <= MAX_PROCESSES:
        parser.error(f"{PROCESS_VARIABLE}={text!r} is not I/N, process I of N (1 <= I <= N <= {MAX_PROCESSES})")
    return int(found.group(1)), int(found.group(2))


def process_share(max_matches: int, processes: int, index: int) -> int:
    """How many matches process ``index`` (1 to ``processes``) plays at once: ``max_matches``
    shared out as evenly as can be, and at least one each.

    >>> [process_share(4, 2, i) for i in (1, 2)], [process_share(5, 2, i) for i in (1, 2)]
    ([2, 2], [3, 2])
    >>> [process_share(2, 3, i) for i in (1, 2, 3)]
    [1, 1, 1]
    """
    share, extra = divmod(max_matches, processes)
    return max(1, share + (1 if index <= extra else 0))


# The environment variable behind each TLS option (the option wins when both are given).
_TLS_ENV = {"tls_ca": "ARENA_TLS_CA", "tls_cert": "ARENA_TLS_CERT", "tls_key": "ARENA_TLS_KEY"}
_YES, _NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _tls_settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Tls | None:
    """The :class:`Tls` the command line and the ``ARENA_TLS*`` variables ask for, or None
    for plaintext; a file that cannot be used ends the process with one line (exit 2).

    ``ARENA_TLS=1`` is ``--tls``; ``ARENA_TLS=0`` turns the other variables off (a bot that
    inherited an organiser's ``ARENA_TLS_CA`` but plays on a plaintext arena), not the options.
    """
    switch = os.environ.get("ARENA_TLS", "").strip().lower()
    if switch and switch not in _YES + _NO:
        parser.error(f"ARENA_TLS={os.environ['ARENA_TLS']!r}: give 1 (TLS) or 0 (plaintext)")
    files: dict[str, tuple[str, str]] = {}   # option -> (path, the option or variable that gave it)
    for option, variable in _TLS_ENV.items():
        if getattr(args, option):
            files[option] = (getattr(args, option), "--" + option.replace("_", "-"))
        elif os.environ.get(variable) and switch not in _NO:
            files[option] = (os.environ[variable], variable)
    if not (args.tls_on or switch in _YES or files):
        return None
    if ("tls_cert" in files) != ("tls_key" in files):
        parser.error("a client certificate needs both --tls-cert and --tls-key (or ARENA_TLS_CERT and ARENA_TLS_KEY)")
    pem: dict[str, bytes] = {}
    for option, (path, source) in files.items():
        try:
            pem[option] = read_pem(path, "PRIVATE KEY" if option == "tls_key" else "CERTIFICATE")
        except ValueError as error:
            parser.error(f"{source}: {error}")
    if "tls_cert" in files:
        try:
            check_key_pair(files["tls_cert"][0], files["tls_key"][0])
        except ValueError as error:
            parser.error(f"{files['tls_key'][1]}: {error}")
    return Tls(root_certificates=pem.get("tls_ca"), private_key=pem.get("tls_key"),
               certificate_chain=pem.get("tls_cert"), ca_file=files["tls_ca"][0] if "tls_ca" in files else None)


async def main(bot: type[Bot] | Bot, args: argparse.Namespace) -> int:
    """Run a bot until it is stopped; SIGTERM and SIGINT stop it cleanly. One of the
    processes of ``--processes`` also stops when the process that started it is gone."""
    client = BotClient(bot=bot, arena=args.arena, token=args.token, name=args.name,
                       max_matches=args.max_matches, seed=args.seed,
                       give_up_after=getattr(args, "retry_for", RETRY_FOR), tls=getattr(args, "tls", None))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, client.stop)
        except (NotImplementedError, RuntimeError):  # not the main thread / not POSIX
            pass
    watch = asyncio.create_task(_stop_when_orphaned(client)) if getattr(args, "process", None) else None
    try:
        return await client.run()
    finally:
        if watch is not None:
            watch.cancel()


async def _stop_when_orphaned(client: BotClient) -> None:
    """Stop the client once the process that started this one has exited: the processes of
    ``--processes`` go with theirs, also when it was killed and could not stop them."""
    while not launcher_gone():
        await asyncio.sleep(ORPHAN_POLL)
    log.info("%s: the process that started this one has exited; exiting", client.name)
    client.stop()


def run(bot: type[Bot] | Bot, argv: list[str] | None = None) -> None:
    """Parse the standard command line, play, and exit with :meth:`BotClient.run`'s code
    (with ``--processes N``: :func:`supervise`'s)."""
    args = parse_args(argv, default_name=bot.name)
    which = f"[{args.process[0]}/{args.process[1]}] " if args.process is not None else ""
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s %(levelname)s {which}%(message)s")
    for chatty in ("grpc", "asyncio"):   # their debug lines would bury the bot's own under -v
        logging.getLogger(chatty).setLevel(logging.INFO)
    if args.processes > 1:
        if args.processes > args.max_matches:
            log.warning("%s: %d processes for %d matches at once: each takes one, %d at once in all",
                        bot.name, args.processes, args.max_matches, args.processes)
        sys.exit(supervise(args.processes, name=bot.name))
    sys.exit(asyncio.run(main(bot, args)))


# ---------------------------------------------------------------- several processes

# The most processes --processes starts: the arena lets one bot hold 32 streams at once.
MAX_PROCESSES = 32
# Tells a process started by supervise() which of them it is: "I/N".
PROCESS_VARIABLE = "ARENA_PROCESS"
# Seconds between a process's looks at whether its starter is still there.
ORPHAN_POLL = 0.5
# Seconds the processes get to leave after SIGTERM before they are killed.
STOP_SECONDS = 5.0


def supervise(processes: int, command: list[str] | None = None, name: str = "bot") -> int:
    """Play in ``processes`` processes (``--processes N``) and return the exit code for all.

    Each is ``command``, by default this program's own command line run again
    (``sys.orig_argv`` with this Python), with ``ARENA_PROCESS=I/N`` in its environment:
    process I of N plays its :func:`process_share` of ``--max-matches`` on its own
    connection, and stops when this process is gone (``ARENA_PARENT_PID``). This process
    only watches them. Separate processes, not threads, because Python code that computes
    runs on one core at a time in a process (the GIL); and started afresh, not forked,
    because a forked gRPC process can hang.

    The bot ends as one: SIGTERM or SIGINT here, or the arena that started this process
    exiting, stops them all (exit 0); when one exits by itself (a crash, a refusal, the
    arena ending the session), the others are stopped and its exit code is the bot's
    (the highest, when several exit together; 128 + N for one killed by signal N).
    """
    command = command or [sys.executable, *sys.orig_argv[1:]]
    stopped: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stopped.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    children: list[subprocess.Popen[bytes]] = []
    try:
        env = {**os.environ, "ARENA_PARENT_PID": str(os.getpid())}
        for index in range(1, processes + 1):
            children.append(subprocess.Popen(command, env={**env, PROCESS_VARIABLE: f"{index}/{processes}"}))
        log.info("%s: playing in %d processes (%s)", name, processes, ", ".join(str(c.pid) for c in children))
        while not stopped and not launcher_gone() and all(child.poll() is None for child in children):
            time.sleep(0.1)
    finally:
        ended = {index: child.returncode for index, child in enumerate(children, 1) if child.returncode is not None}
        _stop_processes(children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stopped or not ended:
        return 0
    index, code = max(ended.items(), key=lambda item: _exit_code(item[1]))
    log.log(logging.INFO if code == 0 else logging.ERROR, "%s: process %d/%d exited with code %s; %s",
            name, index, processes, code, "the others were stopped" if processes > 1 else "stopped")
    return _exit_code(code)


def _exit_code(returncode: int) -> int:
    """A child's return code as an exit status: 128 + N for one killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def _stop_processes(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM the children still running, and SIGKILL those still there after STOP_SECONDS."""
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
