"""A bot that plays like the random sample bot and, before it connects, tries to read
every path named in ``SNOOP_PATHS_<its name>`` (``:``-separated; relative paths are
relative to this file's folder) and to import ``SNOOP_IMPORT_<its name>`` (a module
beside it), then prints one
line per try: ``SNOOP READ path`` or ``SNOOP DENIED path (why)``, ``SNOOP IMPORTED
name`` or ``SNOOP NO-IMPORT name``. Self-contained (the SDK only): it is run as a lone
file in a shared folder too.
"""

import importlib
import os
import sys
from pathlib import Path

from arena.sdk import run
from sample_bots.random_bot import RandomBot

HERE = Path(__file__).parent


def snoop() -> None:
    name = os.environ.get("ARENA_BOT_NAME", "")
    for text in filter(None, os.environ.get(f"SNOOP_PATHS_{name}", "").split(":")):
        path = HERE / text
        try:
            data = path.read_bytes() if path.is_file() else "\n".join(os.listdir(path)).encode()
        except OSError as error:
            print(f"SNOOP DENIED {text} ({error.strerror})", flush=True)
            continue
        print(f"SNOOP READ {text} ({len(data)} bytes)", flush=True)
    module = os.environ.get(f"SNOOP_IMPORT_{name}")
    if module:
        sys.path.insert(0, str(HERE))
        try:
            importlib.import_module(module)
            print(f"SNOOP IMPORTED {module}", flush=True)
        except ImportError:
            print(f"SNOOP NO-IMPORT {module}", flush=True)


class SnoopBot(RandomBot):
    name = "snoop"


if __name__ == "__main__":
    snoop()
    if "--model" in sys.argv:       # a data path it was given: read above, not an SDK option
        at = sys.argv.index("--model")
        del sys.argv[at:at + 2]
    run(SnoopBot)
