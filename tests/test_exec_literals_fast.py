"""The direct paths of ``decode_literal`` (orjson for JSON-shaped text, whole strings and templates read
once) give exactly what the general reader gives: the same value, the same types (``1`` is not ``1.0``,
``-0.0`` is not ``0``), the same key order, lone surrogates kept, or both decline."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from exec_grammar.js_text import _decode_escapes, _NotLiteral
from exec_grammar.literals import (
    _DECLINED,
    COMPUTED,
    _decode_general,
    _direct,
    _fast_decode,
    _Reader,
    _string_body,
    decode_literal,
)
from tests.test_exec_properties import _VALUE as _JS_VALUE
from tests.test_exec_properties import JS_ISH, js_value

# Text with lone surrogates, astral characters, quotes, backslashes and line terminators.
_CHARS = st.one_of(
    st.characters(),
    st.sampled_from(["\ud800", "\udfff", "\U0001f600", '"', "'", "\\", "\n", "\r", "\u2028", "\t", "$", "{", "`"]),
)
_TEXT = st.text(_CHARS, max_size=12)
_NUMBER = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, 1e21, 1e20, 5e-324, 1.7976931348623157e308, 2**53 + 1, -(2**53) - 1]),
)
_SCALAR = st.one_of(st.none(), st.booleans(), _NUMBER, _TEXT)
_KEY = st.one_of(_TEXT, st.sampled_from(["__proto__", "cmd", "a", "1", ""]))
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEY, inner, max_size=4),
    max_leaves=14,
)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, key order included (``repr`` tells 1 from 1.0 and -0.0 from 0.0)."""
    return type(a) is type(b) and repr(a) == repr(b)


def reference(text: str) -> Any:
    """``decode_literal`` as it was before the direct paths: the JSON translation first, then the
    full reader."""
    if text[:1] in "{[\"'`":
        value = _fast_decode(text)
        if value is not COMPUTED:
            return value
    try:
        r = _Reader(text)
        value, pos = r.value(r.ws(0), 0)
        return value if r.ws(pos) == len(text) else COMPUTED
    except (_NotLiteral, RecursionError):
        return COMPUTED


def check(text: str) -> None:
    direct = _direct(text)
    general = _decode_general(text)
    old = reference(text)
    assert same(general, old), (text, general, old)
    if direct is not _DECLINED:
        assert same(direct, old), (text, direct, old)
    assert same(decode_literal(text), old), text


@st.composite
def json_text(draw: st.DrawFn) -> str:
    """A value written as JSON in several ways: ASCII-escaped or raw, compact or spaced, with a
    repeated key or a number spelled as JavaScript allows but JSON does not."""
    value = draw(_VALUE)
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (",\n ", " : ")])),
        allow_nan=False,
    ) if all(map(_finite, _leaves(value))) else "null"
    edit = draw(st.integers(0, 5))
    if edit == 1 and text.startswith("{") and len(text) > 2:
        text = text[:-1] + ', "a": 1, "a": 2.0}'  # a repeated key: the later value wins
    elif edit == 2:
        text = text.replace("1", draw(st.sampled_from(["1.0", "1e0", "10E-1", "01", "0x1"])))
    elif edit == 3:
        text = draw(st.sampled_from(["'", "`"])) + text[1:-1] + text[:1] if text[:1] == '"' else text
    return text


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, dict):
        return [x for k in v.values() for x in _leaves(k)]
    if isinstance(v, list):
        return [x for k in v for x in _leaves(k)]
    return [v]


def _finite(v: Any) -> bool:
    return not isinstance(v, float) or v == v and abs(v) != float("inf")


@given(json_text())
@settings(deadline=None, max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@example('"\\ud800"')
@example('"\\ud83d\\ude00"')
@example('["\\udc00\\ud800", "\\ud800\\udc00"]')
@example('{"a": 1.0, "b": -0, "c": -0.0, "d": 1e3, "e": 1e400, "f": 12345678901234567890}')
@example('{"a":1,"b":2,"a":3}')
@example('{"__proto__": {"x": 1}, "b": 2}')
@example("[9007199254740993, 900719925474099]")
@example("[" * 300 + "]" * 300)
@example('"\t"')
@example('"a\u2028b"')
@example("'\\x4'")
@example("`a\r\nb\\u{1F600}`")
@example("'a\\\nb'")
def test_json_shaped_text_decodes_as_the_general_reader_does(text: str) -> None:
    check(text)


@given(st.text(string.printable + "\ud800\u2028é", max_size=60).map(lambda s: s if s[:1] in "{[\"'`" else '"' + s))
@settings(deadline=None, max_examples=400)
def test_any_text_decodes_as_the_general_reader_does(text: str) -> None:
    check(text)


@given(st.data())
@settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_javascript_literals_decode_as_before(data: st.DataObject) -> None:
    """Literals as agents write them (unquoted keys, single quotes, templates, hex, separators,
    comments, trailing commas), and the same text cut short."""
    text = data.draw(js_value(data.draw(_JS_VALUE)))
    check(text)
    check(text[: data.draw(st.integers(0, len(text)))])


@given(JS_ISH)
@settings(deadline=None, max_examples=400)
def test_js_ish_text_decodes_as_before(text: str) -> None:
    check(text)
    check("{" + text)


@given(st.text(_CHARS, max_size=40))
@settings(deadline=None, max_examples=400)
def test_a_string_body_decodes_as_its_escapes_say(body: str) -> None:
    """The reader decodes a quoted string's body through ``_string_body`` (JSON escapes in C), which
    gives what the escape decoder gives."""
    try:
        expected = _decode_escapes(body, template=False)
    except _NotLiteral:
        return
    if '"' in body or "\n" in body or "\r" in body:
        return  # not a body the reader hands over (a raw terminator) or the JSON route takes
    assert same(_string_body(body, False), expected), body
