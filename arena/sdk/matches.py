"""Per-match work: the seat state, and the lanes that run each match's hooks and
decisions in order while the matches run beside each other.

A *lane* (:class:`_Lane`) is one asyncio task taking :class:`_Job` s in turn: a plain
method of the bot runs on the lane's own daemon thread (:class:`_Thinker`), so that a
slow decision holds up its own match only, and an ``async def`` one on the event loop.
Each connection's answers go through its :class:`_Outbox`, which one writer task sends
(``arena.sdk.client``). Kept apart from the client, which decides when lanes start and
end; this is how they run.
"""

from __future__ import annotations

import asyncio
import queue
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.sdk.bot import Bot, MatchInfo
from arena.wire.pb.wizard_arena.v1 import arena_pb2


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


def _mix_seed(match_seed: int, user_seed: int | None) -> int:
    """The seat's rng seed: the arena's seed, mixed with ``--seed`` when one was given."""
    return match_seed if user_seed is None else (user_seed << 64) | match_seed
