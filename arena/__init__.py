"""Wizard Arena: the referee, tournaments, ratings, storage, CLI and bot SDK."""

# The one place the version is written: pyproject.toml reads it from here
# ([tool.setuptools.dynamic]). A literal rather than importlib.metadata's lookup, which
# cost every command and every bot process 40-65 ms at start-up.
__version__ = "0.1.0"
