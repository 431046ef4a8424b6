"""An incremental reader of one JSON document of the form ``{"key": value, …, "<array key>": [elements]}``
(the TypeScript CLI's ``{session, items}`` file): it gives each top-level member's value and each element
of the named array as raw bytes, as soon as it ends, without ever holding the whole document.

Why not a JSON parser: ``orjson.loads`` of the whole document holds it (and its objects) at once, 1.2 GB
for a 300 MB file, and Python's ``json`` recurses (a deeply nested value raised ``RecursionError``). This
scanner only tracks nesting depth and string state with a counter (no recursion, whatever the depth),
so each piece it gives is decoded on its own by the caller (one bad element costs one element), and a
piece longer than ``cap`` is skipped in bounded memory (its length is still told). A document cut short
(or followed by other bytes) gives what it held plus one :class:`Damage`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from transcript_reader.reading.source import READ_BUFFER, Skipped

# outside strings: the bytes that change the structure
_STRUCT = re.compile(rb'[\[\]{}",:]')
# inside a string: the rest of it up to and including its closing quote, escapes stepped over
_STR_REST = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.S)
_STR_STOP = re.compile(rb'["\\]')
_WS = b" \t\r\n"


@dataclass(slots=True)
class Member:
    """A top-level member (``index`` None), or element ``index`` (1-based) of the streamed array."""

    key: str
    index: int | None
    value: bytes | Skipped


@dataclass(slots=True)
class ArrayStart:
    """The streamed array opened (its elements follow as :class:`Member`)."""

    key: str


@dataclass(slots=True)
class Damage:
    """What kept the rest of the document from being read (the document ends early, other bytes follow
    it, it is not an object); always the last event."""

    reason: str


Event = Member | ArrayStart | Damage


class _Capture:
    """The bytes of the value being read, kept up to ``cap``; past it only counted."""

    __slots__ = ("parts", "length", "cap")

    def __init__(self, cap: int) -> None:
        self.parts: list[bytes] = []
        self.length = 0
        self.cap = cap

    def add(self, data: bytes) -> None:
        self.length += len(data)
        if self.length > self.cap:
            self.parts = []
        else:
            self.parts.append(data)

    def value(self) -> bytes | Skipped:
        if self.length > self.cap:
            n = self.length
            return Skipped(f"value of {n} bytes is longer than the {self.cap}-byte cap: skipped, not decoded", n)
        return b"".join(self.parts).strip(_WS)


def scan_document(fh: IO[bytes], array_key: str, *, cap: int, limit: int | None = None) -> Iterator[Event]:
    """The events of the document read from ``fh``: top-level members and the elements of the member
    ``array_key`` (when its value is an array), in order. ``limit`` stops reading after that many bytes
    (sniffing: the events so far are all there is)."""
    depth = 0
    in_str = False
    esc = False
    key_parts: list[bytes] | None = None  # the top-level key being read
    key = ""
    expect_key = False
    cap_: _Capture | None = None  # the value being captured
    cap_start = 0
    in_array = False
    index = 0
    done = False
    opened = False
    read = 0
    while True:
        if limit is not None and read >= limit:
            return
        chunk = fh.read(READ_BUFFER if limit is None else min(READ_BUFFER, limit - read))
        if not chunk:
            break
        read += len(chunk)
        pos = 0
        end = len(chunk)
        if done:
            if chunk.strip(_WS):
                yield Damage("other bytes follow the end of the JSON document")
                return
            continue
        cap_start = 0
        while pos < end:
            if in_str:
                if esc:
                    esc = False
                    pos += 1
                    continue
                m = _STR_REST.match(chunk, pos)
                if m is not None:
                    if key_parts is not None:
                        key_parts.append(chunk[pos:m.end() - 1])
                        key = b"".join(key_parts).decode("utf-8", "replace")
                        key_parts = None
                    pos = m.end()
                    in_str = False
                    continue
                # the string goes on past this chunk: find whether the chunk ends inside an escape
                p = pos
                while True:
                    s = _STR_STOP.search(chunk, p)
                    if s is None:
                        break
                    p = s.end() + 1  # a backslash: step over the escaped byte
                if p > end:
                    esc = True
                if key_parts is not None:
                    key_parts.append(chunk[pos:end])
                pos = end
                continue
            m = _STRUCT.search(chunk, pos)
            if m is None:
                break
            c = chunk[m.start()]
            pos = m.end()
            if c == 0x22:  # "
                in_str = True
                if depth == 1 and expect_key and cap_ is None:
                    key_parts = []
                continue
            if c == 0x3A:  # :
                if depth == 1 and cap_ is None:
                    expect_key = False
                    cap_ = _Capture(cap)
                    cap_start = pos
                continue
            if c == 0x2C:  # ,
                if depth == 2 and in_array and cap_ is not None:
                    cap_.add(chunk[cap_start:m.start()])
                    index += 1
                    yield Member(key, index, cap_.value())
                    cap_ = _Capture(cap)
                    cap_start = pos
                elif depth == 1:
                    if cap_ is not None:
                        cap_.add(chunk[cap_start:m.start()])
                        yield Member(key, None, cap_.value())
                        cap_ = None
                    expect_key = True
                continue
            if c == 0x7B or c == 0x5B:  # { [
                depth += 1
                if depth == 1:
                    if c != 0x7B:
                        yield Damage("the document is not a JSON object")
                        return
                    expect_key = True
                    opened = True
                elif depth == 2 and key == array_key and c == 0x5B and cap_ is not None \
                        and not chunk[cap_start:m.start()].strip(_WS) and not b"".join(cap_.parts).strip(_WS):
                    in_array = True
                    yield ArrayStart(key)
                    cap_ = _Capture(cap)
                    cap_start = pos
                continue
            # } ]
            if depth == 2 and in_array:
                if cap_ is not None:
                    cap_.add(chunk[cap_start:m.start()])
                    v = cap_.value()
                    if v.__class__ is Skipped or v:
                        index += 1
                        yield Member(key, index, v)
                in_array = False
                cap_ = None
                # the array's value is over: the member ends at the next , or }
                depth -= 1
                continue
            if depth == 1:
                if cap_ is not None:
                    cap_.add(chunk[cap_start:m.start()])
                    v = cap_.value()
                    if v.__class__ is Skipped or v:
                        yield Member(key, None, v)
                    cap_ = None
                depth = 0
                done = True
                if chunk[pos:].strip(_WS):
                    yield Damage("other bytes follow the end of the JSON document")
                    return
                break
            if depth > 0:
                depth -= 1
        if cap_ is not None and not done:
            cap_.add(chunk[cap_start:])
    if not done:
        if read == 0 or not opened:
            yield Damage("the document is empty" if read == 0 else "the document is not a JSON object")
        elif in_array:
            yield Damage(f"the JSON document ends early (inside element {index + 1} of {array_key!r})")
        else:
            yield Damage("the JSON document ends early")
