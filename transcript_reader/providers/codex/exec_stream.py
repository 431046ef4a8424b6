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

Each line becomes one :class:`~providers.records.Decoded` with the same decode records the rollout
decoders give (``exec_events`` reads the events); the assembler makes the timeline of them, as for every
format: turns and their answers, pairing an item's events, ``executed``, test runs, excerpts. What this
decoder keeps is what the stream says about its turns and its run (seed ``000_…`` and seed ``002_…``):

- Turn boundaries, and the final-answer rule of an exec stream, which the turn records name
  (``last_item_answers``): only the last ``agent_message`` of a turn, when the turn completes, is the
  answer; a turn that failed or was cut has no final answer (fail closed).
- Items still open when their turn ends or the stream stops are ended ``in_progress`` (``executed:
  unknown``, in the place of their last event); an open item at the end of the stream makes the run
  ``incomplete``.
- Run status: ``failed`` (a ``turn.failed``, a protocol ``error`` or ``turn_aborted``, or a top-level
  ``error`` that no ``turn.completed`` follows; the first message wins), else ``incomplete`` (a turn or
  item still open at the end, a cut last line, a run that never started a turn), else ``no_report`` (the
  last turn produced no agent message, or the stream is empty), else ``completed``.
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

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from transcript_reader.model import Format
from transcript_reader.providers.codex.exec_events import StreamEvents, proto_command
from transcript_reader.providers.codex.exec_run import ExecStreamSummary, RunState, RunStatus, summary_of
from transcript_reader.providers.codex.exec_values import Malformed, OpenItem, as_str, split_shell_command
from transcript_reader.providers.codex.tokens import add_usage
from transcript_reader.providers.jsontext import REPLACED_CHARACTERS, loads_repaired
from transcript_reader.providers.records import (
    BLANK,
    DECODED,
    FLUSH,
    NOISE,
    UNKNOWN,
    UNREADABLE,
    Decoded,
    Meta,
    NoticeRec,
    Record,
    RunReport,
    Tokens,
    TurnEnd,
    TurnStart,
)

__all__ = ["ExecStreamDecoder", "ExecStreamSummary", "RunStatus", "split_shell_command"]


class ExecStreamDecoder(RunState):
    """Stateful decoder of one exec stream: its turns, the items still open, the run's status, usage and
    line accounting. Feed it lines (:meth:`line`, or :meth:`decoded` for a whole stream), then
    :meth:`close`; :meth:`summary` says how the run ended."""

    def __init__(self, *, protocol: bool, path: str | None = None) -> None:
        super().__init__(Format.EXEC_PROTOCOL if protocol else Format.EXEC_JSON)
        self.path = path
        self.events = StreamEvents(self)
        self._cls = DECODED
        self._name: str | None = None

    # ------------------------------------------------------------------ lines

    def decoded(self, lines: Iterable[tuple[int, bytes, bool]], *, summary: bool = True) -> Iterator[Decoded]:
        """Every ``(number, raw line, complete)`` as one :class:`Decoded`, then the ``FLUSH`` entry
        (:meth:`close`). ``complete`` False: the line is the last one and has no newline."""
        for lineno, raw, complete in lines:
            yield self.line(lineno, raw, complete)
        yield self.close(summary=summary)

    def line(self, lineno: int, raw: bytes, complete: bool = True) -> Decoded:
        """One line of the stream and its records. A line that is not JSON is unreadable; the last one,
        without its newline, was cut mid-write."""
        text = raw.strip()
        if not text:  # a run of empty lines comes as one (source.iter_lines)
            k = raw.count(b"\n") or 1
            self.counts["lines"] += k
            self.counts[BLANK] += k
            return Decoded(lineno, BLANK, count=k)
        self.counts["lines"] += 1
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            fixed = loads_repaired(text)  # a bad character costs that character, with a notice
            if fixed is not None:
                d = self._object(lineno, fixed.value)
                d.records = (*d.records, NoticeRec(REPLACED_CHARACTERS, fixed.notice()))
                return d
            if complete:
                return self.unreadable(lineno, f"invalid JSON: {exc}")
            self.cut_line = lineno
            d = self.unreadable(lineno, "truncated last line (cut mid-write)")
            d.cut = True
            return d
        return self._object(lineno, obj)

    def parsed(self, lineno: int, obj: Any) -> Decoded:
        """One line of the stream, already parsed (a file that mixes shapes hands its exec lines here)."""
        self.counts["lines"] += 1
        return self._object(lineno, obj)

    def skipped(self, lineno: int, reason: str) -> Decoded:
        """A line the reader did not read (over the line cap): unreadable, with the reason."""
        self.counts["lines"] += 1
        return self.unreadable(lineno, reason)

    def _object(self, lineno: int, obj: Any) -> Decoded:
        if not isinstance(obj, dict):
            return self.unreadable(lineno, f"a JSON {type(obj).__name__}, not an object")
        self._cls, self._name = DECODED, None
        try:
            if "msg" in obj:
                recs = self.events.protocol(obj)
            elif "type" in obj:
                recs = self.events.thread(obj)
            else:
                recs = self.events.header(obj)
        except Malformed as exc:
            return self.unreadable(lineno, str(exc))
        except (TypeError, AttributeError, KeyError, ValueError, IndexError, StopIteration) as exc:
            # Last line of defence for a value of a type no Codex wrote: the line is unreadable (counted
            # once), never a crash of the whole read.
            return self.unreadable(lineno, f"unexpected value in a known event ({type(exc).__name__})")
        cls = self._cls
        self.counts[cls] += 1
        if cls == DECODED:
            self.anything = True
        return Decoded(lineno, cls, self._name, tuple(recs))

    def unreadable(self, lineno: int, reason: str) -> Decoded:
        self.counts[UNREADABLE] += 1
        return Decoded(lineno, UNREADABLE, reason=reason)

    def noise(self, name: str) -> None:
        self._cls, self._name = NOISE, name
        self.noise_types[name] += 1

    def unknown(self, name: str) -> None:
        self._cls, self._name = UNKNOWN, name
        self.unknown_types[name] += 1

    # ------------------------------------------------------------------ turns

    def start_turn(self, *, protocol: bool) -> list[Record]:
        recs: list[Record] = self.loose_end()
        if self.in_turn:
            if self.turn_from_protocol:
                # A protocol stream never prints task_complete: the next task_started ends the turn.
                recs += self.close_turn(completed=True, why="the next turn started")
            else:
                self.unfinished_turns += 1
                recs += self.close_turn(completed=False, why="the next turn started before it completed")
        self.turns += 1
        self.in_turn = True
        self.turn_from_protocol = protocol
        self.turn_messages = 0
        recs.append(TurnStart(f"turn-{self.turns}", last_item_answers=True))
        return recs

    def close_turn(self, *, completed: bool, why: str = "") -> list[Record]:
        """End the current turn (its held message is the answer only if it completed), then the items
        it left open; ``why`` says what ended it (for the notice of a command it left running)."""
        recs: list[Record] = [TurnEnd(f"turn-{self.turns}" if self.turns else None, completed=completed,
                                      last_item_answers=True)]
        recs += self.open_ends(why or ("its turn completed" if completed else "its turn failed"))
        if completed:
            self.completed_turns += 1
        self.last_closed_turn_messages = self.turn_messages
        self.in_turn = False
        self.loose = False  # a message before a turn.completed that no turn.started opened: that turn's
        return recs

    def message(self) -> None:
        """An agent message was given (a turn's count; one outside any turn is loose)."""
        self.turn_messages += 1
        self.loose = self.loose or not self.in_turn

    def loose_end(self) -> list[Record]:
        """A message outside any turn answers nothing: the end of "no turn" says so (the next turn, or
        the end of the stream)."""
        if not self.loose:
            return []
        self.loose = False
        return [TurnEnd(None, completed=False, last_item_answers=True)]

    def open_ends(self, why: str) -> list[Record]:
        """The items that never completed, each ended as its last event left it: ``executed`` unknown.
        A command or file change left open gets a notice after its end, saying what ended it (``why``):
        its exit is unknown, never a success (fixture exec_streams/running_at_turn_end)."""
        pending, self.open = self.open, {}
        recs: list[Record] = []
        for key, entry in pending.items():
            if key.startswith("proto:"):
                recs += self.events.protocol_unfinished(entry)
            else:
                recs += self.events.thread_item(entry.data, finished=False)
            what = unfinished_what(entry, key)
            if what is not None:
                recs.append(NoticeRec("still_running", f"{what} was still running when {why}: "
                                                       "its exit is unknown"))
        return recs

    def close(self, *, summary: bool = True, own_header: bool = True) -> Decoded:
        """The end of the stream: the ``FLUSH`` entry, with what the end settles (the last turn, items
        still open) and, with ``summary``, what the run reports about itself (``Meta``, ``Tokens``,
        ``RunReport``); ``own_header`` False: the session is named by another header in the file (a
        rollout the stream was appended to), not by the stream's thread id."""
        recs: list[Record] = []
        if not self.finished:
            self.finished = True
            if self.pending_error is not None:  # an error no turn.completed followed: it ended the run
                self.fail(self.pending_error)
                self.pending_error = None
            if self.in_turn:
                # A protocol turn ends with the stream (task_complete was never printed), unless the stream
                # was cut: a half-written last line or a call still running.
                completed = self.turn_from_protocol and not self.open and self.cut_line is None
                if not completed:
                    self.unfinished_turns += 1
                recs += self.close_turn(completed=completed, why="the stream ended")
            else:
                if self.open:  # items started outside any turn and never completed
                    self.unfinished_turns += 1
                recs += self.open_ends("the stream ended")
                recs += self.loose_end()
        if summary:
            s = self.summary()
            recs += [Meta(session_id=s.thread_id if own_header else None, cwd=s.cwd, model=s.model, originator="codex_exec"),
                     Tokens(s.usage), RunReport(s.run_status.value, s.run_error, s.turns)]
        return Decoded(self.counts["lines"] + 1, FLUSH, records=tuple(recs))

    # ------------------------------------------------------------------ the run

    def fail(self, message: str) -> None:
        if self.failure is None:
            self.failure = message or "(no message)"

    def failure_notice(self, category: str, message: str) -> list[Record]:
        """A terminal failure (protocol ``error``, ``turn_aborted``) and its notice."""
        self.fail(message)
        return self.error_notice(message, category)

    def error_notice(self, message: str, category: str = "error") -> list[Record]:
        """A notice per distinct message in a row (turn.failed repeats the ``error`` event before it)."""
        if message == self.last_failure_notice:
            return []
        self.last_failure_notice = message
        return [NoticeRec(category, message)]

    def add_usage(self, usage: dict[str, Any]) -> None:
        add_usage(self.usage_sum, usage)

    def summary(self) -> ExecStreamSummary:
        """The run's status, usage, turns and line accounting (complete once the stream was read)."""
        return summary_of(self)


def unfinished_what(entry: OpenItem, key: str) -> str | None:
    """What a command or file change its turn's end found open is, in a notice's words (None for
    other items: a message or a tool call left open says nothing about a process still running)."""
    data = entry.data
    if key.startswith("proto:"):
        if "changes" in data:
            return "the patch " + (as_str(data.get("call_id")) or "")
        return f"the command {proto_command(data, as_str(data.get('call_id'))).command!r}"
    item_type = data.get("type")
    if item_type == "command_execution":
        return f"the command {split_shell_command(as_str(data.get('command')) or '')[0]!r}"
    if item_type == "file_change":
        return "the file change " + (as_str(data.get("id")) or "")
    return None
