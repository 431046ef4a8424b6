"""Inputs for the verdict fuzzer (``corpus_tools.fuzz_exec``): cells from a small JavaScript grammar and
token-level mutants of real cells, both aimed at the rules by which a module differs from a script or a
function body.

A verdict differs between the module Codex compiles and the strict async function body the reader hands
to V8 only through constructs whose meaning depends on where they stand: ``return``, ``new.target``,
``super``, ``arguments``, ``await`` and ``yield`` as keywords or names, ``import``/``export`` (duplicate
or unresolved exports, ``export default`` twice, ``import.meta``), labels, HTML-like comments
(``<!--`` anywhere, ``-->`` at a line start), function declarations in blocks and labels, hashbangs,
regex flags and groups. The grammar puts them at the top level, in blocks, in every kind of function,
class member and loop; the mutations move real code across those boundaries one token at a time.
Everything is drawn from a ``random.Random``, so a seed gives the same inputs every time.
"""

from __future__ import annotations

import random
from typing import Any

from exec_grammar.lexer import SIGNIFICANT, TokenKind, iter_tokens

__all__ = ["VOCABULARY", "grammar_cell", "token_mutant"]

#: Names whose meaning changes with the context (reserved in strict code or modules, contextual
#: keywords, the names early errors look at).
NAMES = (
    "a", "b", "x", "f", "tools", "await", "yield", "arguments", "eval", "let", "static", "async", "of",
    "get", "set", "target", "meta", "implements", "package", "interface", "enum", "undefined", "using",
    "\\u0061wait", "\\u{62}", "aw\\u0061it", "default", "as", "from",
)
#: Tokens inserted or substituted by the mutations.
VOCABULARY = (
    "return", "return;", "new.target", "new . target", "import.meta", "import.meta.url", "import(x)",
    "export", "export default", "export {a}", "export {a as default}", "export *", "await", "await;",
    "yield", "yield*", "arguments", "eval", "super", "super.x", "super()", "this", "let", "const", "var",
    "static", "async", "function", "function*", "async function", "class", "extends", "new", "delete",
    "typeof", "void", "in", "of", "instanceof", "with", "debugger", "break", "continue", "break L;",
    "continue L;", "L:", "M:", "case", "default", "switch", "try", "catch", "finally", "throw", "if",
    "else", "for", "while", "do", "<!--", "-->", "\n-->", "\n<!--", "/*", "*/", "//", "#!", "=>",
    "...", "?.", "??", "??=", "&&=", "||=", "**", "++", "--", "=", "==", "=>", "#x", "@",
    "/a/g", "/a/gg", "/a/v", "/[a/", "/(?i:a)/", "/(?<n>a)|(?<n>b)/", "/\\k<n>/", "/a/d", "/a/u",
    "/(?<n>a)(?<n>b)/", "/{/u", "/]/", "/a/x",
    "017", "08", "0o8", "1_000", "1__0", "1n", "01n", "0x", "1e", ".5", "5.", "1..x",
    "'\\08'", "'\\7'", "'\\u{110000}'", "'\\x4'", "`\\01`", "x`\\01`", "'\\u2028'", "\"\u2028\"",
    "`${`", "}`", "${", "{", "}", "(", ")", "[", "]", ";", ",", ":", "?", ".", "\n", " ",
    "using", "await using", "get", "set", "accessor", "#!/usr/bin/env node\n",
)
_STRINGS = ("'m'", '"./a.js"', "'node:fs'")
_LABELS = ("L", "M", "await", "yield", "let", "async")
_REGEX = (
    "/a/", "/a/gimsuy", "/a/d", "/a/v", "/[\\p{L}--[a]]/v", "/a/gg", "/a/z", "/(?i:a)/", "/(?-i:a)/",
    "/(?i-i:a)/", "/(?<n>a)|(?<n>b)/", "/(?<n>a)(?<n>b)/", "/\\k<n>/", "/(?<n>a)\\k<n>/", "/\\k<n>/u",
    "/{1}/", "/a{1/", "/a{1/u", "/]/", "/]/u", "/\\p{L}/u", "/\\p{Nope}/u", "/(?<=a)b/", "/[b-a]/",
    "/\\1(a)/", "/\\8/", "/\\8/u", "/(?<𝒜>a)/", "/[/]/", "/a/\\u0067",
)
_NUMBERS = ("0", "1", "017", "08", "09.5", "0o17", "0b1", "0x1f", "1_000", "1n", "0n", "1e3", ".5", "07n", "0.0")
_STRING_LITS = ("'s'", '"d"', "'\\08'", "'\\0'", "'\\7'", "'\\u{41}'", "'\\u{110000}'", "'\\x41'", "`t`",
                "`\\07`", "`a${1}b`", "'\\\n'", "'<!--'", "`-->`")


class _Gen:
    """One cell: ``depth`` bounds nesting, and the context (function kind, loop, labels, class) steers
    what is drawn without forbidding anything: a wrong place is a test of the verdict too."""

    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd
        self.budget = 40  # statements and expressions left in this cell
        #: how often a draw may be odd (a reserved name, a module-only construct, a wrong place); the
        #: rest of the cell is ordinary code with fresh names, so one odd construct decides the verdict
        self.p = rnd.choice((0.0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.2))
        self.fresh = 0
        #: whether the innermost function is async (the cell itself is: top-level await)
        self.asyncs = [True]

    def odd(self) -> bool:
        return self.r.random() < self.p

    def new_name(self) -> str:
        self.fresh += 1
        return f"v{self.fresh}"

    def pick(self, *options: Any) -> Any:
        return self.r.choice(options)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # expressions -------------------------------------------------------------------------------
    def name(self) -> str:
        return self.r.choice(NAMES) if self.odd() else self.pick("a", "b", "x", "f")

    def primary(self, d: int) -> str:
        c = self.r.randrange(22) if self.odd() else self.pick(0, 1, 4, 5, 8, 9, 11, 12, 13, 14, 16, 16, 17)
        if c < 4:
            return self.name()
        if c == 4:
            return self.r.choice(_NUMBERS) if self.odd() else self.pick("1", "0x1f", "1_000", "1n", ".5", "2e3")
        if c == 5:
            return self.r.choice(_STRING_LITS) if self.odd() else self.pick("'s'", '"d"', "`t`", "'\\u{41}'", "'a\\nb'")
        if c == 6:
            return self.r.choice(_REGEX)
        if c == 7:
            return self.pick("new.target", "import.meta", "import.meta.url", "import('m')", "super.x",
                             "super()", "super[x]", "this", "arguments", "arguments[0]", "eval")
        if c == 8:
            return self.function(d, expression=True)
        if c == 9:
            return self.arrow(d)
        if c == 10:
            return self.cls(d, expression=True)
        if c == 11:
            return "[" + ", ".join(self.expr(d + 1) for _ in range(self.r.randrange(3))) + "]"
        if c == 12:
            return self.obj(d)
        if c == 13:
            return f"`a${{{self.expr(d + 1)}}}b`"
        if c == 14:
            if not self.asyncs[-1] and not self.odd():
                return self.name()
            return f"await {self.primary(d + 1)}"
        if c == 15:
            return self.pick("yield", "yield x", "yield* x", "yield\nx")
        if c == 16:
            return "tools." + self.pick("exec_command", "apply_patch", "view_image") + "({cmd: 'ls'})"
        if c == 17:
            return f"({self.expr(d + 1)})"
        if c == 18:
            return f"{self.name()}`x`"
        if c == 19:
            return f"new {self.pick('F', 'x.y', 'F()', 'target')}"
        if c == 20:
            return self.pick("a?.b", "a?.()", "a?.[0]", "a?.b`t`", "new a?.b()", "a?.b = 1", "a?.b.c", "a ?? b")
        return f"{self.pick('delete', 'typeof', 'void', '-', '!', '~', '++', '--')} {self.primary(d + 1)}"

    def expr(self, d: int = 0) -> str:
        self.budget -= 1
        if d > 3 or self.budget < 0:
            return self.pick(self.name(), "1", "'s'")
        e = self.primary(d)
        c = self.r.randrange(10)
        if c in (1, 5) and not self.odd():
            c = 9  # an assignment or ++ on an arbitrary operand: mostly an error, so an odd draw
        if c == 0:
            op = self.pick("+", "**", "??", "||", "&&", "in", "instanceof", "==", "<", ">", "-", ",")
            e = f"{e} {op} {self.primary(d + 1)}"
        elif c == 1:
            e = f"{e} {self.pick('=', '+=', '&&=', '??=', '**=')} {self.expr(d + 1)}"
        elif c == 2:
            e = f"{e}({', '.join(self.expr(d + 1) for _ in range(self.r.randrange(3)))})"
        elif c == 3:
            e = f"{e}.{self.pick('x', 'then', 'await', 'yield', 'return', 'new', '#p', 'target') if self.odd() else 'x'}"
        elif c == 4:
            e = f"{e} ? {self.expr(d + 1)} : {self.expr(d + 1)}"
        elif c == 5:
            e = f"{e}{self.pick('++', '--')}"
        return e

    def params(self, d: int) -> str:
        ps = [self.pick(self.name(), "[a]", "{a}", "a = 1", "...a", "a = await", "a = yield", "b = x")
              if self.odd() else self.new_name() for _ in range(self.r.randrange(3))]
        return ", ".join(ps)

    def body(self, d: int, is_async: bool | None = None) -> str:
        prologue = "'use strict'; " if self.odd() and self.chance(0.2) else ""
        if is_async is not None:
            self.asyncs.append(is_async)
        try:
            return "{ " + prologue + self.stmts(d + 1, self.r.randrange(3)) + " }"
        finally:
            if is_async is not None:
                self.asyncs.pop()

    def function(self, d: int, expression: bool = False) -> str:
        head = self.pick("function", "function*", "async function", "async function*")
        name = "" if expression and self.chance(0.5) else " " + (self.name() if self.odd() else self.new_name())
        return f"{head}{name}({self.params(d)}) {self.body(d, head.startswith('async'))}"

    def arrow(self, d: int) -> str:
        a = "async " if self.chance(0.4) else ""
        params = self.pick(self.name(), f"({self.params(d)})") if self.odd() else f"({self.params(d)})"
        self.asyncs.append(bool(a) or self.asyncs[-1] and self.odd())
        try:
            body = self.body(d) if self.chance(0.5) else f"({self.expr(d + 1)})"
        finally:
            self.asyncs.pop()
        return f"{a}{params} => {body}"

    def member(self, d: int) -> str:
        static = "static " if self.chance(0.3) else ""
        c = self.r.randrange(7)
        if c == 0:
            kind = self.pick("", "async ", "*", "async *", "get ", "set ")
            key = self.pick("m", "constructor", "#p", "await", "prototype") if self.odd() else "m"
            return f"{static}{kind}{key}({self.params(d)}) {self.body(d, kind.startswith('async'))}"
        if c == 1:
            key = self.pick("x", "#p", "await", "arguments", "constructor") if self.odd() else "x"
            self.asyncs.append(False)
            try:
                return f"{static}{key} = {self.expr(d + 1)};"
            finally:
                self.asyncs.pop()
        if c == 2:
            return f"static {self.body(d, False)}"
        if c == 3:
            return f"constructor() {{ {self.pick('super();', 'super.x;', 'new.target;', 'return;')} }}"
        return f"{static}{self.pick('x', '#p')};"

    def cls(self, d: int, expression: bool = False) -> str:
        if expression and self.chance(0.5):
            name = ""
        else:
            name = " " + (self.pick("C", "K", "await", "yield", "let", "tools") if self.odd() else self.new_name())
        ext = f" extends {self.pick('B', 'null', 'await x', 'yield', 'f()')}" if self.chance(0.3) else ""
        members = " ".join(self.member(d + 1) for _ in range(self.r.randrange(3)))
        return f"class{name}{ext} {{ {members} }}"

    def obj(self, d: int) -> str:
        props = []
        for _ in range(self.r.randrange(4)):
            props.append(self.pick(
                f"a: {self.expr(d + 1)}", "a", "await", "yield", "arguments", "__proto__: 1", "'__proto__': 2",
                f"get g() {self.body(d)}", f"set s(v) {self.body(d)}", f"m() {self.body(d)}",
                f"async m() {self.body(d)}", f"[{self.expr(d + 1)}]: 1", "...a", "a = 1", "super: 1",
                "m() { return super.x; }",
            ))
        return "({" + ", ".join(props) + "})"

    # statements --------------------------------------------------------------------------------
    def module_item(self) -> str:
        c = self.r.randrange(16)
        if c == 4 and not self.odd():
            return f"export {self.pick('const', 'let', 'var')} {self.new_name()} = {self.expr(1)};"
        s = self.r.choice(_STRINGS)
        if c == 0:
            return f"import {self.pick('a', 'await', 'yield', 'arguments', 'eval', 'let', 'x')} from {s};"
        if c == 1:
            spec = self.pick("a", "a as b", "b as a", "default as d", "await", "x as await", "if as i", "'s' as t")
            return f"import {{{spec}}} from {s};"
        if c == 2:
            attrs = self.pick("", ' with {type: "json"}', ' assert {type: "json"}')
            return f"import * as {self.pick('ns', 'a', 'await')} from {s}{attrs};"
        if c == 3:
            return f"import {s};"
        if c == 4:
            return f"export {self.pick('const', 'let', 'var')} {self.pick('a', 'b', 'x', 'default', 'await')} = {self.expr(1)};"
        if c == 5:
            return f"export default {self.pick(self.expr(1) + ';', self.function(1, True), self.cls(1, True), 'async function () {}', 'function* g() {}', 'let', 'await 1;')}"
        if c == 6:
            spec = self.pick("a", "a as b", "a as default", "b", "x as a", "a, a", "a as b, b as b", "a as 's'",
                             "undeclared", "await", "arguments", "eval", "if")
            return f"export {{{spec}}};"
        if c == 7:
            spec = self.pick("*", "* as ns", "* as default", "{a}", "{default}", "{a as b}", "{'s'}", "{if}",
                             '{"\\uD800" as b}')
            return f"export {spec} from {s};"
        if c == 8:
            return f"export {self.function(1)}"
        if c == 9:
            return f"export {self.cls(1)}"
        if c == 10:
            return "export " + self.pick("", "default", "{}", "{a}", "*", "let", "default default", "async function", "import")
        return self.pick("let a, b, x;", "var a, b, x;", "function a() {}", "class b {}", "const x = 1;", "let f;")

    def stmt(self, d: int) -> str:
        self.budget -= 1
        if d > 3 or self.budget < 0:
            return self.pick(";", "a;", f"{self.expr(3)};")
        c = self.r.randrange(30) if self.odd() else self.pick(0, 4, 8, 9, 10, 13, 14, 15, 16, 17, 20, 23)
        if c < 4:
            return f"{self.expr(d)};"
        if c < 6:
            if not self.odd():
                return f"{self.pick('let', 'const', 'var')} {self.new_name()} = {self.expr(d)};"
            return f"{self.pick('let', 'const', 'var', 'using', 'await using')} {self.pick(self.name(), '[a]', '{a}', '[a, a]', '{a, b: a}')} = {self.expr(d)};"
        if c < 8:
            return self.pick("return;", "return 1;", f"return {self.expr(d)};", "return\n1;")
        if c == 8:
            return f"if ({self.expr(d)}) {self.sub(d)}{self.pick('', ' else ' + self.sub(d))}"
        if c == 9:
            loop = self.pick("for (;;)", "for (const a of b)", "for (let a in b)", "for await (const a of b)",
                             "while (x)", "for (x of [])")
            if self.odd():
                loop = self.pick("for (var a = 1 in b)", "for (let of x)", "for (async of x)", "for await (x in y)")
            return f"{loop} {self.sub(d)}"
        if c == 10:
            return f"do {self.sub(d)} while (x)"
        if c == 11:
            return f"{self.r.choice(_LABELS) if self.odd() else 'L'}: {self.sub(d)}"
        if c == 12:
            return self.pick("break;", "continue;", "break L;", "continue L;", "break await;")
        if c == 13:
            return self.function(d)
        if c == 14:
            return self.cls(d)
        if c == 15:
            catch = self.pick("catch (e) ", "catch ", "catch ([e, e]) ", "catch (arguments) ", "catch (eval) ", "") if self.odd() else self.pick("catch (e) ", "catch ")
            return f"try {self.body(d)} {catch}{self.body(d)}{self.pick('', ' finally {}')}"
        if c == 16:
            return f"switch ({self.expr(d)}) {{ case 1: {self.stmt(d + 1)} default: {self.stmt(d + 1)} }}"
        if c == 17:
            return self.body(d)
        if c == 18:
            return self.pick("<!-- html comment", "x <!-- y", "-->", "\n--> after", "/* */ --> c", "x = a-->b;", "a --> b",
                             "/*\n*/ --> c", "x\n  --> c", "'<!--';", "`\n-->`;", "// <!--")
        if c == 19:
            return self.module_item()
        if c == 20:
            if not self.odd():
                return "await tools.exec_command({cmd: 'ls'});"
            return self.pick("with (o) {}", "debugger;", ";", "throw x;", "await tools.exec_command({cmd: 'ls'});")
        if c == 21:
            return self.pick("new.target;", "import.meta;", "super.x;", "arguments;", "await;", "yield;", "let;",
                             "await\n1;", "yield\n1;", "async\nfunction f() {}", "let\n[a] = b;", "let [a];")
        if c == 22:
            return f"{self.pick('if (x)', 'L:', 'while (x)', 'if (x) ; else', 'do')} {self.pick('function f() {}', 'async function f() {}', 'class C {}', 'let a = 1;', 'function* g() {}')}"
        return f"{self.expr(d)};"

    def sub(self, d: int) -> str:
        """The body of an if, a loop or a label: a statement, in a block unless the draw is odd."""
        return self.stmt(d + 1) if self.odd() else "{ " + self.stmt(d + 1) + " }"

    def stmts(self, d: int, n: int) -> str:
        sep = self.pick(" ", "\n", "\n", ";\n")
        return sep.join(self.stmt(d) for _ in range(n))


def grammar_cell(rnd: random.Random) -> str:
    """A short cell of one to six top-level statements (about one in seven an import or export)."""
    g = _Gen(rnd)
    parts = []
    for _ in range(1 + rnd.randrange(6)):
        parts.append(g.module_item() if rnd.random() < 0.15 else g.stmt(0))
    cell = "\n".join(parts)
    if rnd.random() < 0.03:
        cell = rnd.choice(("#!/usr/bin/env node\n", "#! x\n", " #!x\n", "\n#!x\n")) + cell
    return cell


def token_mutant(script: str, rnd: random.Random, steps: int = 1) -> str:
    """``script`` with ``steps`` token-level changes: a significant token deleted, doubled, swapped
    with the next, replaced by or preceded by a :data:`VOCABULARY` entry, a line break put before it,
    or a fragment of the grammar spliced in at a line start."""
    for _ in range(steps):
        toks = list(iter_tokens(script))
        sig = [i for i, t in enumerate(toks) if t.kind in SIGNIFICANT]
        if not sig:
            return script + rnd.choice(VOCABULARY)
        i = rnd.choice(sig)
        t = toks[i]
        texts = [x.text for x in toks]
        op = rnd.randrange(8)
        if op == 0:
            texts[i] = ""
        elif op == 1:
            texts[i] = t.text + " " + t.text
        elif op == 2:
            nxt = [j for j in sig if j > i]
            if nxt:
                j = nxt[0]
                texts[i], texts[j] = texts[j], texts[i]
        elif op == 3:
            texts[i] = rnd.choice(VOCABULARY)
        elif op in (4, 5):
            texts[i] = rnd.choice(VOCABULARY) + " " + t.text
        elif op == 6:
            texts[i] = "\n" + t.text
        else:
            g = _Gen(rnd)
            frag = g.module_item() if rnd.random() < 0.3 else g.stmt(1)
            starts = [k for k, x in enumerate(toks) if k == 0 or "\n" in toks[k - 1].text]
            k = rnd.choice(starts)
            texts[k] = frag + "\n" + texts[k]
        if t.kind is TokenKind.REGEX and op == 3 and rnd.random() < 0.5:
            texts[i] = rnd.choice(_REGEX)
        script = "".join(texts)
    return script
