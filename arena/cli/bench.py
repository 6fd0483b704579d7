"""``arena bench ...``: the benchmarks (arena.bench), their figures printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from arena.cli.common import check_choice, console
from engine import VARIANTS, GameConfig

MAX_SEED = 2**63 - 1     # seeds are stored as SQLite's signed 64-bit integers


def check_rounds(variant: str, players: int, rounds: int | None) -> None:
    """Refuse, before anything starts, the --rounds that the tournament a benchmark runs
    would refuse (a ConfigError, one line)."""
    if rounds is not None:
        GameConfig(variant=variant, players=players, rounds=rounds).validate()


def print_figures(figures: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    width = max(map(len, figures))
    for key, value in figures.items():
        shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else value
        console.print(f"{key:<{width}}  {shown}")


def bench_engine(
    variant: str = typer.Option("classic", help="classic or extreme"),
    players: int = typer.Option(4, help="Table size."),
    games: int = typer.Option(1000, help="Full games to play."),
    seed: int = typer.Option(0, min=0, max=MAX_SEED, help="Seed of the first game."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    bare: bool = typer.Option(False, "--bare", help="Classic only: also time a bare-bones playout of the same "
                              "games in this process (no interface, checks or log), and the ratio."),
) -> None:
    """Random full games in-process on one core: games/s and decisions/s."""
    from arena.bench.engine import BARE_VARIANT, bench_against_bare
    from arena.bench.engine import bench_engine as run
    from engine import GameConfig

    check_choice(variant, VARIANTS, "--variant")
    if games < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games")
    if bare and variant != BARE_VARIANT:
        raise typer.BadParameter("the bare playout exists for classic only", param_hint="--bare")
    GameConfig(variant=variant, players=players).validate()
    if bare:
        print_figures(bench_against_bare(players=players, games=games, seed=seed), as_json)
    else:
        print_figures(run(variant=variant, players=players, games=games, seed=seed), as_json)


def bench_env(
    variant: str = typer.Option("classic", help="classic or extreme: the PettingZoo environment timed."),
    players: int = typer.Option(4, help="Table size, also of the OpenSpiel comparison (classic Wizard against "
                                "Oh Hell, whatever --variant)."),
    games: int = typer.Option(200, help="Full games through the environment, and the same games on the engine."),
    seed: int = typer.Option(0, min=0, max=MAX_SEED, help="Deal seed of the first game."),
    playouts: int = typer.Option(20, help="Random playouts of the OpenSpiel game, and of Oh Hell's hands."),
    matches: int = typer.Option(6, help="Classic matches of the policy bot against the sample random bot."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The training environment against the engine (steps/s, decisions/s), the OpenSpiel game against
    Oh Hell (playouts/s), and a policy bot's think time in the arena against a sample bot's, in one run."""
    from arena.bench.env import (
        env_against_engine,
        openspiel_against_oh_hell,
        openspiel_problem,
        policy_bot_in_the_arena,
    )

    check_choice(variant, VARIANTS, "--variant")
    if games < 1 or playouts < 1 or matches < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games/--playouts/--matches")
    GameConfig(variant=variant, players=players).validate()
    try:
        import arena.envs  # noqa: F401
    except ImportError as error:
        raise typer.BadParameter(f"the training environments need the train extra "
                                 f"(pip install 'wizard-arena[train]'): {error}") from None
    figures: dict[str, Any] = {f"env_{k}" if k in ("games",) else k: v
                               for k, v in env_against_engine(variant, players, games, seed).items()}
    problem = openspiel_problem()
    if problem is None:
        figures.update({f"openspiel_{k}": v for k, v in openspiel_against_oh_hell(players, playouts, seed).items()
                        if k != "players"})
    else:
        figures["openspiel"] = f"skipped: {problem}"
    figures.update({f"arena_{k}" if k == "matches" else k: v
                    for k, v in policy_bot_in_the_arena(matches).items()})
    print_figures(figures if as_json else {k: f"{v:.3f}" if isinstance(v, float) and v < 100 else v
                                           for k, v in figures.items()}, as_json)


def bench_referee(
    games: int = typer.Option(20, help="Games for the round-trip measurement."),
    concurrent_matches: int = typer.Option(64, help="Matches at once for the load measurement."),
    turns: int = typer.Option(3, min=1, help="Turns the bare echoes and the referee's matches at once take, "
                              "one after the other, in each layout; each ratio is the median of its turns'."),
    unix: bool = typer.Option(True, "--unix/--tcp-only", help="Measure the round trips over a Unix socket "
                              "too (how a sandboxed bot connects), taking turns with TCP, and their ratio."),
    tls: bool = typer.Option(False, "--tls", help="Measure over TLS too (a throwaway certificate): the round "
                             "trips taking turns with TCP, and the matches at once right after TCP's; with ratios."),
    tournament_games: int = typer.Option(20, min=0, help="Games of the default tournament (arena tournament "
                                         "--variant classic) to time against the engine alone on the same deals; "
                                         "0 leaves it out."),
    events_only: bool = typer.Option(False, "--events-only", help="The benchmark's bots ask for requests without "
                                     "the observation (Hello.events_only), as a bot that keeps its own state may."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Bare gRPC ping-pong vs the real referee, over TCP and a Unix socket (and TLS); then many matches at once;
    then the default tournament against the engine alone."""
    from arena.bench.referee import bench_referee as run

    if games < 1 or concurrent_matches < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games/--concurrent-matches")
    figures = run(games=games, concurrent_matches=concurrent_matches, unix=unix, tls=tls,
                  tournament_games=tournament_games, events_only=events_only, turns=turns)
    # Ratios near 1 (the Unix socket or TLS against TCP) need more than one decimal; the
    # lists of each turn's ratios are rounded already.
    shown = {k: f"{v:.3f}" if k.startswith("ratio_") and isinstance(v, float) else v for k, v in figures.items()}
    print_figures(figures if as_json else shown, as_json)


def bench_referee_work(
    matches: int = typer.Option(64, min=1, help="4-player classic matches at once."),
    repeats: int = typer.Option(3, min=1, help="Times the same matches are played; the minimum counts."),
    events_only: bool = typer.Option(False, "--events-only", help="Requests without the observation."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The referee's own work per decision: matches in this process with bots that answer at once, no gRPC."""
    from arena.bench.referee_work import bench_referee_work as run

    print_figures(run(matches=matches, repeats=repeats, events_only=events_only), as_json)


def bench_deals(
    variant: str = typer.Option("classic", help="classic or extreme"),
    games: int = typer.Option(640, help="Games in each format (rounded up to whole rotations)."),
    seed: int = typer.Option(1, min=0, max=MAX_SEED,
                             help="Master seed of both schedules (with --coverage: of the simulation)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    coverage: bool = typer.Option(False, "--coverage", help="Instead: how often the leaderboard's 95% interval "
                                  "covers the truth in simulated duplicate tournaments of 3, 5, 10 and 50 deals, "
                                  "for two kinds of deal luck, before (z) and after the small-sample correction."),
    tournaments: int = typer.Option(250, help="With --coverage: simulated tournaments per luck and deal count."),
) -> None:
    """Duplicate vs independent deals: how many more independent games the same confidence costs."""
    from arena.bench.deals import bench_deals as run

    if coverage:
        from arena.bench.deals import bench_interval_coverage

        if tournaments < 2:
            raise typer.BadParameter("must be at least 2 (a standard error needs two)", param_hint="--tournaments")
        print_figures(bench_interval_coverage(tournaments=tournaments, seed=seed), as_json)
        return
    check_choice(variant, VARIANTS, "--variant")
    if games < 8:
        raise typer.BadParameter("must be at least 8 (two sets of rotations)", param_hint="--games")
    figures = run(variant=variant, games=games, seed=seed)
    # Standard errors of a place difference are a few hundredths: three digits, not one decimal.
    shown = {k: f"{v:.3g}" if isinstance(v, float) else "n/a" if v is None else v for k, v in figures.items()}
    print_figures(figures if as_json else shown, as_json)


def bench_hostile(
    matches: int = typer.Option(5, min=1, help="Matches with and without spectators (alternating)."),
    spectators: int = typer.Option(50, min=1, max=64, help="Spectators reading each watched match."),
    flood: int = typer.Option(10_000, min=100, help="Messages the flooding client tries to send."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """What a crowd of spectators and a flooding client cost the referee, measured in one run."""
    from arena.bench.hostile import bench_hostile as run

    print_figures(run(matches=matches, spectators=spectators, flood=flood), as_json)


def bench_store(
    matches: int = typer.Option(2000, help="Matches to record one transaction at a time."),
    leaderboard_matches: int = typer.Option(100_000, help="Stored matches for the leaderboard timing."),
    worker_db: str | None = typer.Option(None, "--worker-db", help="Also time the workers' path (claim, renew, "
                                         "save) on this database, e.g. a scratch postgresql:// URL (two tournaments "
                                         "are added to it) [default: SQLite only]", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Recording speed and leaderboard time over many stored matches."""
    from arena.bench.store import bench_store as run

    if matches < 1 or leaderboard_matches < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--matches/--leaderboard-matches")
    print_figures(run(matches=matches, leaderboard_matches=leaderboard_matches, worker_db=worker_db), as_json)


def bench_web(
    matches: int = typer.Option(100_000, help="Stored matches to fill the database with."),
    repeat: int = typer.Option(5, help="Requests of each page (median and max)."),
    db: Path | None = typer.Option(None, "--db", help="A SQLite file: used as is if it exists, else filled "
                                   "and kept [default: a temporary file, removed]", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Leaderboard, match and crosstable pages over HTTP (uvicorn), against a static file's time."""
    from arena.bench.web import bench_web as run

    if matches < 1 or repeat < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--matches/--repeat")
    print_figures(run(matches=matches, repeat=repeat, db=str(db) if db else None), as_json)


def bench_sprt(
    tests: int = typer.Option(1000, help="Simulated SPRTs per hypothesis and deal format."),
    seed: int = typer.Option(1, min=0, max=MAX_SEED, help="Seed of the simulation."),
    players: int = typer.Option(4, help="Table size (3..6)."),
    elo0: float = typer.Option(0.0, help="H0's Elo difference (the leaderboard's Elo)."),
    elo1: float = typer.Option(20.0, help="H1's Elo difference."),
    luck: float = typer.Option(1.0, help="Spread of a card position's luck in the game model."),
    noise: float = typer.Option(1.0, help="Spread of a seat's play in one game in the game model."),
    shared_luck: float = typer.Option(1.0, min=0.0, max=1.0, help="Share of the cards' luck the two versions "
                                      "feel alike (1: a deal favours both the same; 0: independently)."),
    alike: float = typer.Option(0.0, min=0.0, max=1.0, help="Share of sets the two versions play exactly "
                                "alike (two versions of one bot)."),
    cases: bool = typer.Option(False, "--cases", help="Instead: every case docs/sprt.md reports (0/10 to "
                               "0/100, mostly alike sets, independent luck, identical bots), --tests each."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The duplicate SPRT simulated: its error rate at elo0, power at elo1, games needed vs independent
    deals, and its Elo beside the leaderboard's on the same games."""
    from arena.bench.sprt_sim import SimModel, bench_sprt_cases, calibrate_gap
    from arena.bench.sprt_sim import bench_sprt as run
    from arena.stats.sprt import SprtBounds

    if tests < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--tests")
    for option, spread in (("--luck", luck), ("--noise", noise)):
        if not 0 <= spread < float("inf"):     # also nan
            raise typer.BadParameter("must be a number, 0 or more", param_hint=option)
    if cases:
        try:
            SimModel(players=players)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--players") from None
        print_figures(bench_sprt_cases(tests=tests, seed=seed, players=players), as_json)
        return
    try:
        SprtBounds(elo0, elo1).check()
        for elo in (elo0, elo1):   # the game model's best unit is below 1
            calibrate_gap(SimModel(players=players, luck=luck, noise=noise, shared_luck=shared_luck, alike=alike),
                          elo)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    figures = run(tests=tests, seed=seed, players=players, elo0=elo0, elo1=elo1, luck=luck, noise=noise,
                  shared_luck=shared_luck, alike=alike)
    shown = {k: f"{v:.4g}" if isinstance(v, float) else v for k, v in figures.items()}
    print_figures(figures if as_json else shown, as_json)


def bench_workers(
    games: int = typer.Option(40, help="Games of the default tournament each run plays."),
    workers: int = typer.Option(2, help="The local workers (--workers N) compared with one."),
    runs: int = typer.Option(3, help="Runs with each, in turn."),
    seed: int = typer.Option(7, min=0, max=MAX_SEED, help="Master seed of every run's tournament."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The default tournament with --workers 1 and --workers N in turn (real processes): wall time, games/s, the
    ratio, and whether every run stored the same games and board."""
    from arena.bench.workers import bench_workers as run

    if games < 1 or runs < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games/--runs")
    from arena.tournament.command import MAX_WORKERS

    if not 2 <= workers <= MAX_WORKERS:
        raise typer.BadParameter(f"must be from 2 (compared with one) to {MAX_WORKERS}", param_hint="--workers")
    print_figures(run(games=games, workers=workers, runs=runs, seed=seed), as_json)


def bench_sandbox(
    games: int = typer.Option(40, help="Games of the tournament each run plays (the default tournament's)."),
    rounds: int | None = typer.Option(None, help="Rounds per game [default: the variant's standard length]",
                                      show_default=False),
    runs: int = typer.Option(3, help="Runs of each mode, in turn."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The default tournament unconfined, confined with one process a bot (--shared-processes), confined as by
    default (no process plays a deal twice) and with a fresh process per match: wall and start time, games/s, peak
    bot memory, ratios."""
    from arena.bench.sandbox import bench_sandbox as run

    if games < 1 or runs < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games/--runs")
    check_rounds("classic", 4, rounds)
    figures = run(games=games, rounds=rounds, runs=runs)
    print_figures(figures if as_json else {k: f"{v:.3f}" if k.endswith("_ratio") else v
                                           for k, v in figures.items()}, as_json)


def bench_flood(
    games: int = typer.Option(8, min=1, help="Games of the tournament each run plays (4 players: three sample "
                              "bots and a fourth, random or flooding)."),
    rounds: int | None = typer.Option(None, help="Rounds per game [default: the variant's standard length]",
                                      show_default=False),
    runs: int = typer.Option(1, min=1, help="Runs of each (as is, flooded), in turn; medians."),
    threads: int = typer.Option(16, min=1, max=32, help="The flooding bot's threads."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """A small confined tournament as is and with a flooding bot: wall time, the rivals' think times, the ratios."""
    from arena.bench.flood import bench_flood as run

    check_rounds("classic", 4, rounds)
    figures = run(games=games, rounds=rounds, runs=runs, threads=threads)
    print_figures(figures if as_json else {k: f"{v:.3f}" if k.startswith("ratio_") else v
                                           for k, v in figures.items()}, as_json)


def bench_ladder(
    variant: str = typer.Argument("classic", help="classic or extreme"),
    games: int = typer.Option(200, help="Games of the duplicate tournament (rounded up to whole rotations)."),
    rounds: int | None = typer.Option(None, help="Rounds per game [default: the variant's standard length]",
                                      show_default=False),
    budget_ms: float = typer.Option(100.0, help="The search bot's time per decision, in ms."),
    concurrency: int = typer.Option(1, help="Matches at once (the search bot uses a core each)."),
    seed: int = typer.Option(1, min=0, max=MAX_SEED, help="Master seed of the tournament."),
    inference: str = typer.Option("none", help="The search bot's worlds: none (uniform) or policy (weighed by the "
                                  "rivals' bids and cards)."),
    bot: list[str] = typer.Option([], "--bot", metavar="NAME=COMMAND", help="A bot added to the ladder "
                                  "(repeatable), e.g. the search bot with --inference none", show_default=False),
    db: Path | None = typer.Option(None, help="Keep the tournament in this database [default: a temporary one]"),
) -> None:
    """The learned and search bots against the sample bots (a duplicate tournament): ratings, exact bids, targets."""
    from arena.bench.ladder import bench_ladder as run
    from arena.tournament.lineup import LineupError, parse_bot_option

    check_choice(variant, VARIANTS, "--variant")
    check_choice(inference, ("policy", "none"), "--inference")
    if games < 1 or not budget_ms > 0 or concurrency < 1:     # not > 0: also nan
        raise typer.BadParameter("must be positive", param_hint="--games/--budget-ms/--concurrency")
    check_rounds(variant, 4, rounds)
    extra: dict[str, str] = {}
    for text in bot:
        try:
            extra[parse_bot_option(text).name] = text.partition("=")[2].strip()
        except LineupError as error:
            raise typer.BadParameter(str(error), param_hint="--bot") from None
    ladder = run(variant, games=games, rounds=rounds, budget_ms=budget_ms, concurrency=concurrency, seed=seed,
                 inference=inference, extra_bots=extra, db=str(db) if db else None)
    console.print(ladder.table(), highlight=False)


def bench_learned(
    variant: str = typer.Option("classic", help="classic or extreme"),
    players: int = typer.Option(4, help="Table size."),
    games: int = typer.Option(20, help="Full games for each bot, every seat of them."),
    seed: int = typer.Option(1, min=0, max=MAX_SEED, help="Seed of the first game."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The learned bot's time a decision in-process, beside the heuristic bot's in the same games (p50, p99, ratio)."""
    from arena.bench.learned import bench_learned as run

    check_choice(variant, VARIANTS, "--variant")
    if games < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games")
    GameConfig(variant=variant, players=players).validate()
    figures = run(variant, players, games, seed)
    counts = ("decisions", "with_a_choice")
    print_figures(figures if as_json else {k: int(v) if k in counts else f"{v:.3f}" for k, v in figures.items()},
                  as_json)


def bench_worlds(
    variant: str = typer.Option("classic", help="classic or extreme"),
    games: int = typer.Option(20, help="Full 4-player games; every decision of seat 0 is measured."),
    worlds: int = typer.Option(100, help="Worlds drawn a decision, uniformly and by inference."),
    seed: int = typer.Option(1, min=0, max=MAX_SEED, help="Master seed of the games."),
) -> None:
    """How much of each rival's true hand the search bot's sampled worlds hold, uniform against inference."""
    from arena.bench.worlds import bench_worlds as run

    check_choice(variant, VARIANTS, "--variant")
    if games < 1 or worlds < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games/--worlds")
    console.print(run(variant, games=games, seed=seed, worlds=worlds).table(), highlight=False)


def bench_sdk(
    matches: int = typer.Option(6, help="Classic matches each run plays, two at once (with --cpu: each bot "
                                "plays them, one at a time)."),
    work: int = typer.Option(100_000, help="Rounds of the pure-Python loop the bot runs for every decision."),
    rounds: int | None = typer.Option(None, help="Rounds per match (3 players): 8, or 20 with --cpu."),
    runs: int = typer.Option(3, help="Runs of each (the yardstick, one process, two), in turn; medians."),
    cpu: bool = typer.Option(False, "--cpu", help="Instead: the CPU per decision of a bot through the SDK (plain "
                             "methods, and async def ones) against a bare grpc.aio client answering the same "
                             "requests, taking turns, and the ratios."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """A CPU-bound SDK bot with --processes 1 and 2 on two matches at once: decisions/s, the ratio, a bare yardstick."""
    from arena.bench.sdk import bench_sdk as run
    from arena.bench.sdk import bench_sdk_cpu

    rounds = rounds if rounds is not None else 20 if cpu else 8
    if matches < 1 or work < 1 or runs < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--matches/--work/--runs")
    if not 1 <= rounds <= 20:
        raise typer.BadParameter("must be from 1 to 20 (3 players)", param_hint="--rounds")
    if cpu:
        figures = bench_sdk_cpu(matches=matches, rounds=rounds, runs=runs)
        shown = {k: f"{v:.2f}" if k.endswith("_over_bare")
                 else ("yes" if v else "no") if isinstance(v, bool) else v
                 for k, v in figures.items()}
        print_figures(figures if as_json else shown, as_json)
        return
    figures = run(matches=matches, work=work, rounds=rounds, runs=runs)
    print_figures(figures if as_json else {k: f"{v:.2f}" if k.endswith(("_over_one", "_of_bare")) else v
                                           for k, v in figures.items()}, as_json)


def bench_claims(
    workers: str = typer.Option("1,2,4,8,16,32,64", help="Worker counts (processes), comma-separated; each plays "
                                "a fresh tournament schedule."),
    games: int = typer.Option(1536, help="Games of each schedule (rounded up to whole rotations of 8 bots at "
                              "4-seat tables)."),
    db: str | None = typer.Option(None, "--db", help="A scratch postgresql:// URL (a finished tournament per worker "
                                  "count is added to it), a SQLite file, or 'sqlite' for a temporary one "
                                  "[default: a throwaway PostgreSQL cluster, started and removed]",
                                  show_default=False),
    rounds: int = typer.Option(15, min=1, max=15, help="Rounds of each stored game (15: a full classic log)."),
    fsync: bool = typer.Option(True, "--fsync/--no-fsync", help="The throwaway cluster's fsync."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Workers claiming, renewing, saving and releasing free games at once: saves/s, claim latency, lock waits
    (pg_stat_activity), a bare-write yardstick, and every game stored exactly once (exit code 1 if not)."""
    from arena.bench.claims import ClaimsPlan, parse_counts
    from arena.bench.claims import bench_claims as run

    try:
        counts = parse_counts(workers)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--workers") from None
    if games < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games")
    report = run(ClaimsPlan(db=db, workers=counts, games=games, rounds=rounds, fsync=fsync))
    if as_json:
        print_figures(report.figures(), True)
    else:
        print(report.table())      # plain print: a wide table, not wrapped to the terminal
    if not report.exactly_once:
        raise typer.Exit(1)
