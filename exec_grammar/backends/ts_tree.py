"""tree-sitter plumbing shared by the tree-sitter backend's modules: the parser, byte -> code-point
offsets, the two ways to find the node spanning a textual hit (``_Direct``: from the root in C, for a few
hits; ``_Seeker``: one forward cursor pass, for many) and the syntax-error walk.

Linear in the script: up to ``_DIRECT_MAX`` hits are looked up from the root in C (a bounded
number of root descents is linear, and faster than stepping from Python); more go through one forward
``_Seeker`` pass of a TreeCursor that keeps the ancestors on a stack, so no ``.parent`` (which
re-descends from the root) is climbed in a loop. Syntax errors are found by a walk that enters only
subtrees with errors (the ``(ERROR) (MISSING)`` query was quadratic on deep nesting). ``WORK`` counts
the steps, with each C descent charged the tree's size, so tests can show linearity without timing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import tree_sitter
import tree_sitter_javascript

from exec_grammar.backends import LineIndex
from exec_grammar.model import Finding, ParseError

_LANGUAGE = tree_sitter.Language(tree_sitter_javascript.language())
_local = threading.local()


def _parser() -> tree_sitter.Parser:
    # A Parser keeps state between parses; one per thread (the MCP server may analyse concurrently).
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = tree_sitter.Parser(_LANGUAGE)
    return p


class _ByteToCodePoint:
    """UTF-8 byte offset -> code-point offset. ASCII scripts (96 % of them) map 1:1."""

    __slots__ = ("data", "ascii", "_cache")

    def __init__(self, script: str, data: bytes) -> None:
        self.data = data
        self.ascii = len(data) == len(script)
        self._cache: dict[int, int] = {}

    def prepare(self, offsets: list[int]) -> None:
        """Convert many offsets in one left-to-right pass (linear, decoding in C)."""
        if self.ascii:
            return
        prev_b = prev_c = 0
        for b in sorted(set(offsets)):
            prev_c += len(self.data[prev_b:b].decode("utf-8", "surrogatepass"))
            prev_b = b
            self._cache[b] = prev_c

    def __call__(self, b: int) -> int:
        if self.ascii:
            return b
        c = self._cache.get(b)
        if c is None:
            c = len(self.data[:b].decode("utf-8", "surrogatepass"))
            self._cache[b] = c
        return c



#: Cursor steps taken by every :class:`_Seeker` so far. Tests count work with it (linearity of the
#: analysis on adversarial scripts); no timing involved.
WORK = [0]


#: At most this many textual hits are looked up from the root in C (``descendant_for_byte_range``, then
#: ``.parent`` for two or three ancestors): each lookup costs at most one visit per node, so a bounded
#: number of them is still linear, and for the few hits of a normal script the C descent is faster
#: than stepping a cursor from Python. More hits go to the :class:`_Seeker`.
_DIRECT_MAX = 32


class _Direct:
    """Few hits: each looked up from the root in C; ancestors by ``.parent``, only as far as asked."""

    __slots__ = ("root", "cost", "chain")

    def __init__(self, root: Any) -> None:
        self.root = root
        self.cost = root.descendant_count  # a bound on the nodes one descent or one .parent visits
        self.chain: list[Any] = []

    def find(self, s: int, e: int) -> Any:
        WORK[0] += self.cost
        node = self.root.descendant_for_byte_range(s, e)
        self.chain = [node]
        return node

    def up(self, k: int) -> Any:
        """The k-th ancestor of the node last found (None above the root)."""
        chain = self.chain
        if len(chain) > k:
            return chain[k]
        while len(chain) <= k:
            last = chain[-1]
            WORK[0] += self.cost
            chain.append(last.parent if last is not None else None)
        return chain[k]


class _Seeker:
    """The smallest node spanning each of a sorted run of byte ranges, in one left-to-right pass.

    One ``descendant_for_byte_range`` per textual hit descends from the root each time, and
    ``Node.parent`` re-descends too (tree-sitter nodes have no parent pointer), so a left-deep chain
    (``'tools.'*20000``) or nested arrows cost O(hits x depth), minutes on a 720 KB cell. Here one
    TreeCursor moves forward only: it climbs straight to the first ancestor that reaches the next range,
    skips whole siblings that end before it, descends only into a node spanning it, and never re-enters
    a node it left, so all the ranges together cost at most a few steps per node (usually a few per
    hit). The ancestors are kept on ``stack`` (no ``.parent`` call); :meth:`nearest` finds the nearest
    function or template above a hit. Iterative: a 100,000-deep
    nesting cannot overflow the Python stack. Ranges must come sorted by (start, -end)."""

    __slots__ = ("cursor", "stack", "ends", "exhausted", "last", "fields", "_near")

    def __init__(self, root: Any) -> None:
        self.cursor = root.walk()
        self.stack: list[Any] = [root]
        self.ends: list[int] = [root.end_byte]
        self._near: dict[frozenset[str], tuple[list[Any], list[int]]] = {}
        self.exhausted = False  # the top's children were all passed: do not descend into it again
        self.last = 0
        self.fields = False  # strict: the script has a class, so a field may hold the code

    def _push(self, node: Any) -> None:
        self.stack.append(node)
        self.ends.append(node.end_byte)

    def _pop(self) -> None:
        self.stack.pop()
        self.ends.pop()

    def nearest(self, j: int, types: frozenset[str]) -> int:
        """Index of the nearest ancestor-or-self of ``stack[j]`` whose type is in ``types`` (the root
        excluded), or -1. Worked out when asked (few hits ask; keeping it on every step cost a third
        of the step) and remembered per stack entry: an entry still holding the node object it was
        worked out for has the same ancestors, so each entry is read once while it is on the stack
        (linear however deep the nesting)."""
        stack = self.stack
        nodes, vals = self._near.setdefault(types, ([stack[0]], [-1]))
        if j < len(nodes) and nodes[j] is stack[j]:
            return vals[j]
        k = min(j, len(nodes) - 1)  # above an entry that changed, every entry did
        while k > 0 and nodes[k] is not stack[k]:
            k -= 1
        v = vals[k]
        del nodes[k + 1 :], vals[k + 1 :]
        for m in range(k + 1, j + 1):
            node = stack[m]
            if node.type in types:
                v = m
            nodes.append(node)
            vals.append(v)
        return v

    def find(self, s: int, e: int) -> Any:
        """The smallest node spanning [s, e); then :meth:`up` gives its ancestors."""
        self.last = self.seek(s, e)
        return self.stack[self.last]

    def up(self, k: int) -> Any:
        i = self.last - k
        return self.stack[i] if i >= 0 else None

    def seek(self, s: int, e: int) -> int:
        """Index in ``stack`` of the smallest node spanning bytes [s, e)."""
        cursor = self.cursor
        stack = self.stack
        ends = self.ends
        steps = 0
        while True:
            steps += 1
            n = len(stack)
            if n > 1:
                end = ends[-1]
                if end < e or (end == s == e and stack[-1].start_byte < s):
                    # Wholly before the range (a zero-width range belongs to the node starting there).
                    # Ancestors that also end before it are left at once: their later children do too.
                    j = n - 2
                    while j > 0 and (ends[j] < e or (ends[j] == s == e and stack[j].start_byte < s)):
                        j -= 1
                    for _ in range(n - j - 2):
                        cursor.goto_parent()
                    del stack[j + 1 :], ends[j + 1 :]
                    if cursor.goto_next_sibling():
                        node = cursor.node
                        stack.append(node)
                        ends.append(node.end_byte)
                        self.exhausted = False
                    else:
                        cursor.goto_parent()
                        self.exhausted = True
                    continue
                if stack[-1].start_byte > s:
                    WORK[0] += steps
                    return n - 2  # the range lies in a gap before this node: its parent spans it
            # Descend to the first child reaching past s (found in C; each node is entered once).
            if self.exhausted or cursor.goto_first_child_for_byte(s) is None:
                self.exhausted = True
                WORK[0] += steps
                return n - 1
            node = cursor.node
            stack.append(node)
            ends.append(node.end_byte)


def _is_benign_error(seeker: _Seeker, i: int) -> bool:
    """True when the error node at ``seeker.stack[i]`` lies inside a tagged template's text (acorn
    accepts bad escapes there): its nearest enclosing template is a call's argument, not its callee."""
    k = seeker.nearest(i - 1, _TEMPLATES) if i > 0 else -1
    if k <= 0:
        return False
    template, call = seeker.stack[k], seeker.stack[k - 1]
    return call.type == "call_expression" and call.start_byte < template.start_byte


def _error_nodes(root: Any) -> Iterator[tuple[_Seeker, int]]:
    """Every ERROR and MISSING node in document order (outer before inner), with its ancestors.

    A walk that enters only subtrees whose ``has_error`` is set: linear, where a ``(ERROR) (MISSING)``
    query took quadratic time on deep nesting (``'('*100000``)."""
    seeker = _Seeker(root)
    cursor = seeker.cursor
    while True:
        node = seeker.stack[-1]
        if node.is_error or node.is_missing:  # the root itself may be the ERROR (`tools.x((((…`)
            yield seeker, len(seeker.stack) - 1
        WORK[0] += 1
        # An ERROR's own children may be ERRORs with has_error unset (seen on bad escapes in
        # templates), so an error node is entered whatever has_error says.
        if (node.has_error or node.is_error) and cursor.goto_first_child():
            seeker._push(cursor.node)
            continue
        # next sibling with an error in it, else up
        while True:
            if len(seeker.stack) == 1:
                return
            seeker._pop()
            if cursor.goto_next_sibling():
                seeker._push(cursor.node)
                sibling = seeker.stack[-1]
                if sibling.has_error or sibling.is_error or sibling.is_missing:
                    break
                WORK[0] += 1
                continue
            cursor.goto_parent()


def _parse_error(
    tree: Any, data: bytes, conv: _ByteToCodePoint, index: LineIndex
) -> tuple[ParseError | None, list[Finding]]:
    findings: list[Finding] = []
    for seeker, i in _error_nodes(tree.root_node):
        n = seeker.stack[i]
        start = n.start_byte
        if not n.is_missing and _is_benign_error(seeker, i):  # a missing closing ` is never benign
            findings.append(
                Finding("benign-error", "tree-sitter error inside a tagged template", conv(start))
            )
            continue
        if n.is_missing:
            message = f"missing {n.type!r}"
        else:
            snippet = data[start : min(n.end_byte, start + 30)].decode("utf-8", "replace").split("\n")[0]
            message = f"syntax error at {snippet!r}" if snippet else "syntax error"
        pos = index.position(conv(start))
        return ParseError(message, pos.line, pos.column), findings
    return None, findings


#: Bytes that may precede a whole-word hit. Literal-first patterns plus this check in Python are about
#: 7x faster than a regex lookbehind, which the engine tries at every position.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


def _whole_word(data: bytes, start: int) -> bool:
    return start == 0 or data[start - 1] not in _WORD_BYTES



#: Bytes that may continue a name (``\w``, ``$`` and any non-ASCII byte).
_NAME_BYTES = _WORD_BYTES | frozenset(range(0x80, 0x100))


_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function",
        "generator_function_declaration",
        "class_static_block",
    }
)
#: The functions whose ``await`` acorn rejects when they are not async (found by ``=>``/``function``).
_PLAIN_FUNCTIONS = _FUNCTIONS - {"method_definition", "class_static_block"}
_TEMPLATES = frozenset({"template_string"})




def _text(node: Any, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")


def only_benign_errors(root: Any) -> bool:
    """True when every error node of the tree lies inside a tagged template's text (acorn and V8 accept
    bad escapes there)."""
    return all(not seeker.stack[i].is_missing and _is_benign_error(seeker, i) for seeker, i in _error_nodes(root))
