"""The contract: the generated code and the installed copy of ``proto/`` are up to date."""

from __future__ import annotations

from arena.wire import proto_gen


def test_the_generated_code_and_the_installed_copy_match_proto() -> None:
    # After editing proto/, run `python -m arena.wire.proto_gen`.
    assert proto_gen.is_up_to_date()
    assert proto_gen.INSTALLED_PROTO.read_text() == (proto_gen.PROTO_DIR / proto_gen.PROTOS[0]).read_text()
