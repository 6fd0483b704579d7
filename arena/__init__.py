"""Wizard Arena: the referee, tournaments, ratings, storage, CLI and bot SDK."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("wizard-arena")
except _metadata.PackageNotFoundError:   # a source tree that was never installed
    __version__ = "0.0.0"
