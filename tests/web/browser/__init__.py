"""Real-browser tests of `arena web` (a package, so its conftest.py does not clash with tests/conftest.py)."""
