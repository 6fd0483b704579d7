"""Live matches: what running referees are playing, watched through their public calls only.

``arena web`` learns of referees two ways: ``--referee HOST:PORT`` (an ``arena serve``)
and every running tournament in its database (a local run notes its referee's address
in its log folder, and so does each ``arena worker`` of ``--workers N``; a ``--server``
run names its server: :func:`referee_addresses`). It
asks them ``ListMatches`` for their running matches and follows one with ``Spectate``:
one stream a match however many pages watch it (:class:`Watch`).
Both are the referee's public calls and carry what a spectator may see: no hand, no
bid before the rules reveal it, no deal seed. So nothing hidden reaches this server,
let alone a page, while a match runs; the hands are shown face up only by the replay
(``/matches/ID``) of the stored match.

A live page gets its match as Server-Sent Events (``text/event-stream``, which browsers
read with ``EventSource``)::

    event: steps
    data: {"start": 0, "steps": [...]}      # steps start.. (the last one may grow: sent again)
    event: end
    data: {"replay": "/matches/ID"}         # the match is over
    event: failure
    data: {"message": "..."}                # why the stream stopped early

A step has the shape of :class:`arena.web.viewer.Step` (one per decision seen), so the
page draws it with the replay viewer's code.

A referee that serves TLS is reached over TLS when this process knows how to trust it
(:data:`REFEREE_TLS`): ``arena web --tls-ca FILE`` for its ``--referee`` addresses, and the
CA a ``--server`` tournament was started with for that server. Every other referee is
asked in plaintext; one that turns out to speak TLS is reported as such.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import grpc

from arena.store import Store
from arena.tls import ClientTls, TlsError, tls_problem
from arena.tournament.lock import referee_addresses
from arena.web.viewer import Step
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from arena.wire.pb.wizard_arena.v1 import arena_pb2_grpc
from engine.describe import describe_event

# A referee that does not answer ListMatches in this time is reported and skipped: a page
# must not hang on one.
LIST_TIMEOUT = 2.0
# ... and is then left unasked for this long, so it slows one page in this many seconds.
QUIET_FOR = 30.0
# Until when (time.monotonic()) each referee that let LIST_TIMEOUT pass is left unasked.
SILENT: dict[str, float] = {}
# The public events that are a seat's decision: each starts a step of the live viewer
# (and so does a token_returned the winner chose: see ``is_decision``).
DECISION_EVENTS = frozenset({"trump_chosen", "bid", "bid_made", "prediction", "destroyer", "play"})
# How each referee that serves TLS is trusted, by its HOST:PORT; a referee not here is
# asked in plaintext. ``arena web --tls-ca`` fills it for its --referee addresses, and
# :func:`referees` for the servers of running tournaments stored with TLS.
REFEREE_TLS: dict[str, ClientTls] = {}


def is_decision(event: dict[str, Any]) -> bool:
    """Whether ``event`` is what one decision of a seat showed the table.

    >>> is_decision({"type": "token_returned", "seat": 0, "colour": "red", "chosen": False})
    False
    """
    kind = event.get("type")
    return isinstance(event.get("seat"), int) and (
        kind in DECISION_EVENTS or (kind == "token_returned" and event.get("chosen") is True))


@dataclass(frozen=True)
class LiveMatch:
    """A running match as its referee lists it (public facts only)."""

    match_id: str
    variant: str
    bots: list[str]
    totals: list[int]
    tournament_id: str | None
    options: dict[str, Any]       # the game config without its seed
    referee: str                  # HOST:PORT of the referee playing it
    private: bool = False         # its deal is played again: not to be watched (MatchSpec.private)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def referees(store: Store, db: str, given: Sequence[str]) -> list[str]:
    """The referees to ask: ``given`` (``--referee``), then those of the database's running
    tournaments, each once."""
    found = list(dict.fromkeys(given))
    for info in store.list_tournaments():
        if info.status == "running":
            for address in referee_addresses(info, db):
                settings = info.typed_settings
                if settings.server == address and settings.tls:
                    REFEREE_TLS.setdefault(address, settings.client_tls() or ClientTls())
                if address not in found:
                    found.append(address)
    return found


def running_matches(addresses: Iterable[str]) -> tuple[list[LiveMatch], list[str]]:
    """The running matches of every referee at ``addresses``, and one line for each referee
    that could not be asked.

    The referees are asked at once, so a page waits at most :data:`LIST_TIMEOUT` however
    many are silent; and one that let that time pass is not asked again for
    :data:`QUIET_FOR` seconds, so the pages that follow do not wait for it at all.
    """
    matches: list[LiveMatch] = []
    problems: list[str] = []
    asked: list[tuple[str, grpc.Channel, grpc.Future]] = []
    now = time.monotonic()
    for address in dict.fromkeys(addresses):
        if SILENT.get(address, 0.0) > now:
            problems.append(f"the referee at {address} did not answer in {LIST_TIMEOUT:g} s; "
                            f"it is asked again within {QUIET_FOR:g} s")
            continue
        tls = REFEREE_TLS.get(address)
        try:
            channel = (grpc.secure_channel(address, tls.credentials()) if tls is not None
                       else grpc.insecure_channel(address))
        except TlsError as error:     # its CA file is gone or damaged
            problems.append(f"the referee at {address} was not asked: {error}")
            continue
        call = arena_pb2_grpc.ArenaStub(channel).ListMatches.future(pb.ListMatchesRequest(limit=500),
                                                                     timeout=LIST_TIMEOUT)
        asked.append((address, channel, call))
    for address, channel, call in asked:
        with channel:
            try:
                reply = call.result()
            except grpc.RpcError as error:
                if isinstance(error, grpc.Call) and error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    SILENT[address] = time.monotonic() + QUIET_FOR
                problems.append(f"the referee at {address} did not answer: {_rpc_problem(error, address)}")
                continue
        SILENT.pop(address, None)
        matches += [LiveMatch(match_id=m.match_id, variant=m.variant, bots=list(m.bot_names), totals=list(m.totals),
                              tournament_id=m.tournament_id or None, options=_options(m.options_json),
                              referee=address, private=m.private)
                    for m in reply.matches if m.status == "running"]
    return matches, problems


def _options(text: str) -> dict[str, Any]:
    try:
        options = json.loads(text) if text else {}
    except ValueError:
        return {}
    return options if isinstance(options, dict) else {}


def _rpc_problem(error: grpc.RpcError, address: str) -> str:
    """What went wrong, in a few words: why the TLS handshake failed (arena.tls), else
    grpc's status code and the first line of its details."""
    tls = tls_problem(error, address, REFEREE_TLS.get(address))
    if tls is not None:
        return tls
    # A blocking call's error is a grpc.Call; grpc.aio's AioRpcError is not one, but has
    # the same code() and details().
    answered = isinstance(error, (grpc.Call, grpc.aio.AioRpcError))
    code = error.code() if answered else None
    details = error.details() if answered else str(error)
    return f"{code.name if code else 'error'} ({(details or '').splitlines()[0] if details else 'no details'})"


class LiveSteps:
    """Public events folded into the viewer's steps as they come: step 0 holds what came
    before the first decision, and each decision event opens the next step, which then
    gathers what followed it (the trick, the scoring, the next deal).

    >>> steps = LiveSteps(["ann", "bob", "cy"], "open")
    >>> steps.add([{"type": "round_start", "round": 1, "dealer": 0, "hand_size": 1},
    ...            {"type": "bid", "seat": 1, "bid": 0}])
    >>> [(s.index, s.seat, [e["type"] for e in s.events]) for s in steps.steps]
    [(0, None, ['round_start']), (1, 1, ['bid'])]
    >>> steps.steps[1].events[0]["text"]
    'bob (seat 1) bids 0'
    """

    def __init__(self, bots: Sequence[str], bidding: str) -> None:
        self.bots = list(bots)
        self.bidding = bidding
        self.totals = [0] * len(self.bots)
        self.steps: list[Step] = [Step(0, None, None, None, [], list(self.totals))]
        self._messages: dict[int, str] = {}     # message(start), until the next add()

    def add(self, events: Iterable[dict[str, Any]]) -> None:
        """Fold ``events`` in: into the open step, and the steps they open."""
        self._messages.clear()
        for event in events:
            if is_decision(event):
                self.steps.append(Step(len(self.steps), event["seat"], None, None, [], list(self.totals)))
            if event.get("type") in ("round_end", "game_over") and isinstance(event.get("totals"), list):
                self.totals = list(event["totals"])
                self.steps[-1].totals = list(self.totals)
            self.steps[-1].events.append({**event, "text": describe_event(event, self.bots, self.bidding)})

    def since(self, start: int) -> dict[str, Any]:
        """The ``steps`` message: steps ``start``.. as JSON."""
        return {"start": start, "steps": [asdict(step) for step in self.steps[start:]]}

    def message(self, start: int) -> str:
        """:meth:`since` as its Server-Sent Event, encoded once for all the pages that ask
        for the same ``start`` between two :meth:`add` calls: every page that has had
        each update asks for the open step alone, so a hundred pages cost one encoding.

        >>> steps = LiveSteps(["ann", "bob"], "open")
        >>> steps.message(0) is steps.message(0)
        True
        >>> before = steps.message(0)
        >>> steps.add([{"type": "bid", "seat": 0, "bid": 1}])
        >>> steps.message(0) == before
        False
        """
        text = self._messages.get(start)
        if text is None:
            text = self._messages[start] = sse("steps", self.since(start))
        return text


def sse(event: str, data: Any) -> str:
    """One Server-Sent Event; the JSON is on one line, so one ``data:`` field holds it.

    >>> sse("end", {"a": 1})
    'event: end\\ndata: {"a": 1}\\n\\n'
    """
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


class Watch:
    """One ``Spectate`` of a running match, shared by every page that watches it.

    The referee admits a bounded number of spectators a match (64; 512 in all), so a
    stream for each browser would turn the 65th viewer away, and make the referee
    encode every update once for each. Here one task reads the match's updates into
    one :class:`LiveSteps`; each page's :func:`stream` sends from it what that page
    has not had yet. The task starts with a match's first viewer and stops with its
    last (or with the match).
    """

    def __init__(self, match: LiveMatch, replay_url: str) -> None:
        self.key = (match.referee, match.match_id)
        self.steps = LiveSteps(match.bots, str(match.options.get("bidding") or "open"))
        self.updates = 0                  # how many updates the referee has sent so far
        self.last: str | None = None      # the closing event (end or failure) once it stopped
        self.viewers = 0
        self.changed = asyncio.Condition()
        self.task = asyncio.create_task(self._follow(match, replay_url))

    async def _follow(self, match: LiveMatch, replay_url: str) -> None:
        tls = REFEREE_TLS.get(match.referee)
        try:
            channel = tls.secure_channel(match.referee) if tls is not None else grpc.aio.insecure_channel(match.referee)
        except TlsError as error:
            await self._close(sse("failure", {"message": f"the referee was not asked: {error}"}))
            return
        async with channel:
            call = arena_pb2_grpc.ArenaStub(channel).Spectate(pb.SpectateRequest(match_id=match.match_id))
            try:
                async for update in call:
                    self.steps.add(json.loads(text) for text in update.events_json)
                    self.updates += 1
                    async with self.changed:
                        self.changed.notify_all()
            except grpc.RpcError as error:
                problem = await asyncio.to_thread(_rpc_problem, error, match.referee)
                await self._close(sse("failure", {"message": f"the referee stopped the stream: {problem}"}))
                return
        await self._close(sse("end", {"replay": replay_url}))

    def forget(self) -> None:
        """Leave :data:`WATCHES`: a page that comes later asks the referee anew."""
        if WATCHES.get(self.key) is self:
            del WATCHES[self.key]

    async def _close(self, last: str) -> None:
        self.forget()
        self.last = last
        async with self.changed:
            self.changed.notify_all()


# The matches being watched, by (referee, match id): at most one Spectate each.
WATCHES: dict[tuple[str, str], Watch] = {}


async def stream(match: LiveMatch, replay_url: str) -> AsyncIterator[str]:
    """The match's public events from its start, live, as the page's Server-Sent Events:
    first every step so far, then each change (the open step again, and any new ones)."""
    key = (match.referee, match.match_id)
    watch = WATCHES.get(key)
    if watch is None:
        watch = WATCHES[key] = Watch(match, replay_url)
    watch.viewers += 1
    seen = 0      # the updates this page has been sent
    whole = 0     # the steps it has, all but the last of them final
    try:
        while True:
            async with watch.changed:
                while watch.updates == seen and watch.last is None:
                    await watch.changed.wait()
            if watch.updates != seen:
                seen = watch.updates
                yield watch.steps.message(max(whole - 1, 0))
                whole = len(watch.steps.steps)
            elif watch.last is not None:
                yield watch.last
                return
    finally:
        watch.viewers -= 1
        if watch.viewers == 0 and watch.last is None:      # its last page went: stop asking
            watch.task.cancel()
            watch.forget()
