"""Text a bot chose, made safe to keep and to show: :func:`clean`, and :class:`MessageCleaner`
for every string of a protobuf message.

A bot writes free text (``Hello.version``, ``Action.bot_error``) that the arena stores
with its matches and shows in a terminal (``arena show``), in logs and on web pages. A
hostile bot could put terminal commands in it: ``ESC ] 0 ; title BEL`` retitles the
organiser's window, ``ESC [ 2 J`` clears the screen, a C1 control such as ``\\x9b`` does
the same on terminals that read 8-bit controls, and a bidi override (U+202E) turns the
rest of a line around. :func:`clean` keeps printable characters (``str.isprintable``:
letters, marks, numbers, punctuation, symbols and the space) and replaces everything
else, so that no character of a bot's text ever acts on a screen:

* every whitespace character (tab, newline, no-break space...) becomes a space, so the
  text stays one line;
* an escape sequence (``ESC`` with what follows it: a CSI command such as ``ESC [ 31 m``,
  or an OSC, DCS, SOS, PM or APC string up to its BEL or ST), and every other control or
  format character (C0, DEL, C1, bidi controls, zero-width characters, private-use and
  unassigned code points), becomes U+FFFD, the replacement character
  ``\N{REPLACEMENT CHARACTER}`` (a run of them, one).

A replacement is never a character of any protocol value (a bid, a card code, a colour),
so cleaning never turns a malformed answer into a well-formed one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

REPLACEMENT = "\N{REPLACEMENT CHARACTER}"
ELLIPSIS = "…"

# ECMA-48's escape sequences, in 7-bit (ESC ...) and 8-bit (C1) form; each becomes one
# REPLACEMENT. A control string (OSC, DCS, SOS, PM, APC) runs to its BEL or ST, or to the
# end of the text when it has none; a CSI to its final byte; any other ESC takes its
# intermediate bytes and one final byte (ESC 7, ESC ( B), or stands alone.
_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)

_REPLACEMENTS = re.compile(REPLACEMENT + "{2,}")


def _char(c: str) -> str:
    if c.isprintable():
        return c
    return " " if c.isspace() else REPLACEMENT


def clean(text: str, limit: int | None = None) -> str:
    """``text`` with nothing that acts on a terminal or turns text around: printable
    characters kept, whitespace made spaces, escape sequences and other control or format
    characters replaced by U+FFFD (a run of them by one); longer than ``limit``
    characters, cut to ``limit`` with "…" last.

    >>> clean("v1.0\\x1b]0;pwned\\x07 \\x1b[2Jbuild\\t7\\x9b2J")
    'v1.0\\ufffd \\ufffdbuild 7\\ufffd'
    >>> clean("left\\u202etfel"), clean("ünïcödé ♠ 🃏")
    ('left\\ufffdtfel', 'ünïcödé ♠ 🃏')
    >>> clean("x" * 10, limit=5)
    'xxxx…'
    """
    if not text.isprintable():
        text = _REPLACEMENTS.sub(REPLACEMENT, "".join(_char(c) for c in _SEQUENCE.sub(REPLACEMENT, text)))
    if limit is not None and len(text) > limit:
        return text[:limit - 1] + ELLIPSIS
    return text


@dataclass(frozen=True)
class _Fields:
    """Where a message type holds strings, found once from its descriptor."""

    strings: tuple[tuple[str, int, bool], ...]        # name, limit, repeated
    messages: tuple[tuple[str, bool], ...]            # name, repeated (outside any oneof)
    oneofs: tuple[tuple[str, frozenset[str]], ...]    # a oneof's name, its message fields
    maps: tuple[tuple[str, int, bool, int], ...]      # name, limit, string keys, value type


class MessageCleaner:
    """Cleans every string a protobuf message holds, in place, at any depth: singular and
    repeated string fields, the keys and values of maps, and the fields of nested
    messages, found from the descriptors (a field added to the contract later is covered
    without a word here). ``limits`` caps a field by its full name
    (``"wizard_arena.v1.Action.bot_error"``), ``default_limit`` every other string.

    Where each type holds its strings is worked out once; then a message whose text is
    all printable costs a read and an ``isprintable`` per string, and a look at each
    nested message that is set (the referee reads every answer through this).

    >>> from google.protobuf import struct_pb2
    >>> value = struct_pb2.Struct(fields={"a\\x1b[2J": struct_pb2.Value(string_value="b\\x07")})
    >>> MessageCleaner({}, 100).clean(value)
    >>> dict(value.fields)["a\\ufffd"].string_value
    'b\\ufffd'
    """

    def __init__(self, limits: Mapping[str, int], default_limit: int) -> None:
        self.limits = dict(limits)
        self.default_limit = default_limit
        self._fields: dict[type[Message], _Fields] = {}   # by message class: a descriptor is a new object each time

    def clean(self, message: Message) -> None:
        """Clean ``message``'s strings in place."""
        fields = self._fields.get(type(message)) or self._find(message)
        for name, limit, repeated in fields.strings:
            value = getattr(message, name)
            if not value:
                continue
            if repeated:
                for i, item in enumerate(value):
                    if not item.isprintable() or len(item) > limit:
                        value[i] = clean(item, limit)
            elif not value.isprintable() or len(value) > limit:
                setattr(message, name, clean(value, limit))
        for oneof, members in fields.oneofs:
            if (chosen := message.WhichOneof(oneof)) in members:
                self.clean(getattr(message, chosen))
        for name, repeated in fields.messages:
            if repeated:
                for item in getattr(message, name):
                    self.clean(item)
            elif message.HasField(name):
                self.clean(getattr(message, name))
        for name, limit, text_keys, value_type in fields.maps:
            if entries := getattr(message, name):
                self._clean_map(entries, limit, text_keys, value_type)

    def _clean_map(self, entries: Any, limit: int, text_keys: bool, value_type: int) -> None:
        if value_type == FieldDescriptor.TYPE_MESSAGE:
            for item in entries.values():
                self.clean(item)
        for key in list(entries):
            new_key = clean(key, limit) if text_keys else key
            item = entries[key]
            if value_type == FieldDescriptor.TYPE_STRING:
                if (new_item := clean(item, limit)) is not item or new_key is not key:
                    del entries[key]
                    entries[new_key] = new_item
            elif new_key is not key:   # a message (cleaned above) or a number, under a new key
                if value_type == FieldDescriptor.TYPE_MESSAGE:
                    kept = type(item)()
                    kept.CopyFrom(item)
                    del entries[key]
                    entries[new_key].MergeFrom(kept)
                else:
                    del entries[key]
                    entries[new_key] = item

    def _find(self, message: Message) -> _Fields:
        descriptor = message.DESCRIPTOR
        strings: list[tuple[str, int, bool]] = []
        messages: list[tuple[str, bool]] = []
        maps: list[tuple[str, int, bool, int]] = []
        oneofs: dict[str, set[str]] = {}
        for field in descriptor.fields:
            limit = self.limits.get(field.full_name, self.default_limit)
            if field.type == FieldDescriptor.TYPE_STRING:
                strings.append((field.name, limit, field.is_repeated))
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                entry = field.message_type
                if entry.GetOptions().map_entry:
                    key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
                    if key.type == FieldDescriptor.TYPE_STRING or value.type in (FieldDescriptor.TYPE_STRING,
                                                                                 FieldDescriptor.TYPE_MESSAGE):
                        maps.append((field.name, limit, key.type == FieldDescriptor.TYPE_STRING, value.type))
                elif field.containing_oneof is not None:
                    oneofs.setdefault(field.containing_oneof.name, set()).add(field.name)
                else:
                    messages.append((field.name, field.is_repeated))
        found = self._fields[type(message)] = _Fields(tuple(strings), tuple(messages),
                                                   tuple((name, frozenset(names)) for name, names in oneofs.items()),
                                                   tuple(maps))
        return found
