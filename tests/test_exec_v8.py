"""The verdict is V8's own (``exec_grammar.v8``): each cell is compiled by the embedded V8, never run; a
cell cannot break out of the function body it is compiled as; the module-only rules checked on the tree
(``backends/ts_module.py``) are each pinned by a case whose verdict node gives (re-checked against node's
V8 by ``test_module_cases_match_node`` when node is installed)."""

from __future__ import annotations

import pytest

from exec_grammar import analyze, v8
from exec_grammar.oracle import node_path, run_oracle

pytestmark = pytest.mark.skipif(not v8.available(), reason=f"V8 (mini-racer) not loadable: {v8.load_error()}")

#: (cell, node's verdict: "parse" = rejected at compile time, else "runs"), for each module-only rule
#: and the module syntax hidden from V8
MODULE_CASES: list[tuple[str, str]] = [
    ("return 1", "parse"),
    ("function f(){ return 1 }", "runs"),
    ("x\nnew.target", "parse"),
    ("() => new.target", "parse"),
    ("function f(){ return new.target }", "runs"),
    ("a <!-- b", "parse"),
    ("x = 1;\n--> c", "parse"),
    ("function f(){} function f(){}", "parse"),
    ("function f(){} var f", "parse"),
    ("function f(){} { var f }", "parse"),
    ("function f(){} function g(){ var f }", "runs"),
    ("function g(){ var await }", "parse"),
    ("function g(){ await\nfoo() }", "parse"),
    ("async function g(){ await 1 }", "runs"),
    ("export const a = 1", "runs"),
    ("export default {a: 1}", "runs"),
    ("export function f(){}", "runs"),
    ("import.meta.url", "runs"),
    ("#!/usr/bin/env node\nawait 1", "runs"),
    ("await 1", "runs"),
    ("let a; let a", "parse"),
    ("1++;", "parse"),
    ("let [a];", "parse"),
    ("}); globalThis.escaped = 1; (function(){", "parse"),
    ("x\n}); evil(); (async function(){", "parse"),
]


@pytest.mark.parametrize("cell,verdict", MODULE_CASES, ids=[c[:40] for c, _ in MODULE_CASES])
def test_module_verdicts(cell: str, verdict: str) -> None:
    a = analyze(cell)
    assert (a.parse_error is None) == (verdict == "runs"), a.parse_error


@pytest.mark.skipif(node_path() is None, reason="node is not installed")
def test_module_cases_match_node() -> None:
    """The table is node's: each cell compiled as an ES module by node's V8, with the same error text and
    position where it is rejected."""
    cells = [c for c, _ in MODULE_CASES]
    for (cell, verdict), r in zip(MODULE_CASES, run_oracle(cells)):
        assert (r.verdict == "parse") == (verdict == "parse"), (cell, r.verdict, r.error)
        if r.verdict == "parse":
            assert analyze(cell).parse_error.message == r.error, cell


def test_compiling_runs_nothing() -> None:
    """A cell full of side effects is compiled, not run: nothing it does reaches V8's global object."""
    cell = (
        "globalThis.ran = 1;\nObject.prototype.polluted = 1;\nawait tools.exec_command({cmd: 'echo x'});\n"
        "while (true) {}\n"
    )
    compiled = v8.compile_cell(cell)
    assert compiled.status == "ok"
    ctx = v8._state["ctx"]
    assert ctx.eval("typeof globalThis.ran") == "undefined"
    assert ctx.eval("({}).polluted === undefined") is True


@pytest.mark.parametrize(
    "cell,line,column",
    [
        ("}); globalThis.escaped = 1; (function(){", 1, 0),
        ("const a = 1;\n}); globalThis.escaped = 1; (async function(){\n", 2, 0),
        ("`${1}`; x}); globalThis.escaped = 1; //", 1, 9),
        ("'}'; }) ; globalThis.escaped = 1; (function(){ /* } */", 1, 5),
    ],
)
def test_a_cell_cannot_close_the_wrapper(cell: str, line: int, column: int) -> None:
    """Text that would close the function it is compiled as is a syntax error where a module has it (the
    unmatched ``}``), and what follows it never runs."""
    a = analyze(cell)
    assert a.parse_error is not None
    assert (a.parse_error.message, a.parse_error.line, a.parse_error.column) == (
        "SyntaxError: Unexpected token '}'",
        line,
        column,
    )
    assert v8._state["ctx"].eval("typeof globalThis.escaped") == "undefined"


@pytest.mark.skipif(node_path() is None, reason="node is not installed")
def test_break_out_reported_as_node_reports() -> None:
    cells = ["}); globalThis.escaped = 1; (function(){", "x\n}); evil(); (async function(){"]
    for cell, r in zip(cells, run_oracle(cells)):
        assert r.verdict == "parse" and r.error == analyze(cell).parse_error.message


def test_error_position_in_code_points() -> None:
    """V8 counts UTF-16 units; positions are code points (an emoji before the error counts one)."""
    a = analyze("'😀😀'; x y")
    assert a.parse_error is not None and (a.parse_error.line, a.parse_error.column) == (1, 8)


def test_over_budget_is_read_by_the_lexer_with_an_unknown_verdict() -> None:
    cell = "await tools.exec_command({cmd: 'ls'});\n" + "x = 1;\n" * 1000
    a = analyze(cell, budget=1000)
    assert a.parser == "lexer" and a.parse_error is None and a.proven == ()
    assert [c.name for c in a.calls] == ["exec_command"]
    assert {f.code for f in a.findings} >= {"over-budget", "verdict-unknown"}


def test_deep_literal_is_bounded() -> None:
    """A literal nested 10,000 deep: V8 runs out of parser stack (node does too, from about 2,500
    deep), so the cell never compiled; the call before it is still found."""
    cell = "await tools.exec_command({cmd: 'ls'});\nconst a = " + "{a:" * 10_000 + "1" + "}" * 10_000 + ";"
    a = analyze(cell)
    assert a.parse_error is not None and a.parse_error.message.startswith("RangeError")
    assert [c.name for c in a.calls] == ["exec_command"]


#: Cells of every verdict shape: compiles, a syntax error with its place (ASCII and not), a stack overflow,
#: a hashbang, module syntax hidden from V8, a text mini-racer cannot pass (a lone surrogate)
SHAPES = [c for c, _ in MODULE_CASES] + [
    "await tools.exec_command({cmd: 'ls'});", "const x = ;", "'😀'; x y", "{a:" * 6000 + "1" + "}" * 6000,
    "let s = '\ud800';", "a\n\nb c",
]


def test_the_direct_call_is_used_and_agrees_with_the_public_call() -> None:
    """The one-trip call (mini-racer's internals) is what compiles here, and gives what mini-racer's
    public call gives on every shape of verdict; were the internals to change, the public call would be
    used (``_direct_caller`` returns None when its self-check fails)."""
    v8.compile_cell("1")
    assert isinstance(v8._state["fn"], v8._DirectCaller)
    public = v8._PublicCaller(v8._state["public"])
    for cell in SHAPES:
        assert v8.compile_cell(cell) == _public_verdict(public, cell), cell[:40]


def _public_verdict(public: v8._PublicCaller, cell: str) -> v8.Compiled:
    body = "//" + cell[2:] if cell.startswith("#!") else cell
    with v8._lock:
        try:
            public.start(v8._PROLOGUE + body)
            public.finish()
        except Exception as e:  # noqa: BLE001 - V8's error, located as compile_cell locates it
            return v8._located(cell, str(e))
    return v8.Compiled("ok")


def test_threads_get_their_own_verdicts() -> None:
    """Cells analysed from several threads at once (the MCP server does) get the verdicts they get one
    at a time: V8's results cannot be handed to another thread's cell."""
    from concurrent.futures import ThreadPoolExecutor

    cells = [f"const a{i} = {i};\n" + ("x y" if i % 3 == 0 else f"await tools.t{i}({{}});") for i in range(120)]
    alone = [analyze(c).parse_error for c in cells]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda c: analyze(c).parse_error, cells))
    assert together == alone
    assert sum(e is not None for e in alone) == 40


def _verdict_in_child(cell: str) -> str | None:
    e = analyze(cell).parse_error
    return None if e is None else e.message


def test_a_forked_child_compiles_with_its_own_v8() -> None:
    """The session store reads files in forked processes: a child of a process whose V8 is running
    starts its own, rather than waiting for ever on the parent's (whose threads it does not have)."""
    import multiprocessing

    v8.compile_cell("1")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map_async(_verdict_in_child, ["x y", "await tools.a({});"]).get(timeout=60)
    assert got[0] is not None and got[0].startswith("SyntaxError") and got[1] is None
