"""``arena serve``: the referee as a long-running server (arena.referee.server), with
``--auto-match`` its own matchmaking (arena.referee.automatch), and ``arena tls-cert``: a
certificate for it (arena.tls).

Its limits default to the referee's own (arena.referee.limits). Plaintext is served on
this machine's loopback only, unless ``--insecure`` says the organiser means it (a
TLS-terminating proxy in front): every ``Play`` stream carries a bot's token and hand,
every organiser call the admin token.
"""

from __future__ import annotations

import asyncio
import ipaddress
import shlex
import socket
from pathlib import Path

import typer

from arena.cli.common import DbOption, check_choice, check_host, db_location, err_console, fail, open_store
from arena.referee.limits import GRACE, MAX_FAULTS, MAX_SECONDS, MOVE_TIME, TIME_BANK
from arena.tls import DEFAULT_DAYS, MAX_DAYS, ServerTls, is_loopback, load_server_tls, make_certificates
from arena.tournament.settings import MAX_FAULT_LIMIT, MIN_MOVE_TIME
from engine import VARIANTS

DEFAULT_PORT = 50051


def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(DEFAULT_PORT, help="Port to listen on (0: any free port)."),
    db: str | None = DbOption,
    move_time: float = typer.Option(MOVE_TIME, help="Seconds per decision."),
    time_bank: float = typer.Option(TIME_BANK, help="Extra seconds per match."),
    max_faults: int = typer.Option(MAX_FAULTS, help="Faults before a bot forfeits a match."),
    grace: float = typer.Option(GRACE, help="Seconds a disconnected bot has to reconnect."),
    auto_match: str | None = typer.Option(None, "--auto-match", metavar="VARIANT", help="Also arrange matches: "
                                          "whenever 4 connected bots that play VARIANT (classic or extreme) have a "
                                          "free slot, seat them in a match of no tournament (docs/serve.md).",
                                          show_default=False),
    quiet: bool = typer.Option(False, "--quiet", help="Log only warnings (default: connections, matches, faults)."),
    tls_cert: Path | None = typer.Option(None, "--tls-cert", metavar="FILE", help="Serve TLS with this PEM "
                                         "certificate (chain); with --tls-key. `arena tls-cert HOST` makes one.",
                                         show_default=False),
    tls_key: Path | None = typer.Option(None, "--tls-key", metavar="FILE", help="The certificate's private key "
                                        "(PEM, unencrypted).", show_default=False),
    tls_client_ca: Path | None = typer.Option(None, "--tls-client-ca", metavar="FILE", help="Mutual TLS: "
                                              "admit only clients whose certificate this CA (PEM) signed.",
                                              show_default=False),
    insecure: bool = typer.Option(False, "--insecure", help="Serve plaintext on a host other than loopback (only "
                                  "behind a TLS-terminating proxy: tokens and hands cross the network)."),
) -> None:
    """Run the referee: bots connect, organisers run matches on it; with --auto-match it
    arranges matches among the connected bots itself.

    On loopback (the default host) it speaks plaintext unless given a certificate; on any
    other host it needs --tls-cert and --tls-key, or --insecure.
    """
    from arena.referee.automatch import AutoMatch  # imported here: it brings grpc
    from arena.referee.server import serve as serve_forever

    check_host(host)
    tls = server_tls(host, tls_cert, tls_key, tls_client_ca, insecure)
    check_choice(auto_match, VARIANTS, "--auto-match")
    if not 0 <= port <= 65535:
        raise typer.BadParameter("must be between 0 and 65535", param_hint="--port")
    for name, value, least in (("--move-time", move_time, MIN_MOVE_TIME), ("--time-bank", time_bank, 0.0),
                               ("--grace", grace, 0.0)):
        if not least <= value <= MAX_SECONDS:     # also refuses nan and inf
            raise typer.BadParameter(f"must be a number of seconds from {least:g} to {MAX_SECONDS:g}", param_hint=name)
    if not 1 <= max_faults <= MAX_FAULT_LIMIT:    # as arena tournament takes it
        raise typer.BadParameter(f"must be from 1 to {MAX_FAULT_LIMIT:,}", param_hint="--max-faults")
    check_port_free(host, port)
    open_store(db, must_exist=False)  # refuse a foreign database before binding the port
    try:
        asyncio.run(serve_forever(host=host, port=port, db_path=db_location(db), move_time=move_time,
                                  time_bank=time_bank, max_faults=max_faults, grace=grace,
                                  auto_match=None if auto_match is None else AutoMatch(auto_match), quiet=quiet,
                                  tls=tls))
    except OSError as error:   # the port was taken between the check and grpc's bind
        fail(str(error))


def check_port_free(host: str, port: int) -> None:
    """Refuse a taken port or an unknown host in one line, before grpc tries (and logs
    its own multi-line complaint on stderr)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as probe:
            # As grpc binds: a port whose old connections linger in TIME-WAIT (a restart
            # right after a stop) is free, one with a listener is not.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error.strerror or error}")


def server_tls(host: str, cert: Path | None, key: Path | None, client_ca: Path | None,
               insecure: bool) -> ServerTls | None:
    """The checked TLS files of ``arena serve`` (None: plaintext), or one line (exit 2) for
    an incomplete or unusable set, or for plaintext where it is not safe: on a host other
    than loopback without ``--insecure``, which then prints one warning line."""
    if cert is None and key is not None:
        fail("--tls-key needs --tls-cert (the certificate the key belongs to)")
    if cert is not None and key is None:
        fail("--tls-cert needs --tls-key (the certificate's private key, PEM)")
    if client_ca is not None and cert is None:
        fail("--tls-client-ca needs --tls-cert and --tls-key: client certificates are checked over TLS only")
    if cert is not None and key is not None:
        if insecure:
            fail("--insecure is for serving plaintext; drop it, or drop --tls-cert and --tls-key")
        return load_server_tls(cert, key, client_ca)     # a TlsError: one line, exit 2
    if not is_loopback(host):
        if not insecure:
            fail(f"--host {host} reaches beyond this machine and every bot's token and hand would cross the network "
                 "in plaintext: pass --tls-cert FILE --tls-key FILE (`arena tls-cert HOST` makes them), or "
                 "--insecure behind a TLS-terminating proxy")
        err_console.print(f"[yellow]warning:[/] serving plaintext on {host} (--insecure): tokens and hands are "
                          "unencrypted up to the TLS-terminating proxy in front", highlight=False, soft_wrap=True)
    return None


def tls_cert(
    host: str = typer.Argument(..., metavar="HOST", help="The host name or IP address bots and organisers connect "
                               "to (the name in --arena HOST:PORT)."),
    out: Path = typer.Option(Path("arena-tls"), "--out", metavar="DIR", help="The folder to write to (made if "
                             "missing; existing files are never overwritten)."),
    days: int = typer.Option(DEFAULT_DAYS, help=f"Days the certificates are valid (1-{MAX_DAYS})."),
    local: bool = typer.Option(False, "--local", help="Also name localhost, 127.0.0.1 and ::1 in the certificate "
                               "(to try it on this machine)."),
) -> None:
    """Make a CA and a TLS certificate for `arena serve` on HOST; print what goes where.

    Writes DIR/ca.pem (give it to bot authors: it holds no secret), DIR/server.pem and
    DIR/server-key.pem (mode 0600: for the server only). The CA's key is not kept: ca.pem
    trusts this one certificate and nothing else anyone signs.
    """
    try:
        made = make_certificates(host, out, days=days, local=local)    # a TlsError: one line, exit 2
    except OSError as error:
        fail(f"cannot write to {out}: {error.strerror or error}")
    try:
        family = ipaddress.ip_address(made.host).version
    except ValueError:
        family = 4
    address = f"[{made.host}]:{DEFAULT_PORT}" if ":" in made.host else f"{made.host}:{DEFAULT_PORT}"
    listen = made.host if is_loopback(made.host) else ("::" if family == 6 else "0.0.0.0")
    print(f"wrote a CA and a certificate for {', '.join(made.names)}, valid {made.days} days:")
    width = max(len(str(path)) for path in (made.ca, made.certificate, made.key))
    print(f"  {str(made.ca):{width}}  the CA certificate: give it to bot authors (it holds no secret)")
    print(f"  {str(made.certificate):{width}}  the arena's certificate")
    print(f"  {str(made.key):{width}}  its private key (mode 0600): keep it on the arena's machine only")
    cert, key, ca = (shlex.quote(str(path)) for path in (made.certificate, made.key, made.ca))
    print(f"serve:     arena serve --host {listen} --tls-cert {cert} --tls-key {key}")
    print(f"a bot:     python my_bot.py --arena {address} --tls-ca ca.pem --token TOKEN")
    print(f"organiser: arena tournament --server {address} --tls-ca {ca}")
