"""Assembly: decode records -> timeline items, for every format and provider. The one place where the
pairing rules live.

One job a module: ``state`` (the output order and what waits in it), ``turns`` (turns, final answers,
de-duplication), ``calls`` (call pairing and ``executed`` of direct calls), ``cells`` (code-mode cells),
``session`` (line accounting and ``SessionInfo``), ``stream`` (how an exec stream's items settle), ``rules`` (stateless rules and item builders);
``assembler`` drives them through a table that gives every record kind its handler.

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
  that started (``task_started``) but never completed, has no final answer (fail closed), a
  ``final_answer`` phase included; ``turns`` says when a turn was cut off or rewound.
- **Code mode** (``exec`` cells). The script is read with ``exec_grammar.analyze``; its entries carry
  ``origin: "script"``. The ``executed`` contract (a wrong yes/no is worse than unknown):

  * ``yes``: the entry matches an ``item_completed`` CommandExecution / FileChange record written between
    the cell's call and its output (same command after unwrapping ``bash -lc``; same files); it takes the
    record's exit code, output and cwd. A tool call entry is ``yes`` when an McpToolCall /
    DynamicToolCall / ImageView record of the cell names its tool; it takes the record's result and
    success.
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

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from transcript_reader.assembly import rules
from transcript_reader.assembly.calls import Calls
from transcript_reader.assembly.cells import Cells
from transcript_reader.assembly.session import Session
from transcript_reader.assembly.state import (
    Cell,
    CellRecord,
    Held,
    HeldFinal,
    HeldPrompt,
    OrderQueue,
    PendingCall,
)
from transcript_reader.assembly.stream import StreamItems
from transcript_reader.assembly.turns import Turns
from transcript_reader.errors import DecodeError
from transcript_reader.model import (
    AnyItem,
    Format,
    Notice,
    SessionInfo,
    ShellCommand,
    ToolCallItem,
    Unreadable,
)
from transcript_reader.providers.codex.common import parse_output
from transcript_reader.providers.jsontext import REPLACED_CHARACTERS
from transcript_reader.providers.records import (
    BLANK,
    DECODED,
    NOISE,
    UNKNOWN,
    UNREADABLE,
    Call,
    Decoded,
    ExecEnd,
    Message,
    Meta,
    NoticeRec,
    Output,
    PatchEnd,
    ReasoningRec,
    Rollback,
    RunReport,
    Tokens,
    ToolEnd,
    TurnAborted,
    TurnContext,
    TurnEnd,
    TurnStart,
    UsageEvent,
)


class Assembler:
    """Consume ``Decoded`` lines, yield timeline items in source order; then ``info()``."""

    def __init__(self, path: str, fmt: Format, *, strict: bool = False,
                 analyze: Callable[[str], Any] | None = None, live: bool = False) -> None:
        """``live``: the file is being followed (nothing is kept back for a later rollback)."""
        self.path = path
        self.fmt = fmt
        self.strict = strict
        self.q = OrderQueue()
        self.session = Session(self)
        self.turns = Turns(self, live=live)
        self.calls = Calls(self)
        self.stream = StreamItems(self)
        self.cells = Cells(self, analyze)
        #: every record kind and what becomes of it (a kind without an entry is a KeyError: a decoder
        #: emitting a new kind must give it a decision here)
        self.dispatch: dict[type, Callable[[Any, int, str | None], None]] = {
            Meta: self.session.on_meta,
            TurnContext: self.session.on_turn_context,
            Tokens: self.session.on_tokens,
            UsageEvent: self.session.on_usage,
            TurnStart: self.turns.on_turn_start,
            TurnEnd: self.turns.turn_end,
            TurnAborted: self.turns.on_aborted,
            Message: self.turns.message,
            ReasoningRec: self.turns.on_reasoning,
            Call: self.calls.call,
            Output: self._on_output,
            ExecEnd: self.calls.completion,
            PatchEnd: self.calls.completion,
            ToolEnd: self.calls.tool_end,
            NoticeRec: self._on_notice,
            RunReport: self.session.on_run_report,
            Rollback: self.turns.on_rollback,
        }

    def waiting(self) -> AnyItem | None:
        """A preview of the call at the head of the output order while it still has no result (a
        direct shell command or a code cell): what a live view shows as running. None otherwise."""
        slots = self.q.slots
        if not slots or slots[0].items is not None:
            return None
        owner = slots[0].owner
        if isinstance(owner, PendingCall) and owner.call.kind == "shell":
            c = owner.call
            return ShellCommand(line=owner.line, timestamp=owner.ts, turn_id=owner.turn, command=c.command,
                                argv=c.argv, cwd=rules.join_cwd(owner.cwd, c.cwd), tool=c.tool, call_id=c.call_id,
                                status="running")
        if isinstance(owner, Cell):
            return ToolCallItem(line=owner.line, timestamp=owner.ts, turn_id=owner.turn,
                                name=owner.call.name or owner.call.tool, call_id=owner.call.call_id,
                                script=owner.call.script)
        return None

    # ------------------------------------------------------------ driving

    def run(self, decoded: Iterable[Decoded]) -> Iterator[AnyItem]:
        # the per-line path is written out flat: it runs once per line of files of any size
        session = self.session
        acc = session.acc
        q = self.q.slots
        dispatch = self.dispatch
        kind_counts = session.kind_counts
        prompts = self.turns.prompts
        max_pending = rules.MAX_PENDING
        for d in decoded:
            cls = d.cls
            acc[cls] += 1
            ts = d.timestamp
            if cls != DECODED:
                session.account(d)
                if cls == UNREADABLE:
                    self.q.push([Unreadable(line=d.line, timestamp=ts, turn_id=self.turns.turn_id,
                                           reason=d.reason or "unreadable")])
            if ts:
                if session.first_ts is None:
                    session.first_ts = ts
                session.last_ts = ts
                session.ts_lines += 1
            for rec in d.records:
                if prompts.waiting:
                    prompts.before(rec)
                dispatch[type(rec)](rec, d.line, ts)
            if q:
                if len(q) > max_pending:
                    self._release_oldest()
                while q and q[0].items is not None:
                    slot = q.popleft()
                    # the slot and its owner (a call, a cell, a held message) point at each other: cut
                    # here, they are freed by their counts, not left for the cycle collector
                    slot.owner = None
                    for item in slot.items or ():
                        kind_counts[item.kind] += 1
                        yield item
        acc["lines"] = acc[DECODED] + acc[NOISE] + acc[UNKNOWN] + acc[UNREADABLE] + acc[BLANK]
        self._finish()
        yield from self._drain(force=True)

    def _drain(self, force: bool = False) -> Iterator[AnyItem]:
        q = self.q.slots
        if not force and len(q) > rules.MAX_PENDING:
            self._release_oldest()
        while q and q[0].items is not None:
            slot = q.popleft()
            slot.owner = None  # as in ``run``: no cycle left for the collector
            for item in slot.items or ():
                self.session.kind_counts[item.kind] += 1
                yield item

    def _release_oldest(self) -> None:
        """Pathological backlog: settle whatever the oldest slot waits for, as it stands."""
        owner = self.q.slots[0].owner
        if isinstance(owner, PendingCall):
            self.calls.resolve_call(owner, None, None, None)
            if owner.call.call_id:
                # its end record may still come: say then what the released item could not
                if len(self.calls.released_early) >= 256:
                    self.calls.released_early.pop(next(iter(self.calls.released_early)))
                self.calls.released_early[owner.call.call_id] = (owner.line, owner.call.command or owner.call.name)
        elif isinstance(owner, Cell | CellRecord):
            # settle every cell as it stands (a record waits for its cell): nothing claims "no" here
            for cell in list(self.cells.cells):
                self.cells.close_cell(cell, cell.output, parse_output(cell.output) if cell.output else None)
            self.cells.settle_closed(turn_over=False)
        elif isinstance(owner, Held):
            self.turns.settle_held(False)
        elif isinstance(owner, HeldFinal):
            self.turns.release_final()
        elif isinstance(owner, HeldPrompt):
            self.turns.prompts.settle()
        else:
            self.q.slots[0].items = self.q.slots[0].items or []

    # ------------------------------------------------------------ records without a collaborator of their own

    def _on_output(self, rec: Output, line: int, ts: str | None) -> None:
        self.calls.output(rec, line, ts)
        self.session.fork_handoff(rec, line, ts)

    def _on_notice(self, rec: NoticeRec, line: int, ts: str | None) -> None:
        if self.strict and rec.category == REPLACED_CHARACTERS:  # a strict reading accepts no damage
            raise DecodeError(rec.message, path=self.path, line=line)
        if rec.item:
            self.turns.interrupt()
        self.q.push([Notice(line=line, timestamp=ts, turn_id=self.turns.turn_id, category=rec.category,
                            message=rec.message)])

    # ------------------------------------------------------------ end

    def _finish(self) -> None:
        # the transcript ended: a turn that started but never completed has no final answer
        self.turns.prompts.settle()
        self.turns.settle_held(not self.turns.turn_started and not self.turns.turn_aborted)
        self.calls.settle_waiting()
        for cell in list(self.cells.cells):
            self.cells.close_cell(cell, cell.output, parse_output(cell.output) if cell.output else None)
        # a turn still open at the end of the file may yet have recorded a yielded command
        self.cells.settle_closed(turn_over=not self.turns.turn_started)
        self.turns.release_finals()
        for slot in self.q.slots:
            if slot.items is None:
                slot.items = []

    def info(self) -> SessionInfo:
        return self.session.info()
