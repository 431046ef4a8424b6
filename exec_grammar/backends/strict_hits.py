"""The textual triggers of the strict-mode checks: every place in the text worth a lookup in the tree.

Found with ``bytes.find`` and literal-first patterns (a pattern starting with ``\\b`` or a character
class cannot search for its literal and is several times slower), then filtered by the bytes around
each one; most scripts give a handful of hits. A superset: a hit in a string or comment is dropped by
its lookup. Declarations are looked up only when the text repeats a declared name or parameter."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

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
from exec_grammar.backends.strict_names import (
    _NOT_A_BINDING_RE,
    _TEXT_PRONE,
    _WORD_RE,
    _declaration_hits,
    _in_code,
)
from exec_grammar.backends.ts_tree import _DIRECT_MAX, WORK

_ESCAPE_HIT_RE = re.compile(rb"\\(?:[0-9]|u\{)")

_OPTIONAL_ASSIGN_RE = re.compile(rb"\?\.[\w$.\[\]'\"]*?\s*(=)(?![=>])")

_LABEL_HIT_RE = re.compile(rb":\s*(?:(?:for|while|do|switch|function)\b|([A-Za-z_$][\w$]*)\s*:(?!:))")

_LABEL_BEFORE_RE = re.compile(rb"([A-Za-z_$][\w$]*)\s*$")

#: A parenthesised list of words with a comma in it (two parameters at least: one cannot repeat).
_PARAMS_RE = re.compile(rb"\(([\w$\s{}\[\].=:]*,[\w$\s,{}\[\].=:]*)\)")

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
            params = _WORD_RE.findall(g.group(1)) if g is not None else []
            decls.append((st, en, [], params))
            names += params
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
