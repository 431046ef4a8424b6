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


class _BindingLookup:
    """``name -> Binding`` when the name is declared exactly once in the script, by ``const``, with a
    string or template value. Only the textual hits of the names are looked up in the tree (a query
    over the whole tree costs about half a parse). The first few names are looked up one by one; after
    that one pass answers every name a patch is likely to ask for (``${name}``, a lone identifier
    argument), so a patch naming thousands of variables stays linear (QA F11)."""

    __slots__ = ("root", "data", "cache", "batched")

    def __init__(self, root: Any, data: bytes) -> None:
        self.root = root
        self.data = data
        self.cache: dict[str, Binding | None] = {}
        self.batched = 0  # 0: one name at a time, 1: likely names answered, 2: every word answered

    def __call__(self, name: str) -> Binding | None:
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
        return self.cache[name]

    def _lookup(self, names: set[bytes]) -> dict[str, Binding | None]:
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
        declarations: dict[bytes, int] = dict.fromkeys(names, 0)
        found: dict[bytes, Binding | None] = {}
        finder: _Direct | _Seeker = _Direct(self.root) if len(hits) <= _DIRECT_MAX else _Seeker(self.root)
        for start, word in hits:
            node = finder.find(start, start + len(word))
            if node is None or node.type not in ("identifier", "shorthand_property_identifier_pattern"):
                continue
            parent = finder.up(1)
            if parent is None:
                continue
            if node.type == "shorthand_property_identifier_pattern":
                declarations[word] += 1
                continue
            if parent.type not in _DECLARING_PARENTS:
                continue
            field = _DECLARING_PARENTS[parent.type]
            if field is not None:
                named = parent.child_by_field_name(field)
                if named is None or named.start_byte != node.start_byte:
                    continue
            declarations[word] += 1
            if parent.type == "variable_declarator":
                decl = finder.up(2)
                value = parent.child_by_field_name("value")
                if decl is not None and decl.type == "lexical_declaration" and value is not None:
                    first = decl.child(0)
                    if first is not None and first.type == "const":
                        found[word] = _binding_value(value, data)
        return {
            w.decode("utf-8", "surrogatepass"): (found.get(w) if n == 1 else None)
            for w, n in declarations.items()
        }


