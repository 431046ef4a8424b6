"""Backends: each reads a script with one parser and returns the same :class:`BackendResult`.

Only modules in this package touch a parser's node types. What they share lives here: the raw call
record (code-point offsets), offset -> line/column conversion, and the turning of raw calls into the
public :class:`~exec_grammar.model.ToolCall` (argument decoding is backend-independent, see
``exec_grammar.literals``), so the three backends cannot drift apart in what a call carries.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from exec_grammar.literals import decode_literal, is_computed
from exec_grammar.model import Finding, ParseError, Position, ToolCall

__all__ = ["RawCall", "BackendResult", "LineIndex", "build_calls"]


@dataclass(frozen=True, slots=True)
class RawCall:
    """A call as a backend found it. Offsets are code points; ``arg_start == arg_end`` when there is no
    argument; ``spread`` marks ``tools.x(...a)``, whose argument is never a literal."""

    name: str
    start: int
    end: int
    arg_start: int
    arg_end: int
    spread: bool = False


@dataclass(slots=True)
class BackendResult:
    calls: list[RawCall]
    error: ParseError | None = None
    findings: list[Finding] = field(default_factory=list)


#: JavaScript's line terminators; CR LF counts as one.
_TERMINATOR_RE = re.compile(r"\r\n?|[\n\u2028\u2029]")


class LineIndex:
    """Code-point offset -> (1-based line, 0-based column) by JavaScript's line terminators."""

    __slots__ = ("_starts",)

    def __init__(self, text: str) -> None:
        starts = [0]
        if "\n" in text or "\r" in text or "\u2028" in text or "\u2029" in text:
            starts.extend(m.end() for m in _TERMINATOR_RE.finditer(text))
        self._starts = starts

    def position(self, offset: int) -> Position:
        line = bisect_right(self._starts, offset)
        return Position(offset, line, offset - self._starts[line - 1])


def build_calls(script: str, raw: list[RawCall]) -> tuple[ToolCall, ...]:
    """Public calls in source order (by start; an outer call precedes the calls in its argument)."""
    if not raw:
        return ()
    raw = sorted(raw, key=lambda c: (c.start, -c.end))
    index = LineIndex(script)
    out = []
    for c in raw:
        src = script[c.arg_start : c.arg_end]
        if not src:
            argument, computed = None, False
        elif c.spread:
            argument, computed = None, True
        else:
            value = decode_literal(src)
            computed = is_computed(value)
            argument = None if computed else value
        out.append(ToolCall(c.name, index.position(c.start), index.position(c.end), src, argument, computed))
    return tuple(out)
