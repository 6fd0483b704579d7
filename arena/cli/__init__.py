"""The ``arena`` command line (typer): the commands are in :mod:`arena.cli.app`."""

from arena.cli.app import app, main

__all__ = ["app", "main"]
