"""What every command shares: the consoles, ``--db``, choices and one-line errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console

from arena.tournament.settings import DEFAULT_DB

if TYPE_CHECKING:    # only for the type: importing the store brings SQLAlchemy
    from arena.store import Store


def make_console(stderr: bool = False) -> Console:
    """A console; when output goes to a file or pipe, 160 columns rather than rich's 80,
    so that tables of ids and bot names are not folded."""
    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=160 if wide else None)


console = make_console()
err_console = make_console(stderr=True)

DbOption = typer.Option(None, "--db", help=f"Database path or URL [env ARENA_DB; default ./{DEFAULT_DB}].",
                        show_default=False)


class CliError(Exception):
    """A problem with what the user asked for; shown as one line, exit code 2."""


def fail(message: str) -> NoReturn:
    raise CliError(message)


def db_location(db: str | None) -> str:
    return db or os.environ.get("ARENA_DB") or DEFAULT_DB


def open_store(db: str | None, *, must_exist: bool) -> Store:
    """The store at ``--db``; for read-only commands a missing file is an error, not a new database."""
    from arena.store import Store

    location = db_location(db)
    path = location.removeprefix("sqlite:///") if location.startswith("sqlite:///") else location
    if must_exist and "://" not in path:
        file = Path(path)
        if not file.exists():
            fail(f"no arena database at {path} (run a tournament first, or pass --db)")
        if file.is_file() and file.stat().st_size == 0:   # SQLite would make it one
            fail(f"{path} is an empty file, not an arena database (run a tournament first, or pass --db)")
    return Store(location)


def check_choice(value: str | None, allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}", param_hint=option)


def check_host(host: str) -> None:
    """Refuse an empty ``--host``: the system would read it as every interface, which must
    be asked for by name (0.0.0.0 or ::)."""
    if not host.strip():
        raise typer.BadParameter("takes the address to listen on: 127.0.0.1 (this machine only), "
                                 "0.0.0.0 or :: (every interface), or a host name (got '')", param_hint="--host")
