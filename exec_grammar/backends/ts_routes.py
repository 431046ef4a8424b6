"""Where a tool call may come from, for the tree-sitter backend: the textual hits to look up, the routes
to ``tools`` the analyzer cannot follow, and whether a call lies on the top-level program's
unconditional path (the proof of execution).

Hits: ``tools`` as a whole word, and, when the script has ``\\u`` escapes, every escaped identifier
that decodes to ``tools`` (V8 compares names after decoding: ``\\u0074ools`` is ``tools``), plus the
names through which code can reach ``tools`` or run text as code: ``globalThis`` (``globalThis.tools``,
``globalThis['tools']``), ``eval`` (direct or ``(0, eval)``), ``Function`` and ``constructor`` (``new
Function(…)``, the AsyncFunction constructor reached as ``(async () => {}).constructor``). A use of
those gives the ``tools-escape`` finding: the whole script is then the one shell command, since the
commands it runs cannot be listed. Known limit: a computed key spelling ``constructor`` from pieces
(``x['constr' + 'uctor']``) is not seen.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from exec_grammar.backends.ts_tree import _whole_word

__all__ = ["NAME_NODES", "TopPaths", "route", "top_statements", "tools_hits"]

NAME_NODES = frozenset({"identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"})
_ROUTES = (b"globalThis", b"eval", b"Function", b"constructor")
_NAME_CONTINUE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_ESCAPED_NAME_RE = re.compile(rb"(?:[\w$]|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]+\})+")


def _word_hits(data: bytes, word: bytes, out: list[tuple[int, int, bytes]]) -> None:
    n = len(word)
    i = data.find(word)
    while i >= 0:
        j = i + n
        if _whole_word(data, i) and (j >= len(data) or data[j] not in _NAME_CONTINUE) and data[j : j + 2] != b"\\u":
            out.append((i, j, word))
        i = data.find(word, j)


#: ``tools`` as a whole word, not continued by an escape (``tools\\u0031`` is another name); the word
#: check before it is a lookbehind tried only where ``tools`` was found.
_TOOLS_WORD = re.compile(rb"tools(?<![\w$]tools)(?![\w$]|\\u)")


def _escaped_names(data: bytes) -> list[tuple[int, int, bytes]]:
    """``(start, end, decoded name)`` of every name written with a ``\\u`` escape: the runs that
    ``_ESCAPED_NAME_RE.finditer`` over the whole text would give and that hold a backslash, found from
    each ``\\u`` (a run starts at the last non-name byte before it), so a text with a few escapes in
    its strings is not matched word by word. Linear: each byte is walked back over at most once."""
    out: list[tuple[int, int, bytes]] = []
    pos = 0
    p = data.find(b"\\u")
    while p >= 0:
        lo = p
        while lo > pos and data[lo - 1] in _NAME_CONTINUE:
            lo -= 1
        m = _ESCAPED_NAME_RE.match(data, lo)
        if m is None or m.end() <= p:
            pos = p + 1  # not an escape: the ``u`` after the backslash may start a name
        else:
            name = decode_identifier(m.group().decode("ascii", "replace")).encode("utf-8", "replace")
            out.append((lo, m.end(), name))
            pos = m.end()
        p = data.find(b"\\u", pos)
    return out


def tools_hits(data: bytes) -> list[tuple[int, int, bytes]]:
    """``(start, end, decoded name)`` of every textual ``tools`` and route name, sorted."""
    out = [(m.start(), m.end(), b"tools") for m in _TOOLS_WORD.finditer(data)]
    more = False
    for w in _ROUTES:
        if w in data:
            _word_hits(data, w, out)
            more = True
    if b"\\u" in data:
        for hit in _escaped_names(data):
            if hit[2] == b"tools" or hit[2] in _ROUTES:
                out.append(hit)
                more = True
    if more:  # the ``tools`` hits alone come sorted
        out.sort(key=lambda h: (h[0], -h[1]))
    return out


def _key_name(node: Any, data: bytes) -> str | None:
    text = data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")
    if node.type == "property_identifier":
        return decode_identifier(text)
    if node.type == "string" and len(text) >= 2:
        return text[1:-1]
    return None


def route(node: Any, up: Any, data: bytes, word: bytes) -> str | None:
    """Why a route name used as code may reach ``tools`` or run code the analyzer cannot read; None
    when it cannot (a string, a comment, ``globalThis.console``, a class's own ``constructor``)."""
    t = node.type
    parent = up(1)
    if word == b"constructor":
        if t != "property_identifier" or parent is None or parent.type == "method_definition":
            return None
        return "the Function constructor reached through .constructor: code the analyzer cannot see into"
    if t not in NAME_NODES:
        return None
    if word == b"globalThis":
        if parent is not None and parent.start_byte == node.start_byte:
            if parent.type == "member_expression":
                prop = parent.child_by_field_name("property")
                if prop is not None and _key_name(prop, data) not in ("tools", None):
                    return None
            elif parent.type == "subscript_expression":
                index = parent.child_by_field_name("index")
                if index is not None and index.type == "string" and _key_name(index, data) != "tools":
                    return None
        return "globalThis: tools may be reached through the global object"
    if word == b"eval":
        return "eval: code the analyzer cannot see into"
    return "the Function constructor: code the analyzer cannot see into"


def _only(node: Any) -> Any:
    """The one named child that is not a comment (comments are extras: they may sit anywhere), else None."""
    if node.named_child_count == 1:
        return node.named_child(0)
    inner = [c for c in node.named_children if c.type != "comment"]
    return inner[0] if len(inner) == 1 else None


def _unwrap(node: Any) -> Any:
    # a loop, not recursion: ``((((…))))`` 100,000 deep must not overflow the stack
    while node is not None and node.type == "parenthesized_expression":
        node = _only(node)
    return node


def _awaited_call(node: Any) -> Any:
    """The call ``node`` awaits directly (parentheses aside): ``await tools.x(…)``, else None."""
    node = _unwrap(node)
    if node is None or node.type != "await_expression":
        return None
    call = _unwrap(_only(node))
    return call if call is not None and call.type == "call_expression" else None


#: What may stand between ``await`` and the call it awaits, comments aside: JavaScript's ASCII blanks
#: and opening parentheses.
_AWAIT_GAP = b" \t\n\r\x0b\x0c("
_AWAIT_WINDOW = 64


def _after_await(data: bytes, start: int) -> bool:
    """False when the text before byte ``start`` shows that no ``await`` directly precedes it (only
    blanks and parentheses between), so the call there is not awaited; True when it may be. A comment
    (``/``) or a non-ASCII byte (U+2028, a no-break space…) in the window, or a window of blanks
    only, may hide an ``await``: then True, and the tree decides."""
    lo = start - _AWAIT_WINDOW
    window = data[lo if lo > 0 else 0 : start]
    if b"/" in window or not window.isascii():
        return True
    head = window.rstrip(_AWAIT_GAP)
    if not head.endswith(b"await"):
        return not head and lo > 0  # blanks only: the await may lie before the window
    return len(head) == 5 or head[-6] not in _NAME_CONTINUE  # `await`, not `xawait`


#: The text of a top-level statement before the call it awaits, in the two commonest shapes:
#: ``await `` and ``const r = await `` (``let``/``var``; a plain ASCII name). Any other text (parentheses,
#: comments, a pattern, several declarators) is decided by the tree.
_TOP_HEAD = re.compile(rb"(?:(const|let|var)[ \t\r\n]+[A-Za-z_$][\w$]*[ \t\r\n]*=[ \t\r\n]*)?await[ \t\r\n]+")
#: ... and after the call, to the statement's end: blanks and a ``;``.
_TOP_TAIL = re.compile(rb"[ \t\r\n]*;?")
#: The statement type each head shape must have (``var`` declares a variable_declaration).
_TOP_TYPES = {None: "expression_statement", b"const": "lexical_declaration", b"let": "lexical_declaration",
              b"var": "variable_declaration"}
#: Heads longer than this go to the tree (the text test stays a bounded read per call).
_TOP_HEAD_MAX = 160


class TopPaths:
    """Which calls are awaited directly by a top-level statement: ``await tools.x(…);``,
    ``const r = await tools.x(…);`` or ``r = await tools.x(…);`` (``r`` a plain name), with nothing
    conditional between the call and the module: no branch, loop, function, ``try``, short-circuit,
    optional call or argument of another call (whose callee or earlier arguments could throw first).

    Worked out downwards from the top-level statements (each read once, when a call inside it asks),
    so a call costs a bisection and no ``.parent`` climb (each of which re-descends from the root)."""

    __slots__ = ("_root", "_data", "_statements", "_starts", "_memo", "_optional")

    def __init__(self, root: Any, data: bytes) -> None:
        self._root = root
        self._data = data
        self._statements: list[Any] | None = None
        self._starts: list[int] = []
        self._memo: dict[int, dict[tuple[int, int], int]] = {}
        self._optional = b"?." in data  # no optional chain anywhere: nothing to look for

    @property
    def statements(self) -> list[Any]:
        """The root's named children, read once when first needed (``top_statements`` reads them too)."""
        if self._statements is None:
            self._statements = self._root.named_children
            if self._root.type == "program":
                self._starts = [s.start_byte for s in self._statements]
        return self._statements

    def of(self, start: int, end: int, call: Any) -> int:
        """The start byte of the top-level statement that awaits the call at bytes [start, end) on the
        unconditional path, or -1. ``call``: its node, to check for an optional chain; None for a
        plain ``tools.name(…)`` call, which cannot hold one."""
        if not _after_await(self._data, start):
            return -1
        statements = self.statements
        i = bisect_right(self._starts, start) - 1
        if i < 0:
            return -1
        s0 = self._starts[i]
        if call is None and start - s0 <= _TOP_HEAD_MAX:
            # the plain call, awaited as the whole statement, read from the text: the tree reads
            # `await CALL;` and `const r = await CALL;` so, whatever the call holds
            head = _TOP_HEAD.fullmatch(self._data, s0, start)
            if head is not None:
                statement = statements[i]
                if statement.type == _TOP_TYPES[head.group(1)] and _TOP_TAIL.fullmatch(self._data, end, statement.end_byte):
                    return s0
        spans = self._memo.get(i)
        if spans is None:
            spans = self._memo[i] = self._awaited(statements[i])
        top = spans.get((start, end), -1)
        if top >= 0 and call is not None and self._optional:
            callee = call.child_by_field_name("function")
            if any(c.type == "optional_chain" for c in call.children) or (
                callee is None or any(c.type == "optional_chain" for c in callee.children)
            ):
                return -1  # tools?.x(…), tools.x?.(…): an optional chain, excluded as the rule says
        return top

    @staticmethod
    def _awaited(statement: Any) -> dict[tuple[int, int], int]:
        t = statement.type
        calls: list[Any] = []
        if t == "expression_statement":
            e = _only(statement)
            if e is not None and e.type == "assignment_expression":
                left = e.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    calls.append(_awaited_call(e.child_by_field_name("right")))
            else:
                calls.append(_awaited_call(e))
        elif t in ("lexical_declaration", "variable_declaration"):
            for d in statement.named_children:
                if d.type == "variable_declarator":
                    calls.append(_awaited_call(d.child_by_field_name("value")))
        return {(c.start_byte, c.end_byte): statement.start_byte for c in calls if c is not None}


#: Names that can end a cell early while it still reports completion.
_ENDERS = (b"exit", b"yield_control")
_SAFE_STATEMENTS = frozenset({"function_declaration", "generator_function_declaration", "empty_statement", "comment"})


def top_statements(root: Any, data: bytes, routes: bool, statements: list[Any]) -> list[tuple[int, bool]] | None:
    """``(start byte, runs nothing)`` of every top-level statement, when the script uses a name that can
    end a cell early while it still reports completion (``exit``, ``yield_control``, as code: looked up
    in the tree) or reaches code the analyzer cannot see into (``routes``: globalThis, eval, Function);
    None when it uses none: then a statement that does not complete throws, and the cell fails, so
    every statement of a completed cell ran to its end. ``statements``: the root's named children."""
    if not routes:
        hits: list[tuple[int, int, bytes]] = []
        for w in _ENDERS:
            if w in data:
                _word_hits(data, w, hits)
        if b"\\u" in data:
            hits.extend((s, e, b"") for s, e, name in _escaped_names(data) if name in _ENDERS)
        if not any(
            (n := root.descendant_for_byte_range(s, e)) is not None and (n.type in NAME_NODES or n.type == "property_identifier")
            for s, e, _ in hits[:64]
        ) and len(hits) <= 64:
            return None
    return [(s.start_byte, s.type in _SAFE_STATEMENTS) for s in statements]


_ESCAPE_RE = re.compile(r"\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})")


def decode_identifier(text: str) -> str:
    """An identifier's name with its ``\\uXXXX``/``\\u{…}`` escapes decoded (V8 compares names so)."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        v = int(m.group(1) or m.group(2), 16)
        return chr(v) if v <= 0x10FFFF else "\\"

    return _ESCAPE_RE.sub(one, text)
