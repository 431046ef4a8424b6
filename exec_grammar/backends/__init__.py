"""Backends: each reads a script with one parser and returns the same :class:`BackendResult`.

Only modules in this package touch a parser's node types. What they share lives here: the raw call
record (code-point offsets), offset -> line/column conversion, and the turning of raw calls into the
public :class:`~exec_grammar.model.ToolCall` (argument decoding is backend-independent, see
``exec_grammar.literals``), so the three backends cannot drift apart in what a call carries.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from exec_grammar.literals import COMPUTED, decode_literal
from exec_grammar.model import Finding, ParseError, Position, ToolCall

__all__ = ["RawCall", "BackendResult", "Binding", "LineIndex", "build_calls"]


@dataclass(frozen=True, slots=True)
class Binding:
    """A name declared exactly once, by ``const NAME = <string or template>``: ``value`` when the
    initialiser is a literal string, else the template's source (``raw`` for ``String.raw`…```)."""

    value: str | None
    template_source: str | None = None
    raw: bool = False


class RawCall(NamedTuple):
    """A call as a backend found it. Offsets are code points; ``arg_start == arg_end`` when there is no
    argument; ``spread`` marks ``tools.x(...a)``, whose argument is never a literal."""

    name: str
    start: int
    end: int
    arg_start: int
    arg_end: int
    spread: bool = False
    #: start of the top-level statement that awaits this call on the unconditional path, else -1
    top: int = -1


@dataclass(slots=True)
class BackendResult:
    """What one backend read. ``binding_of(name, at)``, when set, looks a name's const binding up in the
    backend's tree as seen from code-point offset ``at`` (None: the script's only declaration), in the backend's
    own tree (faster than lexing again); otherwise ``exec_grammar.entries`` lexes the script."""

    calls: list[RawCall]
    error: ParseError | None = None
    findings: list[Finding] = field(default_factory=list)
    binding_of: Callable[..., Binding | None] | None = None
    #: ``tools-escape`` findings when the backend checked them from its own tree; None: not checked
    #: (``exec_grammar.escapes`` reads the script instead)
    escapes: list[Finding] | None = None
    #: ``(start, runs nothing)`` of the top-level statements when the script names something that can
    #: end a completed cell early (``exit``, ``eval``…); None when it names nothing of the kind
    statements: list[tuple[int, bool]] | None = None
    #: the first error of a rule only a module has (``ts_module``), V8 compiling a function body
    module_error: ParseError | None = None
    #: the text V8 compiles when module syntax had to be hidden from it (``ts_module``), else None
    v8_source: str | None = None


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


def _fast_constructor(cls: type, fields: tuple[str, ...]) -> Callable[..., Any]:
    """A constructor for a frozen, slotted dataclass that sets the slots directly. The generated
    ``__init__`` goes through ``object.__setattr__`` per field, which is most of the cost of building
    the ~7 calls x 3 objects of a typical script; the result is an ordinary, equal instance. The body
    is written out per field (as ``dataclasses`` writes its own ``__init__``): a loop over the setters
    cost as much again."""
    declared = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    if declared != fields:  # a field added to the model must be added here too, in its place
        raise TypeError(f"{cls.__name__} has the fields {declared}, not {fields}")
    names = [f"v{i}" for i in range(len(fields))]
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def make({', '.join(names)}):", "    obj = _new(_cls)"]
    for i, f in enumerate(fields):
        scope[f"_set{i}"] = cls.__dict__[f].__set__
        lines.append(f"    _set{i}(obj, v{i})")
    lines.append("    return obj")
    exec("\n".join(lines), scope)  # noqa: S102 - code built here from field indexes only
    make: Callable[..., Any] = scope["make"]
    return make


_new_position = _fast_constructor(Position, ("offset", "line", "column"))
_new_call = _fast_constructor(ToolCall, ("name", "start", "end", "argument_source", "argument", "computed"))


def build_calls(script: str, raw: list[RawCall]) -> tuple[ToolCall, ...]:
    """Public calls in source order (by start; an outer call precedes the calls in its argument)."""
    if not raw:
        return ()
    raw = sorted(raw, key=lambda c: (c.start, -c.end))
    position = _positions(script, raw)
    out = []
    for c in raw:
        src = script[c.arg_start : c.arg_end]
        if not src:
            argument, computed = None, False
        elif c.spread:
            argument, computed = None, True
        else:
            value = decode_literal(src)
            computed = value is COMPUTED
            argument = None if computed else value
        out.append(_new_call(c.name, position(c.start), position(c.end), src, argument, computed))
    return tuple(out)


_START = itemgetter(1)  # RawCall.start, RawCall.end: read in C
_END = itemgetter(2)


def _positions(script: str, raw: list[RawCall]):
    """Offset -> Position for the offsets of ``raw``. Scripts whose only line terminator is ``\n`` (nearly
    all) count newlines in C up to each offset, in one left-to-right pass; others use :class:`LineIndex`."""
    if "\r" in script or "\u2028" in script or "\u2029" in script:
        return LineIndex(script).position
    cache: dict[int, Position] = {}
    line = 1
    last = 0
    line_start = 0
    for off in sorted({*map(_START, raw), *map(_END, raw)}):
        nl = script.count("\n", last, off)
        if nl:
            line += nl
            line_start = script.rindex("\n", last, off) + 1
        last = off
        cache[off] = _new_position(off, line, off - line_start)
    return cache.__getitem__
