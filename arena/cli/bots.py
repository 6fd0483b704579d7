"""Commands for bot authors: ``arena bot register|remove|list|check``, ``arena new-bot``
and ``arena proto``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer

from arena.check import CONNECT_TIMEOUT, check_bot, settings_from_args
from arena.cli.common import DbOption, console, open_store
from arena.starter.new_bot import LANGS, npm_install, write_bot
from arena.tournament.lineup import check_name
from arena.tournament.settings import DEFAULTS


def proto() -> None:
    """Print the path of the protocol's .proto file (installed with the arena), to
    generate a bot's client from it in any language."""
    from arena.wire.proto_gen import INSTALLED_PROTO

    print(INSTALLED_PROTO)


def bot_register(name: str,
                 rotate: bool = typer.Option(False, "--rotate", help="If NAME is registered, issue a new token "
                                             "(the old one stops working); else register it. Safe to re-run."),
                 db: str | None = DbOption) -> None:
    """Register a bot and print its token on the last line (shown once; only a hash is
    stored). A name already registered is refused unless --rotate."""
    check_name(name)
    store = open_store(db, must_exist=False)
    had_token = any(bot.name == name and bot.has_token for bot in store.list_bots())
    token = store.register_bot(name, rotate=rotate)
    if had_token:
        console.print(f"New token for bot [bold]{name}[/]; the old one no longer works. Its token (shown only now):")
    else:
        console.print(f"Registered bot [bold]{name}[/]. Its token (shown only now):")
    print(token)


def bot_remove(name: str, db: str | None = DbOption) -> None:
    """Take a bot's token away: it can no longer connect, and a running arena ends its
    streams within a second. Its matches and ratings stay; --rotate on register gives
    it a new token."""
    open_store(db, must_exist=True).remove_bot(name)
    console.print(f"Removed bot [bold]{name}[/]'s token; it can no longer connect.", highlight=False)


def bot_list(db: str | None = DbOption) -> None:
    """List registered bots."""
    from rich.table import Table

    table = Table("bot", "registered", "has token")
    for b in open_store(db, must_exist=True).list_bots():
        table.add_row(b.name, str(b.created_at)[:19], "yes" if b.has_token else "no (local)")
    console.print(table)


def bot_check(
    command: str = typer.Argument(..., metavar="COMMAND", help="The command that starts the bot, as one string: "
                                  "'./my_bot.py', 'python3 my_bot.py', 'node bot.js' (read as --bot reads it)."),
    variant: str | None = typer.Option(None, help="Check only this variant: classic or extreme [default: every "
                                       "variant the bot's Hello names]", show_default=False),
    move_time: float = typer.Option(DEFAULTS.move_time, help="Seconds per decision, as in a tournament."),
    time_bank: float = typer.Option(DEFAULTS.time_bank, help="Extra seconds per match, as in a tournament."),
    seed: int | None = typer.Option(None, help="Seed of the deals, seats and opponents [default: a fresh one, "
                                    "printed]", show_default=False),
    name: str | None = typer.Option(None, help="The bot name it plays under [default: from the command, e.g. "
                                    "my_bot]", show_default=False),
    connect_timeout: float = typer.Option(CONNECT_TIMEOUT, help="Seconds the bot has to start and say Hello."),
    sandbox: str = typer.Option("auto", help="auto: confined with bubblewrap where it works, as in a tournament; "
                                "bwrap: confined or refuse; none: unconfined"),
    bot_env: list[str] = typer.Option([], "--bot-env", metavar="NAME=VALUE", help="A variable the bot gets "
                                      "(repeatable), as `arena tournament --bot-env` gives it; a confined "
                                      "bot's environment is otherwise only the ARENA_ variables, PATH, HOME "
                                      "and LANG", show_default=False),
) -> None:
    """Validate a bot before a tournament: start it, play short matches against the sample
    bots in every variant it plays, and report its faults and time per decision. Exit
    code 1 on any fault; nothing is stored."""
    settings = settings_from_args(command, name=name, variant=variant, move_time=move_time, time_bank=time_bank,
                                  seed=seed, connect_timeout=connect_timeout, sandbox=sandbox,
                                  bot_env=bot_env)
    report = check_bot(settings, out=lambda line: print(line, flush=True))  # print: fault texts may hold [brackets]
    if not report.passed:
        raise typer.Exit(1)


def new_bot(
    name: str = typer.Argument(..., metavar="NAME", help="The bot's name (1-40 letters, digits, '-', '_' or '.')."),
    lang: str = typer.Option(LANGS[0], help=" or ".join(LANGS)),
    folder: Path | None = typer.Option(None, "--dir", help="The folder to write the bot in; it may exist if "
                                       "empty [default: ./NAME]", show_default=False),
) -> None:
    """Write a starter bot that plays every decision legally and passes `arena bot check`:
    fill in its logic where the comments say."""
    bot = write_bot(name, lang, folder if folder is not None else Path(name))
    print(f"wrote {', '.join(str(path) for path in bot.files)}")   # print: a path may hold [brackets]
    if lang == "node":
        failed, message = npm_install(bot.folder)
        print(message, file=sys.stderr if failed else sys.stdout)
        if failed:
            raise typer.Exit(1)
    print(f"check it:  arena bot check {shlex.quote(str(bot.script))}")
    print(f"enter it:  arena tournament --bot {shlex.quote(f'{name}={bot.script}')}")
