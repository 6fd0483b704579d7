"""The ``arena`` command line (typer): the app and ``main`` are in :mod:`arena.cli.app`,
the commands in the modules beside it, by topic."""

from arena.wire.grpc_io import use_measured_io

use_measured_io()   # before anything imports grpc (arena.wire.grpc_io says why)

from arena.cli.app import app, main  # noqa: E402

__all__ = ["app", "main"]
