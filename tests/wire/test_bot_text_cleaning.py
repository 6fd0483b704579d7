"""A bot's text, made safe to keep and show (arena/wire/bot_text.py), and the one place the
arena takes a bot's message in (protocol.bot_message_from_wire): every string field of
``Hello`` and ``Action``, found from the descriptors, comes out printable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from arena.wire import bot_text, protocol
from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import Decision

STRING, MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
R = bot_text.REPLACEMENT

# What a hostile bot writes to act on the organiser's terminal or to turn a line around.
ATTACKS = {
    "OSC window title, BEL": "\x1b]0;pwned\x07",
    "OSC, ST": "\x1b]8;;http://x\x1b\\link",
    "CSI clear screen": "\x1b[2J",
    "CSI colour": "\x1b[1;31m",
    "ESC save cursor": "\x1b7",
    "DCS": "\x1bP+q544e\x1b\\",
    "APC": "\x1b_hidden\x9c",
    "C1 CSI": "\x9b2J",
    "C1 OSC": "\x9d0;pwned\x9c",
    "C1 NEL": "\x85",
    "NUL, BS, CR, DEL": "\x00\x08\r\x7f",
    "bidi override": "\u202e",
    "bidi isolate": "\u2066\u2069",
    "zero width, BOM": "\u200b\ufeff",
    "line separator": "\u2028",
    "private use": "\ue000",
    "lone ESC": "\x1b",
}
PAYLOAD = "a" + "".join(ATTACKS.values()) + "z"


def printable(text: str) -> bool:
    return text.isprintable()


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=list(ATTACKS))
def test_no_attack_survives_cleaning(attack: str) -> None:
    for text in (attack, f"v1 {attack} v2", attack * 3):
        assert printable(bot_text.clean(text)), ascii(bot_text.clean(text))


def test_sequences_go_whole_and_text_around_them_stays() -> None:
    assert bot_text.clean("v\x1b]0;pwned\x07 2\x1b[2J.1") == f"v{R} 2{R}.1"
    assert bot_text.clean("\x1b]0;title\x1b\\after") == f"{R}after"
    assert bot_text.clean("\x9b31mred") == f"{R}red"
    assert bot_text.clean("x\u202edesrever") == f"x{R}desrever"
    assert bot_text.clean("one\ntwo\tthree\u00a0four") == "one two three four"
    assert bot_text.clean("1.0\x1b[2J\x1b[H\x9b31m\u202e!") == f"1.0{R}!"


def test_printable_text_is_kept_as_it_is() -> None:
    for text in ("1.2.3-rc1+build", "ünïcödé ♠♥ 🃏 漢字", "[bold]x[/bold] <b>&amp;", ""):
        assert bot_text.clean(text) is text


def test_length_is_capped_after_cleaning() -> None:
    assert bot_text.clean("x" * 300, 200) == "x" * 199 + "…"
    assert bot_text.clean("\x1b[2J" * 100 + "abc", 10) == f"{R}abc"   # a run of replacements is one
    assert bot_text.clean("\x1b[2Jx" * 100, 10) == f"{R}x" * 4 + f"{R}…"
    assert bot_text.clean("x" * 200, 200) == "x" * 200


def test_a_bot_error_is_one_short_line_of_printable_text() -> None:
    message = pb.BotMessage(action=pb.Action(bot_error="bid raised ValueError: x\n  File \"bot.py\"\x1b[31m"))
    assert protocol.bot_message_from_wire(message).action.bot_error == f'bid raised ValueError: x   File "bot.py"{R}'
    long = pb.BotMessage(action=pb.Action(bot_error="y" * 5000))
    assert len(protocol.bot_message_from_wire(long).action.bot_error) == protocol.BOT_ERROR_CHARS


# ------------------------------------------------------------------ every string field


Path = tuple[FieldDescriptor, ...]


def string_paths(descriptor: Descriptor, seen: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Every way down from ``descriptor`` to a string: a string field (singular or
    repeated), a map's string key or value, or any of these in a nested message."""
    if descriptor.full_name in seen:   # a recursive message: its strings were listed once
        return
    seen = seen | {descriptor.full_name}
    for field in descriptor.fields:
        if field.type == STRING:
            yield (field,)
        elif field.type == MESSAGE:
            for rest in string_paths(field.message_type, seen):
                yield (field, *rest)


def filled(message: Message, path: Path, text: str) -> None:
    """Set the string at the end of ``path`` to ``text`` (twice for a repeated field), making
    what leads there: a nested message, an entry of a repeated message, a map entry."""
    field, rest = path[0], path[1:]
    if field.type == STRING:
        if field.is_repeated:
            getattr(message, field.name).extend([text, text])
        else:
            setattr(message, field.name, text)
        return
    container = getattr(message, field.name)
    if field.message_type.GetOptions().map_entry:
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        key_text = text if rest[0] is key else "k"
        if value.type == MESSAGE:
            entry = container[key_text]
            if rest[0] is value:
                filled(entry, rest[1:], text)
            else:
                entry.SetInParent()
        else:
            container[key_text] = text if rest[0] is value else value.default_value
        return
    filled(container.add() if field.is_repeated else container, rest, text)


def strings_in(message: Message) -> Iterator[str]:
    """Every string ``message`` holds, at any depth (map keys and values included)."""
    for field, value in message.ListFields():
        if field.type == STRING:
            yield from (value if field.is_repeated else [value])
        elif field.type == MESSAGE:
            if field.message_type.GetOptions().map_entry:
                for key, item in value.items():
                    if isinstance(key, str):
                        yield key
                    if isinstance(item, str):
                        yield item
                    elif isinstance(item, Message):
                        yield from strings_in(item)
            else:
                for item in (value if field.is_repeated else [value]):
                    yield from strings_in(item)


def name(path: Path) -> str:
    return ".".join(f.name for f in path)


HELLO_PATHS = list(string_paths(pb.Hello.DESCRIPTOR))
ACTION_PATHS = list(string_paths(pb.Action.DESCRIPTOR))


def test_the_walk_finds_the_strings_the_contract_has_today() -> None:
    """The fields a bot writes text into today; a field added later is walked without
    a change here (and this list says it was found)."""
    found = {name(p) for p in HELLO_PATHS} | {name(p) for p in ACTION_PATHS}
    assert {"name", "version", "variants", "option", "bot_error", "prediction.tokens.key",
            "prediction.take_from.colour"} <= found


@pytest.mark.parametrize("which, path", [("hello", p) for p in HELLO_PATHS] + [("action", p) for p in ACTION_PATHS],
                         ids=[f"Hello.{name(p)}" for p in HELLO_PATHS] + [f"Action.{name(p)}" for p in ACTION_PATHS])
def test_every_string_a_bot_sends_is_kept_printable(which: str, path: Path) -> None:
    message = pb.BotMessage()
    inner = getattr(message, which)
    filled(inner, path, PAYLOAD)
    raw = list(strings_in(message))
    assert any(not printable(text) for text in raw), f"the test filled no string at {name(path)}"
    kept = protocol.bot_message_from_wire(message)
    assert kept.WhichOneof("msg") == which
    texts = list(strings_in(kept))
    assert texts and all(printable(text) for text in texts), [ascii(t) for t in texts]
    assert all(text.startswith("a") for text in texts if text not in ("k", ""))   # the text before stays


@pytest.mark.parametrize("option", ["3\x1b", "\x1b3", "3\u202e", "b7\x07", "b\x1b7", "\x9b3", "red\x00", "3\t"])
def test_a_malformed_answer_stays_malformed_after_cleaning(option: str) -> None:
    kept = protocol.bot_message_from_wire(pb.BotMessage(action=pb.Action(request_id=1, option=option)))
    for decision in (Decision(seat=0, kind="bid", options=(3,)), Decision(seat=0, kind="play", options=("b7",)),
                     Decision(seat=0, kind="trump", options=("red",))):
        with pytest.raises(protocol.Malformed) as refused:
            protocol.parse_answer(kept.action, decision, "classic")
        assert printable(str(refused.value))   # the fault's message: what the store and the bot get


def test_a_malformed_prediction_says_so_in_printable_text() -> None:
    prediction = pb.Prediction(tokens={"red\x1b]0;x\x07": 1}, take_from=[pb.TakeFrom(colour="\x9b2J", seat=1)])
    kept = protocol.bot_message_from_wire(pb.BotMessage(action=pb.Action(request_id=1, prediction=prediction)))
    with pytest.raises(protocol.Malformed) as refused:
        protocol.parse_answer(kept.action, Decision(seat=0, kind="predict", options=None), "extreme")
    assert printable(str(refused.value))


def test_honest_messages_come_through_unchanged() -> None:
    hello = pb.BotMessage(hello=pb.Hello(name="ann", version="2.0 ♠", variants=["classic"], max_matches=4))
    action = pb.BotMessage(action=pb.Action(request_id=9, prediction=pb.Prediction(
        tokens={"red": 2}, take_from=[pb.TakeFrom(colour="red", seat=1)])))
    for message in (hello, action):
        before = message.SerializeToString()
        assert protocol.bot_message_from_wire(message).SerializeToString() == before
