"""Which of gRPC's two I/O paths a process of the arena or of an SDK bot runs on.

grpcio 1.85 moves a message between the socket and Python through its EventEngine: a
thread of gRPC's own pool reads the socket and hands the completion to grpc.aio's
poller thread, which wakes the event loop. With the EventEngine's client and listener
turned off (gRPC's ``GRPC_EXPERIMENTS`` setting) gRPC takes the path it had before,
with one thread fewer on the way, so more decisions a second for less CPU, in the
referee and in the bots alike. ``arena bench referee`` measures it (docs/speed.md,
"gRPC's I/O path", has the current figures and the command).

:func:`use_measured_io` makes that path the default of this process and of the
processes it starts, before gRPC reads the setting (at ``import grpc``):

* only where ``GRPC_EXPERIMENTS`` is not set: an organiser's or a bot author's own
  setting wins, and ``GRPC_EXPERIMENTS=`` (empty) keeps gRPC's default;
* only for the grpcio series it was measured on (:data:`MEASURED_SERIES`): gRPC logs
  an error for every experiment name it no longer knows, and a newer series has not
  been timed;
* only before ``grpc`` is imported: afterwards the process keeps what it has.

The arena's command line and the SDK call it first thing, and the test suite's
conftest, so that the tests run what users run; nothing else needs to.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

# GRPC_EXPERIMENTS: gRPC's comma-separated experiment names, "-" turning one off.
IO_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
# grpcio "major.minor" series the setting was measured on.
MEASURED_SERIES = frozenset({"1.85"})

_VERSION = re.compile(r'__version__\s*=\s*"""(\d+\.\d+)')


def installed_grpc_series() -> str | None:
    """The installed grpcio's "major.minor", read from its version file without importing
    it (importing reads ``GRPC_EXPERIMENTS``); None when it cannot be told."""
    spec = importlib.util.find_spec("grpc")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        text = (Path(next(iter(spec.submodule_search_locations))) / "_grpcio_metadata.py").read_text()
    except OSError:
        return None
    found = _VERSION.search(text)
    return found.group(1) if found else None


def use_measured_io() -> bool:
    """Set ``GRPC_EXPERIMENTS`` to :data:`IO_EXPERIMENTS` where the module docstring's
    three conditions hold; returns whether it did."""
    if "GRPC_EXPERIMENTS" in os.environ or "grpc" in sys.modules:
        return False
    if installed_grpc_series() not in MEASURED_SERIES:
        return False
    os.environ["GRPC_EXPERIMENTS"] = IO_EXPERIMENTS
    return True
