"""Builders the tests share: plain functions and classes, no fixtures (those are in
conftest.py), one module for each kind of thing they make. Every test module imports what
it needs from here (``from factories.records import played``: tests/ is on sys.path under
pytest, through tests/conftest.py), never from another test module.

* ``records``: real engine games as the referee records them, hand-made records;
* ``databases``: a store turned into what an older arena wrote, PostgreSQL wiped;
* ``bots``: the sample bots as processes, and whether bots can run confined here;
* ``network``: a network that drops a bot's connections;
* ``tournaments``: a running tournament written straight into a store;
* ``live``: a tournament slow enough to watch, and the truth to hold a live view against;
* ``web_server``: `arena web` as its own process, read over HTTP;
* ``commands``: one `arena` command as its own process (``forked_arena``: forked from the test
  process once it has imported the command line, for the many short ones);
* ``browser_site``: the browser tests' site.

This package holds the checkout's paths, ``ROOT`` and ``TEST_BOTS``. Import-light like
conftest.py: nothing from the store, SQLAlchemy or grpc at import time.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent   # the checkout
TEST_BOTS = ROOT / "tests" / "bots"                     # the test bot programs (bots.harness's BOTS_DIR)
