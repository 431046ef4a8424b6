"""JavaScript literal decoding: the argument of a tool call read as a value, by JavaScript's rules.

Why not ``json.loads``: agents write object literals (``{cmd: 'ls', workdir: "/repo",}``), single-quoted
strings, templates and hex numbers; 73,789 of 87,184 recorded ``exec_command`` arguments are not JSON.
This module owns the decoding of argument *source text*, so every backend (tree-sitter,
esprima, the lexer) decodes arguments identically.

Decoded values: strings -> ``str``, integer-valued number literals without a fraction or exponent ->
``int`` (also hex/octal/binary and BigInt), other numbers -> ``float``, ``true``/``false``/``null`` ->
``bool``/``None``, arrays -> ``list``, objects -> ``dict`` (a later duplicate key wins, as in JavaScript).
Anything else (identifiers incl. ``undefined``, shorthand ``{ cmd }``, spread, calls, operators such as
``"a" + b``, interpolated templates) is not a literal: :func:`decode_literal` returns :data:`COMPUTED`.

String values keep JavaScript's UTF-16 semantics where Python can: an escaped surrogate pair
``\\uD83D\\uDE00`` becomes one code point; a lone escaped surrogate stays a lone surrogate character.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

from exec_grammar.js_text import (
    _NON_JSON_ESCAPE,
    _decimal,
    _decode_escapes,
    _NotLiteral,
    _radix,
    _string_body,
    cook_template_text,
    js_number,
)

__all__ = ["COMPUTED", "decode_literal", "decode_string_literal", "cook_template_text", "is_computed"]


class _Computed:
    """Marker for "not a literal": a value that exists only when the script runs."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "COMPUTED"

    def __bool__(self) -> bool:
        return False


COMPUTED: Final = _Computed()


def is_computed(value: Any) -> bool:
    return value is COMPUTED


_WS_RE = re.compile(r"(?:[\s\ufeff]+|//[^\n\r\u2028\u2029]*|/\*[\s\S]*?\*/)*")
_NUMBER_RE = re.compile(
    r"0[xX](?P<hex>[0-9a-fA-F](?:_?[0-9a-fA-F])*)(?P<hn>n?)"
    r"|0[oO](?P<oct>[0-7](?:_?[0-7])*)(?P<on>n?)"
    r"|0[bB](?P<bin>[01](?:_?[01])*)(?P<bn>n?)"
    r"|(?P<legacy>0[0-7]+)(?![\d.eE_n])"
    r"|(?P<dec>(?:(?:0|[1-9](?:_?\d)*)(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?)(?P<dn>n?)"
)
_IDENT_RE = re.compile(r"[A-Za-z_$\u0080-\U0010ffff][\w$\u0080-\U0010ffff]*")
_STRING_RES = {
    "'": re.compile(r"'([^'\\]*+(?:\\[\s\S][^'\\]*+)*+)(')"),
    '"': re.compile(r'"([^"\\]*+(?:\\[\s\S][^"\\]*+)*+)(")'),
    # A template stops at its closing backtick or at its first ``${`` (then it is interpolated).
    "`": re.compile(r"`([^`\\$]*+(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*+)*+)(`|\$\{)"),
}
_NO_RAW_TERMINATOR = re.compile(r"[^\\\n\r]*+(?:\\[\s\S][^\\\n\r]*+)*+")
_KEYWORD_VALUES: dict[str, Any] = {"true": True, "false": False, "null": None}


def decode_string_literal(text: str) -> str | None:
    """Decode one quoted string (``'…'``/``"…"``) or a template without ``${}``; None when it is not one."""
    t = text.strip()
    if len(t) < 2:
        return None
    q = t[0]
    if q not in "'\"`" or t[-1] != q:
        return None
    if q == '"' and (value := _direct(t)) is not _DECLINED:  # JSON (most const-bound patch texts)
        return value
    try:
        value, end = _Reader(t).string(0)
    except _NotLiteral:
        return None
    return value if end == len(t) else None


#: Fast path: translate a literal to JSON and let ``json.loads`` (C) build the value. Strings are matched
#: first (so nothing inside them is touched): double-quoted ones without escapes stay as they are, other
#: strings and plain templates are decoded here and re-emitted as JSON strings; a bare word right after
#: ``{`` or ``,`` and before ``:`` is a key and gets quoted; decimal integers with ``_`` separators lose
#: them. Whatever ``json.loads`` then accepts has the same value under JavaScript's rules (JSON is a
#: subset of JavaScript literals); anything it rejects (trailing commas, identifiers, calls, comments…)
#: goes to the full reader below, which decides.
_FAST_RE = re.compile(
    r'("[^"\\\n\r]*+(?:\\[\s\S][^"\\\n\r]*+)*+")'
    r"|('[^'\\\n\r]*+(?:\\[\s\S][^'\\\n\r]*+)*+')"
    r"|(`[^`\\$]*+(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*+)*+`)"
    r"|(?<=[{,])(\s*)([A-Za-z_$][\w$]*)(?=\s*:)"
    r"|(?<![\w$.])(\d+(?:_\d+)+)(?![\w$.])"
)


def _fast_token(m: re.Match[str]) -> str:
    s = m.group(1)
    if s is not None:
        if "\\" not in s or _NON_JSON_ESCAPE.search(s) is None:
            return s
        return json.dumps(_decode_escapes(s[1:-1], template=False))
    s = m.group(2)
    if s is not None:
        body = s[1:-1]
        if '"' not in body and ("\\" not in body or _NON_JSON_ESCAPE.search(body) is None):
            return '"' + body + '"'
        return json.dumps(_decode_escapes(body, template=False))
    s = m.group(3)
    if s is not None:
        return json.dumps(_string_body(s[1:-1], template=True))
    if m.group(5) is not None:
        return f'{m.group(4)}"{m.group(5)}"'
    return m.group(6).replace("_", "")


def _json_int(digits: str) -> int | float:
    # json.loads hands integers over as text; "-" may lead
    return -_decimal(digits[1:]) if digits[:1] == "-" else _decimal(digits)


def _without_proto(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object literal's own keys: ``__proto__: v`` (named or quoted) sets the prototype in
    JavaScript; it is not a key, and ``JSON.stringify`` does not send it."""
    return {k: v for k, v in pairs if k != "__proto__"}


def _no_constants(name: str) -> Any:
    # json accepts NaN/Infinity; in JavaScript they are identifiers, so not literals.
    raise ValueError(name)


#: Fastest path, for the shape most arguments have (``{cmd: "…", workdir: '…', yield_time_ms: 1000}``):
#: a flat object whose values are strings, decimal integers, booleans or null. One ``fullmatch`` checks
#: the shape, one ``finditer`` yields the pairs (the leftmost match is always the next key, because the
#: values are matched whole). Possessive quantifiers keep both linear.
_FLAT_KEY = r"""[A-Za-z_$][\w$]*+|"[^"\\\n\r]*+"|'[^'\\\n\r]*+'"""
_FLAT_VALUE = (
    r"""("[^"\\\n\r]*+(?:\\[^\n\r][^"\\\n\r]*+)*+"|'[^'\\\n\r]*+(?:\\[^\n\r][^'\\\n\r]*+)*+'"""
    r"""|`[^`\\$]*+(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*+)*+`"""
    r"""|-?(?:0|[1-9](?:_?[0-9])*+)(?![\w$.])|true|false|null)"""
)
_FLAT_PAIR = rf"(?:{_FLAT_KEY})\s*+:\s*+{_FLAT_VALUE}"
_FLAT_RE = re.compile(rf"\{{\s*+(?:{_FLAT_PAIR}\s*+,\s*+)*+(?:{_FLAT_PAIR}\s*+)?\}}")
_FLAT_PAIR_RE = re.compile(rf"({_FLAT_KEY})\s*+:\s*+{_FLAT_VALUE}")
_FLAT_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _flat_object(text: str) -> Any:
    if _FLAT_RE.fullmatch(text) is None:
        return COMPUTED
    out: dict[str, Any] = {}
    for key, value in _FLAT_PAIR_RE.findall(text):
        if key[0] in "'\"":
            key = key[1:-1]
        if key == "__proto__":
            continue  # sets the prototype: not a key (see _without_proto)
        c = value[0]
        if c == '"' or c == "'" or c == "`":
            out[key] = _string_body(value[1:-1], c == "`", c == '"')
        elif value in _FLAT_CONSTANTS:
            out[key] = _FLAT_CONSTANTS[value]
        else:
            out[key] = _decimal(value.replace("_", "").lstrip("-")) * (-1 if value[0] == "-" else 1)
    return out


#: Made once: ``json.loads`` with keyword arguments builds a new decoder on every call.
_JSON = json.JSONDecoder(parse_constant=_no_constants, parse_int=_json_int)
_JSON_PROTO = json.JSONDecoder(parse_constant=_no_constants, parse_int=_decimal, object_pairs_hook=_without_proto)


def _fast_decode(text: str) -> Any:
    """The fast path: a flat object, else the JSON translation; COMPUTED when both decline."""
    if text[:1] == "{":
        try:
            value = _flat_object(text)
        except _NotLiteral:
            return COMPUTED
        if value is not COMPUTED:
            return value
    return _translated(text)


def _translated(text: str) -> Any:
    try:
        decoder = _JSON_PROTO if "__proto__" in text else _JSON
        return decoder.decode(_FAST_RE.sub(_fast_token, text))
    except (ValueError, RecursionError, _NotLiteral):
        return COMPUTED


def decode_literal(text: str) -> Any:
    """Decode an argument's source text as a JavaScript literal, or return :data:`COMPUTED`.

    Total: never raises, for any input text. The shapes most arguments have are read first without
    the general machinery (:func:`_direct`); the value is always the one :func:`_decode_general` gives
    (a property test compares them, types and key order included)."""
    if text[:1] == "{":  # the commonest shape first: {cmd: "…", workdir: '…', timeout_ms: 1000}
        try:
            value = _flat_object(text)
        except _NotLiteral:
            return COMPUTED  # an escape JavaScript rejects: the script does not parse
        if value is not COMPUTED:
            return value
    if text[:1] in _FAST_OPENERS:
        value = _direct(text)
        if value is not _DECLINED:
            return value
        if _SHORTHAND_START.match(text) is not None:
            return COMPUTED  # {cmd, workdir: …}, {...base}: the reader refuses the first member
        m = _TEMPLATE_START.match(text)
        if m is not None and (t := _STRING_RES["`"].match(text, m.end() - 1)) is not None and t.group(2) == "${":
            return COMPUTED  # `…${x}…`, {cmd: `ls ${d}`, …}: the reader refuses the interpolation
    elif text.isidentifier() and text not in _KEYWORD_VALUES:
        return COMPUTED  # a name (``patch``): the reader refuses it at once
    return _decode_general(text, flat_tried=True)


#: Starts the reader refuses whatever follows (tested against it with the other shortcuts): a
#: shorthand, method or spread as the first member; an interpolated template as the first value.
_SHORTHAND_START = re.compile(r"\{\s*+(?:\.\.\.|[A-Za-z_$][\w$]*+\s*+[,}(])")
_TEMPLATE_START = re.compile(r"(?:\{\s*+(?:[A-Za-z_$][\w$]*+|\"[^\"\\\n\r]*+\"|'[^'\\\n\r]*+')\s*+:\s*+)?`")


def _decode_general(text: str, flat_tried: bool = False) -> Any:
    """The full reader's value, with the JSON translation (:func:`_fast_decode`) as its fast path.

    The translation declines whatever the reader refuses (a property test holds them together) except
    nesting beyond :data:`MAX_DEPTH`, and gives the reader's value except that an integral decimal
    (``1.0``, ``1e3``) stays a float where the reader gives an int: its answer, when it has one, is
    the one callers have always had. Either may run first. The translation does, unless the text looks
    computed (:data:`_LOOKS_COMPUTED`: ``{cmd: c}``, ``{cmd, workdir}``, ``{cmd: (await …)…}``, most
    non-flat arguments), which the reader refuses at its first name; then the translation runs only
    for a literal with a decimal in it, or one too deep for the reader."""
    opener = text[:1] in _FAST_OPENERS
    if opener and _LOOKS_COMPUTED.search(text) is None:
        value = _translated(text) if flat_tried else _fast_decode(text)
        if value is not COMPUTED:
            return value
        opener = False  # the translation declined: the reader decides
    r = _Reader(text)
    try:
        value, pos = r.whole()
    except (_TooDeep, RecursionError):
        return _translated(text) if opener else COMPUTED
    except _NotLiteral:
        return COMPUTED
    if pos != len(text):
        return COMPUTED
    if r.decimals and opener:
        fast = _translated(text)
        if fast is not COMPUTED:
            return fast
    return value


#: A name where a value or a key-value pair would be (shorthand, a method, a name or a parenthesis as a
#: value): the text is most likely not a literal. Only an order of work: a string holding such text
#: merely reads more slowly.
_LOOKS_COMPUTED = re.compile(
    r"[{,]\s*+[A-Za-z_$][\w$]*+\s*+[,}(]|:\s*+(?!(?:true|false|null)(?![\w$]))[A-Za-z_$(]"
)
_FAST_OPENERS = frozenset("{[\"'`")


#: :func:`_direct` had nothing to say: the general reader decides.
_DECLINED: Final = object()
#: A whole single-quoted string or template (no ``${``) with no raw line terminator or line continuation
#: in a quoted string: its value is its body's (:func:`_string_body`).
_WHOLE_STRING = {
    "'": re.compile(r"'([^'\\\n\r]*+(?:\\[^\n\r][^'\\\n\r]*+)*+)'"),
    "`": re.compile(r"`([^`\\$]*+(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*+)*+)`"),
}
#: An object or array whose text may be JSON: it opens with a JSON token (agents' ``{cmd: …}`` does not).
_JSON_OPEN = re.compile(r'[\[{][ \t\n\r]*+["\[{\]}\d\-tfn]')
#: What orjson would read otherwise than JavaScript: 16 digits in a row may be an integer beyond 2**53
#: (V8 rounds it; orjson keeps it exact), and ``__proto__`` is not a key (see :func:`_without_proto`).
_NOT_FOR_ORJSON = re.compile(r"\d{16}|__proto__")
#: Nesting the general reader may refuse (json's recursion limit) but orjson (1,024 levels) would accept.
_ORJSON_BRACKETS = 256


def _direct(text: str) -> Any:
    """The value of the commonest argument shapes, read in C where possible, or :data:`_DECLINED`.

    - a JSON string (``"…"``, most patch and command arguments): orjson, which refuses what JSON and
      JavaScript read differently (a lone surrogate escape, a raw control character);
    - a JSON object or array: orjson, unless it may hold an integer beyond 2**53, a ``__proto__`` key
      or deep nesting (:data:`_NOT_FOR_ORJSON`); JSON is a subset of JavaScript's literals, and orjson's
      numbers are then the general reader's (integers exact, decimals correctly rounded doubles);
    - a whole single-quoted string or plain template: its body, decoded once (the general path
      re-encodes it as JSON first)."""
    c = text[:1]
    if c == '"':
        try:
            value = orjson.loads(text)
        except Exception:  # noqa: BLE001 - orjson.JSONDecodeError, or a str orjson cannot encode
            return _DECLINED
        return value if type(value) is str else _DECLINED
    if c == "{" or c == "[":
        if (
            _JSON_OPEN.match(text) is None
            or _NOT_FOR_ORJSON.search(text) is not None
            or text.count("[") + text.count("{") > _ORJSON_BRACKETS
        ):
            return _DECLINED
        try:
            return orjson.loads(text)
        except Exception:  # noqa: BLE001 - not JSON: the general reader decides
            return _DECLINED
    if c == "'" or c == "`":
        m = _WHOLE_STRING[c].fullmatch(text)
        if m is None:
            return _DECLINED
        try:
            return _string_body(m.group(1), c == "`")
        except _NotLiteral:
            return COMPUTED  # an escape JavaScript rejects: the script does not parse
    return _DECLINED


#: Deeper literals are reported as computed rather than risk Python's recursion limit.
MAX_DEPTH = 200


class _TooDeep(_NotLiteral):
    """Nesting beyond :data:`MAX_DEPTH`."""


class _Reader:
    """A recursive-descent reader of one literal; positions are indexes into ``text``. ``decimals`` is
    set once a number with a fraction or an exponent was read."""

    __slots__ = ("text", "decimals")

    def __init__(self, text: str) -> None:
        self.text = text
        self.decimals = False

    def whole(self) -> tuple[Any, int]:
        """The value the text holds, blanks and comments around it skipped, and where the reading
        stopped (``len(text)`` when nothing else follows: then the whole text is that literal)."""
        value, pos = self.value(self.ws(0), 0)
        return value, self.ws(pos)

    def ws(self, pos: int) -> int:
        t = self.text
        if pos < len(t):
            c = t[pos]
            if not (c.isspace() or c == "/" or c == "\ufeff"):  # no space or comment here (most calls)
                return pos
        m = _WS_RE.match(t, pos)
        return m.end() if m else pos

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise _TooDeep("too deep")
        t = self.text
        if pos >= len(t):
            raise _NotLiteral("end of text")
        c = t[pos]
        if c in "'\"`":
            return self.string(pos)
        if c == "{":
            return self.obj(pos, depth)
        if c == "[":
            return self.array(pos, depth)
        if c == "-" or c == "+":
            p = self.ws(pos + 1)
            num, end = self.number(p)
            return (-num if c == "-" else num), end
        if c.isdigit() or c == ".":
            return self.number(pos)
        m = _IDENT_RE.match(t, pos)
        if m and m.group() in _KEYWORD_VALUES:
            return _KEYWORD_VALUES[m.group()], m.end()
        raise _NotLiteral("not a literal")

    def string(self, pos: int) -> tuple[str, int]:
        q = self.text[pos]
        m = _STRING_RES[q].match(self.text, pos)
        if not m:
            raise _NotLiteral("unterminated")
        body = m.group(1)
        if q == "`":
            if m.group(2) == "${":
                raise _NotLiteral("interpolated template")
            return _decode_escapes(body, template=True), m.end()
        if not _NO_RAW_TERMINATOR.fullmatch(body):
            raise _NotLiteral("raw line terminator in string")
        return _string_body(body, template=False, double=q == '"'), m.end()

    def number(self, pos: int) -> tuple[int | float, int]:
        m = _NUMBER_RE.match(self.text, pos)
        if not m or m.end() == pos:
            raise _NotLiteral("not a number")
        end = m.end()
        if end < len(self.text) and (self.text[end].isalnum() or self.text[end] in "_$"):
            raise _NotLiteral("identifier after number")
        g = m.groupdict()
        if g["hn"] or g["on"] or g["bn"] or g["dn"]:
            # a BigInt: JSON.stringify throws on it, so no tool receives it as written
            raise _NotLiteral("BigInt")
        if g["hex"] is not None:
            return _radix(g["hex"].replace("_", ""), 16), end
        if g["oct"] is not None:
            return _radix(g["oct"].replace("_", ""), 8), end
        if g["bin"] is not None:
            return _radix(g["bin"].replace("_", ""), 2), end
        if g["legacy"] is not None:
            return _radix(g["legacy"], 8), end
        d = g["dec"].replace("_", "")
        if "." in d or "e" in d or "E" in d:
            self.decimals = True
            return js_number(float(d)), end
        return _decimal(d), end

    def key(self, pos: int) -> tuple[str, int]:
        t = self.text
        c = t[pos] if pos < len(t) else ""
        if c and c in "'\"":  # "" is in every string: an object cut after "{" or "," has no key
            return self.string(pos)
        if c == "[":
            raise _NotLiteral("computed key")
        if c.isdigit() or c == ".":
            num, end = self.number(pos)
            # Numeric keys become strings the way JavaScript prints them: 1 -> "1", 1.5 -> "1.5".
            if isinstance(num, float) and num.is_integer() and abs(num) < 1e21:
                return str(int(num)), end
            return str(num), end
        m = _IDENT_RE.match(t, pos)
        if not m:
            raise _NotLiteral("bad key")
        return m.group(), m.end()

    def obj(self, pos: int, depth: int) -> tuple[dict[str, Any], int]:
        t = self.text
        out: dict[str, Any] = {}
        pos = self.ws(pos + 1)
        while True:
            if pos < len(t) and t[pos] == "}":
                return out, pos + 1
            if t.startswith("...", pos):
                raise _NotLiteral("spread")
            k, pos = self.key(pos)
            pos = self.ws(pos)
            if pos >= len(t) or t[pos] != ":":
                # Shorthand ({ cmd }), methods ({ f() {} }), getters: values exist only at run time.
                raise _NotLiteral("shorthand or method")
            pos = self.ws(pos + 1)
            v, pos = self.value(pos, depth + 1)
            if k != "__proto__":  # sets the prototype: not a key (see _without_proto)
                out[k] = v
            pos = self.ws(pos)
            if pos < len(t) and t[pos] == ",":
                pos = self.ws(pos + 1)
            elif pos < len(t) and t[pos] == "}":
                return out, pos + 1
            else:
                raise _NotLiteral("expected , or }")

    def array(self, pos: int, depth: int) -> tuple[list[Any], int]:
        t = self.text
        out: list[Any] = []
        pos = self.ws(pos + 1)
        while True:
            if pos < len(t) and t[pos] == "]":
                return out, pos + 1
            if pos < len(t) and t[pos] == ",":
                # A hole ([1,,2]) has no value; it reads as undefined, which is not a literal here.
                raise _NotLiteral("array hole")
            if t.startswith("...", pos):
                raise _NotLiteral("spread")
            v, pos = self.value(pos, depth + 1)
            out.append(v)
            pos = self.ws(pos)
            if pos < len(t) and t[pos] == ",":
                pos = self.ws(pos + 1)
            elif pos < len(t) and t[pos] == "]":
                return out, pos + 1
            else:
                raise _NotLiteral("expected , or ]")

