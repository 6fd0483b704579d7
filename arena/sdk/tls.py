"""TLS for the bot's connection: the options' PEM files, the :class:`Tls` settings, and
what a failed handshake means (:func:`tls_failure`).

The files are checked when the bot starts (:func:`read_pem`, :func:`check_key_pair`):
grpc itself takes any bytes and fails only at the first connection, with lines of its
own. A handshake that fails on a certificate or because one side does not speak TLS is
said in one line with what to check, and is not retried (see ``arena.sdk.client``); so
is a plaintext connection a TLS arena closed (:func:`plaintext_to_tls`). This is the
bot's side; the arena's own TLS (its server certificate, ``arena tls-cert``) is
``arena.tls``, of which the SDK uses only the handshake probe, ``speaks_tls``.
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass

import grpc

from arena.tls import speaks_tls

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


def closed_before_answering(details: str) -> bool:
    """Whether grpc's status details say the arena closed the connection before it answered
    (a TLS arena does that to a plaintext client; an arena going down, too)."""
    return "failed to connect to all addresses" in details and "Socket closed" in details


def plaintext_to_tls(arena: str, details: str, tls: Tls | None) -> str | None:
    """The one line for a plaintext bot whose connection a TLS arena closed: when the
    connection was closed before the arena answered, the address is asked whether it
    speaks TLS (one handshake, its certificate not checked: :func:`arena.tls.speaks_tls`).
    None when the bot uses TLS, dials a Unix socket, or the arena does not speak TLS (an
    arena going down closes connections too: that is retried). Blocking: a few seconds
    at most."""
    if tls is not None or arena.startswith("unix:") or not closed_before_answering(details):
        return None
    if not speaks_tls(arena):
        return None
    return (f"the arena at {arena} uses TLS, and this bot connected without it: give --tls-ca FILE (the CA "
            f"the organiser hands out; or ARENA_TLS_CA=FILE), or --tls for an arena with a certificate from a "
            f"public CA")


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
