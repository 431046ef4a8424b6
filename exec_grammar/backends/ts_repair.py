"""Runtime errors that tree-sitter reads as syntax errors: an assignment to a call.

V8 parses ``f() = 1``, ``f() += 1``, ``for (f() in o)`` and ``for (f() of a)`` (a call as an assignment
target is a runtime ``ReferenceError``, for web compatibility) and runs every statement before them;
tree-sitter's grammar rejects them. Reading such a script as a parse failure would say its earlier
commands never ran ( a 0.144 cell that ran ``rm -rf build && make`` and then failed on
``done() = 1``). So when tree-sitter reports an error, each such construct is rewritten in a copy of the
same length (offsets unchanged): the assignment operator becomes a comma (``f() , 1``), and a
``for (CALL in/of X)`` head becomes ``if  (CALL in X)``. The copy is parsed again; it is used only when
it parses cleanly and every rewritten place is still a call where the target was (``a + f() = 1`` stays
a syntax error, as in V8). Linear: one regex pass and one more parse, only for scripts with an error.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

from exec_grammar.backends.ts_tokens import Tok, tokens
from exec_grammar.backends.ts_tree import only_benign_errors
from exec_grammar.lexer import TokenKind

__all__ = ["repair"]

_ASSIGN_AFTER_CALL = re.compile(rb"\)(\s*)(\*\*=|>>>=|<<=|>>=|[-+*/%&|^]=|=)(?![=>])")
_FOR_HEAD = re.compile(rb"\bfor(\s*(?:await\s*)?)\(")


def _unwrap(node: Any) -> Any:
    while node is not None and node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        node = inner[0] if len(inner) == 1 else None
    return node


def repair(data: bytes, root: Any, parse: Any) -> tuple[bytes, Any] | None:
    """``(patched bytes, its tree)`` when every error of ``root`` is an assignment to a call, else None.

    Every candidate is rewritten; a rewritten place whose target turns out not to be a call (``(a) = 1``
    is valid as written; ``a + f() = 1`` is V8's syntax error too) is restored, and the copy parsed
    again: it must then parse cleanly."""
    patched = bytearray(data)
    commas: list[tuple[int, int]] = []
    ifs: list[tuple[int, int, int]] = []
    for m in _ASSIGN_AFTER_CALL.finditer(data):
        op = m.start(2)
        width = m.end(2) - op
        patched[op : op + width] = b"," + b" " * (width - 1)
        commas.append((op, width))
    heads = list(_FOR_HEAD.finditer(data))
    toks = tokens(data) if heads else []
    starts = [t.start for t in toks]
    for m in heads:
        kw = _in_of_after_call(toks, bisect_left(starts, m.end() - 1), m.end() - 1)
        if kw < 0:
            continue
        width = m.end() - 1 - m.start()  # `for`, `for await`, with the blanks before `(`
        patched[m.start() : m.start() + width] = b"if" + b" " * (width - 2)
        patched[kw : kw + 2] = b"in"
        ifs.append((m.start(), width, kw))
    if not commas and not ifs:
        return None
    for _attempt in range(2):
        new = bytes(patched)
        tree = parse(new)
        r = tree.root_node
        kept_commas = [(op, width) for op, width in commas if _call_before_comma(r, op)]
        kept_ifs = [(at, width, kw) for at, width, kw in ifs if _call_in_test(r, at)]
        if len(kept_commas) == len(commas) and len(kept_ifs) == len(ifs):
            clean = not r.has_error or only_benign_errors(r)  # String.raw`C:\users` stays benign
            return (new, tree) if clean and (commas or ifs) else None
        for op, width in set(commas) - set(kept_commas):
            patched[op : op + width] = data[op : op + width]
        for at, width, kw in set(ifs) - set(kept_ifs):
            patched[at : at + width] = data[at : at + width]
            patched[kw : kw + 2] = data[kw : kw + 2]
        commas, ifs = kept_commas, kept_ifs
    return None


def _in_of_after_call(toks: list[Tok], i: int, at: int) -> int:
    """In a ``for (`` head whose ``(`` is token ``i``, at byte ``at``: the offset of an ``in``/``of`` that directly follows
    a ``)`` at the head's own depth (``for (f() of a)``), else -1. Read on the tokens, so that a bracket
    in a string, a regex or a comment (``for (f(/]/) in o)``) is not counted; at most 4 KB of the head."""
    if i >= len(toks) or toks[i].start != at or toks[i].text != "(":
        return -1  # the `(` matched in the bytes is inside a string, a regex or a comment
    depth = 0
    end = toks[i].start + 4096
    for k in range(i, len(toks)):
        t = toks[k]
        if t.start > end:
            return -1
        if t.kind is not TokenKind.PUNCT:
            continue
        if t.text in ("(", "[", "{", "${"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return -1
            if t.text == ")" and depth == 1 and k + 1 < len(toks) and toks[k + 1].text in ("in", "of"):
                return toks[k + 1].start
        elif t.text == ";" and depth == 1:  # a plain for head
            return -1
    return -1


def _call_before_comma(r: Any, op: int) -> bool:
    """The rewritten comma at ``op`` follows a call: the expression right before it (in a sequence, an
    argument list or an array; the right side of ``a = f() = 1``) is a call ending there."""
    comma = r.descendant_for_byte_range(op, op + 1)
    seq = comma.parent if comma is not None else None
    if seq is None or seq.type not in ("sequence_expression", "arguments", "array"):
        return False
    before = [c for c in seq.named_children if c.end_byte <= op and c.type != "comment"]
    left = _unwrap(before[-1]) if before else None
    if left is not None and left.type == "assignment_expression":
        left = _unwrap(left.child_by_field_name("right"))
    return left is not None and left.type == "call_expression" and left.end_byte <= op


def _call_in_test(r: Any, at: int) -> bool:
    kw = r.descendant_for_byte_range(at, at + 2)
    stmt = kw.parent if kw is not None else None
    cond = stmt.child_by_field_name("condition") if stmt is not None and stmt.type == "if_statement" else None
    test = _unwrap(cond)
    if test is None or test.type != "binary_expression":
        return False
    op_node = test.child_by_field_name("operator")
    left = _unwrap(test.child_by_field_name("left"))
    return op_node is not None and op_node.type == "in" and left is not None and left.type == "call_expression"
