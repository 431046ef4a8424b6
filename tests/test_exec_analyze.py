"""exec_grammar.analyze: which text is a tool call, and what each call carries.

Every behaviour is pinned for each backend that must show it: tree-sitter (primary), the lexer (the
fallback, which must agree on every valid script here) and esprima where the syntax is ES2017.
"""

from __future__ import annotations

import textwrap

import pytest

from exec_grammar import ParserName, analyze

BACKENDS = ["tree-sitter", "lexer", "esprima"]


def assert_calls(script: str, *names: str, parser: str = "tree-sitter") -> None:
    """The calls of ``script`` (dedented) are exactly ``names``, in source order, with no parse error."""
    a = analyze(textwrap.dedent(script), parser=parser)
    assert a.parse_error is None, a.parse_error
    assert [c.name for c in a.calls] == list(names), f"{parser}: {a.calls}"


@pytest.fixture(params=BACKENDS)
def parser(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_call_forms(parser: str) -> None:
    """tools.NAME(…), tools["NAME"](…), tools['NAME'](…) and spaced forms are calls."""
    assert_calls(
        """
        await tools.a({});
        await tools["b"]({});
        await tools['c']();
        await tools . d (1);
        await tools
          .e(2);
        """,
        "a",
        "b",
        "c",
        "d",
        "e",
        parser=parser,
    )


@pytest.mark.parametrize("parser", ["tree-sitter", "lexer"])
def test_optional_chaining_calls(parser: str) -> None:
    """tools?.NAME(…) and tools?.NAME?.(…) are calls (ES2020, beyond esprima)."""
    assert_calls(
        "await tools?.x({}); await tools?.y?.({}); await tools?.['z']();", "x", "y", "z", parser=parser
    )


def test_quoted_calls_are_not_calls(parser: str) -> None:
    """Text that only quotes a call (comments, strings, template text, regexes) is never a call."""
    assert_calls(
        r"""
        // tools.c1({cmd: "no"})
        /* tools.c2() */
        const s = "tools.c3()" + 'tools.c4()';
        const t = `tools.c5() and ${"x"} tools.c6()`;
        const re = /tools.c7\(x\)/g;
        const real = await tools.real({});
        """,
        "real",
        parser=parser,
    )


def test_regex_after_if_and_await_division_after_brace(parser: str) -> None:
    """A `/` after the `)` of `if (…)` and after `await` starts a regex; after an object's `}`, a division."""
    assert_calls(
        """
        const s = "x";
        if (s) /tools.no1(x)/.test(s) && text("found");
        async function f() { return await /tools.no2(.*)/.exec("q"); }
        const w = {} / (await tools.yes({cmd: "echo div"})).output.length / 2;
        """,
        "yes",
        parser=parser,
    )


def test_regex_after_function_body_brace(parser: str) -> None:
    """The `}` closing a function declaration ends a statement: a `/` after it starts a regex."""
    assert_calls(
        """
        function f() { return 1 }
        /tools.no(y)/.test("z");
        const q = (await tools.yes({})).output.length / 2 / 3;
        """,
        "yes",
        parser=parser,
    )


def test_nested_calls_in_source_order(parser: str) -> None:
    """Calls inside template interpolations, another call's argument, arrows and .map callbacks count,
    ordered by start (an outer call precedes the calls in its argument)."""
    assert_calls(
        """
        text(`a ${(await tools.t1({})).output} b`);
        const v = await tools.outer({cmd: (await tools.inner({})).output});
        const rs = await Promise.all(["a", "b"].map(x => tools.mapped({cmd: x})));
        const h = async () => { await tools.arrow({}); };
        """,
        "t1",
        "outer",
        "inner",
        "mapped",
        "arrow",
        parser=parser,
    )


def test_computed_name_and_bare_reference(parser: str) -> None:
    """tools[name](…) is a call with the computed name "*"; a bare reference is not a call."""
    assert_calls(
        """
        const name = "exec_command";
        const r = await tools[name]({cmd: "pwd"});
        const fn = tools.exec_command;
        await fn({cmd: "id"});
        """,
        "*",
        parser=parser,
    )


def test_not_a_tools_identifier(parser: str) -> None:
    """Only the identifier `tools` counts: not mytools.x(), x.tools.y(), or a tagged template."""
    assert_calls("mytools.a(); x.tools.b(); tools.c`t`; await tools.d();", "d", parser=parser)


def test_if_false_call_is_listed(parser: str) -> None:
    """A call in a never-run branch is still listed: the reading is static."""
    assert_calls(
        "if (false) { await tools.exec_command({cmd: 'rm -rf /tmp/x'}); }", "exec_command", parser=parser
    )


def test_spans_are_code_points_with_lines_and_columns(parser: str) -> None:
    """Offsets count code points (not UTF-8 bytes), lines are 1-based and columns 0-based."""
    script = 'text("héllo 🎉");\n  await tools.x({a: "é"});\n'
    a = analyze(script, parser=parser)
    (call,) = a.calls
    start = script.index("tools.x")
    assert (call.start.offset, call.start.line, call.start.column) == (start, 2, 8)
    assert call.end.offset == script.index(";\n", start)
    assert (call.end.line, call.end.column) == (2, 25)
    assert script[call.start.offset : call.end.offset] == 'tools.x({a: "é"})'


def test_argument_source_decoded_and_computed(parser: str) -> None:
    """Each call carries its argument's source, the decoded value when literal, `computed` otherwise."""
    a = analyze(
        "await tools.a({cmd: 'ls', n: 0x10,});\nawait tools.b({cmd});\nawait tools.c();\nawait tools.d(x, 2);\n",
        parser=parser,
    )
    got = [(c.name, c.argument_source, c.argument, c.computed) for c in a.calls]
    assert got == [
        ("a", "{cmd: 'ls', n: 0x10,}", {"cmd": "ls", "n": 16}, False),
        ("b", "{cmd}", None, True),
        ("c", "", None, False),
        ("d", "x", None, True),
    ]


def test_syntax_error_falls_back_to_lexer() -> None:
    """A script tree-sitter rejects is read by the lexer; parse_error keeps tree-sitter's verdict."""
    a = analyze('await tools.exec_command({cmd: "ls"});\nconst x = (1;\nawait tools.b({});\n')
    assert a.parser is ParserName.LEXER
    assert a.parse_error is not None and a.parse_error.line == 2
    assert [c.name for c in a.calls] == ["exec_command", "b"]


def test_valid_script_uses_tree_sitter() -> None:
    a = analyze("await tools.a({});")
    assert a.parser is ParserName.TREE_SITTER and a.parse_error is None


def test_tagged_template_bad_escape_is_not_an_error() -> None:
    """tree-sitter flags invalid escapes in a tagged template; acorn (the reference) accepts them."""
    a = analyze("const p = String.raw`C:\\users\\xfoo`;\nawait tools.apply_patch(p);\n")
    assert a.parse_error is None and a.parser is ParserName.TREE_SITTER
    assert {f.code for f in a.findings} == {"benign-error"}
    assert [c.name for c in a.calls] == ["apply_patch"]


def test_pragma_decoded() -> None:
    a = analyze('// @exec: {"yield_time_ms": 20000, "max_output_tokens": 2000}\nawait tools.a({});')
    assert a.pragma == {"yield_time_ms": 20000, "max_output_tokens": 2000}
    assert analyze("await tools.a({});").pragma is None
    bad = analyze("// @exec: {nope\nawait tools.a({});")
    assert bad.pragma is None and [f.code for f in bad.findings] == ["bad-pragma"]


def test_unknown_parser_name() -> None:
    with pytest.raises(ValueError):
        analyze("x", parser="acorn")


def test_package_docstring_quickstart() -> None:
    """The package docstring is a runnable quickstart."""
    import doctest

    import exec_grammar

    result = doctest.testmod(exec_grammar, report=False)
    assert result.attempted >= 4 and result.failed == 0


def test_unknown_node_type_is_a_finding() -> None:
    """A node type the esprima visitor has no decision for is reported, never silently skipped."""
    from types import SimpleNamespace

    from exec_grammar.backends.esprima import _CallCollector

    collector = _CallCollector(shift=0)
    collector.visit(SimpleNamespace(type="PipelineExpression", range=[3, 9]))
    collector.visit(SimpleNamespace(type="Identifier", range=[0, 1]))
    assert [(f.code, f.offset) for f in collector.findings] == [("unhandled-node", 3)]


def test_every_esprima_node_type_in_the_fixtures_is_handled() -> None:
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "fixtures" / "js").glob("*/*.js")):
        a = analyze(path.read_text(encoding="utf-8"), parser="esprima")
        assert "unhandled-node" not in {f.code for f in a.findings}, path.name


def test_lone_surrogates_keep_offsets(parser: str) -> None:
    """A lone surrogate (a JSON "\\ud800" escape in a transcript) is one code point for every backend."""
    script = 'const s = "\ud800"; await tools.x({a: "\udc00"}); await tools["\ud800"]();'
    a = analyze(script, parser=parser)
    assert [(c.name, c.start.offset, c.argument) for c in a.calls] == [
        ("x", script.index("tools.x"), {"a": "\udc00"}),
        ("\ud800", script.index('tools["'), None),
    ]


def test_esprima_parse_error_message_agrees_with_its_line() -> None:
    """Esprima numbers lines of the wrapped script; its "Line N:" prefix is dropped so the
    message never names another line than the (mapped back) ``line`` field."""
    a = analyze('await tools.exec_command({cmd: "unterminated);\nx\n', parser="esprima")
    err = a.parse_error
    assert err is not None and (err.line, err.column) == (1, 31)
    assert err.message == "Unexpected token ILLEGAL"
    b = analyze("const a = 1;\n\nlet x = /(/;\n", parser="esprima")
    assert b.parse_error is not None and b.parse_error.line == 3
    assert not b.parse_error.message.startswith("Line ")


def test_esprima_internal_assertion_is_a_parse_error() -> None:
    """esprima-python asserts (AssertionError) on an empty template substitution; that is a rejection
    read by the lexer, never a crash (found by hypothesis)."""
    a = analyze("`${}`; await tools.x({})", parser="esprima")
    assert a.parse_error is not None and a.parser == "lexer"
    assert [c.name for c in a.calls] == ["x"]
