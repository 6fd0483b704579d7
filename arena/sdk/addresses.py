"""The arena's address: what ``--arena`` may say, and the grpc target it means.

:func:`arena_target` turns ``HOST``, ``HOST:PORT``, ``[IPV6]:PORT`` or ``unix:/PATH`` into a
grpc target with a port (:data:`DEFAULT_PORT` when none is given) or an absolute socket
path, and says in one line what is wrong with anything else. Kept apart because both the
command line (``arena.sdk.cli``, at start-up) and :class:`~arena.sdk.client.BotClient`
(for an embedded bot) check an address, and neither needs the other to do it.
"""

from __future__ import annotations

import ipaddress
import os
import re

# The port `arena serve` listens on by default (arena/cli/serve.py); an --arena without a
# port means this one. Left to itself grpc would pick 443, where no arena listens.
DEFAULT_PORT = 50051

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
