"""Braces that start a statement or an arrow body, which tree-sitter reads as object literals.

A ``{`` where a statement starts (or right after ``=>``) is always a block in JavaScript: an expression
statement cannot begin with ``{``, and an arrow body that begins with one is a function body. V8 reads
``a: { a: 1 }`` as the label ``a`` on a block holding the label ``a`` again (an early error), ``{a: 1,
b: 2}`` as a block whose second "label" is a syntax error, ``{m() {}}`` as a call and a block without
a separator, and ``{a: 1}\\n/x/g`` as a block and a regular expression. tree-sitter-javascript prefers
the object literal in all of these (a label mutation of a real pragma line, ``ec: {"yield_time_ms":
…}``, was read as parsing fine), so its verdict, its labels and its regex-or-division reading differ.

The fix reads each such brace as a block in a copy: a ``;`` after the ``{`` (``{;a: 1}``) cannot be an
object, and an empty statement changes nothing in a block. When a blank is next to the brace the copy
keeps the same length (the blank after ``{`` becomes ``;``, or ``a: {`` becomes ``a:{;``), so every
offset maps back and the copy replaces the tree for everything (calls, labels, early errors). A brace
with no blank beside it (``a:{b:1}``) gets a ``;`` inserted; that longer copy only gives the verdict
(its error, mapped back to the script's offsets), and the calls are read from the original tree: the
two readings hold the same calls whenever both parse. Nested misreadings (``a: {b: {c: 1}}``) show only
once the outer brace is a block, so the copy is re-checked, a bounded number of rounds.

Labels: a label declared again inside its own body (``a: { f(); a: 1 }``) is found here too, from the
names of labels on blocks and loops, each later ``name:`` looked up in the tree.

Cost: one regex pass for braces after a statement boundary (``; { } ) :``, ``=>``, ``else``, ``do``,
a line start), each looked up in the tree from C; one more parse only for scripts with a misreading.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from exec_grammar.backends.strict import early_error
from exec_grammar.backends.ts_tree import _error_nodes, _is_benign_error

__all__ = ["Reread", "reread_blocks"]

#: A ``{`` followed by what tree-sitter may read as an object member (``a:``, ``m(``, ``get x``, a quoted
#: or numeric key, ``[``, ``*``, ``...``, a pattern ``{a} =``, ``{} =``); a block holding ``const``, ``await``, ``return``… does not
#: match, nor a brace right after ``( , = [ ?`` (``f({cmd: …})``, most braces of a script: an expression,
#: checked by a one-byte lookbehind where the ``{`` is found). Literal-first, so the engine searches for ``{``.
_MEMBER_AFTER_BRACE = re.compile(
    rb"\{(?<![(,=\[?]\{)[ \t\r\n]*(?:[A-Za-z_$][\w$]*[ \t\r\n]*[:(,}=]|\}[ \t\r\n]*=(?![=>])|(?:get|set|async|static)[ \t\r\n]+[A-Za-z_$\[*\"'\d#]"
    rb"|[\"'\d\[*]|\.\.\.)"
)
#: ``=> {``: an arrow function's block body, and after its ``}``, on the same line, a token that would
#: make the function an operand (checked in the tree by ``_arrow_operand``).
_ARROW_BLOCK = re.compile(rb"=>[ \t\r\n]*\{")
_OPERATOR_AFTER = re.compile(rb"[ \t]*(?:[.(\[`?*%<>+\-&|^!]|=(?![>=])|/(?![/*])|in(?:stanceof)?(?![\w$]))")
#: Bytes before a ``{`` where a statement may start (``if (x) {``, ``a: {``, ``; {``, ``} {``, ``=> {``).
_STATEMENT_BEFORE = frozenset(b";{}):>")
#: Bytes that end an expression: a ``{`` after one starts a statement only across a line break (ASI).
_EXPRESSION_END = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$]'\"`")
#: A function or class where a label's body (a statement) starts: a declaration V8 rejects there.
_DECLARATION_WORD = re.compile(rb"(?:async\s+)?(?:function|class)(?![\w$])")
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$\\") | frozenset(range(0x80, 0x100))
_LINE_TERMINATORS = (b"\n", b"\r", "\u2028".encode(), "\u2029".encode())
_BLANK = b" \t\n\r\x0b\x0c"
#: Rounds of re-reading: each makes the outermost remaining misread brace a block.
_ROUNDS = 4


class Reread(NamedTuple):
    #: a copy of the script's length with every misread brace a block (and its tree), when one exists
    data: bytes | None
    tree: Any
    #: when the copy had to be longer: V8's error as (message, byte offset in the script), None if none
    error: tuple[str, int] | None


def _statement_brace(data: bytes, b: int) -> bool:
    """The ``{`` at ``b`` may start a statement or an arrow body, by the text before it."""
    i = b - 1
    broke = False
    while i >= 0 and data[i] in _BLANK:
        broke = broke or data[i] in b"\n\r"
        i -= 1
    if i < 0:
        return True
    c = data[i]
    if c in _STATEMENT_BEFORE:
        return c != 0x3E or (i > 0 and data[i - 1] == 0x3D)  # `>` only as `=>`
    if c in _EXPRESSION_END:
        return broke or data[max(0, i - 3) : i + 1] in (b"else", b"do") or data[max(0, i - 1) : i + 1] == b"do"
    return False


def _misread(data: bytes, root: Any) -> tuple[list[int], int]:
    """Offsets of the ``{`` that tree-sitter read as an object where a statement or arrow body starts,
    and the first arrow function with a block body used as an operand (or -1)."""
    out: list[int] = []
    for m in _MEMBER_AFTER_BRACE.finditer(data):
        b = m.start()
        if not _statement_brace(data, b):
            continue  # `f( {a: 1})`, `x = \n{a: 1}`: an object literal
        tok = root.descendant_for_byte_range(b, b + 1)
        node = tok.parent if tok is not None and tok.type == "{" else None
        if node is None or node.start_byte != b or node.type not in ("object", "object_pattern"):
            continue
        parent = node.parent
        while parent is not None and parent.start_byte == b and parent.type not in ("expression_statement", "arrow_function"):
            node, parent = parent, parent.parent
        if parent is None:
            continue
        if parent.type == "expression_statement" and parent.start_byte == b:
            out.append(b)
        elif parent.type == "arrow_function":
            body = parent.child_by_field_name("body")
            if body is not None and body.start_byte == b and body.type != "statement_block":
                out.append(b)
    arrow_error = -1
    if b"=>" in data:
        for m in _ARROW_BLOCK.finditer(data):
            b = m.end() - 1
            tok = root.descendant_for_byte_range(b, b + 1)
            block = tok.parent if tok is not None and tok.type == "{" else None
            if block is not None and block.type == "statement_block" and _OPERATOR_AFTER.match(data, block.end_byte):
                arrow_error = _arrow_operand(data, block)
                if arrow_error >= 0:
                    break
    return out, arrow_error


#: Expressions an arrow function cannot begin: it is an AssignmentExpression, not an operand, callee or
#: object (V8: ``x => {}.b``, ``x => {}(1)``, ``x => {} + 1`` are ``Unexpected token``).
_OPERAND_OF = frozenset(
    {"member_expression", "call_expression", "subscript_expression", "binary_expression", "ternary_expression",
     "update_expression", "assignment_expression", "augmented_assignment_expression"}
)


def _arrow_operand(data: bytes, block: Any) -> int:
    """The offset after ``block`` (an arrow body) where V8 stops, when the arrow is an operand on the
    same line; -1 otherwise. A line break there ends the statement for V8 (``x => {}\n(1)`` is two)."""
    arrow = block.parent
    if arrow is None or arrow.type != "arrow_function" or arrow.end_byte != block.end_byte:
        return -1
    parent = arrow.parent
    if parent is None or parent.type not in _OPERAND_OF or parent.start_byte != arrow.start_byte:
        return -1
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") != arrow:
        return -1
    op = next((c for c in parent.children if c.start_byte >= arrow.end_byte and c.type != "comment"), None)
    if op is None:
        return -1
    gap = data[arrow.end_byte : op.start_byte]
    if any(t in gap for t in _LINE_TERMINATORS):
        return -1
    return op.start_byte


def reread_blocks(data: bytes, root: Any, parse: Any) -> Reread | None:
    """The script read with every statement-position brace a block, or None when none was misread and
    no arrow function is an operand."""
    braces, arrow = _misread(data, root)
    if not braces:
        label = _repeated_label(data, root) if b":" in data else None
        if arrow >= 0 and (label is None or arrow < label[1]):
            label = ("Unexpected token", arrow)
        return Reread(None, None, label) if label is not None else None
    patched = bytearray(data)
    inserts: list[int] = []  # offsets in ``data`` after which a ``;`` is inserted
    converted: list[int] = []  # offsets in ``data`` of the braces now read as blocks
    copy: bytes = data
    tree: Any = None
    for _round in range(_ROUNDS):
        for b in braces:
            at = _to_data(b, inserts)
            if at is None:
                continue
            converted.append(at)
            if patched[at + 1 : at + 2] and patched[at + 1] in _BLANK:
                patched[at + 1] = 0x3B
            elif at > 0 and patched[at - 1] in b" \t":
                patched[at - 1 : at + 1] = b"{;"
                converted[-1] = at - 1
            else:
                inserts.append(at)
        inserts.sort()
        copy = _with_inserts(bytes(patched), inserts)
        tree = parse(copy)
        braces, arrow = _misread(copy, tree.root_node)
        if not braces:
            break
    root = tree.root_node
    blocks = [_to_copy(b, inserts) for b in converted]
    error = _label_error(copy, root, blocks)
    if arrow >= 0 and (error is None or arrow < error[1]):
        error = ("Unexpected token", arrow)
    if not inserts:
        return Reread(bytes(patched), tree, error)
    error = _first_error(copy, root) or error
    if error is not None:
        message, byte = error
        error = (message, _from_copy(byte, inserts))
    return Reread(None, None, error)


def _with_inserts(data: bytes, inserts: list[int]) -> bytes:
    if not inserts:
        return data
    parts = []
    last = 0
    for at in inserts:
        parts.append(data[last : at + 1])
        parts.append(b";")
        last = at + 1
    parts.append(data[last:])
    return b"".join(parts)


def _to_data(b: int, inserts: list[int]) -> int | None:
    """A copy offset as an offset of ``data`` (None for an inserted ``;``)."""
    shift = 0
    for at in inserts:
        if at + 1 + shift == b:
            return None
        if at + 1 + shift < b:
            shift += 1
    return b - shift


def _to_copy(p: int, inserts: list[int]) -> int:
    return p + sum(1 for at in inserts if at < p)


def _from_copy(b: int, inserts: list[int]) -> int:
    shift = 0
    for at in inserts:
        if at + 1 + shift <= b:
            shift += 1
    return max(0, b - shift)


def _first_error(data: bytes, root: Any) -> tuple[str, int] | None:
    """The copy's syntax error (as ``ts_tree`` words it) or, without one, its first early error."""
    if root.has_error:
        for seeker, i in _error_nodes(root):
            n = seeker.stack[i]
            if not n.is_missing and _is_benign_error(seeker, i):
                continue
            if n.is_missing:
                return f"missing {n.type!r}", n.start_byte
            snippet = data[n.start_byte : min(n.end_byte, n.start_byte + 30)].decode("utf-8", "replace").split("\n")[0]
            return (f"syntax error at {snippet!r}" if snippet else "syntax error"), n.start_byte
    return early_error(root, data)


_FUNCTION_BOUNDARIES = frozenset(
    {"function_declaration", "function_expression", "arrow_function", "method_definition",
     "generator_function", "generator_function_declaration", "class_static_block", "field_definition"}
)


def _label_error(data: bytes, root: Any, blocks: list[int]) -> tuple[str, int] | None:
    """V8's early errors on the labels that open a brace now read as a block (the strict checks find
    labels from ``name: name:`` text, which a brace between them hides): a label already declared by
    an enclosing labeled statement, and a function or class as a label's body."""
    for b in blocks:
        tok = root.descendant_for_byte_range(b, b + 1)
        block = tok.parent if tok is not None and tok.type == "{" else None
        if block is None or block.type != "statement_block":
            continue
        stmt = next((c for c in block.named_children if c.type not in ("empty_statement", "comment")), None)
        while stmt is not None and stmt.type == "labeled_statement":
            label = stmt.child_by_field_name("label")
            body = stmt.child_by_field_name("body")
            if label is not None and _enclosing_label(stmt, data[label.start_byte : label.end_byte]):
                name = data[label.start_byte : label.end_byte].decode("utf-8", "replace")
                return f"Label '{name}' has already been declared", stmt.start_byte
            if body is not None and body.type in ("function_declaration", "generator_function_declaration"):
                return "In strict mode code, functions can only be declared at top level or inside a block.", body.start_byte
            if body is not None and body.type == "expression_statement" and _DECLARATION_WORD.match(data, body.start_byte):
                return "Unexpected token", body.start_byte
            stmt = body
    return None


def _enclosing_label(stmt: Any, name: bytes) -> bool:
    node = stmt.parent
    while node is not None and node.type not in _FUNCTION_BOUNDARIES:
        if node.type == "labeled_statement":
            label = node.child_by_field_name("label")
            if label is not None and label.text == name:
                return True
        node = node.parent
    return False


#: ``name:`` then a statement that can hold statements (a block, ``if``, ``try``, a loop, ``switch``):
#: a label whose body may declare it again. Literal-first: the engine searches for ``:``.
_LABEL_ON_BODY = re.compile(rb":[ \t\r\n]*(?:\{|(?:if|try|for|while|do|switch)(?![\w$]))")
_LABEL_NAME_BEFORE = re.compile(rb"([A-Za-z_$][\w$]*)[ \t]*$")


def _repeated_label(data: bytes, root: Any) -> tuple[str, int] | None:
    """``a: { f(); a: 1 }``, ``a: while (1) { a: ; }``: a label declared again inside its own body (V8:
    "Label 'a' has already been declared"). The strict checks see a repeat only when one label follows
    the other directly. Names come from ``name: {``/``name: while``… at a statement start (object
    values ``k: {`` are candidates too; the tree tells them apart); each later ``name:`` of such a name
    is looked up, and its enclosing labels climbed."""
    names: dict[bytes, int] = {}
    for m in _LABEL_ON_BODY.finditer(data):
        w = _LABEL_NAME_BEFORE.search(data, max(0, m.start() - 64), m.start())
        if w is not None and w.group(1) not in names and _statement_brace(data, w.start(1)):
            names[w.group(1)] = w.start(1)
    for name, first in names.items():
        at = data.find(name, first + len(name))
        while at >= 0:
            end = at + len(name)
            if (data[at - 1] not in _NAME_BYTES and (end >= len(data) or data[end] not in _NAME_BYTES)
                    and data[end : end + 1 + 64].lstrip(b" \t").startswith(b":")):
                tok = root.descendant_for_byte_range(at, end)
                stmt = tok.parent if tok is not None and tok.type == "statement_identifier" else None
                if stmt is not None and stmt.type == "labeled_statement" and _enclosing_label(stmt, name):
                    return f"Label '{name.decode('utf-8', 'replace')}' has already been declared", stmt.start_byte
            at = data.find(name, end)
    return None
