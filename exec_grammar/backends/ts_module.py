"""The few rules by which an ES module differs from the strict async function body V8 compiles a cell as
(``exec_grammar.v8``), checked on the tree-sitter tree. Each is pinned by a node case in
``tests/test_exec_v8.py`` or ``fixtures/js/hand/*_mod_*.js``:

- ``return`` outside any function: ``Illegal return statement`` (a function body allows it);
- ``new.target`` outside a non-arrow function or a class field: ``new.target expression is not allowed
  here``;
- HTML-like comments (``a <!-- b``, ``-->`` at a line start): ``HTML comments are not allowed in
  modules`` (a function body reads them as comments);
- a top-level function declared twice, or also declared by ``var`` (a pattern, a ``for (var … of``
  head): ``Identifier 'f' has already been declared`` (top-level functions are lexical in a module,
  var-like in a function body);
- ``await`` as a name (written plainly or with escapes, a reference, a binding, a shorthand property, a
  label) inside a plain function, a class field's initializer or a static block: ``Unexpected reserved
  word`` (a function body allows it there; a declaration's name counts where the declaration stands).

``import`` and ``export`` declarations and ``import.meta`` are rewritten for V8 and checked by
``ts_exports`` from the tokens. When tree-sitter cannot read the cell (:func:`error_tree_rules`), those
and HTML-like comments are still checked from the tokens, and the tree's rules too when the cell parses
once the declarations, ``using`` as a name and assignments to calls are read another way.

Each rule is looked for only when its text is in the cell (``return``, ``new.target``, ``await``,
``<!--``, ``-->``, ``function``, ``import``, ``export``), and each hit costs one descent from the root
(past 64 hits, one walk of the tree): linear in the cell.
"""

from __future__ import annotations

import re
from typing import Any

from exec_grammar.backends.ts_exports import module_declarations
from exec_grammar.backends.ts_repair import repair
from exec_grammar.backends.ts_scope import module_statements, pattern_names
from exec_grammar.backends.ts_tokens import html_comment
from exec_grammar.backends.ts_tree import _FUNCTIONS as _TREE_FUNCTIONS
from exec_grammar.backends.ts_tree import _parser
from exec_grammar.lexer import identifier_name

__all__ = ["error_tree_rules", "module_rules"]

#: the function nodes (``ts_tree``'s set, which also holds ``class_static_block``)
_FUNCTIONS = _TREE_FUNCTIONS - {"class_static_block"}
_USING_RE = re.compile(rb"(?<![\w$])using(?![\w$])")
_CALL_ASSIGN_RE = re.compile(rb"(\)\s*(\*\*|<<|>>>?|&&|\|\||\?\?|[-+*/%&|^])?)=(?![=>])")
#: what a `var` inside does not leave
_VAR_SCOPES = _FUNCTIONS | {"class_static_block"}
#: a function to `await` (never async), though no function to `return`
_AWAIT_SCOPES = _FUNCTIONS | {"class_static_block"}
#: a declaration's name is bound where the declaration stands; a function expression's in itself
_DECLARED = frozenset({"function_declaration", "generator_function_declaration", "class_declaration"})
_NEW_TARGET_OK = (_FUNCTIONS - {"arrow_function"}) | {"field_definition", "class_static_block"}
_RETURN_RE = re.compile(rb"(?<![\w$])return(?![\w$])")
_NEW_TARGET_RE = re.compile(rb"(?<![\w$.])new\s*\.\s*target(?![\w$])")
_AWAIT_RE = re.compile(rb"(?<![\w$.])await(?![\w$])")
#: a bare `await` at the end of its line (the line break after it, in group 2)
_AWAIT_LINE_RE = re.compile(rb"((?<![\w$.])await[ \t]*)(\r\n|[\r\n])")
_HTML_RE = re.compile(rb"<!--|-->")
_MODULE_RE = re.compile(rb"(?<![\w$.])(?:import|export)(?![\w$])")
#: an identifier written with escapes (``\u0061wait`` is ``await`` to V8)
_ESCAPED_WORD_RE = re.compile(rb"(?<![\w$\\])(?:[\w$]|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]+\})+")
#: where ``await`` is a name (a reference, a binding, shorthand, a label), never a property name
_AWAIT_TYPES = frozenset(
    {"await", "identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern", "statement_identifier"}
)
_CHECKED = _AWAIT_TYPES | {"return", "meta_property"}
_MODULE_CLAUSES = frozenset(
    {"export_specifier", "import_specifier", "namespace_export", "namespace_import", "import_clause", "export_clause"}
)
#: beyond this many hits of one rule, the rule is not looked for (each hit is a descent from the root)
_MAX_HITS = 2000


def _is_await(text: bytes) -> bool:
    return text == b"await" or (b"\\" in text and _name(text) == b"await")


def _name(text: bytes) -> bytes:
    """A name as V8 binds it, escapes read (``\\u0061wait`` is ``await``; ``function \\u{62}(){} var b``
    declares ``b`` twice). Any bytes decode (surrogateescape) and encode back (surrogatepass)."""
    if b"\\" not in text:
        return text
    return identifier_name(text.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogatepass")


def _path(root: Any, node: Any) -> list[str]:
    """The types of ``node``'s ancestors, from the root down (one descent, no ``.parent`` climb)."""
    types = []
    cur = root
    while cur is not None and cur.id != node.id:
        types.append(cur.type)
        cur = cur.child_with_descendant(node)
    return types


def _nodes(root: Any, node: Any) -> list[Any]:
    """``node``'s ancestors, from the root down."""
    out = []
    cur = root
    while cur is not None and cur.id != node.id:
        out.append(cur)
        cur = cur.child_with_descendant(node)
    return out


#: the initializer of a class field: a function of its own to ``await`` (never async)
_FIELD = object()


def _is_async(fn: Any) -> bool:
    return fn is not _FIELD and any(c.type == "async" for c in fn.children[:3])


#: up to this many hits, each is one descent from the root; beyond, one walk of the whole tree
_DESCENTS = 64


def _check(node: Any, last_function: Any, new_target_ok: bool, parent: str | None) -> str | None:
    """The module-only error at ``node`` (a ``return``, ``new.target`` or ``await``), given its
    innermost enclosing function (None at the top level) and whether ``new.target`` is allowed there."""
    t = node.type
    if t == "return":
        # a static block is no function to `return` from, in a function body too; checked here as well
        # because V8 14 (the embedded one) misses it once an instance field comes before the block
        # (`class C { a; static { return } }`), which node's V8 and the spec reject
        if last_function is None or getattr(last_function, "type", None) == "class_static_block":
            return "SyntaxError: Illegal return statement"
    elif t == "meta_property":
        if node.text.startswith(b"new") and not new_target_ok:
            return "SyntaxError: new.target expression is not allowed here"
    elif t in _AWAIT_TYPES and _is_await(node.text):
        # in a plain function (or a class field's initializer) a function body allows await as a name,
        # a module never does; names in import and export clauses are the token pass's (ts_exports)
        if last_function is not None and not _is_async(last_function) and parent not in _MODULE_CLAUSES:
            return "SyntaxError: Unexpected reserved word"
    return None


def _context(ancestors: list[Any], node: Any) -> tuple[Any, bool]:
    func = None
    if ancestors and ancestors[-1].type in _DECLARED:
        name = ancestors[-1].child_by_field_name("name")
        if name is not None and name.id == node.id:
            ancestors = ancestors[:-1]  # a declaration's name is bound where it stands
    for i, a in enumerate(ancestors):
        if a.type in _AWAIT_SCOPES:
            func = a
        elif a.type == "field_definition":
            inner = ancestors[i + 1] if i + 1 < len(ancestors) else node
            value = a.child_by_field_name("value")
            if value is not None and value.id == inner.id:
                func = _FIELD
    return func, any(a.type in _NEW_TARGET_OK for a in ancestors)


def _walk(root: Any) -> tuple[int, str] | None:
    """The first module-only error of :func:`_check` in document order, by one pre-order cursor walk
    that keeps the enclosing functions on a stack (constant work per node)."""
    cursor = root.walk()
    stack: list[tuple[Any, int]] = []  # (innermost function so far, count of new.target-allowing nodes)
    parents: list[str] = []
    outer: list[Any] = []  # the function context each node on the path was in
    func, ok = None, 0
    while True:
        node = cursor.node
        t = node.type
        here = func
        if parents and parents[-1] == "field_definition" and cursor.field_name == "value":
            here = _FIELD
        elif parents and parents[-1] in _DECLARED and cursor.field_name == "name":
            here = outer[-1]  # a declaration's name is bound where it stands
        if t in _CHECKED:
            error = _check(node, here, ok > 0, parents[-1] if parents else None)
            if error is not None:
                return node.start_byte, error
        if cursor.goto_first_child():
            stack.append((func, ok))
            parents.append(t)
            outer.append(here)
            func = node if t in _AWAIT_SCOPES else here
            if t in _NEW_TARGET_OK:
                ok += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None
            func, ok = stack.pop()
            parents.pop()
            outer.pop()


def module_rules(root: Any, data: bytes) -> tuple[tuple[str, int] | None, list[tuple[int, int, bytes]]]:
    """``(first module-only error as (message, byte) or None, edits)``: ``edits`` are ``(start, end,
    replacement)`` byte ranges of the same length, to apply before V8 compiles the cell."""
    errors: list[tuple[int, str]] = []
    edits: list[tuple[int, int, bytes]] = []
    hits = [
        (m.start(), m.group())
        for word, rx in ((b"return", _RETURN_RE), (b"target", _NEW_TARGET_RE), (b"await", _AWAIT_RE))
        if word in data
        for m in rx.finditer(data)
    ]
    if b"\\u" in data:
        hits.extend((m.start(), m.group()) for m in _ESCAPED_WORD_RE.finditer(data) if b"\\" in m.group() and _is_await(m.group()))
    if len(hits) > _DESCENTS:
        first = _walk(root)  # many hits: one cursor walk instead of a descent per hit (linear)
        if first is not None:
            errors.append(first)
    else:
        for at, word in sorted(hits):
            node = root.descendant_for_byte_range(at, at + len(word))
            if node is None:
                continue
            ancestors = _nodes(root, node)
            error = _check(node, *_context(ancestors, node), ancestors[-1].type if ancestors else None)
            if error is not None:
                errors.append((at, error))
                break
    if b"<!--" in data or b"-->" in data:
        for m in list(_HTML_RE.finditer(data))[:_MAX_HITS]:
            node = root.descendant_for_byte_range(m.start(), m.start() + 1)
            if node is None:
                continue
            html = node.type == "html_comment" or (
                m.group() == b"<!--" and node.type == "<" and node.start_byte == m.start()
            )
            if html:
                errors.append((m.start(), "SyntaxError: HTML comments are not allowed in modules"))
                break
        else:
            # tree-sitter reads `a⏎-->` as `a--` then `>` (a postfix operator after a line break, which
            # JavaScript forbids), so a `-->` first on its line can hide from the tree; the tokens see it
            hidden = html_comment(data)
            if hidden is not None:
                errors.append((hidden, "SyntaxError: HTML comments are not allowed in modules"))
    if b"function" in data:
        dup = _duplicate_function(root, data)
        if dup is not None:
            errors.append(dup)
    if (b"import" in data or b"export" in data) and _module_keyword(root, data):
        more_errors, more_edits = module_declarations(root, data)
        errors.extend(more_errors)
        edits.extend(more_edits)
    if not errors:
        return None, edits
    at, message = min(errors)
    return (message, at), edits


def _module_keyword(root: Any, data: bytes) -> bool:
    """``import`` or ``export`` appears as a keyword (not only in strings, comments or names)."""
    for m in list(_MODULE_RE.finditer(data))[:_MAX_HITS]:
        node = root.descendant_for_byte_range(m.start(), m.end())
        # tree-sitter may read a keyword as a name (`export` then a line break then `const`)
        if node is not None and node.type in ("import", "export", "identifier", "statement_identifier"):
            return True
    return False


def error_tree_rules(root: Any, data: bytes) -> tuple[tuple[str, int] | None, list[tuple[int, int, bytes]]]:
    """The module rules that hold when tree-sitter could not read the cell (it rejects some legal
    module syntax, and V8 is the judge of the rest): ``import``/``export`` declarations and HTML-like
    comments, both read from the tokens. Same result as :func:`module_rules`."""
    errors: list[tuple[int, str]] = []
    edits: list[tuple[int, int, bytes]] = []
    if b"import" in data or b"export" in data:
        errors, edits = module_declarations(root, data)
    if not errors:
        # what tree-sitter could not read may be only the declarations (rewritten now), an assignment
        # to a call (ts_repair) or `using`, as a name (`using.d()`, `using()`) or as a declaration
        # (`using r = f()`), in any mix: the first reading that parses is the one whose rules hold
        # (`export {if} from 'm'` then `return`; with `for (f() in o)` and `using r = …` before it too)
        declared = _apply(data, edits) if edits else data
        readings = [_USING_RE.sub(b"_sing", declared), declared] if b"using" in declared else [declared]
        edited, tree = declared, None
        for reading in readings:
            edited, tree = _readable(reading)
            if not tree.root_node.has_error:
                break
        if tree is not None and not tree.root_node.has_error:
            rule, _ = module_rules(tree.root_node, edited)
            if rule is not None:
                errors.append((rule[1], rule[0]))
    if b"<!--" in data or b"-->" in data:
        html = html_comment(data)
        if html is not None:
            errors.append((html, "SyntaxError: HTML comments are not allowed in modules"))
    if not errors:
        return None, edits
    at, message = min(errors)
    return (message, at), edits


def _readable(text: bytes) -> tuple[bytes, Any]:
    """``text`` as tree-sitter reads it once an assignment to a call is read as an operator (for these
    rules an operator does as well: `a ? f() = 1 : b`) and, where the tree still has an error,
    ``ts_repair``'s reading (`for (f() in o)`); the tree may still have errors."""
    if b"=" in text:
        text = _CALL_ASSIGN_RE.sub(lambda m: m.group(1) + (b" " if m.group(2) else b"+"), text)
    tree = _parser().parse(text)
    if tree.root_node.has_error:
        fixed = repair(text, tree.root_node, _parser().parse)
        if fixed is not None:
            text, tree = fixed
    if tree.root_node.has_error and b"await" in text:
        # tree-sitter ends a bare `await` at a line break (`do await⏎1; while (x)` then fails); a module
        # never does: the next line is the operand. Joined by blanks of the same length, offsets kept.
        joined = _AWAIT_LINE_RE.sub(lambda m: m.group(1) + b" " * len(m.group(2)), text)
        if joined != text:
            again = _parser().parse(joined)
            if again.root_node.has_error:
                fixed = repair(joined, again.root_node, _parser().parse)
                if fixed is not None:
                    joined, again = fixed
            if not again.root_node.has_error:
                text, tree = joined, again
    return text, tree


def _apply(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """``data`` with the edits applied byte for byte (a blank keeps line breaks), the same length."""
    out = []
    last = 0
    for s, e, rep in sorted(edits):
        if s < last:
            continue
        out.append(data[last:s])
        out.append(rep if rep else re.sub(rb"[^\r\n]", b" ", data[s:e]))
        last = e
    out.append(data[last:])
    return b"".join(out)


def _duplicate_function(root: Any, data: bytes) -> tuple[int, str] | None:
    """A top-level function declared twice, or a top-level function name also declared by ``var``
    anywhere in the module's own scope."""
    names: dict[bytes, int] = {}
    for child in module_statements(root):
        node = child
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        if node.type in ("function_declaration", "generator_function_declaration"):
            name = node.child_by_field_name("name")
            if name is None:
                continue
            key = _name(data[name.start_byte : name.end_byte])
            if key in names:
                return name.start_byte, f"SyntaxError: Identifier '{key.decode('utf-8', 'replace')}' has already been declared"
            names[key] = name.start_byte
    if not names or b"var" not in data:
        return None
    for m in re.finditer(rb"(?<![\w$.])var(?![\w$])", data):
        node = root.descendant_for_byte_range(m.start(), m.end())
        if node is None or node.type != "var":
            continue
        decl = node.parent
        if decl is None or decl.type not in ("variable_declaration", "for_in_statement"):
            continue
        if _VAR_SCOPES.intersection(_path(root, decl)):
            continue
        if decl.type == "for_in_statement":  # `for (var [a] of b)`
            patterns = [decl.child_by_field_name("left")]
        else:
            patterns = [d.child_by_field_name("name") for d in decl.named_children if d.type == "variable_declarator"]
        for pattern in patterns:
            for name in pattern_names(pattern) if pattern is not None else ():
                key = _name(data[name.start_byte : name.end_byte])
                if key in names:
                    at = max(names[key], name.start_byte)
                    return at, f"SyntaxError: Identifier '{key.decode('utf-8', 'replace')}' has already been declared"
    return None
