"""The ``arena`` command line: the typer app, every command's name, and ``main``.

The commands themselves are in the modules beside this one, by topic (tournament,
serve, bots, browse, bench), each a few lines calling the room that does the work;
this module lists them in the order ``arena --help`` shows them.

Every command fails the same way on bad input: one line on stderr naming the
problem, exit code 2, no traceback, nothing written.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import typer

from arena.cli import bench, bots, browse, play, serve, sprt, tournament, web, worker
from arena.cli.common import CliError
from arena.tournament.lineup import LineupError
from arena.tournament.schedule import ScheduleError
from engine import ConfigError

app = typer.Typer(
    name="arena",
    help="Wizard Arena: tournaments, ratings and match logs for Wizard and Wizard Extreme bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts say "[default: ...]" literally
)
bot_app = typer.Typer(help="Register, list and check bots.", no_args_is_help=True, rich_markup_mode=None)
bench_app = typer.Typer(help="Benchmarks that print their figures.", no_args_is_help=True,
                        rich_markup_mode=None)
app.add_typer(bot_app, name="bot")
app.add_typer(bench_app, name="bench")


def _print_version(value: bool) -> None:
    if value:
        from arena.referee.server import SERVER_VERSION

        print(f"arena {SERVER_VERSION}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")) -> None:
    """Wizard Arena: tournaments, ratings and match logs for Wizard and Wizard Extreme bots."""


app.command()(tournament.tournament)
app.command()(sprt.sprt)
app.command()(worker.worker)
app.command()(browse.tournaments)
app.command()(serve.serve)
app.command("tls-cert")(serve.tls_cert)
app.command()(bots.proto)
bot_app.command("register")(bots.bot_register)
bot_app.command("remove")(bots.bot_remove)
bot_app.command("list")(bots.bot_list)
bot_app.command("check")(bots.bot_check)
app.command("new-bot")(bots.new_bot)
app.command()(browse.leaderboard)
app.command()(browse.crosstable)
app.command()(browse.matches)
app.command()(browse.show)
app.command()(browse.replay)
app.command()(browse.export)
app.command()(web.web)
app.command()(play.play)
bench_app.command("engine")(bench.bench_engine)
bench_app.command("env")(bench.bench_env)
bench_app.command("referee")(bench.bench_referee)
bench_app.command("referee-work")(bench.bench_referee_work)
bench_app.command("deals")(bench.bench_deals)
bench_app.command("hostile")(bench.bench_hostile)
bench_app.command("store")(bench.bench_store)
bench_app.command("web")(bench.bench_web)
bench_app.command("sprt")(bench.bench_sprt)
bench_app.command("workers")(bench.bench_workers)
bench_app.command("sandbox")(bench.bench_sandbox)
bench_app.command("flood")(bench.bench_flood)
bench_app.command("ladder")(bench.bench_ladder)
bench_app.command("learned")(bench.bench_learned)
bench_app.command("worlds")(bench.bench_worlds)
bench_app.command("sdk")(bench.bench_sdk)
bench_app.command("claims")(bench.bench_claims)


# --------------------------------------------------------------------------- entry point

def user_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "bad input", shown as one line with exit code 2."""
    errors: list[type[BaseException]] = [CliError, ConfigError, LineupError, ScheduleError]
    # Modules not imported yet cannot have raised; importing sqlalchemy just to catch is slow.
    store = sys.modules.get("arena.store")
    if store is not None:
        errors.append(store.StoreError)
    sandbox = sys.modules.get("arena.tournament.sandbox")
    if sandbox is not None:  # --sandbox bwrap where bubblewrap cannot run
        errors.append(sandbox.SandboxError)
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
    # grpc's core logs a failed TLS handshake on stderr (an INFO line) unless told a level,
    # beside the one line the command prints about it. It reads the variable once, when it
    # is first imported: the commands import it lazily, after this. The user's value wins.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
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
