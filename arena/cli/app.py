"""The ``arena`` command line.

Every command fails the same way on bad input: one line on stderr naming the
problem, exit code 2, no traceback, nothing written.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    name="arena",
    help="Wizard Arena: tournaments, ratings and match logs for Wizard and Wizard Extreme bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts say "[default: ...]" literally
)
bot_app = typer.Typer(help="Register, list and check bots.", no_args_is_help=True, rich_markup_mode=None)
MatchArgument = typer.Argument(..., metavar="MATCH", help="A match id, as `arena matches` lists them.")


def _print_version(value: bool) -> None:
    if value:
        from arena.referee.server import SERVER_VERSION

        print(f"arena {SERVER_VERSION}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")) -> None:
    """Wizard Arena: tournaments, ratings and match logs for Wizard and Wizard Extreme bots."""
bench_app = typer.Typer(help="Benchmarks that print their figures.", no_args_is_help=True,
                        rich_markup_mode=None)
app.add_typer(bot_app, name="bot")
app.add_typer(bench_app, name="bench")

def make_console(stderr: bool = False) -> Console:
    """A console; when output goes to a file or pipe, 160 columns rather than rich's 80,
    so that tables of ids and bot names are not folded."""
    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=160 if wide else None)


console = make_console()
err_console = make_console(stderr=True)

VARIANTS = ("classic", "extreme")
FORMATS = ("table", "md", "csv", "json", "html")
DEFAULT_DB = "arena.db"

DbOption = typer.Option(None, "--db", help="Database path or URL [env ARENA_DB; default ./arena.db].",
                        show_default=False)


class CliError(Exception):
    """A problem with what the user asked for; shown as one line, exit code 2."""


def fail(message: str) -> NoReturn:
    raise CliError(message)


def db_location(db: str | None) -> str:
    return db or os.environ.get("ARENA_DB") or DEFAULT_DB


def open_store(db: str | None, *, must_exist: bool) -> Any:
    """The store at ``--db``; for read-only commands a missing file is an error, not a new database."""
    from arena.store import Store

    location = db_location(db)
    path = location.removeprefix("sqlite:///") if location.startswith("sqlite:///") else location
    if must_exist and "://" not in path and not Path(path).exists():
        fail(f"no arena database at {path} (run a tournament first, or pass --db)")
    return Store(location)


def check_choice(value: str | None, allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}", param_hint=option)


# --------------------------------------------------------------------------- tournament

@app.command()
def tournament(
    variant: str | None = typer.Option(None, help="classic or extreme [default: classic]", show_default=False),
    rounds: int | None = typer.Option(None, help="Wizard rounds per game [default: the variant's standard length]",
                                         show_default=False),
    players: int | None = typer.Option(None, help="Table size: 3-6 classic, 3-5 extreme [default: 4]",
                                          show_default=False),
    games: int | None = typer.Option(None, help="Games to play, rounded up to whole sets of seat rotations "
                                        "[default: 40]", show_default=False),
    seed: int | None = typer.Option(None, help="Master seed, the tournament's secret: the whole tournament "
                                                  "(every deal) reproduces from it; never publish it or pick a "
                                                  "guessable one with bots you do not trust [default: a fresh "
                                                  "63-bit random seed]", show_default=False),
    move_time: float | None = typer.Option(None, help="Seconds per decision [default: 1.0]", show_default=False),
    time_bank: float | None = typer.Option(None, help="Extra seconds per match [default: 10.0]",
                                              show_default=False),
    max_faults: int | None = typer.Option(None, help="Faults before a bot forfeits a match [default: 3]",
                                             show_default=False),
    concurrency: int | None = typer.Option(None, help="Matches at once (never two of the same deal) "
                                              "[default: 4]", show_default=False),
    deals: str | None = typer.Option(None, help="duplicate: every deal once per seat rotation (bots you "
                                        "trust); independent: a fresh deal every game (bots you do not) "
                                        "[default: duplicate; independent with --server]", show_default=False),
    bidding: str | None = typer.Option(None, help="classic: open, hidden or secret [default: open]",
                                          show_default=False),
    plus_minus_one: bool | None = typer.Option(None, "--plus-minus-one", help="classic: the last bidder may not "
                                                  "make the bids add up to the round", show_default=False),
    length: str | None = typer.Option(None, help="classic: standard or amigo [default: standard]",
                                         show_default=False),
    destroyer_penalty: int | None = typer.Option(None, help="extreme: the destroyer's base penalty [default: 4]",
                                                    show_default=False),
    bot: list[str] = typer.Option([], "--bot", metavar="NAME=COMMAND",
                                  help="Add a local bot: NAME=COMMAND (repeatable); the arena "
                                  "appends --arena HOST:PORT --token T", show_default=False),
    no_samples: bool = typer.Option(False, "--no-samples", help="Leave the sample bots out of the lineup."),
    server: str | None = typer.Option(None, help="HOST:PORT of a running `arena serve`: play its connected "
                                         "bots there", show_default=False),
    admin_token: str | None = typer.Option(None, envvar="ARENA_ADMIN_TOKEN", help="With --server: the "
                                              "admin token `arena serve` printed", show_default=False),
    resume: str | None = typer.Option(None, help="Finish the tournament with this ID", show_default=False),
    db: str | None = DbOption,
) -> None:
    """Run a whole tournament: start a referee and the bots, play, store, print the leaderboard."""
    from arena.tournament.command import TournamentRequest, run_tournament_command

    request = TournamentRequest(
        variant=variant, rounds=rounds, players=players, games=games, seed=seed, move_time=move_time,
        time_bank=time_bank, max_faults=max_faults, concurrency=concurrency, deals=deals, bidding=bidding,
        plus_minus_one=plus_minus_one, length=length, destroyer_penalty=destroyer_penalty, bots=bot,
        no_samples=no_samples, server=server, admin_token=admin_token, resume=resume, db=db_location(db),
    )
    run_tournament_command(request, console, err_console)


ListFormatOption = typer.Option("table", "--format", help="table, json or csv (json and csv: every field, "
                                "full ids, ISO dates)")


@app.command()
def tournaments(format: str = ListFormatOption, db: str | None = DbOption) -> None:
    """List stored tournaments with every game option; a run whose process died shows as interrupted."""
    from arena.results import browse

    check_choice(format, browse.LIST_FORMATS, "--format")
    store = open_store(db, must_exist=True)
    lines = browse.tournament_lines(store, db_location(db))
    print_listing(browse.tournaments_listing(lines, format, console.width))
    if not lines:
        err_console.print("no tournaments stored yet")


def print_listing(listing: Any) -> None:
    """Print a browse.Listing: a table on the console (and, on stderr, which columns a
    narrow terminal left out), or JSON/CSV text as it is."""
    if listing.table is None:
        print(listing.text)     # plain print: rich would wrap and colour it
        return
    console.print(listing.table)
    if listing.left_out:
        err_console.print(f"left out to fit {console.width} columns: {', '.join(listing.left_out)} "
                          "(a wider terminal, or --format json or csv, shows every column)", highlight=False)


# --------------------------------------------------------------------------- serving

@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(50051, help="Port to listen on (0: any free port)."),
    db: str | None = DbOption,
    move_time: float = typer.Option(1.0, help="Seconds per decision."),
    time_bank: float = typer.Option(10.0, help="Extra seconds per match."),
    max_faults: int = typer.Option(3, help="Faults before a bot forfeits a match."),
    grace: float = typer.Option(5.0, help="Seconds a disconnected bot has to reconnect."),
    ladder: str | None = typer.Option(None, help="Keep seating idle connected bots in matches of this variant."),
    quiet: bool = typer.Option(False, "--quiet", help="Log only warnings (default: connections, matches, faults)."),
) -> None:
    """Run the referee: bots connect, organisers run matches on it."""
    from arena.referee.server import serve as serve_forever

    check_choice(ladder, VARIANTS, "--ladder")
    if not 0 <= port <= 65535:
        raise typer.BadParameter("must be between 0 and 65535", param_hint="--port")
    from arena.referee.match import MAX_SECONDS

    for name, value in (("--move-time", move_time), ("--time-bank", time_bank), ("--grace", grace)):
        if not 0 <= value <= MAX_SECONDS:     # also refuses nan and inf
            raise typer.BadParameter(f"must be a number of seconds from 0 to {MAX_SECONDS:g}", param_hint=name)
    check_port_free(host, port)
    open_store(db, must_exist=False)  # refuse a foreign database before binding the port
    try:
        asyncio.run(serve_forever(host=host, port=port, db_path=db_location(db), move_time=move_time,
                                  time_bank=time_bank, max_faults=max_faults, grace=grace, ladder_variant=ladder,
                                  quiet=quiet))
    except OSError as error:   # the port was taken between the check and grpc's bind
        fail(str(error))


def check_port_free(host: str, port: int) -> None:
    """Refuse a taken port or an unknown host in one line, before grpc tries (and logs
    its own multi-line complaint on stderr)."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as probe:
            # As grpc binds: a port whose old connections linger in TIME-WAIT (a restart
            # right after a stop) is free, one with a listener is not.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error.strerror or error}")


# --------------------------------------------------------------------------- bots

@app.command()
def proto() -> None:
    """Print the path of the protocol's .proto file (installed with the arena), to
    generate a bot's client from it in any language."""
    from arena.wire.proto_gen import INSTALLED_PROTO

    print(INSTALLED_PROTO)


@bot_app.command("register")
def bot_register(name: str,
                 rotate: bool = typer.Option(False, "--rotate", help="Issue a new token for an existing bot."),
                 db: str | None = DbOption) -> None:
    """Register a bot and print its token (shown once; only a hash is stored)."""
    from arena.tournament.lineup import check_name

    check_name(name)
    token = open_store(db, must_exist=False).register_bot(name, rotate=rotate)
    console.print(f"Registered bot [bold]{name}[/]. Its token (shown only now):")
    print(token)


@bot_app.command("remove")
def bot_remove(name: str, db: str | None = DbOption) -> None:
    """Take a bot's token away: it can no longer connect, and a running arena ends its
    streams within a second. Its matches and ratings stay; --rotate on register gives
    it a new token."""
    open_store(db, must_exist=True).remove_bot(name)
    console.print(f"Removed bot [bold]{name}[/]'s token; it can no longer connect.", highlight=False)


@bot_app.command("list")
def bot_list(db: str | None = DbOption) -> None:
    """List registered bots."""
    from rich.table import Table

    table = Table("bot", "registered", "has token")
    for b in open_store(db, must_exist=True).list_bots():
        table.add_row(b.name, str(b.created_at)[:19], "yes" if b.has_token else "no (local)")
    console.print(table)


@bot_app.command("check")
def bot_check(
    command: str = typer.Argument(..., metavar="COMMAND", help="The command that starts the bot, as one string: "
                                  "'./my_bot.py', 'python3 my_bot.py', 'node bot.js' (read as --bot reads it)."),
    variant: str | None = typer.Option(None, help="Check only this variant: classic or extreme [default: every "
                                          "variant the bot's Hello names]", show_default=False),
    move_time: float = typer.Option(1.0, help="Seconds per decision, as in a tournament."),
    time_bank: float = typer.Option(10.0, help="Extra seconds per match, as in a tournament."),
    seed: int | None = typer.Option(None, help="Seed of the deals, seats and opponents [default: a fresh one, "
                                       "printed]", show_default=False),
    name: str | None = typer.Option(None, help="The bot name it plays under [default: from the command, e.g. "
                                       "my_bot]", show_default=False),
    connect_timeout: float = typer.Option(30.0, help="Seconds the bot has to start and say Hello."),
) -> None:
    """Validate a bot before a tournament: start it, play short matches against the sample
    bots in every variant it plays, and report its faults and time per decision. Exit
    code 1 on any fault; nothing is stored."""
    from arena.tournament.check import check_bot, settings_from_args

    settings = settings_from_args(command, name=name, variant=variant, move_time=move_time, time_bank=time_bank,
                                  seed=seed, connect_timeout=connect_timeout)
    report = check_bot(settings, out=lambda line: print(line, flush=True))  # print: fault texts may hold [brackets]
    if not report.passed:
        raise typer.Exit(1)


@app.command("new-bot")
def new_bot(
    name: str = typer.Argument(..., metavar="NAME", help="The bot's name (1-40 letters, digits, '-', '_' or '.')."),
    lang: str = typer.Option("python", help="python or node"),
    folder: Path | None = typer.Option(None, "--dir", help="The folder to write the bot in; it may exist if "
                                          "empty [default: ./NAME]", show_default=False),
) -> None:
    """Write a starter bot that plays every decision legally and passes `arena bot check`:
    fill in its logic where the comments say."""
    import shlex

    from arena.starter.new_bot import npm_install, write_bot

    bot = write_bot(name, lang, folder if folder is not None else Path(name))
    print(f"wrote {', '.join(str(path) for path in bot.files)}")   # print: a path may hold [brackets]
    if lang == "node":
        failed, message = npm_install(bot.folder)
        print(message, file=sys.stderr if failed else sys.stdout)
        if failed:
            raise typer.Exit(1)
    print(f"check it:  arena bot check {shlex.quote(str(bot.script))}")
    print(f"enter it:  arena tournament --bot {shlex.quote(f'{name}={bot.script}')}")


# --------------------------------------------------------------------------- browsing

@app.command()
def leaderboard(
    variant: str | None = typer.Option(None, help="classic or extreme [default: the tournament's, else classic]",
                                          show_default=False),
    tournament: str | None = typer.Option(None, help="Only this tournament's games."),
    min_games: int = typer.Option(0, help="Leave out bots with fewer games."),
    format: str = typer.Option("table", "--format", help="table, md, csv, json or html"),
    export: Path | None = typer.Option(None, help="Write Markdown, HTML, JSON and CSV files here: one set per variant "
                                          "(or just --variant), for --tournament and --min-games as given."),
    db: str | None = DbOption,
) -> None:
    """Show the leaderboard, sorted by the maximum-likelihood rating."""
    from arena.results import leaderboard as lb

    check_choice(variant, VARIANTS, "--variant")
    check_choice(format, FORMATS, "--format")
    if min_games < 0:
        raise typer.BadParameter("must not be negative", param_hint="--min-games")
    if export is not None and format != "table":
        raise typer.BadParameter("--export always writes md, html, json and csv; drop --format", param_hint="--format")
    if export is not None and export.exists() and not export.is_dir():
        raise typer.BadParameter(f"{export} exists and is not a directory", param_hint="--export")
    store = open_store(db, must_exist=True)
    tournament_variant = None
    if tournament is not None:
        tournament_variant = store.get_tournament(tournament).settings.get("game", {}).get("variant")
        if variant is not None and tournament_variant not in (None, variant):
            fail(f"tournament {tournament} is {tournament_variant}, not {variant}")
    variant = variant or tournament_variant
    if export is not None:
        try:
            written = lb.export(store, export, variants=[variant] if variant else None, tournament_id=tournament,
                                min_games=min_games)
        except OSError as error:
            fail(f"cannot write to {export}: {error.strerror or error}")
        for path in written:
            console.print(f"wrote {path}")
        if not written:
            err_console.print("nothing to export: no completed matches" + (f" in {tournament}" if tournament else ""))
        return
    variant = variant or "classic"
    board = lb.board(store, variant, tournament_id=tournament, min_games=min_games)
    if not board.rows:
        err_console.print(f"no completed {variant} matches" + (f" in tournament {tournament}" if tournament else "")
                          + (f" by bots with {min_games}+ games" if min_games else ""))
    if format == "table":
        lb.render_board(board, "table", console=console)   # one-line headers when the terminal is wide enough
    else:
        # md, html, json and csv carry the board's metadata (date, tournaments, options, games, version).
        print(lb.render_board(board, format).rstrip("\n"))


@app.command()
def matches(
    variant: str | None = typer.Option(None, help="classic or extreme"),
    tournament: str | None = typer.Option(None, help="Only this tournament."),
    bot: str | None = typer.Option(None, help="Only matches this bot played."),
    limit: int = typer.Option(50, help="At most this many, newest first."),
    format: str = ListFormatOption,
    db: str | None = DbOption,
) -> None:
    """List stored matches (Wizard Extreme totals are penalty points: lower is better)."""
    from arena.results import browse

    check_choice(variant, VARIANTS, "--variant")
    check_choice(format, browse.LIST_FORMATS, "--format")
    if limit < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--limit")
    store = open_store(db, must_exist=True)
    if tournament is not None:
        store.get_tournament(tournament)
    # One more than asked tells whether --limit cut the list.
    found = store.list_matches(variant=variant, tournament_id=tournament, bot=bot, limit=limit + 1)
    if not found:
        err_console.print("no stored matches" + (" match these filters" if variant or tournament or bot else ""))
        if format != "table":   # scripts still get a well-formed empty list
            print_listing(browse.matches_listing([], format, console.width))
        return
    print_listing(browse.matches_listing(found[:limit], format, console.width))
    if len(found) > limit:
        err_console.print(f"the newest {limit} shown; --limit N shows more")


@app.command()
def show(match: str = MatchArgument, db: str | None = DbOption) -> None:
    """Show a match: its game options, then round by round and trick by trick."""
    from arena.results import browse

    console.print(browse.show_match(open_store(db, must_exist=True), match))


@app.command()
def replay(match: str = MatchArgument,
           verify: bool = typer.Option(False, "--verify", help="Confirm the stored result (replaying always "
                                       "does; the flag is accepted so scripts can say so)."),
           db: str | None = DbOption) -> None:
    """Re-run a stored match log through the engine and confirm the stored totals and places."""
    from arena.results import browse

    ok, message = browse.verify_match(open_store(db, must_exist=True), match)
    if ok:
        console.print(f"[green]ok[/] {message}")
        return
    err_console.print(f"[red]MISMATCH[/] {message}")
    raise typer.Exit(1)


@app.command()
def export(match: str = MatchArgument, db: str | None = DbOption) -> None:
    """Print a stored match as JSON."""
    from arena.results import browse

    print(json.dumps(browse.export_match(open_store(db, must_exist=True), match), indent=1))


# --------------------------------------------------------------------------- benchmarks

def print_figures(figures: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    width = max(map(len, figures))
    for key, value in figures.items():
        shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else value
        console.print(f"{key:<{width}}  {shown}")


@bench_app.command("engine")
def bench_engine(
    variant: str = typer.Option("classic", help="classic or extreme"),
    players: int = typer.Option(4, help="Table size."),
    games: int = typer.Option(1000, help="Full games to play."),
    seed: int = typer.Option(0, help="Seed of the first game."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    bare: bool = typer.Option(False, "--bare", help="Classic only: also time a bare-bones playout of the same "
                              "games in this process (no interface, checks or log), and the ratio."),
) -> None:
    """Random full games in-process on one core: games/s and decisions/s."""
    from arena.bench.engine import bench_against_bare
    from arena.bench.engine import bench_engine as run
    from engine import GameConfig

    check_choice(variant, VARIANTS, "--variant")
    if games < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games")
    if bare and variant != "classic":
        raise typer.BadParameter("the bare playout exists for classic only", param_hint="--bare")
    GameConfig(variant=variant, players=players).validate()
    if bare:
        print_figures(bench_against_bare(players=players, games=games, seed=seed), as_json)
    else:
        print_figures(run(variant=variant, players=players, games=games, seed=seed), as_json)


@bench_app.command("referee")
def bench_referee(
    games: int = typer.Option(20, help="Games for the round-trip measurement."),
    concurrent_matches: int = typer.Option(64, help="Matches at once for the load measurement."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Bare gRPC ping-pong vs the real referee; then many matches at once."""
    from arena.bench.referee import bench_referee as run

    if games < 1 or concurrent_matches < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--games/--concurrent-matches")
    print_figures(run(games=games, concurrent_matches=concurrent_matches), as_json)


@bench_app.command("deals")
def bench_deals(
    variant: str = typer.Option("classic", help="classic or extreme"),
    games: int = typer.Option(640, help="Games in each format (rounded up to whole rotations)."),
    seed: int = typer.Option(1, help="Master seed of both schedules."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Duplicate vs independent deals: how many more independent games the same confidence costs."""
    from arena.bench.deals import bench_deals as run

    check_choice(variant, VARIANTS, "--variant")
    if games < 8:
        raise typer.BadParameter("must be at least 8 (two sets of rotations)", param_hint="--games")
    if not 0 <= seed < 2**63:
        raise typer.BadParameter("must be between 0 and 2**63 - 1", param_hint="--seed")
    figures = run(variant=variant, games=games, seed=seed)
    # Standard errors of a place difference are a few hundredths: three digits, not one decimal.
    shown = {k: f"{v:.3g}" if isinstance(v, float) else "n/a" if v is None else v for k, v in figures.items()}
    print_figures(figures if as_json else shown, as_json)


@bench_app.command("hostile")
def bench_hostile(
    matches: int = typer.Option(5, min=1, help="Matches with and without spectators (alternating)."),
    spectators: int = typer.Option(50, min=1, max=64, help="Spectators reading each watched match."),
    flood: int = typer.Option(10_000, min=100, help="Messages the flooding client tries to send."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """What a crowd of spectators and a flooding client cost the referee, measured in one run."""
    from arena.bench.hostile import bench_hostile as run

    print_figures(run(matches=matches, spectators=spectators, flood=flood), as_json)


@bench_app.command("store")
def bench_store(
    matches: int = typer.Option(2000, help="Matches to record one transaction at a time."),
    leaderboard_matches: int = typer.Option(100_000, help="Stored matches for the leaderboard timing."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Recording speed and leaderboard time over many stored matches."""
    from arena.bench.store import bench_store as run

    if matches < 1 or leaderboard_matches < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--matches/--leaderboard-matches")
    print_figures(run(matches=matches, leaderboard_matches=leaderboard_matches), as_json)


@bench_app.command("fuzz")
def bench_fuzz(
    seconds: float = typer.Option(60.0, help="Seconds of fuzzing (matches still running then are finished)."),
    seed: int = typer.Option(0, help="Seed of every random choice; a failing run repeats with it."),
    workdir: Path | None = typer.Option(None, help="Keep the database, logs and message trace here "
                                           "[default: a temporary directory, removed]", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the whole report)."),
) -> None:
    """Protocol fuzzer against a real `arena serve`; exit code 1 if an invariant was violated."""
    from arena.bench.fuzz import run_fuzz

    if not 0 < seconds <= 86_400:
        raise typer.BadParameter("must be more than 0 and at most 86400", param_hint="--seconds")
    report = run_fuzz(seconds=seconds, seed=seed, workdir=workdir)
    if as_json:
        print_figures(report.to_json(), True)
    else:
        print_figures(report.figures(), False)
        for title, lines in (("violation", report.violations), ("anomaly", report.anomalies),
                             ("server traceback", report.server_tracebacks)):
            for line in lines:
                print(f"{title}: {line}")   # plain print: the text may hold [brackets] rich would eat
    if not report.ok:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- entry point

def user_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "bad input", shown as one line with exit code 2."""
    from arena.tournament.lineup import LineupError
    from arena.tournament.schedule import ScheduleError
    from engine import ConfigError

    errors: list[type[BaseException]] = [CliError, ConfigError, LineupError, ScheduleError]
    # Modules not imported yet cannot have raised; importing sqlalchemy just to catch is slow.
    store = sys.modules.get("arena.store")
    if store is not None:
        errors.append(store.StoreError)
    grpc = sys.modules.get("grpc")
    if grpc is not None:  # a remote arena (--server) refused or could not be reached
        errors.append(grpc.RpcError)
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy_exc is not None:  # a damaged or half-foreign database file
        errors.append(sqlalchemy_exc.DatabaseError)
    return tuple(errors)


def is_click_error(exc: BaseException, name: str) -> bool:
    """True for click's exception ``name`` or a subclass, whichever click typer brings
    (typer 0.29 vendors its own copy, older ones use the click package)."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def one_line(exc: BaseException) -> str:
    """The first line of what went wrong, for any of the user_errors()."""
    if callable(getattr(exc, "code", None)) and callable(getattr(exc, "details", None)):  # a grpc error
        return f"the arena server answered {exc.code().name}: {exc.details()}"  # type: ignore[attr-defined]
    return (str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__])[0]


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the ``arena`` script."""
    command = typer.main.get_command(app)
    args = sys.argv[1:] if argv is None else argv
    try:
        result = command.main(args=args, prog_name="arena", standalone_mode=False)
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        sys.exit(130)
    except user_errors() as exc:
        message = one_line(exc)
        print(f"arena: error: {message}", file=sys.stderr)
        sys.exit(2)
    except Exception as exc:
        if is_click_error(exc, "NoArgsIsHelpError"):   # `arena` or `arena bot` alone: the help, not an error
            print(exc.format_message())  # type: ignore[attr-defined]
            sys.exit(0)
        if is_click_error(exc, "UsageError"):
            ctx = getattr(exc, "ctx", None)
            where = f"{ctx.command_path}: " if ctx is not None else "arena: "
            print(f"{where}error: {exc.format_message()}", file=sys.stderr)  # type: ignore[attr-defined]
            sys.exit(2)
        if is_click_error(exc, "Abort"):
            print("arena: interrupted", file=sys.stderr)
            sys.exit(130)
        if is_click_error(exc, "ClickException"):
            print(f"arena: error: {exc.format_message()}", file=sys.stderr)  # type: ignore[attr-defined]
            sys.exit(getattr(exc, "exit_code", 1))
        raise
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    main()
