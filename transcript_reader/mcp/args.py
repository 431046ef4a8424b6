"""The tools' arguments: the origin's names, ranges and defaults (peers.md §1.1, §1.5) plus ours, as
pydantic models; their JSON schemas are what ``tools/list`` shows (:mod:`.catalog`), and :func:`parse`
turns the first problem into one ``invalid_argument`` line that never repeats the value given.

Also the mapping of the origin's projections and include flags onto our projections and kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from transcript_reader.mcp.names import ErrorCode, ToolFailure, ToolName

Provider = Literal["auto", "codex", "claude"]

#: Origin projection -> (our projection, kinds added on top). ``handoff`` is ours exactly: the prompts,
#: each turn's final answer, every patch, shell command and test run (the origin made it = timeline); the
#: server reads it shape first and, when it must cut, keeps the newest items (:mod:`.budget`).
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
    "handoff": ("final", ("user_message", "patch", "shell_command", "test_run")),
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

_PATH = "The transcript: an absolute path (a Codex rollout .jsonl/.jsonl.zst, a 0.1.x .json, or a " \
    "`codex exec --json` stream) under $CODEX_HOME or a root the server was started with; or a session of " \
    "$CODEX_HOME named by its id, a unique id prefix (4+ characters), its rollout file name, its thread " \
    "name, `last` (the newest) or `last~N` (N before the newest)."
_PROVIDER = ("Transcript provider: auto (detect), codex or claude (Claude Code). An explicit provider that is "
             "not the file's is refused (provider_mismatch).")


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
    projection: ProjectionName = Field("handoff", description="Which items to return (default handoff); see the tool description.")
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
    limit: int = Field(20, ge=1, le=1_000, description="At most this many sessions per page, newest first.")
    cursor: str | None = Field(
        None, max_length=200, description="next_cursor of the previous page: the page after it."
    )
    archived: bool = Field(False, description="Also list archived_sessions/.")
    provider: Literal["all", "codex", "claude"] = Field(
        "all", description="Whose sessions: all (Codex and Claude Code), codex ($CODEX_HOME) or claude "
        "(Claude Code's projects/)."
    )
    stats: bool = Field(
        False, description="Add turns, commands, files changed and tests to each row (reads each listed file whole)."
    )
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000, description="Bound on the result's size.")


class AnalyzeArgs(_Args):
    # MAX_SCRIPT_CHARS (200,000) is far above a real cell; a longer one is too_large (checked by the tool so
    # that it gets that code, not invalid_argument). The analysis runs in a worker process within the call's
    # time budget: a hostile script costs a timeout, never the server.
    script: str = Field(description="The JavaScript source of a Codex code-mode exec cell (200,000 characters at most).")
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


def parse(model: type[_Args], arguments: Mapping[str, Any] | None) -> Any:
    """Validate arguments; the first problem becomes one ``invalid_argument`` line that names the field and
    never repeats the value given."""
    args = dict(arguments or {})
    if "path" in model.model_fields and (not isinstance(args.get("path"), str) or not args["path"].strip()):
        raise ToolFailure(ErrorCode.PATH_REQUIRED, "path is required: give a transcript path or a session id")
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, f"{where}: {first.get('msg', 'invalid')}") from None





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




ARG_MODELS: dict[ToolName, type[_Args]] = {
    ToolName.READ: ReadArgs,
    ToolName.SEARCH: SearchArgs,
    ToolName.INSPECT: InspectArgs,
    ToolName.LIST_SESSIONS: ListSessionsArgs,
    ToolName.ANALYZE: AnalyzeArgs,
}
