"""The primary backend: tree-sitter with tree-sitter-javascript (ES2024, top-level ``await``, fast).

Calls are found from the textual ``tools`` hits, each looked up in the tree (see :func:`parse_calls`), so
Python touches a handful of nodes per call: a Python walk over every node costs about as much as the
parse itself, and even the Query API costs about 0.8x acorn's whole time (js-parsers.md §6; measured
here: the lookup adds about 0.2x to the parse, the query about 0.8x). The callee keys are dispatched
through a small handler table; an unknown key type is a finding.

Linear in the script: up to ``_DIRECT_MAX`` hits are looked up from the root in C (a bounded
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
from collections.abc import Callable
from typing import Any

from exec_grammar.backends import BackendResult, LineIndex, RawCall
from exec_grammar.backends.ts_bindings import _DECLARING_PARENTS, _BindingLookup, declaration_scope
from exec_grammar.backends.ts_comments import blank_comments
from exec_grammar.backends.ts_module import error_tree_rules, module_rules
from exec_grammar.backends.ts_repair import repair
from exec_grammar.backends.ts_routes import (
    NAME_NODES,
    TopPaths,
    decode_identifier,
    route,
    tools_hits,
    top_statements,
)
from exec_grammar.backends.ts_tree import (
    _DIRECT_MAX,
    WORK,
    _ByteToCodePoint,
    _Direct,
    _parse_error,
    _parser,
    _Seeker,
)
from exec_grammar.escapes import AS_OBJECT, ESCAPE_CODE, SHADOW_CODE
from exec_grammar.literals import cook_template_text, decode_string_literal
from exec_grammar.model import Finding, ParseError

__all__ = ["WORK", "parse_calls"]


def _key_property(node: Any, data: bytes) -> str | None:
    # V8 compares names after decoding their escapes: tools.\u0065xec_command is exec_command
    return decode_identifier(data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass"))


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


#: ``tools`` as a whole identifier in the UTF-8 text. Each hit is then looked up in the tree: a hit in a
#: string, comment, template text or regex is not an ``identifier`` node and drops out.
_TOOLS_RE = re.compile(rb"tools(?![\w$])")
_CALLEES = frozenset({"member_expression", "subscript_expression"})
#: A comment-blanked script that does not parse is parsed as written too, up to this size (the superlinear
#: parse of comment runs costs about 0.1 s at 8 KB).
_REPARSE_MAX = 8192
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
    script), and for each the two or three ancestors on its stack are checked: the identifier
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
    original = data
    blanked = blank_comments(script)
    if blanked is not None:
        # many comments: parse (and read) a comment-blanked copy of the same byte length (ts_comments)
        data = _LONE_SURROGATE_RE.sub("\ufffd", blanked).encode("utf-8", "surrogatepass")
    parser = _parser()
    tree = parser.parse(data)
    root = tree.root_node
    if blanked is not None and root.has_error and len(original) <= _REPARSE_MAX:
        # The lexer told a comment from a regex wrongly (`}` then `/\**/`: division or a regex?); a
        # small script costs little to parse as written, whatever its comments (fuzz case: a regex in
        # a comment run after a block)
        whole = parser.parse(original)
        if not whole.root_node.has_error:
            data, tree, root = original, whole, whole.root_node
    if root.has_error:
        repaired = repair(data, root, parser.parse)
        if repaired is not None:
            data, tree = repaired
            root = tree.root_node
    conv = _ByteToCodePoint(script, original)
    found: list[tuple[str, int, int, Any, Any, int]] = []  # (name, start, end byte, first argument, odd key, top)
    findings: list[Finding] = []
    offsets: list[int] = []
    hits = tools_hits(data)
    finder: _Direct | _Seeker = _Direct(root) if len(hits) <= _DIRECT_MAX else _Seeker(root)
    find, up = finder.find, finder.up
    escapes: list[tuple[int, str]] = []  # (byte, why): tools used other than by a direct call
    shadows: list[tuple[int, int, int]] = []  # (scope start, scope end, declaration byte): a local `tools`
    routes: list[tuple[int, str]] = []  # globalThis, eval, Function: not shadowed by a local `tools`
    tops = TopPaths(root, data)
    direct = len(hits) <= _DIRECT_MAX  # a bounded number of root descents stays linear
    cost = root.descendant_count
    ascii = conv.ascii
    for hs, he, word in hits:
        if direct and word == b"tools":
            fast = _plain_call(root, data, hs, he)
            if fast is not None:
                WORK[0] += cost
                name, e, first = fast
                found.append((name, hs, e, first, None, tops.of(hs, e, None)))
                if not ascii:
                    offsets.extend((hs, e))
                    if first is not None:
                        offsets.extend((first.start_byte, first.end_byte))
                continue
        node = find(hs, he)
        if node is None:
            continue
        if word != b"tools":
            why = route(node, up, data, word)
            if why is not None:
                routes.append((hs, why))
            continue
        if node.type not in NAME_NODES:
            continue
        if node.type == "shorthand_property_identifier_pattern" or (
            node.type == "identifier" and up(1) is not None and _declares(up(1), node)
        ):
            scope = declaration_scope(up)
            shadows.append((*(scope or (0, len(data))), hs))
            continue
        if node.type == "shorthand_property_identifier":  # {tools}: the object passed on
            escapes.append((hs, "tools used as a value"))
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
            escapes.append((hs, "tools used as a value"))
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
        j = k + 1
        call = up(j)
        if call is not None and call.type == "parenthesized_expression" and call.named_child_count == 1:
            j += 1
            call = up(j)  # (tools.x)(…)
        args = (
            call.child_by_field_name("arguments")
            if call is not None and call.type == "call_expression"
            else None
        )
        if args is None or args.type != "arguments":
            # not called (an alias, .call/.apply, a tagged template tools.x`…`): harmless unless it
            # may be exec_command, or a member of the tool is reached (tools.ns.tool(…))
            outer = call if call is not None and call.type in _CALLEES else None
            if outer is not None and outer.start_byte == callee.start_byte and k == 1:
                escapes.append((hs, AS_OBJECT))
            elif name in ("exec_command", "*"):
                escapes.append(
                    (hs, f"tools{'[…]' if name == '*' else '.exec_command'} used without being called")
                )
            continue
        first = _first_argument(args)
        odd_key = None
        if surrogates and "\ufffd" in name:
            odd_key = key  # the key held a lone surrogate: read it from the original text below
            offsets.extend((key.start_byte, key.end_byte))
        cs, ce = call.start_byte, call.end_byte
        found.append((name, cs, ce, first, odd_key, tops.of(cs, ce, call)))
        if not ascii:
            offsets.extend((cs, ce))
            if first is not None:
                offsets.extend((first.start_byte, first.end_byte))
    if shadows:
        # a `tools` declared in scope is the script's own object: its calls are not tool calls
        def shadowed(b: int) -> bool:
            return any(lo <= b < hi for lo, hi, _ in shadows)

        found = [f for f in found if not shadowed(f[1])]
        escapes = [e for e in escapes if not shadowed(e[0])]
        offsets.extend(d for _, _, d in shadows)
    escapes.extend(routes)  # eval, Function, globalThis reach the global tools whatever is declared
    error: ParseError | None = None
    if root.has_error:
        error, err_findings = _parse_error(tree, data, conv, LineIndex(script))
        findings.extend(err_findings)
    module_error: ParseError | None = None
    v8_source: str | None = None
    # a tree with an error still gets the module rules that do not need it: tree-sitter rejects some
    # legal module syntax (`import {if as i} from 'm'`), and V8 judges the rest
    rule, edits = module_rules(root, data) if error is None else error_tree_rules(root, data)
    if rule is not None:
        message, byte = rule
        pos = LineIndex(script).position(conv(byte))
        module_error = ParseError(message, pos.line, pos.column)
    if edits:
        v8_source = _edited(script, conv, edits)
    offsets.extend(b for b, _ in escapes)
    conv.prepare(offsets)
    escape_findings = [Finding(ESCAPE_CODE, why, conv(b)) for b, why in escapes]
    findings.extend(
        Finding(SHADOW_CODE, "tools is declared by the script here: calls on it are not code-mode tool calls", conv(d))
        for _, _, d in shadows
    )
    calls = []
    same = conv.ascii  # byte offsets are code-point offsets
    for name, s, e, first, odd_key, top in found:
        if same:
            if first is None:
                calls.append(RawCall(name, s, e, e, e, False, top))
            else:
                calls.append(RawCall(name, s, e, first.start_byte, first.end_byte, first.type == "spread_element", top))
            continue
        if odd_key is not None:
            src = script[conv(odd_key.start_byte) : conv(odd_key.end_byte)]
            name = (decode_string_literal(src) if odd_key.type == "string" else src) or "*"
        start, end = conv(s), conv(e)
        top_cp = conv(top) if top >= 0 else -1
        if first is None:
            calls.append(RawCall(name, start, end, end, end, False, top_cp))
        else:
            calls.append(
                RawCall(
                    name,
                    start,
                    end,
                    conv(first.start_byte),
                    conv(first.end_byte),
                    first.type == "spread_element",
                    top_cp,
                )
            )
    lookup = _BindingLookup(root, data)

    def binding_of(name: str, at: int | None = None) -> Any:
        if at is None or conv.ascii:
            return lookup(name, at)
        return lookup(name, len(script[:at].encode("utf-8", "surrogatepass")))

    statements = top_statements(root, data, bool(routes), tops.statements) if calls else None
    if statements is not None and not conv.ascii:
        conv.prepare([b for b, _ in statements])
        statements = [(conv(b), safe) for b, safe in statements]
    return BackendResult(calls, error, findings, binding_of, escape_findings, statements, module_error, v8_source)


def _edited(script: str, conv: Any, edits: list[tuple[int, int, bytes]]) -> str:
    """``script`` with each edit applied: an ASCII replacement of the same length, or blanks (line
    breaks kept) where the replacement is empty; offsets in code points, so positions are kept."""
    conv.prepare([b for s, e, _ in edits for b in (s, e)])
    out = []
    last = 0
    for s, e, rep in sorted(edits):
        cs, ce = conv(s), conv(e)
        if cs < last:
            continue
        out.append(script[last:cs])
        piece = script[cs:ce]
        out.append(rep.decode("ascii") if rep else re.sub(r"[^\r\n\u2028\u2029]", " ", piece))
        last = ce
    out.append(script[last:])
    return "".join(out)


#: What follows ``tools`` in the plain call ``tools.name(`` (no comment, escape or line break between).
_PLAIN_TAIL = re.compile(rb"[ \t]*\.[ \t]*([A-Za-z_$][\w$]*)[ \t]*\(")


def _plain_call(root: Any, data: bytes, hs: int, he: int) -> tuple[str, int, Any] | None:
    """``(name, end byte of the call, its first argument node or None)`` when the ``tools`` at bytes
    [hs, he) is the object of the plain call ``tools.name(…)`` (most hits): the call is the smallest node
    spanning ``tools`` to the ``(``, found in one C descent and checked downwards, with no ``.parent``
    climb. None: any other shape (a string, a comment, a declaration, parentheses, ``new``, a
    subscript…), which the general path decides. A plain call is never an optional chain: ``?.`` cannot
    stand between ``tools``, the name and the ``(``."""
    m = _PLAIN_TAIL.match(data, he)
    if m is None:
        return None
    call = root.descendant_for_byte_range(hs, m.end())
    if call is None or call.type != "call_expression" or call.start_byte != hs:
        return None
    # ``tools . name`` exactly: a member expression over that span has ``tools`` as its object and
    # ``name`` as its property, whatever the whitespace
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "member_expression" or callee.start_byte != hs or callee.end_byte != m.end(1):
        return None
    args = call.child_by_field_name("arguments")
    if args is None or args.type != "arguments" or args.start_byte != m.end() - 1:
        return None
    first = None
    if args.named_child_count:
        first = args.named_child(0)
        if first.type == "comment":
            first = _first_argument(args)
    return m.group(1).decode("ascii"), call.end_byte, first


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


