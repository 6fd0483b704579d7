"""``arena web``: serve the leaderboards, crosstables and the match viewer over HTTP (arena.web)."""

from __future__ import annotations

from pathlib import Path

import typer

from arena.cli.common import DbOption, check_host, db_location, fail, open_store


def web(
    host: str = typer.Option("127.0.0.1", help="The address to listen on (127.0.0.1: this machine only)."),
    port: int = typer.Option(8000, help="The port to listen on; 0 picks a free one."),
    allowed_host: list[str] = typer.Option(
        [], "--allowed-host", metavar="NAME", envvar="ARENA_WEB_ALLOWED_HOSTS",
        help="Also answer requests addressed to NAME (a host name or address, no port), the name a public "
             "deployment is reached by; repeat for more. Others get 400 (against DNS rebinding): only 127.0.0.1, "
             "localhost, ::1 and --host are answered, and any IP address when --host is 0.0.0.0 or :: "
             "[env ARENA_WEB_ALLOWED_HOSTS: names apart by spaces]", show_default=False),
    referee: list[str] = typer.Option(
        [], metavar="HOST:PORT",
        help="A running referee (`arena serve`) whose matches /live shows as they are played; repeat for more. "
             "The database's running tournaments are found without it."),
    tls_ca: Path | None = typer.Option(None, "--tls-ca", metavar="FILE", envvar="ARENA_TLS_CA",
                                       help="The --referee servers speak TLS: trust the CA certificate in FILE "
                                       "(a --server tournament's own CA is used without it) [env ARENA_TLS_CA]",
                                       show_default=False),
    tls_cert: Path | None = typer.Option(None, "--tls-cert", metavar="FILE", envvar="ARENA_TLS_CERT",
                                         help="With --tls-ca: the client certificate the --referee servers "
                                         "require (arena serve --tls-client-ca) [env ARENA_TLS_CERT]",
                                         show_default=False),
    tls_key: Path | None = typer.Option(None, "--tls-key", metavar="FILE", envvar="ARENA_TLS_KEY",
                                        help="The key of --tls-cert [env ARENA_TLS_KEY]", show_default=False),
    db: str | None = DbOption,
) -> None:
    """Serve the database read-only in a browser: leaderboards, crosstables, tournaments and a match viewer.

    Running matches can be watched live at /live, through the referees' public events only.
    Prints one line, `serving http://HOST:PORT`, once it listens; Ctrl-C stops it.
    """
    import uvicorn

    from arena.tls import ClientTls, check_key_pair, read_pem
    from arena.web.app import create_app, listening_socket
    from arena.web.guard import AllowedHosts, host_name_problem
    from arena.web.live import REFEREE_TLS
    from arena.web.protocol import MAX_HEAD, LingeringH11Protocol

    check_host(host)
    for name in allowed_host:
        if (problem := host_name_problem(name)) is not None:
            raise typer.BadParameter(f"takes {problem} (got {name!r})", param_hint="--allowed-host")
    if not 0 <= port <= 65535:
        raise typer.BadParameter("must be 0..65535", param_hint="--port")
    for address in referee:
        host_part, _, port_part = address.rpartition(":")
        if not host_part or not port_part.isdigit() or not 0 < int(port_part) <= 65535:
            raise typer.BadParameter(f"takes HOST:PORT (got {address!r})", param_hint="--referee")
    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("a client certificate takes both --tls-cert FILE and --tls-key FILE",
                                 param_hint="--tls-cert/--tls-key")
    if tls_ca is not None and referee:
        read_pem(tls_ca, "--tls-ca", "certificate")     # a missing or foreign file: one line, exit 2
        if tls_cert is not None and tls_key is not None:
            read_pem(tls_cert, "--tls-cert", "certificate")
            read_pem(tls_key, "--tls-key", "key")
            check_key_pair(tls_cert, tls_key)
        for address in referee:
            REFEREE_TLS[address] = ClientTls(tls_ca.resolve(), tls_cert.resolve() if tls_cert else None,
                                             tls_key.resolve() if tls_key else None)
    open_store(db, must_exist=True).close()     # a missing database: one line, exit 2
    app = create_app(db_location(db), referee, AllowedHosts.serving(host, allowed_host))
    # Bind the socket here rather than in uvicorn: a taken port is then one line (exit 2),
    # and with --port 0 the port the system picked is known before the line is printed.
    try:
        sock = listening_socket(host, port)
    except (OSError, OverflowError) as error:
        fail(f"cannot listen on {host}:{port}: {getattr(error, 'strerror', None) or error}")
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    # Connections made from now on wait in the listen backlog until uvicorn accepts them.
    print(f"serving http://{shown_host}:{bound_port}", flush=True)
    # A live page holds its event stream open for a whole match: on Ctrl-C wait 1 s, not for it.
    # A request head past MAX_HEAD is answered 414 or 431, not reset (arena.web.protocol).
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, http=LingeringH11Protocol,
                            h11_max_incomplete_event_size=MAX_HEAD)
    uvicorn.Server(config).run(sockets=[sock])
