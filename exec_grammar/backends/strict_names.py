"""The declarations and parameters whose names the text repeats (the redeclaration triggers of
``strict_hits``), and the bounded C lookups that drop triggers falling in text.

A name is looked up for redeclaration only when a binding of it is repeated: the names are listed
while ``strict_hits`` reads the declaration words, and counted here in C."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, TypeVar

from exec_grammar.backends import strict_scan as SC
from exec_grammar.backends.strict_base import _ID_CONTINUE, _WS, _prev_char, _prev_word
from exec_grammar.backends.ts_tree import WORK

_WORD_RE = re.compile(rb"[A-Za-z_$][\w$]*")

#: In a parameter list: a member access (not `...rest`) or a call, which no parameter may be.
_NOT_A_BINDING_RE = re.compile(rb"[\w$)\]]\s*\.\s*[A-Za-z_$]|[\w$]\s*\(")

def _declaration_hits(
    root: Any,
    data: bytes,
    decls: list[tuple[int, int, list[bytes], list[bytes]]],
    names: list[bytes],
    bound: list[bytes],
    const_lists: list[tuple[int, int, bytes]],
    arrows: list[int],
    out: list[tuple[int, int, str]],
) -> None:
    """The declarations and functions that may bind a name the text repeats, when one of its
    occurrences is a binding (``let``/``const``/``var``/``class`` or a function's name): every clash the
    checker knows has a lexical or a ``var`` declaration on one side, so names that only parameters and
    catch parameters repeat cannot clash (a superset of the names V8 could find redeclared). Names are
    counted over every declaration word first; only the words of repeated names are then probed for
    text (a patch in a string repeats the code it changes), and the names counted again without them.
    And the ``const`` lists (``const a = 1, b``) that hold more than one declarator: one of them may
    lack its initializer."""
    arrow_params = _arrow_params(data, [(i, i + 2) for i in arrows if not _expression_body(data, i)])
    params = [(at, at + 2, "arrow", names) for at, names in arrow_params]
    if b"{" in data:  # `m(a) { let a }`: a method's parameters (no `function` or `=>` names them)
        methods, not_bindings = _method_params(data)
        params.extend(methods)
        out.extend(not_bindings)  # `function f(a.b) {}`: checked whatever the names
    budget = [_PROBES]
    for param in params:
        names = names + param[3]
    repeated = _repeated_names(names, bound)
    if repeated:
        probe = [d[:2] for d in decls if repeated.intersection(d[2]) or repeated.intersection(d[3])]
        in_text = {d[0] for d in probe} - {d[0] for d in _in_code(root, [(s, e, b"") for s, e in probe], None, budget)}
        if in_text:
            decls = [d for d in decls if d[0] not in in_text]
            repeated = _repeated(decls, params)
    for st, en, binds, args in decls if repeated else ():
        if repeated.intersection(binds) or repeated.intersection(args):
            out.append((st, en, "decl"))
    for at, end, kind, names in params if repeated else ():
        if repeated.intersection(names):
            out.append((at, end, kind))
    for st, en, _ in const_lists:
        if budget[0] > 0:
            budget[0] -= 1
            WORK[0] += root.descendant_count
            node = root.named_descendant_for_byte_range(st, en)
            if node is not None and (node.type in _NOT_CODE or (node.type == "lexical_declaration" and node.named_child_count < 2)):
                continue  # in text, or one declarator: `const a = f(x, y)` (a bare `const a` has its own hit)
        out.append((st, en, "decl"))

def _repeated_names(names: list[bytes], bound: list[bytes]) -> set[bytes]:
    """:func:`_repeated` of names already listed: counted in C (a set first; a ``Counter`` only when
    some name repeats, about half the scripts)."""
    if len(set(names)) == len(names):
        return set()
    repeated = {w for w, k in Counter(names).items() if k > 1}
    repeated.intersection_update(bound)
    return repeated

def _repeated(
    decls: list[tuple[int, int, list[bytes], list[bytes]]], params: list[tuple[int, int, str, list[bytes]]]
) -> set[bytes]:
    seen: set[bytes] = set()
    repeated: set[bytes] = set()
    bound: set[bytes] = set()
    for _, _, binds, args in decls:
        bound.update(binds)
        for names in (binds, args):
            for w in names:
                if w in seen:
                    repeated.add(w)
                seen.add(w)
    for _, _, _, names in params:
        for w in names:
            if w in seen:
                repeated.add(w)
            seen.add(w)
    repeated &= bound
    return repeated

#: ``) {``: the end of a parameter list before a body (also of an ``if``/``while`` head or a call
#: before a block: the checker keeps only a method's). Literal-first: the engine searches for ``)``.
_PARAMS_END_RE = re.compile(rb"\)[ \t\r\n]*\{")
_NOT_METHODS = frozenset({b"function", b"if", b"while", b"for", b"switch", b"catch", b"with"})

def _method_params(data: bytes) -> tuple[list[tuple[int, int, str, list[bytes]]], list[tuple[int, int, str]]]:
    """``name(params) {`` with its parameter words: a method's parameters, which no ``function`` or
    ``=>`` token names; and the lists holding a member access (``function f(a.b) {}``), of functions
    too. Parameter lists holding parentheses (a default calling a function) are not read."""
    out: list[tuple[int, int, str, list[bytes]]] = []
    not_bindings: list[tuple[int, int, str]] = []
    for m in _PARAMS_END_RE.finditer(data):
        close = m.start()
        open_ = data.rfind(b"(", max(0, close - 2000), close)
        if open_ < 0 or data.find(b")", open_, close) >= 0:
            continue
        names = _WORD_RE.findall(data, open_ + 1, close)
        if not names:
            continue
        before = _prev_char(data, open_)
        word = _prev_word(data, open_)
        if (before in _ID_CONTINUE or before in (0x5D, 0x22, 0x27)) and word not in _NOT_METHODS:
            out.append((open_, open_ + 1, "params", names))
        if (word == b"function" or word not in _NOT_METHODS) and _NOT_A_BINDING_RE.search(data, open_ + 1, close):
            not_bindings.append((open_, open_ + 1, "params"))
    return out, not_bindings

#: At most this many declaration words are looked up in C (a bounded number of root descents stays
#: linear); the words after them are all kept.
_PROBES = 64

_NOT_CODE = frozenset({"string_fragment", "comment", "regex_pattern"})

_T = TypeVar("_T", bytes, str)

def _in_code(
    root: Any, items: list[tuple[int, int, _T]], kinds: frozenset[str] | None = None, budget: list[int] | None = None
) -> list[tuple[int, int, _T]]:
    """The items (declaration words, or hits of ``kinds``) that are not inside a string, template
    text, comment or regex. A patch in a string repeats the code it changes (``+const re = …``,
    ``-  return x``, ``a = b``): without this, most scripts looked them up in the tree one by one, for
    nothing. Dropped: only items whose lookup would find such a text node, where each of these checks
    returns at once (it first tests the token it was triggered by)."""
    probe = root.descendant_for_byte_range
    cost = root.descendant_count
    out: list[tuple[int, int, _T]] = []
    left = _PROBES if budget is None else budget[0]
    for d in items:
        if left > 0 and (kinds is None or d[2] in kinds):
            left -= 1
            WORK[0] += cost
            node = probe(d[0], d[1])
            if node is not None and node.type in _NOT_CODE:
                continue
        out.append(d)
    if budget is not None:
        budget[0] = left
    return out

#: The hit kinds most often found in text (patches in strings), and whose checks test their token first.
_TEXT_PRONE = frozenset({"assign", "return", "name", "regex", "await"})

_SPACE = frozenset(b" \t\r\n\v\f")

def _expression_body(data: bytes, at: int) -> bool:
    """The ``=>`` at ``at`` surely has an expression body: its parameters are then declared in no scope
    a ``let`` can share (the checker keys them by a block body), so they cannot be redeclared. Unsure
    (a comment or a non-ASCII byte around the arrow, which may hide a block or a line break) is False."""
    k = at + 2
    n = len(data)
    while k < n and data[k] in _SPACE:
        k += 1
    if k >= n or data[k] in b"{/" or data[k] >= 0x80:
        return False
    j = at - 1
    while j >= 0 and data[j] in _SPACE:
        j -= 1
    return j >= 0 and data[j] != 0x2F and data[j] < 0x80

def _arrow_params(data: bytes, fn_tokens: list[tuple[int, int]]) -> list[tuple[int, list[bytes]]]:
    """Each ``=>`` with the words of its parameter list, read backwards from the text."""
    out: list[tuple[int, list[bytes]]] = []
    for st, _en in fn_tokens:
        if data[st : st + 2] != b"=>":
            continue
        k = st - 1
        while k >= 0 and data[k] in _WS:
            k -= 1
        if k >= 0 and data[k] == 0x29:  # `)`: back to its `(`
            lo = max(0, k - 2000)
            j = data.rfind(b"(", lo, k)
            if j < 0:
                out.append((st, _WORD_RE.findall(data, lo, k)))
                continue
            if data.find(b")", j + 1, k) < 0:  # no nested group: the nearest `(` is its own
                out.append((st, _WORD_RE.findall(data, j + 1, k)))
                continue
            depth = 0
            j = k
            while j >= lo:
                c = data[j]
                if c == 0x29:
                    depth += 1
                elif c == 0x28:
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            out.append((st, _WORD_RE.findall(data, j + 1, k)))
        else:  # one parameter: the name ending right before `=>` (at most 80 bytes of it)
            lo = max(0, k - 80)
            while k >= lo and data[k] in b"\v\f":  # the rest of ``re``'s whitespace
                k -= 1
            j = k
            while j >= lo and data[j] in SC._WORD_BYTES:
                j -= 1
            i = j + 1
            while i <= k and 0x30 <= data[i] <= 0x39:  # a name starts with a letter, `_` or `$`
                i += 1
            out.append((st, [data[i : k + 1]] if i <= k else []))
    return out
