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

_PATH = "A file, or a session's id, id prefix or thread name, `last`, `last~N`."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False)


class IncludeFlags(_Args):
    """Per-kind overrides on the projection: true adds the kind, false removes it, absent defers. The
    flags' names say their kinds; their mapping is in the read tool's description."""

    user_messages: bool | None = Field(None, alias="userMessages")
    assistant_messages: bool | None = Field(None, alias="assistantMessages")
    tool_reads: bool | None = Field(None, alias="toolReads")
    tool_writes: bool | None = Field(None, alias="toolWrites")
    shell_commands: bool | None = Field(None, alias="shellCommands")
    patches: bool | None = Field(None)
    test_runs: bool | None = Field(None, alias="testRuns")
    raw_tool_outputs: bool | None = Field(None, alias="rawToolOutputs")
    reasoning: bool | None = Field(None)
    context_messages: bool | None = Field(None, alias="contextMessages")
    notices: bool | None = Field(None)


class ReadArgs(_Args):
    path: str = Field(description=_PATH)
    provider: Provider = Field("auto")
    projection: ProjectionName = Field("handoff")
    include: IncludeFlags | None = Field(None, description="true adds a kind, false removes it.")
    tail: int | None = Field(None, ge=1, le=10_000, description="Only the last N items.")
    max_items: int = Field(100, alias="maxItems", ge=1, le=10_000)
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000)
    max_chars_per_item: int = Field(4_000, alias="maxCharsPerItem", ge=50, le=100_000)


class SearchArgs(_Args):
    path: str = Field(description=_PATH)
    provider: Provider = Field("auto")
    query: str = Field(min_length=1, max_length=1_000, description="Case-insensitive substring (no regex).")
    kinds: list[SearchKind] | None = Field(None)
    max_matches: int = Field(25, alias="maxMatches", ge=1, le=1_000)
    context_items: int = Field(1, alias="contextItems", ge=0, le=20)
    max_chars_per_match: int = Field(2_000, alias="maxCharsPerMatch", ge=50, le=100_000)
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000)


class InspectArgs(_Args):
    path: str = Field(description=_PATH)
    provider: Provider = Field("auto")


class ListSessionsArgs(_Args):
    cwd: str | None = Field(None, description="Only sessions in this directory or below.")
    since: str | None = Field(None, description="2026-11-30, 3d, 2w, 12h.")
    until: str | None = Field(None, description="As since.")
    grep: str | None = Field(None, max_length=1_000, description="Text in the title, name, cwd, id or model.")
    text: str | None = Field(None, min_length=1, max_length=1_000)
    limit: int = Field(20, ge=1, le=1_000)
    cursor: str | None = Field(None, max_length=200, description="next_cursor of the previous page.")
    archived: bool = Field(False)
    provider: Literal["all", "codex", "claude"] = Field("all")
    stats: bool = Field(False, description="Add turns, commands, files, tests (reads each file whole).")
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000)


class UsageArgs(_Args):
    path: str | None = Field(None)
    cwd: str | None = Field(None)
    by: Literal["day", "week", "month", "session", "model", "project"] = Field("model")
    since: str | None = Field(None)
    until: str | None = Field(None)


class AnalyzeArgs(_Args):
    # MAX_SCRIPT_CHARS (200,000) is far above a real cell; a longer one is too_large (checked by the tool so
    # that it gets that code, not invalid_argument). The analysis runs in process within the call's time
    # budget, in a killable worker process only past it: a hostile script costs a timeout, never the server.
    script: str = Field(description="At most 200,000 characters.")
    parser: Literal["tree-sitter", "esprima", "lexer"] = Field("tree-sitter")
    max_chars: int = Field(24_000, alias="maxChars", ge=100, le=500_000)


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
            node = {k: v for k, v in {**inner, **rest}.items() if not (k == "title" and isinstance(v, str))}
        # extra arguments are refused by the models (``extra="forbid"``); saying so in every schema
        # only lengthened the tool list every agent reads
        if node.get("additionalProperties") is False:
            node.pop("additionalProperties")
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
    required = "path" in model.model_fields and model.model_fields["path"].is_required()
    if required and (not isinstance(args.get("path"), str) or not args["path"].strip()):
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
    ToolName.USAGE: UsageArgs,
}
