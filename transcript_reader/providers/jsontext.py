"""A line's JSON when a few of its characters are bad: each bad character costs that character (replaced
with U+FFFD, and said), never the whole line.

Why: orjson refuses a line with one byte that is not UTF-8 (a stray ``\\xff``, overlong UTF-8 such as
``\\xc0\\xaf``, CESU-8 surrogates such as ``\\xed\\xa0\\x80``) or with an escaped lone surrogate
(``"\\ud800"`` not followed by its low half, which a JavaScript writer emits when it cuts a string
between the two halves of an emoji). The line was then unreadable, and a prompt or a command in it was
lost. Each decoder first tries orjson (the fast path, every sound line); only a line orjson refuses comes
here.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

#: The category of the notice a repaired line carries (one per line, with the count of characters).
REPLACED_CHARACTERS = "replaced_characters"
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: orjson's wordings for a line it refuses only for a lone surrogate escape (anything else, such as a
#: number past 1e308 or NaN, stays refused: repairing that would change a value, not a character).
_SURROGATE_ERRORS = ("surrogate",)


class Repaired:
    """A line's value after repair, and how many characters were replaced."""

    __slots__ = ("value", "replaced")

    def __init__(self, value: Any, replaced: int) -> None:
        self.value = value
        self.replaced = replaced

    def notice(self) -> str:
        n = self.replaced
        return (f"{n} character{'s' if n != 1 else ''} of this line could not be read (not UTF-8, or a lone "
                f"UTF-16 surrogate) and {'were' if n != 1 else 'was'} replaced with U+FFFD; the rest of the "
                "line was read")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number is infinity when parsed as double")
    return value


def _scrub(value: Any, count: list[int]) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced; ``count[0]`` counts them."""
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        new, n = _SURROGATE.subn(REPLACEMENT, value)
        count[0] += n
        return new
    if isinstance(value, list):
        return [_scrub(v, count) for v in value]
    if isinstance(value, dict):
        return {_scrub(k, count): _scrub(v, count) for k, v in value.items()}
    return value


#: an escaped UTF-16 surrogate, the only escape a repair can change (a cheap check before a second parse)
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def loads_repaired(raw: bytes | str) -> Repaired | None:
    """The value of a line orjson refused, with its bad characters replaced, or None when the line is not
    JSON for another reason (then it is unreadable, as before). Bytes that are not UTF-8 become one
    U+FFFD each (Python's decoder: a maximal bad subpart is one character); an escaped lone surrogate
    becomes one U+FFFD."""
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", "replace")
        replaced = text.count(REPLACEMENT) - raw.count(REPLACEMENT.encode())
    else:
        text, replaced = raw, 0
    if replaced <= 0 and _ESCAPED_SURROGATE.search(text) is None:
        return None  # nothing to repair (a line cut short, junk): not parsed a second time
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        if not any(w in str(e) for w in _SURROGATE_ERRORS):
            return None
        count = [0]
        try:
            value = _scrub(json.loads(text, parse_constant=_no_constant, parse_float=_finite), count)
        except (ValueError, RecursionError):
            return None
        replaced += count[0]
    if replaced <= 0:
        return None  # orjson refused it and nothing was replaced: not ours to accept
    return Repaired(value, replaced)
