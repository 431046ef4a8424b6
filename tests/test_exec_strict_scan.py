"""The strict checks' RE2 scans give the spans of the ``re`` patterns they replace (``strict_scan``), so
moving them to RE2 for speed changes no hit and no parse verdict.

The reference of each scan is the ``re`` pattern the checks used before (lookaheads included), or the
Python loop it replaced (the newline scan, the declaration words). Checked on generated text built from the
bytes and words the patterns turn on, and on every JavaScript file of the fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exec_grammar.backends import strict_hits, strict_scan

ROOT = Path(__file__).resolve().parents[1]

SCANS = {
    name: getattr(strict_scan, name)
    for name in strict_scan.__all__
    if isinstance(getattr(strict_scan, name), strict_scan.Scan)
}

_PIECES = list("=/*+-<>!&|?^%~,;:{}()[]\n \t\v\f\r\"'\\`.$_#0123456789abxnue") + [
    "await", "typeof", "void", "return", "do", "in", "of", "for", "get", "set", "with", "delete", "yield",
    "async", "static", "constructor", "=>", "**", "0_1", "1_", "08", "0x", "1e", "10n", "\\u{", "é", "\u2028",
    "// c\n", "/* c */", "\\\\", '\\"', "\\'", "<!--", "-->", "??", "__proto__", "use strict", "...", "?.",
    "class", "var", "while", "switch", "function", "\\u", "||", "&&", "let", "const", "catch",
]

text = st.lists(st.sampled_from(_PIECES), max_size=60).map(lambda xs: "".join(xs).encode("utf-8"))


def _agree(data: bytes) -> None:
    if strict_scan._re2 is None:
        pytest.skip("google-re2 is not installed: only the reference patterns run")
    gate = strict_scan.present(data)
    for name, scan in SCANS.items():
        got = scan.spans(data)
        assert got == scan.reference_spans(data), (name, data)
        # the gate skips a scan only where it has no match at all
        assert scan.spans(data, gate) == got, (name, data)
        if scan.index >= 0 and scan.fast is not None:
            assert (scan.index in gate) == (scan.fast.search(data) is not None), (name, data)
    assert strict_scan.declaration_words(data, gate) == strict_scan.DECLARATION_WORDS.spans(data), data
    # the same pass says which literals the text holds, exactly as `in` would
    for lit in strict_scan.LITERALS:
        assert (strict_scan.literal(lit) in gate) == (lit in data), (lit, data)
    # and gates the `re` scans of strict_hits: it never says absent where they match
    if strict_hits._LABEL_HIT_RE.search(data):
        assert strict_scan.LABEL in gate, data
    if strict_hits._ESCAPE_HIT_RE.search(data):
        assert strict_scan.DIGIT_ESCAPE in gate or strict_scan.literal(b"\\u") in gate, data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text)
def test_re2_scans_equal_their_re_patterns(data: bytes) -> None:
    _agree(data)


def test_re2_scans_equal_their_re_patterns_on_the_fixtures() -> None:
    files = sorted((ROOT / "fixtures").rglob("*.js"))
    assert files, "fixtures/ holds JavaScript files"
    for f in files:
        _agree(f.read_bytes())


@pytest.mark.parametrize(
    "data,name,spans",
    [
        (b"a = 08 + x1 + .5 + 1_0 + 1_", "NUMBER", [(4, 6), (25, 27)]),
        (b"a + b.c = d; e == f", "OPERAND_ASSIGN", [(8, 9)]),
        (b"x = /re/; y // c", "SLASH", [(4, 5)]),
        (b"getter; get x() {}", "RARE", [(8, 11)]),
        (b'a\n"b\n', "RAW_NEWLINE", [(4, 5)]),
        (b"let x; $const; constant; var\\u0061; class A {}", "DECLARATION_WORDS", [(0, 3), (36, 41)]),
    ],
)
def test_scan_examples(data: bytes, name: str, spans: list[tuple[int, int]]) -> None:
    """A few spans written out: what each scan is for."""
    assert SCANS[name].spans(data) == spans
