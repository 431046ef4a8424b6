"""Call pairing and ``executed``: a direct call waits in its place for its output or completion record,
then becomes its item (a shell command, a stdin write, a patch, a tool call), with the evidence that
decides whether it ran."""

from __future__ import annotations

import dataclasses
from collections import deque
from itertools import islice
from typing import TYPE_CHECKING, Any

from transcript_reader.assembly import rules, stream
from transcript_reader.assembly.rules import (
    direct_executed,
    excerpt,
    excerpt_or_none,
    join_cwd,
    patch_files,
    patch_success,
    record_items,
    test_run_items,
    with_diffs,
)
from transcript_reader.assembly.state import Cell, CellRecord, Chunks, PendingCall
from transcript_reader.model import (
    AnyItem,
    Executed,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    ShellCommand,
    StdinWrite,
    TestRun,
    ToolCallItem,
)
from transcript_reader.providers.codex import refusals
from transcript_reader.providers.codex.common import ParsedOutput, parse_output
from transcript_reader.providers.codex.patch_text import patch_hunks
from transcript_reader.providers.records import Call, ExecEnd, Output, PatchEnd, ToolEnd

if TYPE_CHECKING:
    from transcript_reader.assembly.peers import Peers


class Calls:
    """Direct calls waiting for their output, the running unified-exec sessions, and what was settled."""

    def __init__(self, a: Peers) -> None:
        self.a = a
        self.calls: dict[str, PendingCall] = {}
        # unified-exec sessions of direct shell calls still running, by session id (entries dropped when
        # their call settles): later write_stdin outputs on the session belong to that command
        self.sessions: dict[str, PendingCall] = {}
        self.anon = 0
        self.resolved_ids: deque[str] = deque(maxlen=256)
        # calls released unanswered by a backlog over MAX_PENDING: call_id -> (line, command)
        self.released_early: dict[str, tuple[int, str]] = {}
        self.resolved_set: set[str] = set()
        # a call left without output at task_complete proves it did not run only in a session that shows
        # Codex writing outputs, or that a released Codex wrote (cli_version); hand-written fixtures often
        # omit outputs (public tinyai)
        self.outputs_seen = False
        # calls waiting under an id another waiting call already has, by id, oldest first (their keys in
        # ``calls``): an output, end or record with that id goes to the oldest still waiting
        self.dups: dict[str, deque[str]] = {}

    def call(self, c: Call, line: int, ts: str | None) -> None:
        if c.kind == "cell":
            self.a.cells.open_cell(c, line, ts)
            return
        if c.origin is Origin.STREAM:
            self.a.stream.call(c, line, ts)
            return
        if c.result is not None:  # complete on its own line (web_search_call, image_generation_call)
            executed = Executed.UNKNOWN if c.success is None else Executed.YES  # a failed call still ran
            self.a.q.push([ToolCallItem(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, name=c.name,
                                     arguments=excerpt(c.arguments), result=c.result or None, success=c.success,
                                     call_id=c.call_id, executed=executed)])
            return
        key = c.call_id
        if key is None or key in self.calls:
            self.anon += 1
            dup, key = key, f"\0anon{self.anon}"
            if dup is not None:  # a second call waiting under the same id: outputs pair by order
                self.dups.setdefault(dup, deque()).append(key)
        slot = self.a.q.pending()
        pc = PendingCall(c, line, ts, self.a.turns.turn_id, slot, self.a.turns.turn_cwd, key=key)
        slot.owner = pc
        self.calls[key] = pc

    def waiting(self, cid: str, line: int, ts: str | None) -> PendingCall | None:
        """The call an output, end or record with id ``cid`` belongs to: the only one waiting with that id,
        or, when several in this turn share it (a transcript that reuses an id), the oldest, by order, with
        a notice that says the pairing is ambiguous (calls of earlier turns were settled when their turn
        ended, so the turn decides first)."""
        pc = self.calls.get(cid)
        keys = self.dups.get(cid) if self.dups else None
        if keys is None:
            return pc
        while keys and keys[0] not in self.calls:
            keys.popleft()
        if pc is None:
            if not keys:
                del self.dups[cid]
                return None
            pc = self.calls[keys.popleft()]
            if not keys:
                del self.dups[cid]
            return pc
        if keys:  # the first few lines only: a hostile file reusing one id stays linear
            self.ambiguous(cid, [pc.line, *(self.calls[k].line for k in islice(keys, 8))], line, ts,
                           1 + len(keys))
        return pc

    def ambiguous(self, cid: str, lines: list[int], line: int, ts: str | None, count: int | None = None) -> None:
        where = ", ".join(str(n) for n in lines[:8]) + (", …" if (count or len(lines)) > 8 else "")
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, category="ambiguous",
                              message=f"{count or len(lines)} calls waiting in this turn share the call id {cid!r} (lines "
                                      f"{where}): this result was paired with the earliest, by order; the "
                                      f"transcript does not say which call it answers")])

    def output(self, o: Output, line: int, ts: str | None) -> None:
        self.outputs_seen = True
        cid = o.call_id or ""
        pc = self.waiting(cid, line, ts)
        parsed = ParsedOutput(body=o.text, rejected=True) if o.declined else parse_output(o.text)  # Output.declined
        if pc is not None:
            c = pc.call
            if c.kind == "shell" and parsed.running_session is not None and pc.exec_end is None \
                    and not parsed.rejected:
                self.hold_running(pc, o, parsed, line, ts)
                return
            if c.kind == "stdin" and c.session_id is not None and c.session_id in self.sessions:
                self.session_chunk(c.session_id, parsed)
            self.resolve_call(pc, o, parsed, (line, ts))
            if pc.call.tool == "wait" and pc.call.cell_id and (
                    parsed.script_status not in (None, "running") or parsed.verdict is not None):
                # the cell ended, or Codex said the wait timed out / was cut off: the cell is over
                cell = self.a.cells.running_cells.get(pc.call.cell_id)
                if cell is not None:
                    self.a.cells.close_cell(cell, o.text, parsed)
            return
        for cell in self.cells_for(o.call_id, line, ts):
            if parsed.script_status == "running" and parsed.cell_id:
                cell.cell_id = parsed.cell_id
                self.a.cells.running_cells[parsed.cell_id] = cell
                cell.output = o.text
                self.raw(o.text, line, ts, o.call_id, "exec")
                return
            if parsed.script_status is None and parsed.verdict is None:
                # no status header: a notify() output sent while the cell still runs
                # (codex-formats.md §4); the cell stays open for its records and final output
                cell.output = o.text
                self.raw(o.text, line, ts, o.call_id, "exec")
                return
            self.a.cells.close_cell(cell, o.text, parsed)
            self.raw(o.text, line, ts, o.call_id, "exec")
            return
        # an output whose call we never saw (history replayed after compaction, or notify() repeats)
        if o.call_id not in self.resolved_set:  # its failure is the only trace of that call: shown
            self.a.q.push(rules.orphan_failure(parsed, line, ts, self.a.turns.turn_id, o.call_id))
        self.raw(o.text, line, ts, o.call_id, None)

    def cells_for(self, cid: str | None, line: int, ts: str | None) -> list[Cell]:
        """The open cell an output with id ``cid`` belongs to (as a list: none or one): the only one, or of
        several sharing the id, the oldest of this turn's (by order, said ambiguous); a cell of an earlier
        turn (left running) only when no cell of this turn has the id."""
        if cid is None:
            return []
        found = [cell for cell in self.a.cells.cells if cell.call.call_id == cid]
        if len(found) <= 1:
            return found
        turn = self.a.turns.turn_id
        mine = [cell for cell in found if cell.turn == turn] or found
        if len(mine) > 1:
            self.ambiguous(cid, [cell.line for cell in mine], line, ts)
        return mine[:1]

    def hold_running(self, pc: PendingCall, o: Output, parsed: ParsedOutput, line: int, ts: str | None) -> None:
        """The command kept running (unified exec): its item waits, in its place, for the end event /
        CommandExecution record (authoritative), or else takes the exit a later write_stdin output on its
        session reports when its turn is over (public codemie fixture: the end event comes after the
        output, and in 18 of its 43 such commands after the write_stdin output that saw the exit too)."""
        pc.out, pc.parsed, pc.chunks = o, parsed, Chunks(parsed.body)
        if parsed.running_session is not None:
            self.sessions[parsed.running_session] = pc
        self.raw(o.text, line, ts, o.call_id, pc.call.tool)

    def session_chunk(self, session_id: str, parsed: ParsedOutput) -> None:
        """A write_stdin output on a running command's session: more of its output, perhaps its exit."""
        pc = self.sessions[session_id]
        if parsed.rejected:
            return
        if pc.chunks is not None:
            pc.chunks.add(parsed.body)
        if parsed.exit_code is not None and parsed.running_session is None:
            pc.stdin_exit = parsed.exit_code

    def raw(self, text: str, line: int, ts: str | None, call_id: str | None, tool: str | None) -> None:
        self.a.q.push([RawOutput(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, call_id=call_id, tool=tool, text=text)])

    def completion(self, rec: ExecEnd | PatchEnd, line: int, ts: str | None) -> None:
        if rec.record:
            self.a.session.records_seen = True
        pc = self.waiting(rec.call_id or "", line, ts)
        if pc is not None and pc.call.origin is Origin.STREAM:
            self.a.stream.settle(pc, rec)  # an item its turn's end left unfinished
            return
        if pc is not None:
            if isinstance(rec, ExecEnd):
                pc.exec_end = rec
            else:
                pc.patch_end = rec
            if pc.out is not None:
                # the output already said "Process running": this end settles the command
                self.resolve_call(pc, None, None, None)
            return
        late = self.released_early.pop(rec.call_id or "", None) if self.released_early else None
        if late is not None or (rec.call_id or "") in self.resolved_set:
            if late is not None and isinstance(rec, ExecEnd) and rec.exit_code is not None:
                # the call's item went out without its result, more than MAX_PENDING
                # items having waited behind it; its exit code is told here rather than dropped
                self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, category="late_result",
                                   message=f"the command at line {late[0]} ({late[1][:200]}) ended with exit "
                                           f"code {rec.exit_code}; its item was shown before this result "
                                           f"arrived ({rules.MAX_PENDING} items waited behind it)")])
            return  # evidence arriving after its output: the call is already settled
        self.evidence(rec, line, ts, self.record_target(rec), late=not self.a.cells.cells)

    def tool_end(self, rec: ToolEnd, line: int, ts: str | None) -> None:
        """A tool call's completion: its direct call's, or (inside a cell, or a record after one) evidence
        for the cell's script entry calling that tool; otherwise its own ``record`` item."""
        cid = rec.call_id or ""
        pc = self.waiting(cid, line, ts)
        if pc is not None and pc.call.origin is Origin.STREAM:
            self.a.stream.settle(pc, rec)
            return
        if pc is not None:
            pc.tool_end = rec
            return
        if cid in self.resolved_set:
            return
        target = self.record_target(rec) if self.a.cells.cells or rec.record else None
        self.evidence(rec, line, ts, target, late=not self.a.cells.cells)
        if cid:
            # Codex may write a tool's completion twice (a DynamicToolCall record and its
            # dynamic_tool_call_response event): the first one stands for the call
            self.mark_resolved(cid)

    def record_target(self, rec: ExecEnd | PatchEnd | ToolEnd) -> Cell | None:
        """The cell a record no direct call claims belongs to: the open cell (of several, the one whose
        script has a matching entry), else the closed cell of a late record, else none."""
        cells = self.a.cells
        if cells.cells:
            return cells.cells[-1] if len(cells.cells) == 1 else cells.cell_for_record(rec, cells.cells)
        return cells.cell_for_record(rec) if cells.closed_cells else None

    def evidence(self, rec: ExecEnd | PatchEnd | ToolEnd, line: int, ts: str | None, target: Cell | None,
                 *, late: bool = False) -> None:
        """A completion no direct call claims: a record of ``target``'s script (its slot waits, in place,
        for the cell to settle which entry it proves), else an item of its own. ``late``: written after
        the cell's output (a command the cell left running)."""
        if target is not None:
            slot = self.a.q.pending()
            cr = CellRecord(rec, line, ts, slot, late=late)
            slot.owner = cr
            target.records.append(cr)
            return
        self.a.q.push(record_items(rec, line, ts, self.a.turns.turn_id, None))

    def mark_resolved(self, cid: str | None) -> None:
        if cid is None:
            return
        if len(self.resolved_ids) == self.resolved_ids.maxlen:
            self.resolved_set.discard(self.resolved_ids[0])
        self.resolved_ids.append(cid)
        self.resolved_set.add(cid)

    def resolve_call(self, pc: PendingCall, out: Output | None, parsed: ParsedOutput | None,
                      where: tuple[int, str | None] | None) -> None:
        c = pc.call
        if pc.key is not None and self.calls.get(pc.key) is pc:
            # by its key: a scan copied the whole table for each call settled, quadratic when thousands
            # wait (a stream of tool uses that never got a result, released as the queue fills)
            del self.calls[pc.key]
        self.mark_resolved(c.call_id)
        if pc.out is not None:
            # a running command settled by its end record, its turn ending or the end of the file; its
            # output's raw_output item was placed when it arrived
            out, parsed, where = pc.out, pc.parsed, None
            sid = parsed.running_session if parsed is not None else None
            if sid is not None and self.sessions.get(sid) is pc:
                del self.sessions[sid]
        rejected = parsed is not None and parsed.rejected
        said = parsed.verdict if parsed is not None else None
        # an answer proves the call ran, except a refusal (it did not) or an abort (it may not have:
        # codex-rs answers an interrupted call with "aborted by user" whether or not it had started)
        answered = out is not None and said != refusals.ABORTED
        items: list[AnyItem]
        if c.kind == "shell":
            items = shell_from_call(pc, answered, parsed, rejected)
        elif c.kind == "patch":
            items = [patch_from_call(pc, answered, parsed, rejected)]
        elif c.kind == "stdin":
            items = [stdin_item(pc, parsed, answered)]
        else:
            items = [tool_call_item(pc, out, parsed, answered)]
        if (out is None and pc.turn_done and (self.outputs_seen or self.a.session.meta.version is not None)
                and c.origin is not Origin.STREAM
                and pc.exec_end is None and pc.patch_end is None and pc.tool_end is None):
            # the turn completed and Codex never answered the call: it did not run (0.169+ ignores a
            # local_shell_call: corpus realcodex/*/ignored_local_shell_call)
            extra: dict[str, Any] = {"status": "not_run"} if c.kind == "shell" else {}
            items = [dataclasses.replace(i, executed=Executed.NO, **extra)  # type: ignore[call-arg,arg-type]
                     for i in items if not isinstance(i, TestRun)]
        pc.slot.items = items
        if out is not None and where is not None:
            self.raw(out.text, where[0], where[1], c.call_id, c.tool)

    def settle_waiting(self) -> None:
        """Every call still waiting is settled without an output, in order. The table is emptied first:
        ``resolve_call`` looks its call up by a scan, so settling thousands one by one was quadratic (a
        stream of 30,000 tool uses that never got a result took minutes)."""
        pending = list(self.calls.values())
        self.calls.clear()
        self.dups.clear()
        for pc in pending:
            self.resolve_call(pc, None, None, None)

    def settle_turn_calls(self) -> None:
        """A new turn began: calls still waiting never got an output (unknown, or no when their turn
        completed: see _resolve_call); open cells close with what they printed so far."""
        self.settle_waiting()
        for cell in list(self.a.cells.cells):
            if cell.cell_id is None or cell.cell_id not in self.a.cells.running_cells:
                self.a.cells.close_cell(cell, cell.output, parse_output(cell.output) if cell.output else None)
        self.a.cells.settle_closed(turn_over=True)


def shell_from_call(pc: PendingCall, answered: bool, parsed: ParsedOutput | None,
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
    said = parsed.verdict if parsed is not None else None
    if rejected:
        status = "rejected"
    elif said is not None and ee is None:
        status = said  # aborted (the turn was interrupted), timed_out, failed
    elif status is None and exit_code is not None:
        status = "completed" if exit_code == 0 else "failed"
    elif session is not None:
        status = status or "running"
    cwd = ee.cwd if ee is not None and ee.cwd else join_cwd(pc.cwd, c.cwd)
    from_stream = c.origin is Origin.STREAM
    executed = stream.executed(pc) if from_stream else direct_executed(answered or ee is not None, rejected, ee)
    item = ShellCommand(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, command=c.command, argv=c.argv,
                        cwd=cwd, exit_code=exit_code, output=excerpt_or_none(body), output_chars=body_chars,
                        duration_s=duration, tool=c.tool, call_id=c.call_id, origin=c.origin,
                        executed=executed, status=status, session_id=session)
    return stream.shell_items(item, body) if from_stream else [item, *test_run_items(item, body)]

def patch_from_call(pc: PendingCall, answered: bool, parsed: ParsedOutput | None,
                     rejected: bool) -> PatchItem:
    c = pc.call
    pe = pc.patch_end
    files, perror = patch_files(c.patch_text or "")
    if not files and pe is not None:
        files = pe.files
    else:
        files = with_diffs(files, patch_hunks(c.patch_text), pe.files if pe is not None else ())
    body = parsed.body if parsed is not None else None
    success, unverified = patch_success(pe, rejected, parsed)
    error: str | None = None
    if success is False:  # an exec stream's failed file change names no error unless it printed one
        error = excerpt((pe.output if pe and pe.output else body) or ("" if c.origin is Origin.STREAM else "failed"),
                        1000) or None
    elif perror:
        error = perror
    if c.origin is Origin.STREAM:
        executed = stream.executed(pc)
    elif unverified or (pe is not None and pe.status == "declined"):
        executed = Executed.NO  # not applied (PatchApplyStatus::Declined: core/src/tools/events.rs)
    else:
        executed = direct_executed(answered or pe is not None, rejected, None)
    return PatchItem(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, files=files, success=success,
                     error=error, tool=c.tool, call_id=c.call_id, origin=c.origin, executed=executed)


def tool_call_item(pc: PendingCall, out: Output | None, parsed: ParsedOutput | None, answered: bool) -> ToolCallItem:
    """A direct call to any other tool (MCP, ``wait``, ``exec`` as a tool, dynamic tools), settled."""
    c = pc.call
    te = pc.tool_end
    rejected = parsed is not None and parsed.rejected
    success = out.success if out is not None else None
    result = out.text if out is not None else (te.result if te else None)
    if te is not None and te.success is not None:
        success = te.success
    if out is not None and te is None and (rejected or (parsed is not None and parsed.verdict is not None)):
        # refused, cut off or timed out (``refusals``), whatever the output's own success flag says (a
        # ``wait`` answered "js execution timed out; kernel reset" with success true)
        success = False
    if success is None and out is not None:
        if out.text.startswith("err:"):
            success = False  # an MCP tool's error
        elif c.tool == "exec" or c.tool == "wait":
            success = None if parsed is None or parsed.script_status is None else \
                parsed.script_status in ("completed", "running")
    executed = stream.executed(pc) if c.origin is Origin.STREAM else \
        direct_executed(answered or te is not None, rejected, None)
    return ToolCallItem(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, name=c.name or c.tool,
                        arguments=excerpt(c.arguments), result=excerpt_or_none(result), success=success,
                        call_id=c.call_id, origin=c.origin, executed=executed)


def stdin_item(pc: PendingCall, parsed: ParsedOutput | None, answered: bool) -> StdinWrite:
    """A direct ``write_stdin`` call, settled: its output and the exit it saw."""
    c, ee = pc.call, pc.exec_end
    exit_code = ee.exit_code if ee and ee.exit_code is not None else (parsed.exit_code if parsed else None)
    return StdinWrite(line=pc.line, timestamp=pc.ts, turn_id=pc.turn, session_id=c.session_id, chars=c.chars,
                      output=excerpt_or_none(parsed.body if parsed else None), exit_code=exit_code, call_id=c.call_id,
                      executed=direct_executed(answered or ee is not None, parsed is not None and parsed.rejected, ee))
