"""JavaScript string and number text as V8 reads it: escapes (strings and templates), UTF-16
surrogate pairs, and numbers as V8's doubles. Split from ``literals`` (which decodes whole argument
literals with these), so each stays under the module size limit; ``literals`` re-exports
``cook_template_text`` and ``js_number``."""

from __future__ import annotations

import json
import math
import re

__all__ = ["cook_template_text", "js_number"]


class _NotLiteral(Exception):
    """Raised inside the decoders only (this module's and ``literals``'); never escapes them."""


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_LINE_TERMINATORS = "\n\r\u2028\u2029"
_HEX = frozenset("0123456789abcdefABCDEF")

_SURROGATE_RE = re.compile("[\ud800-\udfff]")

#: Beyond this, an integer literal is not exactly a double: V8 rounds it, and so do we.
_EXACT = 2**53


def js_number(value: int | float) -> int | float:
    """A number as V8 holds it: a double. Integral doubles below 1e21 (those ``JSON.stringify`` prints
    without an exponent) are given as ``int``; an integer beyond 2**53 is rounded to its double, as V8
    rounds it; one beyond the double range is infinity (sent as null). Never raises."""
    if isinstance(value, int):
        if -_EXACT <= value <= _EXACT:
            return value
        try:
            value = float(value)
        except OverflowError:
            return math.inf
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _decimal(digits: str) -> int | float:
    """A decimal integer literal's value as a double, without ``int()`` on a long digit string (Python
    refuses more than 4,300 digits; ``float`` reads any length and rounds as V8 does)."""
    if len(digits) <= 15:
        return int(digits)
    return js_number(float(digits))


def _radix(digits: str, base: int) -> int | float:
    return js_number(int(digits, base)) if base in (2, 8, 16) else _decimal(digits)


def _combine_surrogates(s: str) -> str:
    """Join escaped UTF-16 surrogate pairs into one code point, as a JS engine would show them."""
    if _SURROGATE_RE.search(s) is None:
        return s
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if "\ud800" <= c <= "\udbff" and i + 1 < n and "\udc00" <= s[i + 1] <= "\udfff":
            out.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + (ord(s[i + 1]) - 0xDC00)))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _fixed_hex(body: str, i: int, width: int) -> str:
    """The character of a ``\\xHH`` (width 2) or ``\\uHHHH`` (width 4) escape whose digits start at ``i``."""
    h = body[i : i + width]
    if len(h) != width or not all(ch in _HEX for ch in h):
        raise _NotLiteral("bad \\x escape" if width == 2 else "bad \\u escape")
    return chr(int(h, 16))


def _decode_escapes(body: str, template: bool) -> str:
    """Decode the escapes of a string or template body (quotes removed).

    Raises _NotLiteral on an escape JavaScript rejects (``\\x4``, ``\\u{110000}``; in templates also
    legacy octal), since such a script does not parse."""
    if "\\" not in body:
        if template and "\r" in body:
            # Template values normalise CR LF and CR to LF (ECMA-262 TV of TemplateCharacter).
            return body.replace("\r\n", "\n").replace("\r", "\n")
        return body
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        j = body.find("\\", i)
        if j < 0:
            j = n
        chunk = body[i:j]
        if template and "\r" in chunk:
            chunk = chunk.replace("\r\n", "\n").replace("\r", "\n")
        out.append(chunk)
        if j >= n:
            break
        i = j + 1
        if i >= n:
            raise _NotLiteral("dangling backslash")
        c = body[i]
        i += 1
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
        elif c == "x":
            out.append(_fixed_hex(body, i, 2))
            i += 2
        elif c == "u":
            if body[i : i + 1] == "{":
                k = body.find("}", i)
                h = body[i + 1 : k] if k > 0 else ""
                if not h or not all(ch in _HEX for ch in h) or int(h, 16) > 0x10FFFF:
                    raise _NotLiteral("bad \\u{} escape")
                out.append(chr(int(h, 16)))
                i = k + 1
            else:
                out.append(_fixed_hex(body, i, 4))
                i += 4
        elif c == "\r":
            # Line continuation: backslash + CR LF counts as one terminator and adds nothing.
            if body[i : i + 1] == "\n":
                i += 1
        elif c in "\n\u2028\u2029":
            pass
        elif "0" <= c <= "7":
            if c == "0" and not ("0" <= body[i : i + 1] <= "9"):
                out.append("\0")
            elif template:
                raise _NotLiteral("octal escape in template")
            else:
                # Legacy octal escape (sloppy-mode scripts): up to 3 digits, value <= 0o377.
                k = i
                limit = i + (2 if c <= "3" else 1)
                while k < limit and k < n and "0" <= body[k] <= "7":
                    k += 1
                out.append(chr(int(c + body[i:k], 8)))
                i = k
        elif c in "89":
            if template:
                raise _NotLiteral("\\8 or \\9 in template")
            out.append(c)
        else:
            # An unknown escape is the character itself (\q -> q, \" -> ", \$ -> $).
            out.append(c)
    return _combine_surrogates("".join(out))



def cook_template_text(raw: str) -> str | None:
    """The cooked value of a template chunk (text between backticks/``${…}``); None if it has a bad escape."""
    try:
        return _decode_escapes(raw, template=True)
    except _NotLiteral:
        return None


#: An escape JSON does not have (JSON: \" \\ \/ \b \f \n \r \t \uXXXX, same meaning as in JavaScript).
_NON_JSON_ESCAPE = re.compile(r'\\(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4}))')


def _string_body(body: str, template: bool, double: bool = False) -> str:
    """The value of a string body matched by one of the fast patterns (no raw line terminator in a
    quoted string). Escapes JSON also has are decoded by ``json.loads`` (in C). ``double``: the body of
    a double-quoted string, whose every ``"`` is escaped (``\\"``), so it is a JSON string body as it
    stands; a single-quoted body may hold a bare ``"``."""
    if "\\" not in body:
        if template and "\r" in body:
            return body.replace("\r\n", "\n").replace("\r", "\n")
        return body
    if not template and (double or '"' not in body) and _NON_JSON_ESCAPE.search(body) is None:
        try:
            value = json.loads('"' + body + '"')
        except ValueError:
            return _decode_escapes(body, template=False)
        return str(value)
    return _decode_escapes(body, template)
