"""``arena tournament``: the options as typed, handed to arena.cli.tournament_run.

Every default the help names is read from where it is defined: the tournament's
settings (arena.tournament.settings), which take the referee's limits, and the
engine's game options.
"""

from __future__ import annotations

import os

import typer

from arena.cli.common import DbOption, console, db_location, err_console
from arena.tournament.settings import DEFAULTS, TournamentRequest
from engine import GameConfig

GAME = GameConfig()    # the engine's default game options


# The options `arena tournament` and `arena sprt` share.
VARIANT_OPTION = typer.Option(
    None, help=f"classic or extreme [default: {DEFAULTS.variant}]",
    show_default=False)
ROUNDS_OPTION = typer.Option(
    None, help="Wizard rounds per game [default: the variant's standard length]",
    show_default=False)
PLAYERS_OPTION = typer.Option(
    None, help=f"Table size: 3-6 classic, 3-5 extreme [default: "
    f"{DEFAULTS.players}]", show_default=False)
SEED_OPTION = typer.Option(
    None, help="Master seed, the tournament's secret: the whole tournament "
    "(every deal) reproduces from it; never publish it or pick a "
    "guessable one with bots you do not trust; echoed when a run "
    "starts [default: a fresh 63-bit random seed, printed once the "
    "tournament has finished]", show_default=False)
MOVE_TIME_OPTION = typer.Option(
    None, help=f"Seconds per decision [default: {DEFAULTS.move_time}]",
    show_default=False)
TIME_BANK_OPTION = typer.Option(
    None, help=f"Extra seconds per match [default: {DEFAULTS.time_bank}]",
    show_default=False)
MAX_FAULTS_OPTION = typer.Option(
    None, help="Faults before a bot forfeits a match "
    f"[default: {DEFAULTS.max_faults}]", show_default=False)
CONCURRENCY_OPTION = typer.Option(
    None, help="Matches at once (never two of the same deal) "
    f"[default: {DEFAULTS.concurrency}]", show_default=False)
BIDDING_OPTION = typer.Option(
    None, help=f"classic: open, hidden or secret [default: {GAME.bidding}]",
    show_default=False)
PLUS_MINUS_ONE_OPTION = typer.Option(
    None, "--plus-minus-one", help="classic: the last bidder may not "
    "make the bids add up to the round", show_default=False)
LENGTH_OPTION = typer.Option(
    None, help=f"classic: standard or amigo [default: {GAME.length}]",
    show_default=False)
DESTROYER_PENALTY_OPTION = typer.Option(
    None, help="extreme: the destroyer's base penalty "
    f"[default: {GAME.destroyer_penalty}]", show_default=False)
NO_SAMPLES_OPTION = typer.Option(
    False, "--no-samples", help="Leave the sample bots out of the lineup.")
LINEUP_OPTION = typer.Option(
    None, help="samples: the sample bots; ladder: the sample bots, the learned bot and the search bot (the "
    "search bot takes about 100 ms a decision: a slower tournament) [default: samples]", show_default=False)
RESUME_OPTION = typer.Option(
    None, help="Finish the tournament with this ID", show_default=False)
SANDBOX_OPTION = typer.Option(
    None, help="How the bots the arena starts run: auto: confined with bubblewrap where it works, else "
    "unconfined with a warning; bwrap: confined, or refuse to start; none: unconfined, for your own trusted "
    "bots (docs/security.md) [default: auto]", show_default=False)
FRESH_OPTION = typer.Option(
    None, "--fresh-per-match", help="A fresh process of each bot for every match: nothing a bot saw in one "
    "match survives into another (slower)", show_default=False)
SHARED_OPTION = typer.Option(
    None, "--shared-processes", help="One process of each bot plays every game, every rotation of a deal "
    "included, so it may remember a deal's cards from one rotation to the next: for bots you trust; a faster "
    "start and less memory [default: no process plays two games of one deal]", show_default=False)
MEMORY_LIMIT_OPTION = typer.Option(
    None, metavar="MIB", help=f"Memory of each bot, over all its processes [default: {DEFAULTS.memory_limit_mb}]",
    show_default=False)
PROCESS_LIMIT_OPTION = typer.Option(
    None, metavar="N", help=f"Processes and threads of each bot [default: {DEFAULTS.process_limit}]",
    show_default=False)
FILE_SIZE_LIMIT_OPTION = typer.Option(
    None, metavar="MIB", help=f"Largest file a bot may write [default: {DEFAULTS.file_size_limit_mb}]",
    show_default=False)
OPEN_FILES_LIMIT_OPTION = typer.Option(
    None, metavar="N", help=f"Open files of each bot process [default: {DEFAULTS.open_files_limit}]",
    show_default=False)
WORKERS_OPTION = typer.Option(
    None, metavar="N", help="Who plays, each worker with its own referee and bots: 1, this process; N of 2 or "
    "more, N `arena worker` processes it starts on this machine (one progress line; the same games as 1); 0, "
    "none: it creates the schedule and shows progress while `arena worker`s started elsewhere play "
    "(docs/scaling.md) [env ARENA_WORKERS; default: 1 on up to 3 cores, else half the cores, at most 8]",
    show_default=False)
BOT_ENV_OPTION = typer.Option(
    [], "--bot-env", metavar="NAME=VALUE", help="A variable every bot gets (repeatable); a confined bot's "
    "environment is otherwise only the ARENA_ variables, PATH, HOME and LANG", show_default=False)


def tournament(
    variant: str | None = VARIANT_OPTION,
    rounds: int | None = ROUNDS_OPTION,
    players: int | None = PLAYERS_OPTION,
    games: int | None = typer.Option(None, help="Games to play, rounded up to whole sets of seat rotations "
                                     f"[default: {DEFAULTS.games}]", show_default=False),
    seed: int | None = SEED_OPTION,
    move_time: float | None = MOVE_TIME_OPTION,
    time_bank: float | None = TIME_BANK_OPTION,
    max_faults: int | None = MAX_FAULTS_OPTION,
    concurrency: int | None = CONCURRENCY_OPTION,
    deals: str | None = typer.Option(None, help="duplicate: every deal once per seat rotation (bots you "
                                     "trust); independent: a fresh deal every game (bots you do not) "
                                     f"[default: {DEFAULTS.deals}; independent with --server]", show_default=False),
    bidding: str | None = BIDDING_OPTION,
    plus_minus_one: bool | None = PLUS_MINUS_ONE_OPTION,
    length: str | None = LENGTH_OPTION,
    destroyer_penalty: int | None = DESTROYER_PENALTY_OPTION,
    bot: list[str] = typer.Option([], "--bot", metavar="NAME=COMMAND",
                                  help="Add a local bot: NAME=COMMAND (repeatable); the arena "
                                  "appends --arena HOST:PORT --token T. COMMAND may be a sample bot's name "
                                  "(heuristic, greedy, random, cautious, learned, search)", show_default=False),
    no_samples: bool = NO_SAMPLES_OPTION,
    server: str | None = typer.Option(None, help="HOST:PORT of a running `arena serve`: play its connected "
                                      "bots there", show_default=False),
    admin_token: str | None = typer.Option(None, envvar="ARENA_ADMIN_TOKEN", help="With --server: the "
                                           "admin token `arena serve` printed", show_default=False),
    tls_ca: str | None = typer.Option(None, "--tls-ca", metavar="FILE", help="With --server: it serves TLS; "
                                      "trust the CA certificate in FILE (the ca.pem of `arena tls-cert`), kept "
                                      "for --resume [env ARENA_TLS_CA]", show_default=False),
    tls: bool = typer.Option(False, "--tls", help="With --server: it serves TLS with a certificate the system's "
                             "CAs trust (a public one)"),
    tls_cert: str | None = typer.Option(None, "--tls-cert", metavar="FILE", help="With --server over TLS: the "
                                        "client certificate it requires (arena serve --tls-client-ca) "
                                        "[env ARENA_TLS_CERT]", show_default=False),
    tls_key: str | None = typer.Option(None, "--tls-key", metavar="FILE", help="The key of --tls-cert "
                                       "[env ARENA_TLS_KEY]", show_default=False),
    gauntlet: str | None = typer.Option(None, metavar="NAME", help="A gauntlet: every table has this bot of the "
                                        "lineup and opponents from the rest; the result is its rating and its "
                                        "record against each", show_default=False),
    workers: int | None = WORKERS_OPTION,
    lineup: str | None = LINEUP_OPTION,
    sandbox: str | None = SANDBOX_OPTION,
    fresh_per_match: bool | None = FRESH_OPTION,
    shared_processes: bool | None = SHARED_OPTION,
    memory_limit: int | None = MEMORY_LIMIT_OPTION,
    process_limit: int | None = PROCESS_LIMIT_OPTION,
    file_size_limit: int | None = FILE_SIZE_LIMIT_OPTION,
    open_files_limit: int | None = OPEN_FILES_LIMIT_OPTION,
    bot_env: list[str] = BOT_ENV_OPTION,
    resume: str | None = RESUME_OPTION,
    db: str | None = DbOption,
) -> None:
    """Run a whole tournament: start a referee and the bots, play, store, print the leaderboard."""
    if server is not None and tls_ca is None and not tls:
        tls_ca = os.environ.get("ARENA_TLS_CA") or None    # not on --resume: its CA is stored
    if server is not None and tls_cert is None and tls_key is None:
        tls_cert, tls_key = os.environ.get("ARENA_TLS_CERT") or None, os.environ.get("ARENA_TLS_KEY") or None
    from arena.cli.tournament_run import run_tournament_command  # imported here: it brings grpc

    request = TournamentRequest(
        variant=variant, rounds=rounds, players=players, games=games, seed=seed, move_time=move_time,
        time_bank=time_bank, max_faults=max_faults, concurrency=concurrency, deals=deals, bidding=bidding,
        plus_minus_one=plus_minus_one, length=length, destroyer_penalty=destroyer_penalty, bots=bot,
        no_samples=no_samples, server=server, admin_token=admin_token, tls_ca=tls_ca, tls=tls or None,
        tls_cert=tls_cert, tls_key=tls_key,
        resume=resume, db=db_location(db),
        gauntlet=gauntlet, workers=workers, lineup=lineup, sandbox=sandbox,
        fresh_per_match=fresh_per_match, shared_processes=shared_processes, memory_limit=memory_limit,
        process_limit=process_limit, file_size_limit=file_size_limit, open_files_limit=open_files_limit,
        bot_env=bot_env or None,
    )
    run_tournament_command(request, console, err_console)

