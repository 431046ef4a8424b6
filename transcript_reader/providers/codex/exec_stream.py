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
  (items of later lines wait behind it, bounded); an open item at the end of the stream makes
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

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from transcript_reader.errors import DecodeError
from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Format,
    Notice,
    TokenUsage,
    Unreadable,
)
from transcript_reader.providers.codex.exec_protocol import ProtocolEvents
from transcript_reader.providers.codex.exec_run import ExecStreamSummary, RunStatus, summary_of
from transcript_reader.providers.codex.exec_thread import ThreadEvents
from transcript_reader.providers.codex.exec_values import (
    EXCERPT_CHARS,
    HeldMessage,
    Malformed,
    OpenItem,
    excerpt,
    split_shell_command,
)
from transcript_reader.providers.codex.tokens import add_usage
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

__all__ = ["EXCERPT_CHARS", "ExecStreamDecoder", "ExecStreamSummary", "MAX_DEFERRED", "RunStatus", "excerpt",
           "iter_exec_stream", "split_shell_command"]

#: Items (notices, unreadable lines) kept waiting behind an undecided agent message at most.
MAX_DEFERRED = 10_000

#: The accounting classes, in the order ``feed`` compares their counts.
_CLASSES = ("decoded", "noise", "unknown", "unreadable", "blank")


def iter_exec_stream(
    lines: Iterable[tuple[int, str]], *, protocol: bool, path: str | None = None, strict: bool = False
) -> Iterator[AnyItem]:
    """Items of an exec stream, in order. Use :class:`ExecStreamDecoder` to also get the summary."""
    yield from ExecStreamDecoder(protocol=protocol, path=path, strict=strict).items(lines)


def _line_of(item: AnyItem) -> int:
    return item.line


class ExecStreamDecoder:
    """Stateful decoder of one exec stream: turns, held answers, items still open, the run's status.
    The events themselves are read by ``exec_thread.ThreadEvents`` (0.50+) and
    ``exec_protocol.ProtocolEvents`` (up to 0.40). Read :meth:`decoded` (decode records, as the reader
    does) or :meth:`items`, then :meth:`summary`."""

    def __init__(self, *, protocol: bool, path: str | None = None, strict: bool = False) -> None:
        self._format = Format.EXEC_PROTOCOL if protocol else Format.EXEC_JSON
        self._path = path
        self._strict = strict
        self.thread = ThreadEvents(self)
        self.proto = ProtocolEvents(self)
        # turn state
        self._turns = 0
        self._completed_turns = 0
        self._in_turn = False
        self._turn_from_protocol = False
        self._turn_messages = 0
        self._last_closed_turn_messages: int | None = None
        self._unfinished_turns = 0
        self._held: HeldMessage | None = None
        self._deferred: list[AnyItem] = []
        self._open: dict[str, OpenItem] = {}
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

    def items(self, lines: Iterable[tuple[int, str]]) -> Iterator[AnyItem]:
        """Decode ``(line_number, text)`` pairs; yields items in stream order (each at completion).

        While an agent message waits to learn whether it is the answer, items that need no decision
        (notices, unreadable lines) wait behind it, so the output stays in source-line order. A line that
        is not JSON waits for the next line: only the last line, without its newline, is a cut line.
        (The reader uses :meth:`decoded`, which gives the same items as decode records.)"""
        for lineno, raw in lines:
            yield from self._step(lineno, raw)
        yield from self._end()

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
            yield from _release(self, force=False)

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
        yield from _release(self, force=True)

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
                yield from self.proto.protocol(lineno, obj)
            elif "type" in obj:
                yield from self.thread.thread(lineno, obj)
            else:
                yield from self.thread.header(lineno, obj)
        except Malformed as exc:
            yield self._unreadable(lineno, str(exc))
        except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
            # Last line of defence for a value of a type no Codex wrote: the line is unreadable (counted
            # once), never a crash of the whole read.
            self._counts["decoded"] = decoded_before
            yield self._unreadable(lineno, f"unexpected value in a known event ({type(exc).__name__})")

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
        self._held = HeldMessage(text=text, line=lineno, turn_id=turn_id, phase=phase)
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
                yield from self.proto.protocol_unfinished(entry)
            else:
                yield from self.thread.thread_item(entry.data, entry.line, entry.turn_id, finished=False)

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

    def _add_usage(self, usage: dict[str, Any]) -> None:
        add_usage(self._usage_sum, usage)

    def summary(self) -> ExecStreamSummary:
        """The run's status, usage, turns and line accounting (complete once the stream was read)."""
        return summary_of(self)

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


def _release(d: ExecStreamDecoder, *, force: bool) -> Iterator[AnyItem]:
    """Items that no open item can precede any more, in source-line order.

    An item that started but has not completed is emitted, if it never completes, at the line of its
    last event (a ``todo_list`` started at line 3 came out after the final answer at line 9).
    So while one is open, items of later lines wait here; an item that completes is emitted at its
    completion line, which only raises the horizon. The sort is stable and everything else already
    arrives in order. Bounded like ``_deferred``: past the cap, order gives way."""
    buf = d._reorder
    if d._open and not force and len(buf) < MAX_DEFERRED:
        horizon = min(entry.line for entry in d._open.values())
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
