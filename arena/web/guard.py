"""What ``arena web`` refuses before routing: a request addressed to a host it is not
served as, and a request target (path and query string) too long to be one of its URLs.

The Host check is against DNS rebinding. A page on any site the person opens can point a
name of its own (``evil.example``) at 127.0.0.1 and then read, as its own origin, what a
server on this machine answers: the browser checks the name, not the address. The
browser still sends ``Host: evil.example``, so a server that answers only the names it
is served as cannot be read that way. ``arena web`` answers the loopback names
(``127.0.0.1``, ``localhost``, ``::1``), the address or name it binds, and the names given
with ``--allowed-host``. Bound to every interface (``0.0.0.0``, ``::``) it also answers
any IP address: a rebinding needs a name, and a page whose address is in the URL is of
that address's own origin, so an address is safe to answer where the machine's own
addresses are not known in advance; a name people reach it by still needs
``--allowed-host``.

Both refusals take the shape of the site's other failures (the ``refuse`` function the
app passes: JSON under ``/api/``, the error page elsewhere): 400 for the host, 414 for
the target. A target too long for uvicorn to take at all is refused before it reaches
the app (``arena.web.protocol``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_TARGET = 8 * 1024       # bytes of path and query string; the longest URL of the site is far shorter
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def _address(text: str) -> str | None:
    """``text`` as an IP address in its one written form (``0:0::1`` is ``::1``), or None."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def host_name_problem(name: str) -> str | None:
    """Why ``name`` is not a host name or an IP address (IPv6 with or without brackets),
    or None when it is one.

    >>> host_name_problem("arena.example.org") is None, host_name_problem("[::1]") is None
    (True, True)
    >>> host_name_problem("arena.example.org:443")
    'a host name or an IP address, without scheme, port or path'
    """
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    if _address(bare) is not None:
        return None
    labels = name.lower().removesuffix(".").split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return "a host name or an IP address, without scheme, port or path"
    return None


def _normal(name: str) -> str:
    """A host as the guard compares it: an IP address in its one written form, without
    brackets (``[0:0::1]`` is ``::1``), else the name in lower case without a final dot."""
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    return _address(bare) or name.lower().removesuffix(".")


def host_of(header: str) -> str | None:
    """The host a ``Host`` header names, without its port, as ``_normal`` writes it; None
    when the header is no host at all (an IPv6 address without brackets, a port that is
    not a number).

    >>> host_of("[0:0::1]:8000"), host_of("LocalHost.:8000"), host_of("127.0.0.1")
    ('::1', 'localhost', '127.0.0.1')
    >>> host_of("::1"), host_of("localhost:x"), host_of(":8000")
    (None, None, None)
    """
    if header.startswith("["):
        inside, bracket, rest = header[1:].partition("]")
        host, port = f"[{inside}]", rest.removeprefix(":")
        if not bracket or rest[:1] not in ("", ":") or ":" not in inside or _address(inside) is None:
            return None
    else:
        host, _, port = header.partition(":")
        if not host:
            return None
    if port and not (port.isascii() and port.isdigit()):
        return None
    return _normal(host)


@dataclass(frozen=True)
class AllowedHosts:
    """The hosts a server answers: ``names`` (as ``host_of`` writes them), and any IP
    address when ``any_address``."""

    names: frozenset[str]
    any_address: bool = False

    @classmethod
    def serving(cls, bind: str, extra: Iterable[str] = ()) -> AllowedHosts:
        """The hosts of a server bound to ``bind`` (an address or a name; a wildcard
        address binds every interface) and also served as the names ``extra``."""
        wildcard = (address := _address(bind)) is not None and ipaddress.ip_address(address).is_unspecified
        given = [*LOOPBACK, *extra, *(() if wildcard else (bind,))]
        return cls(frozenset(_normal(name) for name in given), any_address=wildcard)

    def admits(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header (None: without one) is answered."""
        host = host_of(header) if header else None
        if host is None:
            return False
        return host in self.names or (self.any_address and _address(host) is not None)


Refuse = Callable[[Request, int, str], Response]


class RequestGuard:
    """ASGI middleware: refuses a request whose target is longer than ``MAX_TARGET``
    (414) or whose ``Host`` header ``hosts`` does not admit (400), with ``refuse``'s
    answer; passes every other request (and the lifespan) to ``app``."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts, refuse: Refuse) -> None:
        self.app, self.hosts, self.refuse = app, hosts, refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        target = len(scope.get("raw_path") or scope["path"].encode()) + len(scope["query_string"])
        if target > MAX_TARGET:
            answer = self.refuse(request, 414, f"the URL's path and query string are {target:,} bytes long; this "
                                 f"server's URLs are at most {MAX_TARGET:,}")
        elif not self.hosts.admits(header := request.headers.get("host")):
            shown = repr(header[:100]) if header else "no host (the request has no Host header)"
            answer = self.refuse(request, 400, f"this server is not served as {shown}: it answers requests "
                                 "addressed to its own names (arena web --allowed-host NAME adds one)")
        else:
            await self.app(scope, receive, send)
            return
        await answer(scope, receive, send)
