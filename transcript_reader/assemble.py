"""Assembly: decode records -> timeline items. The one place where the pairing rules live.

What happens here, and why it is not in a decoder:
- **Pairing.** A call is paired with its output by ``call_id``. Its exit code comes from, in order of
  authority, a completion record (``exec_command_end`` / ``item_completed`` CommandExecution), then the
  output text (the JSON ``metadata.exit_code`` envelope, ``Exit code: N``, ``Process exited with code N``).
  Items stay in source order: a call's item waits in an ordered queue until its output arrives, and
  everything after it waits behind it (bounded: see ``MAX_PENDING``).
- **Commands that keep running** (unified exec: the output says ``Process running with session ID N``)
  are not settled by that output. The item keeps its place and waits for the call's end event /
  CommandExecution record (authoritative: exit code, status, whole output, test result); chunks that
  ``write_stdin`` calls on that session return are gathered (bounded, ``RUNNING_OUTPUT_CHARS``), and an
  exit one of them reports (``Process exited with code N``) is the command's exit code when no end
  event came by the time its turn is over (next turn, end of file). Still running then: status
  ``running``, exit unknown. The running table (``sessions``) drops an entry when its call settles.
- **De-duplication.** Codex writes many messages twice (``event_msg`` and ``response_item``, or
  ``item_completed`` and ``response_item``). A message is dropped only when an earlier message from a
  *different* copy has every field equal (role, text, images, phase, refusal, context label; for items
  that carry them, ``executed`` and ``origin`` too), so two genuine identical messages both stay.
- **Final answers.** ``phase: final_answer`` is final; ``task_complete.last_agent_message`` marks the last
  assistant message of its turn (a refusal that is the last assistant message of a completed turn is its
  answer, whatever text task_complete names); eras without turn events (0.40-0.80, early Rust, TS CLI)
  take the last assistant message before the next person's message or the end of the file. An aborted turn, or a turn
  that started (``task_started``) but never completed, has no final answer (fail closed).
- **Code mode** (``exec`` cells). The script is read with ``exec_grammar.analyze``; its entries carry
  ``origin: "script"``. The ``executed`` contract (a wrong yes/no is worse than unknown):

  * ``yes``: the entry matches an ``item_completed`` CommandExecution / FileChange record written between
    the cell's call and its output (same command after unwrapping ``bash -lc``; same files); it takes the
    record's exit code, output and cwd. A tool call entry is ``yes`` when an McpToolCall /
    DynamicToolCall / ImageView record of the cell names its tool; it takes the record's result and
    success (QA F10).
  * a record that matches no entry (a computed command, a loop) becomes its own item with
    ``origin: "record"`` and ``executed: "yes"``.
  * ``no``: the cell failed to parse and failed, or its call was rejected/unsupported, or the session
    provably writes records (a record was already seen, or cli_version >= 0.150) and the cell finished
    (completed/failed) without one for this shell command or patch (a dead branch, or a call after the
    throw). Whole-script fallback commands are never ``no`` on that ground. Without records (0.144),
    a patch entry is ``no`` when the cell failed with an ``apply_patch verification failed`` error naming
    one of its files and it is the script's only apply_patch call (its call was rejected).
  * otherwise ``unknown``.

  Direct calls: ``yes`` when an output or a record exists, ``no`` when Codex declined or rejected them
  (``unsupported call``, ``rejected``, status ``declined``) or when their turn completed
  (``task_complete``) without any output or record for them, in a session written by a released Codex
  (cli_version) or showing outputs (Codex ignored the call), ``unknown`` when the transcript ends first.
- **Test runs.** Every shell command is offered to ``testruns.detect_test_run``; a hit is a ``test_run``
  item right after the command.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exec_grammar.shell import unwrap_command
from transcript_reader.decode.common import ParsedOutput, is_fork_handoff, parse_output
from transcript_reader.decode.patch_text import cap_diff, patch_hunks
from transcript_reader.decode.records import (
    BLANK,
    DECODED,
    NOISE,
    UNKNOWN,
    UNREADABLE,
    Call,
    Decoded,
    ExecEnd,
    ItemPass,
    LazyTokens,
    Message,
    Meta,
    NoticeRec,
    Output,
    PatchEnd,
    ReasoningRec,
    Tokens,
    ToolEnd,
    TurnAborted,
    TurnContext,
    TurnEnd,
    TurnStart,
)
from transcript_reader.errors import DecodeError
from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    ContextMessage,
    Executed,
    FileChange,
    Format,
    Kind,
    LineAccounting,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    Reasoning,
    ScriptStats,
    SessionInfo,
    ShellCommand,
    StdinWrite,
    TestResult,
    TestRun,
    TokenUsage,
    ToolCallItem,
    Unreadable,
    UserMessage,
)

#: Longest excerpt kept in ``output`` / ``arguments`` / ``result`` fields; the full text of a call's
#: output is its ``raw_output`` item.
EXCERPT_CHARS = 4000

#: Items allowed to wait behind an unanswered call or an undecided message before the oldest is
#: released as it stands (keeps memory bounded on a pathological file; documented in the README).
MAX_PENDING = 4096

#: Distinct unknown/noise type names listed in the accounting; the rest count under "(other types)".
MAX_TYPE_NAMES = 200

#: How far apart (in lines) Codex's two copies of one message may be. They are written together: in the
#: whole shared corpus the copies are 1 or 2 lines apart.
DEDUPE_WINDOW = 16

#: First release whose rollouts record every command/patch a code-mode cell ran (codex-formats.md §9).
RECORDS_SINCE = (0, 150)

#: Output kept for a command that kept running (unified exec), gathered from its session's later chunks
#: (head and tail; test summaries are at the end).
RUNNING_OUTPUT_CHARS = 64_000


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters keeping head and tail (errors show at the end)."""
    if len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters omitted …]\n{text[-half:]}"


# ---------------------------------------------------------------- optional collaborators


def _load_detect() -> Callable[[str, int | None, str | None], Any] | None:
    try:
        from transcript_reader.testruns import detect_test_run
    except ImportError:  # issue #3 integration: H2b's module not landed yet
        return None
    return detect_test_run


def _load_analyze() -> Callable[[str], Any] | None:
    try:
        from exec_grammar import analyze
    except ImportError:
        return None
    return analyze


def _load_parse_patch() -> Callable[[str], Any] | None:
    try:
        from exec_grammar import parse_patch  # type: ignore[attr-defined]
    except ImportError:
        try:
            from exec_grammar.patch import parse_patch
        except ImportError:
            return None
    return parse_patch  # type: ignore[no-any-return]


def _version_tuple(v: str | None) -> tuple[int, ...] | None:
    if not v:
        return None
    m = re.match(r"(\d+)\.(\d+)", v)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _iso_seconds(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# ---------------------------------------------------------------- pending state


class _Slot:
    """A place in the output order; ``items`` is None until what it waits for is known."""

    __slots__ = ("items", "owner")

    def __init__(self, items: list[AnyItem] | None = None, owner: Any = None) -> None:
        self.items = items
        self.owner = owner


class _Chunks:
    """What a still-running command printed, gathered from its first output and the chunks later
    ``write_stdin`` calls on its session returned: the head and the tail, bounded by
    ``RUNNING_OUTPUT_CHARS``."""

    __slots__ = ("head", "tail", "total")

    def __init__(self, text: str) -> None:
        self.head = ""
        self.tail = ""
        self.total = 0
        self.add(text)

    def add(self, text: str) -> None:
        self.total += len(text)
        half = RUNNING_OUTPUT_CHARS // 2
        if len(self.head) < half:
            take = text[: half - len(self.head)]
            self.head += take
            text = text[len(take):]
        if text:
            self.tail = (self.tail + text)[-half:]

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        if omitted <= 0:
            return self.head + self.tail
        return f"{self.head}\n[… {omitted} characters omitted …]\n{self.tail}"


@dataclass(slots=True)
class _PendingCall:
    call: Call
    line: int
    ts: str | None
    turn: str | None
    slot: _Slot
    cwd: str | None
    exec_end: ExecEnd | None = None
    patch_end: PatchEnd | None = None
    tool_end: ToolEnd | None = None
    turn_done: bool = False  # its turn's task_complete arrived while it still had no output
    # a shell call whose output said "Process running with session ID N" (issue 3 QA F1): its output,
    # the chunks its session printed since, and the exit a later write_stdin output reported
    out: Output | None = None
    parsed: ParsedOutput | None = None
    chunks: _Chunks | None = None
    stdin_exit: int | None = None


@dataclass(slots=True)
class _CellRecord:
    rec: ExecEnd | PatchEnd | ToolEnd
    line: int
    ts: str | None
    slot: _Slot
    matched: bool = False


@dataclass(slots=True)
class _Cell:
    call: Call
    line: int
    ts: str | None
    turn: str | None
    slot: _Slot
    analysis: Any = None
    analysis_error: str | None = None
    records: list[_CellRecord] = field(default_factory=list)
    cell_id: str | None = None
    output: str | None = None
    final_text: str | None = None  # the output that ended the cell (settled at the end of its turn)
    final_parsed: ParsedOutput | None = None
    cwd: str | None = None  # the turn's cwd when the cell was called: where its commands run by default


@dataclass(slots=True)
class _Held:
    """An assistant message whose finality is not known yet."""

    msg: Message
    line: int
    ts: str | None
    turn: str | None
    slot: _Slot


class Assembler:
    """Consume ``Decoded`` lines, yield timeline items in source order; then ``info()``."""

    def __init__(self, path: str, fmt: Format, *, strict: bool = False,
                 analyze: Callable[[str], Any] | None = None) -> None:
        self.path = path
        self.fmt = fmt
        self.strict = strict
        self.queue: deque[_Slot] = deque()
        self.calls: dict[str, _PendingCall] = {}
        # unified-exec sessions of direct shell calls still running, by session id (entries dropped when
        # their call settles): later write_stdin outputs on the session belong to that command
        self.sessions: dict[str, _PendingCall] = {}
        self.anon = 0
        self.resolved_ids: deque[str] = deque(maxlen=256)
        # calls released unanswered by a backlog over MAX_PENDING: call_id -> (line, command)
        self.released_early: dict[str, tuple[int, str]] = {}
        self.resolved_set: set[str] = set()
        self.cells: list[_Cell] = []
        # cells whose output arrived but whose turn has not ended: a command a cell left running (an
        # exec_command that yielded) is recorded when it exits, after the cell's output, so entries are
        # only declared "no" once the turn is over
        self.closed_cells: list[_Cell] = []
        self.running_cells: dict[str, _Cell] = {}
        self.held: _Held | None = None
        self.dedupe: dict[tuple[Any, ...], list[tuple[str, int]]] = {}
        # turn state
        self.turn_id: str | None = None
        self.explicit_turns = False
        self.turn_started = False  # this turn began with task_started: finality needs task_complete
        self.turn_aborted = False
        self.turn_count = 0
        self.turn_cwd: str | None = None
        # session state
        self.meta = Meta()
        # ids of the sessions whose replayed history is being read (a fork's copy), innermost last
        self.replaying: list[str] = []
        self.models: list[str] = []
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        # how many lines carry a timestamp: a duration needs two (QA F24: 0.1.x/0.20/0.29 record one)
        self.ts_lines = 0
        self.tokens: TokenUsage | None = None
        self.lazy_tokens: LazyTokens | None = None
        self.title: str | None = None
        self.records_seen = False
        # a call left without output at task_complete proves it did not run only in a session that shows
        # Codex writing outputs, or that a released Codex wrote (cli_version); hand-written fixtures often
        # omit outputs (public tinyai)
        self.outputs_seen = False
        # accounting
        self.acc: Counter[str] = Counter()
        self.unknown_types: Counter[str] = Counter()
        self.noise_types: Counter[str] = Counter()
        self.cut_line: int | None = None
        self.kind_counts: Counter[Kind] = Counter()
        # scripts
        self.script_count = 0
        self.calls_by_tool: Counter[str] = Counter()
        self.by_parser: Counter[str] = Counter()
        self.script_executed: Counter[str] = Counter()
        self.unresolved_paths = 0
        self.whole_script = 0
        self._detect = _load_detect()
        self._analyze = analyze if analyze is not None else _load_analyze()
        self._parse_patch = _load_parse_patch()

    def waiting(self) -> ShellCommand | ToolCallItem | None:
        """A preview of the call at the head of the output order when it still has no result (a
        direct shell command or a code cell): what a live view shows as running. None otherwise."""
        if not self.queue or self.queue[0].items is not None:
            return None
        owner = self.queue[0].owner
        if isinstance(owner, _PendingCall) and owner.call.kind == "shell":
            c = owner.call
            return ShellCommand(line=owner.line, timestamp=owner.ts, turn_id=owner.turn, command=c.command,
                                argv=c.argv, cwd=_join_cwd(owner.cwd, c.cwd), tool=c.tool, call_id=c.call_id,
                                status="running")
        if isinstance(owner, _Cell):
            return ToolCallItem(line=owner.line, timestamp=owner.ts, turn_id=owner.turn, name=owner.call.name
                                or owner.call.tool, call_id=owner.call.call_id, script=owner.call.script)
        return None

    # ------------------------------------------------------------ driving

    def run(self, decoded: Iterable[Decoded]) -> Iterator[AnyItem]:
        # the per-line path is written out flat: it runs once per line of files of any size
        acc = self.acc
        q = self.queue
        record = self._record
        kind_counts = self.kind_counts
        for d in decoded:
            cls = d.cls
            acc[cls] += 1
            if cls != DECODED:
                self._account(d)
            ts = d.timestamp
            if ts:
                if self.first_ts is None:
                    self.first_ts = ts
                self.last_ts = ts
                self.ts_lines += 1
            if cls == UNREADABLE:
                self._push([Unreadable(line=d.line, timestamp=ts, turn_id=self.turn_id,
                                       reason=d.reason or "unreadable")])
            for rec in d.records:
                record(rec, d.line, ts)
            if q:
                if len(q) > MAX_PENDING:
                    self._release_oldest()
                while q and q[0].items is not None:
                    for item in q.popleft().items or ():
                        kind_counts[item.kind] += 1
                        yield item
        acc["lines"] = acc[DECODED] + acc[NOISE] + acc[UNKNOWN] + acc[UNREADABLE] + acc[BLANK]
        self._finish()
        yield from self._drain(force=True)

    def _account(self, d: Decoded) -> None:
        """Accounting of a line that is not plainly decoded (its class is already counted)."""
        cls = d.cls
        if cls == UNKNOWN or cls == NOISE:
            types = self.unknown_types if cls == UNKNOWN else self.noise_types
            name = d.type_name or "?"
            if name not in types and len(types) >= MAX_TYPE_NAMES:
                name = "(other types)"  # a hostile file cannot grow the figures without bound
            types[name] += 1
        elif cls == UNREADABLE:
            if d.cut:
                self.cut_line = d.line
            if self.strict:
                raise DecodeError(d.reason or "unreadable line", path=self.path, line=d.line)

    def _drain(self, force: bool = False) -> Iterator[AnyItem]:
        q = self.queue
        if not force and len(q) > MAX_PENDING:
            self._release_oldest()
        while q and q[0].items is not None:
            for item in q.popleft().items or ():
                self.kind_counts[item.kind] += 1
                yield item

    def _release_oldest(self) -> None:
        """Pathological backlog: settle whatever the oldest slot waits for, as it stands."""
        owner = self.queue[0].owner
        if isinstance(owner, _PendingCall):
            self._resolve_call(owner, None, None, None)
            if owner.call.call_id:
                # its end record may still come: say then what the released item could not (QA F1)
                if len(self.released_early) >= 256:
                    self.released_early.pop(next(iter(self.released_early)))
                self.released_early[owner.call.call_id] = (owner.line, owner.call.command or owner.call.name)
        elif isinstance(owner, _Cell | _CellRecord):
            # settle every cell as it stands (a record waits for its cell): nothing claims "no" here
            for cell in list(self.cells):
                self._close_cell(cell, cell.output, parse_output(cell.output) if cell.output else None)
            self._settle_closed(turn_over=False)
        elif isinstance(owner, _Held):
            self._settle_held(False)
        else:
            self.queue[0].items = self.queue[0].items or []

    def _push(self, items: list[AnyItem], owner: Any = None) -> _Slot:
        slot = _Slot(items, owner)
        self.queue.append(slot)
        return slot

    # ------------------------------------------------------------ records

    def _record(self, rec: Any, line: int, ts: str | None) -> None:
        t = type(rec)
        if t is Message:
            self._message(rec, line, ts)
        elif t is ReasoningRec:
            if self._is_dup(("reasoning", rec.text), rec.src, line):
                return
            self._push([Reasoning(line=line, timestamp=ts, turn_id=self.turn_id, text=rec.text)])
        elif t is Call:
            self._call(rec, line, ts)
        elif t is Output:
            self._output(rec, line, ts)
            if self.replaying and is_fork_handoff(rec.text):
                # the hand-off ends the innermost copy only: a fork of a forked sub-agent holds two (QA2 F6)
                ended = self.replaying.pop()
                whose = (f"the work of session {self.replaying[-1]} (replayed too) follows" if self.replaying
                         else "this session's own work starts here")
                self._push([Notice(line=line, timestamp=ts, turn_id=self.turn_id, category="fork",
                                   message=f"end of the history replayed from session {ended}: {whose}")])
        elif t is ExecEnd or t is PatchEnd:
            self._completion(rec, line, ts)
        elif t is ToolEnd:
            self._tool_end(rec, line, ts)
        elif t is TurnStart:
            self._turn_start(rec.turn_id)
        elif t is TurnEnd:
            self._turn_end(rec, line, ts)
        elif t is TurnAborted:
            self._settle_held(False)
            self.turn_aborted = True
            self._push([Notice(line=line, timestamp=ts, turn_id=rec.turn_id or self.turn_id,
                               category="turn_aborted", message=f"turn aborted: {rec.reason}")])
        elif t is NoticeRec:
            self._push([Notice(line=line, timestamp=ts, turn_id=self.turn_id, category=rec.category,
                               message=rec.message)])
        elif t is Tokens:
            self.tokens = rec.usage
            self.lazy_tokens = None
        elif t is LazyTokens:
            self.lazy_tokens = rec
            self.tokens = None
        elif t is Meta:
            self._meta(rec, line, ts)
        elif t is TurnContext:
            if rec.model and rec.model not in self.models:
                self.models.append(rec.model)
            if rec.cwd:
                self.turn_cwd = rec.cwd
                if self.meta.cwd is None:
                    self.meta.cwd = rec.cwd
            if rec.turn_id and rec.turn_id != self.turn_id:
                self._turn_start(rec.turn_id)
        elif t is ItemPass:
            self._push([rec.item])

    def _meta(self, m: Meta, line: int, ts: str | None) -> None:
        cur = self.meta
        sid = m.session_id
        if sid is not None:
            if sid == cur.session_id:
                self.replaying.clear()  # this session's own header again (a resume): no copy goes on
            elif (cur.session_id is not None or sid in (cur.forked_from_id, cur.parent_session_id)
                    or self.replaying):
                # another session's header: a copy of its history (QA2 F5: also when this file's own
                # header has no id, the parent's must not lend it one)
                if sid not in self.replaying:
                    self._replayed_header(m, line, ts)
                return
        for name in ("session_id", "cwd", "originator", "version", "source", "parent_session_id",
                     "forked_from_id", "timestamp"):
            if getattr(cur, name) is None and getattr(m, name) is not None:
                setattr(cur, name, getattr(m, name))
        if m.model and m.model not in self.models:
            self.models.append(m.model)
        if self.first_ts is None and m.timestamp:
            self.first_ts = m.timestamp
            self.ts_lines += 1
        if self.turn_cwd is None:
            self.turn_cwd = m.cwd
        v = _version_tuple(m.version)
        if v is not None and v >= RECORDS_SINCE and self.fmt is Format.ROLLOUT:
            self.records_seen = True

    def _replayed_header(self, m: Meta, line: int, ts: str | None) -> None:
        """Another session's ``session_meta`` inside this file: Codex copies a parent's rollout items,
        its header included, into a fork or a forked sub-agent (codex-rs ``InitialHistory::Forked``,
        persisted as-is), so the lines that follow replay history done in that session. Its fields are
        not this session's (nothing is merged); a notice marks where the copy starts. The copy's end
        is marked only for a forked sub-agent (``is_fork_handoff``); a fork a person made has no marker."""
        cur = self.meta
        sid = m.session_id
        if sid == cur.forked_from_id or sid == cur.parent_session_id:
            relation = "this session was forked from it" if sid == cur.forked_from_id else "this session's parent"
            message = (f"history replayed from session {sid} ({relation}) starts here: "
                       "the items that follow were done in that session, up to where this session's own "
                       "turns begin")
        else:
            message = (f"header of another session ({sid}): the history that follows was copied from it "
                       "(a fork or a resume)")
        self.replaying.append(sid or "?")
        self._push([Notice(line=line, timestamp=ts, turn_id=self.turn_id, category="fork", message=message)])

    # ------------------------------------------------------------ turns and messages

    def _turn_start(self, turn_id: str | None) -> None:
        self._settle_held(not self.turn_started and not self.turn_aborted)
        # calls of the previous turn still waiting never got an output (an output may follow
        # turn_aborted, so they are settled only when the next turn begins: public stage0 fixture)
        self._settle_turn_calls()
        self.explicit_turns = True
        self.turn_started = True
        self.turn_aborted = False
        if turn_id != self.turn_id or turn_id is None:
            self.turn_count += 1
        self.turn_id = turn_id or f"turn-{self.turn_count}"
        # the dedupe pool is not cleared here: event_msg/user_message may precede task_started and its
        # response_item copy follow it (public jazzyalex stage0 fixture)

    def _turn_end(self, rec: TurnEnd, line: int, ts: str | None) -> None:
        held = self.held
        if held is not None:
            if rec.has_last_agent_message:
                lam = rec.last_agent_message
                # a refusal that ends its turn is the turn's answer (issue 3 / seed 004), even though
                # task_complete names no text for it or only its non-refusal part (QA F14)
                self._settle_held(held.msg.refusal
                                  or (lam is not None and lam.strip() == held.msg.text.strip()))
            else:
                self._settle_held(True)
        for pc in self.calls.values():
            pc.turn_done = True
        self._settle_closed(turn_over=True)
        self.turn_started = False

    def _is_dup(self, key: tuple[Any, ...], src: str, line: int) -> bool:
        """True when ``key`` was seen from a different copy within ``DEDUPE_WINDOW`` lines before (that
        sighting is consumed). Codex writes its two copies of a message at the same moment, so only
        recent sightings count: the pool stays tiny however often a text repeats."""
        seen = self.dedupe.get(key)
        if seen is None:
            if len(self.dedupe) > 512:
                self.dedupe = {k: v for k, v in self.dedupe.items() if v and v[-1][1] >= line - DEDUPE_WINDOW}
            self.dedupe[key] = [(src, line)]
            return False
        horizon = line - DEDUPE_WINDOW
        if seen and seen[0][1] < horizon:
            seen[:] = [s for s in seen if s[1] >= horizon]
        for i, (s, _) in enumerate(seen):
            if s != src:
                del seen[i]
                return True
        seen.append((src, line))
        return False

    def _message(self, m: Message, line: int, ts: str | None) -> None:
        # every field is compared; a ``phase`` only one copy carries (item_completed has it, the
        # response_item copy not: public alaarab 0.157.1 fixture) is compared through _phase_dup
        key = ("msg", m.role, m.text, m.images, m.refusal, m.context_label)
        if self._is_dup(key, m.src, line) and self._phase_dup(m):
            return
        if m.context_label is not None:
            self._push([ContextMessage(line=line, timestamp=ts, turn_id=self.turn_id, role=m.role,
                                       label=m.context_label, text=m.text)])
            return
        if m.role == "user":
            if not self.explicit_turns or not self.turn_started:
                # eras without turn events: a person's message opens the next turn
                self._settle_held(not self.turn_aborted)
                if not self.explicit_turns:
                    self._settle_turn_calls()
                    self.turn_count += 1
                    self.turn_id = f"turn-{self.turn_count}"
                    self.turn_aborted = False
            if self.title is None and m.text.strip():
                first = m.text.strip().splitlines()[0]
                self.title = first[:120]
            self._push([UserMessage(line=line, timestamp=ts, turn_id=self.turn_id, text=m.text, images=m.images)])
            return
        if m.role != "assistant":
            self._push([ContextMessage(line=line, timestamp=ts, turn_id=self.turn_id, role=m.role, label=m.role,
                                       text=m.text)])
            return
        if m.phase == "final_answer" or m.phase == "commentary":
            self._settle_held(False)
            self._push([self._assistant(m, line, ts, self.turn_id, m.phase == "final_answer")])
            return
        self._settle_held(False)
        slot = self._push_pending()
        held = _Held(m, line, ts, self.turn_id, slot)
        slot.owner = held
        self.held = held

    def _phase_dup(self, m: Message) -> bool:
        """The second copy of a message was seen: is its phase compatible with the first's? When the
        held (undecided) copy lacks the phase this copy has, the phase is taken over."""
        h = self.held
        if m.role == "assistant" and h is not None and h.msg.text == m.text and h.msg.role == m.role:
            if h.msg.phase is None and m.phase is not None:
                h.msg.phase = m.phase
                if m.phase in ("final_answer", "commentary"):
                    self._settle_held(m.phase == "final_answer")
                return True
            return h.msg.phase == m.phase or m.phase is None
        return True

    def _assistant(self, m: Message, line: int, ts: str | None, turn: str | None, final: bool) -> AssistantMessage:
        return AssistantMessage(line=line, timestamp=ts, turn_id=turn, text=m.text, final=final,
                                refusal=m.refusal, phase=m.phase)

    def _push_pending(self) -> _Slot:
        slot = _Slot(None)
        self.queue.append(slot)
        return slot

    def _settle_held(self, final: bool) -> None:
        h = self.held
        if h is None:
            return
        self.held = None
        h.slot.items = [self._assistant(h.msg, h.line, h.ts, h.turn, final)]

    # ------------------------------------------------------------ calls

    def _call(self, c: Call, line: int, ts: str | None) -> None:
        if c.kind == "cell":
            self._open_cell(c, line, ts)
            return
        if c.result is not None:  # complete on its own line (web_search_call, image_generation_call)
            executed = Executed.UNKNOWN if c.success is None else Executed.YES  # a failed call still ran
            self._push([ToolCallItem(line=line, timestamp=ts, turn_id=self.turn_id, name=c.name,
                                     arguments=excerpt(c.arguments), result=c.result or None, success=c.success,
                                     call_id=c.call_id, executed=executed)])
            return
        key = c.call_id
        if key is None or key in self.calls:
            self.anon += 1
            key = f"\0anon{self.anon}"
        slot = self._push_pending()
        pc = _PendingCall(c, line, ts, self.turn_id, slot, self.turn_cwd)
        slot.owner = pc
        self.calls[key] = pc

    def _output(self, o: Output, line: int, ts: str | None) -> None:
        self.outputs_seen = True
        cid = o.call_id or ""
        pc = self.calls.get(cid)
        parsed = parse_output(o.text)
        if pc is not None:
            c = pc.call
            if c.kind == "shell" and parsed.running_session is not None and pc.exec_end is None \
                    and not parsed.rejected:
                self._hold_running(pc, o, parsed, line, ts)
                return
            if c.kind == "stdin" and c.session_id is not None and c.session_id in self.sessions:
                self._session_chunk(c.session_id, parsed)
            self._resolve_call(pc, o, parsed, (line, ts))
            if pc.call.tool == "wait" and pc.call.cell_id and parsed.script_status not in (None, "running"):
                cell = self.running_cells.get(pc.call.cell_id)
                if cell is not None:
                    self._close_cell(cell, o.text, parsed)
            return
        for cell in reversed(self.cells):
            if cell.call.call_id == o.call_id and o.call_id is not None:
                if parsed.script_status == "running" and parsed.cell_id:
                    cell.cell_id = parsed.cell_id
                    self.running_cells[parsed.cell_id] = cell
                    cell.output = o.text
                    self._raw(o.text, line, ts, o.call_id, "exec")
                    return
                if parsed.script_status is None and not parsed.rejected:
                    # no status header: a notify() output sent while the cell still runs
                    # (codex-formats.md §4); the cell stays open for its records and final output
                    cell.output = o.text
                    self._raw(o.text, line, ts, o.call_id, "exec")
                    return
                self._close_cell(cell, o.text, parsed)
                self._raw(o.text, line, ts, o.call_id, "exec")
                return
        # an output whose call we never saw (history replayed after compaction, or notify() repeats)
        self._raw(o.text, line, ts, o.call_id, None)

    def _hold_running(self, pc: _PendingCall, o: Output, parsed: ParsedOutput, line: int, ts: str | None) -> None:
        """The command kept running (unified exec): its item waits, in its place, for the end event /
        CommandExecution record (authoritative), or else takes the exit a later write_stdin output on its
        session reports when its turn is over (public codemie fixture: the end event comes after the
        output, and in 18 of its 43 such commands after the write_stdin output that saw the exit too)."""
        pc.out, pc.parsed, pc.chunks = o, parsed, _Chunks(parsed.body)
        if parsed.running_session is not None:
            self.sessions[parsed.running_session] = pc
        self._raw(o.text, line, ts, o.call_id, pc.call.tool)

    def _session_chunk(self, session_id: str, parsed: ParsedOutput) -> None:
        """A write_stdin output on a running command's session: more of its output, perhaps its exit."""
        pc = self.sessions[session_id]
        if parsed.rejected:
            return
        if pc.chunks is not None:
            pc.chunks.add(parsed.body)
        if parsed.exit_code is not None and parsed.running_session is None:
            pc.stdin_exit = parsed.exit_code

    def _raw(self, text: str, line: int, ts: str | None, call_id: str | None, tool: str | None) -> None:
        self._push([RawOutput(line=line, timestamp=ts, turn_id=self.turn_id, call_id=call_id, tool=tool, text=text)])

    def _completion(self, rec: ExecEnd | PatchEnd, line: int, ts: str | None) -> None:
        if rec.record:
            self.records_seen = True
        pc = self.calls.get(rec.call_id or "")
        if pc is not None:
            if isinstance(rec, ExecEnd):
                pc.exec_end = rec
            else:
                pc.patch_end = rec
            if pc.out is not None:
                # the output already said "Process running": this end settles the command (QA F1)
                self._resolve_call(pc, None, None, None)
            return
        late = self.released_early.pop(rec.call_id or "", None) if self.released_early else None
        if late is not None or (rec.call_id or "") in self.resolved_set:
            if late is not None and isinstance(rec, ExecEnd) and rec.exit_code is not None:
                # QA F1 residual: the call's item went out without its result, more than MAX_PENDING
                # items having waited behind it; its exit code is told here rather than dropped
                self._push([Notice(line=line, timestamp=ts, turn_id=self.turn_id, category="late_result",
                                   message=f"the command at line {late[0]} ({late[1][:200]}) ended with exit "
                                           f"code {rec.exit_code}; its item was shown before this result "
                                           f"arrived ({MAX_PENDING} items waited behind it)")])
            return  # evidence arriving after its output: the call is already settled
        target = self.cells[-1] if self.cells else (self._cell_for_record(rec) if self.closed_cells else None)
        self._evidence(rec, line, ts, target)

    def _tool_end(self, rec: ToolEnd, line: int, ts: str | None) -> None:
        """A tool call's completion: its direct call's, or (inside a cell, or a record after one) evidence
        for the cell's script entry calling that tool (QA F10); otherwise its own ``record`` item."""
        cid = rec.call_id or ""
        pc = self.calls.get(cid)
        if pc is not None:
            pc.tool_end = rec
            return
        if cid in self.resolved_set:
            return
        target = self.cells[-1] if self.cells else (
            self._cell_for_record(rec) if rec.record and self.closed_cells else None)
        self._evidence(rec, line, ts, target)
        if cid:
            # Codex may write a tool's completion twice (a DynamicToolCall record and its
            # dynamic_tool_call_response event): the first one stands for the call (QA2 F13)
            self._mark_resolved(cid)

    def _evidence(self, rec: ExecEnd | PatchEnd | ToolEnd, line: int, ts: str | None, target: _Cell | None) -> None:
        """A completion no direct call claims: a record of ``target``'s script (its slot waits, in place,
        for the cell to settle which entry it proves), else an item of its own."""
        if target is not None:
            slot = self._push_pending()
            cr = _CellRecord(rec, line, ts, slot)
            slot.owner = cr
            target.records.append(cr)
            return
        self._push(self._record_items(rec, line, ts, self.turn_id, None))

    def _mark_resolved(self, cid: str | None) -> None:
        if cid is None:
            return
        if len(self.resolved_ids) == self.resolved_ids.maxlen:
            self.resolved_set.discard(self.resolved_ids[0])
        self.resolved_ids.append(cid)
        self.resolved_set.add(cid)

    def _resolve_call(self, pc: _PendingCall, out: Output | None, parsed: ParsedOutput | None,
                      where: tuple[int, str | None] | None) -> None:
        c = pc.call
        for k, v in list(self.calls.items()):
            if v is pc:
                del self.calls[k]
                break
        self._mark_resolved(c.call_id)
        if pc.out is not None:
            # a running command settled by its end record, its turn ending or the end of the file; its
            # output's raw_output item was placed when it arrived
            out, parsed, where = pc.out, pc.parsed, None
            sid = parsed.running_session if parsed is not None else None
            if sid is not None and self.sessions.get(sid) is pc:
                del self.sessions[sid]
        rejected = parsed is not None and parsed.rejected
        items: list[AnyItem]
        if c.kind == "shell":
            items = self._shell_from_call(pc, out, parsed, rejected)
        elif c.kind == "patch":
            items = [self._patch_from_call(pc, out, parsed, rejected)]
        elif c.kind == "stdin":
            ee = pc.exec_end
            exit_code = ee.exit_code if ee and ee.exit_code is not None else (parsed.exit_code if parsed else None)
            body = parsed.body if parsed else None
            items = [StdinWrite(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, session_id=c.session_id,
                                chars=c.chars, output=_ex(body), exit_code=exit_code, call_id=c.call_id,
                                executed=_direct_executed(out is not None or ee is not None, rejected, ee))]
        else:
            te = pc.tool_end
            success = out.success if out is not None else None
            result = out.text if out is not None else (te.result if te else None)
            if te is not None and te.success is not None:
                success = te.success
            if success is None and out is not None:
                if rejected or out.text.startswith("err:"):
                    success = False
                elif c.tool == "exec" or c.tool == "wait":
                    success = None if parsed is None or parsed.script_status is None else \
                        parsed.script_status in ("completed", "running")
            items = [ToolCallItem(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, name=c.name or c.tool,
                                  arguments=excerpt(c.arguments), result=_ex(result), success=success,
                                  call_id=c.call_id,
                                  executed=_direct_executed(out is not None or te is not None, rejected, None))]
        if (out is None and pc.turn_done and (self.outputs_seen or self.meta.version is not None)
                and pc.exec_end is None and pc.patch_end is None and pc.tool_end is None):
            # the turn completed and Codex never answered the call: it did not run (0.169+ ignores a
            # local_shell_call: corpus realcodex/*/ignored_local_shell_call)
            extra: dict[str, Any] = {"status": "not_run"} if c.kind == "shell" else {}
            items = [dataclasses.replace(i, executed=Executed.NO, **extra)  # type: ignore[call-arg,arg-type]
                     for i in items if not isinstance(i, TestRun)]
        pc.slot.items = items
        if out is not None and where is not None:
            self._raw(out.text, where[0], where[1], c.call_id, c.tool)

    def _shell_from_call(self, pc: _PendingCall, out: Output | None, parsed: ParsedOutput | None,
                         rejected: bool) -> list[AnyItem]:
        c = pc.call
        ee = pc.exec_end
        exit_code = ee.exit_code if ee is not None and ee.exit_code is not None else \
            (parsed.exit_code if parsed is not None else None)
        if exit_code is None:
            exit_code = pc.stdin_exit  # the session's exit, seen by a later write_stdin (no end event)
        body: str | None
        if pc.chunks is not None:
            body = pc.chunks.text()
        elif parsed is not None:
            body = parsed.body
        elif ee is not None:
            body = ee.output
        else:
            body = None
        body_chars = pc.chunks.total if pc.chunks is not None else len(body or "")
        if body is not None and ee is not None and ee.output and (pc.chunks is not None or not body.strip()):
            body = ee.output  # aggregated_output: the whole output of a command that kept running
            body_chars = len(body)
        duration = (ee.duration_s if ee is not None and ee.duration_s is not None else
                    (parsed.duration_s if parsed is not None else None))
        status = ee.status if ee is not None and ee.status else None
        session = parsed.running_session if parsed is not None else None
        if rejected:
            status = "rejected"
        elif status is None and exit_code is not None:
            status = "completed" if exit_code == 0 else "failed"
        elif session is not None:
            status = status or "running"
        cwd = ee.cwd if ee is not None and ee.cwd else _join_cwd(pc.cwd, c.cwd)
        executed = _direct_executed(out is not None or ee is not None, rejected, ee)
        item = ShellCommand(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, command=c.command, argv=c.argv,
                            cwd=cwd, exit_code=exit_code, output=_ex(body), output_chars=body_chars,
                            duration_s=duration, tool=c.tool, call_id=c.call_id, origin=Origin.DIRECT,
                            executed=executed, status=status, session_id=session)
        return [item, *self._test_run(item, body)]

    def _patch_from_call(self, pc: _PendingCall, out: Output | None, parsed: ParsedOutput | None,
                         rejected: bool) -> PatchItem:
        c = pc.call
        pe = pc.patch_end
        files, perror = self._patch_files(c.patch_text or "")
        if not files and pe is not None:
            files = pe.files
        else:
            files = _with_diffs(files, patch_hunks(c.patch_text), pe.files if pe is not None else ())
        success: bool | None = None
        error: str | None = None
        body = parsed.body if parsed is not None else None
        if pe is not None and pe.success is not None:
            success = pe.success
        elif rejected:
            success = False
        elif parsed is not None:
            if parsed.exit_code is not None:
                success = parsed.exit_code == 0
            elif body is not None and body.startswith(("Success.", "Done!")):
                success = True
            elif body is not None and re.search(r"\b(error|failed|invalid)\b", body, re.I):
                success = False
        if success is False:
            error = excerpt((pe.output if pe and pe.output else body) or "failed", 1000)
        elif perror:
            error = perror
        return PatchItem(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, files=files, success=success,
                         error=error, tool=c.tool, call_id=c.call_id, origin=Origin.DIRECT,
                         executed=_direct_executed(out is not None or pe is not None, rejected, None))

    def _patch_files(self, text: str) -> tuple[tuple[FileChange, ...], str | None]:
        if self._parse_patch is None or not text:
            return (), None
        patch = self._parse_patch(text)
        files = tuple(FileChange(path=f.path, op=str(getattr(f.op, "value", f.op)), move_to=f.move_to,
                                 added=f.added, removed=f.removed) for f in patch.files)
        return files, patch.error

    def _test_run(self, sc: ShellCommand, full_output: str | None) -> list[AnyItem]:
        if self._detect is None or sc.executed is Executed.NO:
            return []
        info = self._detect(sc.command, sc.exit_code, full_output)
        if info is None:
            return []
        result = getattr(info, "result", TestResult.UNKNOWN)
        return [TestRun(line=sc.line, timestamp=sc.timestamp, turn_id=sc.turn_id, framework=info.framework,
                        command=sc.command, result=TestResult(getattr(result, "value", result)),
                        passed=info.passed, failed=info.failed, skipped=info.skipped, exit_code=sc.exit_code,
                        call_id=sc.call_id, origin=sc.origin, executed=sc.executed)]

    def _settle_turn_calls(self) -> None:
        """A new turn began: calls still waiting never got an output (unknown, or no when their turn
        completed: see _resolve_call); open cells close with what they printed so far."""
        for pc in list(self.calls.values()):
            self._resolve_call(pc, None, None, None)
        for cell in list(self.cells):
            if cell.cell_id is None or cell.cell_id not in self.running_cells:
                self._close_cell(cell, cell.output, parse_output(cell.output) if cell.output else None)
        self._settle_closed(turn_over=True)

    # ------------------------------------------------------------ code mode

    def _open_cell(self, c: Call, line: int, ts: str | None) -> None:
        slot = self._push_pending()
        cell = _Cell(c, line, ts, self.turn_id, slot, cwd=self.turn_cwd)
        slot.owner = cell
        self.script_count += 1
        if self._analyze is not None:
            try:
                cell.analysis = self._analyze(c.script or "")
            except NotImplementedError:
                cell.analysis_error = "analyzer not available"
            except Exception as e:  # noqa: BLE001 - an analyzer bug must not stop reading (fail soft, counted)
                cell.analysis_error = f"analyzer error: {type(e).__name__}"
        else:
            cell.analysis_error = "analyzer not available"
        a = cell.analysis
        if a is not None:
            self.by_parser[str(getattr(a.parser, "value", a.parser))] += 1
            for call in a.calls:
                self.calls_by_tool[call.name] += 1
        else:
            self.by_parser["none"] += 1
        self.cells.append(cell)

    def _close_cell(self, cell: _Cell, text: str | None, parsed: ParsedOutput | None) -> None:
        """The cell's output arrived (or its turn ended first): settled when its turn is over."""
        if cell in self.cells:
            self.cells.remove(cell)
        if cell.cell_id:
            self.running_cells.pop(cell.cell_id, None)
        self._mark_resolved(cell.call.call_id)
        cell.final_text = text
        cell.final_parsed = parsed
        self.closed_cells.append(cell)

    def _settle_closed(self, *, turn_over: bool) -> None:
        for cell in self.closed_cells:
            self._settle_cell(cell, cell.final_text, cell.final_parsed, turn_over)
        self.closed_cells.clear()

    def _cell_for_record(self, rec: ExecEnd | PatchEnd | ToolEnd) -> _Cell:
        """The closed cell a late record belongs to: the newest with a matching unmatched entry."""
        for cell in reversed(self.closed_cells):
            a = cell.analysis
            if a is None:
                continue
            for e in a.entries:
                kind = str(getattr(e.kind, "value", e.kind))
                if isinstance(rec, ExecEnd) and kind == "shell_command" and not e.whole_script \
                        and e.command.strip() in _record_commands(rec):
                    return cell
                if isinstance(rec, PatchEnd) and kind == "patch" and any(
                        _same_path(f.path, r.path) for f in e.files for r in rec.files):
                    return cell
                if isinstance(rec, ToolEnd) and kind == "tool_call" and _same_tool(e.name, rec.name):
                    return cell
        return self.closed_cells[-1]

    def _settle_cell(self, cell: _Cell, text: str | None, parsed: ParsedOutput | None, turn_over: bool) -> None:
        status = parsed.script_status if parsed is not None else None
        rejected = parsed is not None and parsed.rejected
        finished = status in ("completed", "failed")
        a = cell.analysis
        parse_failed = a is not None and a.parse_error is not None and status == "failed"
        negative = rejected or parse_failed
        dead_if_unmatched = finished and self.records_seen and turn_over
        # the cell failed on an apply_patch verification error (a rejected call) naming a file: the patch
        # entry naming that file did not run, when it is the script's only apply_patch call (one entry
        # holds all of a script's patches; with several, the others may have run). Codex 0.144 writes no
        # records, so this is the only evidence (corpus realcodex/0.144.0/code_mode_multi_cell)
        patch_failure = _patch_failure(parsed.script_error) if parsed is not None and status == "failed" else None
        one_patch_call = a is not None and sum(1 for x in a.calls if x.name == "apply_patch") == 1
        c = cell.call
        items: list[AnyItem] = [
            ToolCallItem(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, name="exec",
                         arguments=excerpt(c.script or ""), script=c.script, result=_ex(parsed.body if parsed else None),
                         # a cell still running ("Script running with cell ID N") when nothing later
                         # settled it did not fail: success unknown (QA F9, public alaarab 0.157.1 line 24)
                         success=False if rejected else (
                             None if status is None or status == "running" else status == "completed"),
                         call_id=c.call_id,
                         executed=Executed.NO if rejected else (Executed.YES if text is not None else Executed.UNKNOWN))
        ]
        entries = sorted(a.entries, key=lambda e: e.order) if a is not None else []
        for e in entries:
            kind = str(getattr(e.kind, "value", e.kind))
            if kind == "shell_command":
                rec = None if e.whole_script else self._match_exec(cell, e.command)
                if rec is not None:
                    ex = Executed.YES
                elif negative or (dead_if_unmatched and not e.whole_script):
                    ex = Executed.NO
                else:
                    ex = Executed.UNKNOWN
                tool = e.call_names[0] if e.call_names else "exec_command"
                out = rec.output if rec else None
                sc = ShellCommand(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, command=e.command,
                                  argv=rec.argv if rec else None, cwd=_script_cwd(cell, e, rec),
                                  exit_code=rec.exit_code if rec else None, output=_ex(out),
                                  output_chars=len(out or ""), duration_s=rec.duration_s if rec else None,
                                  tool=tool, call_id=c.call_id, origin=Origin.SCRIPT, executed=ex,
                                  status=rec.status if rec else None, script_order=e.order,
                                  whole_script=e.whole_script)
                if e.whole_script:
                    self.whole_script += 1
                self.script_executed[ex.value] += 1
                items.append(sc)
                items.extend(self._test_run(sc, out))
            elif kind == "patch":
                files = tuple(FileChange(path=f.path, op=str(getattr(f.op, "value", f.op)), move_to=f.move_to,
                                         added=f.added, removed=f.removed) for f in e.files)
                prec = self._match_patch(cell, files)
                hunks: dict[str, str] = {}
                for text in getattr(e, "patch_texts", ()):
                    hunks.update(patch_hunks(text))
                files = _with_diffs(files, hunks, prec.files if prec is not None else ())
                if prec is not None:
                    ex = Executed.YES
                elif negative or dead_if_unmatched or (
                        patch_failure is not None and one_patch_call and len(getattr(e, "patch_texts", ())) <= 1
                        and any(_error_names_path(patch_failure, f.path) for f in files)):
                    ex = Executed.NO
                else:
                    ex = Executed.UNKNOWN
                self.unresolved_paths += e.unresolved_paths
                self.script_executed[ex.value] += 1
                items.append(PatchItem(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, files=files,
                                       success=prec.success if prec else (False if ex is Executed.NO and
                                                                          status == "failed" else None),
                                       # a malformed script patch keeps the parser's error (QA F22);
                                       # ``executed`` stays what the records prove
                                       error=(parsed.script_error if parsed and ex is Executed.NO and
                                              status == "failed" else getattr(e, "error", None)),
                                       unresolved_paths=e.unresolved_paths, tool="apply_patch",
                                       call_id=c.call_id, origin=Origin.SCRIPT, executed=ex, script_order=e.order))
            elif kind == "stdin_write":
                ex = Executed.NO if negative else Executed.UNKNOWN
                self.script_executed[ex.value] += 1
                items.append(StdinWrite(line=cell.line, timestamp=cell.ts, turn_id=cell.turn,
                                        session_id=None if e.session_id is None else str(e.session_id),
                                        chars=e.chars or "", call_id=c.call_id, origin=Origin.SCRIPT,
                                        executed=ex, script_order=e.order))
            else:
                # an McpToolCall / DynamicToolCall / ImageView record of the cell naming this tool: it ran
                trec = self._match_tool(cell, e.name)
                ex = Executed.YES if trec is not None else (Executed.NO if negative else Executed.UNKNOWN)
                self.script_executed[ex.value] += 1
                items.append(ToolCallItem(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, name=e.name,
                                          arguments=excerpt(e.argument_source or ""), call_id=c.call_id,
                                          result=_ex(trec.result) if trec is not None else None,
                                          success=trec.success if trec is not None else None,
                                          origin=Origin.SCRIPT, executed=ex, script_order=e.order))
        cell.slot.items = items
        for cr in cell.records:
            if cr.matched:
                cr.slot.items = []
            else:
                cr.slot.items = self._record_items(cr.rec, cr.line, cr.ts, cell.turn, c.call_id)

    def _match_exec(self, cell: _Cell, command: str) -> ExecEnd | None:
        want = command.strip()
        for cr in cell.records:
            if cr.matched or not isinstance(cr.rec, ExecEnd):
                continue
            if want in _record_commands(cr.rec):
                cr.matched = True
                return cr.rec
        return None

    def _match_tool(self, cell: _Cell, name: str) -> ToolEnd | None:
        for cr in cell.records:
            if not cr.matched and isinstance(cr.rec, ToolEnd) and _same_tool(name, cr.rec.name):
                cr.matched = True
                return cr.rec
        return None

    def _match_patch(self, cell: _Cell, files: tuple[FileChange, ...]) -> PatchEnd | None:
        if not files:
            return None
        for cr in cell.records:
            if cr.matched or not isinstance(cr.rec, PatchEnd):
                continue
            rfiles = cr.rec.files
            for f in files:  # every file of the entry is among the record's (loops: no generator frames)
                for r in rfiles:
                    if _same_path(f.path, r.path):
                        break
                else:
                    break
            else:
                cr.matched = True
                return cr.rec
        return None

    def _record_items(self, rec: ExecEnd | PatchEnd | ToolEnd, line: int, ts: str | None, turn: str | None,
                      cell_call: str | None) -> list[AnyItem]:
        if isinstance(rec, ToolEnd):
            return [ToolCallItem(line=line, timestamp=ts, turn_id=turn, name=rec.name,
                                 arguments=excerpt(rec.arguments), result=_ex(rec.result), success=rec.success,
                                 call_id=cell_call or rec.call_id, origin=Origin.RECORD, executed=Executed.YES)]
        if isinstance(rec, ExecEnd):
            executed = Executed.NO if rec.status == "declined" else Executed.YES
            sc = ShellCommand(line=line, timestamp=ts, turn_id=turn, command=rec.command, argv=rec.argv,
                              cwd=rec.cwd, exit_code=rec.exit_code, output=_ex(rec.output),
                              output_chars=len(rec.output or ""), duration_s=rec.duration_s, tool="exec_command",
                              call_id=cell_call or rec.call_id, origin=Origin.RECORD, executed=executed,
                              status=rec.status)
            return [sc, *self._test_run(sc, rec.output)]
        return [PatchItem(line=line, timestamp=ts, turn_id=turn, files=rec.files, success=rec.success,
                          error=rec.output if rec.success is False else None, call_id=cell_call or rec.call_id,
                          origin=Origin.RECORD, executed=Executed.YES)]

    # ------------------------------------------------------------ end

    def _finish(self) -> None:
        # the transcript ended: a turn that started but never completed has no final answer
        self._settle_held(not self.turn_started and not self.turn_aborted)
        for pc in list(self.calls.values()):
            self._resolve_call(pc, None, None, None)
        for cell in list(self.cells):
            self._close_cell(cell, cell.output, parse_output(cell.output) if cell.output else None)
        # a turn still open at the end of the file may yet have recorded a yielded command
        self._settle_closed(turn_over=not self.turn_started)
        for slot in self.queue:
            if slot.items is None:
                slot.items = []

    def info(self) -> SessionInfo:
        a = self.acc
        lines = LineAccounting(
            lines=a["lines"], decoded=a[DECODED], known_noise=a[NOISE], unknown=a[UNKNOWN],
            unreadable=a[UNREADABLE], blank=a[BLANK],
            unknown_types=tuple(sorted(self.unknown_types.items())),
            noise_types=tuple(sorted(self.noise_types.items())),
            cut_last_line=self.cut_line,
        )
        duration = None
        # one timestamped line measures nothing: unknown, never a measured-looking 0 (QA F24); two lines
        # with the same timestamp are a genuinely instantaneous session (0)
        if self.ts_lines >= 2 and self.first_ts and self.last_ts:
            t0, t1 = _iso_seconds(self.first_ts), _iso_seconds(self.last_ts)
            if t0 is not None and t1 is not None:
                duration = round(t1 - t0, 3)
        if self.tokens is None and self.lazy_tokens is not None:
            lt = self.lazy_tokens
            # token_count lines with "info": null never become LazyTokens, so this is the last figure
            self.tokens = lt.resolve(lt.raw, lt.line)
        m = self.meta
        return SessionInfo(
            path=self.path, format=self.fmt, version=m.version, session_id=m.session_id, cwd=m.cwd,
            models=tuple(self.models), originator=m.originator, source=m.source,
            parent_session_id=m.parent_session_id, forked_from_id=m.forked_from_id,
            first_timestamp=self.first_ts, last_timestamp=self.last_ts, duration_s=duration,
            turns=self.turn_count, counts=tuple(sorted((str(k.value), n) for k, n in self.kind_counts.items())),
            tokens=self.tokens or TokenUsage(),
            scripts=ScriptStats(
                scripts=self.script_count, calls_by_tool=tuple(sorted(self.calls_by_tool.items())),
                by_parser=tuple(sorted(self.by_parser.items())),
                executed=tuple(sorted(self.script_executed.items())),
                unresolved_patch_paths=self.unresolved_paths, whole_script_commands=self.whole_script,
            ),
            lines=lines, title=self.title,
        )


# ---------------------------------------------------------------- helpers


def _ex(text: str | None) -> str | None:
    return None if text is None else excerpt(text)


def _direct_executed(has_evidence: bool, rejected: bool, ee: ExecEnd | None) -> Executed:
    if rejected or (ee is not None and ee.status == "declined"):
        return Executed.NO
    return Executed.YES if has_evidence else Executed.UNKNOWN


def _with_diffs(files: tuple[FileChange, ...], hunks: dict[str, str],
                recorded: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with each one's diff: the recorded one (patch_apply_end / FileChange record: what Codex
    applied) when a recorded file names the same path, else the apply_patch text's hunk for it."""
    out: list[FileChange] = []
    for f in files:
        if f.diff is not None:  # already has one: kept as it is
            out.append(f)
            continue
        diff = None
        for r in recorded:
            if r.diff and _same_path(f.path, r.path):
                diff = r.diff
                break
        if diff is None:
            diff = hunks.get(f.path)
            if diff is None:
                for p, h in hunks.items():
                    if _same_path(p, f.path) or _same_path(f.path, p):
                        diff = h
                        break
        # the constructor, not dataclasses.replace (2.5x slower): every field of FileChange is listed
        out.append(f if diff is None else FileChange(f.path, f.op, f.move_to, f.added, f.removed, cap_diff(diff)))
    return tuple(out)


_PATCH_FAILURE = re.compile(r"apply_patch verification failed:\s*(.+)", re.S)


def _patch_failure(script_error: str | None) -> str | None:
    """The message of an apply_patch verification failure a cell's ``Script error`` reports, if any."""
    if not script_error:
        return None
    m = _PATCH_FAILURE.search(script_error)
    return m.group(1) if m else None


def _record_commands(rec: ExecEnd) -> tuple[str, ...]:
    """The commands a record may show a script's command as. An argv record's ``command`` is already
    the inner command of its shell wrapper (``command_from_argv``): unwrapping it again would strip a
    wrapper the model typed itself, and pair ``make`` with a run of ``bash -lc make`` (QA2 F4). A
    command-line record is compared unwrapped and as written."""
    if rec.argv is not None:
        return (rec.command.strip(),)
    return (unwrap_command(rec.command).strip(), rec.command.strip())


def _error_names_path(message: str, path: str) -> bool:
    """``message`` names ``path`` as a whole path (Codex reports it resolved against the cwd, so a
    relative script path matches the tail of an absolute one, on a ``/`` boundary)."""
    p = path.strip()
    if not p:
        return False
    rel = not p.startswith("/")
    if rel:
        p = p.removeprefix("./")
    # str.find, not a regex built per path: each distinct pattern would take a slot of ``re``'s cache
    # and push out the module-level patterns that other hot paths look up by string
    before = "'\"`(/" if rel else "'\"`("
    i = message.find(p)
    while i >= 0:
        j = i + len(p)
        if (i == 0 or message[i - 1] in before or message[i - 1].isspace()) and (
                j == len(message) or message[j] in ":'\"`)," or message[j].isspace()):
            return True
        i = message.find(p, i + 1)
    return False


def _script_cwd(cell: _Cell, e: Any, rec: ExecEnd | None) -> str | None:
    """Where a script's command ran (its record says) or runs unless told otherwise: the entry's
    ``workdir`` against the turn's cwd, as for a direct call (0.144 cells write no records: corpus
    realcodex/0.144.0/code_mode_only). The whole-script fallback names no command, so no turn cwd."""
    if rec is not None and rec.cwd:
        return rec.cwd
    if e.whole_script:
        return e.cwd  # type: ignore[no-any-return]
    return _join_cwd(cell.cwd, e.cwd)


#: An absolute path on Windows: ``C:\x``, ``C:/x``, ``\\server\share`` (QA3 G4: it was joined to the cwd).
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]|\\\\")


def _join_cwd(base: str | None, workdir: str | None) -> str | None:
    if not workdir:
        return base
    if workdir.startswith("/") or base is None or _WINDOWS_ABSOLUTE.match(workdir):
        return workdir
    if workdir in (".", "./", ".\\"):
        return base
    sep = "\\" if "\\" in base and "/" not in base else "/"  # a Windows cwd keeps its separator
    return base.rstrip("/\\") + sep + workdir


def _same_tool(script_name: str, record_name: str) -> bool:
    """A script's ``tools.X`` names the tool a record names (MCP: ``mcp__server__tool``), compared
    without case or punctuation differences (a server ``my-srv`` is ``my_srv`` in a script)."""
    def norm(n: str) -> str:
        return re.sub(r"[^0-9a-z]+", "_", n.lower()).strip("_")
    want = norm(script_name)
    # a dynamic tool's record is named ``namespace.tool``; a script may call it by its tool name
    return want == norm(record_name) or ("." in record_name and want == norm(record_name.rsplit(".", 1)[1]))


def _same_path(script_path: str, record_path: str) -> bool:
    """A script's relative patch path names the record's absolute one (records resolve against cwd)."""
    s = script_path.strip().lstrip("./") if not script_path.startswith("/") else script_path
    r = record_path.replace("/./", "/")
    return r == s or r.endswith("/" + s)
