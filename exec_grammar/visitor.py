"""One visitor shape for every backend: a handler table keyed by node type (pyflakes' dispatch).

Each backend subclasses :class:`TableVisitor` and lists every node type it handles or deliberately
passes through. A node type missing from the table is reported as a ``Finding("unhandled-node")`` (and
its children are still visited), so a grammar upgrade that adds a node kind shows up in tests instead of
silently hiding calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from exec_grammar.model import Finding

__all__ = ["TableVisitor"]


class TableVisitor:
    """Dispatch on a node type string. Subclasses fill ``HANDLERS`` (type -> method name) and
    ``PASS_THROUGH`` (types whose children are visited with no other action)."""

    HANDLERS: ClassVar[dict[str, str]] = {}
    PASS_THROUGH: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._table: dict[str, Callable[[Any], None]] = {}
        for kind, method in self.HANDLERS.items():
            self._table[kind] = getattr(self, method)
        for kind in self.PASS_THROUGH:
            self._table.setdefault(kind, self.visit_children)

    def node_type(self, node: Any) -> str:
        raise NotImplementedError

    def node_offset(self, node: Any) -> int | None:
        return None

    def visit_children(self, node: Any) -> None:
        raise NotImplementedError

    def visit(self, node: Any) -> None:
        kind = self.node_type(node)
        handler = self._table.get(kind)
        if handler is None:
            self.findings.append(
                Finding("unhandled-node", f"no handler for node type {kind!r}", self.node_offset(node))
            )
            self.visit_children(node)
            return
        handler(node)
