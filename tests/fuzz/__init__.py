"""A seeded protocol fuzzer for the arena: random well- and ill-formed bot messages
against a real ``arena serve`` process, while honest sample bots play beside them.

A test tool: ``tests/security/test_fuzz.py`` runs it in the suite. From the checkout's
root, run it as ``PYTHONPATH=.:tests python -m fuzz --seconds 60 --seed 1 [--json]
[--workdir DIR]`` (exit code 1 when an invariant was violated), or from Python::

    from fuzz import run_fuzz
    report = run_fuzz(seconds=30, seed=7)
    assert report.ok, report.violations

What one run does:

1. registers bots in a fresh SQLite database (``fuzz-0``..``fuzz-N`` and the sample
   bots ``random``, ``greedy``, ``heuristic``, ``cautious``) and starts
   ``python -m arena.cli serve --port 0`` on 127.0.0.1 with short limits (decision
   0.2 s, bank 0.5 s, grace 1 s), the admin token in ``ARENA_ADMIN_TOKEN``;
2. starts the sample bots as their own processes (``python -m sample_bots.X``);
3. runs the fuzz bots in this process: each keeps an *anchor* stream (a valid Hello)
   and answers its decision requests with a random behaviour per request: an honest
   answer, options that do not exist (random strings, card codes not in the hand,
   ``"00"``, ``"01"``, ``"-1"``, ``"x7"``, ``"b14"``, ``"W5"``, unicode, empty, up to
   900 KB long), wrong request ids (0, 2**64-1, ids of other seats and requests,
   ids next to the newest seen), predictions for non-PREDICT requests and options
   for PREDICT, predictions with bad colours, huge counts and bad ``take_from`` seats,
   Actions with no choice, empty messages, Hello again, repeated answers, floods of
   hundreds or thousands of messages, slow answers, no answer, half-closes and
   mid-match disconnects (the call is cancelled) with reconnects using the same token,
   sometimes before the old stream is gone, and floods of near-1 MiB messages.
   Beside that, *probes* open extra streams: a bad token (or another bot's, or the
   admin's), no Hello first, Hello with another or a huge name (up to and past the
   1 MiB limit), unknown variants, a huge version, ``max_matches`` 0 or 2**32-1,
   Hello repeated, floods from a stream that holds no seat (read or never read), a
   stream that never says Hello, bursts of up to 40 streams of one bot; and calls
   beside Play: spectators of running and unknown matches (reading, slow, or never
   reading), ListMatches/GetLeaderboard with odd arguments, organiser calls with a
   wrong token or a bad config;
4. organises matches itself with the ``RunMatch`` organiser call: tables mixing fuzz
   and honest seats (short limits, ``max_faults`` 1 to 1000 so faulty seats go on to
   later decisions too) and honest-only tables (generous limits), classic and extreme,
   3-5 players, 1-4 rounds, varied bidding rules;
5. after ``seconds`` it stops fuzzing (fuzz bots answer honestly so running matches end
   soon), waits for every match, and checks the invariants.

The invariants (a violation makes ``FuzzReport.ok`` False):

1. the server process is still up and answers: health check SERVING, ListMatches works;
2. every honest-only match completed (``status == "completed"``) with 0 faults;
3. every match with a fuzz seat completed, its stored record holds the same faults as
   the record RunMatch returned, and every ``Fault`` a fuzz bot was sent (but the
   reminders after a reconnect) is among its seat's stored faults (a ``forfeited`` one
   on a forfeited seat);
4. the server's resident memory (VmRSS, sampled every 0.25 s) stayed under
   ``rss_limit_mb`` (400 MB by default).

Refusals by the server (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT,
RESOURCE_EXHAUSTED, a stream closed under a flood, ...) are normal: the fuzz bot
counts them (``stream_ends``; a stream the server closes while the fuzzer is still
writing into it often ends INTERNAL on this side) and reconnects. The report also
lists *anomalies*, not invariant violations but signs of a bug: an answer that must be
refused (an option not among the request's options, a prediction for another kind of
decision or one no rule allows, an Action with no choice; sent with the right request
id) that drew no ``Fault`` before the seat's next request, i.e. the server accepted
it (``behaviours`` counts ``check_refused_sent/ok/missed``); faults other than
timeouts charged to honest seats of fuzzed matches; and breaches of the server's side
of the contract seen on a stream (``behaviours`` counts them as ``contract: ...``): a
request or MatchEnded for a seat the stream was not told had started, a request id
sent twice, a Fault for a match the stream holds no seat in, a request without options
(not PREDICT), an observation of another seat, a bank above the match's, a seat of a
variant the Hello did not ask for, more matches at once than the stream's capacity.
The server's stderr is summarised in ``server_tracebacks`` and ``server_log``.

Every random choice comes from ``random.Random`` instances derived from ``seed`` (one
per fuzz bot, probe loop and table loop), so the match configurations and each fuzz
bot's choices repeat with the seed; what interleaves with what still depends on timing.
With ``workdir`` the database, the server's log, the bots' logs and ``trace.jsonl``
(every message the fuzz bots sent with the session, the case and the request it
answered, each match's configuration, and how each stream ended) are kept there for
reproducing a finding. ``FuzzSettings.server_command`` fuzzes another build of the
server (e.g. an older commit unpacked elsewhere, run with ``PYTHONPATH`` and ``-P``).

The package, one concern a module: ``settings`` (the constants, :class:`FuzzSettings`,
:class:`FuzzReport`), ``messages`` (the message makers), ``streams`` (the hostile stream
drivers: a fuzz bot's sessions and probes), ``checks`` (the shared tally, invariants 2
and 3), ``processes`` (the server and the sample bots as processes) and ``run``
(:class:`Fuzzer`, invariants 1 and 4, :func:`run_fuzz`); ``__main__`` the command line.
"""

from fuzz.checks import Played, Tally, Told
from fuzz.processes import summarise_log
from fuzz.run import Fuzzer, fuzz, run_fuzz
from fuzz.settings import FuzzReport, FuzzSettings
from fuzz.streams import Agent, Session

__all__ = ["Agent", "FuzzReport", "FuzzSettings", "Fuzzer", "Played", "Session", "Tally", "Told", "fuzz", "run_fuzz",
           "summarise_log"]
