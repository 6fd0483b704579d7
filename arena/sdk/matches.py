"""Per-match work: the seat state, and the lanes that run each match's hooks and
decisions in order while the matches run beside each other.

A *lane* (:class:`_Lane`) takes :class:`_Job` s in turn: a plain method of the bot runs
on the lane's own daemon thread (:class:`_Thinker`), so that a slow decision holds up its
own match only, and an ``async def`` one as a task on the event loop. The lane is driven
by callbacks on the loop (a job starts when the one before it is done), not by a task of
its own: a decision then costs one hand-over to the thread and one back, and nothing
else. Each connection's answers go through its :class:`_Outbox`, which one writer task
sends (``arena.sdk.client``). Kept apart from the client, which decides when lanes start
and end; this is how they run.
"""

from __future__ import annotations

import asyncio
import queue
import random
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
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


# What a job came to, handed to the lane's owner: (True, the value) or (False, the exception).
_Outcome = tuple[bool, Any]


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
        self._calls: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, Callable[[], Any],
                                             Callable[[_Outcome], None]] | None] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None

    def call(self, loop: asyncio.AbstractEventLoop, function: Callable[[], Any],
             settle: Callable[[_Outcome], None]) -> None:
        """Run ``function`` on the thread; ``settle`` gets its outcome, called on ``loop``.

        A plain callback rather than a future: a future would wake a task, which would
        then call the same thing one loop iteration later."""
        if self.thread is None:
            self.thread = threading.Thread(target=self._work, name=self.name, daemon=True)
            self.thread.start()
        self._calls.put((loop, function, settle))

    def close(self) -> None:
        """Let the thread end once its current call (if any) returns."""
        self._calls.put(None)

    def _work(self) -> None:
        while (item := self._calls.get()) is not None:
            loop, function, settle = item
            try:
                outcome: _Outcome = (True, function())
            except BaseException as error:   # handed to the loop, which decides what it means
                outcome = (False, error)
            try:
                loop.call_soon_threadsafe(settle, outcome)
            except RuntimeError:   # the loop is closed: nobody waits for this answer any more
                return


class _Outbox:
    """One connection's answers, written to its stream by one task in the order they are ready.

    Closed when the connection ends: an answer made for it afterwards is dropped (the arena
    sends a pending request again on the next connection), and so is a request still queued.
    A deque and the writer's one waiting future: an ``asyncio.Queue`` does the same with
    more bookkeeping on every answer.
    """

    def __init__(self) -> None:
        self._answers: deque[arena_pb2.BotMessage] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False

    def send(self, message: arena_pb2.BotMessage) -> None:
        if self.closed:
            return
        self._answers.append(message)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> arena_pb2.BotMessage:
        """The next answer to write, waiting for one (the writer's only call)."""
        while not self._answers:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._answers.popleft()


@dataclass
class _Job:
    """One thing a lane does: a decision (``outbox`` says where its answer goes) or a hook.

    ``work`` is a plain function run on the lane's thread, or, when ``on_loop``, a
    coroutine function awaited on the event loop (a bot's ``async def`` method).
    """

    work: Callable[[], Any]
    on_loop: bool = False
    outbox: _Outbox | None = None


class _Lane:
    """The order one match's work is done in (or, for a shared bot instance, all of it):
    its hooks and decisions one after another, never two at once, while other lanes
    run beside it. Sync work goes to the lane's :class:`_Thinker`, an ``async def`` job
    runs as a task; when either is done, ``done(job, outcome)`` (the client's) is called
    on the loop and the next job starts. ``done`` returning False ends the lane (the
    bot's code asked to exit). Everything here runs on the event loop."""

    def __init__(self, thinker: _Thinker, done: Callable[[_Job, _Outcome], bool]) -> None:
        self.thinker = thinker
        self._done = done
        self._jobs: deque[_Job | None] = deque()
        self._running: _Job | None = None
        self._task: asyncio.Task[Any] | None = None     # the async job running, if any
        self._loop = asyncio.get_running_loop()
        self.finished: asyncio.Future[None] = self._loop.create_future()   # set when the lane has ended

    def put(self, job: _Job) -> None:
        """Queue a job; it starts at once when the lane is idle (never runs here: on its
        thread, or as a task)."""
        if self.finished.done():
            return
        self._jobs.append(job)
        if self._running is None:
            self._next()

    def close(self) -> None:
        """No more jobs: the lane ends after the queued ones."""
        if not self.finished.done():
            self._jobs.append(None)
            if self._running is None:
                self._next()

    def cancel(self) -> asyncio.Task[Any] | None:
        """End now: the queued jobs are dropped, an async job running is cancelled (its
        task is returned, to be awaited), a sync one is left to its thread (which then
        ends), its outcome ignored."""
        self._jobs.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self._end()
        return task

    def _next(self) -> None:
        """Start the next job that is still wanted, or end at the closing marker."""
        while self._jobs:
            job = self._jobs.popleft()
            if job is None:
                self._end()
                return
            if job.outbox is not None and job.outbox.closed:
                continue   # asked on a connection that is gone: the arena asks again on the next
            self._running = job
            if job.on_loop:
                self._task = self._loop.create_task(self._on_loop(job.work))
            else:
                self.thinker.call(self._loop, job.work, self._settle)
            return

    async def _on_loop(self, work: Callable[[], Any]) -> None:
        """An ``async def`` job, its outcome caught here: SystemExit from the bot's code
        must reach the client, not the event loop (a task re-raises it there)."""
        try:
            outcome: _Outcome = (True, await work())
        except asyncio.CancelledError as error:
            if self.finished.done():
                raise   # by cancel(): the lane is over
            outcome = (False, error)   # by the bot's own code: told like any failure
        except BaseException as error:
            outcome = (False, error)
        self._task = None
        self._settle(outcome)

    def _settle(self, outcome: _Outcome) -> None:
        job, self._running = self._running, None
        if self.finished.done() or job is None:
            return   # cancelled while the job ran: nobody wants its outcome
        if self._done(job, outcome):
            self._next()
        else:
            self.cancel()

    def _end(self) -> None:
        if not self.finished.done():
            self.thinker.close()
            self.finished.set_result(None)


def _mix_seed(match_seed: int, user_seed: int | None) -> int:
    """The seat's rng seed: the arena's seed, mixed with ``--seed`` when one was given."""
    return match_seed if user_seed is None else (user_seed << 64) | match_seed
