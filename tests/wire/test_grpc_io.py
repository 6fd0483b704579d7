"""gRPC's I/O path (``arena.wire.grpc_io``): chosen before ``import grpc`` in the arena's
command line and the SDK, never over a setting the user made, never after gRPC has read
it. The cases that run gRPC start a fresh interpreter, since gRPC reads
``GRPC_EXPERIMENTS`` once, at its import."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import grpc
import pytest

from arena.wire import grpc_io

# A fresh process: import MODULE, then start a real aio server on 127.0.0.1 port 0 and
# stop it; print what GRPC_EXPERIMENTS then is.
PROBE = """
import asyncio, json, os
import {module}
import grpc
async def serve():
    server = grpc.aio.server()
    server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await server.stop(0)
asyncio.run(serve())
print(json.dumps(os.environ.get("GRPC_EXPERIMENTS")))
"""


def probe(module: str, env_experiments: str | None = None, first: str = "") -> tuple[str | None, str]:
    """(GRPC_EXPERIMENTS after importing ``module`` in a fresh process, its stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    if env_experiments is not None:
        env["GRPC_EXPERIMENTS"] = env_experiments
    code = (f"import {first}\n" if first else "") + PROBE.format(module=module)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_the_series_is_read_without_importing_grpc() -> None:
    assert grpc_io.installed_grpc_series() == ".".join(grpc.__version__.split(".")[:2])


@pytest.mark.skipif(grpc_io.installed_grpc_series() not in grpc_io.MEASURED_SERIES,
                    reason="the installed grpcio series was not measured: gRPC's default stays")
@pytest.mark.parametrize("module", ["arena.sdk", "arena.cli"])
def test_the_sdk_and_the_command_line_choose_the_measured_path(module: str) -> None:
    experiments, stderr = probe(module)
    assert experiments == grpc_io.IO_EXPERIMENTS
    assert "Unknown experiment" not in stderr   # gRPC knows both names


def test_a_setting_of_the_users_own_wins_even_an_empty_one() -> None:
    assert probe("arena.sdk", env_experiments="")[0] == ""
    assert probe("arena.sdk", env_experiments="-event_engine_client")[0] == "-event_engine_client"


def test_nothing_changes_once_grpc_is_imported() -> None:
    # gRPC read the setting at its import: setting it now would only mislead the
    # processes this one starts about what it runs.
    assert probe("arena.sdk", first="grpc")[0] is None


def test_an_unmeasured_series_keeps_grpcs_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRPC_EXPERIMENTS", raising=False)
    monkeypatch.delitem(sys.modules, "grpc")   # as if not imported yet
    monkeypatch.setattr(grpc_io, "installed_grpc_series", lambda: "9.99")
    assert grpc_io.use_measured_io() is False
    assert "GRPC_EXPERIMENTS" not in os.environ
