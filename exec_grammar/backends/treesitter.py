"""The primary backend: tree-sitter with tree-sitter-javascript (ES2024, top-level ``await``, fast).

Calls are collected with the Query API, so matching runs in C and Python touches only the matched
nodes (a Python walk over every node costs about as much as the parse itself; js-parsers.md §6). The
captured callee keys are dispatched through a small handler table; an unknown key type is a finding.

Pitfalls handled here (js-parsers.md §2):
- tree-sitter offsets are UTF-8 bytes; they are converted to code points (ASCII scripts: identity).
- a tagged template (``tools.x`…```) is a ``call_expression`` whose arguments are a ``template_string``;
  ESTree calls it a TaggedTemplateExpression, so it is not a call. ``arguments: (arguments)`` excludes it.
- ERROR nodes that lie only inside a tagged template are benign: acorn accepts invalid escapes there
  (ES2018 template revision, hand case 43), tree-sitter does not.
- a parenthesised callee or object (``(tools.x)(…)``, ``(tools).x(…)``) is a call for ESTree; one level of
  parentheses is matched.
Context errors (``await`` in a non-async function, a redeclared ``const``, top-level ``return``) are not
detected: tree-sitter checks grammar only (known limit, js-parsers.md §2).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import tree_sitter
import tree_sitter_javascript

from exec_grammar.backends import BackendResult, LineIndex, RawCall
from exec_grammar.literals import cook_template_text, decode_string_literal
from exec_grammar.model import Finding, ParseError

__all__ = ["parse_calls"]

_CALLEE = """
(call_expression
  function: {fn}
  arguments: (arguments) @args
  (#eq? @obj "tools")) @call
"""
_FUNCTIONS = [
    "(member_expression object: (identifier) @obj property: (_) @prop)",
    "(subscript_expression object: (identifier) @obj index: (_) @idx)",
    "(parenthesized_expression (member_expression object: (identifier) @obj property: (_) @prop))",
    "(parenthesized_expression (subscript_expression object: (identifier) @obj index: (_) @idx))",
    "(member_expression object: (parenthesized_expression (identifier) @obj) property: (_) @prop)",
    "(subscript_expression object: (parenthesized_expression (identifier) @obj) index: (_) @idx)",
]
_QUERY_TEXT = "\n".join(_CALLEE.format(fn=f) for f in _FUNCTIONS)
_ERROR_QUERY_TEXT = "(ERROR) @e (MISSING) @m"

_LANGUAGE = tree_sitter.Language(tree_sitter_javascript.language())
_QUERY = tree_sitter.Query(_LANGUAGE, _QUERY_TEXT)
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
            prev_c += len(self.data[prev_b:b].decode("utf-8", "replace"))
            prev_b = b
            self._cache[b] = prev_c

    def __call__(self, b: int) -> int:
        if self.ascii:
            return b
        c = self._cache.get(b)
        if c is None:
            c = len(self.data[:b].decode("utf-8", "replace"))
            self._cache[b] = c
        return c


def _key_property(node: Any, data: bytes) -> str | None:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _key_index_string(node: Any, data: bytes) -> str | None:
    return decode_string_literal(data[node.start_byte : node.end_byte].decode("utf-8", "replace"))


def _key_index_template(node: Any, data: bytes) -> str | None:
    if any(c.type == "template_substitution" for c in node.named_children):
        return "*"
    raw = data[node.start_byte + 1 : node.end_byte - 1].decode("utf-8", "replace")
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


def parse_calls(script: str) -> BackendResult:
    """Every ``tools`` call tree-sitter finds, plus the first syntax error when the tree has one."""
    data = script.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    conv = _ByteToCodePoint(script, data)
    matches = tree_sitter.QueryCursor(_QUERY).matches(tree.root_node) if "tools" in script else []
    found: list[tuple[str, Any, Any]] = []
    findings: list[Finding] = []
    offsets: list[int] = []
    seen: set[int] = set()
    for _pattern, caps in matches:
        call = caps["call"][0]
        if call.id in seen:
            continue
        seen.add(call.id)
        if "prop" in caps:
            key = caps["prop"][0]
            handler = _PROPERTY_HANDLERS.get(key.type)
        else:
            key = caps["idx"][0]
            handler = _INDEX_HANDLERS.get(key.type, _computed_key)
        if handler is None:
            findings.append(Finding("unhandled-node", f"tool name from node type {key.type!r}", None))
            continue
        name = handler(key, data)
        if name is None:
            name = "*"
        args = caps["args"][0]
        first = None
        for child in args.named_children:
            if child.type != "comment":
                first = child
                break
        found.append((name, call, first))
        offsets.extend((call.start_byte, call.end_byte))
        if first is not None:
            offsets.extend((first.start_byte, first.end_byte))
    error: ParseError | None = None
    index = LineIndex(script)
    if tree.root_node.has_error:
        error, err_findings = _parse_error(tree, data, conv, index)
        findings.extend(err_findings)
    conv.prepare(offsets)
    calls = []
    for name, call, first in found:
        start, end = conv(call.start_byte), conv(call.end_byte)
        if first is None:
            a0 = a1 = conv(call.end_byte)
            spread = False
        else:
            a0, a1 = conv(first.start_byte), conv(first.end_byte)
            spread = first.type == "spread_element"
        calls.append(RawCall(name, start, end, a0, a1, spread))
    return BackendResult(calls, error, findings)


def _computed_key(node: Any, data: bytes) -> str | None:
    return "*"
