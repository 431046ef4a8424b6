"""The second, independent parser: esprima-python 4.0.1 (an ES2017 parser, pure Python).

It exists to cross-check tree-sitter in tests, not for speed (10-17x slower than acorn) nor coverage
(it rejects ``?.``, ``??``, ``1_000``, ``catch {``, async generators…; js-parsers.md §7).

Top-level ``await``: the script is wrapped as ``(async () => {\\n`` + script + ``\\n})()`` so that it
parses, and every offset is mapped back by subtracting the prefix; the newline before ``})()`` keeps a
trailing ``//`` comment from swallowing the wrapper (hand case 45). A parse error on a wrapper line is
clamped to the script's first or last line.

Nodes are visited through esprima's delegate (called once per finished node) and dispatched by a
:class:`~exec_grammar.visitor.TableVisitor` that lists every ESTree type esprima produces; a type not
in the table is reported as a finding.
"""

from __future__ import annotations

import re
from typing import Any

import esprima

from exec_grammar.backends import BackendResult, LineIndex, RawCall
from exec_grammar.literals import cook_template_text
from exec_grammar.model import ParseError
from exec_grammar.visitor import TableVisitor

__all__ = ["parse_calls", "WRAP_PREFIX", "WRAP_SUFFIX"]

WRAP_PREFIX = "(async () => {\n"
WRAP_SUFFIX = "\n})()"

_ESTREE_TYPES = """
ArrayExpression ArrayPattern ArrowFunctionExpression AssignmentExpression AssignmentPattern
AwaitExpression BinaryExpression BlockStatement BreakStatement CatchClause ClassBody ClassDeclaration
ClassExpression ConditionalExpression ContinueStatement DebuggerStatement Directive DoWhileStatement
EmptyStatement ExportAllDeclaration ExportDefaultDeclaration ExportNamedDeclaration ExportSpecifier
ExpressionStatement FieldDefinition ForInStatement ForOfStatement ForStatement FunctionDeclaration
FunctionExpression Identifier IfStatement Import ImportDeclaration ImportDefaultSpecifier
ImportNamespaceSpecifier ImportSpecifier LabeledStatement Literal LogicalExpression MemberExpression
MetaProperty MethodDefinition NewExpression ObjectExpression ObjectPattern Program Property
RestElement ReturnStatement SequenceExpression SpreadElement Super SwitchCase SwitchStatement
TaggedTemplateExpression TemplateElement TemplateLiteral ThisExpression ThrowStatement TryStatement
UnaryExpression UpdateExpression VariableDeclaration VariableDeclarator WhileStatement WithStatement
YieldExpression ArrowParameterPlaceHolder AsyncArrowParameterPlaceHolder
""".split()


class _CallCollector(TableVisitor):
    """Collects ``tools`` calls; esprima itself walks the tree (each node reaches :meth:`visit` once)."""

    HANDLERS = {"CallExpression": "visit_call"}
    PASS_THROUGH = frozenset(_ESTREE_TYPES)

    def __init__(self, shift: int) -> None:
        super().__init__()
        self.shift = shift
        self.calls: dict[tuple[int, int], RawCall] = {}

    def node_type(self, node: Any) -> str:
        return str(node.type)

    def node_offset(self, node: Any) -> int | None:
        r = getattr(node, "range", None)
        return r[0] - self.shift if r else None

    def visit_children(self, node: Any) -> None:
        # esprima's delegate has already visited the children (it reports nodes bottom-up).
        return None

    def visit_call(self, node: Any) -> None:
        callee = node.callee
        if callee is None or callee.type != "MemberExpression":
            return
        obj = callee.object
        if obj is None or obj.type != "Identifier" or obj.name != "tools":
            return
        name = _tool_name(callee)
        start, end = node.range[0] - self.shift, node.range[1] - self.shift
        args = node.arguments or []
        if args:
            first = args[0]
            a0, a1 = first.range[0] - self.shift, first.range[1] - self.shift
            spread = first.type == "SpreadElement"
        else:
            a0 = a1 = end
            spread = False
        # esprima may report a node twice when it reinterprets `async (…)` as arrow parameters.
        self.calls[(start, end)] = RawCall(name, start, end, a0, a1, spread)


def _tool_name(callee: Any) -> str:
    prop = callee.property
    if not callee.computed:
        return str(prop.name)
    if prop.type == "Literal" and isinstance(prop.value, str):
        return prop.value
    if prop.type == "TemplateLiteral" and not prop.expressions:
        cooked = cook_template_text(prop.quasis[0].value.raw)
        return "*" if cooked is None else cooked
    return "*"


_LINE_PREFIX_RE = re.compile(r"^Line \d+: ")


def parse_calls(script: str) -> BackendResult:
    """The ``tools`` calls esprima sees in the wrapped script, or its parse error."""
    shift = len(WRAP_PREFIX)
    collector = _CallCollector(shift)
    try:
        esprima.parseScript(
            WRAP_PREFIX + script + WRAP_SUFFIX, {"range": True}, lambda node, meta: collector.visit(node)
        )
    except esprima.Error as e:
        index = LineIndex(script)
        offset = min(max(int(getattr(e, "index", shift)) - shift, 0), len(script))
        pos = index.position(offset)
        # esprima's "Line N: " counts lines of the wrapped script (one more than the user's): the
        # position is in the line/column fields, mapped back, so the prefix is dropped.
        message = _LINE_PREFIX_RE.sub("", str(getattr(e, "description", None) or e), count=1)
        return BackendResult([], ParseError(message, pos.line, pos.column), collector.findings)
    except RecursionError:
        return BackendResult([], ParseError("nesting too deep for esprima", 1, 0), collector.findings)
    except AssertionError as e:
        # esprima-python asserts on some invalid input instead of raising its Error (hypothesis found
        # "`${}`": "Template literal must start with a template head"): still a rejection.
        return BackendResult([], ParseError(f"esprima rejected the script: {e}", 1, 0), collector.findings)
    return BackendResult(list(collector.calls.values()), None, collector.findings)
