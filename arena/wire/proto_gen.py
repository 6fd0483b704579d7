"""Regenerate the Python code for ``proto/`` into ``arena/wire/pb/``, with a copy of the contract.

Run ``python -m arena.wire.proto_gen`` after editing a ``.proto`` file; a test
(``tests/wire/test_proto.py``) fails while the committed code or copy is out of date. The
copy (``arena/wire/pb/wizard_arena/v1/arena.proto``) ships inside the installed package, so
an installed arena can hand the contract to bots in other languages
(:data:`INSTALLED_PROTO`; ``arena proto`` prints its path). grpc_tools writes absolute imports
(``from wizard_arena.v1 import arena_pb2``); we rewrite them to live under
``arena.wire.pb`` so the generated code needs no entry on ``sys.path``.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "proto"
OUT_DIR = Path(__file__).resolve().parent / "pb"
PROTOS = ["wizard_arena/v1/arena.proto"]
# The contract as installed with the package (proto/ itself is not installed).
INSTALLED_PROTO = OUT_DIR / PROTOS[0]


def generate(out_dir: Path) -> list[Path]:
    """Write the generated modules under ``out_dir``; return the files written."""
    from grpc_tools import protoc  # a test/dev dependency only

    out_dir.mkdir(parents=True, exist_ok=True)
    args = ["protoc", f"-I{PROTO_DIR}", f"--python_out={out_dir}", f"--pyi_out={out_dir}",
            f"--grpc_python_out={out_dir}", *PROTOS]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed")
    written = []
    for path in sorted(out_dir.rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        text = re.sub(r"^from wizard_arena\.", "from arena.wire.pb.wizard_arena.", path.read_text(), flags=re.M)
        path.write_text(text)
        written.append(path)
    for proto in PROTOS:
        copy = out_dir / proto
        copy.write_text((PROTO_DIR / proto).read_text())
        written.append(copy)
    for package in {p.parent for p in written} | {out_dir}:
        init = package / "__init__.py"
        while package != out_dir.parent and not init.exists():
            init.write_text("")
            package = package.parent
            init = package / "__init__.py"
    return written


def generated_files(out_dir: Path) -> dict[str, str]:
    # Sources only: bytecode caches (*_pb2.cpython-311.pyc) match the pattern too.
    files = [p for p in out_dir.rglob("*") if p.suffix in (".py", ".pyi", ".proto") and "_pb2" in p.name
             or p.suffix == ".proto"]
    return {str(p.relative_to(out_dir)): p.read_text() for p in sorted(files)}


def is_up_to_date() -> bool:
    """True when ``arena/wire/pb/`` is what :func:`generate` writes from ``proto/`` now."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        return generated_files(Path(tmp)) == generated_files(OUT_DIR)


if __name__ == "__main__":
    generate(OUT_DIR)
    print(f"generated into {OUT_DIR}", file=sys.stderr)
