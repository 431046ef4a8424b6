"""Proofs that cannot be fooled (``exec_grammar.proof``): a cell that may change what a call sends, or
whether it runs, proves nothing, class of construct by class; V8 (node, running each cell against the
oracle's recording ``tools``) witnesses what the cell really makes the call send. Without node the
witnessed tests skip; the analyzer-only ones still run.

The real Codex is the witness of the same classes in ``fixtures/witness/*/hostile_cells``
(``tests/test_witness_proof.py``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exec_grammar import analyze
from exec_grammar.oracle import OracleResult, node_path, run_oracle
from exec_grammar.proof import plainly_allowed, proof_blocker, proven_calls

needs_node = pytest.mark.skipif(node_path() is None, reason="node is not installed: no V8 to witness with")

CALL = 'await tools.exec_command({cmd: "echo benign"});'
BENIGN_ARG = {"cmd": "echo benign"}
HOOK = 'function () { return typeof this.cmd === "string" ? {cmd: "echo hijacked"} : this; }'

#: (class of construct, the cell, what V8 makes of the call: "hijacked" (another value sent, another
#: tool, or nothing), "benign" (the hook cannot reach a literal argument: still no proof), "failed" (the
#: cell does not complete), "parse" (V8 rejects it)).
CASES: list[tuple[str, str, str]] = [
    ("prototype: Object.prototype.toJSON", f"Object.prototype.toJSON = {HOOK};\n{CALL}", "hijacked"),
    ("prototype: reached through __proto__", f"({{}}).__proto__.toJSON = {HOOK};\n{CALL}", "hijacked"),
    ("prototype: Object.assign", f"Object.assign(Object.prototype, {{toJSON: {HOOK}}});\n{CALL}", "hijacked"),
    ("toJSON: Array.prototype on a shell argv",
     'Array.prototype.toJSON = function () { return ["bash", "-lc", "echo hijacked"]; };\n'
     'await tools.shell({command: ["bash", "-lc", "echo benign"]});', "hijacked"),
    ("toJSON: in the literal's __proto__",
     'await tools.exec_command({__proto__: {toJSON() { return {cmd: "echo hijacked"}; }}, cmd: "echo benign"});',
     "hijacked"),
    ("conversion: Symbol.toPrimitive",
     'Object.prototype[Symbol.toPrimitive] = () => "echo hijacked";\n' + CALL, "benign"),
    ("conversion: valueOf", 'Object.prototype.valueOf = () => "echo hijacked";\n' + CALL, "benign"),
    ("conversion: toString", 'String.prototype.toString = () => "echo hijacked";\n' + CALL, "benign"),
    ("getter: defineProperty",
     'Object.defineProperty(Object.prototype, "toJSON", {configurable: true, get() {'
     ' return typeof this.cmd === "string" ? () => ({cmd: "echo hijacked"}) : undefined; }});\n' + CALL, "hijacked"),
    ("getter: __defineGetter__",
     'Object.prototype.__defineGetter__("toJSON", function () {'
     ' return typeof this.cmd === "string" ? () => ({cmd: "echo hijacked"}) : undefined; });\n' + CALL, "hijacked"),
    ("setter: a literal defines its keys",
     'Object.defineProperty(Object.prototype, "cmd", {configurable: true, set(v) {}, get() { return "x"; }});\n'
     + CALL, "benign"),
    ("Proxy in place of tools",
     'globalThis.tools = new Proxy(tools, {get(t, k) {'
     ' return k === "exec_command" ? () => t.exec_command({cmd: "echo hijacked"}) : t[k]; }});\n' + CALL,
     "hijacked"),
    ("Reflect.set", f'Reflect.set(Object.prototype, "toJSON", {HOOK});\n{CALL}', "hijacked"),
    ("Reflect.defineProperty",
     f'Reflect.defineProperty(Object.prototype, "toJSON", {{value: {HOOK}, configurable: true}});\n{CALL}',
     "hijacked"),
    ("tools reassigned", 'globalThis.tools = {exec_command: async () => ({output: ""})};\n' + CALL, "hijacked"),
    ("tools defined on globalThis",
     'Object.defineProperty(globalThis, "tools", {value: {exec_command: async () => ({})}});\n' + CALL,
     "hijacked"),
    ("tools shadowed", "const tools = {exec_command: async () => ({})};\n" + CALL, "hijacked"),
    ("tools member reassigned", "tools.exec_command = async () => ({output: 'fake'});\n" + CALL, "benign"),
    ("with", "with ({}) {}\n" + CALL, "parse"),
    ("eval", f"eval('Object.prototype.toJSON = {HOOK}');\n{CALL}", "hijacked"),
    ("indirect eval", f"(0, eval)('Object.prototype.toJSON = {HOOK}');\n{CALL}", "hijacked"),
    ("Function", f"new Function('Object.prototype.toJSON = {HOOK}')();\n{CALL}", "hijacked"),
    ("Function: reached through a constructor chain",
     f'"".constructor.constructor(\'Object.prototype.toJSON = {HOOK}\')();\n{CALL}', "hijacked"),
    ("Function: reached through computed keys",
     f'const k = "constr" + "uctor";\n""[k][k](\'Object.prototype.toJSON = {HOOK}\')();\n{CALL}', "hijacked"),
    ("globalThis", f"globalThis.Object.prototype.toJSON = {HOOK};\n{CALL}", "hijacked"),
    ("this: a function called on a prototype",
     f"(function () {{ this.toJSON = {HOOK}; }}).call(Object.prototype);\n{CALL}", "hijacked"),
    ("class static block", f"class H {{ static {{ Object.prototype.toJSON = {HOOK}; }} }}\n{CALL}", "hijacked"),
    ("dynamic property access on tools", 'const n = "view_" + "image";\nawait tools[n]({cmd: "echo benign"});',
     "hijacked"),
    ("computed property name", f'const k = "proto" + "type";\nObject[k].toJSON = {HOOK};\n{CALL}', "hijacked"),
    ("computed key in a destructuring pattern: a constructor chain",
     f'const k = "constr" + "uctor";\nconst {{[k]: S}} = "";\nconst {{[k]: F}} = S;\nF(\'Object.prototype.toJSON = {HOOK}\')();\n{CALL}',
     "hijacked"),
    ("computed key in a parameter pattern",
     f'const k = "constr" + "uctor";\nconst g = ({{[k]: S}}) => S;\ng(g(""))(\'Object.prototype.toJSON = {HOOK}\')();\n{CALL}',
     "hijacked"),
    ("computed key in an assignment pattern",
     f'const k = "constr" + "uctor";\nlet S, F;\n({{[k]: S}} = "");\n({{[k]: F}} = S);\nF(\'Object.prototype.toJSON = {HOOK}\')();\n{CALL}',
     "hijacked"),
    ("import", 'import "node:fs";\n' + CALL, "parse"),
    ("import: a default binding", 'import fs from "node:fs";\n' + CALL, "parse"),
    ("import.meta", "const here = import.meta.url;\n" + CALL, "benign"),
    ("dynamic import with a comment", 'await import /* x */ ("data:text/javascript,export default 1");\n' + CALL,
     "failed"),
    ("dynamic import", 'await import("data:text/javascript,export default 1");\n' + CALL, "failed"),
    ("delete", "delete Object.prototype.toString;\n" + CALL, "benign"),
]


def _outcome(v8: OracleResult) -> str:
    if not v8.parsed or v8.verdict == "link":
        return "parse"
    if not v8.completed:
        return "failed"
    sent = [(c.name, c.argument) for c in v8.calls if not c.after_end]
    return "benign" if ("exec_command", BENIGN_ARG) in sent or any(
        n == "shell" and a == {"command": ["bash", "-lc", "echo benign"]} for n, a in sent) else "hijacked"


@pytest.mark.parametrize(("case", "script", "outcome"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_cell_proves_nothing(case: str, script: str, outcome: str) -> None:
    a = analyze(script)
    assert proven_calls(a) == (), case
    if a.parse_error is None:
        assert proof_blocker(script) is not None or not a.calls, case


@pytest.fixture(scope="module")
def witnessed() -> dict[str, OracleResult]:
    return dict(zip([c[0] for c in CASES], run_oracle([c[1] for c in CASES], timeout_ms=1000), strict=True))


@needs_node
@pytest.mark.parametrize(("case", "script", "outcome"), CASES, ids=[c[0] for c in CASES])
def test_v8_witnesses_what_the_hostile_cell_does(case: str, script: str, outcome: str,
                                                 witnessed: dict[str, OracleResult]) -> None:
    """Each case is what its class says: V8 sends another command, or none, where the class can reach
    the call; a class that cannot reach a literal argument still proves nothing (an allow-list).
    ``tools member reassigned``: the oracle's ``tools`` ignores the write, the real Codex runs the
    replacement (``fixtures/witness/*/hostile_cells``, cell 4)."""
    assert _outcome(witnessed[case]) == outcome, (case, witnessed[case])


#: A call the cell may skip, or never reach, by control flow alone (labels, loops, branches): the
#: allow-list lets these tokens through; what withholds the proof is that the call is not on the
#: top-level unconditional path (``Analysis.proven``), or that the cell never completes (a proof holds
#: only for a cell whose output says ``Script completed``).
CONTROL = [
    ("a labelled block broken out of", "skip: { break skip;\n" + CALL + " }", False),
    ("a loop left at once", "do { break;\n" + CALL + " } while (false);", False),
    ("a loop continued past the call", "for (let i = 0; i < 1; i++) { continue;\n" + CALL + " }", False),
    ("a false branch", "if (false) " + CALL, False),
    ("a switch with no matching case", "switch (1) { case 2: " + CALL + " }", False),
    ("a short-circuit", "false && " + CALL.rstrip(";") + ";", False),
    ("an endless loop before the call", "for (;;) {}\n" + CALL, True),
    ("a labelled loop that terminates", "outer: for (;;) { for (;;) { break outer; } }\n" + CALL, True),
]


@pytest.mark.parametrize(("case", "script", "proven"), CONTROL, ids=[c[0] for c in CONTROL])
def test_control_flow_that_may_skip_a_call(case: str, script: str, proven: bool) -> None:
    assert bool(proven_calls(analyze(script))) is proven, case


@needs_node
def test_control_flow_witnessed() -> None:
    """V8 agrees: an unproven call may be skipped (here it is), and a proven call after an endless loop
    belongs to a cell that never completes; after a loop that ends, the call is made."""
    results = run_oracle([c[1] for c in CONTROL], timeout_ms=500)
    for (case, _script, proven), v8 in zip(CONTROL, results, strict=True):
        made = [c for c in v8.calls if not c.after_end]
        if not proven:
            assert not made, case
        elif case.startswith("an endless loop"):
            assert not v8.completed, case
        else:
            assert v8.completed and made, case


#: Statements of ordinary cells, which keep the proof.
PLAIN = [
    "const xs = [1, 2, 3].map((x) => x * 2);",
    'const o = {a: 1, b: [1, 2]};\no.c = 3;',
    'let s = "";\nfor (let i = 0; i < 3; i++) s += `${i}`;',
    "const keys = Object.keys({a: 1});",
    "function helper(a) { return a + 1; }",
    "const all = await Promise.all([1, 2].map(async (x) => x));",
    'try { JSON.parse("{"); } catch (e) { text(String(e)); }',
    'const m = new Map();\nm.set("k", 1);',
    'const lines = "a\\nb".split("\\n");\ntext(`${lines[0]}: ${lines.length}`);',
    'const data = {a: 1};\nfor (const k of Object.keys(data)) text(`${k}=${data[k]}`);',
]


def test_ordinary_cells_keep_their_proof() -> None:
    for plain in PLAIN:
        script = f"{plain}\n{CALL}"
        assert proof_blocker(script) is None, plain
        assert proven_calls(analyze(script)) == (0,), plain


#: The hostile statements of the cases that end with the plain call: each may stand anywhere in a cell.
SETUPS = [c[1].rsplit("\n", 1)[0] for c in CASES if c[1].endswith("\n" + CALL)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PLAIN), max_size=4), st.sampled_from(SETUPS), st.integers(0, 4), st.booleans())
def test_one_hostile_statement_anywhere_withholds_every_proof(plain: list[str], setup: str, at: int,
                                                              after: bool) -> None:
    """Ordinary statements around the proven call, and one hostile cell's setup anywhere (before the
    call or after it: the allow-list reads the whole cell)."""
    body = list(plain)
    body.insert(min(at, len(body)), setup)
    script = "\n".join([*body, CALL] if not after else [CALL, *body])
    assert proven_calls(analyze(script)) == ()


def _sound(script: str, v8: OracleResult) -> list[str]:
    """Every proven call is one V8 made, at its place, with the value the analyzer read."""
    a = analyze(script)
    proven = proven_calls(a)
    if not proven or not v8.completed or v8.exited or v8.limit:
        return []
    made = [(c.name, c.line, c.argument) for c in v8.calls if not c.after_end]
    problems = []
    for i in proven:
        call = a.calls[i]
        if not any(n == call.name and line == call.start.line and arg == call.argument for n, line, arg in made):
            problems.append(f"proven {call.name} (line {call.start.line}) {call.argument!r}; V8 made {made}")
    return problems


@needs_node
def test_a_proof_is_what_v8_does_on_mixed_cells() -> None:
    """600 cells mixing ordinary statements and hostile setups before, between and after the calls:
    whatever the analyzer proves, V8 made, with the value read (a seeded sample, one node process)."""
    rng = random.Random(25)
    setups = SETUPS
    scripts = []
    for _ in range(600):
        parts: list[Any] = rng.sample(PLAIN, rng.randint(0, 3))
        if rng.random() < 0.5:
            parts.insert(rng.randint(0, len(parts)), rng.choice(setups))
        parts.insert(rng.randint(0, len(parts)), CALL)
        if rng.random() < 0.5:
            parts.insert(rng.randint(0, len(parts)), 'await tools.exec_command({cmd: "echo second"});')
        scripts.append("\n".join(parts))
    proven = 0
    bad = []
    for script, v8 in zip(scripts, run_oracle(scripts, timeout_ms=1000), strict=True):
        proven += bool(proven_calls(analyze(script)))
        bad += _sound(script, v8)
    assert proven > 150  # the check is not vacuous: many of these cells keep their proof
    assert not bad, bad[:3]


def test_the_fast_path_accepts_only_what_the_rule_accepts() -> None:
    """``plainly_allowed`` reads the text with regular expressions and lets most cells through without
    the lexer; whatever it accepts, the token rule accepts (every case, ordinary statement, and the
    hostile statements put together in many ways)."""
    from exec_grammar.proof import _token_blocker

    rng = random.Random(7)
    pool = [*PLAIN, *SETUPS, CALL, 'text(`${data[k]}`);', 'x = a[i] === b;', 'const y = Math.max(1, 2);',
            'const s = String.raw`a`;', 'await tools["view_image"]({path: "a"});', "m.get(1); m.set(2, 3);",
            'text("import this; with that; delete those");', "const t = /it's/;", "undefined === x;"]
    scripts = [c[1] for c in CASES] + ["\n".join(rng.sample(pool, rng.randint(1, 5))) for _ in range(2000)]
    accepted = 0
    for script in scripts:
        if analyze(script).parse_error is not None:
            continue  # a script that does not parse proves nothing (the lexer may read it otherwise)
        if plainly_allowed(script):
            accepted += 1
            assert _token_blocker(script) is None, script
    assert accepted > 100
