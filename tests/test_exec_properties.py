"""Property tests for exec_grammar (hypothesis): totality, linear work, literal round trips, agreement.

Linearity is shown by counting work, never by timing (machines are noisy): the number of Python line
events that the lexer and the lexer backend execute, traced with ``sys.settrace``, must grow in
proportion to the input. The regular expressions they run are written to never backtrack more than a
constant (see ``exec_grammar.lexer``), so line events are a faithful measure of the work.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import exec_grammar.backends.lexical as lexical
import exec_grammar.backends.treesitter as treesitter
import exec_grammar.lexer as lexer
from exec_grammar import analyze
from exec_grammar.lexer import TokenKind, tokenize
from exec_grammar.literals import COMPUTED, _fast_decode, _Reader, decode_literal

JS_ALPHABET = st.sampled_from(list("tools.x()[]{}`'\"/\\*${}\n\r +-=<>!?:;,#0123456789abcdefgnru \u2028é🎉"))
JS_ISH = st.text(JS_ALPHABET, max_size=300)


# --- the lexer is total and a round trip ---------------------------------------------------------


@given(st.one_of(st.text(max_size=400), JS_ISH))
@settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@example("`${`${'")
@example("/[/[/[")
@example("'\\\n")
@example("tools.a(tools.b(`${tools.c(")
def test_lexer_total_and_round_trip(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(t.text for t in tokens) == text
    assert all(t.start < t.end for t in tokens)
    assert all(a.end == b.start for a, b in zip(tokens, tokens[1:]))
    for parser in ("lexer", "tree-sitter"):
        a = analyze(text, parser=parser)
        for c in a.calls:
            assert 0 <= c.start.offset <= c.end.offset <= len(text)


# --- linear work on adversarial input --------------------------------------------------------------

_WATCHED = {Path(lexer.__file__).resolve(), Path(lexical.__file__).resolve()}


def _count_lines(fn: Callable[[str], Any], text: str, watched: Callable[[str], bool]) -> int:
    """Python line events executed in the files ``watched`` accepts while running fn(text)."""
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local if watched(frame.f_code.co_filename) else None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(text)
    finally:
        sys.settrace(old)
    return count


def line_events(fn: Callable[[str], Any], text: str) -> int:
    """Python line events executed inside the lexer and the lexer backend while running fn(text)."""
    watched = {str(p) for p in _WATCHED}
    return _count_lines(fn, text, watched.__contains__)


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "deep parens": lambda n: "(" * n + ")" * (n // 2),
    "deep brackets and braces": lambda n: "[{" * n,
    "nested template interpolations": lambda n: "`${" * n,
    "nested calls": lambda n: "tools.a(" * n,
    "unterminated regex classes": lambda n: "/[" * n,
    "unterminated strings": lambda n: "'\\\n\"" * n,
    "slashes after operators": lambda n: "(/ " * n,
    "block comment openers": lambda n: "/*" + "*" * n,
    "quotes and backslashes": lambda n: "\"\\'" * n,
    "unbalanced closers": lambda n: ")]}" * n,
}


def _lex_and_find(text: str) -> None:
    lexical.parse_calls(text)


def test_lexer_linear_work_on_adversarial_text() -> None:
    """Doubling the input at most doubles the work (+ a constant), for every adversarial family."""
    for name, make in ADVERSARIAL.items():
        small, large = make(1500), make(3000)
        w1, w2 = line_events(_lex_and_find, small), line_events(_lex_and_find, large)
        assert w2 <= 2.2 * w1 + 200, f"{name}: {w1} -> {w2} line events"
        assert w2 <= 60 * len(large) + 200, f"{name}: {w2} line events for {len(large)} chars"


def test_lexer_one_megabyte_unterminated_string_and_template() -> None:
    """A 1 MB unterminated string / template / comment is one ERROR token: one regex scan, no loop."""
    mb = 1 << 20
    for opener in ("'", '"', "`", "/*", "`${x}"):
        text = "const s = " + opener + "a" * mb
        tokens = tokenize(text)
        assert tokens[-1].kind is TokenKind.ERROR and len(tokens) <= 10
        assert line_events(_lex_and_find, text) < 2000
        assert analyze(text, parser="lexer").parse_error is not None


def test_lexer_deep_nesting_does_not_recurse() -> None:
    """Nesting 100,000 deep is handled with explicit stacks (no RecursionError)."""
    depth = 100_000
    a = analyze("tools.a(" * depth, parser="lexer")
    assert len(a.calls) == depth and a.parse_error is not None
    assert decode_literal("[" * depth + "]" * depth) is COMPUTED  # beyond MAX_DEPTH: computed, not a crash


@pytest.mark.parametrize("text", ["{", "{a: 1,", "{)", "{ ", "[1,", "{'a': [", "{a: {"])
def test_decode_literal_of_a_cut_literal_is_computed(text: str) -> None:
    """An object cut after ``{`` or ``,`` (the lexer hands such argument text over for ``tools.x({)``) has
    no key: computed, never an IndexError (found by hypothesis on ``'tools.x({)' * 300``)."""
    assert decode_literal(text) is COMPUTED


@given(st.text(alphabet="{}[](),:'\"`ab1 -.\\$", max_size=40))
def test_decode_literal_is_total(text: str) -> None:
    decode_literal(text)  # returns a value or COMPUTED; any exception fails the test


# --- the whole analysis (tree-sitter backend, entries) is linear too ---------------------------

_PACKAGE = str(Path(lexer.__file__).resolve().parent)


def analysis_work(text: str) -> int:
    """Work of ``analyze(text)``: Python line events in every ``exec_grammar`` module plus the tree-sitter
    backend's own count (cursor steps; each descent from the root in C charged the tree's node count,
    a bound on what it visits). Counted, not timed."""
    treesitter.WORK[0] = 0
    count = _count_lines(analyze, text, lambda name: name.startswith(_PACKAGE))
    return count + treesitter.WORK[0]


def _many_bound_paths(n: int, comment: str = "") -> str:
    consts = "".join(f'const v{i} = "p{i}.txt";\n' for i in range(n))
    headers = "".join(f"*** Add File: ${{{comment}v{i}}}\n+x\n" for i in range(n))
    return consts + "await tools.apply_patch(`*** Begin Patch\n" + headers + "*** End Patch\n`);"


#: The families (a left-deep member chain took 13 s at 20,000, nested parens 4 s at 100,000) and
#: the other shapes that were quadratic: nested non-async arrows (await search per function), many
#: returns and functions, repeated declarations, a patch naming many const-bound paths.
TREE_ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "member chain of tools": lambda n: "tools.tools.tools." * n + "x()",
    "deep unclosed parens in a call": lambda n: "tools.x(" + "(" * n + ")" * 10,
    "deep brackets in a call": lambda n: "tools.x(" + "[" * n + "]" * n + ");",
    "many calls": lambda n: "await tools.a({cmd: 'ls'});\n" * n,
    "nested non-async arrows": lambda n: "(() => " * n + "await tools.x()" + ")" * n,
    "returns and functions": lambda n: "const f = () => {" + "return 1;" * n + "};" + "function g(){}" * n,
    "repeated declarations in blocks": lambda n: "{const a = tools.x();}" * n,
    "parenthesised tool name": lambda n: "tools[" + "(" * n + '"x"' + ")" * n + "]()",
    "bad escapes in a tagged template": lambda n: "String.raw`" + "\\u" * n + "`; tools.x(",
    "patch naming const-bound paths": _many_bound_paths,
    "patch naming const-bound paths behind comments": lambda n: _many_bound_paths(n, "/*c*/"),
    "aliases of tools.exec_command": lambda n: "const f = tools.exec_command; run(tools);\n" * n,
    # comment runs (the parse of these is read from a comment-blanked copy, ts_comments)
    "block comment run in a member": lambda n: "tools" + "/**/" * n + ".exec_command({cmd: 'x'})",
    "line comment run in a member": lambda n: "await tools" + "//c\n" * n + ".exec_command({cmd: 'x'})",
    "comment run in an argument": lambda n: "tools.exec_command({cmd: 'x'" + "/**/" * n + "})",
    # strict-mode checks: many triggers (declarations repeating names, labels, awaits in plain functions)
    "many repeated declarations in functions": lambda n: "function f(a) { let b = a; }\n" * n,
    "many awaits in plain functions": lambda n: "function f() { g(); }\n" * n + "await tools.x();" * n,
    "many labels and breaks": lambda n: "a: for (;;) { break a; }\n" * n,
    "many escapes in strings": lambda n: "tools.x('" + "\\u0041\\x41\\0" * n + "')",
}


def test_analysis_linear_work_on_adversarial_scripts() -> None:
    """Doubling the script at most doubles the analysis' work (+ a constant), for every family."""
    for name, make in TREE_ADVERSARIAL.items():
        w1, w2 = analysis_work(make(1000)), analysis_work(make(2000))
        assert w2 <= 2.3 * w1 + 500, f"{name}: {w1} -> {w2}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                "tools.",
                "tools.x(",
                "(",
                ")",
                "[",
                "]",
                "{",
                "}",
                "`${",
                "`",
                "=> ",
                "await ",
                "return ",
                "function ",
                "const a = 1;",
                "'s'",
                "/re/",
                "// c\n",
                ";\n",
                "x",
                ".y",
                "async ",
            ]
        ),
        min_size=1,
        max_size=12,
    )
)
def test_analysis_linear_work_on_repeated_random_snippets(parts: list[str]) -> None:
    """Any snippet repeated n and 2n times: the work grows at most linearly (hypothesis)."""
    snippet = "".join(parts)
    w1, w2 = analysis_work(snippet * 300), analysis_work(snippet * 600)
    assert w2 <= 2.3 * w1 + 500, f"{snippet!r}: {w1} -> {w2}"


def test_tree_sitter_deep_nesting_does_not_recurse() -> None:
    """100,000-deep nesting through the tree-sitter backend: no RecursionError, calls still found."""
    depth = 100_000
    a = analyze("tools[" + "(" * depth + '"x"' + ")" * depth + "]();")
    assert [c.name for c in a.calls] == ["x"]
    b = analyze("tools.x(" + "(" * depth + ")" * 10)
    assert b.parse_error is not None and [c.name for c in b.calls] == ["x"]


# --- JavaScript string escaping round trip ---------------------------------------------------------

_SIMPLE = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\0": "\\0"}
_ESCAPE_STARTERS = set("bfnrtvxu0123456789\n\r\u2028\u2029")


@st.composite
def js_string(draw: st.DrawFn) -> tuple[str, str]:
    """(value, a JavaScript literal spelling it), escaping each character one of the legal ways."""
    value = draw(st.text(max_size=40))
    return value, encode_js_string(draw, value)


def encode_js_string(draw: st.DrawFn, value: str) -> str:
    quote = draw(st.sampled_from(["'", '"', "`"]))
    out = [quote]
    for i, ch in enumerate(value):
        cp = ord(ch)
        nxt = value[i + 1] if i + 1 < len(value) else ""
        choices = ["u{}"]
        must_escape = ch in (quote, "\\") or (quote != "`" and ch in "\n\r") or (quote == "`" and ch == "\r")
        if quote == "`" and ch == "$" and nxt == "{":
            must_escape = True
        if not must_escape:
            choices.append("raw")
        if cp < 256:
            choices.append("x")
        if cp < 0x10000:
            choices.append("u4")
        else:
            choices.append("pair")
        if ch in _SIMPLE and not (ch == "\0" and nxt.isdigit()):
            choices.append("simple")
        if ch not in _ESCAPE_STARTERS:
            choices.append("identity")
        how = draw(st.sampled_from(choices))
        if draw(st.integers(0, 9)) == 0:
            out.append("\\\n")  # a line continuation adds nothing
        if how == "raw":
            out.append(ch)
        elif how == "x":
            out.append(f"\\x{cp:02x}")
        elif how == "u4":
            out.append(f"\\u{cp:04X}")
        elif how == "pair":
            hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
            out.append(f"\\u{hi:04x}\\u{lo:04x}")
        elif how == "simple":
            out.append(_SIMPLE[ch])
        elif how == "identity":
            out.append("\\" + ch)
        else:
            out.append(f"\\u{{{cp:x}}}")
    out.append(quote)
    return "".join(out)


@given(js_string())
@settings(deadline=None, max_examples=500)
def test_js_string_escapes_round_trip(case: tuple[str, str]) -> None:
    value, literal = case
    assert decode_literal(literal) == value
    tokens = [t for t in tokenize(literal) if t.kind is not TokenKind.WHITESPACE]
    assert len(tokens) == 1 and tokens[0].kind in (TokenKind.STRING, TokenKind.TEMPLATE)
    script = f"await tools.x({literal});"
    for parser in ("tree-sitter", "lexer"):
        (call,) = analyze(script, parser=parser).calls
        assert call.argument == value and not call.computed


# --- literal values round trip, and the fast path equals the full reader --------------------------

_KEY = st.text(string.ascii_letters + "_$", min_size=1, max_size=8)
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEY, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def js_value(draw: st.DrawFn, value: Any) -> str:
    ws = draw(st.sampled_from(["", " ", "\n  ", " /* c */ ", " // c\n"]))
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        form = draw(st.sampled_from(["dec", "hex", "sep"])) if value >= 0 else "dec"
        if form == "hex":
            return hex(value)
        if form == "sep" and value >= 1000:
            s = str(value)
            return s[:-3] + "_" + s[-3:]
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value else "0"
    if isinstance(value, str):
        return encode_js_string(draw, value)
    if isinstance(value, list):
        items = [draw(js_value(v)) for v in value]
        trailing = "," if items and draw(st.booleans()) else ""
        return "[" + ws + ("," + ws).join(items) + trailing + "]"
    parts = []
    for k, v in value.items():
        key = draw(st.sampled_from([k, f'"{k}"', f"'{k}'"]))
        parts.append(f"{key}:{ws}{draw(js_value(v))}")
    trailing = "," if parts and draw(st.booleans()) else ""
    return "{" + ws + ("," + ws).join(parts) + trailing + "}"


@given(st.data())
@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_literal_values_round_trip(data: st.DataObject) -> None:
    value = data.draw(_VALUE)
    source = data.draw(js_value(value))
    decoded = decode_literal(source)
    assert decoded == value or (isinstance(value, float) and decoded == value), source


@given(st.one_of(JS_ISH, st.text(string.printable, max_size=80)))
@settings(deadline=None, max_examples=400)
def test_fast_path_agrees_with_full_reader(text: str) -> None:
    """The JSON fast path either declines or gives exactly what the full literal reader gives."""
    fast = _fast_decode(text)
    if fast is COMPUTED:
        return
    reader = _Reader(text)
    try:
        value, end = reader.value(reader.ws(0), 0)
        full = value if reader.ws(end) == len(text) else COMPUTED
    except Exception:
        full = COMPUTED
    assert fast == full, text


# --- the parser and the lexer agree on generated valid scripts ------------------------------------

_NAMES = st.sampled_from(["exec_command", "apply_patch", "write_stdin", "mcp__gh__search", "view_image"])


@st.composite
def fragment(draw: st.DrawFn, depth: int = 0) -> tuple[str, list[str]]:
    """A statement and the tool names it calls, in source order."""
    name = draw(_NAMES)
    kind = draw(st.integers(0, 13 if depth < 2 else 9))
    cmd = draw(st.sampled_from(["ls -la", "echo 'a/b' | tr / x", 'rg -n "tools.x(" src', "cat ${HOME}/f"]))
    lit = '"' + cmd.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == 0:
        return f"const r{depth} = await tools.{name}({{cmd: {lit}, workdir: '/repo'}});", [name]
    if kind == 1:
        return f'await tools["{name}"]({lit});', [name]
    if kind == 2:
        return f"// tools.{name}({lit})\n", []
    if kind == 3:
        return f"text('tools.{name}(' + \"tools.x()\");", []
    if kind == 4:
        return f"const re{depth} = /tools\\.{name}\\(([^/)]*)\\)/g;", []
    if kind == 5:
        return f"if (x) /tools.{name}(x)/.test(s) && text('m');", []
    if kind == 6:
        return f"const q{depth} = {{a: 1}}.a / 2 / (await tools.{name}({{}})).n;", [name]
    if kind == 7:
        return f"text(`tools.{name}() ${{(await tools.{name}({lit})).output}} done`);", [name]
    if kind == 8:
        return f"/* tools.{name}() */ await tools . {name} ( {{ cmd: {lit} }} );", [name]
    if kind == 9:
        return f"const n{depth} = 10 / 2; const m{depth} = (n{depth}) / 5;", []
    inner, names = draw(fragment(depth + 1))
    if kind == 10:
        return f"if (false) {{ {inner} }}", names
    if kind == 11:
        return f"await Promise.all([1, 2].map(async (i) => {{ {inner} }}));", names
    if kind == 12:
        return (
            f"const v{depth} = await tools.{name}({{cmd: (await (async () => {{ {inner} return 'x'; }})())}});",
            [
                name,
                *names,
            ],
        )
    return f"try {{ {inner} }} catch (e) {{ text(String(e)); }}", names


@st.composite
def script(draw: st.DrawFn) -> tuple[str, list[str]]:
    parts = draw(st.lists(fragment(), min_size=1, max_size=8))
    sep = draw(st.sampled_from(["\n", "\n\n", ";\n", " "]))
    text = sep.join(p for p, _ in parts)
    return text, [n for _, names in parts for n in names]


@given(script())
@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_parsers_and_lexer_agree_on_generated_scripts(case: tuple[str, list[str]]) -> None:
    text, names = case
    primary = analyze(text)
    assume(primary.parse_error is None)  # a rare combination (e.g. ASI after a regex) may not parse
    assert [c.name for c in primary.calls] == names
    spans = [(c.name, c.start, c.end, c.argument_source) for c in primary.calls]
    lex = analyze(text, parser="lexer")
    assert [(c.name, c.start, c.end, c.argument_source) for c in lex.calls] == spans
    assert lex.entries == primary.entries
    esp = analyze(text, parser="esprima")
    if esp.parser == "esprima":
        assert [(c.name, c.start, c.end, c.argument_source) for c in esp.calls] == spans


_PIECES = st.sampled_from(
    [*"tools.x()[]{}`'\"/\\*${}\n\r +-=<>!?:;,#0123456789", "\u2028", "é", "🎉", "\ud800"]
    + ["await ", "async ", "=> ", "function ", "return ", "const a = ", "`${", "//", "/*", "*/"]
)


@given(
    st.one_of(
        st.text(st.characters(blacklist_categories=()), max_size=200),
        st.lists(_PIECES, max_size=80).map("".join),
    )
)
@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_analyze_is_total_on_every_backend(text: str) -> None:
    """Any text, lone surrogates included: every backend answers (no exception), spans lie in the text."""
    for parser in ("tree-sitter", "lexer", "esprima"):
        a = analyze(text, parser=parser)
        assert all(0 <= c.start.offset <= c.end.offset <= len(text) for c in a.calls)
        assert all(e.executed == "unknown" for e in a.entries)
