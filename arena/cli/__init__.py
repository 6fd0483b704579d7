"""The ``arena`` command line (typer): the app and ``main`` are in :mod:`arena.cli.app`,
the commands in the modules beside it, by topic."""

from arena.cli.app import app, main

__all__ = ["app", "main"]
