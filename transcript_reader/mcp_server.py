"""The MCP server: lets an agent read what another agent did, bounded and safe.

Why it exists: agents hand work to other agents and need the child's final answer, commands, changes and
test runs without pulling a whole transcript into their context. The origin project (agent-code) exposes
this as three MCP tools; we answer the same calls (same names, parameters, ranges and defaults, see
``../shared/docs/peers.md`` §1) with our reader, and add discovery and the exec-script analyzer.

What it owns: the only module that knows MCP types. Each tool validates its arguments, checks the path
against the root policy, calls one library function in a worker thread, renders the result with the
library's one JSON definition (:mod:`transcript_reader.render`, ``discovery.entry_to_dict``,
:mod:`exec_grammar.render`), and bounds the serialized text. Everything the library raises becomes a
tool error (``isError``) carrying ``{"ok": false, "error": {"code", "message"}}`` with a stable code and a
one-line message; no traceback ever reaches the client.

Built on the ``mcp`` SDK's **2.x** low-level ``Server`` (constructor handlers ``on_list_tools`` /
``on_call_tool``; 1.x had decorators and ``FastMCP``, which 2.x renamed ``MCPServer``). The low-level
server is used rather than ``MCPServer`` because ``MCPServer`` validates arguments itself and reports a
multi-line pydantic dump prefixed "Error executing tool…", which would break the stable-code contract.
"""

from __future__ import annotations

import enum
import errno
import logging
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import orjson
from mcp.server import Server
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from transcript_reader.errors import TranscriptError
from transcript_reader.render import error_to_dict

log = logging.getLogger("transcript_reader.mcp")

SERVER_NAME = "transcript-reader"

#: Size of everything in a result that is not items/matches (path, stats, flags). A result's text never
#: exceeds ``maxChars + ENVELOPE_CHARS``; the server boundary enforces it on the serialized text.
ENVELOPE_CHARS = 4_000

#: Inspect has no maxChars parameter; its answer is held to the read default plus the envelope.
INSPECT_CHARS = 24_000 + ENVELOPE_CHARS

#: A sniff of the file head (only on the error path) decides provider_detection_failed vs
#: unsupported_format; never echoed.
SNIFF_BYTES = 64 * 1024

#: Pseudo file systems whose "regular files" are not files (``/proc/self/environ`` stats as S_ISREG).
PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))

MIB = 1024 * 1024


class ToolName(enum.StrEnum):
    READ = "agent_transcript_read_file"
    SEARCH = "agent_transcript_search_file"
    INSPECT = "agent_transcript_inspect_file"
    LIST_SESSIONS = "agent_transcript_list_sessions"
    ANALYZE = "exec_script_analyze"


class ErrorCode(enum.StrEnum):
    """The stable codes a tool error carries (the issue's list, plus internal_error for our own bugs)."""

    PATH_REQUIRED = "path_required"
    FILE_NOT_FOUND = "file_not_found"
    NOT_A_FILE = "not_a_file"
    PERMISSION_DENIED = "permission_denied"
    OUTSIDE_ALLOWED_ROOTS = "outside_allowed_roots"
    TOO_LARGE = "too_large"
    UNSUPPORTED_FORMAT = "unsupported_format"
    PROVIDER_DETECTION_FAILED = "provider_detection_failed"
    INVALID_ARGUMENT = "invalid_argument"
    INTERNAL_ERROR = "internal_error"


class ToolFailure(Exception):
    """A call the server refuses or cannot answer: becomes an ``isError`` result, never a crash."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = _one_line(message)


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --------------------------------------------------------------------------------------------------
# Path policy


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """What the server may read. Built by the CLI (which reads ``$CODEX_HOME``); the server never reads
    the environment itself."""

    codex_home: Path | None = None
    allow_roots: tuple[Path, ...] = ()
    allow_any_path: bool = False
    max_file_bytes: int = 2048 * MIB

    def roots(self) -> tuple[Path, ...]:
        """Allowed roots, symlinks resolved (a ``~/.codex`` that is a symlink still contains its files)."""
        found = [self.codex_home] if self.codex_home is not None else []
        found.extend(self.allow_roots)
        return tuple(Path(os.path.realpath(os.path.expanduser(r))) for r in found)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def check_path(raw: object, config: ServerConfig) -> Path:
    """Resolve ``raw`` and prove it is a readable regular file the policy allows; return the resolved path.

    Order matters: the root check runs on the resolved path (symlinks and ``..`` gone) *before* any
    existence check, so the server never reveals whether a file outside its roots exists. The file type is
    checked with ``stat`` before anything opens it (a FIFO would block ``open``), then opened once with
    ``O_NONBLOCK`` to confirm the same inode is still a regular file.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise ToolFailure(ErrorCode.PATH_REQUIRED, "path is required: give the transcript file's path")
    if "\x00" in raw:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, "path contains a NUL character")
    given = Path(os.path.expanduser(raw.strip()))
    resolved = Path(os.path.realpath(given))
    if not config.allow_any_path:
        roots = config.roots()
        if not any(_within(resolved, root) for root in roots):
            where = ", ".join(str(r) for r in roots) or "(none configured)"
            raise ToolFailure(
                ErrorCode.OUTSIDE_ALLOWED_ROOTS,
                f"{resolved} is outside the allowed roots ({where}); start the server with --allow-root DIR "
                "or --allow-any-path",
            )
    if any(_within(resolved, pseudo) for pseudo in PSEUDO_ROOTS):
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{resolved} is on a pseudo file system, not a regular file")
    try:
        st = os.stat(resolved)
    except FileNotFoundError:
        raise ToolFailure(ErrorCode.FILE_NOT_FOUND, f"{resolved} does not exist") from None
    except NotADirectoryError:
        raise ToolFailure(ErrorCode.FILE_NOT_FOUND, f"{resolved} does not exist") from None
    except PermissionError:
        raise ToolFailure(ErrorCode.PERMISSION_DENIED, f"{resolved} cannot be read: permission denied") from None
    except OSError as exc:  # ELOOP, ENAMETOOLONG…
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{resolved} cannot be used: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{resolved} is {what}")
    if st.st_size > config.max_file_bytes:
        raise ToolFailure(
            ErrorCode.TOO_LARGE,
            f"{resolved} is {st.st_size / MIB:.1f} MiB, over the server's limit of "
            f"{config.max_file_bytes / MIB:.0f} MiB (--max-file-mb)",
        )
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except PermissionError:
        raise ToolFailure(ErrorCode.PERMISSION_DENIED, f"{resolved} cannot be read: permission denied") from None
    except OSError as exc:
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{resolved} cannot be opened: {exc.strerror}") from None
    try:
        again = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(again.st_mode) or (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{resolved} changed while it was being checked")
    return resolved


def _looks_like_json_records(path: Path) -> bool:
    """True when the file's first non-blank line (or the whole head, for a single JSON document) starts a
    JSON object: some agent's transcript, just not one we know. Reads at most SNIFF_BYTES; never echoed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            head = os.read(fd, SNIFF_BYTES)
        finally:
            os.close(fd)
    except OSError:
        return False
    for line in head.splitlines():
        if not line.strip():
            continue
        try:
            return isinstance(orjson.loads(line), dict)
        except orjson.JSONDecodeError:
            # A pretty-printed JSON document opens with a lone "{".
            return line.strip() == b"{"
    return False


# --------------------------------------------------------------------------------------------------
# Arguments: the origin's names, ranges and defaults (peers.md §1.1, §1.5), plus our extensions.

Provider = Literal["auto", "codex"]

#: Origin projection -> (our projection, kinds added on top). ``handoff`` is ours exactly: each turn's
#: final answer + every patch + every shell command + every test run (the origin made it = timeline).
PROJECTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "final": ("final", ()),
    "assistant_messages": ("assistant_messages", ()),
    "conversation": ("conversation", ()),
    "tool_reads": ("tool_calls", ()),
    "tool_writes": ("file_changes", ()),
    "file_changes": ("file_changes", ()),
    "shell_commands": ("shell_commands", ()),
    "tests": ("tests", ()),
    "timeline": ("timeline", ()),
    "handoff": ("final", ("patch", "shell_command", "test_run")),
    # ours, not the origin's
    "tool_calls": ("tool_calls", ()),
    "raw_outputs": ("raw_outputs", ()),
}

#: Origin include flag (plus three of ours) -> our kinds.
INCLUDE_FLAGS: dict[str, tuple[str, ...]] = {
    "userMessages": ("user_message",),
    "assistantMessages": ("assistant_message",),
    "toolReads": ("tool_call",),
    "toolWrites": ("patch",),
    "shellCommands": ("shell_command", "stdin_write"),
    "patches": ("patch",),
    "testRuns": ("test_run",),
    "rawToolOutputs": ("raw_output",),
    "reasoning": ("reasoning",),
    "contextMessages": ("context",),
    "notices": ("notice",),
}

#: Search kinds: the origin's names map onto ours; ours are accepted as they are.
SEARCH_KINDS: dict[str, str] = {
    "user_message": "user_message",
    "assistant_message": "assistant_message",
    "tool_read": "tool_call",
    "tool_write": "patch",
    "shell_command": "shell_command",
    "patch": "patch",
    "test_run": "test_run",
    "tool_call": "tool_call",
    "stdin_write": "stdin_write",
    "reasoning": "reasoning",
    "context": "context",
    "notice": "notice",
    "raw_output": "raw_output",
}

ProjectionName = Literal[
    "final", "assistant_messages", "conversation", "tool_reads", "tool_writes", "file_changes",
    "shell_commands", "tests", "timeline", "handoff", "tool_calls", "raw_outputs",
]
SearchKind = Literal[
    "user_message", "assistant_message", "tool_read", "tool_write", "shell_command", "patch", "test_run",
    "tool_call", "stdin_write", "reasoning", "context", "notice", "raw_output",
]

_PATH = "Absolute path of the transcript file (a Codex rollout .jsonl/.jsonl.zst, a 0.1.x .json, or a " \
    "`codex exec --json` stream). Must lie under $CODEX_HOME or a root the server was started with."
_PROVIDER = "Transcript provider: auto (detect) or codex. Only Codex transcripts are read."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False)


class IncludeFlags(_Args):
    """Per-kind overrides on the projection: true adds the kind, false removes it, absent defers."""

    user_messages: bool | None = Field(None, alias="userMessages", description="user_message items")
    assistant_messages: bool | None = Field(None, alias="assistantMessages", description="assistant_message items")
    tool_reads: bool | None = Field(None, alias="toolReads", description="tool_call items (MCP, web search, …)")
    tool_writes: bool | None = Field(None, alias="toolWrites", description="patch items (same as patches)")
    shell_commands: bool | None = Field(None, alias="shellCommands", description="shell_command + stdin_write")
    patches: bool | None = Field(None, description="patch items")
    test_runs: bool | None = Field(None, alias="testRuns", description="test_run items")
    raw_tool_outputs: bool | None = Field(None, alias="rawToolOutputs", description="raw_output items (full output)")
    reasoning: bool | None = Field(None, description="reasoning summaries (ours; hidden by default)")
    context_messages: bool | None = Field(
        None, alias="contextMessages", description="harness-injected context (ours; hidden by default)"
    )
    notices: bool | None = Field(None, description="notices: errors, aborted turns, compactions (ours)")


class ReadArgs(_Args):
    path: str = Field(description=_PATH)
    provider: Provider = Field("auto", description=_PROVIDER)
    projection: ProjectionName = Field(description="Which items to return; see the tool description.")
    include: IncludeFlags | None = Field(None, description="Per-kind overrides on the projection.")
    tail: int | None = Field(None, ge=1, le=10_000, description="Keep only the last N items of the projection.")
    max_items: int = Field(100, alias="maxItems", ge=1, le=10_000, description="At most this many items.")
    max_chars: int = Field(
        24_000, alias="maxChars", ge=100, le=500_000, description="Bound on the result's total size in characters."
    )
    max_chars_per_item: int = Field(
        4_000, alias="maxCharsPerItem", ge=50, le=100_000, description="Each item's text is cut to this many characters."
    )


class SearchArgs(_Args):
    path: str = Field(description=_PATH)
    provider: Provider = Field("auto", description=_PROVIDER)
    query: str = Field(min_length=1, max_length=1_000, description="Case-insensitive substring (no regex, by design).")
    kinds: list[SearchKind] | None = Field(None, description="Only items of these kinds can match (context may be any kind).")
    max_matches: int = Field(25, alias="maxMatches", ge=1, le=1_000, description="At most this many matches.")
    context_items: int = Field(1, alias="contextItems", ge=0, le=20, description="Items shown before and after each match.")
    max_chars_per_match: int = Field(
        2_000, alias="maxCharsPerMatch", ge=50, le=100_000, description="Each match and context item is cut to this."
    )
    max_chars: int = Field(
        24_000, alias="maxChars", ge=100, le=500_000, description="Bound on the result's total size (ours)."
    )


class InspectArgs(_Args):
    path: str = Field(description=_PATH)
    provider: Provider = Field("auto", description=_PROVIDER)


class ListSessionsArgs(_Args):
    cwd: str | None = Field(
        None, description="Only sessions whose working directory is this directory or below it (absolute path)."
    )
    since: str | None = Field(None, description="Only sessions started on or after this: a date (2026-11-30) or 3d, 2w.")
    until: str | None = Field(None, description="Only sessions started before this: a date or 3d, 2w.")
    grep: str | None = Field(
        None, max_length=1_000, description="Only sessions whose title, name, cwd, id or model contains this text."
    )
    limit: int = Field(20, ge=1, le=1_000, description="At most this many sessions, newest first.")
    archived: bool = Field(False, description="Also list archived_sessions/.")
    stats: bool = Field(
        False, description="Add turns, commands, files changed and tests to each row (reads each listed file whole)."
    )
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000, description="Bound on the result's size.")


class AnalyzeArgs(_Args):
    # 200,000 characters is far above a real cell, and bounds a hostile one: the analyzer's tree-sitter path
    # is superlinear on deep nesting (400,000 characters of "(((…)))" took ~50 s when measured).
    script: str = Field(max_length=200_000, description="The JavaScript source of a Codex code-mode exec cell.")
    parser: Literal["tree-sitter", "esprima", "lexer"] = Field(
        "tree-sitter", description="Primary reader; tree-sitter is the default and falls back to the lexer."
    )
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000, description="Bound on the result's size.")


def _clean_schema(node: Any) -> Any:
    """Pydantic's schema, made plain for model-facing clients: no ``title``s, ``Optional[X]`` as X with no
    default (absent means unset), ``$defs`` inlined (some clients do not follow ``$ref``)."""
    return _strip(_inline(node, node.get("$defs", {}) if isinstance(node, dict) else {}))


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**_inline(target, defs), **{k: v for k, v in node.items() if k != "$ref"}}
            return merged
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        node = {k: v for k, v in node.items() if not (k == "title" and isinstance(v, str))}
        any_of = node.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
            (inner,) = [s for s in any_of if s != {"type": "null"}]
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            node = {**inner, **rest}
        return {k: _strip(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema: dict[str, Any] = _clean_schema(model.model_json_schema(by_alias=True))
    return schema


def _parse(model: type[_Args], arguments: Mapping[str, Any] | None) -> Any:
    """Validate arguments; the first problem becomes one ``invalid_argument`` line that names the field and
    never repeats the value given."""
    args = dict(arguments or {})
    if "path" in model.model_fields and (not isinstance(args.get("path"), str) or not args["path"].strip()):
        raise ToolFailure(ErrorCode.PATH_REQUIRED, "path is required: give the transcript file's path")
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, f"{where}: {first.get('msg', 'invalid')}") from None


# --------------------------------------------------------------------------------------------------
# Output schemas (a loose contract: the shape render.py emits, every field documented once there)

_ITEM = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}
_ENVELOPE = {
    "ok": {"type": "boolean", "const": True},
    "path": {"type": "string"},
    "provider": {"type": "string", "const": "codex"},
}
_TRUNCATED = {"type": "boolean", "description": "true when entries were left out to respect the limits"}


def _object(required: Sequence[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


OUTPUT_SCHEMAS: dict[ToolName, dict[str, Any]] = {
    ToolName.READ: _object(
        ["ok", "path", "provider", "format", "projection", "items", "truncated"],
        **_ENVELOPE,
        truncated=_TRUNCATED,
        format={"type": "string"},
        projection={"type": "string"},
        items={"type": "array", "items": _ITEM},
        stats={"type": "object"},
    ),
    ToolName.SEARCH: _object(
        ["ok", "path", "provider", "format", "query", "matches", "truncated"],
        **_ENVELOPE,
        truncated=_TRUNCATED,
        format={"type": "string"},
        query={"type": "string"},
        matches={
            "type": "array",
            "items": _object(
                ["item"],
                item=_ITEM,
                before={"type": "array", "items": _ITEM},
                after={"type": "array", "items": _ITEM},
                excerpt={"type": "string"},
            ),
        },
    ),
    ToolName.INSPECT: _object(
        ["ok", "path", "provider", "format", "info"],
        **_ENVELOPE,
        format={"type": "string"},
        info=_object(["format", "turns", "counts", "tokens", "lines"], format={"type": "string"}),
        truncated=_TRUNCATED,
    ),
    ToolName.LIST_SESSIONS: _object(
        ["ok", "sessions", "truncated"],
        ok=_ENVELOPE["ok"],
        truncated=_TRUNCATED,
        sessions={"type": "array", "items": _object(["path"], path={"type": "string"})},
        outside_allowed_roots={"type": "integer", "description": "sessions left out: symlinks out of the roots"},
    ),
    ToolName.ANALYZE: _object(
        ["ok", "parser", "calls", "entries", "truncated"],
        ok=_ENVELOPE["ok"],
        truncated=_TRUNCATED,
        parser={"type": "string"},
        parse_error={"type": ["object", "null"]},
        calls={"type": "array", "items": _object(["name", "computed"], name={"type": "string"})},
        entries={
            "type": "array",
            "items": _object(["kind", "executed"], kind={"type": "string"}, executed={"type": "string"}),
        },
        findings={"type": "array", "items": {"type": "object"}},
    ),
}


# --------------------------------------------------------------------------------------------------
# Descriptions, written for the model that calls the tools

_EXECUTED = (
    "`executed` on shell_command, stdin_write, patch, test_run and tool_call items: \"yes\" = the transcript "
    "proves it ran (an output or an execution record exists); \"no\" = positive evidence it did not run "
    "(declined, rejected or unsupported call, a code cell that failed to parse, or a dead branch in a cell "
    "whose session records every run); \"unknown\" = the transcript cannot tell (it ends first, or a call "
    "read from a code-mode exec script has no record). `origin`: \"direct\" = a call the model made; "
    "\"script\" = read statically from the JavaScript of a code-mode `exec` cell (it may sit in a branch "
    "that never ran, hence often \"unknown\"); \"record\" = a command or patch Codex recorded as run that no "
    "script call matches (computed commands, loops); \"stream\" = from a `codex exec --json` stream."
)
_ERRORS = (
    "Errors come back as isError results whose text is {\"ok\":false,\"error\":{\"code\",\"message\"}}; codes: "
    "path_required, file_not_found, not_a_file, permission_denied, outside_allowed_roots, too_large, "
    "unsupported_format (not a transcript; its content is never echoed), provider_detection_failed (JSON "
    "records, but no Codex format found), invalid_argument; internal_error only for a bug of ours."
)

DESCRIPTIONS: dict[ToolName, str] = {
    ToolName.READ: (
        "Read one Codex CLI transcript and return a bounded, projected list of what happened: user prompts, "
        "assistant messages (final=true marks each turn's answer), shell commands with cwd, exit code and an "
        "output excerpt, file changes (patches: files, operation, +/- lines), test runs (pytest, npm test, "
        "go test, cargo test… with pass/fail and counts) and other tool calls. Use it to learn what another "
        "agent did without loading the whole file: start with projection \"handoff\" or \"final\"; use "
        "agent_transcript_search_file to find one thing, agent_transcript_inspect_file for metadata only.\n"
        "Projections (the origin's names are accepted): timeline = every visible item; conversation = user "
        "+ assistant messages; final = each turn's final answer; assistant_messages; shell_commands; "
        "file_changes and tool_writes = patches; tests = real test runs only (test_run items, never every "
        "command); tool_reads = tool_calls (MCP, web search, plan updates, image views, sub-agents); "
        "handoff = each turn's final answer + every patch + every shell command + every test run, in order; "
        "raw_outputs = full call outputs (ours).\n"
        "include (true adds, false removes, absent defers to the projection): userMessages -> user_message, "
        "assistantMessages -> assistant_message, toolReads -> tool_call, toolWrites and patches -> patch, "
        "shellCommands -> shell_command + stdin_write, testRuns -> test_run, rawToolOutputs -> raw_output; "
        "ours: reasoning, contextMessages (harness-injected environment, AGENTS.md, skills), notices "
        "(errors, aborted turns, compactions).\n"
        + _EXECUTED
        + "\nLimits: maxItems (default 100), maxChars (24,000: bound on the whole result), maxCharsPerItem "
        "(4,000; a cut item carries truncated_chars); tail=N keeps the last N items. truncated=true means "
        "items were dropped: read again with tail, a narrower projection or include flags, or search.\n"
        + _ERRORS
    ),
    ToolName.SEARCH: (
        "Search one Codex CLI transcript for a case-insensitive substring (as the origin: no regex) and "
        "return the matching items in file order, each with contextItems items before and after and an "
        "excerpt centred on the hit. Use it to find the command, file, error or message that mattered "
        "without reading the transcript. kinds limits which items can match: the origin's kinds "
        "(user_message, assistant_message, tool_read -> tool_call, tool_write -> patch, shell_command, "
        "patch, test_run) or ours (tool_call, stdin_write, reasoning, context, notice, raw_output). "
        "maxMatches (25), contextItems (1), maxCharsPerMatch (2,000), maxChars (24,000 bound on the whole "
        "result); truncated=true means matches were dropped.\n" + _EXECUTED + "\n" + _ERRORS
    ),
    ToolName.INSPECT: (
        "Describe one Codex CLI transcript without its content: format and Codex version, session id, cwd, "
        "model(s), originator, source and parent session (sub-agents), first/last timestamp, duration, turns, "
        "item counts by kind, token usage, code-mode exec-script figures (scripts, calls by tool, executed "
        "yes/no/unknown counts) and line accounting (lines = decoded + known noise + unknown + unreadable + "
        "blank). Use it first to size a transcript or check it is the right session.\n" + _ERRORS
    ),
    ToolName.LIST_SESSIONS: (
        "List Codex sessions recorded under the server's $CODEX_HOME (sessions/YYYY/MM/DD, optionally "
        "archived_sessions), newest first: path, start time, duration, title (session index name or first "
        "prompt), cwd, model, Codex version, size and tokens; sub-agents follow their parent (depth 1). "
        "Filters: cwd (this directory or below), since/until (a date such as 2026-11-30, or 3d, 2w, 12h), "
        "grep (text in the title, name, cwd, id or model; use agent_transcript_search_file for full text), "
        "limit (20), archived, stats (adds turns, commands, files changed, tests: reads each listed file "
        "whole, slower). Use it to find a child agent's transcript, then pass its path to "
        "agent_transcript_read_file.\n" + _ERRORS
    ),
    ToolName.ANALYZE: (
        "Statically analyse the JavaScript of a Codex code-mode `exec` cell without running it: every "
        "tools.NAME(...) call in source order with its decoded argument, and the entries a transcript reader "
        "derives from them (shell commands with cwd, stdin writes, one patch entry naming every file, other "
        "tool calls). Entries read this way always carry executed=\"unknown\": a static reading cannot tell "
        "whether a call in a branch ran. A computed shell-call argument (exec_command, shell_command, shell) "
        "makes the whole script one shell "
        "command (whole_script=true), never a partial list. parse_error is set when the script does not parse "
        "(it then never ran as written). Errors: invalid_argument."
    ),
}

TITLES: dict[ToolName, str] = {
    ToolName.READ: "Read an agent transcript",
    ToolName.SEARCH: "Search an agent transcript",
    ToolName.INSPECT: "Inspect an agent transcript",
    ToolName.LIST_SESSIONS: "List Codex sessions",
    ToolName.ANALYZE: "Analyse a code-mode exec script",
}

ARG_MODELS: dict[ToolName, type[_Args]] = {
    ToolName.READ: ReadArgs,
    ToolName.SEARCH: SearchArgs,
    ToolName.INSPECT: InspectArgs,
    ToolName.LIST_SESSIONS: ListSessionsArgs,
    ToolName.ANALYZE: AnalyzeArgs,
}

ANNOTATIONS = types.ToolAnnotations(
    read_only_hint=True, idempotent_hint=True, destructive_hint=False, open_world_hint=False
)


def tool_definitions() -> list[types.Tool]:
    """The tool list, in a fixed order (the golden snapshot pins it)."""
    return [
        types.Tool(
            name=name.value,
            title=TITLES[name],
            description=DESCRIPTIONS[name],
            input_schema=input_schema(ARG_MODELS[name]),
            output_schema=OUTPUT_SCHEMAS[name],
            annotations=ANNOTATIONS,
        )
        for name in ToolName
    ]


# --------------------------------------------------------------------------------------------------
# Mapping our arguments onto the library's


def read_selection(projection: str, include: IncludeFlags | None) -> tuple[str, list[str], list[str]]:
    """(our projection, kinds to include, kinds to exclude) for an origin projection and include flags.

    A flag's ``false`` beats a projection's additions (``handoff`` with ``testRuns:false`` has no test
    runs); two flags that name the same kind with opposite values are refused (toolWrites vs patches)."""
    ours, added = PROJECTIONS[projection]
    wanted: dict[str, bool] = {}
    if include is not None:
        for alias, kinds in INCLUDE_FLAGS.items():
            value = getattr(include, _FIELD_BY_ALIAS[alias])
            if value is None:
                continue
            for kind in kinds:
                if wanted.get(kind, value) != value:
                    raise ToolFailure(
                        ErrorCode.INVALID_ARGUMENT, f"include: flags disagree about {kind} (toolWrites vs patches)"
                    )
                wanted[kind] = value
    plus = [k for k in added if wanted.get(k, True)] + [k for k, v in wanted.items() if v and k not in added]
    minus = [k for k, v in wanted.items() if not v]
    return ours, plus, minus


_FIELD_BY_ALIAS = {(f.alias or n): n for n, f in IncludeFlags.model_fields.items()}


# --------------------------------------------------------------------------------------------------
# Output bound, enforced on the serialized text


def dumps(payload: Any) -> str:
    return orjson.dumps(payload).decode("utf-8")


def bound_payload(payload: dict[str, Any], key: str, limit: int, *, drop_front: bool) -> tuple[dict[str, Any], str]:
    """Serialize ``payload``; if the text exceeds ``limit``, drop entries of ``payload[key]`` (from the
    front for a tail read, else from the end) until it fits, set ``truncated`` and count what was dropped
    in ``stats`` (``dropped_items``/``returned_items``, ``returned_matches``) or ``dropped``.

    The library already applies ``maxChars`` to item text; this is the final guard at the server boundary
    on the serialized text, so no result outgrows ``maxChars + ENVELOPE_CHARS`` whatever the file or the
    rendering overhead (every item carries its line, timestamp, turn id, kind fields). An envelope that is
    itself too big (a file with thousands of unknown record types) is shrunk first.
    """
    text = dumps(payload)
    if len(text) <= limit:
        return payload, text
    entries = list(payload.get(key) or [])
    sizes = [len(dumps(e)) + 1 for e in entries]
    shell = _with_drop(payload, key, [], len(entries))
    if len(dumps(shell)) > ENVELOPE_CHARS:
        payload = {**shrink_envelope({k: v for k, v in payload.items() if k != key}), key: entries}
        shell = _with_drop(payload, key, [], len(entries))
    budget = limit - len(dumps(shell)) - 16  # the counts' digits differ a little from the shell's
    keep = 0
    order = range(len(entries) - 1, -1, -1) if drop_front else range(len(entries))
    for i in order:
        if sizes[i] > budget:
            break
        budget -= sizes[i]
        keep += 1
    kept = entries[len(entries) - keep :] if drop_front else entries[:keep]
    bounded = _with_drop(payload, key, kept, len(entries) - keep)
    text = dumps(bounded)
    if len(text) > limit:  # still too big: keep the scalars that identify the result, empty lists
        minimal: dict[str, Any] = {
            k: ([] if isinstance(v, list) else v)
            for k, v in shrink_envelope(payload, strings=200).items()
            if not isinstance(v, dict)
        }
        bounded = {**minimal, key: [], "truncated": True, "dropped": len(entries)}
        text = dumps(bounded)
    return bounded, text


def _with_drop(payload: dict[str, Any], key: str, kept: list[Any], dropped: int) -> dict[str, Any]:
    out = {**payload, key: kept, "truncated": True}
    stats = payload.get("stats")
    if isinstance(stats, dict) and key == "items":
        out["stats"] = {**stats, "returned_items": len(kept),
                        "dropped_items": int(stats.get("dropped_items") or 0) + dropped}
    elif isinstance(stats, dict) and key == "matches":
        out["stats"] = {**stats, "returned_matches": len(kept)}
    else:
        out["dropped"] = int(payload.get("dropped") or 0) + dropped
    return out


#: Envelope shrinking: how many entries of a {name: count} table, how many list entries, how long a string.
TOP_ENTRIES = 20
OTHER = "(others)"


def shrink_envelope(value: Any, *, strings: int = 1_000) -> Any:
    """A copy of ``value`` that cannot be large: ``{name: count}`` tables keep their ``TOP_ENTRIES`` biggest
    entries plus ``"(others)"`` with the rest's total (so sums still hold), lists keep ``TOP_ENTRIES``
    entries, strings are cut to ``strings`` characters."""
    if isinstance(value, str):
        return value if len(value) <= strings else value[:strings] + "…"
    if isinstance(value, list):
        return [shrink_envelope(v, strings=strings) for v in value[:TOP_ENTRIES]]
    if isinstance(value, dict):
        if len(value) > TOP_ENTRIES and all(isinstance(v, int) for v in value.values()):
            ranked = sorted(value.items(), key=lambda kv: (-kv[1], kv[0]))
            top = {shrink_envelope(k, strings=100): v for k, v in ranked[:TOP_ENTRIES]}
            top[OTHER] = sum(v for _, v in ranked[TOP_ENTRIES:])
            return top
        return {k: shrink_envelope(v, strings=strings) for k, v in value.items()}
    return value


def cut_strings(item: dict[str, Any], per_item: int) -> int:
    """Cut every string of a rendered item to ``per_item`` characters, counting the cut in
    ``truncated_chars``. The reader budgets each kind's text fields; this also covers the rest (a patch's
    diffs, a cwd, an argv) so one huge field never pushes its whole item out of a result."""
    cut = 0

    def walk(v: Any) -> Any:
        nonlocal cut
        if isinstance(v, str) and len(v) > per_item:
            cut += len(v) - per_item
            return v[:per_item] + "\n[truncated]"
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    for k, v in list(item.items()):
        item[k] = walk(v)
    if cut:
        item["truncated_chars"] = int(item.get("truncated_chars") or 0) + cut
    return cut


# --------------------------------------------------------------------------------------------------
# The tools: plain functions (no MCP types), run in a worker thread


@dataclass(frozen=True, slots=True)
class Answer:
    """A tool's success: the JSON payload and its serialized text (already bounded)."""

    payload: dict[str, Any]
    text: str


def _library_failure(exc: BaseException, path: Path | None, provider: str) -> ToolFailure:
    """Turn what the library raised into a stable code. Messages are the library's reason (the reader's
    errors never quote undecoded content), flattened to one line."""
    if isinstance(exc, TranscriptError):
        code = exc.code
        if code == ErrorCode.UNSUPPORTED_FORMAT:
            if provider == "auto" and path is not None and _looks_like_json_records(path):
                return ToolFailure(
                    ErrorCode.PROVIDER_DETECTION_FAILED,
                    f"{path}: JSON records, but no known Codex format (only Codex transcripts are read)",
                )
            return ToolFailure(code, f"{path}: not a Codex transcript in any known format")
        if code == "decode_error":
            return ToolFailure(ErrorCode.UNSUPPORTED_FORMAT, f"{path}: a line does not decode")
        return ToolFailure(code, f"{exc.path}: {exc.reason}" if exc.path else exc.reason)
    if isinstance(exc, OSError):
        mapping = {
            errno.ENOENT: ErrorCode.FILE_NOT_FOUND,
            errno.EACCES: ErrorCode.PERMISSION_DENIED,
            errno.EPERM: ErrorCode.PERMISSION_DENIED,
            errno.EISDIR: ErrorCode.NOT_A_FILE,
        }
        return ToolFailure(mapping.get(exc.errno or 0, ErrorCode.NOT_A_FILE), f"{path}: {exc.strerror or 'I/O error'}")
    raise exc


def run_read(args: ReadArgs, config: ServerConfig) -> Answer:
    path = check_path(args.path, config)
    from transcript_reader import api, render

    ours, plus, minus = read_selection(args.projection, args.include)
    try:
        result = api.read(
            path,
            projection=ours,
            include=plus,
            exclude=minus,
            tail=args.tail,
            max_items=args.max_items,
            max_chars=args.max_chars,
            max_chars_per_item=args.max_chars_per_item,
        )
    except (TranscriptError, OSError) as exc:
        raise _library_failure(exc, path, args.provider) from None
    payload = render.read_result_to_dict(result)
    payload.update(provider="codex", projection=args.projection)
    if ours != args.projection or plus or minus:
        payload["read_as"] = {"projection": ours, "include": plus, "exclude": minus}
    cut = sum(cut_strings(item, args.max_chars_per_item) for item in payload["items"])
    stats = payload.get("stats")
    if cut and isinstance(stats, dict):  # keep the reader's figures true after the server's own cuts
        stats["truncated_chars"] = int(stats.get("truncated_chars") or 0) + cut
        stats["truncated_items"] = sum(1 for i in payload["items"] if i.get("truncated_chars"))
    bounded, text = bound_payload(payload, "items", args.max_chars + ENVELOPE_CHARS, drop_front=args.tail is not None)
    return Answer(bounded, text)


def run_search(args: SearchArgs, config: ServerConfig) -> Answer:
    path = check_path(args.path, config)
    from transcript_reader import api, render

    kinds = sorted({SEARCH_KINDS[k] for k in args.kinds or ()})
    try:
        result = api.search(
            path,
            args.query,
            regex=False,  # a caller's regex could backtrack for hours while holding the GIL: substring only
            kinds=kinds,
            context=args.context_items,
            max_matches=args.max_matches,
            max_chars_per_match=args.max_chars_per_match,
        )
    except (TranscriptError, OSError) as exc:
        raise _library_failure(exc, path, args.provider) from None
    payload = render.search_result_to_dict(result)
    payload["provider"] = "codex"
    for match in payload["matches"]:
        for item in (match["item"], *match.get("before", ()), *match.get("after", ())):
            cut_strings(item, args.max_chars_per_match)
    bounded, text = bound_payload(payload, "matches", args.max_chars + ENVELOPE_CHARS, drop_front=False)
    return Answer(bounded, text)


def run_inspect(args: InspectArgs, config: ServerConfig) -> Answer:
    path = check_path(args.path, config)
    from transcript_reader import api, render

    try:
        info = api.inspect(path)
    except (TranscriptError, OSError) as exc:
        raise _library_failure(exc, path, args.provider) from None
    payload = render.inspect_to_dict(info)
    payload["provider"] = "codex"
    # "metadata and stats, no content" (peers.md §1.7): the title is the first prompt, so it stays out.
    payload["info"].pop("title", None)
    text = dumps(payload)
    if len(text) > INSPECT_CHARS:  # e.g. thousands of distinct unknown record types
        payload = {**shrink_envelope(payload), "truncated": True}
        text = dumps(payload)
    return Answer(payload, text)


def _when(value: str | None, *, end_of_day: bool) -> Any:
    from datetime import UTC, datetime, timedelta

    from transcript_reader.discovery import parse_when

    if not value:
        return None
    when = parse_when(value, now=datetime.now(UTC))
    if end_of_day and len(value.strip()) == 10:  # a bare date: up to the end of that day, as `ls --until`
        when = when + timedelta(days=1) - timedelta(microseconds=1)
    return when


def run_list_sessions(args: ListSessionsArgs, config: ServerConfig, cache: Any = None) -> Answer:
    from transcript_reader import discovery

    if config.codex_home is None:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, "the server has no $CODEX_HOME to list sessions from")
    try:
        sessions = discovery.list_sessions(
            config.codex_home,
            scope=discovery.Scope.ALL if args.archived else discovery.Scope.LIVE,
            cwd=os.path.normpath(args.cwd) if args.cwd else None,
            since=_when(args.since, end_of_day=False),
            until=_when(args.until, end_of_day=True),
            grep=args.grep,
            limit=args.limit + 1,  # one more than asked tells whether the listing was cut
            cache=cache,
            with_stats=args.stats,
        )
    except TranscriptError as exc:
        raise _library_failure(exc, None, "codex") from None
    rows: list[dict[str, Any]] = []
    top = outside = 0
    roots = config.roots()
    for entry in sessions:
        top += entry.depth == 0
        if top > args.limit:
            break
        # A symlink under sessions/ may point anywhere: list only what the read tools would open.
        real = Path(os.path.realpath(entry.path))
        if not config.allow_any_path and not any(_within(real, root) for root in roots):
            outside += 1
            continue
        rows.append(discovery.entry_to_dict(entry))
    payload: dict[str, Any] = {"ok": True, "codex_home": str(config.codex_home), "sessions": rows,
                               "truncated": top > args.limit}
    if outside:
        payload["outside_allowed_roots"] = outside
    bounded, text = bound_payload(payload, "sessions", args.max_chars + ENVELOPE_CHARS, drop_front=False)
    return Answer(bounded, text)


def run_analyze(args: AnalyzeArgs, config: ServerConfig) -> Answer:
    import exec_grammar
    from exec_grammar.render import analysis_to_json

    try:
        analysis = exec_grammar.analyze(args.script, parser=args.parser)
    except ValueError as exc:  # an unknown parser name reaches here only if the enum and the analyzer disagree
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, str(exc)) from None
    payload = {"ok": True, **analysis_to_json(analysis), "truncated": False}
    limit = args.max_chars + ENVELOPE_CHARS
    text = dumps(payload)
    if len(text) <= limit:
        return Answer(payload, text)
    # Entries (what the script does) outrank calls (how it is written): fit the entries first, then as many
    # calls as still fit.
    entries, _ = bound_payload({**payload, "calls": []}, "entries", limit, drop_front=False)
    merged = {**payload, "entries": entries["entries"], "truncated": True, "dropped": entries.get("dropped", 0)}
    bounded, text = bound_payload(merged, "calls", limit, drop_front=False)
    return Answer(bounded, text)


RUNNERS: dict[ToolName, Callable[[Any, ServerConfig], Answer]] = {
    ToolName.READ: run_read,
    ToolName.SEARCH: run_search,
    ToolName.INSPECT: run_inspect,
    ToolName.LIST_SESSIONS: run_list_sessions,
    ToolName.ANALYZE: run_analyze,
}


def call_tool(name: str, arguments: Mapping[str, Any] | None, config: ServerConfig, stats_cache: Any = None) -> Answer:
    """Run one tool synchronously: the whole behaviour of the server without the protocol (the MCP
    handler calls it in a worker thread). Raises only :class:`ToolFailure` (and our own bugs)."""
    try:
        tool = ToolName(name)
    except ValueError:
        known = ", ".join(t.value for t in ToolName)
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, f"unknown tool {name[:100]!r}; tools: {known}") from None
    args = _parse(ARG_MODELS[tool], arguments)
    if tool is ToolName.LIST_SESSIONS:
        return run_list_sessions(args, config, stats_cache)
    return RUNNERS[tool](args, config)


# --------------------------------------------------------------------------------------------------
# The protocol


def error_result(code: str, message: str) -> types.CallToolResult:
    body = error_to_dict(code, message)
    return types.CallToolResult(content=[types.TextContent(type="text", text=dumps(body))], is_error=True)


def create_server(config: ServerConfig) -> Server[Any]:
    """The MCP server for ``config``: five read-only tools; nothing else (no resources, no prompts)."""
    from transcript_reader.discovery import StatsCache

    tools = tool_definitions()
    stats_cache = StatsCache(None)  # whole-read session figures, kept for the server's life (never on disk)

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(call_tool, params.name, params.arguments, config, stats_cache)
        except ToolFailure as failure:
            return error_result(failure.code, failure.message)
        except Exception:  # the boundary: a bug of ours must not crash the server or leak a traceback
            log.exception("tool %s failed unexpectedly", params.name)
            return error_result(ErrorCode.INTERNAL_ERROR, f"{params.name} failed unexpectedly; see the server log")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)], structured_content=answer.payload
        )

    instructions = (
        "Read what Codex agents did: find a session with agent_transcript_list_sessions, then "
        "agent_transcript_read_file (projection handoff or final), agent_transcript_search_file or "
        "agent_transcript_inspect_file. Results are bounded; truncated=true says something was left out."
    )
    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transcript-reader")
    except PackageNotFoundError:
        return "0"


async def serve_stdio(config: ServerConfig) -> None:
    from mcp.server.stdio import stdio_server

    server = create_server(config)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(config: ServerConfig, port: int, on_ready: Callable[[str], None]) -> None:
    """Streamable HTTP on 127.0.0.1 only (the SDK's DNS-rebinding protection is on for loopback).
    ``port`` 0 picks a free port; ``on_ready`` gets the endpoint URL once the socket listens."""
    import socket

    import uvicorn

    server = create_server(config)
    app = server.streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    on_ready(url)
    await uv.serve(sockets=[sock])


__all__ = [
    "ServerConfig",
    "ToolName",
    "ErrorCode",
    "ToolFailure",
    "check_path",
    "call_tool",
    "create_server",
    "tool_definitions",
    "serve_stdio",
    "serve_http",
]
