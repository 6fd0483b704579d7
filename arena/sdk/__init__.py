"""The Python bot SDK: write a few methods, get a bot that plays in the arena.

A bot is a subclass of :class:`Bot` with one method per decision kind::

    from arena.sdk import Bot, run

    class MyBot(Bot):
        name = "my-bot"

        def bid(self, obs, options):          # classic: options are ints 0..r
            return options[0]

        def play(self, obs, options):         # both: options are card codes
            return self.rng.choice(options)

    if __name__ == "__main__":
        run(MyBot)

and is started with the standard command line::

    python my_bot.py --arena HOST[:PORT] --token T [--name N] [--max-matches N] [--processes N]
                     [--seed S] [--retry-for SECONDS] [--tls-ca FILE | --tls] [--tls-cert FILE --tls-key FILE] [-v]

(the token may come from the ``ARENA_TOKEN`` environment variable instead, the
address from ``ARENA_ADDRESS``, the matches at once from ``ARENA_MAX_MATCHES``, the
processes from ``ARENA_PROCESSES``, the TLS settings from ``ARENA_TLS_CA``, ``ARENA_TLS=1``,
``ARENA_TLS_CERT`` and ``ARENA_TLS_KEY``). The port defaults to 50051, the port ``arena serve``
listens on; an IPv6 address goes in brackets (``[::1]`` or ``[::1]:50051``). The
arena may also be a Unix domain socket, ``unix:/PATH`` (or ``unix:///PATH``), with an
absolute path: that is how the arena reaches a bot it runs in a sandbox without a
network (``--arena unix:/run/arena/referee.sock``).

TLS. An arena that serves TLS is reached with ``--tls-ca FILE``: the bot then trusts the
CA in FILE (the one the organiser hands out), checks the arena's certificate against it
and against the host name or address in ``--arena``, and sends its token and receives its
hands encrypted. ``--tls`` trusts the usual public CAs instead, for an arena with a
public certificate (grpc's own list, or the file ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``
names). ``--tls-cert FILE --tls-key FILE`` add a client certificate, for an arena that
asks for one. A ``unix:`` address stays plaintext: the socket is local to the machine. A
failed handshake is said in one line, with what to check, and ends the bot (exit 2)::

    ERROR random: TLS handshake with 127.0.0.1:50051 failed: the arena's certificate is not signed by
    the CA in ca.pem (unable to get local issuer certificate); check --tls-ca (or ARENA_TLS_CA): it must
    be the CA that signed the arena's certificate

What the SDK does for you:

* connects with ``grpc.aio`` (keepalive and message limits matching the arena),
  authenticates with ``authorization: Bearer <token>`` and says Hello;
* answers every ``DecisionRequest`` with its ``request_id``, calling your method
  with the parsed observation (a dict, typed by :class:`ClassicObservation` and
  :class:`ExtremeObservation`; see ``docs/engine.md``) and the options
  already converted (ints for bids, strings otherwise);
* plays several matches at once when ``--max-matches`` > 1, each answered on its own:
  one match's slow decision never holds up another's. Each match has a *lane*: its
  hooks and decisions run one after another, never two at once, a plain method on
  the lane's own thread and an ``async def`` method (``bid``, ``play``, ``trump``,
  ``predict``, ``pay``, or a hook) as a task on the event loop, which alone reads and
  writes the stream. With a bot *class* every seat gets its own instance, so instance
  attributes are per-seat state; with a bot *instance* all seats share it, and then
  one lane answers all of them, one decision at a time;
* ``--processes N`` for a bot whose Python code computes: threads share one core
  (the GIL), processes do not. It plays in N processes, each with its own connection
  and a share of ``--max-matches``, stopped together (see :func:`supervise`);
* gives every seat a ``self.rng`` (``random.Random``) seeded from
  ``MatchStarted.seed`` (mixed with ``--seed`` when given), so a tournament replays;
* survives its own bugs: an exception (or an answer that is not among the options)
  is logged to stderr and the first option (or an empty prediction) is sent instead;
* connects and reconnects as described below, and exits cleanly on SIGTERM/SIGINT.

Connecting and reconnecting. When the arena cannot be reached (not started yet,
restarting) or the connection drops, the bot retries: the first retry after about
0.1 s, then doubling up to :data:`RETRY_MAX_DELAY` (5 s), each wait jittered by
x0.5-1.5 so that many bots do not retry in step. It says so once, on stderr::

    WARNING random: cannot reach 127.0.0.1:50051 (connection refused); retrying with backoff up to 5 s for 60 s

(over a Unix socket: ``cannot reach unix:/run/arena/referee.sock (no such socket)``)

and then nothing until ``connected to 127.0.0.1:50051 after 3.2 s ...`` (``-v`` logs
every attempt). An attempt without the arena's Welcome after
:data:`CONNECT_TIMEOUT` (10 s) counts as failed. After :data:`RETRY_FOR` seconds (60,
``--retry-for``) without a connection it gives up. A connection lost *after* the arena's Welcome is retried at
once (about 0.1 s): the arena keeps the bot's seats for a grace period (5 s by
default), so a bot that comes back in time plays on in its matches. The delay and
the 60 s start again after every Welcome.

It does not retry what retrying cannot fix: a refused token or name, a bad Hello
(the codes in :data:`FATAL_CODES`), a TLS handshake that failed on the arena's
certificate or because one side does not speak TLS (:func:`tls_failure`), a plaintext
connection to an arena that answers a TLS handshake (``arena.sdk.tls.plaintext_to_tls``). It does not
come back after the arena ends the stream with status OK, which is what ``arena serve``
does when it is stopped (SIGTERM, Ctrl-C): that is the end of the session, not a failure.

Exit codes of :func:`run`:

* 0: stopped by SIGTERM/SIGINT, or the arena ended the stream cleanly (status OK),
  or the arena process that launched this bot is gone (see :func:`launcher_gone`);
* 1: gave up: no connection for ``--retry-for`` seconds;
* 2: refused by the arena (bad token, name mismatch, bad Hello), a failed TLS handshake
  (a certificate that does not verify, TLS against a plaintext arena), plaintext against
  a TLS arena, or a bad command
  line (such as ``--arena host:abc``, ``--arena unix:relative.sock`` or an unreadable
  ``--tls-ca`` file); these print one line on stderr.

With ``--processes N`` the code is the one of the first process to exit by itself
(the others are then stopped), or 0 when the bot was stopped (:func:`supervise`).

The package, one concern per module (``from arena.sdk import ...`` is the way in; the
names below are all importable from here):

* ``arena.sdk.addresses``: what ``--arena`` may say (:func:`arena_target`, :data:`DEFAULT_PORT`);
* ``arena.sdk.tls``: the TLS settings (:class:`Tls`, :func:`read_pem`, :func:`check_key_pair`)
  and what a failed handshake means (:func:`tls_failure`);
* ``arena.sdk.bot``: :class:`Bot`, the values its hooks receive, and :func:`ask`;
* the observation a decision method receives, typed: :class:`ClassicObservation`,
  :class:`ExtremeObservation` (either: ``Observation``) and their parts, from
  :mod:`engine.observations`, where every field is documented;
* ``arena.sdk.policy``: :class:`PolicyBot`, a policy trained in ``arena.envs`` (a function
  from observation vector and action mask to an action index) played as a bot;
* ``arena.sdk.retry``: the retry policy (:data:`RETRY_FOR`, :data:`FATAL_CODES`, ...);
* ``arena.sdk.matches``: per-match lanes, their queues and threads;
* ``arena.sdk.answers``: from a request to its answer message, or the fallback;
* ``arena.sdk.client``: :class:`BotClient`, the reconnecting client (sessions, the writer);
* ``arena.sdk.processes``: ``--processes`` (:func:`supervise`) and :func:`launcher_gone`;
* ``arena.sdk.cli``: the command line (:func:`parse_args`, :func:`run`).
"""

# ruff: noqa: E402
from __future__ import annotations

import os

# grpc's core logs a failed TLS handshake on stderr (an INFO line) unless told a level; the
# SDK says in one line what failed and what to check. So a bot process that chose no level
# gets ERROR: grpc reads the variable once, when it is first imported, hence before the
# imports (the file-wide noqa above: imports after code). Every module of the package is
# imported through this one, so this runs before any of them imports grpc.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
# For the same reason before the imports: gRPC's I/O path (arena.wire.grpc_io says why).
from arena.wire.grpc_io import use_measured_io

use_measured_io()

# The public names, from the modules that hold them. ``NAME as NAME``: importable from
# ``arena.sdk`` (tests and bots use them) but not in ``__all__``, which lists the names a
# bot author needs.
from arena.sdk.addresses import DEFAULT_PORT, arena_target
from arena.sdk.addresses import MAX_SOCKET_PATH_BYTES as MAX_SOCKET_PATH_BYTES
from arena.sdk.answers import BOT_ERROR_CHARS as BOT_ERROR_CHARS
from arena.sdk.bot import DECISION_KINDS as DECISION_KINDS
from arena.sdk.bot import BadAnswer as BadAnswer
from arena.sdk.bot import Bot, FaultInfo, MatchInfo, MatchResult, ask, ask_async
from arena.sdk.cli import main, parse_args, run
from arena.sdk.client import CHANNEL_OPTIONS, BotClient
from arena.sdk.client import MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES
from arena.sdk.matches import LANE_GRACE as LANE_GRACE
from arena.sdk.policy import Policy, PolicyBot
from arena.sdk.processes import MAX_PROCESSES as MAX_PROCESSES
from arena.sdk.processes import ORPHAN_POLL as ORPHAN_POLL
from arena.sdk.processes import PROCESS_VARIABLE as PROCESS_VARIABLE
from arena.sdk.processes import STOP_SECONDS as STOP_SECONDS
from arena.sdk.processes import launcher_gone as launcher_gone
from arena.sdk.processes import process_share, supervise
from arena.sdk.retry import CONNECT_TIMEOUT as CONNECT_TIMEOUT
from arena.sdk.retry import FATAL_CODES as FATAL_CODES
from arena.sdk.retry import RETRY_FIRST_DELAY as RETRY_FIRST_DELAY
from arena.sdk.retry import RETRY_FOR, RETRY_MAX_DELAY
from arena.sdk.tls import Tls, check_key_pair, read_pem, tls_failure
from engine import Prediction
from engine.observations import ClassicObservation, ExtremeObservation, Observation
from engine.observations import ClassicRound as ClassicRound
from engine.observations import ExtremeRound as ExtremeRound
from engine.observations import LastTrick as LastTrick
from engine.observations import PayDecision as PayDecision
from engine.observations import TrickCard as TrickCard

__all__ = [
    "Bot", "BotClient", "ClassicObservation", "ExtremeObservation", "FaultInfo", "MatchInfo", "MatchResult",
    "Observation", "Policy", "PolicyBot", "Prediction", "Tls",
    "CHANNEL_OPTIONS", "DEFAULT_PORT", "RETRY_FOR", "RETRY_MAX_DELAY",
    "arena_target", "ask", "ask_async", "check_key_pair", "main", "parse_args", "process_share", "read_pem",
    "run", "supervise", "tls_failure",
]
