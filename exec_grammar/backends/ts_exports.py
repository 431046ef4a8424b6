"""``import`` and ``export`` declarations, read from the tokens: rewritten so that the strict async
function body V8 compiles a cell as (``exec_grammar.v8``) checks what a module would, and the module's
own rules checked here. Each rule is pinned by a node case in ``fixtures/js/hand`` (``*_mod_*.js``).

Tokens, not the tree: tree-sitter reads some legal declarations as errors (``import {if as i} from
'm'``, ``export\\ndefault 1``, ``export {} from 'm'`` then ``(x)`` on the next line), and a cell V8
would otherwise compile must not be rejected for them. A declaration is an ``import`` (not followed by
``(`` or ``.``) or ``export`` at bracket depth 0 that starts a statement: first in the cell, after
``;``, after a ``}`` that closes a block, or on a new line after a token that can end a statement.
Whatever else V8 sees as it stands, and rejects as a module does (``Unexpected token 'export'``).

Every rewrite keeps the length of the cell and its line breaks (``treesitter._edited``), so V8's
positions stay the cell's:

- ``import a, {b as c} from 'm' with {…};`` is compiled as ``let a, c;`` (the keyword becomes ``let``,
  each binding keeps its place, a comma between bindings, the rest blanked): a binding V8 would
  reject (``await``, ``arguments``, a reserved word) or one declared twice (by another import, a
  top-level ``function``, ``let``, ``var``) fails as in a module; ``import 'm'`` is blanked;
- ``export`` before a declaration is blanked, as is ``export default`` before a named function or
  class; ``export default function () {}`` (a class, an async or generator function) is compiled as
  ``function __default__() {}``, a declaration as in a module; ``export default EXPR`` as ``$= EXPR``;
- ``export {…}`` and ``export * …`` are blanked; ``import.meta`` is compiled as ``$``````, a name and an
  empty template.

Checked here, being a module's early errors no rewrite can show V8: the grammar of the declaration
itself (names, ``as``, ``from``, attributes, where it ends), an exported name given twice, ``export
{x}`` of a name the module does not declare at its top level or of a reserved word or a string, a
string that strict code rejects (``'\\08'``, ``'\\x4'``) or a module export name with a lone surrogate.
"""

from __future__ import annotations

from typing import Any

from exec_grammar.backends.ts_scope import declaration_names, top_level_names
from exec_grammar.backends.ts_tokens import (
    CLOSERS,
    OPENERS,
    RESERVED,
    Tok,
    begins_statement,
    expects_more,
    starts_statement,
    strict_string,
    tokens,
)
from exec_grammar.lexer import TokenKind, identifier_name

__all__ = ["module_declarations"]

class _Bad(Exception):
    def __init__(self, at: int, message: str = "") -> None:
        super().__init__(message)
        self.at = at
        self.message = message



class _Reader:
    """One declaration read from ``toks[i]`` on; collects the edits, the exported names and the local
    names of ``export {…}``."""

    def __init__(self, toks: list[Tok], data: bytes, root: Any) -> None:
        self.toks, self.data, self.root = toks, data, root
        self.edits: list[tuple[int, int, bytes]] = []
        self.exported: list[tuple[str, int]] = []
        self.locals: list[tuple[str, int]] = []
        self.imported: set[str] = set()

    def tok(self, i: int) -> Tok | None:
        return self.toks[i] if i < len(self.toks) else None

    def expect(self, i: int, text: str) -> int:
        t = self.tok(i)
        if t is None or t.text != text:
            raise _Bad(self.toks[i].start if t is not None else len(self.data))
        return i + 1

    def string(self, i: int, name: bool = False) -> str:
        t = self.tok(i)
        if t is None or t.kind is not TokenKind.STRING:
            raise _Bad(t.start if t is not None else len(self.data))
        value = strict_string(t.text)
        if value is None:
            raise _Bad(t.start, "SyntaxError: Octal escape sequences are not allowed in strict mode.")
        if name and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise _Bad(t.start, "SyntaxError: Invalid module export name: contains unpaired surrogate")
        return value

    def name(self, i: int) -> str:
        """A ModuleExportName: any identifier name or a string."""
        t = self.tok(i)
        if t is not None and t.kind is TokenKind.IDENT:
            return identifier_name(t.text)
        return self.string(i, name=True)

    def tail(self, i: int) -> int:
        """After ``from``: the module string, its attributes, and the end of the declaration; returns the
        index after the last token of the declaration."""
        i = self.expect(i, "from")
        self.string(i)
        i += 1
        t = self.tok(i)
        if t is not None and t.text == "with":
            i = self.expect(i + 1, "{")
            keys: set[str] = set()
            while (t := self.tok(i)) is not None and t.text != "}":
                key = t.text if t.kind is TokenKind.IDENT else self.string(i)
                if key in keys:
                    raise _Bad(t.start, f"SyntaxError: Import attribute has duplicate key '{key}'")
                keys.add(key)
                i = self.expect(i + 1, ":")
                self.string(i)
                i += 1
                if (t := self.tok(i)) is not None and t.text == ",":
                    i += 1
                elif t is None or t.text != "}":
                    raise _Bad(t.start if t is not None else len(self.data))
            i = self.expect(i, "}")
        return self.end(i)

    def end(self, i: int) -> int:
        t = self.tok(i)
        if t is None or t.newline or t.text == "}":
            return i
        if t.text == ";":
            return i + 1
        raise _Bad(t.start)

    def blank(self, start: int, end: int) -> None:
        self.edits.append((start, end, b""))

    def blank_statement(self, first: Tok, last: Tok) -> None:
        """Blank a whole declaration but its last character, which becomes ``;``: what follows stays a
        statement of its own (`tools` / `export * from 'm'` / `.x()` must not join into `tools.x()`)."""
        self.blank(first.start, last.end - 1)
        self.edits.append((last.end - 1, last.end, b";"))

    def import_(self, i: int) -> int:
        first = self.toks[i]
        j = i + 1
        bindings: list[tuple[Tok, Tok | None]] = []  # (binding, the comma before it)
        t = self.tok(j)
        if t is not None and t.kind is TokenKind.STRING:
            self.string(j)
            end = self.end(j + 1)
            self.blank_statement(first, self.toks[end - 1])
            return end
        comma = None
        if t is not None and t.kind is TokenKind.IDENT and t.text != "from" or (
            t is not None and t.text == "from" and (n := self.tok(j + 1)) is not None and n.text in ("from", ",")
        ):
            bindings.append((t, None))  # the default binding
            j += 1
            if (c := self.tok(j)) is not None and c.text == ",":
                comma = c
                j += 1
                if (n := self.tok(j)) is None or n.text not in ("*", "{"):
                    raise _Bad(n.start if n is not None else len(self.data))
        t = self.tok(j)
        if bindings and comma is None and t is not None and t.text in ("*", "{"):
            raise _Bad(t.start)  # `import a {b} from 'm'`: the default binding and the rest need a comma
        if t is not None and t.text == "*":
            j = self.expect(j + 1, "as")
            b = self.tok(j)
            if b is None or b.kind is not TokenKind.IDENT:
                raise _Bad(b.start if b is not None else len(self.data))
            bindings.append((b, comma))
            j += 1
        elif t is not None and t.text == "{":
            j += 1
            while (t := self.tok(j)) is not None and t.text != "}":
                self.name(j)
                b = t
                if (a := self.tok(j + 1)) is not None and a.text == "as":
                    j += 2
                    b = self.tok(j)  # type: ignore[assignment]
                    if b is None or b.kind is not TokenKind.IDENT:
                        raise _Bad(b.start if b is not None else len(self.data))
                elif t.kind is TokenKind.STRING:
                    raise _Bad(t.start, "SyntaxError: Unexpected string")
                bindings.append((b, comma))
                comma = None
                j += 1
                if (c := self.tok(j)) is not None and c.text == ",":
                    comma = c
                    j += 1
                elif c is None or c.text != "}":
                    raise _Bad(c.start if c is not None else len(self.data))
            j = self.expect(j, "}")
        elif not bindings:
            raise _Bad(t.start if t is not None else len(self.data))
        end = self.tail(j)
        last = self.toks[end - 1]
        self.imported.update(identifier_name(b.text) for b, _ in bindings)
        if not bindings:
            self.blank_statement(first, last)
            return end
        self.edits.append((first.start, first.end, b"let   "))
        at = first.end
        for k, (b, c) in enumerate(bindings):
            if k:
                if c is None:
                    raise _Bad(b.start)
                self.blank(at, c.start)
                self.edits.append((c.start, c.end, b","))
                at = c.end
            self.blank(at, b.start)
            at = b.end
        self.blank(at, last.end - 1)
        self.edits.append((last.end - 1, last.end, b";"))
        return end

    def export(self, i: int) -> int:
        first = self.toks[i]
        t = self.tok(i + 1)
        if t is None:
            raise _Bad(len(self.data))
        if t.text == "*":
            j = i + 2
            if (a := self.tok(j)) is not None and a.text == "as":
                self.exported.append((self.name(j + 1), self.toks[j + 1].start))
                j += 2
            end = self.tail(j)
            self.blank_statement(first, self.toks[end - 1])
            return end
        if t.text == "{":
            j = i + 2
            pairs: list[tuple[Tok, str]] = []
            while (t := self.tok(j)) is not None and t.text != "}":
                local = t
                exported = self.name(j)
                if (a := self.tok(j + 1)) is not None and a.text == "as":
                    exported = self.name(j + 2)
                    j += 2
                pairs.append((local, exported))
                self.exported.append((exported, self.toks[j].start))
                j += 1
                if (c := self.tok(j)) is not None and c.text == ",":
                    j += 1
                elif c is None or c.text != "}":
                    raise _Bad(c.start if c is not None else len(self.data))
            j = self.expect(j, "}")
            if (f := self.tok(j)) is not None and f.text == "from":
                end = self.tail(j)
            else:
                end = self.end(j)
                for local, _ in pairs:
                    if local.kind is TokenKind.STRING:
                        raise _Bad(local.start, "SyntaxError: Unexpected string")
                    name = identifier_name(local.text)
                    if name in RESERVED:
                        raise _Bad(local.start, f"SyntaxError: Unexpected reserved word '{name}'")
                    self.locals.append((name, local.start))
            self.blank_statement(first, self.toks[end - 1])
            return end
        if t.text == "default":
            self.exported.append(("default", t.start))
            return self.default(i, t)
        if t.text in ("var", "let", "const", "function", "class") or (
            t.text == "async" and (n := self.tok(i + 2)) is not None and n.text == "function" and not n.newline
        ):
            self.blank(first.start, t.start)
            self.exported.extend(self.declared_names(first.start, t))
            return i + 2
        raise _Bad(t.start)

    def default(self, i: int, kw: Tok) -> int:
        first = self.toks[i]
        v = self.tok(i + 2)
        if v is None:
            raise _Bad(len(self.data))
        k = i + 2
        if v.text == "async" and (n := self.tok(k + 1)) is not None and n.text == "function" and not n.newline:
            k += 1
        head = self.tok(k)
        if head is not None and head.text in ("function", "class"):
            k += 1
            if head.text == "function" and (s := self.tok(k)) is not None and s.text == "*":
                k += 1
            cut = self.tok(k)
            named = cut is not None and cut.kind is TokenKind.IDENT and cut.text != "extends"
            region = self.data[first.start : cut.start] if cut is not None else b""
            words = (" ".join(x.text for x in self.toks[i + 2 : k]) + " __default__ ").encode()
            if not named and cut is not None and region.isascii() and len(words) <= len(region):
                self.edits.append((first.start, cut.start, words.rjust(len(region))))
                return k
            if named:
                self.blank(first.start, v.start)
                return k
        comma = self.top_level_comma(i + 2)
        if comma is not None:  # `export default a, b`: one AssignmentExpression, `$= a, b` would be two
            raise _Bad(comma, "SyntaxError: Unexpected token ','")
        self.blank(first.start, kw.start)
        self.edits.append((kw.start, kw.end, b"$=".ljust(kw.end - kw.start)))
        return i + 2

    def top_level_comma(self, i: int) -> int | None:
        """The byte of a ``,`` outside brackets in the expression from ``toks[i]`` on, before it ends
        (a ``;``, or a line break before a token that cannot continue it)."""
        depth = 0
        prev: Tok | None = None
        for t in self.toks[i:]:
            if depth == 0 and prev is not None and t.newline and begins_statement(t) and not expects_more(prev):
                return None
            if t.kind is TokenKind.PUNCT:
                if t.text in OPENERS:
                    depth += 1
                elif t.text in CLOSERS:
                    depth -= 1
                    if depth < 0:
                        return None
                elif depth == 0 and t.text == ";":
                    return None
                elif depth == 0 and t.text == ",":
                    return t.start
            elif t.kind is TokenKind.TEMPLATE_HEAD:
                depth += 1
            elif t.kind is TokenKind.TEMPLATE_TAIL:
                depth -= 1
            prev = t
        return None

    def declared_names(self, start: int, t: Tok) -> list[tuple[str, int]]:
        """The names ``export <declaration>`` exports: from the tree's export statement when it has one."""
        return declaration_names(self.root, self.data, start, t.start)



def module_declarations(root: Any, data: bytes) -> tuple[list[tuple[int, str]], list[tuple[int, int, bytes]]]:
    """``(errors as (byte, message), edits)`` for the cell's own ``import``/``export`` declarations and
    its ``import.meta``."""
    toks = tokens(data)
    reader = _Reader(toks, data, root)
    errors: list[tuple[int, str]] = []
    depth = 0
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if t.kind is TokenKind.PUNCT:
            if t.text in OPENERS:
                depth += 1
            elif t.text in CLOSERS:
                depth -= 1
        elif t.kind is TokenKind.TEMPLATE_HEAD:
            depth += 1
        elif t.kind is TokenKind.TEMPLATE_TAIL:
            depth -= 1
        elif t.kind is TokenKind.IDENT and t.text in ("import", "export") and not (i and toks[i - 1].text == "."):
            nxt = toks[i + 1] if i + 1 < n else None
            if t.text == "import" and nxt is not None and nxt.text == ".":
                meta = toks[i + 2] if i + 2 < n else None
                if meta is not None and meta.text == "meta":
                    # a name and an empty template: an expression (a member's object, a callee, a tag)
                    # that, like import.meta, is no assignment target, property name or binding, and
                    # cannot continue the expression before it
                    reader.edits.append((t.start, t.start + 3, b"$``"))
                    reader.edits.append((t.start + 3, meta.end, b""))
            elif (t.text == "export" or nxt is None or nxt.text != "(") and depth == 0 and starts_statement(toks, i, root):
                try:
                    i = (reader.import_ if t.text == "import" else reader.export)(i)
                    continue
                except _Bad as bad:
                    # the module's error is where the declaration went wrong: V8 must not stop earlier at
                    # the keyword it does not know
                    reader.edits.append((t.start, max(bad.at, t.end), b""))
                    errors.append((bad.at, bad.message or "SyntaxError: Unexpected token"))
                    break
        i += 1
    seen: dict[str, int] = {}
    for name, at in reader.exported:
        if name in seen:
            errors.append((at, f"SyntaxError: Duplicate export of '{name}'"))
        seen.setdefault(name, at)
    if reader.locals:
        declared = top_level_names(root, data) | reader.imported
        for name, at in reader.locals:
            if name not in declared:
                errors.append((at, f"SyntaxError: Export '{name}' is not defined in module"))
    return errors, reader.edits


