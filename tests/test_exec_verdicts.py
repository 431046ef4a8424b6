"""Parse verdicts equal V8's: a table of constructs, each with the verdict V8 gave it.

Code-mode cells run as ES modules (strict, top-level await). ``parse``: V8 rejects the module at compile
time, so nothing in it ran; ``runs``: V8 compiles it (it may still throw when it runs: ``f() = 1`` is a
runtime ReferenceError, never a parse error). The verdicts were taken from node's V8 with
``exec_grammar.oracle``; ``test_table_matches_v8`` re-checks them against the oracle when node is
installed, so the table cannot drift from V8.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exec_grammar import analyze
from exec_grammar.oracle import node_path, run_oracle

VERDICTS: list[tuple[str, str]] = [
    ('f()++', 'runs'),
    ('++f()', 'runs'),
    ('new F() = 1', 'parse'),
    ('f()?.x = 1', 'parse'),
    ('(f()) = 1', 'runs'),
    ('a = f() = 1', 'runs'),
    ('f()`` = 1', 'parse'),
    ('[f()] = 1', 'parse'),
    ('({a: f()} = 1)', 'parse'),
    ('for (f() in o);', 'runs'),
    ('for (f() of a);', 'runs'),
    ('for (let x of []) { f() = 1 }', 'runs'),
    ('a + f() = 1', 'parse'),
    ('f() &&= 1', 'parse'),
    ('f() ??= 1', 'parse'),
    ('async () => { for await (f() of a); }', 'runs'),
    ('`\\101`', 'parse'),
    ('x`\\101`', 'runs'),
    ('a <!-- b', 'parse'),
    ('<!-- c\nx', 'parse'),
    ('x = 1;\n--> c', 'parse'),
    ('if (1) function f(){}', 'parse'),
    ('a: function f(){}', 'parse'),
    ("function f(a=1){'use strict'}", 'parse'),
    ('#x in y', 'parse'),
    ('class A { m(){ this.#y } }', 'parse'),
    ('new.target', 'parse'),
    ('let let = 1', 'parse'),
    ('var a; var a', 'runs'),
    ('function f(){} var f', 'parse'),
    ('{ function f(){} var f }', 'parse'),
    ('function g(){ var a; function a(){} }', 'runs'),
    ('function g(a){ let a }', 'parse'),
    ('function g(a){ var a }', 'runs'),
    ('try{}catch(e){let e}', 'parse'),
    ('try{}catch(e){var e}', 'runs'),
    ('try{}catch([e]){var e}', 'parse'),
    ('for (let i;;) { var i }', 'parse'),
    ('label: { break label; }', 'runs'),
    ('y: { continue y; }', 'parse'),
    ('arguments = 1', 'parse'),
    ('let arguments', 'parse'),
    ('function f(eval){}', 'parse'),
    ('class A { constructor(){ super() } }', 'parse'),
    ('class A extends B { constructor(){ super() } }', 'runs'),
    ('({m(){ super.x }})', 'runs'),
    ('({m: function(){ super.x }})', 'parse'),
    ('class A { static constructor(){} constructor(){} }', 'runs'),
    ("class A { 'constructor'(){} constructor(){} }", 'parse'),
    ('class A { get constructor(){} }', 'parse'),
    ('({set x(){}})', 'parse'),
    ('({set x(a,b){}})', 'parse'),
    ('({get x(...a){}})', 'parse'),
    ("({__proto__:1, '__proto__':2})", 'parse'),
    ('({__proto__:1, __proto__(){}})', 'runs'),
    ("({__proto__:1, ['__proto__']:2})", 'runs'),
    ('({__proto__, __proto__:2})', 'runs'),
    ('[...a, b] = c', 'parse'),
    ('function f(...a, b){}', 'parse'),
    ('function f(a, ...b,){}', 'parse'),
    ('1.5in[]', 'parse'),
    ('0x1fin[]', 'parse'),
    ('1_000', 'runs'),
    ('08.5', 'parse'),
    ('0.5', 'runs'),
    ('09', 'parse'),
    ('1n', 'runs'),
    ('0n', 'runs'),
    ('01n', 'parse'),
    ("'\\0'", 'runs'),
    ("'\\00'", 'parse'),
    ("'\\09'", 'parse'),
    ('/(?<a>x)(?<a>y)/', 'parse'),
    ('/a/gg', 'parse'),
    ('/a/x', 'parse'),
    ('/[/', 'parse'),
    ('/(/', 'parse'),
    ('/a{2,1}/', 'parse'),
    ('/\\u{110000}/u', 'parse'),
    ('/{/', 'runs'),
    ('/{/u', 'parse'),
    ('/]/', 'runs'),
    ('/\\1/', 'runs'),
    ('/\\p{L}/u', 'runs'),
    ('/a/v', 'runs'),
    ('/a**/', 'parse'),
    ('/?/', 'parse'),
    ('/(?:a)+?/', 'runs'),
    ('x = /[a-z]+\\d{2,}$/gim', 'runs'),
    ('x = yield', 'parse'),
    ('function* g(){ var yield }', 'parse'),
    ('async function f(){ var await }', 'parse'),
    ('let static', 'parse'),
    ('var package', 'parse'),
    ('let a, a', 'parse'),
    ('const [a, a] = []', 'parse'),
    ('let {a, b: a} = {}', 'parse'),
    ('x\n++y', 'runs'),
    ('a\n=>1', 'parse'),
    ('async\n() => 1', 'parse'),
    ('(a, a) => 1', 'parse'),
    ('function f(a, [a]){}', 'parse'),
    ('({a = 1})', 'parse'),
    ('({a = 1} = {})', 'runs'),
    ('({a: 1} = {})', 'parse'),
    ('[a + b] = c', 'parse'),
    ('((a)) = 1', 'runs'),
    ('({a}) = 1', 'parse'),
    ('delete (x)', 'parse'),
    ('delete x.y', 'runs'),
    ('typeof await', 'parse'),
    ('await', 'parse'),
    ('var await', 'parse'),
    ('with(a);', 'parse'),
    ('with (r) {}', 'parse'),
    ('eval = 1', 'parse'),
    ('eval++', 'parse'),
    ('({eval} = {})', 'parse'),
    ('[eval] = []', 'parse'),
    ('label: label: 1', 'parse'),
    ('a: { a: 1 }', 'parse'),
    ('a: { b: 1 } a: 1', 'runs'),
    ('0 ? 1 : 2 ?? 3 || 4', 'parse'),
    ('(a ?? b) || c', 'runs'),
    ('a || b ?? c', 'parse'),
    ('a ?? (b || c)', 'runs'),
    ('a ?? b && c', 'parse'),
    ('a ?? b || c', 'parse'),
    ('-1 ** 2', 'parse'),
    ('(-1) ** 2', 'runs'),
    ('async function f(){ await 1 }; function g(){ await 1 }', 'parse'),
    ('({ m(){ await 1 } })', 'parse'),
    ('class A { m(){ await 1 } }', 'parse'),
    ('class A { static { await 1 } }', 'parse'),
    ('class A { x = await 1 }', 'parse'),
    ('function f(){ return } return', 'parse'),
    ("'use strict'; 010", 'parse'),
    ('`${a}\\01`', 'parse'),
    ('`\\u{110000}`', 'parse'),
    ('x`\\u{110000}`', 'runs'),
    ("'\\u{10FFFF}'", 'runs'),
    ("'\\u{110000}'", 'parse'),
    ('\\u{110000}', 'parse'),
    ('var \\u0061wait', 'parse'),
    ('var \\u{74}ools = 1', 'runs'),
    ('a\\u0020b', 'parse'),
    ('\\u0061 = 1', 'runs'),
    ('function f(){ new.target }', 'runs'),
    ('() => new.target', 'parse'),
    ('import.meta', 'runs'),
    ('export const a = 1', 'runs'),
    ('let [a] = [], a = 1', 'parse'),
    ('if (a) let b = 1', 'parse'),
    ('while (1) const a = 1', 'parse'),
    ('for (const a;;);', 'parse'),
    ('for (const a in b);', 'runs'),
    ('for (let a = 1 of b);', 'parse'),
    ('for (var a = 1 in b);', 'parse'),
    ('017', 'parse'),
    ("'\\101'", 'parse'),
    ("'\\8'", 'parse'),
    ('08', 'parse'),
    ('delete x', 'parse'),
    ('function f(a, a) {}', 'parse'),
    ('var implements', 'parse'),
    ('var interface', 'parse'),
    ('break;', 'parse'),
    ('const a;', 'parse'),
    ('super.x', 'parse'),
    ('()\n=>1', 'parse'),
    ('({get x(a){}})', 'parse'),
    ('class A { constructor(){} constructor(){} }', 'parse'),
    ('({__proto__: 1, __proto__: 2})', 'parse'),
    ('({...a, b} = c)', 'parse'),
    ('3in[]', 'parse'),
    ('var a; let a', 'parse'),
    ('let a; var a', 'parse'),
    ('{function f(){} function f(){}}', 'parse'),
    ('f() = 1', 'runs'),
    ('f() += 1', 'runs'),
    ('f() >>>= 1', 'runs'),
    ('x.y(z) = 1', 'runs'),
    ('continue;', 'parse'),
    ('x: x: ;', 'parse'),
    ('var a = 1; { let a = 2 }', 'runs'),
    ('let a = 1; { var a = 2 }', 'parse'),
    ('function f(){ let a; { var a } }', 'parse'),
    ('switch (1) { case 1: let a; case 2: let a }', 'parse'),
    ('class A { #a; m(){ return this.#a } }', 'runs'),
    ('class A { static #a = 1; static m(){ return #a in A } }', 'runs'),
    ('x = { async *m(){ yield 1; await 2 } }', 'runs'),
    ('label: for(;;) { break label }', 'runs'),
    ('a: while (1) { b: { continue a } }', 'runs'),
    ("const r = await tools.exec_command({cmd: 'ls'});\ntext(r.output);", 'runs'),
    ('const {a, b} = await tools.x({}); const [c] = a;', 'runs'),
    ('for (const x of [1]) { const x2 = x; }', 'runs'),
    ('let x = 1; x = 2; x++;', 'runs'),
    ('class A { static m() {} get g() { return 1 } set s(v) {} }', 'runs'),
    ('label: { break label }', 'runs'),
    # `let`, a line break, a name: V8 reads a declaration (a strict `let` is never a name), tree-sitter
    # `let;` and a second statement (the fuzz case `let` / `out ||= …`)
    ('let\nout ||= 1;', 'parse'),
    ('let\nout += 1', 'parse'),
    ('let\nout(1)', 'parse'),
    ('let\nout.x = 1', 'parse'),
    ('let\nout\n.x', 'parse'),
    ('let\nout == 1', 'parse'),
    ('let\nx ? 1 : 2', 'parse'),
    ('let\nif (1) {}', 'parse'),
    ('var out; let\nout = 1;', 'parse'),
    ('function f(){ let\nx = 1; let\nx = 2 }', 'parse'),
    ('let\nout = 1;', 'runs'),
    ('let\nout\n= 1', 'runs'),
    ('let\nout, b = 2', 'runs'),
    ('let\nout\n(1)', 'runs'),
    ('let\nout\n+1', 'runs'),
    ('{ let\nout }', 'runs'),
    ('let\nout', 'runs'),
    ('let\nx\n.5', 'runs'),
    ('let\nof = 1', 'runs'),
    ('let\ninput = 1', 'runs'),
    ('let\noffset = 1', 'runs'),
    ('let\nout /* c */ = 1', 'runs'),
    ('let\nx;\nx ||= 1', 'runs'),
    # fuzz finds (5-minute run): a property where a declaration binds a name; `await`, a line break,
    # an expression (tree-sitter reads `await;` and a statement, V8 `await <expression>`); a regex in
    # a comment run after a block
    ('const {a, ...r.est} = {a: 1}', 'parse'),
    ('const {a: o.x} = v', 'parse'),
    ('let [o.x] = v', 'parse'),
    ('var {a: b[0]} = v', 'parse'),
    ('for (const {a: o.b} of x) {}', 'parse'),
    ('const [a, ...b.c] = v', 'parse'),
    ('({a: o.x} = v)', 'runs'),
    ('const {a = o.x} = {}', 'runs'),
    ('const {[k.x]: v} = o', 'runs'),
    ('try {\nawait \nfoo()\n} finally {}', 'runs'),
    ('({m() {}});\ntry {\nawait \nfoo()\n} finally {}', 'runs'),
    ('({m() {}});\nfunction f() { await\nfoo() }', 'parse'),
    ('for await (const l of a, b) {}', 'parse'),
    ('for await (const l of [a, b]) {}', 'runs'),
    ("let ok = true;\ntry { f(); } catch { ok = false; }\n" + "/**/" * 40 + "/\\**/" + "/**/" * 40 + "\ntext(String(ok));",
     'runs'),
    # this session's fuzz findings and known limits, each checked against V8
    # `await`, a line break, an operand inside a declaration; a sum assigned after a comma (seed 16)
    ('({m() {}});\nconst issue = await\n f();', 'runs'),
    ('({m() {}});\nconst issue = await\n;', 'parse'),
    ('x, a + f() = 1;', 'parse'),
    ('x, f() = 1;', 'runs'),
    ('f() = 1, x', 'runs'),
    ('x, (f()) = 1', 'runs'),
    # a member access as a function's parameter; an assignment to a call as an argument (seed 14)
    ('function run(cmd, wor.kdir = "/repo") {}', 'parse'),
    ('function run(wor.kdir) {}', 'parse'),
    ('async function run(a.b) {}', 'parse'),
    ('({m(a.b) {}})', 'parse'),
    ('function* g(x.y) {}', 'parse'),
    ('function f(a = b.c) {}', 'runs'),
    ('f(g() = 1)', 'runs'),
    ('f(g() =+ 1)', 'runs'),
    ('f(a, g() += 1, b)', 'runs'),
    ('[g() = 1]', 'runs'),
    ('f(g() = 1, h() = 2)', 'runs'),
    ('f(a + g() = 1)', 'parse'),
    ('[g() = 1] = x', 'parse'),
    # a label declared again inside its own body, at any depth
    ('a: { a: 1; }', 'parse'),
    ('a: { b: 1; a: 2; }', 'parse'),
    ('a: while (1) { a: ; }', 'parse'),
    ('a: { f(); a: 1 }', 'parse'),
    ('a: if (x) { a: ; }', 'parse'),
    ('a: for (;;) { b: { a: break a; } }', 'parse'),
    ('a: try { a: ; } finally {}', 'parse'),
    ('a: switch (x) { case 1: a: ; }', 'parse'),
    ('a: {} a: {}', 'runs'),
    ('a: { function f() { a: ; } }', 'runs'),
    ('x = {a: {a: 1}}', 'runs'),
    ('const o = {a: {}}; a: ;', 'runs'),
    # a template tagging an optional chain; `async function` starting an expression statement
    ('a?.b`x`', 'parse'),
    ('a?.b.c`x`', 'parse'),
    ('a?.(1)`x`', 'parse'),
    ('a?.[1]`x`', 'parse'),
    ('a?.b.c(1)`x`', 'parse'),
    ('(a?.b)`x`', 'runs'),
    ('a?.b(`x`)', 'runs'),
    ('x = `${a?.b}`', 'runs'),
    ('async function f() {}, 1', 'parse'),
    ('async function* f() {}\n, 1', 'parse'),
    ('x; async function f() {}.x', 'parse'),
    ('async function f() {}\nf()', 'runs'),
    ('x = async function () {}, 1', 'runs'),
    # `let`/`const` redeclaring a method's parameter
    ('({m(a) { let a; }})', 'parse'),
    ('class C { m(a) { let a; } }', 'parse'),
    ('({m(a) { const a = 1; }})', 'parse'),
    ('({get x() { let a; }, set x(a) { let a; }})', 'parse'),
    ('class C { static m(a) { let a } }', 'parse'),
    ('({async m(a) { let a }})', 'parse'),
    ('({*m(a) { let a }})', 'parse'),
    ('class C { constructor(a) { let a } }', 'parse'),
    ('({m({a}) { let a }})', 'parse'),
    ('class C { [k](a) { let a } }', 'parse'),
    ('({"m"(a) { let a }})', 'parse'),
    ('({m(a) { { let a } }})', 'runs'),
    ('({m(a) { var a }})', 'runs'),
    ('({m(a) {}}); let a', 'runs'),
    ('f(a) \n{ let a }', 'runs'),
    # a `{` where a statement or an arrow body starts is a block (tree-sitter reads an object)
    ('a:{a:1}', 'parse'),
    ('a: {b: {a: 1}}', 'parse'),
    ('a: { b: { a: 1 } }', 'parse'),
    ('x => {a: {a: 1}}', 'parse'),
    ('function f() {a: {a: 1}}', 'parse'),
    ('({m() {a: {a: 1}}})', 'parse'),
    ('a: { x => { a: 1 } }', 'runs'),
    ('a:{b:1}\nb:{c:2}', 'runs'),
    ('{a: b: 1}', 'runs'),
    ('{a: 1}', 'runs'),
    ('{a:1, b:2}', 'parse'),
    ('{ a: 1, b: 2 }', 'parse'),
    ('{a: {b: 1, c: 2}}', 'parse'),
    ('{m() {}}', 'parse'),
    ("{'a': 1}", 'parse'),
    ('{a} = b', 'parse'),
    ('x => {a} = b', 'parse'),
    ('{a: 1}\n/x/g', 'runs'),
    ('if (x) {a: function(){}}', 'parse'),
    ('{a: function f(){}}', 'parse'),
    ('{a: class {}}', 'parse'),
    ('{a: async function(){}}', 'parse'),
    ('{a: async () => 1}', 'runs'),
    ('ec: {"yield_time_ms": 20000, "max_output_tokens": 2000}', 'parse'),
    # an arrow function with a block body is no operand, callee or object (a line break ends it)
    ('x => {}.b', 'parse'),
    ('x => {}(1)', 'parse'),
    ('x => {}[0]', 'parse'),
    ('x => {}`t`', 'parse'),
    ('x => {} + 1', 'parse'),
    ('x => {} ? 1 : 2', 'parse'),
    ('x => {}++', 'parse'),
    ('x => {}?.b', 'parse'),
    ('async x => {}.b', 'parse'),
    ('x => {a:1}.b', 'parse'),
    ('x => {} = 1', 'parse'),
    ('x => {}\n(1)', 'runs'),
    ('x => {} // c\n(1)', 'runs'),
    ('a = x => {}\n+1', 'runs'),
    ('x => {}, 1', 'runs'),
    ('(x => {})(1)', 'runs'),
    ('a ? x => {} : 2', 'runs'),
    ('[1].map(x => {\n  return x;\n}).join()', 'runs'),
    # `await`, then (comments skipped) something that cannot be its operand
    ('const m = await //c\nif (x) {}', 'parse'),
    ('const m = await\nif (x) {}', 'parse'),
    ('await\nif (x) {}', 'parse'),
    ('const m = await\nwhile (x) {}', 'parse'),
    ('const m = await\nlet y = 1', 'parse'),
    ('const m = await /**/ ;', 'parse'),
    ('await //c\n;', 'parse'),
    ('await /* */ if (x) {}', 'parse'),
    ('const m = await //tools.apply_patch(.*)/.exec("tools.apply_patch(foo)");\nif (x) {\ntext(String(m));\n}\n', 'parse'),
    ('await //c\nfoo()', 'runs'),
    ('x = await //c\nfoo()', 'runs'),
    ('await /*c*/\nfoo()', 'runs'),
    ('await /*\n*/ foo()', 'runs'),
    ('await\n/x/.test(s)', 'runs'),
    ('await\nof', 'runs'),
    # a `/*` that never ends is an unterminated comment, never a regular expression
    ('a; /**{/\nb()\n', 'parse'),
    ('/**{/\n', 'parse'),
    ('a /* */ /* b */ /**{/ c', 'parse'),
    ('x = "/*"', 'runs'),
]

@pytest.mark.parametrize("script,verdict", VERDICTS, ids=[s[:40] for s, _ in VERDICTS])
def test_verdict_equals_v8(script: str, verdict: str) -> None:
    a = analyze(script)
    assert (a.parse_error is None) == (verdict == "runs"), a.parse_error


def test_table_matches_v8() -> None:
    if node_path() is None:
        pytest.skip("node is not installed: the table's verdicts cannot be re-checked against V8")
    scripts = [s for s, _ in VERDICTS]
    got = [("parse" if r.verdict == "parse" else "runs") for r in run_oracle(scripts, timeout_ms=200)]
    assert [(s, g) for s, g in zip(scripts, got)] == VERDICTS


def test_runtime_error_keeps_the_calls_before_it() -> None:
    """The 0.144 cell of the issue: V8 runs the command, then fails on ``done() = 1``."""
    a = analyze("const r = await tools.exec_command({cmd: 'rm -rf build && make'});\ndone() = 1;")
    assert a.parse_error is None
    assert [e.command for e in a.entries] == ["rm -rf build && make"]


#: Inputs the differential fuzzer (``corpus_tools.fuzz_exec``) found where the analyzer and V8 disagreed,
#: kept whole, with V8's verdict and the message it gave.
FUZZ_FINDINGS = {
    # `export⏎let⏎out = …` exports `out`: a second `export {out}` is a duplicate
    "export_of_a_let_split_over_three_lines_exported_again.js": ("parse", "Duplicate export of 'out'"),
    # `let⏎out = …` is one declaration of `out` (tree-sitter split it at the line break)
    "export_of_a_let_whose_name_is_on_the_next_line.js": ("ok", None),
    # `-->` first on its line inside a template's `${}`: no comment in a module; tree-sitter read `a--`
    "html_close_comment_first_on_a_line_inside_a_template.js": ("parse", "Missing } in template expression"),
    # `do await⏎1; while (x)`: tree-sitter cannot read the cell until the line after `await` is its
    # operand; then the module rule (a top-level function declared twice) holds
    "duplicate_function_after_an_await_ended_by_a_line_break.js": ("parse", "Identifier 'b' has already been declared"),
    # `await` at a line's end takes the next line as its operand: `class b {}` there is an expression
    "export_of_a_class_that_a_bare_await_takes_as_its_operand.js": ("parse", "Export 'b' is not defined in module"),
    # `using[a, …]` reads the variable `using`; it declares no `a` for `export {a}` to name
    "export_of_an_element_of_the_variable_using.js": ("parse", "Export 'a' is not defined in module"),
    # `import n{} from ""`: a default binding and the braces after it need a comma between them
    "import_of_a_default_and_braces_without_a_comma.js": ("parse", "Unexpected token '{'"),
    # a name declared or exported with escapes (`let \u0063`, `export {\u0063 as d}`) is the plain name
    "export_of_names_declared_with_escapes.js": ("ok", None),
    # `function \u{62}(){} var b`: the escaped name is `b`, declared twice at a module's top level
    "function_named_by_an_escape_and_a_var_of_the_same_name.js": ("parse", "Identifier 'b' has already been declared"),
    # `for (f(/]/ ) in o)`: the `]` in the regex was counted as a bracket, so the head was not repaired
    # and the module rule on the `await` before it went unchecked
    "await_in_an_arrow_before_a_for_in_call_with_a_regex.js": ("parse", "Unexpected reserved word"),
    # `(async () => {\n  workdir: "/tmp",\n})()`: an arrow body V8 reads as a block with a label
    "arrow_body_labels_after_a_broken_template.js": ("parse", "Unexpected token '}'"),
    # `await //…` then `if (x)`: the comment hides the line break; `if` cannot be await's operand
    "await_then_a_comment_then_if.js": ("parse", "Unexpected token 'if'"),
    # `/**{/` after 100 comments: a comment that never ends, which tree-sitter read as a regex
    "unterminated_comment_after_a_comment_run.js": ("parse", "Invalid or unexpected token"),
    # `// @ex\nec: {"yield_time_ms": …}`: a label on a block whose "key" is a string
    "pragma_line_split_into_a_label.js": ("parse", "Unexpected token ':'"),
    # a second `async function* lines` then `,`: tree-sitter read an expression, V8 a redeclaration
    "async_generator_redeclared_then_a_comma.js": ("parse", "Identifier 'lines' has already been declared"),
    # `cfg?.server?.port `…``: a template cannot tag an optional chain
    "template_tagging_an_optional_chain.js": ("parse", "missing ) after argument list"),
    # `async function run(cmd, wor.kdir = "/repo")`: a parameter that is a property
    "member_access_as_a_parameter.js": ("parse", "Unexpected token '.'"),
    # `text(String(ratio) =+ weird + f())`: V8 compiles it and throws when the line runs
    "assignment_to_a_call_inside_arguments.js": ("runtime", "ReferenceError: Invalid left-hand side in assignment"),
    # `const issue = await` / `tools.mcp__github__get_issue(…)`: one await expression for V8
    "await_line_break_in_a_declaration.js": ("runtime", "TypeError: Cannot read properties of undefined (reading 'slice')"),
    # `tools.exec_command(…),` / `a + f() = 1;`: the target is a sum, not a call
    "sum_assigned_after_a_comma.js": ("parse", "Invalid left-hand side in assignment"),
    # a module's top-level `return`, in a cell tree-sitter reads only once the export is rewritten, the
    # `for (f() in …)` head repaired and `using r = …` kept a declaration, all three together
    "return_after_for_in_call_export_and_using.js": ("parse", "Illegal return statement"),
    # `do n++` / `while (n < 3) import "./a.js"`: a line break ends the body, the do-while needs no `;`,
    # and the import is a top-level declaration (V8 compiles the module; linking it fails)
    "import_after_a_do_while_ended_by_a_line_break.js": ("link", "Error: imports are not available in code mode"),
    # `export {a}` / `using a = …`: a using declaration declares `a` in the module's scope
    "export_of_a_using_declaration.js": ("ok", None),
    # `return` in a class static block after an instance field: the spec and node's V8 reject it; the
    # embedded V8 14 compiles it, so the module rules check it too
    "return_in_a_static_block_after_a_field.js": ("parse", "Illegal return statement"),
}
_FUZZ_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "js" / "fuzz"


@pytest.mark.parametrize("name", sorted(FUZZ_FINDINGS))
def test_fuzz_findings_have_v8s_verdict(name: str) -> None:
    a = analyze((_FUZZ_DIR / name).read_text(encoding="utf-8"))
    assert (a.parse_error is None) == (FUZZ_FINDINGS[name][0] != "parse"), a.parse_error


def test_fuzz_findings_match_v8() -> None:
    if node_path() is None:
        pytest.skip("node is not installed: the fuzz findings' verdicts cannot be re-checked against V8")
    names = sorted(FUZZ_FINDINGS)
    # a generous run time: no cell here loops, and on a loaded machine node's own set-up of a context can
    # take longer than a few hundred milliseconds, which would read as a `timeout` verdict
    got = run_oracle([(_FUZZ_DIR / n).read_text(encoding="utf-8") for n in names], timeout_ms=5000)
    assert [(n, r.verdict, r.error) for n, r in zip(names, got)] == [
        (n, v, f"SyntaxError: {e}" if v == "parse" else e) for n, (v, e) in ((n, FUZZ_FINDINGS[n]) for n in names)
    ]
