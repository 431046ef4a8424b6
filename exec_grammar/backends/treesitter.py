"""The primary backend: tree-sitter with tree-sitter-javascript (ES2024, top-level ``await``, fast).

Calls are found from the textual ``tools`` hits, each looked up in the tree (see :func:`parse_calls`), so
Python touches a handful of nodes per call: a Python walk over every node costs about as much as the
parse itself, and even the Query API costs about 0.8x acorn's whole time (js-parsers.md §6; measured
here: the lookup adds about 0.2x to the parse, the query about 0.8x). The callee keys are dispatched
through a small handler table; an unknown key type is a finding.

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
from collections.abc import Callable
from typing import Any

import tree_sitter
import tree_sitter_javascript

from exec_grammar.backends import BackendResult, Binding, LineIndex, RawCall
from exec_grammar.literals import cook_template_text, decode_string_literal
from exec_grammar.model import Finding, ParseError

__all__ = ["parse_calls"]

_ERROR_QUERY_TEXT = "(ERROR) @e (MISSING) @m"

_LANGUAGE = tree_sitter.Language(tree_sitter_javascript.language())
_ERROR_QUERY = tree_sitter.Query(_LANGUAGE, _ERROR_QUERY_TEXT)
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
    inner = [c for c in node.named_children if c.type != "comment"]
    if len(inner) == 1:
        handler = _INDEX_HANDLERS.get(inner[0].type)
        if handler is not None:
            return handler(inner[0], data)
    return "*"


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


def _is_benign_error(node: Any) -> bool:
    """True when the error node lies inside a tagged template's text (acorn accepts bad escapes there)."""
    p = node.parent
    while p is not None:
        if p.type == "template_string":
            parent = p.parent
            return parent is not None and parent.type == "call_expression" and p.prev_sibling is not None
        p = p.parent
    return False


def _parse_error(
    tree: Any, data: bytes, conv: _ByteToCodePoint, index: LineIndex
) -> tuple[ParseError | None, list[Finding]]:
    nodes = []
    for kind, found in tree_sitter.QueryCursor(_ERROR_QUERY).captures(tree.root_node).items():
        for n in found:
            nodes.append((n.start_byte, kind, n))
    nodes.sort(key=lambda t: t[0])
    findings: list[Finding] = []
    for start, kind, n in nodes:
        if _is_benign_error(n):
            findings.append(
                Finding("benign-error", "tree-sitter error inside a tagged template", conv(start))
            )
            continue
        if kind == "m" or n.is_missing:
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

    Instead of walking the tree or running a query over all of it, each textual ``tools`` hit is looked
    up with ``descendant_for_byte_range`` (a descent in C) and its two or three ancestors are checked:
    the identifier must be the ``object`` of a member/subscript expression that is the ``function`` of
    a ``call_expression`` with real ``arguments``. This costs a few node objects per call instead of
    one per node of the script."""
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
    found: list[tuple[str, Any, Any]] = []
    findings: list[Finding] = []
    offsets: list[int] = []
    for m in _TOOLS_RE.finditer(data):
        if not _whole_word(data, m.start()):
            continue
        node = root.descendant_for_byte_range(m.start(), m.end())
        if node is None or node.type != "identifier":
            continue
        callee = node.parent
        if callee is None:
            continue
        if callee.type == "parenthesized_expression" and callee.named_child_count == 1:
            node, callee = callee, callee.parent  # (tools).x(…)
            if callee is None:
                continue
        if callee.type not in _CALLEES or callee.start_byte != node.start_byte:
            continue
        call = callee.parent
        if call is not None and call.type == "parenthesized_expression" and call.named_child_count == 1:
            call = call.parent  # (tools.x)(…)
        if call is None or call.type != "call_expression":
            continue
        args = call.child_by_field_name("arguments")
        if args is None or args.type != "arguments":
            continue  # a tagged template: tools.x`…`
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
        if surrogates and "\ufffd" in name:
            # the key held a lone surrogate: read it from the original text
            src = script[conv(key.start_byte) : conv(key.end_byte)]
            name = (decode_string_literal(src) if key.type == "string" else src) or "*"
        first = _first_argument(args)
        found.append((name, call, first))
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
    conv.prepare(offsets)
    calls = []
    for name, call, first in found:
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
    return BackendResult(calls, error, findings, _BindingLookup(root, data))


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


class _BindingLookup:
    """``name -> Binding`` when the name is declared exactly once in the script, by ``const``, with a
    string or template value. Only the textual hits of the asked name are looked up in the tree (a
    query over the whole tree costs about half a parse)."""

    __slots__ = ("root", "data", "cache")

    def __init__(self, root: Any, data: bytes) -> None:
        self.root = root
        self.data = data
        self.cache: dict[str, Binding | None] = {}

    def __call__(self, name: str) -> Binding | None:
        if name not in self.cache:
            self.cache[name] = self._lookup(name)
        return self.cache[name]

    def _lookup(self, name: str) -> Binding | None:
        data = self.data
        word = name.encode("utf-8")
        declarations = 0
        found: Binding | None = None
        for m in re.finditer(re.escape(word) + rb"(?![\w$])", data):
            if not _whole_word(data, m.start()):
                continue
            node = self.root.descendant_for_byte_range(m.start(), m.end())
            if node is None or node.type not in ("identifier", "shorthand_property_identifier_pattern"):
                continue
            parent = node.parent
            if parent is None:
                continue
            if node.type == "shorthand_property_identifier_pattern":
                declarations += 1
                continue
            if parent.type not in _DECLARING_PARENTS:
                continue
            field = _DECLARING_PARENTS[parent.type]
            if field is not None:
                named = parent.child_by_field_name(field)
                if named is None or named.start_byte != node.start_byte:
                    continue
            declarations += 1
            if parent.type == "variable_declarator":
                decl = parent.parent
                value = parent.child_by_field_name("value")
                if decl is not None and decl.type == "lexical_declaration" and value is not None:
                    first = decl.child(0)
                    if first is not None and first.type == "const":
                        found = _binding_value(value, data)
        return found if declarations == 1 else None


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
_ARROW_RE = re.compile(rb"=>")
_FUNCTION_RE = re.compile(rb"function(?![\w$])")
_RETURN_RE = re.compile(rb"return(?![\w$])")
_AWAIT_RE = re.compile(rb"await(?![\w$])")
_DECLARED_RE = re.compile(rb"(?:const|let|class)\s+([A-Za-z_$][\w$]*)")
_SCOPES = frozenset(
    {"program", "statement_block", "for_statement", "for_in_statement", "switch_body", "class_body"}
)


def _enclosing_function(node: Any) -> Any:
    p = node.parent
    while p is not None and p.type not in _FUNCTIONS:
        p = p.parent
    return p


def _context_error(root: Any, data: bytes) -> tuple[str, int] | None:
    """The first context error acorn would report (see the module docstring), as (message, byte)."""
    found: list[tuple[int, str]] = []
    has_await = b"await" in data
    has_return = b"return" in data
    # Functions found from their `=>` / `function` text: their ranges settle most `return`s without
    # walking up the tree, and non-async ones are searched for a direct `await`.
    ranges: list[tuple[int, int]] = []
    if has_await or has_return:
        hits = list(_ARROW_RE.finditer(data))
        if b"function" in data:
            hits.extend(m for m in _FUNCTION_RE.finditer(data) if _whole_word(data, m.start()))
        for m in hits:
            token = root.descendant_for_byte_range(m.start(), m.end())
            fn = token.parent if token is not None else None
            if fn is None or fn.type not in _FUNCTIONS:
                continue
            ranges.append((fn.start_byte, fn.end_byte))
            if not has_await or fn.child_count == 0 or fn.child(0).type == "async":
                continue
            if not _AWAIT_RE.search(data, fn.start_byte, fn.end_byte):
                continue
            for a in _AWAIT_RE.finditer(data, fn.start_byte, fn.end_byte):
                if not _whole_word(data, a.start()):
                    continue
                kw = root.descendant_for_byte_range(a.start(), a.end())
                if kw is None or kw.type != "await" or kw.parent is None:
                    continue
                inner = _enclosing_function(kw.parent)
                if inner is not None and inner.id == fn.id:
                    found.append((a.start(), "Cannot use keyword 'await' outside an async function"))
                    break
    if has_return:
        for m in _RETURN_RE.finditer(data):
            start = m.start()
            if not _whole_word(data, start) or any(a < start < b for a, b in ranges):
                continue
            # Not inside a function found from text (a method, or none at all): ask the tree.
            node = root.descendant_for_byte_range(start, m.end())
            if node is not None and node.type == "return" and node.parent is not None:
                if node.parent.type == "return_statement" and _enclosing_function(node.parent) is None:
                    found.append((start, "'return' outside of function"))
                    break
    names = [m for m in _DECLARED_RE.finditer(data) if _whole_word(data, m.start())]
    if len({m.group(1) for m in names}) != len(names):
        seen: set[tuple[int, bytes]] = set()
        for m in names:
            node = root.descendant_for_byte_range(m.start(1), m.end(1))
            if node is None or node.type != "identifier" or node.parent is None:
                continue
            decl = node.parent
            if decl.type == "variable_declarator":
                decl = decl.parent
            if decl is None or decl.type not in ("lexical_declaration", "class_declaration"):
                continue
            scope = decl.parent
            while scope is not None and scope.type not in _SCOPES:
                scope = scope.parent
            key = (scope.id if scope is not None else -1, m.group(1))
            if key in seen:
                found.append(
                    (
                        m.start(1),
                        f"Identifier '{m.group(1).decode('utf-8', 'replace')}' has already been declared",
                    )
                )
                break
            seen.add(key)
    if not found:
        return None
    byte, message = min(found)
    return message, byte
