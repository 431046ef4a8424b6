"""Context errors V8 reports that tree-sitter's grammar does not: ``await`` directly inside a non-async
arrow function or ``function`` (top level is allowed), a ``const``/``let``/``class`` name declared twice in
one scope, and ``return`` outside any function (hand cases 95-97), each from cheap textual hits looked up
in the tree. The fast path for every script; ``exec_grammar.backends.strict`` checks the rest of strict
mode's early errors when a cheap trigger says a script may have one."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from exec_grammar.backends.ts_tree import (
    _DIRECT_MAX,
    _FUNCTIONS,
    _PLAIN_FUNCTIONS,
    _SCOPES,
    _Direct,
    _Seeker,
    _whole_word,
)

_ARROW_RE = re.compile(rb"=>")
_FUNCTION_RE = re.compile(rb"function(?![\w$])")
_RETURN_RE = re.compile(rb"return(?![\w$])")
_AWAIT_RE = re.compile(rb"await(?![\w$])")
_DECLARED_RE = re.compile(rb"(?:const|let|class)\s+([A-Za-z_$][\w$]*)")

def _context_error(root: Any, data: bytes) -> tuple[str, int] | None:
    """The first context error acorn would report (see the module docstring), as (message, byte).

    The ``=>``/``function`` tokens, ``return``s and (when a name repeats) declared names are visited in
    one forward :class:`_Seeker` pass, whose stack gives each one's enclosing function and scope without
    ``.parent`` calls (QA F11: nested arrows made the old per-function search quadratic). An ``await``
    is looked up only when it lies inside a non-async function found so far (top-level ones, nearly
    all, are allowed), i.e. after that function's ``=>``/``function`` token."""
    fn_hits: list[tuple[int, int, int]] = []
    if b"await" in data or b"return" in data:
        fn_hits.extend((m.start(), m.end(), 3) for m in _ARROW_RE.finditer(data))
        if b"function" in data:
            fn_hits.extend(
                (m.start(), m.end(), 3) for m in _FUNCTION_RE.finditer(data) if _whole_word(data, m.start())
            )
    targets: list[tuple[int, int, int]] = []  # (start, end, kind): 0 await, 1 return, 2 name, 3 function
    ranges: list[tuple[int, int]] | None = None  # every function found by its token, when few
    plain: list[tuple[int, int]] = []  # the non-async ones among them
    if len(fn_hits) <= _DIRECT_MAX:
        # Few functions (nearly every script): their tokens are looked up in C, and only an `await`
        # inside a non-async one or a `return` outside all of them needs the seeker.
        ranges = []
        direct = _Direct(root)
        for start, end, _ in fn_hits:
            token = direct.find(start, end)
            fn = direct.up(1) if token is not None and token.type in ("=>", "function") else None
            if fn is None or fn.type not in _FUNCTIONS:
                continue
            ranges.append((fn.start_byte, fn.end_byte))
            if fn.type in _PLAIN_FUNCTIONS and fn.child_count and fn.child(0).type != "async":
                plain.append((fn.start_byte, fn.end_byte))
    else:
        targets.extend(fn_hits)
    if b"await" in data and fn_hits and (ranges is None or plain):
        targets.extend(
            (m.start(), m.end(), 0)
            for m in _AWAIT_RE.finditer(data)
            if _whole_word(data, m.start()) and (ranges is None or any(a < m.start() < b for a, b in plain))
        )
    if b"return" in data:
        returns = [
            (m.start(), m.end(), 1)
            for m in _RETURN_RE.finditer(data)
            if _whole_word(data, m.start())
            and (ranges is None or not any(a < m.start() < b for a, b in ranges))
        ]
        if len(returns) <= _DIRECT_MAX:
            # most are text in strings (a patch quoting Python): dropped by a lookup in C
            direct = _Direct(root)
            returns = [t for t in returns if getattr(direct.find(t[0], t[1]), "type", None) == "return"]
        targets.extend(returns)
    names = [m for m in _DECLARED_RE.finditer(data) if _whole_word(data, m.start())]
    if len({m.group(1) for m in names}) != len(names):
        counts = Counter(m.group(1) for m in names)
        repeated = [(m.start(1), m.end(1), 2) for m in names if counts[m.group(1)] > 1]
        redeclared = _redeclared(root, data, repeated) if len(repeated) <= _DIRECT_MAX else None
        if redeclared is None:
            targets.extend(repeated)
        elif redeclared >= 0:
            byte = redeclared
            targets.append((byte, byte, -1))  # settled: kept only for the min() below
    if not targets:
        return None
    targets.sort()
    found: dict[int, tuple[int, str]] = {}
    seen: set[tuple[int, bytes]] = set()
    seeker = _Seeker(root, track=True)
    stack = seeker.stack
    # end byte of the furthest-reaching non-async function found so far (seeker-found functions)
    plain_until = -1 if ranges is None else len(data) + 1
    for start, end, kind in targets:
        if kind == -1:
            found[2] = (start, _redeclared_message(data, start))
            continue
        if kind in found or (kind == 0 and start >= plain_until):
            continue
        i = seeker.seek(start, end)
        node = stack[i]
        if kind == 3:
            if i >= 1 and node.type in ("=>", "function"):
                fn = stack[i - 1]
                if fn.type in _PLAIN_FUNCTIONS and fn.child_count and fn.child(0).type != "async":
                    plain_until = max(plain_until, fn.end_byte)
        elif kind == 0:
            if node.type != "await" or i < 2:
                continue
            f = seeker.fn[i - 2]
            fn = stack[f] if f >= 0 else None
            if (
                fn is not None
                and fn.type in _PLAIN_FUNCTIONS
                and fn.child_count
                and fn.child(0).type != "async"
            ):
                found[0] = (start, "Cannot use keyword 'await' outside an async function")
        elif kind == 1:
            if node.type != "return" or i < 1 or stack[i - 1].type != "return_statement":
                continue
            if i < 2 or seeker.fn[i - 2] < 0:
                found[1] = (start, "'return' outside of function")
        else:
            if node.type != "identifier" or i < 1:
                continue
            d = i - 1
            if stack[d].type == "variable_declarator":
                d -= 1
            if d < 1 or stack[d].type not in ("lexical_declaration", "class_declaration"):
                continue
            key = (stack[seeker.scope[d - 1]].id, data[start:end])
            if key in seen:
                found[2] = (start, _redeclared_message(data, start))
            seen.add(key)
    if not found:
        return None
    byte, message = min(found.values())
    return message, byte


def _redeclared_message(data: bytes, start: int) -> str:
    m = _NAME_RE.match(data, start)
    name = m.group().decode("utf-8", "replace") if m else "?"
    return f"Identifier '{name}' has already been declared"


_NAME_RE = re.compile(rb"[A-Za-z_$][\w$]*")
#: How far up a declaration's scope is searched from C before the seeker is asked instead.
_SCOPE_CLIMB = 8


def _redeclared(root: Any, data: bytes, targets: list[tuple[int, int, int]]) -> int | None:
    """Byte of the first name declared twice in one scope (-1: none), looking the few repeated names
    up from the root in C; None when a scope lies more than ``_SCOPE_CLIMB`` levels up (then the
    seeker, whose stack knows every scope, answers)."""
    seen: set[tuple[int, bytes]] = set()
    direct = _Direct(root)
    for start, end, _ in targets:
        node = direct.find(start, end)
        if node is None or node.type != "identifier":
            continue
        k = 1
        decl = direct.up(1)
        if decl is not None and decl.type == "variable_declarator":
            k = 2
            decl = direct.up(2)
        if decl is None or decl.type not in ("lexical_declaration", "class_declaration"):
            continue
        for up in range(k + 1, k + 1 + _SCOPE_CLIMB):
            scope = direct.up(up)
            if scope is None or scope.type in _SCOPES:
                break
        else:
            return None
        key = (scope.id if scope is not None else -1, data[start:end])
        if key in seen:
            return start
        seen.add(key)
    return -1

