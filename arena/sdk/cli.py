"""The standard bot command line: :func:`parse_args` (options, environment variables and
their checks) and :func:`run`, which parses, plays, and exits with the bot's code.

Every mistake on the command line (no token, ``--arena host:abc``, an unreadable
``--tls-ca``) is one line on stderr and exit status 2, before any connection. :func:`run`
plays one :class:`~arena.sdk.client.BotClient` in this process (:func:`main`, stopped by
SIGTERM/SIGINT), or, with ``--processes N``, hands over to :func:`~arena.sdk.processes.supervise`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import signal
import sys
from typing import NoReturn

from arena.sdk.addresses import DEFAULT_PORT, arena_target
from arena.sdk.bot import Bot
from arena.sdk.client import BotClient
from arena.sdk.processes import MAX_PROCESSES, ORPHAN_POLL, PROCESS_VARIABLE, launcher_gone, process_share, supervise
from arena.sdk.retry import RETRY_FOR
from arena.sdk.tls import Tls, check_key_pair, read_pem

log = logging.getLogger("arena.sdk")   # the SDK's one logger, whichever module logs


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (and exit status 2),
    without the usage block: the error is what a bot author needs to see."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_args(argv: list[str] | None = None, *, default_name: str = "bot") -> argparse.Namespace:
    """The standard bot command line; ``args.arena`` is a grpc target with a port, or
    a ``unix:`` one with an absolute socket path.

    A mistake (no token, ``--arena host:abc``, ``--arena unix:relative.sock``, a bad
    ``$ARENA_ADDRESS``, an unreadable ``--tls-ca``) ends the process with one line on stderr
    and exit status 2. ``args.tls`` is the :class:`Tls` to connect with, or None (plaintext).
    """
    parser = _OneLineParser(description=f"Wizard Arena bot {default_name!r}")
    parser.add_argument("--arena", metavar="HOST[:PORT]|unix:/PATH",
                        help=f"the arena; the port defaults to {DEFAULT_PORT}, an IPv6 address goes in "
                             f"brackets ([::1]:{DEFAULT_PORT}); unix:/PATH (or unix:///PATH) is a Unix "
                             f"socket, by its absolute path (default: $ARENA_ADDRESS or 127.0.0.1)")
    parser.add_argument("--token", default=os.environ.get("ARENA_TOKEN"),
                        help="the bot's token (default: $ARENA_TOKEN)")
    parser.add_argument("--name", default=os.environ.get("ARENA_BOT_NAME"),
                        help="the registered bot name, checked against the token's (default: "
                             "$ARENA_BOT_NAME, else none: the token says which bot this is)")
    parser.add_argument("--max-matches", type=int, default=None,
                        help="matches to play at once (default: $ARENA_MAX_MATCHES or 1)")
    parser.add_argument("--processes", type=int, default=None, metavar="N",
                        help="play in N processes, each with its own connection and its share of "
                             "--max-matches (at least 1 each): N cores for a bot whose Python code computes, "
                             "which threads cannot give it (the GIL) (default: $ARENA_PROCESSES or 1)")
    parser.add_argument("--seed", type=int, default=None,
                        help="mixed into every match's seed (default: the arena's seeds only)")
    # --give-up-after: the option's first name, still accepted.
    parser.add_argument("--retry-for", "--give-up-after", dest="retry_for", type=float, default=RETRY_FOR,
                        metavar="SECONDS",
                        help=f"seconds without a connection before exiting with status 1 (default {RETRY_FOR:g})")
    tls = parser.add_argument_group("TLS", "for an arena that serves TLS; a unix: address stays plaintext")
    tls.add_argument("--tls-ca", metavar="FILE",
                     help="connect with TLS, trusting the CA certificate in FILE (PEM): the one the organiser "
                          "hands out (default: $ARENA_TLS_CA)")
    tls.add_argument("--tls", dest="tls_on", action="store_true",
                     help="connect with TLS, trusting the usual public CAs (grpc's list, or the file "
                          "$GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names) (default: $ARENA_TLS=1; ARENA_TLS=0 "
                          "turns the ARENA_TLS_* variables off)")
    tls.add_argument("--tls-cert", metavar="FILE",
                     help="a client certificate (PEM), for an arena that asks for one; with --tls-key "
                          "(default: $ARENA_TLS_CERT)")
    tls.add_argument("--tls-key", metavar="FILE", help="its private key (PEM) (default: $ARENA_TLS_KEY)")
    parser.add_argument("--verbose", "-v", action="store_true", help="log more to stderr (every retry)")
    args = parser.parse_args(argv)

    if args.arena is not None:
        address, source = args.arena, f"--arena {args.arena!r}"
    else:
        address = os.environ.get("ARENA_ADDRESS") or "127.0.0.1"
        source = f"ARENA_ADDRESS={address!r}"
    try:
        args.arena = arena_target(address)
    except ValueError as error:
        parser.error(f"{source}: {error}")
    if not args.token:
        parser.error("a token is needed: --token T or ARENA_TOKEN")
    if args.max_matches is None:
        args.max_matches = _env_number(parser, "ARENA_MAX_MATCHES")
    if args.max_matches < 1:
        parser.error("--max-matches must be at least 1")
    if args.processes is None:
        args.processes = _env_number(parser, "ARENA_PROCESSES")
    if not 1 <= args.processes <= MAX_PROCESSES:
        parser.error(f"--processes must be from 1 to {MAX_PROCESSES}")
    # One of the processes --processes started: it plays its share, and starts none.
    args.process = _process_of(parser)
    if args.process is not None:
        index, count = args.process
        args.max_matches = process_share(args.max_matches, count, index)
        args.processes = 1
    if not args.retry_for >= 0:   # also refuses nan
        parser.error("--retry-for must be 0 or more seconds")
    args.give_up_after = args.retry_for   # the attribute's first name, for callers that read it
    args.tls = _tls_settings(args, parser)
    return args


def _env_number(parser: argparse.ArgumentParser, variable: str) -> int:
    """A whole number from the environment (1 when unset); a bad one ends the process (exit 2)."""
    text = os.environ.get(variable) or "1"
    if not re.fullmatch(r"[0-9]+", text.strip()):
        parser.error(f"{variable}={text!r} is not a number")
    return int(text)


def _process_of(parser: argparse.ArgumentParser) -> tuple[int, int] | None:
    """``(I, N)`` from ``ARENA_PROCESS=I/N`` (set by :func:`supervise` for the I-th of N processes), else None."""
    text = os.environ.get(PROCESS_VARIABLE)
    if not text:
        return None
    found = re.fullmatch(r"\s*([0-9]+)/([0-9]+)\s*", text)
    if found is None or not 1 <= int(found.group(1)) <= int(found.group(2)) <= MAX_PROCESSES:
        parser.error(f"{PROCESS_VARIABLE}={text!r} is not I/N, process I of N (1 <= I <= N <= {MAX_PROCESSES})")
    return int(found.group(1)), int(found.group(2))


# The environment variable behind each TLS option (the option wins when both are given).
_TLS_ENV = {"tls_ca": "ARENA_TLS_CA", "tls_cert": "ARENA_TLS_CERT", "tls_key": "ARENA_TLS_KEY"}
_YES, _NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _tls_settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Tls | None:
    """The :class:`Tls` the command line and the ``ARENA_TLS*`` variables ask for, or None
    for plaintext; a file that cannot be used ends the process with one line (exit 2).

    ``ARENA_TLS=1`` is ``--tls``; ``ARENA_TLS=0`` turns the other variables off (a bot that
    inherited an organiser's ``ARENA_TLS_CA`` but plays on a plaintext arena), not the options.
    """
    switch = os.environ.get("ARENA_TLS", "").strip().lower()
    if switch and switch not in _YES + _NO:
        parser.error(f"ARENA_TLS={os.environ['ARENA_TLS']!r}: give 1 (TLS) or 0 (plaintext)")
    files: dict[str, tuple[str, str]] = {}   # option -> (path, the option or variable that gave it)
    for option, variable in _TLS_ENV.items():
        if getattr(args, option):
            files[option] = (getattr(args, option), "--" + option.replace("_", "-"))
        elif os.environ.get(variable) and switch not in _NO:
            files[option] = (os.environ[variable], variable)
    if not (args.tls_on or switch in _YES or files):
        return None
    if ("tls_cert" in files) != ("tls_key" in files):
        parser.error("a client certificate needs both --tls-cert and --tls-key (or ARENA_TLS_CERT and ARENA_TLS_KEY)")
    pem: dict[str, bytes] = {}
    for option, (path, source) in files.items():
        try:
            pem[option] = read_pem(path, "PRIVATE KEY" if option == "tls_key" else "CERTIFICATE")
        except ValueError as error:
            parser.error(f"{source}: {error}")
    if "tls_cert" in files:
        try:
            check_key_pair(files["tls_cert"][0], files["tls_key"][0])
        except ValueError as error:
            parser.error(f"{files['tls_key'][1]}: {error}")
    return Tls(root_certificates=pem.get("tls_ca"), private_key=pem.get("tls_key"),
               certificate_chain=pem.get("tls_cert"), ca_file=files["tls_ca"][0] if "tls_ca" in files else None)


async def main(bot: type[Bot] | Bot, args: argparse.Namespace) -> int:
    """Run a bot until it is stopped; SIGTERM and SIGINT stop it cleanly. One of the
    processes of ``--processes`` also stops when the process that started it is gone."""
    client = BotClient(bot=bot, arena=args.arena, token=args.token, name=args.name,
                       max_matches=args.max_matches, seed=args.seed,
                       give_up_after=getattr(args, "retry_for", RETRY_FOR), tls=getattr(args, "tls", None))
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, client.stop)
            handled.append(sig)
        except (NotImplementedError, RuntimeError):  # not the main thread / not POSIX
            pass
    watch = asyncio.create_task(_stop_when_orphaned(client)) if getattr(args, "process", None) else None
    try:
        return await client.run()
    finally:
        if watch is not None:
            watch.cancel()
        # The bot is ending: a signal from now on is ignored. Left to asyncio, one that
        # came while the loop closed (its wake-up pipe closed, its handlers not yet
        # removed) printed "Exception ignored ... Bad file descriptor" with a traceback,
        # as when the arena ends the session and SIGTERM follows (a shell's kill).
        for sig in handled:
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_IGN)


async def _stop_when_orphaned(client: BotClient) -> None:
    """Stop the client once the process that started this one has exited: the processes of
    ``--processes`` go with theirs, also when it was killed and could not stop them."""
    while not launcher_gone():
        await asyncio.sleep(ORPHAN_POLL)
    log.info("%s: the process that started this one has exited; exiting", client.name)
    client.stop()


def run(bot: type[Bot] | Bot, argv: list[str] | None = None) -> None:
    """Parse the standard command line, play, and exit with :meth:`BotClient.run`'s code
    (with ``--processes N``: :func:`supervise`'s)."""
    args = parse_args(argv, default_name=bot.name)
    which = f"[{args.process[0]}/{args.process[1]}] " if args.process is not None else ""
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s %(levelname)s {which}%(message)s")
    for chatty in ("grpc", "asyncio"):   # their debug lines would bury the bot's own under -v
        logging.getLogger(chatty).setLevel(logging.INFO)
    if args.processes > 1:
        if args.processes > args.max_matches:
            log.warning("%s: %d processes for %d matches at once: each takes one, %d at once in all",
                        bot.name, args.processes, args.max_matches, args.processes)
        sys.exit(supervise(args.processes, name=bot.name))
    sys.exit(asyncio.run(main(bot, args)))
