"""Golden JS fixtures with their expectations written inline (parso's ``#:`` style, house style).

``fixtures/js/hand/`` holds the hand-written edge cases of the exec-script benchmark (``../shared/bench/hand``,
whose ``expected.json`` is copied alongside), ``fixtures/js/real/`` a handful of real recorded scripts
(public transcripts and our own Codex recordings). Each file says what it contains:

    // expect: tools.NAME@LINE:COLUMN     a call, in source order (1-based line, 0-based column)
    // expect: no calls
    // expect-error: WHY                  the reference parser (acorn) rejects it: the primary parser must
                                          too, and the calls listed are what the lexer recovers
    // expect-reader: lexer               valid, but tree-sitter cannot read it: the lexer lists the calls

Expectations of valid files come from node+acorn (the reference), of invalid files from the lexer,
reviewed by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from exec_grammar import ParserName, analyze

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "js"
FILES = sorted([*FIXTURES.glob("hand/*.js"), *FIXTURES.glob("real/*.js")])
_EXPECT_RE = re.compile(r"^// expect: tools\.(\S+)@(\d+):(\d+)$", re.M)


def expectations(text: str) -> tuple[list[tuple[str, int, int]], bool]:
    calls = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _EXPECT_RE.finditer(text)]
    assert calls or "// expect: no calls" in text, "fixture without expectations"
    return calls, "// expect-error:" in text


def got(text: str, parser: str) -> list[tuple[str, int, int]]:
    return [(c.name, c.start.line, c.start.column) for c in analyze(text, parser=parser).calls]


def test_fixtures_exist() -> None:
    assert len(FILES) >= 56 + 10


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_fixture(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected, invalid = expectations(text)
    primary = analyze(text)
    if invalid:
        assert primary.parse_error is not None, "the reference rejects this script"
        assert primary.parser is ParserName.LEXER
    else:
        assert primary.parse_error is None, primary.parse_error
        # `// expect-reader: lexer`: module syntax V8 compiles and tree-sitter cannot read (a keyword as
        # an import name, `export` then a line break): the calls come from the lexer
        reader = ParserName.LEXER if "// expect-reader: lexer" in text else ParserName.TREE_SITTER
        assert primary.parser is reader
    assert got(text, "tree-sitter") == expected
    assert got(text, "lexer") == expected
    esprima = analyze(text, parser="esprima")
    if esprima.parse_error is None:
        # ES2017 scripts only; esprima rejects ?. ?? 1_000 catch{} … and then the lexer answers
        assert esprima.parser is ParserName.ESPRIMA
    assert got(text, "esprima") == expected


def test_hand_expected_names_for_the_lexer() -> None:
    """Lexer-only mode agrees with every hand-written edge case."""
    expected = json.loads((FIXTURES / "hand" / "expected.json").read_text())
    assert len(expected) == 95
    for name, exp in expected.items():
        if not exp["valid"]:
            continue
        text = (FIXTURES / "hand" / name).read_text(encoding="utf-8")
        assert [c.name for c in analyze(text, parser="lexer").calls] == exp["calls"], name
