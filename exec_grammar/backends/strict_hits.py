"""The textual triggers of the strict-mode checks: every place in the text worth a lookup in the tree.

Found with ``bytes.find`` and literal-first patterns (a pattern starting with ``\\b`` or a character
class cannot search for its literal and is several times slower), then filtered by the bytes around
each one; most scripts give a handful of hits. A superset: a hit in a string or comment is dropped by
its lookup. Declarations are looked up only when the text repeats a declared name or parameter."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from typing import Any, TypeVar

from exec_grammar.backends import strict_scan as SC
from exec_grammar.backends.strict_base import (
    _BINARY_ONLY,
    _FUNCTION_TYPES,
    _ID_CONTINUE,
    _NO_OPERAND_FIRST,
    _NO_OPERAND_RE,
    _WS,
    _after_trivia,
    _finds,
    _is_async,
    _next_char,
    _prev_char,
    _prev_word,
    _skip_ws,
    _words,
)
from exec_grammar.backends.ts_tree import _DIRECT_MAX, WORK

_ESCAPE_HIT_RE = re.compile(rb"\\(?:[0-9]|u\{)")

_OPTIONAL_ASSIGN_RE = re.compile(rb"\?\.[\w$.\[\]'\"]*?\s*(=)(?![=>])")

_LABEL_HIT_RE = re.compile(rb":\s*(?:(?:for|while|do|switch|function)\b|([A-Za-z_$][\w$]*)\s*:(?!:))")

_LABEL_BEFORE_RE = re.compile(rb"([A-Za-z_$][\w$]*)\s*$")

#: A parenthesised list of words with a comma in it (two parameters at least: one cannot repeat).
_PARAMS_RE = re.compile(rb"\(([\w$\s{}\[\].=:]*,[\w$\s,{}\[\].=:]*)\)")

_WORD_RE = re.compile(rb"[A-Za-z_$][\w$]*")
_WORD_AT_RE = re.compile(rb"[\w$]+")

_NAME_AT_RE = re.compile(rb"\s*\*?\s*([A-Za-z_$][\w$]*)")

_PATTERN_AT_RE = re.compile(rb"\s*([\[{][^=;]*)")

_COMMA_NAMES_RE = re.compile(rb",\s*([A-Za-z_$][\w$]*)(?=\s*(?:=(?![=>])|,|;|\n|$))")

_GROUP_AT_RE = re.compile(rb"[^(;{]*\(([^)]*)\)")

_CONST_BARE_RE = re.compile(rb"const\s+[A-Za-z_$][\w$]*\s*(?:[;,)]|$|\n)")

_FOR_VAR_IN_RE = re.compile(rb"for\s*\(\s*(var)\b[^;)]*=[^;)]*\bin\b")

_PRIVATE_RE = re.compile(rb"#[A-Za-z_$][\w$]*")

_REST_COMMA_RE = re.compile(rb"\.\.\.[\w$]*\s*,")

_UNARY_BEFORE_RE = re.compile(rb"(?:[-+!~]|\btypeof|\bvoid|\bdelete|\bawait)\s*[\w$.]+\s*$")

_BINDING_START = frozenset(b"[{abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$\\")

_NAME_END = frozenset(b"=;,)]}:?.")
_OPERATOR_BYTES = frozenset(b"!~+-*/%<>&|^")
_STATEMENT_END = frozenset((-1, 0x3B, 0x7B, 0x7D))  # start of text, `;`, `{`, `}`

_DECL_LAST = frozenset(b"rtns")  # the last letters of var, let, const, function, class

_RARE_KIND = {b"try": "try", b"with": "with", b"delete": "delete", b"super": "super", b"constructor": "ctor",
              b"break": "break", b"continue": "break", b"target": "meta", b"yield": "yield"}

def _hits(root: Any, data: bytes, gate: frozenset[int] | None = None) -> list[tuple[int, int, str]]:
    """Every textual trigger worth a lookup, as (start, end, check), sorted for the seeker. ``gate``:
    :func:`strict_scan.present` of ``data`` (the scans that match somewhere, the literals it holds)."""
    out: list[tuple[int, int, str]] = []
    add = out.append
    if gate is None:
        gate = SC.present(data)
    for st, en in SC.RARE.spans(data, gate):
        w = data[st:en]
        if st and data[st - 1] in _ID_CONTINUE:
            continue
        kind = _RARE_KIND.get(w)
        if kind is not None:
            add((st, en, kind))
        elif w in (b"get", b"set"):
            nxt = _next_char(data, en)
            if nxt in _BINDING_START or nxt in (0x22, 0x27, 0x23):
                add((st, en, "accessor"))
        elif w == b"async":
            k = en
            while k < len(data) and data[k] in b" \t":
                k += 1
            if data[k : k + 1] in (b"\n", b"\r") or data.startswith(b"/*", k):
                add((st, en, "async_nl"))
        else:
            add((st, en, "name"))
    # Declaration words are not probed for text here: the checks they trigger test their token first,
    # and only the words that bind a repeated name, or start a ``const`` list, are looked up in C.
    declarations = [(s, e, data[s:e]) for s, e in SC.declaration_words(data, gate)]
    const_lists: list[tuple[int, int, bytes]] = []
    decls: list[tuple[int, int, list[bytes], list[bytes]]] = []
    names: list[bytes] = []  # every name the declarations bind or take as parameters, in order
    bound: list[bytes] = []  # the bound ones
    n = len(data)
    nl = semi = comma = -1  # the next `\n`, `;`, `,` at or after a word's end (monotone: each found once)
    for st, en, w in declarations:
        if w == b"catch":
            g = _GROUP_AT_RE.match(data, en)
            args = _WORD_RE.findall(g.group(1)) if g is not None else []
            decls.append((st, en, [], args))
            names += args
            continue
        m = _NAME_AT_RE.match(data, en)
        binds = [m.group(1)] if m is not None else []
        args: list[bytes] = []
        if w in (b"let", b"const", b"var"):
            pattern = _PATTERN_AT_RE.match(data, en) if m is None else None
            if pattern is not None:
                # `{`, `[`: a pattern; `const {...o.x} = v`: a property where a name must be
                if _next_char(data, en) in (0x7B, 0x5B) and _MEMBER_IN_PATTERN_RE.search(pattern.group(1)):
                    add((st, en, "decl"))
                binds.extend(_WORD_RE.findall(pattern.group(1)[:2000]))
            if nl < en:
                nl = data.find(b"\n", en)
                nl = n if nl < 0 else nl
            if semi < en:
                semi = data.find(b";", en)
                semi = n if semi < 0 else semi
            if comma < en:
                comma = data.find(b",", en)
                comma = n if comma < 0 else comma
            stop = min(nl, semi)  # the rest of the declaration's line
            if comma < stop and comma < en + 2000:
                binds.extend(_COMMA_NAMES_RE.findall(data, en, min(stop, en + 2000)))
        elif w == b"function":
            g = _GROUP_AT_RE.match(data, en)
            if g is not None:
                args = _WORD_RE.findall(g.group(1))
        decls.append((st, en, binds, args))
        names += binds
        bound += binds
        if args:
            names += args
        if w == b"var":
            continue
        k = st - 1
        while k >= 0 and data[k] in _WS:
            k -= 1
        p = data[k] if k >= 0 else -1  # _prev_char
        if w in (b"function", b"class") and p in _STATEMENT_END:
            add((st, en, "expr_start"))
        elif w == b"function" and p == 0x63 and _prev_word(data, st) == b"async":  # `async function` too
            if _prev_char(data, data.rindex(b"async", 0, st)) in _STATEMENT_END:
                add((st, en, "expr_start"))
        if p == 0x29 or p == 0x3A or (p in (0x65, 0x6F) and _prev_word(data, st) in (b"else", b"do")):  # `)`, `:`, e, o
            add((st, en, "single"))
        if w == b"let":
            nxt = _next_char(data, en)
            gap = data[en : _skip_ws(data, en)]
            broke = b"\n" in gap or b"\r" in gap
            after = _WORD_AT_RE.match(data, en + len(gap))
            word = after.group() if after is not None else b""
            if (nxt not in _BINDING_START or word in (b"in", b"instanceof") or (word == b"of" and not broke)
                    or p in (0x2C, 0x28) or _prev_word(data, st) in (b"var", b"let", b"const")):
                add((st, en, "name"))
            elif broke:  # `let`, a line break, a name: V8 reads a declaration, tree-sitter two statements
                add((st, en, "let_newline"))
        elif w == b"const" and m is not None and _CONST_BARE_RE.match(data, st):
            add((st, en, "decl"))
        elif w == b"const" and comma < stop:  # a comma on the line (`const a = 1, b`)
            const_lists.append((st, en, w))
    awaits: list[int] = []
    if _L_AWAIT in gate:
        for st in _words(data, b"await"):
            k = st + 5  # _next_index, inline
            while k < n and data[k] in _WS:
                k += 1
            if k + 1 < n and data[k] == 0x2F and data[k + 1] in b"/*":
                k = _after_trivia(data, k)
            nxt = data[k] if k < n else -1
            j = st - 1  # a declaration word before it ends with one of `_DECL_LAST`
            while j >= 0 and data[j] in _WS:
                j -= 1
            if (nxt in _NAME_END or nxt == -1 or nxt in _BINARY_ONLY
                    or (j >= 0 and data[j] in _DECL_LAST and _prev_word(data, st) in (b"var", b"let", b"const", b"function", b"class"))
                    or (nxt in _NO_OPERAND_FIRST and _NO_OPERAND_RE.match(data, k))):
                add((st, st + 5, "await"))
            else:
                awaits.append(st)
    if _L_FOR in gate and _L_VAR in gate:
        out.extend((m.start(1), m.end(1), "decl") for m in _FOR_VAR_IN_RE.finditer(data))
    if _L_SPREAD in gate:
        out.extend((m.start(), m.start() + 3, "rest") for m in _REST_COMMA_RE.finditer(data))
    for lit, kind, index in _LITERAL_HITS:
        if index in gate:
            out.extend((i, i + len(lit), kind) for i in _finds(data, lit))
    if _L_NULLISH in gate and (_L_OR in gate or _L_AND in gate):  # `??` mixed with `||` or `&&`
        out.extend((i, i + 2, "logical") for i in _finds(data, b"??"))
    if _L_EXP in gate:
        for i in _finds(data, b"**"):
            # a `***` run (patch headers in strings) is text: in code it is a syntax error
            if data[i - 1 : i] == b"*" or data[i + 2 : i + 3] == b"*":
                continue
            if _UNARY_BEFORE_RE.search(data, max(0, i - 40), i):
                add((i, i + 2, "exp"))
    arrows = _finds(data, b"=>") if _L_ARROW in gate else []
    for i in arrows:
        k = i - 1
        while k >= 0 and data[k] in b" \t":
            k -= 1
        if k >= 0 and data[k] in b"\r\n" or data[max(0, k - 2) : k + 1] in (b"\xe2\x80\xa8", b"\xe2\x80\xa9"):
            add((i, i + 2, "arrow"))
        elif k >= 0 and data[k] == 0x29:  # `(…) =>`: a parameter that is not a binding (`(c.md) =>`)
            lo = data.rfind(b"(", max(0, k - 200), k)
            if lo >= 0 and _NOT_A_BINDING_RE.search(data, lo + 1, k):
                add((i, i + 2, "arrow"))
            if lo >= 0 and _prev_char(data, lo) in _OPERATOR_BYTES:
                add((i, i + 2, "arrow_operand"))
        elif k >= 0 and data[k] in _ID_CONTINUE:
            j = k
            while j >= 0 and data[j] in _ID_CONTINUE:
                j -= 1
            if _prev_char(data, j + 1) in _OPERATOR_BYTES:
                add((i, i + 2, "arrow_operand"))
    out.extend((st, st + 1, "number") for st, _ in SC.NUMBER.spans(data, gate))  # not inside a name
    if _L_UESCAPE in gate:  # `\\u`: also an escape hit when followed by `{`
        out.extend((i, i + 2, "uname") for i in _finds(data, b"\\u"))
    if _L_UESCAPE in gate or SC.DIGIT_ESCAPE in gate:
        out.extend((m.start(), m.end(), "escape") for m in _ESCAPE_HIT_RE.finditer(data))
    if _L_SLASH in gate:
        stripped = data.lstrip()
        if stripped[:1] == b"/" and stripped[1:2] not in (b"/", b"*"):
            i = len(data) - len(stripped)
            add((i, i + 1, "regex"))
        out.extend((s, e, "regex") for s, e in SC.SLASH.spans(data, gate))
        out.extend((s, e, "regex") for s, e in SC.KEYWORD_SLASH.spans(data, gate))
    if _L_HASH in gate:
        out.extend((m.start(), m.end(), "private") for m in _PRIVATE_RE.finditer(data))
    if _L_OPTIONAL in gate:
        out.extend((m.start(1), m.end(1), "assign") for m in _OPTIONAL_ASSIGN_RE.finditer(data))
        if b"`" in data:
            out.extend((i, i + 2, "optional_tag") for i in _finds(data, b"?."))
    out.extend((s, e, "assign") for s, e in SC.ASSIGN.spans(data, gate))
    if SC.LABEL in gate:
        for m in _LABEL_HIT_RE.finditer(data):
            before = _LABEL_BEFORE_RE.search(data, max(0, m.start() - 80), m.start())
            if before is not None:
                add((before.start(1), before.end(1), "label"))
            if m.group(1) is not None:
                add((m.start(1), m.end(1), "label"))
    for m in _PARAMS_RE.finditer(data):  # parameter lists repeating a word: duplicate parameters
        words = _WORD_RE.findall(m.group(1))
        if len(words) > 1 and len(set(words)) != len(words):
            add((m.start(), m.start() + 1, "params"))
    # the gate skips each scan that matches nowhere
    out.extend((s, e, "comma") for s, e in SC.HOLE.spans(data, gate))
    out.extend((s, e, "assign") for s, e in SC.OPERAND_ASSIGN.spans(data, gate))
    out.extend((s, e, "block_start") for s, e in SC.BLOCK_OBJECT.spans(data, gate))
    out.extend((s, e, "compound") for s, e in SC.COMPOUND.spans(data, gate))
    out.extend((s, s + 3, "for_of") for s, _ in SC.FOR_OF_COMMA.spans(data, gate))
    out.extend((s, e, "await_slash") for s, e in SC.AWAIT_SLASH.spans(data, gate))
    out.extend((s, e, "newline") for s, e in SC.RAW_NEWLINE.spans(data, gate))
    functions = [st for st, _, w in declarations if w == b"function"]
    _declaration_hits(root, data, decls, names, bound, const_lists, arrows, out)
    fn_tokens = [(i, i + 2) for i in arrows] + [(i, i + 8) for i in functions]
    has_class = _L_CLASS in gate
    members = None if fn_tokens else _has_members(data, has_class)
    awaits = awaits if fn_tokens or members else []
    returns = _words(data, b"return") if _L_RETURN in gate else []
    if awaits or returns:
        out.extend(_context_hits(root, data, fn_tokens, awaits, returns, members, has_class))
    out = _in_code(root, out, _TEXT_PRONE)
    out.sort()  # same start: the shorter range first (the seeker climbs to a longer one, never back down)
    return out

_L_AWAIT, _L_FOR, _L_VAR, _L_SPREAD, _L_EXP, _L_ARROW, _L_UESCAPE, _L_SLASH, _L_HASH, _L_OPTIONAL, _L_RETURN, \
    _L_CLASS = (SC.literal(lit) for lit in (b"await", b"for", b"var", b"...", b"**", b"=>", b"\\u", b"/", b"#", b"?.",
                                            b"return", b"class"))
_LITERAL_HITS = tuple((lit, kind, SC.literal(lit)) for lit, kind in (
    (b"<!--", "html"), (b"-->", "html"), (b"__proto__", "proto"), (b"use strict", "directive")))
_L_NULLISH, _L_OR, _L_AND = (SC.literal(lit) for lit in (b"??", b"||", b"&&"))
_MEMBER_IN_PATTERN_RE = re.compile(rb"[\w$)\]]\s*(?:\.(?!\.)|\[)")
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

#: Something that may be a method or a class member: then every ``await`` and ``return`` is looked up
#: (a method is not found by a ``function``/``=>`` token).
_MEMBER_RE = re.compile(rb"\)\s*\{")

_MEMBER_HEAD_RE = re.compile(rb"(?:^|[{,])\s*(?:(?:async|get|set|static)\s+|\*\s*)*[\w$]+\s*$")

def _has_members(data: bytes, has_class: bool = True) -> bool:
    if has_class and re.search(rb"\bclass\b", data):
        return True
    for m in _MEMBER_RE.finditer(data):
        j = data.rfind(b"(", max(0, m.start() - 2000), m.start())
        if j > 0 and _MEMBER_HEAD_RE.search(data, max(0, j - 80), j):
            return True
    return False

def _context_hits(
    root: Any,
    data: bytes,
    fn_tokens: list[tuple[int, int]],
    awaits: list[int],
    returns: list[int],
    members: bool | None = None,
    has_class: bool = True,
) -> list[tuple[int, int, str]]:
    """``await`` and ``return`` hits worth a lookup. With few function tokens and no method or class,
    the functions are found from their tokens in C (one named-descendant lookup each): then only an ``await`` inside a
    non-async one and a ``return`` outside all of them are looked up (most scripts: none)."""
    if len(fn_tokens) > _DIRECT_MAX or (_has_members(data, has_class) if members is None else members):
        return [(a, a + 5, "await") for a in awaits] + [(r, r + 6, "return") for r in returns]
    ranges: list[tuple[int, int]] = []
    plain: list[tuple[int, int]] = []
    find = root.named_descendant_for_byte_range  # the function itself: its token is not named
    cost = root.descendant_count
    for st, en in fn_tokens:
        WORK[0] += cost
        fn = find(st, en)
        if fn is None or fn.type not in _FUNCTION_TYPES:
            continue
        ranges.append((fn.start_byte, fn.end_byte))
        if not _is_async(fn):
            plain.append((fn.start_byte, fn.end_byte))
    out: list[tuple[int, int, str]] = []
    if awaits and plain:
        los, his = _union(plain)
        out = [(a, a + 5, "await") for a in awaits if (j := bisect_left(los, a) - 1) >= 0 and a < his[j]]
    if returns:
        los, his = _union(ranges)
        out.extend([(r, r + 6, "return") for r in returns if (j := bisect_left(los, r) - 1) < 0 or r >= his[j]])
    return out

def _union(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The union of the open intervals ``(lo, hi)`` as sorted disjoint ones (starts, ends): an offset is
    strictly inside one of the ranges when it is strictly inside the last union interval starting
    before it."""
    los: list[int] = []
    his: list[int] = []
    for lo, hi in sorted(ranges):
        if his and lo < his[-1]:
            if hi > his[-1]:
                his[-1] = hi
        else:
            los.append(lo)
            his.append(hi)
    return los, his
