"""The primary backend: tree-sitter with tree-sitter-javascript (ES2024, top-level ``await``, fast).

Calls are found from the textual ``tools`` hits, each looked up in the tree (see :func:`parse_calls`), so
Python touches a handful of nodes per call: a Python walk over every node costs about as much as the
parse itself, and even the Query API costs about 0.8x acorn's whole time (js-parsers.md §6; measured
here: the lookup adds about 0.2x to the parse, the query about 0.8x). The callee keys are dispatched
through a small handler table; an unknown key type is a finding.

Linear in the script (QA F11): up to ``_DIRECT_MAX`` hits are looked up from the root in C (a bounded
number of root descents is linear, and faster than stepping from Python); more go through one forward
:class:`_Seeker` pass of a TreeCursor that keeps the ancestors on a stack, so no ``.parent`` (which
re-descends from the root) is climbed in a loop. Syntax errors are found by a walk that enters only
subtrees with errors (the ``(ERROR) (MISSING)`` query was quadratic on deep nesting). ``WORK`` counts
the steps, with each C descent charged the tree's size, so tests can show linearity without timing.

Pitfalls handled here (js-parsers.md §2):
- tree-sitter offsets are UTF-8 bytes; they are converted to code points (ASCII scripts: identity).
- a tagged template (``tools.x`…```) is a ``call_expression`` whose arguments are a ``template_string``;
  ESTree calls it a TaggedTemplateExpression, so it is not a call: the arguments must be ``arguments``.
- ERROR nodes that lie only inside a tagged template are benign: acorn accepts invalid escapes there
  (ES2018 template revision, hand case 43), tree-sitter does not.
- a parenthesised callee or object (``(tools.x)(…)``, ``(tools).x(…)``) is a call for ESTree; one level of
  parentheses is matched.
Context errors: tree-sitter checks grammar only, but acorn (the reference) also rejects three errors
agents make (hand cases 95-97), so they are checked here, each from cheap textual hits looked up in the
tree: ``await`` directly inside a non-async arrow function or ``function`` (top level is allowed), a
``const``/``let``/``class`` name declared twice in one scope, and ``return`` outside any function.
Known limit: ``await`` in a non-async *method* (``m() { await x }``) is not flagged.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import tree_sitter
import tree_sitter_javascript

from exec_grammar.backends import BackendResult, Binding, LineIndex, RawCall
from exec_grammar.escapes import AS_OBJECT, ESCAPE_CODE
from exec_grammar.literals import cook_template_text, decode_string_literal
from exec_grammar.model import Finding, ParseError

__all__ = ["parse_calls"]

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


def _key_property(node: Any, data: bytes) -> str | None:
    return data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")


def _key_index_string(node: Any, data: bytes) -> str | None:
    return decode_string_literal(data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass"))


def _key_index_template(node: Any, data: bytes) -> str | None:
    if any(c.type == "template_substitution" for c in node.named_children):
        return "*"
    raw = data[node.start_byte + 1 : node.end_byte - 1].decode("utf-8", "surrogatepass")
    cooked = cook_template_text(raw)
    return "*" if cooked is None else cooked


def _key_index_parenthesized(node: Any, data: bytes) -> str | None:
    # A loop, not recursion: ``tools[((((…"x"…))))]`` 100,000 deep must not overflow the stack.
    while node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            return "*"
        node = inner[0]
    handler = _INDEX_HANDLERS.get(node.type)
    return handler(node, data) if handler is not None else "*"


#: How each captured property/index node type names the tool. Any other index expression
#: (``tools[name]``, ``tools[0]``) is a computed name, ``"*"`` as in the acorn reference.
_PROPERTY_HANDLERS: dict[str, Callable[[Any, bytes], str | None]] = {
    "property_identifier": _key_property,
    "private_property_identifier": _key_property,
}
_INDEX_HANDLERS: dict[str, Callable[[Any, bytes], str | None]] = {
    "string": _key_index_string,
    "template_string": _key_index_template,
    "parenthesized_expression": _key_index_parenthesized,
}


#: Cursor steps taken by every :class:`_Seeker` so far. Tests count work with it (linearity of the
#: analysis on adversarial scripts, QA F11); no timing involved.
WORK = [0]


#: At most this many textual hits are looked up from the root in C (``descendant_for_byte_range``, then
#: ``.parent`` for two or three ancestors): each lookup costs at most one visit per node, so a bounded
#: number of them is still linear, and for the few hits of a normal script the C descent is faster
#: than stepping a cursor from Python. More hits go to the :class:`_Seeker` (QA F11).
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

    QA F11: one ``descendant_for_byte_range`` per textual hit descends from the root each time, and
    ``Node.parent`` re-descends too (tree-sitter nodes have no parent pointer), so a left-deep chain
    (``'tools.'*20000``) or nested arrows cost O(hits x depth), minutes on a 720 KB cell. Here one
    TreeCursor moves forward only: it climbs straight to the first ancestor that reaches the next range,
    skips whole siblings that end before it, descends only into a node spanning it, and never re-enters
    a node it left, so all the ranges together cost at most a few steps per node (usually a few per
    hit). The ancestors are kept on ``stack`` (no ``.parent`` call); with ``track``, also, per level,
    the index of the nearest function, template and scope at or above it. Iterative: a 100,000-deep
    nesting cannot overflow the Python stack. Ranges must come sorted by (start, -end)."""

    __slots__ = ("cursor", "stack", "ends", "fn", "tmpl", "scope", "track", "exhausted", "last")

    def __init__(self, root: Any, track: bool = False) -> None:
        self.cursor = root.walk()
        self.stack: list[Any] = [root]
        self.ends: list[int] = [root.end_byte]
        self.fn = [-1]
        self.tmpl = [-1]
        self.scope = [0]
        self.track = track
        self.exhausted = False  # the top's children were all passed: do not descend into it again
        self.last = 0

    def _push(self, node: Any) -> None:
        if self.track:
            i = len(self.stack)
            t = node.type
            self.fn.append(i if t in _FUNCTIONS else self.fn[-1])
            self.tmpl.append(i if t == "template_string" else self.tmpl[-1])
            self.scope.append(i if t in _SCOPES else self.scope[-1])
        self.stack.append(node)
        self.ends.append(node.end_byte)

    def _pop(self) -> None:
        self.stack.pop()
        self.ends.pop()
        if self.track:
            self.fn.pop()
            self.tmpl.pop()
            self.scope.pop()

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
                    while len(stack) > j + 2:
                        cursor.goto_parent()
                        self._pop()
                    self._pop()
                    if cursor.goto_next_sibling():
                        self._push(cursor.node)
                        self.exhausted = False
                    else:
                        cursor.goto_parent()
                        self.exhausted = True
                    continue
                start = stack[-1].start_byte
                if start > s:
                    WORK[0] += steps
                    return n - 2  # the range lies in a gap before this node: its parent spans it
            # Descend to the first child reaching past s (found in C; each node is entered once).
            if self.exhausted or cursor.goto_first_child_for_byte(s) is None:
                self.exhausted = True
                WORK[0] += steps
                return n - 1
            self._push(cursor.node)


def _is_benign_error(seeker: _Seeker, i: int) -> bool:
    """True when the error node at ``seeker.stack[i]`` lies inside a tagged template's text (acorn
    accepts bad escapes there): its nearest enclosing template is a call's argument, not its callee."""
    k = seeker.tmpl[i - 1] if i > 0 else -1
    if k <= 0:
        return False
    template, call = seeker.stack[k], seeker.stack[k - 1]
    return call.type == "call_expression" and call.start_byte < template.start_byte


def _error_nodes(root: Any) -> Iterator[tuple[_Seeker, int]]:
    """Every ERROR and MISSING node in document order (outer before inner), with its ancestors.

    A walk that enters only subtrees whose ``has_error`` is set: linear, where a ``(ERROR) (MISSING)``
    query took quadratic time on deep nesting (QA F11: ``'('*100000``)."""
    seeker = _Seeker(root, track=True)
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
        if _is_benign_error(seeker, i):
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


#: ``tools`` as a whole identifier in the UTF-8 text. Each hit is then looked up in the tree: a hit in a
#: string, comment, template text or regex is not an ``identifier`` node and drops out.
_TOOLS_RE = re.compile(rb"tools(?![\w$])")
#: Bytes that may precede a whole-word hit. Literal-first patterns plus this check in Python are about
#: 7x faster than a regex lookbehind, which the engine tries at every position.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


def _whole_word(data: bytes, start: int) -> bool:
    return start == 0 or data[start - 1] not in _WORD_BYTES


_CALLEES = frozenset({"member_expression", "subscript_expression"})
_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _first_argument(args: Any) -> Any:
    if args.named_child_count == 0:
        return None
    first = args.named_child(0)
    if first is not None and first.type == "comment":
        for child in args.named_children:
            if child.type != "comment":
                return child
        return None
    return first


def parse_calls(script: str) -> BackendResult:
    """Every ``tools`` call tree-sitter finds, plus the first syntax error when the tree has one.

    The textual ``tools`` hits are visited in one forward pass of a :class:`_Seeker` (linear in the
    script, QA F11), and for each the two or three ancestors on its stack are checked: the identifier
    must be the ``object`` of a member/subscript expression that is the ``function`` of a
    ``call_expression`` with real ``arguments``. Python touches the nodes on the way to each hit, not
    every node of the script."""
    surrogates = False
    try:
        data = script.encode("utf-8")
    except UnicodeEncodeError:
        surrogates = True
        # A lone surrogate (from a JSON "\\ud800" escape) is not UTF-8: tree-sitter would read its three
        # bytes as three bad characters. U+FFFD has the same UTF-8 length and is one code point, so
        # every offset still maps back; argument text is sliced from the original script.
        data = _LONE_SURROGATE_RE.sub("\ufffd", script).encode("utf-8")
    tree = _parser().parse(data)
    root = tree.root_node
    conv = _ByteToCodePoint(script, data)
    found: list[tuple[str, Any, Any, Any]] = []
    findings: list[Finding] = []
    offsets: list[int] = []
    hits = [m for m in _TOOLS_RE.finditer(data) if _whole_word(data, m.start())]
    finder: _Direct | _Seeker = _Direct(root) if len(hits) <= _DIRECT_MAX else _Seeker(root)
    find, up = finder.find, finder.up
    escapes: list[tuple[int, str]] = []  # (byte, why): tools used other than by a direct call (QA F7)
    for m in hits:
        node = find(m.start(), m.end())
        if node is None:
            continue
        if node.type != "identifier":
            if node.type == "shorthand_property_identifier":  # {tools}: the object passed on
                escapes.append((m.start(), "tools used as a value"))
            continue
        k = 1
        callee = up(1)
        if callee is None:
            continue
        if callee.type == "parenthesized_expression" and callee.named_child_count == 1:
            k = 2
            node, callee = callee, up(2)  # (tools).x(…)
            if callee is None:
                continue
        if callee.type not in _CALLEES or callee.start_byte != node.start_byte:
            if not _declares(callee, node):
                escapes.append((m.start(), "tools used as a value"))
            continue
        if callee.type == "member_expression":
            key = callee.child_by_field_name("property")
            handler = _PROPERTY_HANDLERS.get(key.type) if key is not None else None
        else:
            key = callee.child_by_field_name("index")
            handler = _INDEX_HANDLERS.get(key.type, _computed_key) if key is not None else None
        if handler is None or key is None:
            findings.append(Finding("unhandled-node", f"tool name from node {key and key.type!r}", None))
            continue
        name = handler(key, data) or "*"
        call = up(k + 1)
        if call is not None and call.type == "parenthesized_expression" and call.named_child_count == 1:
            call = up(k + 2)  # (tools.x)(…)
        args = (
            call.child_by_field_name("arguments")
            if call is not None and call.type == "call_expression"
            else None
        )
        if args is None or args.type != "arguments":
            # not called (an alias, .call/.apply, a tagged template tools.x`…`): harmless unless it
            # may be exec_command, or a member of the tool is reached (tools.ns.tool(…): QA2 F13)
            outer = call if call is not None and call.type in _CALLEES else None
            if outer is not None and outer.start_byte == callee.start_byte and k == 1:
                escapes.append((m.start(), AS_OBJECT))
            elif name in ("exec_command", "*"):
                escapes.append(
                    (m.start(), f"tools{'[…]' if name == '*' else '.exec_command'} used without being called")
                )
            continue
        first = _first_argument(args)
        odd_key = None
        if surrogates and "\ufffd" in name:
            odd_key = key  # the key held a lone surrogate: read it from the original text below
            offsets.extend((key.start_byte, key.end_byte))
        found.append((name, call, first, odd_key))
        if not conv.ascii:
            offsets.extend((call.start_byte, call.end_byte))
            if first is not None:
                offsets.extend((first.start_byte, first.end_byte))
    error: ParseError | None = None
    if root.has_error:
        error, err_findings = _parse_error(tree, data, conv, LineIndex(script))
        findings.extend(err_findings)
    if error is None:
        context = _context_error(root, data)
        if context is not None:
            message, byte = context
            pos = LineIndex(script).position(conv(byte))
            error = ParseError(message, pos.line, pos.column)
    offsets.extend(b for b, _ in escapes)
    conv.prepare(offsets)
    escape_findings = [Finding(ESCAPE_CODE, why, conv(b)) for b, why in escapes]
    calls = []
    for name, call, first, odd_key in found:
        if odd_key is not None:
            src = script[conv(odd_key.start_byte) : conv(odd_key.end_byte)]
            name = (decode_string_literal(src) if odd_key.type == "string" else src) or "*"
        start, end = conv(call.start_byte), conv(call.end_byte)
        if first is None:
            calls.append(RawCall(name, start, end, end, end, False))
        else:
            calls.append(
                RawCall(
                    name,
                    start,
                    end,
                    conv(first.start_byte),
                    conv(first.end_byte),
                    first.type == "spread_element",
                )
            )
    return BackendResult(calls, error, findings, _BindingLookup(root, data), escape_findings)


def _declares(parent: Any, node: Any) -> bool:
    """``node`` (the identifier ``tools``) is the name ``parent`` declares: a local ``tools``."""
    if parent.type not in _DECLARING_PARENTS:
        return False
    field = _DECLARING_PARENTS[parent.type]
    if field is None:
        return True
    named = parent.child_by_field_name(field)
    return named is not None and named.start_byte == node.start_byte


def _computed_key(node: Any, data: bytes) -> str | None:
    return "*"


def _text(node: Any, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")


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
_ARROW_RE = re.compile(rb"=>")
_FUNCTION_RE = re.compile(rb"function(?![\w$])")
_RETURN_RE = re.compile(rb"return(?![\w$])")
_AWAIT_RE = re.compile(rb"await(?![\w$])")
_DECLARED_RE = re.compile(rb"(?:const|let|class)\s+([A-Za-z_$][\w$]*)")
_SCOPES = frozenset(
    {"program", "statement_block", "for_statement", "for_in_statement", "switch_body", "class_body"}
)


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
