"""The few rules by which an ES module differs from the strict async function body V8 compiles a cell as
(``exec_grammar.v8``), checked on the tree-sitter tree. Each is pinned by a node case in
``tests/test_exec_v8.py``:

- ``return`` outside any function: ``Illegal return statement`` (a function body allows it);
- ``new.target`` outside a non-arrow function or a class field: ``new.target expression is not allowed
  here``;
- HTML-like comments (``a <!-- b``, ``-->`` at a line start): ``HTML comments are not allowed in
  modules`` (a function body reads them as comments);
- a top-level function declared twice, or also declared by ``var``: ``Identifier 'f' has already been
  declared`` (top-level functions are lexical in a module, var-like in a function body).

And the module syntax a function body rejects, hidden from V8 by a same-length edit (V8 still checks
everything around it): ``import`` declarations are blanked (a cell that imports fails to link and
never runs, but it compiles), the ``export`` (``export default``) keyword before a declaration or an
expression is blanked, other ``export`` statements are blanked, and ``import.meta`` is compiled as the
identifier ``import_meta``.

Each rule is looked for only when its text is in the cell (``return``, ``new.target``, ``<!--``, ``-->``,
``function``, ``import``, ``export``), and each hit costs one descent from the root: linear in the cell
for a bounded number of hits.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

__all__ = ["module_rules"]

_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function",
        "generator_function_declaration",
    }
)
_NEW_TARGET_OK = (_FUNCTIONS - {"arrow_function"}) | {"field_definition", "class_static_block"}
# Each word's pattern starts with the word itself, so ``re`` scans for it as a literal; the byte before a
# hit is checked by :func:`_word_hits` (a pattern that starts with a look-behind tries every offset:
# about 18 times slower on a typical cell).
_RETURN_RE = re.compile(rb"return(?![\w$])")
_NEW_TARGET_RE = re.compile(rb"new\s*\.\s*target(?![\w$])")
_AWAIT_RE = re.compile(rb"await(?![\w$])")
_HTML_RE = re.compile(rb"<!--|-->")
_IMPORT_RE = re.compile(rb"import(?![\w$])")
_EXPORT_RE = re.compile(rb"export(?![\w$])")
_VAR_RE = re.compile(rb"var(?![\w$])")
#: bytes that may not stand right before a word for it to be one (``\w``, ``$``; ``.`` for a member)
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_NAME_OR_DOT = _NAME_BYTES | {ord(".")}


def _word_hits(rx: re.Pattern[bytes], data: bytes, not_after: frozenset[int]) -> list[re.Match[bytes]]:
    """The matches of ``rx`` not preceded by a byte of ``not_after`` (the look-behind, done here)."""
    return [m for m in rx.finditer(data) if not (m.start() and data[m.start() - 1] in not_after)]


#: What stands before an ``await`` inside a function of its top-level statement: the ``function``
#: keyword, an arrow, or a ``(`` (a method's, or an arrow's parameters, which may hold the ``await``
#: themselves: ``(a = await x) => a``). With none of them between the statement's start and the
#: ``await``, the ``await`` is not in a function, where a module allows it (a comment or string may
#: add such text, never remove it).
_BEFORE_FUNCTION = re.compile(rb"\(|=>|function")


def _top_level_awaits(statements: list[Any], data: bytes, hits: list[tuple[int, bytes]]) -> set[int]:
    """The ``await`` hits that cannot lie in a function (see :data:`_BEFORE_FUNCTION`), so no descent
    is needed to know they break no module rule: one bisection per hit over the root's statements,
    and one search per statement for its first such text."""
    starts = [n.start_byte for n in statements]
    first: dict[int, tuple[int, int]] = {}  # statement -> (first function text, end byte)
    out = set()
    for at, word in hits:
        if word != b"await":
            continue
        i = bisect_right(starts, at) - 1
        if i < 0:
            continue
        span = first.get(i)
        if span is None:
            node = statements[i]
            m = _BEFORE_FUNCTION.search(data, node.start_byte, node.end_byte)
            span = first[i] = (m.start() if m is not None else node.end_byte, node.end_byte)
        if at < span[0] and at < span[1]:
            out.add(at)
    return out
#: beyond this many hits of one rule, the rule is not looked for (each hit is a descent from the root)
_MAX_HITS = 2000


def _path(root: Any, node: Any) -> list[str]:
    """The types of ``node``'s ancestors, from the root down (one descent, no ``.parent`` climb)."""
    types = []
    cur = root
    while cur is not None and cur.id != node.id:
        types.append(cur.type)
        cur = cur.child_with_descendant(node)
    return types


def _is_async(fn: Any) -> bool:
    return any(c.type == "async" for c in fn.children[:3])


#: up to this many hits, each is one descent from the root; beyond, one walk of the whole tree
_DESCENTS = 64


def _check(node: Any, last_function: Any, new_target_ok: bool) -> str | None:
    """The module-only error at ``node`` (a ``return``, ``new.target`` or ``await``), given its
    innermost enclosing function (None at the top level) and whether ``new.target`` is allowed there."""
    t = node.type
    if t == "return":
        if last_function is None:
            return "SyntaxError: Illegal return statement"
    elif t == "meta_property":
        if node.text.startswith(b"new") and not new_target_ok:
            return "SyntaxError: new.target expression is not allowed here"
    elif t in ("await", "identifier") and node.text == b"await":
        if last_function is not None and not _is_async(last_function):
            return "SyntaxError: Unexpected reserved word"
    return None


#: the node types :func:`_check` can find an error at
_CHECKED = frozenset({"return", "meta_property", "await", "identifier"})


def _context_of(root: Any, node: Any) -> tuple[Any, bool]:
    """``(innermost enclosing function or None, whether new.target is allowed)`` for ``node``, from
    its ancestors, found in one descent from the root."""
    last = None
    ok = False
    target = node.id
    cur = root
    while cur is not None and cur.id != target:
        t = cur.type
        if t in _FUNCTIONS:
            last = cur
        if t in _NEW_TARGET_OK:
            ok = True
        cur = cur.child_with_descendant(node)
    return last, ok


def _walk(root: Any) -> tuple[int, str] | None:
    """The first module-only error of :func:`_check` in document order, by one pre-order cursor walk
    that keeps the enclosing functions on a stack (constant work per node)."""
    cursor = root.walk()
    stack: list[tuple[Any, int]] = []  # (innermost function so far, count of new.target-allowing nodes)
    func, ok = None, 0
    while True:
        node = cursor.node
        t = node.type
        if t in ("return", "meta_property", "await", "identifier"):
            error = _check(node, func, ok > 0)
            if error is not None:
                return node.start_byte, error
        if cursor.goto_first_child():
            stack.append((func, ok))
            if t in _FUNCTIONS:
                func = node
            if t in _NEW_TARGET_OK:
                ok += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None
            func, ok = stack.pop()


def module_rules(
    root: Any, data: bytes, statements: list[Any] | None = None
) -> tuple[tuple[str, int] | None, list[tuple[int, int, bytes]]]:
    """``(first module-only error as (message, byte) or None, edits)``: ``edits`` are ``(start, end,
    replacement)`` byte ranges of the same length, to apply before V8 compiles the cell.
    ``statements``: the root's named children, when the caller has them already."""
    errors: list[tuple[int, str]] = []
    edits: list[tuple[int, int, bytes]] = []
    hits = [
        (m.start(), m.group())
        for word, rx in ((b"return", _RETURN_RE), (b"target", _NEW_TARGET_RE), (b"await", _AWAIT_RE))
        if word in data
        for m in _word_hits(rx, data, _NAME_BYTES if word == b"return" else _NAME_OR_DOT)
    ]
    if hits and len(hits) <= _DESCENTS and root.type == "program":
        top = _top_level_awaits(root.named_children if statements is None else statements, data, hits)
        if top:
            hits = [h for h in hits if h[0] not in top]
    if len(hits) > _DESCENTS:
        first = _walk(root)  # many hits: one cursor walk instead of a descent per hit (linear)
        if first is not None:
            errors.append(first)
    else:
        for at, word in sorted(hits):
            node = root.descendant_for_byte_range(at, at + len(word))
            if node is None or node.type not in _CHECKED:
                continue  # a word in a string, a comment, a property name: no rule of :func:`_check`
            error = _check(node, *_context_of(root, node))
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
    if b"function" in data:
        dup = _duplicate_function(root, data)
        if dup is not None:
            errors.append(dup)
    if b"import" in data or b"export" in data:
        words = [m for rx in (_IMPORT_RE, _EXPORT_RE) for m in _word_hits(rx, data, _NAME_OR_DOT)]
        for m in sorted(words, key=lambda m: m.start())[:_MAX_HITS]:
            node = root.descendant_for_byte_range(m.start(), m.end())
            if node is None:
                continue
            parent = node.parent if node.type in ("import", "export") else None
            if parent is None:
                continue
            if parent.type == "meta_property":  # import.meta
                dot = data.index(b".", m.end())
                edits.append((dot, dot + 1, b"_"))
            elif parent.type == "import_statement" and parent.start_byte == m.start():
                edits.append((parent.start_byte, parent.end_byte, b""))
            elif parent.type == "export_statement" and parent.start_byte == m.start():
                decl = parent.child_by_field_name("declaration") or parent.child_by_field_name("value")
                if decl is not None:
                    edits.append((parent.start_byte, decl.start_byte, b""))
                else:
                    edits.append((parent.start_byte, parent.end_byte, b""))
    if not errors:
        return None, edits
    at, message = min(errors)
    return (message, at), edits


def _duplicate_function(root: Any, data: bytes) -> tuple[int, str] | None:
    """A top-level function declared twice, or a top-level function name also declared by ``var``
    anywhere in the module's own scope."""
    names: dict[bytes, int] = {}
    for child in root.named_children:
        node = child
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        if node.type in ("function_declaration", "generator_function_declaration"):
            name = node.child_by_field_name("name")
            if name is None:
                continue
            key = data[name.start_byte : name.end_byte]
            if key in names:
                return name.start_byte, f"SyntaxError: Identifier '{key.decode('utf-8', 'replace')}' has already been declared"
            names[key] = name.start_byte
    if not names or b"var" not in data:
        return None
    for m in _word_hits(_VAR_RE, data, _NAME_OR_DOT):
        node = root.descendant_for_byte_range(m.start(), m.end())
        if node is None or node.type != "var":
            continue
        decl = node.parent
        if decl is None or decl.type != "variable_declaration":
            continue
        if _FUNCTIONS.intersection(_path(root, decl)):
            continue
        for d in decl.named_children:
            if d.type != "variable_declarator":
                continue
            name = d.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                key = data[name.start_byte : name.end_byte]
                if key in names:
                    at = max(names[key], name.start_byte)
                    return at, f"SyntaxError: Identifier '{key.decode('utf-8', 'replace')}' has already been declared"
    return None
