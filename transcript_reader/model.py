"""The timeline model: what a Codex transcript becomes, independent of the era that wrote it.

Every item is a frozen, slotted dataclass. ``line`` is the 1-based source line the item came from (for
the TypeScript CLI's single JSON document: the 1-based index of the item in ``items``); ``timestamp`` is
ISO-8601 UTC when the transcript recorded one; ``turn_id`` is Codex's turn id when written, else a
synthetic ``turn-N`` counter.

``executed`` contract (a wrong ``yes`` or ``no`` is worse than ``unknown``):
- direct calls: ``yes`` when an output or a record exists, ``no`` when Codex declined or rejected them
  (or their turn completed without any output or record: Codex ignored the call), ``unknown`` when the
  transcript ends first;
- entries read from an ``exec`` cell's script (``origin == "script"``): ``unknown`` unless the cell's
  own records prove it (``yes``: a CommandExecution/FileChange record of the cell matches) or positive
  evidence says it did not run (``no``: the cell failed to parse, the call was rejected/unsupported, or
  the session provably writes records and the cell finished, and its turn ended, without one for this
  entry);
- ``origin == "record"``: a command/patch Codex recorded as run that no script entry matches.

``evidence`` (script entries) names the rule behind an ``executed`` that no record of the call settled:
``"proof"`` is ``yes`` by the proof of execution (the call lies on the unconditional path of a cell whose
output says it completed, in a session that writes no per-call records: Codex 0.144-0.149); its exit code
stays unknown. ``None`` when records, outputs or the cell's own status settled it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, TypeVar


class Kind(StrEnum):
    USER_MESSAGE = "user_message"
    CONTEXT = "context"
    ASSISTANT_MESSAGE = "assistant_message"
    REASONING = "reasoning"
    SHELL_COMMAND = "shell_command"
    STDIN_WRITE = "stdin_write"
    PATCH = "patch"
    TEST_RUN = "test_run"
    TOOL_CALL = "tool_call"
    RAW_OUTPUT = "raw_output"
    NOTICE = "notice"
    UNREADABLE = "unreadable"


#: Kinds hidden unless asked for (``--include``).
HIDDEN_BY_DEFAULT: frozenset[Kind] = frozenset({Kind.CONTEXT, Kind.REASONING, Kind.RAW_OUTPUT})


class Executed(StrEnum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


class Evidence(StrEnum):
    """What settled an ``executed`` that no record or output of the call did (``None``: they did)."""
    PROOF = "proof"  # the proof of execution: on a completed cell's unconditional path (exec_grammar)


class Origin(StrEnum):
    DIRECT = "direct"  # a top-level call Codex made (function_call, custom_tool_call, local_shell_call…)
    SCRIPT = "script"  # read from an exec cell's JavaScript source
    RECORD = "record"  # an item_completed record of a cell that no script entry matches
    STREAM = "stream"  # an item of a `codex exec --json` stream


class Format(StrEnum):
    ROLLOUT = "rollout"  # {timestamp, type, payload} envelope, 0.40+
    EARLY_RUST = "early-rust"  # bare session line, record_type state lines, bare items (0.20, 0.29)
    TS_JSON = "ts-json"  # the TypeScript CLI's single {session, items} document (0.1.x)
    EXEC_JSON = "exec-json"  # `codex exec --json`: thread.started / turn.* / item.* (0.50+)
    EXEC_PROTOCOL = "exec-protocol"  # the older `{id, msg}` protocol event stream
    CLAUDE = "claude-code"  # a Claude Code session file (~/.claude/projects/<slug>/<session>.jsonl)
    CLAUDE_STREAM = "claude-stream-json"  # `claude -p --output-format stream-json --verbose` output


class TestResult(StrEnum):
    __test__ = False  # not a pytest class
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Item:
    """What every timeline item has: its line, timestamp and turn, and how much of its text a limit cut."""

    kind: ClassVar[Kind]
    line: int
    timestamp: str | None = None
    turn_id: str | None = None
    truncated_chars: int = 0  # characters cut from this item's text fields to fit a limit


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UserMessage(Item):
    """A prompt: what a person typed (and the images they attached)."""

    kind: ClassVar[Kind] = Kind.USER_MESSAGE
    text: str
    images: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ContextMessage(Item):
    """Harness-injected context: environment_context, AGENTS.md, skills, developer/system messages."""

    kind: ClassVar[Kind] = Kind.CONTEXT
    role: str
    label: str  # e.g. environment_context, agents_md, user_instructions, developer, skill, turn_aborted
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AssistantMessage(Item):
    """The model's message; ``final`` when it is its turn's answer."""

    kind: ClassVar[Kind] = Kind.ASSISTANT_MESSAGE
    text: str
    final: bool = False
    refusal: bool = False
    phase: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Reasoning(Item):
    """The model's reasoning summary."""

    kind: ClassVar[Kind] = Kind.REASONING
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ShellCommand(Item):
    """A shell command. ``command`` is the command as a person would type it (the inner command of an
    argv such as ``["bash","-lc","ls"]``); ``argv`` keeps the argv when one was recorded. ``output`` is
    an excerpt (``output_chars`` is the full length); the full text is a ``RawOutput`` item."""

    kind: ClassVar[Kind] = Kind.SHELL_COMMAND
    command: str
    argv: tuple[str, ...] | None = None
    cwd: str | None = None
    exit_code: int | None = None
    output: str | None = None
    output_chars: int = 0
    duration_s: float | None = None
    tool: str = "shell"  # shell, shell_command, exec_command, local_shell, exec
    call_id: str | None = None
    origin: Origin = Origin.DIRECT
    executed: Executed = Executed.UNKNOWN
    evidence: Evidence | None = None  # what settled ``executed`` when no record did
    status: str | None = None  # completed, failed, declined, running, rejected…
    script_order: int | None = None  # position among the cell's entries (origin script/record)
    whole_script: bool = False
    session_id: str | None = None  # unified exec: a process still running


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class StdinWrite(Item):
    """Characters written to the stdin of a command that keeps running (``write_stdin``)."""

    kind: ClassVar[Kind] = Kind.STDIN_WRITE
    session_id: str | None = None
    chars: str = ""
    output: str | None = None
    exit_code: int | None = None
    call_id: str | None = None
    origin: Origin = Origin.DIRECT
    executed: Executed = Executed.UNKNOWN
    script_order: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class FileChange:
    """One file a patch touched: how, and how many lines it added and removed."""

    path: str
    op: str  # add, update, delete
    move_to: str | None = None
    added: int | None = 0  # None: unknown (an exec stream's file change carries no diff), never a 0
    removed: int | None = 0
    diff: str | None = None  # unified diff or patch hunk text when recorded


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PatchItem(Item):
    """A patch (``apply_patch``): the files it changed, and whether it applied."""

    kind: ClassVar[Kind] = Kind.PATCH
    files: tuple[FileChange, ...]
    success: bool | None = None
    error: str | None = None
    unresolved_paths: int = 0
    tool: str = "apply_patch"
    call_id: str | None = None
    origin: Origin = Origin.DIRECT
    executed: Executed = Executed.UNKNOWN
    evidence: Evidence | None = None  # what settled ``executed`` when no record did
    script_order: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class TestRun(Item):
    """A test run read from a shell command and its output: the framework, the result, the counts."""

    __test__ = False
    kind: ClassVar[Kind] = Kind.TEST_RUN
    framework: str
    command: str
    result: TestResult = TestResult.UNKNOWN
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    exit_code: int | None = None
    call_id: str | None = None
    origin: Origin = Origin.DIRECT
    executed: Executed = Executed.UNKNOWN
    evidence: Evidence | None = None  # what settled ``executed`` when no record did


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ToolCallItem(Item):
    """MCP tools, web search, plan updates, image views, sub-agents, and any other named tool."""

    kind: ClassVar[Kind] = Kind.TOOL_CALL
    name: str
    arguments: str = ""  # excerpt
    result: str | None = None  # excerpt
    success: bool | None = None
    call_id: str | None = None
    origin: Origin = Origin.DIRECT
    executed: Executed = Executed.UNKNOWN
    evidence: Evidence | None = None  # what settled ``executed`` when no record did
    script_order: int | None = None
    #: the whole JavaScript source of an ``exec`` cell (``arguments`` is only an excerpt); a library-level
    #: field for callers that analyse cells (census, ``show --scripts``), left out of the JSON rendering
    script: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RawOutput(Item):
    """A call's full output text (hidden by default)."""

    kind: ClassVar[Kind] = Kind.RAW_OUTPUT
    call_id: str | None
    tool: str | None = None
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Notice(Item):
    """Something the reader or Codex says about the session (a compaction, an abort, a rollback, …)."""

    kind: ClassVar[Kind] = Kind.NOTICE
    category: str  # error, turn_aborted, compaction, rollback, review, stream_error, …
    message: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Unreadable(Item):
    """A line that could not be read, with the reason."""

    kind: ClassVar[Kind] = Kind.UNREADABLE
    reason: str


_T = TypeVar("_T")


def field_repr(self: object) -> str:
    """``Name(field=value, …)``, the repr ``dataclasses`` generates. The classes of the model, the decode
    records and the assembly state share this one (they are declared ``repr=False``): a repr generated
    and compiled for each class was about half the cost of defining them, which every run of the CLI
    pays at start-up."""
    fields = dataclasses.fields(self)  # type: ignore[arg-type]
    return f"{type(self).__qualname__}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in fields if f.repr)})"


def use_field_repr(namespace: dict[str, object]) -> None:
    """Give every dataclass a module defines (``namespace``: its globals) :func:`field_repr`."""
    for obj in list(namespace.values()):
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == namespace["__name__"]:
            setattr(obj, "__repr__", field_repr)  # noqa: B010 - mypy refuses a direct method assignment


def _fast_frozen_init(cls: type[_T]) -> type[_T]:
    """Give a frozen, slotted dataclass an ``__init__`` that stores each field through its slot's own
    descriptor (``Cls.field.__set__``, bound once) instead of ``object.__setattr__`` looked up and called
    generically per field, as ``dataclasses`` writes it. Same signature, defaults and result; the class
    stays frozen (its ``__setattr__`` still refuses). Why: a reader builds one or more of these per
    transcript line, and the generic frozen ``__init__`` (~0.1 µs a field) was ~4% of reading a long
    rollout (corpus_tools.bench_reader); this one is ~1/3 faster. Only for classes whose fields all have
    plain defaults or none, and are all keyword-only or all positional (checked here)."""
    fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    kw_only = {f.kw_only for f in fields}
    if len(kw_only) != 1 or hasattr(cls, "__post_init__") or any(
            f.default_factory is not dataclasses.MISSING for f in fields):
        raise TypeError(f"{cls.__name__}: not a class _fast_frozen_init handles")
    env: dict[str, object] = {}
    params = []
    for f in fields:
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    star = "*, " if kw_only == {True} else ""
    src = f"def __init__(self, {star}{', '.join(params)}):\n" + "".join(
        f"    _set_{f.name}(self, {f.name})\n" for f in fields)
    exec(src, env)  # noqa: S102 - generated from the field list, as dataclasses itself does
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses a direct method assignment
    return cls


# the classes built for every line or patch file (not the per-session figures)
for _cls in (UserMessage, ContextMessage, AssistantMessage, Reasoning, ShellCommand, StdinWrite, PatchItem,
             TestRun, ToolCallItem, RawOutput, Notice, Unreadable, FileChange):
    _fast_frozen_init(_cls)
del _cls


AnyItem = (
    UserMessage
    | ContextMessage
    | AssistantMessage
    | Reasoning
    | ShellCommand
    | StdinWrite
    | PatchItem
    | TestRun
    | ToolCallItem
    | RawOutput
    | Notice
    | Unreadable
)


@dataclass(frozen=True, slots=True, repr=False)
class TokenUsage:
    """Token figures of one call or a sum of calls (:mod:`transcript_reader.usage` sums them). ``input`` includes
    ``cached_input`` (cache reads) and ``cache_write`` (prompt-cache writes, of which ``cache_write_1h`` at the
    1-hour TTL); ``output`` includes ``reasoning``; ``total`` = ``input + output``. Parts are priced apart."""

    input: int = 0
    cached_input: int = 0
    output: int = 0
    reasoning: int = 0
    total: int = 0
    source: str = "unknown"  # how the figure was read (transcript_reader.usage names the sources)
    cache_write: int = 0
    cache_write_1h: int = 0


@dataclass(frozen=True, slots=True, repr=False)
class UsageRow:
    """The usage of one session spent by one model on one day (UTC) at one service tier: the unit the
    usage report sums and prices. ``model`` None: the session never named its model."""

    model: str | None
    day: str | None  # YYYY-MM-DD (UTC) of the calls; None when their lines carry no timestamp
    tier: str | None  # the service tier the transcript says ran (None: not said, the default tier)
    calls: int
    tokens: TokenUsage
    bands: tuple[tuple[int, int, TokenUsage], ...] | None = None  # usage.accounting.PROMPT_EDGES (rule 9)


@dataclass(frozen=True, slots=True, repr=False)
class LineAccounting:
    """``lines == decoded + known_noise + unknown + unreadable + blank`` always holds."""

    lines: int = 0
    decoded: int = 0
    known_noise: int = 0
    unknown: int = 0
    unreadable: int = 0
    blank: int = 0
    unknown_types: tuple[tuple[str, int], ...] = ()  # (type name, count)
    noise_types: tuple[tuple[str, int], ...] = ()
    cut_last_line: int | None = None  # the last line, cut mid-write (counted under unreadable)


@dataclass(frozen=True, slots=True, repr=False)
class ScriptStats:
    """Figures of the code-mode scripts of a session."""

    scripts: int = 0
    calls_by_tool: tuple[tuple[str, int], ...] = ()
    by_parser: tuple[tuple[str, int], ...] = ()
    executed: tuple[tuple[str, int], ...] = ()  # yes/no/unknown counts over script entries
    unresolved_patch_paths: int = 0
    whole_script_commands: int = 0


@dataclass(frozen=True, slots=True, repr=False)
class SessionInfo:
    """Inspect: metadata and stats, no content."""

    path: str
    format: Format
    version: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    models: tuple[str, ...] = ()
    originator: str | None = None
    source: str | None = None
    parent_session_id: str | None = None
    forked_from_id: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    duration_s: float | None = None
    turns: int = 0
    counts: tuple[tuple[str, int], ...] = ()  # items by kind
    tokens: TokenUsage | None = None  # None: the file records no usage (never a 0 it does not claim)
    usage: tuple[UsageRow, ...] = ()  # the same usage by model, day and tier
    scripts: ScriptStats = field(default_factory=ScriptStats)
    lines: LineAccounting = field(default_factory=LineAccounting)
    run_status: str | None = None  # exec streams: completed, failed, no_report, incomplete
    run_error: str | None = None
    title: str | None = None  # first real user prompt


@dataclass(frozen=True, slots=True, repr=False)
class ReadResult:
    """The items a projection selected, with limits applied, and the session's figures."""

    path: str
    format: Format
    projection: str
    items: tuple[AnyItem, ...]
    truncated: bool = False
    dropped_items: int | None = 0  # None: not counted (a tail read that did not read the whole file)
    info: SessionInfo | None = None
    total_items: int | None = 0  # items the projection selected before tail/max_items/max_chars (None: not counted)
    truncated_chars: int = 0  # characters cut from items by max_chars_per_item


@dataclass(frozen=True, slots=True, repr=False)
class SearchMatch:
    """One item that matched a search, with the items around it and an excerpt."""

    item: AnyItem
    before: tuple[AnyItem, ...]
    after: tuple[AnyItem, ...]
    excerpt: str


@dataclass(frozen=True, slots=True, repr=False)
class SearchResult:
    """The matches of a search in one transcript."""

    path: str
    format: Format
    query: str
    matches: tuple[SearchMatch, ...]
    truncated: bool = False
    total_matches: int = 0


use_field_repr(globals())
