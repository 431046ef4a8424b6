"""Decode-level records: what one transcript line says, in neutral terms, before pairing.

Decoders (the only code that reads raw transcript keys) turn each line into zero or more of these; the
assembly layer (``transcript_reader.assembly``) pairs calls with outputs, de-duplicates messages,
decides final answers and code-mode evidence, and produces the timeline items of ``model.py``. Keeping
this seam means every era's decoder is a small pure function and the pairing rules exist once.
"""

from __future__ import annotations

from dataclasses import dataclass

from transcript_reader.model import FileChange, Origin, TokenUsage, use_field_repr

# Line classes for the accounting (LineAccounting): every line gets exactly one.
DECODED = "decoded"
NOISE = "noise"
UNKNOWN = "unknown"
UNREADABLE = "unreadable"
BLANK = "blank"
#: Not a line: records a stream decoder gives at the end of its stream (counted in no line class).
FLUSH = "flush"

#: The command of a shell call or record whose command text is not in the transcript (its arguments were
#: redacted or stripped, or are not JSON): the item stays a shell command, with this in its place.
UNKNOWN_COMMAND = "[command unknown: not recorded in a readable form]"


@dataclass(slots=True, repr=False)
class Meta:
    """A session's header: ids, cwd, versions, source, where its history comes from."""

    session_id: str | None = None
    cwd: str | None = None
    originator: str | None = None
    version: str | None = None
    source: str | None = None
    parent_session_id: str | None = None
    forked_from_id: str | None = None
    timestamp: str | None = None
    model: str | None = None
    agent_nickname: str | None = None
    # ``history_base`` (Codex 0.154+ paginated history): this file continues the history of the rollout
    # ``history_thread`` (its own id: a segment written after a rewind; another id: the parent of a
    # fork) up to, not including, that rollout's ``history_end_ordinal`` / ``history_end_offset``
    history_thread: str | None = None
    history_end_ordinal: int | None = None
    history_end_offset: int | None = None
    history_mode: str | None = None  # "paginated": segments may continue this file after a rewind


@dataclass(slots=True, repr=False)
class TurnContext:
    """A turn's context line: its model, cwd and turn id."""

    model: str | None = None
    cwd: str | None = None
    turn_id: str | None = None
    tier: str | None = None  # the service tier the turn asked for (Codex ``service_tier``), when written


@dataclass(slots=True, repr=False)
class TurnStart:
    """A turn begins. ``last_item_answers`` names the turn's final-answer rule (assembly's
    ``Turns.answer``): False, a rollout's (the message ``task_complete`` names, or a ``final_answer``
    phase); True, ``codex exec --json``'s (the turn's last item, when it is an assistant message and the
    turn completed: a message any other item follows is commentary)."""

    turn_id: str | None = None
    last_item_answers: bool = False


@dataclass(slots=True, repr=False)
class TurnEnd:
    """A turn ends. ``completed`` False: it ended without completing (``turn.failed``, a new turn
    before it completed, the stream stopped), so it has no answer."""

    turn_id: str | None = None
    last_agent_message: str | None = None
    has_last_agent_message: bool = False
    completed: bool = True
    last_item_answers: bool = False


@dataclass(slots=True, repr=False)
class Rollback:
    """``thread_rolled_back``: the last ``num_turns`` turns of the thread so far were rewound away."""

    num_turns: int | None = None


@dataclass(slots=True, repr=False)
class TurnAborted:
    """A turn that was aborted, and why."""

    turn_id: str | None = None
    reason: str = "aborted"


@dataclass(slots=True, repr=False)
class Message:
    """A user/assistant/developer/system message. ``src`` names which copy this is (event_msg,
    response_item or item_completed) so the assembler can drop Codex's second copy."""

    role: str
    text: str
    src: str
    images: tuple[str, ...] = ()
    phase: str | None = None
    refusal: bool = False
    context_label: str | None = None  # set when this is harness-injected context


@dataclass(slots=True, repr=False)
class ReasoningRec:
    """Reasoning text, and which copy it is (``src``)."""

    text: str
    src: str


@dataclass(slots=True, repr=False)
class Call:
    """A call the model made. ``kind``: shell, patch, stdin, cell (a code-mode exec cell), tool."""

    kind: str
    tool: str
    call_id: str | None = None
    command: str = ""
    argv: tuple[str, ...] | None = None
    cwd: str | None = None
    patch_text: str | None = None
    session_id: str | None = None
    chars: str = ""
    name: str = ""
    arguments: str = ""
    status: str | None = None
    result: str | None = None  # a call that is complete on its own line (web_search_call)
    success: bool | None = None
    cell_id: str | None = None  # `wait` calls name the cell they wait for
    script: str | None = None
    #: ``Origin.STREAM``: an item of a ``codex exec --json`` stream. Its events are the whole call (no
    #: output item follows): its end record settles it, a later event with its id moves it to that line
    origin: Origin = Origin.DIRECT
    #: the call's end, when one line gives both (a stream item's completion)
    end: ExecEnd | PatchEnd | ToolEnd | None = None


@dataclass(slots=True, repr=False)
class Output:
    """A call's output (function_call_output, custom_tool_call_output, …) as plain text."""

    call_id: str | None
    text: str
    success: bool | None = None
    #: the provider read a refusal (a denied permission, a call the harness rejected): the call did not
    #: run, whatever the text says (Claude Code's denials do not match Codex's rejection wording)
    declined: bool = False


@dataclass(slots=True, repr=False)
class ExecEnd:
    """A command's completion: ``exec_command_end`` (record False) or an ``item_completed``
    CommandExecution (record True)."""

    call_id: str | None
    command: str
    argv: tuple[str, ...] | None
    cwd: str | None
    exit_code: int | None
    output: str | None
    duration_s: float | None
    status: str | None
    record: bool


@dataclass(slots=True, repr=False)
class PatchEnd:
    """The completion record of a patch: its files, success and output."""

    call_id: str | None
    files: tuple[FileChange, ...]
    success: bool | None
    output: str | None
    record: bool
    # completed, failed, declined (declined: the patch was not applied), in_progress (a stream's item)
    status: str | None = None


@dataclass(slots=True, repr=False)
class ToolEnd:
    """A tool call's completion: ``mcp_tool_call_end`` and kin, or (``record`` True) an ``item_completed``
    McpToolCall / DynamicToolCall / ImageView record, which a code-mode cell writes for the tools its
    script called."""

    call_id: str | None
    name: str
    arguments: str = ""
    result: str | None = None
    success: bool | None = None
    record: bool = False
    status: str | None = None  # a stream's item status (completed, failed, in_progress)


@dataclass(slots=True, repr=False)
class NoticeRec:
    """A notice. ``item``: the notice is an item of its turn (an exec stream's ``error`` item), not a
    report about the stream (a top-level ``error`` event)."""

    category: str
    message: str
    item: bool = False


@dataclass(slots=True, repr=False)
class Tokens:
    """A token figure its producer already summed over the whole session (an exec stream's summary)."""

    usage: TokenUsage


@dataclass(slots=True, repr=False)
class UsageEvent:
    """One usage figure as its line carries it, not yet accounted (:mod:`transcript_reader.usage` owns
    the rule): ``call``, the usage of the model call the line reports (None: the line gives only a
    running total); ``running``, the running total of the session the line carries (Codex's
    ``total_token_usage``); ``key``, an id a copy of the same call repeats (Claude Code writes one API
    message over several lines); ``model``/``tier``, the model and service tier the line itself names."""

    call: TokenUsage | None
    running: TokenUsage | None = None
    key: str | None = None
    model: str | None = None
    tier: str | None = None


@dataclass(slots=True, repr=False)
class RunReport:
    """What a ``codex exec`` run reports about itself: how it ended, why it failed, how many turns."""

    status: str
    error: str | None
    turns: int


Record = (
    Meta | TurnContext | TurnStart | TurnEnd | TurnAborted | Message | ReasoningRec | Call | Output | ExecEnd
    | PatchEnd | ToolEnd | NoticeRec | Tokens | UsageEvent | RunReport | Rollback
)


@dataclass(slots=True, repr=False)
class Decoded:
    """One line's decoding: its accounting class, the type name it counts under, and its records."""

    line: int
    cls: str
    type_name: str | None = None
    records: tuple[Record, ...] = ()
    timestamp: str | None = None
    reason: str | None = None  # for unreadable lines
    cut: bool = False  # the last line, cut mid-write
    #: the lines this entry stands for: a run of blank lines is one entry (a file of millions of empty
    #: lines costs one entry a buffer, not one a line); every other entry is one line
    count: int = 1
    #: the line's place in its session's record numbering (a rollout's ``ordinal``, Codex 0.148+), and
    #: the thread and turn ids it names (read only on a numbered line): what tells two sessions
    #: interleaved in one file apart (``codex.numbering``)
    ordinal: int | None = None
    thread: str | None = None
    turn: str | None = None
    #: the id of another session this line belongs to (its numbering started again in this file): the
    #: line is counted, never read into this session
    other: str | None = None


use_field_repr(globals())
