"""One run of ``arena bot check``: the referee on loopback
(:class:`~arena.referee.loopback.LoopbackReferee`), the sample bots as SDK clients in
this process, the bot as a tournament starts it, the matches of the schedule played up
to :data:`~arena.check.plan.CONCURRENCY` at once, and the report printed as they end
(:func:`check_bot`). The referee's and the opponents' logs go to the run's folder, and a
stream the referee refused is remembered, to tell a bot that never connected why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.check.plan import CONCURRENCY, OPPONENTS, CheckSettings, ScheduledMatch, opponent_names, schedule
from arena.check.report import (
    BotHello,
    CheckReport,
    MatchOutcome,
    count_error_reports,
    first_error,
    header_lines,
    match_lines,
    outcome_of,
    output_tail,
    plural,
    slow_note,
    variant_lines,
    verdict_line,
)
from arena.referee.limits import GRACE, MAX_FAULTS
from arena.referee.loopback import LoopbackReferee
from arena.tournament.bot_limits import BotLimits
from arena.tournament.lineup import BotProcesses, LineupError, socket_folder
from arena.tournament.sandbox import SandboxMode, find_confinement
from engine import VARIANTS

if TYPE_CHECKING:
    from arena.referee.seating import ConnectedBotInfo

# Seconds to wait, after a bot's first stream, for the others of a bot that plays in
# several processes (the SDK's --processes) to bring its slots up to CONCURRENCY.
MORE_STREAMS_WAIT = 1.5


class CheckStartError(LineupError):
    """The bot's command could not be run at all (exec refused it): a bad argument."""


# The referee's log line for a refused stream: the peer, maybe the bot, then a status and why.
REFUSED = re.compile(r"refused a Play stream from .*?: ([A-Z][A-Z_]+ .*|[a-z].*)$")


class _Refusals(logging.Handler):
    """Keeps the referee's reasons for refusing a Play stream (a name that is not the
    token's, an unknown variant, no Hello in time): a bot that never connects is told why.
    And why the referee could not read a message of the checked bot's (bytes that are no
    BotMessage), which ended its stream: the report names it."""

    def __init__(self, bot: str) -> None:
        super().__init__(logging.WARNING)
        self.bot = bot
        self.reasons: list[str] = []
        self.unreadable: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        refused = REFUSED.match(message)
        if refused:
            self.reasons.append(refused.group(1))   # "CODE details", after the peer (which may hold ": ")
        elif message.startswith(f"{UNREADABLE} {self.bot}/") and record.exc_info and record.exc_info[1]:
            error = record.exc_info[1]
            self.unreadable.append(str(error) or type(error).__name__)


# How the referee's log begins the line of a stream it could not read (arena.referee.connections).
UNREADABLE = "reading from"


@contextlib.contextmanager
def _arena_logs(folder: Path, bot: str) -> Iterator[_Refusals]:
    """Send the referee's and the in-process opponents' logs to ``folder/arena.log``
    (not the terminal) while the check runs."""
    logger = logging.getLogger("arena")
    handler = logging.FileHandler(folder / "arena.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    refusals = _Refusals(bot)
    saved = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(handler)
    logger.addHandler(refusals)
    try:
        yield refusals
    finally:
        logger.removeHandler(handler)
        logger.removeHandler(refusals)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        handler.close()


class _Check:
    """One run of the check: the referee, the opponents, the bot, the matches."""

    def __init__(self, settings: CheckSettings, log_dir: Path, out: Callable[[str], None]) -> None:
        self.settings = settings
        self.out = out
        self.report = CheckReport(settings, log_dir)
        # The faults and grace of a tournament: the referee's defaults. A bot that connects
        # but never says Hello is refused in time to be reported.
        self.referee = LoopbackReferee(move_time=settings.move_time, time_bank=settings.time_bank,
                                       max_faults=MAX_FAULTS, grace=GRACE, hello_timeout=settings.connect_timeout)
        self.server = self.referee.server
        self.processes = BotProcesses(log_dir)
        self.confinement = ""                # the start line's words on it, once known
        self.log = log_dir / f"{settings.name}.log"
        self.exited: asyncio.Future[int] | None = None     # the bot's process.wait()
        self.running: dict[str, ScheduledMatch] = {}
        self.refusals = _Refusals(settings.name)     # the run's, once its logs are set up

    async def run(self) -> CheckReport:
        from arena.referee.server import tune_gc

        started = time.monotonic()
        tune_gc()
        confinement = find_confinement(SandboxMode(self.settings.sandbox), BotLimits(), self.out)
        self.confinement = confinement.describe()
        socket_dir = socket_folder()
        socket = socket_dir / "referee.sock"
        self.processes = BotProcesses(self.report.log_dir, confinement, socket, bot_env=self.settings.bot_env)
        with _arena_logs(self.report.log_dir, self.settings.name) as refusals:
            self.refusals = refusals
            address = await self.referee.start(unix_socket=socket)
            opponents: list[tuple[Any, asyncio.Task[int]]] = []
            try:
                opponents = await self._start_opponents(address)
                if await self._start_bot(address, refusals):
                    for variant, matches in self._schedule().items():
                        if not await self._play_variant(variant, matches):
                            break
            finally:
                await self._stop_bot()
                for client, _ in opponents:
                    client.stop()
                # The opponents end their streams while the server still answers, so that no
                # handler of theirs is left for the server's stop to cancel (grpc prints a
                # traceback for each); the server then ends every stream it still holds: an
                # opponent that missed its stop (cancelled just as its Welcome came in) ends
                # with its stream.
                tasks = [task for _, task in opponents]
                if tasks:
                    await asyncio.wait(tasks, timeout=5)
                await self.server.stop()
                shutil.rmtree(socket_dir, ignore_errors=True)
                self.processes.remove_copies()
                _, stuck = await asyncio.wait(tasks, timeout=5) if tasks else (set(), set())
                for task in stuck:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        self._scan_output()
        self.report.seconds = time.monotonic() - started
        return self.report

    # -- start-up

    async def _start_opponents(self, address: str) -> list[tuple[Any, asyncio.Task[int]]]:
        """The sample bots as SDK clients in this process, connected before the bot starts."""
        import importlib

        from arena.sdk import BotClient

        clients = []
        for name, (_, where) in zip(opponent_names(self.settings.name), OPPONENTS):
            module, _, cls = where.partition(":")
            token = self.referee.admit(name, secrets.token_hex(16))
            client = BotClient(bot=getattr(importlib.import_module(module), cls), arena=address, token=token,
                               name=name, max_matches=CONCURRENCY)
            clients.append((client, asyncio.ensure_future(client.run())))
        await self.server.host.wait_connected(opponent_names(self.settings.name), timeout=30)
        return clients

    async def _start_bot(self, address: str, refusals: _Refusals) -> bool:
        """Start the bot and wait for its Hello; False (with the report's failure said)
        if it never connects."""
        settings, name = self.settings, self.settings.name
        token = self.referee.admit(name)
        started = time.monotonic()
        try:
            await self.processes.start(settings.entry, address, token, max_matches=CONCURRENCY)
        except (OSError, RuntimeError) as error:    # exec refused the command (BotStartError)
            message = str(error) if isinstance(error, RuntimeError) else f"cannot start {name}: {error}"
            raise CheckStartError(message) from None
        process = self.processes.processes[name]
        self.exited = asyncio.ensure_future(process.wait())
        waiting = asyncio.ensure_future(self.server.host.wait_connected([name], settings.connect_timeout))
        await asyncio.wait({waiting, self.exited}, return_when=asyncio.FIRST_COMPLETED)
        if waiting.done() and waiting.exception() is None:
            seconds = time.monotonic() - started
            info = await self._all_streams(name)
            self.report.hello = BotHello(info.version, info.variants, info.free_slots, seconds, info.connections)
            for line in header_lines(settings, self.report.hello):
                self.out(line)
            self.out(f"  {self.confinement}")
            return True
        waiting.cancel()
        if self.exited.done():
            why = f"it exited with code {self.exited.result()} before it connected"
        else:
            why = f"no Hello within {settings.connect_timeout:g} s"
        if refusals.reasons:
            why += f"; the arena refused its stream: {refusals.reasons[-1]}"
        hint = "" if refusals.reasons else self.processes.never_connected_hint(
            await self.processes.output_of(name, self.log))
        self.report.failure = f"never connected: {why}"
        self.out(f"{name} ({settings.command}) never connected: {why}; {output_tail(self.log)}{hint} "
                 f"(its output and the arena's log: {self.report.log_dir})")
        return False

    async def _all_streams(self, name: str) -> ConnectedBotInfo:
        """The connected bot's info once it has the slots it was offered, or after
        MORE_STREAMS_WAIT: a bot that plays in several processes connects one stream each."""
        assert self.exited is not None
        deadline = time.monotonic() + MORE_STREAMS_WAIT
        info = self.server.host.connected_bots()[name]
        while info.free_slots < CONCURRENCY and time.monotonic() < deadline and not self.exited.done():
            await asyncio.sleep(0.05)
            info = self.server.host.connected_bots().get(name, info)
        return info

    def _schedule(self) -> dict[str, list[ScheduledMatch]]:
        hello = self.report.hello
        assert hello is not None
        plays = [v for v in VARIANTS if not hello.variants or v in hello.variants]
        wanted = [v for v in plays if v in self.settings.variants]
        if not wanted:
            self.report.failure = (f"it plays {' and '.join(plays)} only (its Hello's variants): "
                                   f"nothing to check in {' and '.join(self.settings.variants)}")
        return schedule(self.settings.name, wanted, self.settings.seed)

    # -- the matches

    async def _play_variant(self, variant: str, matches: list[ScheduledMatch]) -> bool:
        """Play one variant's matches, up to CONCURRENCY at once; print them as they end.
        False when the check cannot go on (the bot exited, or could not be seated)."""
        assert self.exited is not None and self.report.hello is not None
        self.out("")
        self.out(f"{variant}: {plural(len(matches), 'match', 'matches')}")
        outcomes: list[MatchOutcome] = []
        pending = list(matches)

        async def worker() -> None:
            from arena.referee.server import SeatingError

            while pending and not any(o.forfeited for o in outcomes) and self.report.failure is None:
                match = pending.pop(0)
                self.running[match.spec.match_id] = match
                began = time.monotonic()
                try:
                    record = await self.server.host.run_match(match.spec)
                except SeatingError as error:
                    self.report.failure = f"it could not be seated: {error}"
                    return
                finally:
                    self.running.pop(match.spec.match_id, None)
                outcome = outcome_of(match, record)
                outcome.span = (began, time.monotonic())
                self._add(outcomes, outcome)

        workers = max(1, min(self.report.hello.slots, CONCURRENCY, len(matches)))
        playing = asyncio.ensure_future(asyncio.gather(*(worker() for _ in range(workers))))
        either: set[asyncio.Future[Any]] = {playing, self.exited}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not playing.done():
            # The bot is gone: its open matches would only wait out the grace period.
            cut = dict(self.running)
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
            for match_id, match in cut.items():
                referee = self.server.host.find_match(match_id)
                if referee is not None and referee.record is not None:
                    self._add(outcomes, outcome_of(match, referee.record, cut_short=True))
            self.report.failure = (f"it exited with code {self.exited.result()} during the {variant} matches; "
                                   f"{output_tail(self.log)}")
        else:
            playing.result()
        self.report.not_played[variant] = len(pending)
        unreadable = self.refusals.unreadable[0] if self.refusals.unreadable else None
        for line in variant_lines(variant, outcomes, self.settings, len(pending), self.report.failure is not None,
                                  unreadable):
            self.out(line)
        if self.report.failure is None and self.exited.done():
            self.report.failure = (f"it exited with code {self.exited.result()} after its {variant} matches: "
                                   "in a tournament a bot stays until the arena stops it; "
                                   f"{output_tail(self.log)}")
        return self.report.failure is None

    def _add(self, outcomes: list[MatchOutcome], outcome: MatchOutcome) -> None:
        outcomes.append(outcome)
        self.report.outcomes.append(outcome)
        for line in match_lines(outcome):
            self.out(line)

    # -- the end

    async def _stop_bot(self) -> None:
        process = self.processes.processes.get(self.settings.name)
        running = process is not None and process.returncode is None
        await self.processes.stop()
        if running and process is not None and process.returncode == -signal.SIGKILL:
            self.report.notes.append("it did not exit within 3 s of SIGTERM and was killed "
                                     "(an arena stops its bots with SIGTERM)")
        if self.exited is not None and not self.exited.done():
            self.exited.cancel()

    def _scan_output(self) -> None:
        """Notes on what the bot's output and timing show (not faults: the referee
        accepted its answers)."""
        report, settings = self.report, self.settings
        errors = count_error_reports(self.log)
        if errors:
            # A passed check takes its folder with it: then the note quotes the error itself.
            first = first_error(self.log)
            where = (f"the first: {first}" if first else "run it again to see them") if report.passed \
                else f"see {self.log}"
            report.notes.append(f"its output has {plural(errors, 'error report')} (a traceback or \"decision "
                                "failed\"): a decision that raised is a bot_error fault, a hook that raised "
                                f"(on_match_start, on_match_end, on_fault) is only there; {where}")
        note = slow_note(report.outcomes, settings)
        if note:
            report.notes.append(note)


def check_bot(settings: CheckSettings, out: Callable[[str], None] = print) -> CheckReport:
    """Run the check, printing the report through ``out`` as it goes; the last line is
    the verdict. The temporary folder (the bot's output, the arena's log) is removed when
    the bot passed, and kept and named when it did not. A command that cannot start at
    all raises :class:`CheckStartError`."""
    log_dir = Path(tempfile.mkdtemp(prefix=f"arena-check-{settings.name}-"))
    try:
        report = asyncio.run(_Check(settings, log_dir, out).run())
    except BaseException:
        shutil.rmtree(log_dir, ignore_errors=True)
        raise
    if report.hello is None:          # never connected: that one line said it all
        return report
    out("")
    for note in report.notes:
        out(f"note: {note}")
    out(verdict_line(report))
    if report.passed:
        shutil.rmtree(log_dir, ignore_errors=True)
    else:
        out(f"its output, and the arena's log: {log_dir}")
    return report
