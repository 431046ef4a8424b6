"""Strict-mode checks about declarations and functions: redeclared names (by scope, as V8 declares
them), parameters (duplicates, rest, ``'use strict'`` with non-simple ones), declarations as the body of
``if``/a loop/a label, ``const`` without an initialiser."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from exec_grammar.backends.strict_base import (
    _FUNCTION_TYPES,
    _LOOPS,
    _fail,
    decode_identifier,
)
from exec_grammar.backends.strict_hits import _WORD_RE
from exec_grammar.backends.ts_tree import _Seeker


class _Checker:
    """State shared by the checks of one script: the declarations seen (for redeclarations)."""

    def __init__(self, root: Any, data: bytes) -> None:
        self.root = root
        self.data = data
        # name -> [(kind, scope key, var path keys, byte)]; kind: lexical, var, param, catch, catch-pattern
        self.decls: dict[str, list[tuple[str, int, tuple[int, ...], int]]] = defaultdict(list)
        self.counted: dict[int, int] = defaultdict(int)  # per object / class body: __proto__, ctor
        self.seen_nodes: set[int] = set()
        self.privates: dict[int, dict[str, tuple[str, bool]]] = {}  # class body -> private name -> kind

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def name_of(self, node: Any) -> str:
        return decode_identifier(self.text(node))

    # -- declarations ---------------------------------------------------------------------------
    def bound_names(self, node: Any) -> list[Any]:
        out: list[Any] = []
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t in ("identifier", "shorthand_property_identifier_pattern"):
                out.append(n)
            elif t in ("object_pattern", "array_pattern", "rest_pattern", "formal_parameters"):
                stack.extend(reversed([c for c in n.named_children if c.type != "comment"]))
            elif t in ("assignment_pattern", "object_assignment_pattern"):
                left = n.child_by_field_name("left") or (n.named_children[0] if n.named_children else None)
                if left is not None:
                    stack.append(left)
            elif t == "pair_pattern":
                v = n.child_by_field_name("value")
                if v is not None:
                    stack.append(v)
            elif t in ("member_expression", "subscript_expression"):
                # an assignment pattern may hold one (`({a: o.x} = v)`), a declaration may not
                _fail("Illegal property in declaration context", n)
        return out

    def add(self, names: list[Any], kind: str, key: int, path: tuple[int, ...] = ()) -> None:
        for n in names:
            self.decls[self.name_of(n)].append((kind, key, path, n.start_byte))

    def redeclarations(self) -> None:
        """The first declaration that clashes with an earlier one of its name. Kinds: ``lexical``
        (let/const/class, a function in a block or at module top level; key: its scope), ``var`` (path:
        the scopes from its block up to its function's), ``param`` (key: the function's body),
        ``catch``/``catch-pattern`` (key: the catch body). One pass per name over sets: linear."""
        first: int | None = None
        for decls in self.decls.values():
            if len(decls) < 2:
                continue
            lexical: set[int] = set()
            params: set[int] = set()
            catches: set[int] = set()
            patterns: set[int] = set()
            on_var_paths: set[int] = set()
            for kind, key, path, byte in sorted(set(decls), key=lambda d: d[3]):
                if kind == "lexical":
                    clash = key in lexical or key in params or key in catches or key in patterns or key in on_var_paths
                    lexical.add(key)
                elif kind == "var":
                    clash = any(k in lexical or k in patterns for k in path)
                    on_var_paths.update(path)
                elif kind == "param":
                    clash = key in lexical
                    params.add(key)
                else:
                    clash = key in lexical or (kind == "catch-pattern" and key in on_var_paths)
                    (catches if kind == "catch" else patterns).add(key)
                if clash and (first is None or byte < first):
                    first = byte
                    break
        if first is not None:
            m = _WORD_RE.match(self.data, first)
            name = m.group().decode("utf-8", "replace") if m else "?"
            _fail(f"Identifier '{name}' has already been declared", first)


def _scope_key(stack: list[Any], i: int) -> tuple[int, tuple[int, ...], Any]:
    """(key of the innermost block scope at or above ``stack[i]``, the keys from there up to the
    function scope, the function node or None). A function's body and a catch clause's body are keyed
    by the body, so their parameters share the scope their ``let``s are checked in."""
    path: list[int] = []
    key = -1
    fn = None
    j = i
    while j >= 0:
        n = stack[j]
        t = n.type
        if t in ("statement_block", "switch_body", "for_statement", "for_in_statement", "class_static_block", "program"):
            if key < 0:
                key = n.id
            path.append(n.id)
            if t == "program" or t == "class_static_block":
                break
            parent = stack[j - 1] if j > 0 else None
            if t == "statement_block" and parent is not None and parent.type in _FUNCTION_TYPES:
                fn = parent
                break
        elif t in _FUNCTION_TYPES:
            fn = n
            body = n.child_by_field_name("body")
            if key < 0 and body is not None:
                key = body.id
                path.append(body.id)
            break
        j -= 1
    return key, tuple(path), fn

def _c_decl(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    tok = stack[i]
    if i < 1:
        return
    parent = stack[i - 1]
    t, pt = tok.type, parent.type
    if t in ("const", "let") and pt == "lexical_declaration":
        key, path, _ = _scope_key(stack, i - 2)
        in_for = i >= 2 and stack[i - 2].type == "for_in_statement"
        for d in parent.named_children:
            if d.type != "variable_declarator":
                continue
            name = d.child_by_field_name("name")
            if name is not None:
                c.add(c.bound_names(name), "lexical", key)
            if t == "const" and d.child_by_field_name("value") is None and not in_for:
                _fail("Missing initializer in const declaration", d)
        _single_statement(stack, i - 1)
    elif t in ("const", "let", "var") and pt == "for_in_statement":
        left = parent.child_by_field_name("left")
        key, path, _ = _scope_key(stack, i - 1)
        if t == "var":
            _, path, _ = _scope_key(stack, i - 2)
            if parent.child_by_field_name("value") is not None:
                _fail("for-in loop variable declaration may not have an initializer.", parent)
        if left is not None:
            c.add(c.bound_names(left), "var" if t == "var" else "lexical", key, path)
    elif t == "var" and pt == "variable_declaration":
        _, path, _ = _scope_key(stack, i - 2)
        for d in parent.named_children:
            if d.type == "variable_declarator":
                name = d.child_by_field_name("name")
                if name is not None:
                    c.add(c.bound_names(name), "var", -1, path)
    elif t == "class" and pt == "class_declaration":
        name = parent.child_by_field_name("name")
        if name is not None:
            key, _, _ = _scope_key(stack, i - 2)
            c.add([name], "lexical", key)
        _single_statement(stack, i - 1)
    elif t == "function" and pt in _FUNCTION_TYPES:
        _function(c, stack, i - 1)
    elif t == "catch" and pt == "catch_clause":
        param = parent.child_by_field_name("parameter")
        body = parent.child_by_field_name("body")
        if param is not None and body is not None:
            names = c.bound_names(param)
            seen: set[str] = set()
            for n in names:
                if c.name_of(n) in seen:
                    _fail(f"Identifier '{c.name_of(n)}' has already been declared", n)
                seen.add(c.name_of(n))
            c.add(names, "catch" if param.type == "identifier" else "catch-pattern", body.id)

_PARAM_NODES = frozenset(
    {"identifier", "object_pattern", "array_pattern", "assignment_pattern", "rest_pattern", "comment"}
)


def _function(c: _Checker, stack: list[Any], j: int) -> None:
    """A function, arrow or method at ``stack[j]``: its name, its parameters."""
    fn = stack[j]
    if fn.id in c.seen_nodes:
        return
    c.seen_nodes.add(fn.id)
    t = fn.type
    if t in ("function_declaration", "generator_function_declaration"):
        name = fn.child_by_field_name("name")
        if name is not None:
            key, path, outer = _scope_key(stack, j - 1)
            parent = stack[j - 1] if j > 0 else None
            at_function_top = (
                parent is not None and parent.type == "statement_block" and j >= 2 and stack[j - 2].type in _FUNCTION_TYPES
            )
            if at_function_top:
                c.add([name], "var", -1, path[:1])
            else:
                c.add([name], "lexical", key)
        _single_statement(stack, j)
    params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
    if params is None:
        return
    if params.type == "formal_parameters":
        for p in params.named_children:
            if p.type not in _PARAM_NODES:
                _fail("Invalid destructuring assignment target", p)
    names = c.bound_names(params)
    seen: set[str] = set()
    for n in names:
        s = c.name_of(n)
        if s in seen:
            _fail("Duplicate parameter name not allowed in this context", n)
        seen.add(s)
    body = fn.child_by_field_name("body")
    if body is not None and body.type == "statement_block":
        c.add(names, "param", body.id)
    if params.type != "formal_parameters":
        return
    plist = [p for p in params.named_children if p.type != "comment"]
    for p in plist[:-1]:
        if p.type == "rest_pattern":
            _fail("Rest parameter must be last formal parameter", p)
    kids = params.children
    if plist and plist[-1].type == "rest_pattern" and len(kids) >= 2 and kids[-2].type == ",":
        _fail("Rest parameter must be last formal parameter", kids[-2])
    if not all(p.type == "identifier" for p in plist) and body is not None and body.type == "statement_block":
        first = next((s for s in body.named_children if s.type != "comment"), None)
        if first is not None and first.type == "expression_statement" and first.named_children:
            s = first.named_children[0]
            if s.type == "string" and c.text(s)[1:-1] == "use strict":
                _fail("Illegal 'use strict' directive in function with non-simple parameter list", s)

def _single_statement(stack: list[Any], j: int) -> None:
    """A declaration at ``stack[j]`` that is the body of if/else/a loop/a label."""
    node = stack[j]
    parent = stack[j - 1] if j > 0 else None
    if parent is None:
        return
    pt = parent.type
    body = None
    if pt in ("if_statement",):
        body = parent.child_by_field_name("consequence")
    elif pt == "else_clause":
        body = node
    elif pt in _LOOPS or pt == "labeled_statement":
        body = parent.child_by_field_name("body")
    if body is None or body.id != node.id:
        return
    if node.type in ("function_declaration", "generator_function_declaration"):
        _fail("In strict mode code, functions can only be declared at top level or inside a block.", node)
    _fail("Lexical declaration cannot appear in a single-statement context", node)

def _c_single(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if i >= 1 and stack[i].type in ("function", "let", "const", "class"):
        j = i - 1
        if stack[j].type in ("function_declaration", "generator_function_declaration", "lexical_declaration",
                             "class_declaration"):
            _single_statement(stack, j)

def _c_params(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    j = i
    if stack[j].type == "(" and j >= 1:
        j -= 1
    if stack[j].type == "formal_parameters" and j >= 1 and stack[j - 1].type in _FUNCTION_TYPES:
        _function(c, stack, j - 1)

def _c_arrow(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "=>" or i < 1 or stack[i - 1].type != "arrow_function":
        return
    fn = stack[i - 1]
    params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
    if params is not None:
        gap = c.data[params.end_byte : start]
        if b"\n" in gap or b"\r" in gap or b"\xe2\x80\xa8" in gap or b"\xe2\x80\xa9" in gap:
            _fail("Unexpected token '=>'", start)
    _function(c, stack, i - 1)

def _c_rest(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "..." or i < 2 or stack[i - 1].type != "rest_pattern":
        return
    container = stack[i - 2]
    if container.type in ("object_pattern", "array_pattern"):
        kids = [ch for ch in container.named_children if ch.type != "comment"]
        if kids and kids[-1].id != stack[i - 1].id:
            _fail("Rest element must be last element", start)
    elif container.type == "formal_parameters" and i >= 3:
        _function(c, stack, i - 3)

def _c_directive(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    for j in range(i, max(-1, i - 5), -1):
        if stack[j].type == "statement_block" and j >= 1 and stack[j - 1].type in _FUNCTION_TYPES:
            _function(c, stack, j - 1)
            return
