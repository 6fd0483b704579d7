"""``arena sprt``: a duplicate A/B test of two bots, handed to arena.cli.tournament_run.

The test runs as a tournament of format ``sprt`` (arena.tournament.sprt): it is stored,
shown by ``arena tournaments``, resumed with ``--resume`` and reproduced from its seed
like any other. The game options are those of ``arena tournament``.
"""

from __future__ import annotations

import typer

from arena.cli.common import DbOption, console, db_location, err_console
from arena.cli.tournament import (
    BIDDING_OPTION,
    BOT_ENV_OPTION,
    CONCURRENCY_OPTION,
    DESTROYER_PENALTY_OPTION,
    FILE_SIZE_LIMIT_OPTION,
    FRESH_OPTION,
    LENGTH_OPTION,
    LINEUP_OPTION,
    MAX_FAULTS_OPTION,
    MEMORY_LIMIT_OPTION,
    MOVE_TIME_OPTION,
    NO_SAMPLES_OPTION,
    OPEN_FILES_LIMIT_OPTION,
    PLAYERS_OPTION,
    PLUS_MINUS_ONE_OPTION,
    PROCESS_LIMIT_OPTION,
    RESUME_OPTION,
    ROUNDS_OPTION,
    SANDBOX_OPTION,
    SEED_OPTION,
    SHARED_OPTION,
    TIME_BANK_OPTION,
    VARIANT_OPTION,
    WORKERS_OPTION,
)
from arena.tournament.settings import SPRT_MAX_GAMES, TournamentRequest


def sprt(
    candidate: str | None = typer.Option(None, metavar="NAME=COMMAND", help="The bot under test (a new "
                                         "version); COMMAND as --bot's in arena tournament: a program, a file or "
                                         "a sample bot's name (heuristic_bot, greedy, ...)", show_default=False),
    baseline: str | None = typer.Option(None, metavar="NAME=COMMAND", help="The bot it is compared with "
                                        "(the old version)", show_default=False),
    opponent: list[str] = typer.Option([], "--opponent", metavar="NAME=COMMAND", help="An opponent at the "
                                       "tables (repeatable) [default: the sample bots]", show_default=False),
    elo0: float | None = typer.Option(None, help="H0: the candidate is at most this much stronger (the "
                                      "leaderboard's Elo, docs/sprt.md) [default: 0]", show_default=False),
    elo1: float | None = typer.Option(None, help="H1: the candidate is at least this much stronger "
                                      "[default: 20]", show_default=False),
    alpha: float | None = typer.Option(None, help="Chance of accepting H1 when H0 holds [default: 0.05]",
                                       show_default=False),
    beta: float | None = typer.Option(None, help="Chance of accepting H0 when H1 holds [default: 0.05]",
                                      show_default=False),
    max_games: int | None = typer.Option(None, help="Stop undecided after this many games, rounded up to whole "
                                         f"sets [default: {SPRT_MAX_GAMES}]. No decision comes before 30 sets (20 "
                                         "at 0/50, 10 from 0/100) nor before 30 sets the two played differently; "
                                         "a 0/20 test at 4 seats takes about 2200 games in the simulation "
                                         "(arena bench sprt)", show_default=False),
    variant: str | None = VARIANT_OPTION,
    rounds: int | None = ROUNDS_OPTION,
    players: int | None = PLAYERS_OPTION,
    seed: int | None = SEED_OPTION,
    move_time: float | None = MOVE_TIME_OPTION,
    time_bank: float | None = TIME_BANK_OPTION,
    max_faults: int | None = MAX_FAULTS_OPTION,
    concurrency: int | None = CONCURRENCY_OPTION,
    bidding: str | None = BIDDING_OPTION,
    plus_minus_one: bool | None = PLUS_MINUS_ONE_OPTION,
    length: str | None = LENGTH_OPTION,
    destroyer_penalty: int | None = DESTROYER_PENALTY_OPTION,
    no_samples: bool = NO_SAMPLES_OPTION,
    lineup: str | None = LINEUP_OPTION,
    sandbox: str | None = SANDBOX_OPTION,
    fresh_per_match: bool | None = FRESH_OPTION,
    shared_processes: bool | None = SHARED_OPTION,
    memory_limit: int | None = MEMORY_LIMIT_OPTION,
    process_limit: int | None = PROCESS_LIMIT_OPTION,
    file_size_limit: int | None = FILE_SIZE_LIMIT_OPTION,
    open_files_limit: int | None = OPEN_FILES_LIMIT_OPTION,
    bot_env: list[str] = BOT_ENV_OPTION,
    workers: int | None = WORKERS_OPTION,
    resume: str | None = RESUME_OPTION,
    db: str | None = DbOption,
) -> None:
    """Is the candidate stronger than the baseline? A sequential test on duplicate sets.

    Each set is one deal played in every seat rotation by the same opponents, once with
    the candidate and once with the baseline in the seat under test; the test stops as
    soon as the log-likelihood ratio crosses a bound (H0 or H1 accepted), or at --max-games.
    Its Elo is the leaderboard's: a candidate N above the baseline on a board of the
    same games is about N in the test.
    """
    from arena.cli.tournament_run import run_tournament_command  # imported here: it brings grpc

    if resume is None and (candidate is None or baseline is None):
        raise typer.BadParameter("both are needed (NAME=COMMAND each)", param_hint="--candidate/--baseline")
    request = TournamentRequest(
        variant=variant, rounds=rounds, players=players, games=max_games, seed=seed, move_time=move_time,
        time_bank=time_bank, max_faults=max_faults, concurrency=concurrency, bidding=bidding,
        plus_minus_one=plus_minus_one, length=length, destroyer_penalty=destroyer_penalty, bots=opponent,
        no_samples=no_samples, resume=resume, db=db_location(db), candidate=candidate, baseline=baseline,
        elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, lineup=lineup, sandbox=sandbox,
        fresh_per_match=fresh_per_match, shared_processes=shared_processes, memory_limit=memory_limit,
        process_limit=process_limit, file_size_limit=file_size_limit, open_files_limit=open_files_limit,
        bot_env=bot_env or None,
        workers=workers, command="sprt",
    )
    run_tournament_command(request, console, err_console)
