"""The HTTP/1.1 protocol ``arena web`` runs uvicorn with: uvicorn's h11 protocol, which
answers a request head too long to take with a status that says so and lets the client
read it.

uvicorn keeps at most ``MAX_HEAD`` bytes of a request head that has not ended yet (h11's
``max_incomplete_event_size``); past that its protocol writes a 400 and closes the
connection at once. A client sending a 1 MB query string is then still sending: closing a
socket with unread bytes makes the kernel reset the connection, and the client sees
"connection reset by peer" (its answer, if it had arrived, thrown away) instead of an
answer. Here the answer is 414 when the request line itself did not end (the address is
too long) and 431 when the headers did not, with a body; then the server shuts its side
for writing, so the answer and an end of stream reach the client, and reads and drops
what the client still sends (a lingering close, as nginx does) until it closes, stays
silent ``LINGER_IDLE`` seconds, or ``LINGER_MAX`` seconds have passed. Any other
malformed request is still a plain 400.

A long head that arrives in one read is taken whole by h11 (up to asyncio's 256 KiB a
read); the app refuses its target (``arena.web.guard``, 414 in the site's own shape).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol

MAX_HEAD = 16 * 1024     # h11's default: a head (request line and headers) of at most 16 KiB
LINGER_IDLE = 2.0        # seconds without a byte from the client before the refused connection closes
LINGER_MAX = 30.0        # seconds at most of reading a refused request's rest


def refusal(head: bytes, limit: int) -> tuple[int, str]:
    """The status and the words for a request whose unfinished head ``head`` is past
    ``limit`` bytes (anything shorter: a malformed request).

    >>> refusal(b"GET /?q=" + b"a" * 20000, 16384)[0], refusal(b"GET / HTTP/1.1\\r\\nX: " + b"a" * 20000, 16384)[0]
    (414, 431)
    """
    if len(head) <= limit:
        return 400, "this is not a valid HTTP/1.1 request"
    if b"\n" not in head:
        return 414, f"the request line is longer than {limit:,} bytes: the URL is too long"
    return 431, f"the request's headers are longer than {limit:,} bytes"


class LingeringH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, refusing a head too long with 414 or 431 and a lingering
    close (see the module's docstring); pass the class as ``uvicorn.Config(http=...)``."""

    _lingering = False
    _linger_end = 0.0
    _linger_timer: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            self._linger()      # the rest of a refused request: dropped
            return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        """uvicorn calls this when h11 refuses what the client sent (``msg`` is its own
        "Invalid HTTP request received.")."""
        limit = self.config.h11_max_incomplete_event_size or MAX_HEAD
        status, words = refusal(self.conn.trailing_data[0], limit)
        body = f"{status} {STATUS_PHRASES[status].decode()}: {words}\n".encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        for event in (h11.Response(status_code=status, headers=headers, reason=STATUS_PHRASES[status]),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self._lingering = True
        self._linger_end = self.loop.time() + LINGER_MAX
        self._linger()

    def _linger(self) -> None:
        """(Re)start the wait for the client's next bytes, at most until ``_linger_end``."""
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        wait = min(LINGER_IDLE, self._linger_end - self.loop.time())
        self._linger_timer = self.loop.call_later(max(wait, 0.0), self.transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        super().connection_lost(exc)
