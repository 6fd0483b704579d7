"""TLS for the arena's TCP port: the server's certificate, the organiser's trust, and
``arena tls-cert``.

What is here, and who uses it:

* :func:`load_server_tls` reads and checks ``arena serve --tls-cert FILE --tls-key FILE
  [--tls-client-ca FILE]`` before grpc sees them: each file readable, PEM, the key the
  certificate's own (the standard library's ``ssl.SSLContext.load_cert_chain`` checks
  that). grpc itself would accept a mismatched pair at start-up and fail every handshake
  later, with nothing said. :class:`ServerTls` makes grpc's server credentials from it.
* :class:`ClientTls` is how an organiser's client (``arena tournament --server``,
  ``arena web --referee``, ``arena bench referee --tls``) trusts a referee: the CA file it
  was given (``--tls-ca``), or the system's roots (``--tls``). :func:`tls_problem` turns
  the error grpc reports for a failed handshake into one line that says what to check.
* :func:`make_certificates` is ``arena tls-cert HOST``: a throwaway CA and a server
  certificate for HOST signed by it, written with the ``cryptography`` package.
* :func:`is_loopback` decides where plaintext is the default: only this machine.

A Unix socket stays plaintext: it never leaves the machine, and confined bots use it.

The same files with ``openssl`` (1.1.1 or later), for HOST ``arena.example.org``; an IP
address goes in the SAN as ``IP:203.0.113.7``::

    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \\
        -subj "/CN=Wizard Arena CA" -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \\
        -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout ca-key.pem -out ca.pem
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \\
        -subj "/CN=arena.example.org" -keyout server-key.pem -out server.csr
    printf '%s\\n' "subjectAltName=DNS:arena.example.org" "basicConstraints=critical,CA:FALSE" \\
        "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 365 \\
        -extfile server.ext -out server.pem
    chmod 600 server-key.pem ca-key.pem

Bot authors get ``ca.pem``; ``arena serve`` gets ``--tls-cert server.pem --tls-key
server-key.pem``. ``ca-key.pem`` signs certificates: keep it off the server, or delete it
(``arena tls-cert`` never writes it).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import socket
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import ConfigError

if TYPE_CHECKING:
    import grpc

__all__ = ["CertificateFiles", "ClientTls", "ServerTls", "TlsError", "is_loopback", "load_server_tls",
           "make_certificates", "speaks_tls", "tls_problem"]

# What a PEM certificate and a PEM private key begin with (RFC 7468; "EC PRIVATE KEY" and
# "RSA PRIVATE KEY" are OpenSSL's older names, still common).
PEM_CERTIFICATE = "-----BEGIN CERTIFICATE-----"
PEM_KEY = re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")
# The validity arena tls-cert gives by default, and the longest it allows.
DEFAULT_DAYS = 365
MAX_DAYS = 3650


class TlsError(ConfigError):
    """A TLS setting that cannot work (a file, a key, a CA, a handshake): one line, exit 2.

    A kind of ConfigError, which every ``arena`` command already reports as one line."""


# --------------------------------------------------------------------------- where plaintext is the default

def is_loopback(host: str) -> bool:
    """Whether ``host`` (as ``arena serve --host`` takes it) is reachable from this machine
    only: ``localhost``, 127.0.0.0/8 or ::1 (brackets allowed).

    >>> [is_loopback(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost", "LocalHost")]
    [True, True, True, True, True, True]
    >>> [is_loopback(h) for h in ("0.0.0.0", "::", "", "10.0.0.1", "arena.example.org", "localhost.example.org")]
    [False, False, False, False, False, False]
    """
    name = host.strip().removeprefix("[").removesuffix("]")
    if name.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


# --------------------------------------------------------------------------- the server's side

@dataclass(frozen=True)
class ServerTls:
    """The checked PEM contents ``arena serve`` listens with: its certificate chain, its
    key, and (mutual TLS) the CA a client's certificate must be signed by."""

    certificate_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None

    def credentials(self) -> grpc.ServerCredentials:
        """grpc's server credentials; with :attr:`client_ca` every client must present a
        certificate that CA signed, or its handshake fails."""
        import grpc

        return grpc.ssl_server_credentials([(self.private_key, self.certificate_chain)],
                                           root_certificates=self.client_ca,
                                           require_client_auth=self.client_ca is not None)


def read_pem(path: Path, option: str, what: str) -> bytes:
    """The bytes of ``path`` if it is a readable PEM file holding ``what`` (``"certificate"``
    or ``"key"``); a one-line TlsError naming ``option`` otherwise."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TlsError(f"{option} {path}: no such file") from None
    except IsADirectoryError:
        raise TlsError(f"{option} {path}: a directory, not a PEM file") from None
    except OSError as error:
        raise TlsError(f"{option} {path}: cannot read it ({error.strerror or error})") from None
    text = data.decode("ascii", errors="replace")
    found = PEM_CERTIFICATE in text if what == "certificate" else PEM_KEY.search(text) is not None
    if not found:
        expected = PEM_CERTIFICATE if what == "certificate" else "-----BEGIN PRIVATE KEY-----"
        raise TlsError(f"{option} {path}: not a PEM {what} (no {expected!r} line)")
    return data


def load_server_tls(cert: Path, key: Path, client_ca: Path | None = None) -> ServerTls:
    """Read and check ``arena serve``'s TLS files: one-line TlsErrors for a missing or
    unreadable file, one that is not PEM, a certificate or key OpenSSL cannot parse, a key
    that is not the certificate's, a client CA that holds no usable certificate."""
    chain = read_pem(cert, "--tls-cert", "certificate")
    private_key = read_pem(key, "--tls-key", "key")
    _parse_certificates(chain, "--tls-cert", cert)
    check_key_pair(cert, key)
    ca = None
    if client_ca is not None:
        ca = read_pem(client_ca, "--tls-client-ca", "certificate")
        _parse_certificates(ca, "--tls-client-ca", client_ca)
    return ServerTls(chain, private_key, ca)


def check_key_pair(cert: Path, key: Path) -> None:
    """A one-line TlsError unless ``key`` is a usable private key of the certificate
    ``cert`` (a server's, or a client's for a server that asks for one)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        # Parses the key and checks it is the certificate's (OpenSSL's own test).
        context.load_cert_chain(cert, key, password=lambda: _no_password(key))
    except ssl.SSLError as error:
        if getattr(error, "reason", None) == "KEY_VALUES_MISMATCH":
            raise TlsError(f"--tls-key {key} is not the key of --tls-cert {cert} (it does not match the "
                           "certificate's public key)") from None
        raise TlsError(f"--tls-key {key}: not a usable private key ({_ssl_reason(error)})") from None
    except OSError as error:   # changed between our read and OpenSSL's
        raise TlsError(f"cannot read --tls-cert {cert} or --tls-key {key} ({error.strerror or error})") from None


def _parse_certificates(data: bytes, option: str, path: Path) -> None:
    """A TlsError unless OpenSSL parses every certificate of the PEM ``data``."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cadata=data.decode("ascii", "replace"))
    except (ssl.SSLError, ValueError) as error:
        raise TlsError(f"{option} {path}: not a usable PEM certificate ({_ssl_reason(error)})") from None


def _no_password(key: Path) -> str:
    """A key protected by a passphrase is refused: ``arena serve`` runs unattended."""
    raise TlsError(f"--tls-key {key}: the key is protected by a passphrase; arena serve needs it unencrypted "
                   "(readable by its user only: chmod 600)")


def _ssl_reason(error: BaseException) -> str:
    """OpenSSL's reason without the file and line of CPython's _ssl.c.

    >>> _ssl_reason(ssl.SSLError(524297, "[SSL] PEM lib (_ssl.c:3926)"))
    'OpenSSL cannot read it: PEM lib'
    """
    text = str(error.args[1] if len(error.args) > 1 else error)
    text = re.sub(r"\s*\(_ssl\.c:\d+\)$", "", re.sub(r"^\[[^\]]*\]\s*", "", text)).strip()
    return f"OpenSSL cannot read it: {text}" if text else "OpenSSL cannot read it"


# --------------------------------------------------------------------------- the organiser's side

@dataclass(frozen=True)
class ClientTls:
    """How a client of a referee trusts its certificate: the CA certificate in ``ca``
    (``--tls-ca FILE``), or, with ``ca`` None, the system's roots (``--tls``)."""

    ca: Path | None = None
    # A client certificate and its key, for an arena that requires one (--tls-client-ca).
    cert: Path | None = None
    key: Path | None = None

    @property
    def option(self) -> str:
        """The option this trust came from, for messages."""
        return f"--tls-ca {self.ca}" if self.ca is not None else "--tls"

    def credentials(self) -> grpc.ChannelCredentials:
        """grpc's channel credentials; a one-line TlsError for a file that is not what it should be."""
        import grpc

        roots = read_pem(self.ca, "--tls-ca", "certificate") if self.ca is not None else None
        chain = read_pem(self.cert, "--tls-cert", "certificate") if self.cert is not None else None
        private_key = read_pem(self.key, "--tls-key", "key") if self.key is not None else None
        return grpc.ssl_channel_credentials(root_certificates=roots, private_key=private_key,
                                            certificate_chain=chain)

    def secure_channel(self, address: str, options: list[tuple[str, Any]] | None = None) -> grpc.aio.Channel:
        """A grpc.aio channel to ``address`` over TLS."""
        import grpc

        return grpc.aio.secure_channel(address, self.credentials(), options=options)


def tls_problem(error: BaseException, address: str, tls: ClientTls | None) -> str | None:
    """One line saying why a call to the referee at ``address`` failed at the TLS layer, or
    None when it did not (the caller shows grpc's own message then). ``tls`` is how the
    client trusted the referee; None for plaintext.

    grpc reports every failed connection as UNAVAILABLE; the details (grpcio 1.85) end
    with the transport's last error, which says what happened:

    * a TLS client, a certificate its CA did not sign: ``Tls handshake failed
      (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL routines:OPENSSL_internal:
      CERTIFICATE_VERIFY_FAILED: unable to get local issuer certificate: OK``;
    * a TLS client, a certificate for another name: ``Custom verification check failed
      with error: UNAUTHENTICATED: Hostname Verification Check failed.``;
    * a TLS client, a plaintext server: ``...OPENSSL_internal:WRONG_VERSION_NUMBER: ...``;
    * a plaintext client, a TLS server; and a TLS client without a client certificate, a
      server that requires one: ``Socket closed``, which is also what any server that drops
      the connection gives. :func:`speaks_tls` then asks the server itself.

    >>> class Failed(Exception):
    ...     def code(self): return type("Code", (), {"name": "UNAVAILABLE"})()
    ...     def details(self): return ("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:5: "
    ...                                "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:"
    ...                                "SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: unable to get "
    ...                                "local issuer certificate: OK")
    >>> for part in tls_problem(Failed(), "127.0.0.1:5", ClientTls(Path("ca.pem"))).split(": ", 2):
    ...     print(part)
    the TLS handshake with 127.0.0.1:5 failed
    certificate verify failed
    unable to get local issuer certificate (is --tls-ca ca.pem the CA that signed the arena's certificate?)
    """
    code, details = getattr(error, "code", None), getattr(error, "details", None)
    if not callable(code) or not callable(details) or getattr(code(), "name", "") != "UNAVAILABLE":
        return None
    text = str(details() or "")
    last = text.rpartition("last error: ")[2]
    flat = last.replace("_", " ").lower()
    if "socket closed" in flat:
        if not speaks_tls(address):
            return None
        if tls is None:
            return f"{address} speaks TLS: pass --tls-ca FILE (the CA that signed its certificate) or --tls"
        return (f"{address} closed the connection after the TLS handshake: does it require a client certificate "
                "(arena serve --tls-client-ca)? This client has none to send")
    if tls is None:
        return None
    if "certificate verify failed" in flat:
        reason = re.search(r"CERTIFICATE_VERIFY_FAILED: ([^:]+)", last)
        why = f"certificate verify failed: {reason.group(1).strip()}" if reason else "certificate verify failed"
        if "expired" in why or "not yet valid" in why:
            hint = "the arena's certificate is out of its validity period: the organiser makes a new one"
        elif tls.ca is not None:
            hint = f"is {tls.option} the CA that signed the arena's certificate?"
        else:
            hint = "the system's CAs do not trust it: pass --tls-ca FILE with the CA that signed it"
        return f"the TLS handshake with {address} failed: {why} ({hint})"
    if "hostname verification" in flat or "peer name" in flat:
        return (f"the TLS handshake with {address} failed: the arena's certificate is not for {_host_of(address)} "
                "(connect with a name the certificate has, or make one for this name: arena tls-cert HOST)")
    if "wrong version number" in flat:
        return f"{address} does not speak TLS: drop {tls.option}"
    if "handshake" in flat or "ssl" in flat or "tls" in flat:
        return f"the TLS handshake with {address} failed: {last.strip() or 'no details'}"
    return None


def speaks_tls(address: str, timeout: float = 2.0) -> bool:
    """Whether the server at ``address`` (HOST:PORT) answers a TLS handshake, whatever its
    certificate: one connection, closed at once; False when it cannot be reached."""
    host, _, port = address.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as raw, \
                context.wrap_socket(raw, do_handshake_on_connect=False) as wrapped:
            wrapped.do_handshake()
            return True
    except ssl.SSLError as error:
        # An alert is the server's TLS speaking (refusing this client, say); anything else
        # (a plaintext reply) is not TLS.
        return "alert" in str(error).lower()
    except (OSError, ValueError):
        return False


def _host_of(address: str) -> str:
    """HOST of HOST:PORT (brackets kept off an IPv6 address).

    >>> _host_of("[::1]:50051"), _host_of("arena.example.org:50051")
    ('::1', 'arena.example.org')
    """
    return address.rpartition(":")[0].removeprefix("[").removesuffix("]") or address


# --------------------------------------------------------------------------- arena tls-cert

@dataclass(frozen=True)
class CertificateFiles:
    """What :func:`make_certificates` wrote: the CA certificate (for bot authors: it holds
    no secret), and the server's certificate and key (for ``arena serve`` only)."""

    ca: Path
    certificate: Path
    key: Path
    host: str
    names: tuple[str, ...]    # the certificate's subject alternative names, as "DNS:x" / "IP:y"
    days: int


HOST_NAME = re.compile(r"^(?=.{1,253}$)(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?$")


def check_host(host: str) -> str:
    """``host`` as a certificate names it: an IP address (brackets dropped) or a DNS name;
    a TlsError otherwise.

    >>> check_host("[::1]"), check_host("Arena.Example.org")
    ('::1', 'arena.example.org')
    >>> check_host("arena example")
    Traceback (most recent call last):
    ...
    arena.tls.TlsError: 'arena example' is neither a host name nor an IP address
    """
    name = host.strip().removeprefix("[").removesuffix("]")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    if not HOST_NAME.match(name) or name.replace(".", "").isdigit():
        raise TlsError(f"{host!r} is neither a host name nor an IP address")
    return name.lower().removesuffix(".")


def make_certificates(host: str, out: Path, days: int = DEFAULT_DAYS, local: bool = False) -> CertificateFiles:
    """Write ``ca.pem`` (a fresh self-signed CA), ``server.pem`` (a certificate for ``host``
    signed by it) and ``server-key.pem`` (its key, mode 0600) into ``out``.

    The certificate names ``host`` (as an IP address when it is one), and with ``local``
    also localhost, 127.0.0.1 and ::1. The CA's key is never written: nothing else can be
    signed with it, so whoever trusts ``ca.pem`` trusts this one server certificate and no
    other. Existing files are not overwritten (a TlsError). Keys are ECDSA P-256."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if not 1 <= days <= MAX_DAYS:
        raise TlsError(f"--days must be from 1 to {MAX_DAYS} (got {days})")
    name = check_host(host)
    files = CertificateFiles(out / "ca.pem", out / "server.pem", out / "server-key.pem", name, (), days)
    for path in (files.ca, files.certificate, files.key):
        if path.exists():
            raise TlsError(f"{path} exists; remove it, or pass another --out")
    if out.exists() and not out.is_dir():
        raise TlsError(f"--out {out} is not a directory")

    alt: list[x509.GeneralName] = []
    shown: list[str] = []

    def add(value: str) -> None:
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            entry: x509.GeneralName = x509.DNSName(value)
            label = f"DNS:{value}"
        else:
            entry, label = x509.IPAddress(address), f"IP:{address}"
        if label not in shown:
            alt.append(entry)
            shown.append(label)

    add(name)
    if local:
        for value in ("localhost", "127.0.0.1", "::1"):
            add(value)

    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)   # 5 min: clock skew
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Wizard Arena CA for {name}")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])).issuer_name(ca_name)
        .public_key(server_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(start).not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    out.mkdir(parents=True, exist_ok=True)
    key_pem = server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption())
    _write(files.key, key_pem, 0o600)
    _write(files.certificate, server_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(files.ca, ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return CertificateFiles(files.ca, files.certificate, files.key, name, tuple(shown), days)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write ``path`` whole with ``mode`` from its creation (a key is never readable by
    others, not even for a moment): a temporary file in the same folder, renamed."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
