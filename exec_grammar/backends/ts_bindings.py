"""Const bindings from the tree: what ``${name}`` in a patch template, or a patch passed by name, holds.

A name resolves by scope, as V8 resolves it: the declaration that a use at a given offset sees is the
one of the innermost scope (block, function or program) that declares the name and contains the use."""

from __future__ import annotations

import re
from typing import Any

from exec_grammar.backends import Binding
from exec_grammar.backends.ts_tree import _DIRECT_MAX, _NAME_BYTES, _Direct, _Seeker, _text, _whole_word
from exec_grammar.literals import cook_template_text, decode_string_literal


def _binding_value(value: Any, data: bytes) -> Binding | None:
    kind = value.type
    if kind == "string":
        return Binding(decode_string_literal(_text(value, data)))
    if kind == "template_string":
        if any(c.type == "template_substitution" for c in value.named_children):
            return Binding(None, _text(value, data))
        return Binding(cook_template_text(_text(value, data)[1:-1]))
    if kind == "call_expression":
        fn = value.child_by_field_name("function")
        args = value.child_by_field_name("arguments")
        if fn is not None and args is not None and args.type == "template_string":
            if _text(fn, data).replace(" ", "") == "String.raw":
                return Binding(None, _text(args, data), raw=True)
    return None


#: Where an identifier node declares its name: parent type -> the parent's field holding the name, or
#: None when any identifier child declares (parameter lists, array patterns).
_DECLARING_PARENTS: dict[str, str | None] = {
    "variable_declarator": "name",
    "function_declaration": "name",
    "generator_function_declaration": "name",
    "class_declaration": "name",
    "function_expression": "name",
    "class": "name",
    "for_in_statement": "left",
    "arrow_function": "parameter",
    "catch_clause": "parameter",
    "assignment_pattern": "left",
    "pair_pattern": "value",
    "formal_parameters": None,
    "array_pattern": None,
    "rest_pattern": None,
}


#: Names a const binding is likely asked for: ``${name}`` in templates and a lone identifier argument.
_ASKED_RE = re.compile(
    rb"\$\{\s*([A-Za-z_$\x80-\xff][\w$\x80-\xff]*)\s*\}|\(\s*([A-Za-z_$\x80-\xff][\w$\x80-\xff]*)\s*\)"
)
#: Names looked up one by one before one pass looks up every likely name at once.
_SINGLE_LOOKUPS = 8
_WORD_RE = re.compile(rb"[\w$\x80-\xff]+")


_PATTERNS = frozenset(
    {"object_pattern", "array_pattern", "pair_pattern", "assignment_pattern", "object_assignment_pattern",
     "rest_pattern"}
)
_BLOCKS = frozenset(
    {"statement_block", "program", "for_statement", "for_in_statement", "switch_body", "class_static_block"}
)
_FUNCTION_NODES = frozenset(
    {"function_declaration", "function_expression", "function", "generator_function",
     "generator_function_declaration", "arrow_function", "method_definition"}
)
#: How far up a declaration's scope is looked for (a deeper one is not resolved: no binding, no shadow).
_SCOPE_CLIMB = 64


def declaration_scope(up: Any) -> tuple[int, int] | None:
    """The byte range of the scope a declared name (``up(0)``, whose parent ``up(1)`` declares it) is
    visible in, as V8 scopes it: a ``let``/``const``/``class`` or a function declaration, its block; a
    ``var``, its function (or the module); a parameter, its function; a catch parameter, its catch
    clause; a function or class expression's own name, that expression. None when not found."""
    k = 1
    parent = up(1)
    while parent is not None and parent.type in _PATTERNS and k < _SCOPE_CLIMB:
        k += 1
        parent = up(k)
    if parent is None:
        return None
    t = parent.type
    if t == "formal_parameters" or t == "arrow_function" or (t in _FUNCTION_NODES and k > 1):
        fn = parent if t != "formal_parameters" else up(k + 1)
        return (fn.start_byte, fn.end_byte) if fn is not None else None
    if t == "catch_clause":
        return parent.start_byte, parent.end_byte
    if t in ("function_expression", "class", "generator_function"):
        return parent.start_byte, parent.end_byte
    var = False
    if t == "variable_declarator":
        decl = up(k + 1)
        var = decl is not None and decl.type == "variable_declaration"
        k += 1
    elif t == "for_in_statement":
        kind = parent.child_by_field_name("kind")
        if kind is None or kind.type != "var":
            return parent.start_byte, parent.end_byte
        var = True
    for j in range(k + 1, k + _SCOPE_CLIMB):
        n = up(j)
        if n is None:
            return None
        if var:
            if n.type in _FUNCTION_NODES or n.type == "program":
                return n.start_byte, n.end_byte
        elif n.type in _BLOCKS:
            return n.start_byte, n.end_byte
    return None


class _BindingLookup:
    """``name -> Binding`` when the name is declared exactly once in the script, by ``const``, with a
    string or template value. Only the textual hits of the names are looked up in the tree (a query
    over the whole tree costs about half a parse). The first few names are looked up one by one; after
    that one pass answers every name a patch is likely to ask for (``${name}``, a lone identifier
    argument), so a patch naming thousands of variables stays linear."""

    __slots__ = ("root", "data", "cache", "batched")

    def __init__(self, root: Any, data: bytes) -> None:
        self.root = root
        self.data = data
        self.cache: dict[str, list[tuple[int, int, Binding | None]]] = {}
        self.batched = 0  # 0: one name at a time, 1: likely names answered, 2: every word answered

    def __call__(self, name: str, at: int | None = None) -> Binding | None:
        """The const binding ``name`` has at byte ``at`` (the innermost scope declaring it there, when
        it declares it once), or, with ``at`` None, the script's only declaration of the name."""
        if name not in self.cache:
            if self.batched == 2:
                return None  # every word of the script was answered: this name never occurs
            names = {name.encode("utf-8", "surrogatepass")}
            if self.batched == 1:
                # a name the likely set missed (``${/*c*/x}``): answer every word once, so a run of
                # such names cannot cost a scan each
                self.batched = 2
                names.update(m.group() for m in _WORD_RE.finditer(self.data))
            elif len(self.cache) >= _SINGLE_LOOKUPS:
                self.batched = 1
                names.update(m.group(1) or m.group(2) for m in _ASKED_RE.finditer(self.data))
            self.cache.update(self._lookup(names))
        return _resolve(self.cache[name], at)

    def _lookup(self, names: set[bytes]) -> dict[str, list[tuple[int, int, Binding | None]]]:
        data = self.data
        hits: list[tuple[int, bytes]] = []
        if len(names) <= 64:
            for word in names:  # bytes.find in C per name: a bounded number of linear scans
                pos = data.find(word)
                while pos >= 0:
                    end = pos + len(word)
                    if _whole_word(data, pos) and (end == len(data) or data[end] not in _NAME_BYTES):
                        hits.append((pos, word))
                    pos = data.find(word, end)
            hits.sort()
        else:  # many names: one scan over every word
            hits = [(m.start(), m.group()) for m in _WORD_RE.finditer(data) if m.group() in names]
        declarations: dict[bytes, list[tuple[int, int, Binding | None]]] = {n: [] for n in names}
        finder: _Direct | _Seeker = _Direct(self.root) if len(hits) <= _DIRECT_MAX else _Seeker(self.root)
        for start, word in hits:
            node = finder.find(start, start + len(word))
            if node is None or node.type not in ("identifier", "shorthand_property_identifier_pattern"):
                continue
            parent = finder.up(1)
            if parent is None:
                continue
            if node.type != "shorthand_property_identifier_pattern":
                if parent.type not in _DECLARING_PARENTS:
                    continue
                field = _DECLARING_PARENTS[parent.type]
                if field is not None:
                    named = parent.child_by_field_name(field)
                    if named is None or named.start_byte != node.start_byte:
                        continue
            scope = declaration_scope(finder.up)
            lo, hi = scope if scope is not None else (0, len(data))
            binding = None
            if parent.type == "variable_declarator":
                decl = finder.up(2)
                value = parent.child_by_field_name("value")
                if decl is not None and decl.type == "lexical_declaration" and value is not None:
                    first = decl.child(0)
                    if first is not None and first.type == "const":
                        binding = _binding_value(value, data)
            declarations[word].append((lo, hi, binding))
        return {w.decode("utf-8", "surrogatepass"): d for w, d in declarations.items()}


def _resolve(decls: list[tuple[int, int, Binding | None]], at: int | None) -> Binding | None:
    if at is None:
        return decls[0][2] if len(decls) == 1 else None
    inner = [d for d in decls if d[0] <= at < d[1]]
    if not inner:
        return None
    width = min(hi - lo for lo, hi, _ in inner)
    innermost = [d for d in inner if d[1] - d[0] == width]
    return innermost[0][2] if len(innermost) == 1 else None


