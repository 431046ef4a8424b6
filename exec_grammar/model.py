"""The analyzer's public data: what a Codex code-mode script contains, read without running it.

Everything here is a frozen, slotted dataclass so an analysis can be shared, hashed and cached.

Positions: ``offset`` is a 0-based index in code points into the script (Python ``str`` indexing, never
bytes: scripts carry non-ASCII text); ``line`` is 1-based; ``column`` is 0-based, in code points.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ParserName(StrEnum):
    """Which reader produced an analysis."""

    TREE_SITTER = "tree-sitter"
    ESPRIMA = "esprima"
    LEXER = "lexer"


class EntryKind(StrEnum):
    SHELL_COMMAND = "shell_command"
    STDIN_WRITE = "stdin_write"
    PATCH = "patch"
    TOOL_CALL = "tool_call"


class PatchOp(StrEnum):
    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"


#: The only value an entry read from script source may carry: the static reading cannot tell whether a
#: call in a branch ran.
EXECUTED_UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Position:
    offset: int
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why the primary parser rejected a script (the script then never ran as written)."""

    message: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Finding:
    """Something a backend noticed but did not turn into a call (pyflakes-style data, not an exception).

    Tests assert on ``code`` only; ``message`` wording may change. Codes: ``unhandled-node`` (a node type
    the visitor has no decision for), ``benign-error`` (tree-sitter error nodes inside a tagged template,
    which acorn accepts), ``bad-pragma`` (a first-line ``// @exec:`` that does not decode), ``tools-escape``
    (``tools`` used other than by a direct call, e.g. an alias of ``tools.exec_command``, or a route to it the
    analyzer cannot follow: ``globalThis``, ``eval``, ``Function``), ``tools-shadowed`` (the script declares
    its own ``tools``: its calls in that scope are not tool calls)."""

    code: str
    message: str
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One ``tools.NAME(…)`` call found in a script.

    ``argument`` is the first argument decoded with JavaScript's literal rules when it is a literal
    (strings, numbers, booleans, null, arrays, objects); ``computed`` is True when it is not (an
    identifier, a call, shorthand, spread, an interpolated template). A call with no argument has
    ``argument_source == ""``, ``argument is None`` and ``computed`` False.
    """

    name: str
    start: Position
    end: Position
    argument_source: str
    argument: Any
    computed: bool


@dataclass(frozen=True, slots=True)
class PatchFile:
    path: str
    op: PatchOp
    move_to: str | None = None
    added: int = 0
    removed: int = 0


@dataclass(frozen=True, slots=True)
class Patch:
    """A parsed apply_patch body. ``error`` is set (and ``files`` may be partial) when it is malformed."""

    files: tuple[PatchFile, ...]
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ShellCommandEntry:
    """A shell command a script contains. ``whole_script`` marks the fallback where any computed
    ``exec_command`` argument makes the whole script the one command (never a partial list)."""

    command: str
    cwd: str | None = None
    whole_script: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    order: int = 0
    call_names: tuple[str, ...] = ()
    executed: str = EXECUTED_UNKNOWN
    kind: EntryKind = EntryKind.SHELL_COMMAND


@dataclass(frozen=True, slots=True, kw_only=True)
class StdinWriteEntry:
    session_id: Any = None
    chars: str | None = None
    order: int = 0
    executed: str = EXECUTED_UNKNOWN
    kind: EntryKind = EntryKind.STDIN_WRITE


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchEntry:
    """One entry for all of a script's apply_patch calls, naming every file from the headers.
    A ``${name}`` header that no single ``const name = "literal"`` resolves is dropped and counted in
    ``unresolved_paths``; it is never shown as ``${name}``. ``error`` is the shared patch parser's
    message for a malformed, fully resolved patch text ( reported, not guessed)."""

    files: tuple[PatchFile, ...]
    unresolved_paths: int = 0
    patch_texts: tuple[str, ...] = ()
    order: int = 0
    error: str | None = None
    executed: str = EXECUTED_UNKNOWN
    kind: EntryKind = EntryKind.PATCH


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEntry:
    """Any other tool (MCP ``mcp__server__tool``, ``web__run``, ``view_image``, ``wait``…)."""

    name: str
    argument_source: str = ""
    argument: Any = None
    order: int = 0
    executed: str = EXECUTED_UNKNOWN
    kind: EntryKind = EntryKind.TOOL_CALL


Entry = ShellCommandEntry | StdinWriteEntry | PatchEntry | ToolCallEntry


@dataclass(frozen=True, slots=True)
class Analysis:
    """Everything the static reading of one script gives. ``entries`` is a pure function of the rest."""

    source: str
    parser: ParserName
    calls: tuple[ToolCall, ...]
    parse_error: ParseError | None = None
    pragma: Mapping[str, Any] | None = None
    entries: tuple[Entry, ...] = ()
    findings: tuple[Finding, ...] = ()
    #: Indexes (into ``calls``) of the calls on the unconditional path of the top-level program: each
    #: an awaited tool call with a literal argument, directly in a top-level statement, with no
    #: branch, loop, function, ``try``, short-circuit or optional call around it and no statement
    #: before it that may end the cell early. If the cell's output says it completed, these calls ran,
    #: as written, only where nothing in the cell can change what a call sends or whether it runs:
    #: ``exec_grammar.proof.proven_calls`` gives the calls a proof stands for (``docs/analyzer.md``,
    #: "What a proof means"). Empty when the script does not parse.
    proven: tuple[int, ...] = ()
