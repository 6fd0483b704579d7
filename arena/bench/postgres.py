"""A throwaway PostgreSQL cluster for benchmarks and tests: ``initdb`` in a temporary
folder, the server on a free port of 127.0.0.1 with trust authentication, stopped and
removed at the end. Debian's package keeps the server's programs off the PATH
(:func:`postgres_bin` finds them), and ``initdb`` refuses root (the cluster then runs as
the ``postgres`` user).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: the PATH's, else Debian's newest
    ``/usr/lib/postgresql/VERSION/bin`` (the package does not put them on the PATH)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        folder = Path(os.path.realpath(found)).parent
        if (folder / "pg_ctl").exists():
            return folder
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda path: [int(part) for part in Path(path).parts[-3].split(".") if part.isdigit()])
    return Path(versions[-1]).parent if versions else None


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Database:
    """Where a run stores: a URL or a SQLite path, and the PostgreSQL server's process id
    when this run started the server (its CPU time is then counted)."""

    location: str
    server_pid: int | None = None


@contextmanager
def throwaway_postgres(fsync: bool = True, max_connections: int = 200) -> Iterator[Database]:
    """Start a PostgreSQL cluster in a temporary folder (trust authentication, 127.0.0.1 on a
    free port), yield an empty database in it, stop and remove it at the end. As root
    (``initdb`` refuses root) the cluster runs as the ``postgres`` user."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb and pg_ctl were not found (apt install postgresql, or give "
                           "--db postgresql://...)")
    folder = Path(tempfile.mkdtemp(prefix="arena-claims-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port, log = folder / "data", free_port(), folder / "postgres.log"

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120)
        if done.returncode:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stderr.strip() or done.stdout.strip()}\n{tail}")

    options = (f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c max_connections={max_connections}"
               + ("" if fsync else " -F"))
    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-U", "arena", "--auth=trust", "-E", "UTF8")
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        try:
            run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "arena", "arena_claims")
            pid = int((data / "postmaster.pid").read_text().split()[0])
            yield Database(f"postgresql://arena@127.0.0.1:{port}/arena_claims", pid)
        finally:
            subprocess.run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                           capture_output=True, timeout=120)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
