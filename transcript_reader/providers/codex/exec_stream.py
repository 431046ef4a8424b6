"""Decoder of ``codex exec --json`` streams: the sole reader of that wire format.

Two eras share this module because a stream from either era is the same kind of evidence (what
``codex exec`` printed on stdout, one JSON object per line):

- the 0.50+ *thread* stream: ``thread.started`` / ``turn.started`` / ``turn.completed{usage}`` /
  ``turn.failed{error}`` / ``item.started|updated|completed{item}`` / ``error`` (2026 adds
  ``item.plan.delta`` and ``request_user_input``);
- the older ``{id, msg}`` *protocol* stream (up to 0.40): a config-summary line, a ``{"prompt"}`` line,
  then raw protocol events (``task_started``, ``agent_message``, ``exec_command_begin/end``,
  ``patch_apply_begin/end``, ``token_count``...). ``codex exec`` of that era consumed ``task_complete``
  to shut down and never printed it, so a clean end of the stream is where the last turn ends.

Rules this decoder owns (seed ``000_…`` and seed ``002_…``):

- Items are emitted once, when they complete (an ``item.started`` is only remembered). An item still
  open when its turn ends or the stream stops is emitted with ``executed: unknown`` and the last
  status it reported (``in_progress``), at the line of its last event and in line order with the rest
  (items of later lines wait behind it, bounded: QA F19); an open item at the end of the stream makes
  the run ``incomplete``.
- Only the last ``agent_message`` of a turn, when the turn completes, is the answer (``final=True``).
  A message followed by another item of the same turn is commentary; a turn that failed or was cut
  has no final answer (fail closed: a cut turn never reads as answered).
- ``executed``: a command that completed or failed with an exit code ran (``yes``); a ``declined`` one
  did not (``no``); anything else is ``unknown``. A file change is ``yes`` when the stream reports it
  ``completed`` or ``failed`` (the patch was attempted), ``no`` when declined.
- Run status: ``failed`` (a ``turn.failed``, a protocol ``error`` or ``turn_aborted``, or a top-level
  ``error`` that no ``turn.completed`` follows; the first message wins), else ``incomplete`` (a turn or item still open at the end,
  a cut last line, a run that never started a turn), else ``no_report`` (the last turn produced no agent
  message, or the stream is empty), else ``completed``.
- Usage: the sum of ``turn.completed`` usage (thread stream); the last cumulative ``token_count`` or,
  for the flat per-request ``token_count`` of 0.20/0.29, their sum (protocol stream). The summary says
  which.
- Line accounting: every line is exactly one of decoded, known noise, unknown type, unreadable, blank.

One deliberate departure from seed ``002_…`` (which fails a run on any top-level ``error``): Codex's exec
processor prints a retried stream error ("Reconnecting… 1/5") as the same top-level ``error`` event as a
fatal one, and marks a fatal one by ending the turn with ``turn.failed`` instead of ``turn.completed``. So
an ``error`` followed by ``turn.completed`` is shown (a notice) but does not fail the run; one followed by
``turn.failed``, or by nothing, does.

The stream does not name the model's tool, so commands carry ``tool="command_execution"`` and file
changes ``tool="file_change"``; ``call_id`` is the stream's item id (thread stream) or the protocol
``call_id``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson

from exec_grammar.shell import command_from_argv, posix_split, unwrap_command, wrapped_command
from transcript_reader.errors import DecodeError
from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Executed,
    FileChange,
    Format,
    LineAccounting,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    Reasoning,
    ShellCommand,
    TokenUsage,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.providers.codex.patch_text import file_changes
from transcript_reader.providers.codex.sniff import PROTOCOL_HEADER_KEYS
from transcript_reader.providers.codex.tokens import add_usage, token_count_usage
from transcript_reader.providers.records import (
    BLANK,
    DECODED,
    FLUSH,
    NOISE,
    UNKNOWN,
    UNREADABLE,
    Decoded,
    ItemPass,
    Meta,
    Record,
    RunReport,
    Tokens,
)

#: Longest excerpt kept in ``output`` / ``arguments`` / ``result`` fields; the full command output is a
#: separate ``RawOutput`` item.
EXCERPT_CHARS = 4000

#: Items (notices, unreadable lines) kept waiting behind an undecided agent message at most.
MAX_DEFERRED = 10_000

#: Thread-stream events recognised and deliberately not used (the completed item carries the text).
_THREAD_NOISE = frozenset({"item.plan.delta"})

#: Protocol events recognised and deliberately not used: deltas repeat what an ``*_end``/full message
#: carries, ``turn_diff`` repeats the patches, the rest are UI or session plumbing.
_PROTOCOL_NOISE = frozenset(
    {
        "agent_message_delta",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content_delta",
        "agent_reasoning_section_break",
        "exec_command_output_delta",
        "turn_diff",
        "background_event",
        "get_history_entry_response",
        "mcp_list_tools_response",
        "list_custom_prompts_response",
        "shutdown_complete",
        "conversation_path",
        # `codex exec` of this era ran with approval "never": a request is never answered in the stream,
        # and what ran still shows as exec_command_begin/end or patch_apply_begin/end.
        "exec_approval_request",
        "apply_patch_approval_request",
        "web_search_begin",
        "mcp_tool_call_begin",
        "entered_review_mode",
        "exited_review_mode",
        "mcp_startup_update",
        "mcp_startup_complete",
        "session_configured_v2",
    }
)

#: The accounting classes, in the order ``feed`` compares their counts.
_CLASSES = ("decoded", "noise", "unknown", "unreadable", "blank")

_SIMPLE_WRAPPED = re.compile(r"^((?:/\S*/)?(?:bash|sh|zsh|dash|ksh)) (-lc|-c) '([^'\\]*)'$")
_NEEDS_SHLEX = re.compile(r"[\\'\"#]")


class RunStatus(StrEnum):
    """How an exec run ended (seed ``002_…``, plus ``incomplete`` for a stream that stops mid-turn)."""

    COMPLETED = "completed"
    FAILED = "failed"
    NO_REPORT = "no_report"
    INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class ExecStreamSummary:
    """What a whole exec stream says about its run, beyond the items."""

    format: Format
    run_status: RunStatus
    run_error: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    turns: int = 0
    completed_turns: int = 0
    thread_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    lines: LineAccounting = field(default_factory=LineAccounting)


def iter_exec_stream(
    lines: Iterable[tuple[int, str]], *, protocol: bool, path: str | None = None, strict: bool = False
) -> Iterator[AnyItem]:
    """Items of an exec stream, in order. Use :class:`ExecStreamDecoder` to also get the summary."""
    yield from ExecStreamDecoder(protocol=protocol, path=path, strict=strict).items(lines)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, keeping its head and tail (errors show at the end)."""
    if len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n[… {omitted} characters omitted …]\n{text[-half:]}"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _json_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def split_shell_command(command: str) -> tuple[str, tuple[str, ...] | None]:
    """The command a person would type, and the argv, from the stream's shell-quoted command string.

    ``codex exec`` prints an argv joined with shell quoting (``bash -lc 'ls && cat calc.py'``); the
    inner script of a ``<shell> -lc|-c <script>`` argv is what the rollout shows as the command.
    """
    argv: tuple[str, ...]
    simple = _SIMPLE_WRAPPED.match(command)
    if simple is not None:  # fast path: `bash -lc '<script without quotes>'`
        argv = (simple.group(1), simple.group(2), simple.group(3))
        return simple.group(3), argv
    if not _NEEDS_SHLEX.search(command):
        argv = tuple(command.split())
    else:
        words = posix_split(command)  # shlex.split, in linear time (QA2 F15: seconds on a 1 MB heredoc)
        if words is None:
            return unwrap_command(command), None
        argv = tuple(words)
    inner = wrapped_command(argv)
    if inner is not None:
        return inner, argv
    # a Windows command line (``"C:\\...\\pwsh.exe" -Command "dir"``) quotes without backslash escapes,
    # which the POSIX split above ate: exec_grammar.shell splits it the Windows way (QA F23)
    unwrapped = unwrap_command(command)
    if unwrapped != command.strip():
        return unwrapped, argv
    return shlex.join(argv), argv


def _thread_changes(changes: object) -> tuple[FileChange, ...]:
    if not isinstance(changes, list):
        return ()
    out: list[FileChange] = []
    for change in changes:
        if not isinstance(change, dict):
            continue
        path = _str(change.get("path")) or ""
        kind = change.get("kind")
        move_to = _str(change.get("move_path"))
        if isinstance(kind, dict):  # tolerate a tagged kind {"type": "update", "move_path": …}
            move_to = _str(kind.get("move_path")) or move_to
            kind = kind.get("type")
        out.append(FileChange(path=path, op=_str(kind) or "update", move_to=move_to))
    return tuple(out)


def _duration(value: object) -> float | None:
    if isinstance(value, dict):
        secs, nanos = _int(value.get("secs")), _int(value.get("nanos"))
        if secs is None and nanos is None:
            return None
        return (secs or 0) + (nanos or 0) / 1e9
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _mcp_result_text(result: object) -> tuple[str | None, bool | None]:
    """(result excerpt, success) of an MCP result: ``{"Ok": CallToolResult}`` / ``{"Err": str}`` or a
    bare CallToolResult ``{content[], structured_content?, isError?}``."""
    if result is None:
        return None, None
    if isinstance(result, dict) and "Err" in result:
        return excerpt(_json_text(result["Err"])), False
    if isinstance(result, dict) and "Ok" in result:
        result = result["Ok"]
    if isinstance(result, dict):
        content = result.get("content")
        texts = [
            c["text"]
            for c in (content if isinstance(content, list) else ())
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        ]
        text = "\n".join(texts) if texts else _json_text(result.get("structured_content") or result)
        is_error = result.get("isError") or result.get("is_error")
        return excerpt(text), not bool(is_error)
    return excerpt(_json_text(result)), None


def _line_of(item: AnyItem) -> int:
    return item.line


class _Malformed(Exception):
    """A known event whose shape is wrong (becomes an unreadable line)."""


@dataclass(slots=True)
class _Open:
    """An item (thread stream) or a call (protocol stream) seen starting but not yet completed."""

    data: dict[str, Any]
    line: int
    turn_id: str | None


@dataclass(slots=True)
class _Held:
    text: str
    line: int
    turn_id: str | None
    phase: str | None = None


class ExecStreamDecoder:
    """Stateful decoder of one exec stream. Iterate :meth:`items`, then read :meth:`summary`."""

    def __init__(self, *, protocol: bool, path: str | None = None, strict: bool = False) -> None:
        self._format = Format.EXEC_PROTOCOL if protocol else Format.EXEC_JSON
        self._path = path
        self._strict = strict
        # turn state
        self._turns = 0
        self._completed_turns = 0
        self._in_turn = False
        self._turn_from_protocol = False
        self._turn_messages = 0
        self._last_closed_turn_messages: int | None = None
        self._unfinished_turns = 0
        self._held: _Held | None = None
        self._deferred: list[AnyItem] = []
        self._open: dict[str, _Open] = {}
        # items waiting behind an item that started and may never complete (see _release)
        self._reorder: list[AnyItem] = []
        self._pending_prompt_turn: str | None = None
        # run state
        self._failure: str | None = None
        self._pending_error: str | None = None  # first `error` event since the last turn.completed
        self._last_failure_notice: str | None = None
        self._thread_id: str | None = None
        self._model: str | None = None
        self._cwd: str | None = None
        self._cut_line: int | None = None
        self._bad_json: tuple[int, str, str] | None = None
        self._anything = False
        self._finished = False
        # usage
        self._usage_sum = [0, 0, 0, 0, 0]  # input, cached, output, reasoning, total
        self._usage_turns = 0
        self._usage_cumulative: TokenUsage | None = None
        self._usage_flat = 0
        # accounting
        self._counts = Counter[str]()
        self._unknown_types = Counter[str]()
        self._noise_types = Counter[str]()
        # per line, for decode records (``decoded``): the type name it counts under, the reasons of
        # unreadable lines not given yet, a line not JSON that waits for the next, full command outputs
        self._line_name: str | None = None
        self._reasons: dict[int, str] = {}
        self._held_back: Decoded | None = None
        self._full_output: dict[int, str] = {}

    # ----------------------------------------------------------------- public

    def items(self, lines: Iterable[tuple[int, str]]) -> Iterator[AnyItem]:
        """Decode ``(line_number, text)`` pairs; yields items in stream order (each at completion).

        While an agent message waits to learn whether it is the answer, items that need no decision
        (notices, unreadable lines) wait behind it, so the output stays in source-line order. A line that
        is not JSON waits for the next line: only the last line, without its newline, is a cut line.
        (The reader uses :meth:`decoded`, which gives the same items as decode records.)"""
        for lineno, raw in lines:
            yield from self._step(lineno, raw)
        yield from self._end()

    def decoded(self, lines: Iterable[tuple[int, bytes, bool]], *, summary: bool = True) -> Iterator[Decoded]:
        """Every line as one :class:`Decoded` (its accounting class, and the items this stream's rules
        settled while it was read, as ``ItemPass`` records), then one ``FLUSH`` entry with the items
        settled at the end and, with ``summary``, what the run reports about itself (``Meta``,
        ``Tokens``, ``RunReport``). The assembler turns these into the timeline and ``SessionInfo`` as
        for every other format. A line that is not JSON is given once the next line (or the end) tells
        whether it was cut mid-write."""
        for lineno, raw, _complete in lines:
            yield from self.feed(lineno, raw.decode("utf-8", "replace"))
        yield from self.close(summary=summary)

    def feed(self, lineno: int, raw: str) -> Iterator[Decoded]:
        """One line of the stream (see :meth:`decoded`)."""
        held, self._held_back = self._held_back, None
        before = [self._counts[c] for c in _CLASSES]
        recs = self._records(self._step(lineno, raw))
        delta = [self._counts[c] - b for c, b in zip(_CLASSES, before, strict=True)]
        if held is not None:  # the previous line was not JSON: this line says it was whole
            delta[3] -= 1
            held.reason = self._reasons.pop(held.line, held.reason)
            yield held
        name, self._line_name = self._line_name, None
        if self._bad_json is not None and self._bad_json[0] == lineno:
            self._held_back = Decoded(lineno, UNREADABLE, records=recs, placed=True)
            return
        if delta[3] > 0:
            yield Decoded(lineno, UNREADABLE, records=recs, reason=self._reasons.pop(lineno, None), placed=True)
        elif delta[0] > 0:
            yield Decoded(lineno, DECODED, records=recs)
        elif delta[1] > 0:
            yield Decoded(lineno, NOISE, name, recs)
        elif delta[2] > 0:
            yield Decoded(lineno, UNKNOWN, name, recs)
        else:
            yield Decoded(lineno, BLANK, records=recs)

    def close(self, *, summary: bool = True) -> Iterator[Decoded]:
        """The end of the stream: the last line if it waited, then the ``FLUSH`` entry."""
        recs = self._records(self._end())
        held, self._held_back = self._held_back, None
        if held is not None:
            held.reason = self._reasons.pop(held.line, held.reason)
            held.cut = self._cut_line == held.line
            yield held
        if summary:
            s = self.summary()
            recs += (Meta(session_id=s.thread_id, cwd=s.cwd, model=s.model, originator="codex_exec"),
                     Tokens(s.usage), RunReport(s.run_status.value, s.run_error, s.turns))
        yield Decoded(self._counts["lines"] + 1, FLUSH, records=recs)

    def _records(self, items: Iterable[AnyItem]) -> tuple[Record, ...]:
        full = self._full_output
        return tuple(ItemPass(i, full.pop(id(i), None)) if full else ItemPass(i) for i in items)

    def _step(self, lineno: int, raw: str) -> Iterator[AnyItem]:
        reorder = self._reorder
        for item in self._line(lineno, raw):
            if self._held is not None and len(self._deferred) < MAX_DEFERRED:
                self._deferred.append(item)
            elif self._open or reorder:
                reorder.append(item)
            else:  # memory stays bounded: past the cap, order gives way (a stream of garbage lines)
                yield item
        if reorder:
            yield from self._release(force=False)

    def _end(self) -> Iterator[AnyItem]:
        reorder = self._reorder
        if self._bad_json is not None:
            lineno, raw, error = self._bad_json
            self._bad_json = None
            if raw.endswith("\n"):
                item = self._unreadable(lineno, f"invalid JSON: {error}")
            else:
                self._cut_line = lineno
                item = self._unreadable(lineno, "truncated last line (cut mid-write)")
            if self._held is not None and len(self._deferred) < MAX_DEFERRED:
                self._deferred.append(item)
            elif self._open or reorder:
                reorder.append(item)
            else:
                yield item
        reorder.extend(self._finish())
        yield from self._release(force=True)

    def _release(self, *, force: bool) -> Iterator[AnyItem]:
        """Items that no open item can precede any more, in source-line order.

        An item that started but has not completed is emitted, if it never completes, at the line of its
        last event (QA F19: a ``todo_list`` started at line 3 came out after the final answer at line 9).
        So while one is open, items of later lines wait here; an item that completes is emitted at its
        completion line, which only raises the horizon. The sort is stable and everything else already
        arrives in order. Bounded like ``_deferred``: past the cap, order gives way."""
        buf = self._reorder
        if self._open and not force and len(buf) < MAX_DEFERRED:
            horizon = min(entry.line for entry in self._open.values())
            buf.sort(key=_line_of)
            cut = 0
            while cut < len(buf) and buf[cut].line <= horizon:
                cut += 1
            ready = buf[:cut]
            del buf[:cut]
            yield from ready
            return
        buf.sort(key=_line_of)
        ready = buf[:]
        buf.clear()
        yield from ready

    def _line(self, lineno: int, raw: str) -> Iterator[AnyItem]:
        if self._bad_json is not None:  # a later line exists: the bad one was complete, not cut
            bad_line, _, error = self._bad_json
            self._bad_json = None
            yield self._unreadable(bad_line, f"invalid JSON: {error}")
        self._counts["lines"] += 1
        text = raw.strip()
        if not text:
            self._counts["blank"] += 1
            return
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            self._bad_json = (lineno, raw, str(exc))
            return
        if not isinstance(obj, dict):
            yield self._unreadable(lineno, f"a JSON {type(obj).__name__}, not an object")
            return
        decoded_before = self._counts["decoded"]
        try:
            if "msg" in obj:
                yield from self._protocol(lineno, obj)
            elif "type" in obj:
                yield from self._thread(lineno, obj)
            else:
                yield from self._header(lineno, obj)
        except _Malformed as exc:
            yield self._unreadable(lineno, str(exc))
        except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
            # Last line of defence for a value of a type no Codex wrote: the line is unreadable (counted
            # once), never a crash of the whole read.
            self._counts["decoded"] = decoded_before
            yield self._unreadable(lineno, f"unexpected value in a known event ({type(exc).__name__})")

    def summary(self) -> ExecStreamSummary:
        """The run's status, usage, turns and line accounting (complete once :meth:`items` is exhausted)."""
        return ExecStreamSummary(
            format=self._format,
            run_status=self._run_status(),
            run_error=self._failure,
            usage=self._usage(),
            turns=self._turns,
            completed_turns=self._completed_turns,
            thread_id=self._thread_id,
            model=self._model,
            cwd=self._cwd,
            lines=LineAccounting(
                lines=self._counts["lines"],
                decoded=self._counts["decoded"],
                known_noise=self._counts["noise"],
                unknown=self._counts["unknown"],
                unreadable=self._counts["unreadable"],
                blank=self._counts["blank"],
                unknown_types=tuple(sorted(self._unknown_types.items())),
                noise_types=tuple(sorted(self._noise_types.items())),
                cut_last_line=self._cut_line,
            ),
        )

    # -------------------------------------------------------------- accounting

    def _unreadable(self, lineno: int, reason: str) -> Unreadable:
        if self._strict:
            raise DecodeError(reason, path=self._path, line=lineno)
        self._counts["unreadable"] += 1
        self._reasons[lineno] = reason
        return Unreadable(line=lineno, reason=reason, turn_id=self._turn_id())

    def _decoded(self) -> None:
        self._counts["decoded"] += 1
        self._anything = True

    def _noise(self, name: str) -> None:
        self._counts["noise"] += 1
        self._noise_types[name] += 1
        self._line_name = name

    def _unknown(self, name: str) -> None:
        self._counts["unknown"] += 1
        self._unknown_types[name] += 1
        self._line_name = name

    def _turn_id(self) -> str | None:
        return f"turn-{self._turns}" if self._turns else None

    # ------------------------------------------------------------------- turns

    def _start_turn(self, *, protocol: bool) -> Iterator[AnyItem]:
        if not self._in_turn:
            yield from self._flush_held(final=False)  # a message outside any turn answers nothing
        else:
            if self._turn_from_protocol:
                # A protocol stream never prints task_complete: the next task_started ends the turn.
                yield from self._close_turn(completed=True)
            else:
                self._unfinished_turns += 1
                yield from self._close_turn(completed=False)
        self._turns += 1
        self._in_turn = True
        self._turn_from_protocol = protocol
        self._turn_messages = 0
        self._pending_prompt_turn = None

    def _close_turn(self, *, completed: bool) -> Iterator[AnyItem]:
        """End the current turn: the held message is the answer only if the turn completed."""
        yield from self._flush_held(final=completed)
        yield from self._flush_open()
        if completed:
            self._completed_turns += 1
        self._last_closed_turn_messages = self._turn_messages
        self._in_turn = False

    def _hold(self, text: str, lineno: int, turn_id: str | None, phase: str | None = None) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        self._held = _Held(text=text, line=lineno, turn_id=turn_id, phase=phase)
        self._turn_messages += 1

    def _flush_held(self, *, final: bool) -> Iterator[AnyItem]:
        held, self._held = self._held, None
        if held is not None:
            yield AssistantMessage(
                line=held.line, turn_id=held.turn_id, text=held.text, final=final, phase=held.phase
            )
        deferred, self._deferred = self._deferred, []
        yield from deferred

    def _flush_open(self) -> Iterator[AnyItem]:
        """Emit items that never completed: ``executed`` stays unknown."""
        pending, self._open = self._open, {}
        for key, entry in pending.items():
            if key.startswith("proto:"):
                yield from self._protocol_unfinished(entry)
            else:
                yield from self._thread_item(entry.data, entry.line, entry.turn_id, finished=False)

    def _finish(self) -> Iterator[AnyItem]:
        if self._finished:
            return
        self._finished = True
        if self._pending_error is not None:  # an error no turn.completed followed: it ended the run
            self._fail(self._pending_error)
            self._pending_error = None
        if self._in_turn:
            # A protocol turn ends with the stream (task_complete was never printed), unless the stream
            # was cut: a half-written last line or a call still running.
            completed = self._turn_from_protocol and not self._open and self._cut_line is None
            if not completed:
                self._unfinished_turns += 1
            yield from self._close_turn(completed=completed)
        else:
            if self._open:  # items started outside any turn and never completed
                self._unfinished_turns += 1
            yield from self._flush_held(final=False)
            yield from self._flush_open()

    def _run_status(self) -> RunStatus:
        if self._failure is not None:
            return RunStatus.FAILED
        if self._unfinished_turns or self._open or self._cut_line is not None or self._in_turn:
            return RunStatus.INCOMPLETE
        if self._turns == 0:
            return RunStatus.INCOMPLETE if self._anything else RunStatus.NO_REPORT
        if not self._last_closed_turn_messages:
            return RunStatus.NO_REPORT
        return RunStatus.COMPLETED

    def _fail(self, message: str) -> None:
        if self._failure is None:
            self._failure = message or "(no message)"

    def _failure_notice(self, lineno: int, category: str, message: str) -> Iterator[AnyItem]:
        """A terminal failure (protocol ``error``, ``turn_aborted``) and its notice."""
        self._fail(message)
        yield from self._error_notice(lineno, message, category)

    def _error_notice(self, lineno: int, message: str, category: str = "error") -> Iterator[AnyItem]:
        """A notice per distinct message in a row (turn.failed repeats the ``error`` event before it)."""
        if message != self._last_failure_notice:
            self._last_failure_notice = message
            yield Notice(line=lineno, turn_id=self._turn_id(), category=category, message=message)

    # ---------------------------------------------------------------- usage

    def _usage(self) -> TokenUsage:
        if self._usage_turns:
            i, c, o, r, t = self._usage_sum
            return TokenUsage(
                input=i, cached_input=c, output=o, reasoning=r, total=t, source="sum of turn.completed usage"
            )
        if self._usage_cumulative is not None:
            return self._usage_cumulative
        if self._usage_flat:
            i, c, o, r, t = self._usage_sum
            return TokenUsage(
                input=i,
                cached_input=c,
                output=o,
                reasoning=r,
                total=t,
                source="sum of per-request token_count",
            )
        return TokenUsage()

    def _add_usage(self, usage: dict[str, Any]) -> None:
        add_usage(self._usage_sum, usage)

    # ---------------------------------------------------------- header lines

    def _header(self, lineno: int, obj: dict[str, Any]) -> Iterator[AnyItem]:
        """The 0.20-0.40 stream's first two lines: a config summary, then ``{"prompt": …}``."""
        if "prompt" in obj and isinstance(obj["prompt"], str):
            self._decoded()
            self._pending_prompt_turn = f"turn-{self._turns + 1}"
            yield UserMessage(line=lineno, turn_id=self._pending_prompt_turn, text=obj["prompt"])
            return
        if set(obj) & PROTOCOL_HEADER_KEYS:
            self._decoded()
            self._model = _str(obj.get("model")) or self._model
            self._cwd = _str(obj.get("workdir")) or self._cwd
            return
        self._unknown("<object without type>")

    # ----------------------------------------------------- thread stream (0.50+)

    def _thread(self, lineno: int, obj: dict[str, Any]) -> Iterator[AnyItem]:
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise _Malformed("'type' is not a string")
        if kind in _THREAD_NOISE:
            self._noise(kind)
            return
        if kind == "thread.started":
            self._decoded()
            tid = _str(obj.get("thread_id"))
            if tid is not None and self._thread_id is not None and tid != self._thread_id:
                # another run appended to the same file (``codex exec --json … >> log``): the file keeps
                # its first thread's id, as a rollout keeps its own header, and says where the next begins
                # (QA2 F7; usage is summed over the file's runs)
                yield Notice(line=lineno, turn_id=self._turn_id(), category="thread",
                             message=f"another run starts here (thread {tid}); the figures cover every run in "
                                     "this file, the session id is the first run's")
            else:
                self._thread_id = tid or self._thread_id
        elif kind == "turn.started":
            self._decoded()
            yield from self._start_turn(protocol=False)
        elif kind == "turn.completed":
            usage = obj.get("usage")
            if usage is not None and not isinstance(usage, dict):
                raise _Malformed("turn.completed 'usage' is not an object")
            self._decoded()
            if usage:
                self._add_usage(usage)
                self._usage_turns += 1
            self._pending_error = None  # the turn completed: its error events were retried, not fatal
            if self._in_turn:
                yield from self._close_turn(completed=True)
            else:  # a turn.completed with no turn.started: still the end of a turn
                self._turns = max(self._turns, 1)
                yield from self._close_turn(completed=True)
        elif kind == "turn.failed":
            error = obj.get("error")
            message = (_str(error.get("message")) if isinstance(error, dict) else _str(error)) or "turn failed"
            self._decoded()
            self._fail(self._pending_error or message)
            self._pending_error = None
            yield from self._error_notice(lineno, message)
            yield from self._close_turn(completed=False)
        elif kind == "error":
            # Codex prints a fatal error and a retried stream error ("Reconnecting… 1/5") alike; only what
            # follows tells them apart: turn.failed (or no end at all) vs. turn.completed.
            self._decoded()
            message = _str(obj.get("message")) or "error"
            if self._pending_error is None:
                self._pending_error = message
            yield from self._error_notice(lineno, message)
        elif kind == "request_user_input":
            self._decoded()
            yield from self._flush_held(final=False)
            yield ToolCallItem(
                line=lineno,
                turn_id=self._turn_id(),
                name="request_user_input",
                arguments=excerpt(_json_text(obj.get("questions"))),
                call_id=_str(obj.get("call_id")) or _str(obj.get("id")),
                origin=Origin.STREAM,
            )
        elif kind in ("item.started", "item.updated", "item.completed"):
            yield from self._item_event(lineno, kind, obj)
        else:
            self._unknown(kind)

    def _item_event(self, lineno: int, kind: str, obj: dict[str, Any]) -> Iterator[AnyItem]:
        item = obj.get("item")
        if not isinstance(item, dict):
            raise _Malformed(f"{kind} without an item object")
        item_type = item.get("type")
        if not isinstance(item_type, str):
            raise _Malformed(f"{kind} item without a string type")
        if item_type not in _THREAD_ITEM_TYPES:
            self._unknown(f"item:{item_type}")
            return
        self._decoded()
        item_id = _str(item.get("id"))
        key = f"item:{item_id}" if item_id is not None else None
        if kind != "item.completed":
            if key is None:
                return  # nothing to pair it with; the completed event will carry the item
            previous = self._open.get(key)
            turn_id = previous.turn_id if previous else self._turn_id()
            if previous is None and item_type != "agent_message":
                yield from self._flush_held(final=False)  # another item follows: the message was commentary
            self._open[key] = _Open(data=item, line=lineno, turn_id=turn_id)
            return
        entry = self._open.pop(key, None) if key is not None else None
        turn_id = entry.turn_id if entry else self._turn_id()
        if item_type == "agent_message":
            text = _str(item.get("text")) or ""
            yield from self._hold(text, lineno, turn_id, _str(item.get("phase")))
            return
        yield from self._flush_held(final=False)
        yield from self._thread_item(item, lineno, turn_id, finished=True)

    def _thread_item(
        self, item: dict[str, Any], lineno: int, turn_id: str | None, *, finished: bool
    ) -> Iterator[AnyItem]:
        """One thread-stream item as model items. ``finished`` is False for an item never completed."""
        item_type = item.get("type")
        item_id = _str(item.get("id"))
        status = _str(item.get("status")) or (None if finished else "in_progress")
        if item_type == "agent_message":
            # Started but never completed: not an answer.
            yield AssistantMessage(line=lineno, turn_id=turn_id, text=_str(item.get("text")) or "")
        elif item_type == "reasoning":
            yield Reasoning(line=lineno, turn_id=turn_id, text=_str(item.get("text")) or "")
        elif item_type == "command_execution":
            command, argv = split_shell_command(_str(item.get("command")) or "")
            exit_code = _int(item.get("exit_code"))
            if finished and status in ("completed", "failed") and exit_code is not None:
                executed = Executed.YES
            elif status == "declined":
                executed = Executed.NO
            else:
                executed = Executed.UNKNOWN
            output = _str(item.get("aggregated_output"))
            yield from self._command(
                lineno,
                turn_id,
                command=command,
                argv=argv,
                cwd=_str(item.get("cwd")),
                exit_code=exit_code,
                output=output,
                duration=None,
                call_id=item_id,
                executed=executed,
                status=status,
            )
        elif item_type == "file_change":
            if finished and status in ("completed", "failed"):
                executed = Executed.YES
            elif status == "declined":
                executed = Executed.NO
            else:
                executed = Executed.UNKNOWN
            success = {"completed": True, "failed": False}.get(status or "") if finished else None
            yield PatchItem(
                line=lineno,
                turn_id=turn_id,
                files=_thread_changes(item.get("changes")),
                success=success,
                tool="file_change",
                call_id=item_id,
                origin=Origin.STREAM,
                executed=executed,
            )
        elif item_type == "mcp_tool_call":
            server = _str(item.get("server")) or "?"
            tool = _str(item.get("tool")) or "?"
            error = item.get("error")
            result_text, ok = _mcp_result_text(item.get("result"))
            if isinstance(error, dict) and error.get("message"):
                result_text, ok = excerpt(_json_text(error.get("message"))), False
            if status == "failed":
                ok = False
            elif status == "completed" and ok is None:
                ok = True
            yield self._tool(
                lineno, turn_id, f"mcp__{server}__{tool}", item.get("arguments"), result_text, ok,
                item_id, finished and status in ("completed", "failed"),
            )
        elif item_type == "collab_tool_call":
            args = {k: item.get(k) for k in ("prompt", "receiver_thread_ids", "sender_thread_id") if k in item}
            states = item.get("agents_states")
            ok = {"completed": True, "failed": False}.get(status or "")
            yield self._tool(
                lineno, turn_id, _str(item.get("tool")) or "collab_tool_call", args,
                excerpt(_json_text(states)) if states else None, ok, item_id,
                finished and status in ("completed", "failed"),
            )
        elif item_type == "web_search":
            query = _str(item.get("query")) or ""
            action = item.get("action")
            yield self._tool(
                lineno, turn_id, "web_search", query if not action else {"query": query, "action": action},
                None, True if finished else None, item_id, finished,
            )
        elif item_type == "todo_list":
            steps = item.get("items")
            lines = []
            for step in steps if isinstance(steps, list) else ():
                if isinstance(step, dict):
                    mark = "x" if step.get("completed") else " "
                    lines.append(f"[{mark}] {_str(step.get('text')) or ''}")
            yield self._tool(lineno, turn_id, "update_plan", "\n".join(lines), None, None, item_id, finished)
        elif item_type == "plan":
            yield self._tool(
                lineno, turn_id, "plan", _str(item.get("text")) or "", None, None, item_id, finished
            )
        elif item_type == "error":
            # Non-fatal: real streams use it for warnings (corpus code_mode_flag); never a run failure.
            yield Notice(line=lineno, turn_id=turn_id, category="warning", message=_str(item.get("message")) or "")

    def _tool(
        self,
        lineno: int,
        turn_id: str | None,
        name: str,
        arguments: object,
        result: str | None,
        success: bool | None,
        call_id: str | None,
        ran: bool,
    ) -> ToolCallItem:
        return ToolCallItem(
            line=lineno,
            turn_id=turn_id,
            name=name,
            arguments=excerpt(_json_text(arguments)),
            result=result,
            success=success,
            call_id=call_id,
            origin=Origin.STREAM,
            executed=Executed.YES if ran else Executed.UNKNOWN,
        )

    def _command(
        self,
        lineno: int,
        turn_id: str | None,
        *,
        command: str,
        argv: tuple[str, ...] | None,
        cwd: str | None,
        exit_code: int | None,
        output: str | None,
        duration: float | None,
        call_id: str | None,
        executed: Executed,
        status: str | None,
    ) -> Iterator[AnyItem]:
        """A ShellCommand, then its full output (RawOutput), in the order the rollout reader gives them
        (the assembler puts a TestRun after the command when it ran a test runner, as for rollouts)."""
        sc = ShellCommand(
            line=lineno,
            turn_id=turn_id,
            command=command,
            argv=argv,
            cwd=cwd,
            exit_code=exit_code,
            output=excerpt(output) if output is not None else None,
            output_chars=len(output) if output else 0,
            duration_s=duration,
            tool="command_execution",
            call_id=call_id,
            origin=Origin.STREAM,
            executed=executed,
            status=status,
        )
        if output:
            self._full_output[id(sc)] = output  # test runs are read from the whole output (assembly)
        yield sc
        if output:
            yield RawOutput(line=lineno, turn_id=turn_id, call_id=call_id, tool="command_execution", text=output)

    # ------------------------------------------------- protocol stream (≤0.40)

    def _protocol(self, lineno: int, obj: dict[str, Any]) -> Iterator[AnyItem]:
        msg = obj["msg"]
        if not isinstance(msg, dict):
            raise _Malformed("'msg' is not an object")
        kind = msg.get("type")
        if not isinstance(kind, str):
            raise _Malformed("msg without a string type")
        if kind in _PROTOCOL_NOISE:
            self._noise(kind)
            return
        handler = _PROTOCOL_HANDLERS.get(kind)
        if handler is None:
            self._unknown(kind)
            return
        self._decoded()
        yield from handler(self, lineno, msg)

    def _p_session_configured(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        self._thread_id = self._thread_id or _str(msg.get("session_id"))  # the first run's (QA2 F7)
        self._model = _str(msg.get("model")) or self._model
        return iter(())

    def _p_task_started(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._start_turn(protocol=True)

    def _p_task_complete(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        last = _str(msg.get("last_agent_message"))
        if self._held is None and last and self._turn_messages == 0:
            yield from self._hold(last, lineno, self._turn_id())
        yield from self._close_turn(completed=True)

    def _p_turn_aborted(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        reason = _str(msg.get("reason")) or "unknown reason"
        yield from self._failure_notice(lineno, "turn_aborted", f"turn aborted: {reason}")
        yield from self._close_turn(completed=False)

    def _p_error(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._failure_notice(lineno, "error", _str(msg.get("message")) or "error")

    def _p_stream_error(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        # A transient retry ("Reconnecting…"): shown, never a run failure.
        yield Notice(
            line=lineno, turn_id=self._turn_id(), category="stream_error", message=_str(msg.get("message")) or ""
        )

    def _p_agent_message(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._hold(_str(msg.get("message")) or "", lineno, self._turn_id(), _str(msg.get("phase")))

    def _p_user_message(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        yield UserMessage(line=lineno, turn_id=self._turn_id(), text=_str(msg.get("message")) or "")

    def _p_reasoning(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        yield Reasoning(line=lineno, turn_id=self._turn_id(), text=_str(msg.get("text")) or "")

    def _p_token_count(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        if "info" in msg:
            usage = token_count_usage({"info": msg.get("info")})
            if usage is not None:
                self._usage_cumulative = usage
        else:  # 0.20/0.29: flat usage of one request
            self._add_usage(msg)
            self._usage_flat += 1
        return iter(())

    def _p_exec_begin(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        call_id = _str(msg.get("call_id"))
        if call_id is not None:
            self._open[f"proto:exec:{call_id}"] = _Open(data=msg, line=lineno, turn_id=self._turn_id())

    def _p_exec_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        call_id = _str(msg.get("call_id"))
        begin = self._open.pop(f"proto:exec:{call_id}", None) if call_id is not None else None
        merged = dict(begin.data) if begin else {}
        merged.update({k: v for k, v in msg.items() if v is not None})
        exit_code = _int(msg.get("exit_code"))
        status = _str(msg.get("status"))
        if status is None and exit_code is not None:
            status = "completed" if exit_code == 0 else "failed"
        if status == "declined":
            executed = Executed.NO
        elif exit_code is not None:
            executed = Executed.YES
        else:
            executed = Executed.UNKNOWN
        output = _str(msg.get("aggregated_output"))
        if output is None:
            parts = [p for p in (_str(msg.get("stdout")), _str(msg.get("stderr"))) if p]
            output = "".join(parts) if parts else None
        yield from self._proto_command(lineno, begin.turn_id if begin else self._turn_id(), merged, call_id,
                                       exit_code=exit_code, output=output, executed=executed, status=status,
                                       duration=_duration(msg.get("duration")))

    def _proto_command(
        self,
        lineno: int,
        turn_id: str | None,
        data: dict[str, Any],
        call_id: str | None,
        *,
        exit_code: int | None,
        output: str | None,
        executed: Executed,
        status: str | None,
        duration: float | None,
    ) -> Iterator[AnyItem]:
        raw_command = data.get("command")
        argv: tuple[str, ...] | None
        if isinstance(raw_command, list) and all(isinstance(a, str) for a in raw_command):
            argv = tuple(raw_command)
            command = command_from_argv(argv)
        elif isinstance(raw_command, str):
            command, argv = split_shell_command(raw_command)
        else:
            command, argv = "", None
        yield from self._command(
            lineno,
            turn_id,
            command=command,
            argv=argv,
            cwd=_str(data.get("cwd")),
            exit_code=exit_code,
            output=output,
            duration=duration,
            call_id=call_id,
            executed=executed,
            status=status,
        )

    def _p_patch_begin(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        call_id = _str(msg.get("call_id"))
        if call_id is not None:
            self._open[f"proto:patch:{call_id}"] = _Open(data=msg, line=lineno, turn_id=self._turn_id())

    def _p_patch_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        call_id = _str(msg.get("call_id"))
        begin = self._open.pop(f"proto:patch:{call_id}", None) if call_id is not None else None
        changes = msg.get("changes") if msg.get("changes") else (begin.data.get("changes") if begin else None)
        success = msg.get("success") if isinstance(msg.get("success"), bool) else None
        status = _str(msg.get("status"))
        stderr = _str(msg.get("stderr"))
        yield PatchItem(
            line=lineno,
            turn_id=begin.turn_id if begin else self._turn_id(),
            files=file_changes(changes),
            success=success,
            error=stderr if (success is False and stderr) else None,
            tool="file_change",
            call_id=call_id,
            origin=Origin.STREAM,
            executed=Executed.NO if status == "declined" else Executed.YES,
        )

    def _p_mcp_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        raw_invocation = msg.get("invocation")
        invocation: dict[str, Any] = raw_invocation if isinstance(raw_invocation, dict) else msg
        server = _str(invocation.get("server")) or "?"
        tool = _str(invocation.get("tool")) or "?"
        result_text, ok = _mcp_result_text(msg.get("result"))
        yield self._tool(
            lineno, self._turn_id(), f"mcp__{server}__{tool}", invocation.get("arguments"), result_text, ok,
            _str(msg.get("call_id")), True,
        )

    def _p_web_search_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        yield self._tool(
            lineno, self._turn_id(), "web_search", _str(msg.get("query")) or "", None, True,
            _str(msg.get("call_id")), True,
        )

    def _p_plan_update(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        steps = msg.get("plan")
        lines = [_str(msg.get("explanation"))] if msg.get("explanation") else []
        for step in steps if isinstance(steps, list) else ():
            if isinstance(step, dict):
                lines.append(f"[{_str(step.get('status')) or '?'}] {_str(step.get('step')) or ''}")
        yield self._tool(lineno, self._turn_id(), "update_plan", "\n".join(x for x in lines if x), None, True,
                         None, True)

    def _p_view_image(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self._flush_held(final=False)
        yield self._tool(lineno, self._turn_id(), "view_image", _str(msg.get("path")) or "", None, True,
                         _str(msg.get("call_id")), True)

    def _protocol_unfinished(self, entry: _Open) -> Iterator[AnyItem]:
        data = entry.data
        call_id = _str(data.get("call_id"))
        if "changes" in data:
            yield PatchItem(
                line=entry.line,
                turn_id=entry.turn_id,
                files=file_changes(data.get("changes")),
                tool="file_change",
                call_id=call_id,
                origin=Origin.STREAM,
                executed=Executed.UNKNOWN,
            )
            return
        yield from self._proto_command(
            entry.line,
            entry.turn_id,
            data,
            call_id,
            exit_code=None,
            output=None,
            executed=Executed.UNKNOWN,
            status=_str(data.get("status")) or "in_progress",
            duration=None,
        )


_THREAD_ITEM_TYPES = frozenset(
    {
        "agent_message",
        "reasoning",
        "command_execution",
        "file_change",
        "mcp_tool_call",
        "collab_tool_call",
        "web_search",
        "todo_list",
        "plan",
        "error",
    }
)

_PROTOCOL_HANDLERS = {
    "session_configured": ExecStreamDecoder._p_session_configured,
    "task_started": ExecStreamDecoder._p_task_started,
    "turn_started": ExecStreamDecoder._p_task_started,
    "task_complete": ExecStreamDecoder._p_task_complete,
    "turn_complete": ExecStreamDecoder._p_task_complete,
    "turn_aborted": ExecStreamDecoder._p_turn_aborted,
    "error": ExecStreamDecoder._p_error,
    "stream_error": ExecStreamDecoder._p_stream_error,
    "agent_message": ExecStreamDecoder._p_agent_message,
    "user_message": ExecStreamDecoder._p_user_message,
    "agent_reasoning": ExecStreamDecoder._p_reasoning,
    "agent_reasoning_raw_content": ExecStreamDecoder._p_reasoning,
    "token_count": ExecStreamDecoder._p_token_count,
    "exec_command_begin": ExecStreamDecoder._p_exec_begin,
    "exec_command_end": ExecStreamDecoder._p_exec_end,
    "patch_apply_begin": ExecStreamDecoder._p_patch_begin,
    "patch_apply_end": ExecStreamDecoder._p_patch_end,
    "mcp_tool_call_end": ExecStreamDecoder._p_mcp_end,
    "web_search_end": ExecStreamDecoder._p_web_search_end,
    "plan_update": ExecStreamDecoder._p_plan_update,
    "view_image_tool_call": ExecStreamDecoder._p_view_image,
}
