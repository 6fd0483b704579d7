"""The contract: the generated code and the installed copy of ``proto/`` are up to date.

Needs ``grpc_tools`` (a test dependency): without it these tests fail, they do not skip.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena.wire import proto_gen


def test_the_generated_code_and_the_installed_copy_match_proto() -> None:
    # After editing proto/, run `python -m arena.wire.proto_gen`.
    assert proto_gen.is_up_to_date(), "arena/wire/pb/ is out of date: run `python -m arena.wire.proto_gen`"
    assert proto_gen.INSTALLED_PROTO.read_text() == (proto_gen.PROTO_DIR / proto_gen.PROTOS[0]).read_text()


def test_an_edit_to_proto_makes_the_generated_code_out_of_date(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The check above must be able to fail: a contract with one more message is not
    # what arena/wire/pb/ holds.
    edited = tmp_path / "proto"
    shutil.copytree(proto_gen.PROTO_DIR, edited)
    contract = edited / proto_gen.PROTOS[0]
    contract.write_text(contract.read_text() + "\nmessage NotYetGenerated { string field = 1; }\n")
    monkeypatch.setattr(proto_gen, "PROTO_DIR", edited)
    assert not proto_gen.is_up_to_date()
