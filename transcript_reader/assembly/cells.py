"""Code-mode cells: an ``exec`` cell's script is analysed (``exec_grammar.analyze``); its entries wait
for the cell's output and records, and are settled (``executed`` yes / no / unknown) when its turn is
over, since a command a cell left running is recorded after the cell's output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from transcript_reader.assembly.rules import (
    error_names_path,
    excerpt,
    excerpt_or_none,
    patch_failure,
    record_commands,
    record_items,
    same_path,
    same_tool,
    script_cwd,
    test_run_items,
    with_diffs,
)
from transcript_reader.assembly.state import Cell
from transcript_reader.model import (
    AnyItem,
    Evidence,
    Executed,
    FileChange,
    Notice,
    Origin,
    PatchItem,
    ShellCommand,
    StdinWrite,
    ToolCallItem,
)
from transcript_reader.providers.codex import refusals
from transcript_reader.providers.codex.common import SHELL_TOOLS, ParsedOutput
from transcript_reader.providers.codex.patch_text import patch_hunks
from transcript_reader.providers.codex.refusals import ABORTED
from transcript_reader.providers.records import Call, ExecEnd, PatchEnd, ToolEnd

if TYPE_CHECKING:
    from transcript_reader.assembly.peers import Peers


class Cells:
    """Open, running and closed cells of the session, and the figures of their scripts."""

    def __init__(self, a: Peers, analyze: Callable[[str], Any] | None) -> None:
        self.a = a
        self.cells: list[Cell] = []
        # cells whose output arrived but whose turn has not ended: a command a cell left running (an
        # exec_command that yielded) is recorded when it exits, after the cell's output, so entries are
        # only declared "no" once the turn is over
        self.closed_cells: list[Cell] = []
        self.running_cells: dict[str, Cell] = {}
        self.script_count = 0
        self.calls_by_tool: Counter[str] = Counter()
        self.by_parser: Counter[str] = Counter()
        self.script_executed: Counter[str] = Counter()
        self.unresolved_paths = 0
        self.whole_script = 0
        self.proven = 0  # entries settled by the proof of execution (or contradicted by the records)
        self.contradictions = 0
        self.verdict_unknown_noticed = False
        # looked up at the first cell, not at import: a caller (the benchmark) may wrap
        # exec_grammar.analyze, and a reading without cells never loads the analyzer
        self._analyze = analyze

    def open_cell(self, c: Call, line: int, ts: str | None) -> None:
        slot = self.a.q.pending()
        cell = Cell(c, line, ts, self.a.turns.turn_id, slot, cwd=self.a.turns.turn_cwd)
        slot.owner = cell
        self.script_count += 1
        if self._analyze is None:
            import exec_grammar

            # the process's bounded cache: ``show --scripts`` marks the calls of the cells read here,
            # and forked sessions repeat their parent's cells (it calls exec_grammar.analyze as it is
            # when it analyses, so a benchmark's wrapper still sees every analysis)
            self._analyze = exec_grammar.analyze_cached
        try:
            cell.analysis = self._analyze(c.script or "")
        except NotImplementedError:
            cell.analysis_error = "analyzer not available"
        except Exception as e:  # noqa: BLE001 - an analyzer bug must not stop reading (fail soft, counted)
            cell.analysis_error = f"analyzer error: {type(e).__name__}"
        a = cell.analysis
        if a is not None:
            self.by_parser[a.parser.value] += 1
            for call in a.calls:
                self.calls_by_tool[call.name] += 1
            if a.findings:
                self._verdict_notice(a, line, ts)
        else:
            self.by_parser["none"] += 1
        self.cells.append(cell)

    def _verdict_notice(self, a: Any, line: int, ts: str | None) -> None:
        """One line when a cell's verdict could not be had: V8 did not load (said once a session: every
        cell is then alike), or the cell was over the analysis budget (said for that cell). Its calls
        are listed all the same; their ``executed`` comes from the records, never from a proof."""
        codes = {f.code: f.message for f in a.findings}
        if "verdict-unknown" not in codes:
            return
        if "over-budget" in codes:
            message = f"{codes['over-budget']}; its verdict is unknown, and what it ran comes from the records only"
        elif not self.verdict_unknown_noticed:
            self.verdict_unknown_noticed = True
            message = (f"cell verdicts are unknown in this session ({codes['verdict-unknown']}); "
                       "what a cell ran comes from the records only")
        else:
            return
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, category="analysis",
                              message=message)])

    def close_cell(self, cell: Cell, text: str | None, parsed: ParsedOutput | None) -> None:
        """The cell's output arrived (or its turn ended first): settled when its turn is over."""
        if cell in self.cells:
            self.cells.remove(cell)
        if cell.cell_id:
            self.running_cells.pop(cell.cell_id, None)
        self.a.calls.mark_resolved(cell.call.call_id)
        cell.final_text = text
        cell.final_parsed = parsed
        self.closed_cells.append(cell)

    def settle_closed(self, *, turn_over: bool) -> None:
        for cell in self.closed_cells:
            self.settle_cell(cell, cell.final_text, cell.final_parsed, turn_over)
        self.closed_cells.clear()

    def cell_for_record(self, rec: ExecEnd | PatchEnd | ToolEnd, among: list[Cell] | None = None) -> Cell:
        """The closed cell a late record belongs to (or, ``among`` given, the open cell of several): the
        newest with a matching unmatched entry."""
        cells = self.closed_cells if among is None else among
        for cell in reversed(cells):
            a = cell.analysis
            if a is None:
                continue
            for e in a.entries:
                kind = e.kind.value
                if isinstance(rec, ExecEnd) and kind == "shell_command" and not e.whole_script \
                        and e.command.strip() in record_commands(rec):
                    return cell
                if isinstance(rec, PatchEnd) and kind == "patch" and any(
                        same_path(f.path, r.path) for f in e.files for r in rec.files):
                    return cell
                if isinstance(rec, ToolEnd) and kind == "tool_call" and same_tool(e.name, rec.name):
                    return cell
        return cells[-1]

    def settle_cell(self, cell: Cell, text: str | None, parsed: ParsedOutput | None, turn_over: bool) -> None:
        status = parsed.script_status if parsed is not None else None
        rejected = parsed is not None and parsed.rejected
        # Codex's word instead of a script status (``refusals``): refused (nothing ran), or cut off, timed
        # out or lost while it ran (a failure; what ran is what the records prove, the rest unknown)
        said = parsed.verdict if parsed is not None else None
        finished = status in ("completed", "failed")
        a = cell.analysis
        parse_failed = a is not None and a.parse_error is not None and status == "failed"
        negative = rejected or parse_failed
        dead_if_unmatched = finished and self.a.session.records_seen and turn_over
        # the cell failed on an apply_patch verification error (a rejected call) naming a file: the patch
        # entry naming that file did not run, when it is the script's only apply_patch call (one entry
        # holds all of a script's patches; with several, the others may have run). Codex 0.144 writes no
        # records, so this is the only evidence (corpus realcodex/0.144.0/code_mode_multi_cell)
        failure_msg = patch_failure(parsed.script_error) if parsed is not None and status == "failed" else None
        one_patch_call = a is not None and sum(1 for x in a.calls if x.name == "apply_patch") == 1
        # the cell failed because Codex refused one of its calls ("Script error: exec command rejected by
        # user", ``refusals``): with one shell call in the script, that unrecorded command did not run
        refused_call = status == "failed" and parsed is not None and script_refused(parsed.script_error)
        one_shell_call = a is not None and sum(1 for x in a.calls if x.name in SHELL_TOOLS) == 1
        # proof of execution (exec_grammar ``Analysis.proven``): a call on the top-level program's
        # unconditional path ran if the cell completed; with records, one missing is a contradiction.
        # The proof holds only for a cell whose every token is on ``exec_grammar.proof``'s allow-list
        # (fixtures/witness/*/hostile_cells: an ``Object.prototype.toJSON`` made Codex run another
        # command); checked only when an entry would rest on it (``proof_for``)
        proven = _proven_orders(a) if a is not None and status == "completed" and not rejected else frozenset()
        proof_for = _ProofCheck(a, proven)
        c = cell.call
        items: list[AnyItem] = [
            ToolCallItem(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, name="exec",
                         arguments=excerpt(c.script or ""), script=c.script, result=excerpt_or_none(parsed.body if parsed else None),
                         # a cell still running ("Script running with cell ID N") when nothing later
                         # settled it did not fail: success unknown (public alaarab 0.157.1 line 24)
                         success=False if rejected or said is not None else (
                             None if status is None or status == "running" else status == "completed"),
                         call_id=c.call_id,
                         executed=Executed.NO if rejected else (
                             Executed.UNKNOWN if text is None or said == ABORTED else Executed.YES))
        ]
        entries = sorted(a.entries, key=lambda e: e.order) if a is not None else []
        for e in entries:
            kind = e.kind.value
            if kind == "shell_command":
                rec = None if e.whole_script else self.match_exec(cell, e.command)
                if rec is not None:
                    ex = Executed.NO if rec.status == "declined" else Executed.YES
                elif e.order in proven and not e.whole_script and proof_for.holds():
                    ex = self.proof(cell, items, f"the command {e.command!r}")
                elif negative or (dead_if_unmatched and not e.whole_script) or (
                        refused_call == "exec" and one_shell_call and not e.whole_script):
                    ex = Executed.NO
                else:
                    ex = Executed.UNKNOWN
                tool = e.call_names[0] if e.call_names else "exec_command"
                out = rec.output if rec else None
                sc = ShellCommand(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, command=e.command,
                                  argv=rec.argv if rec else None, cwd=script_cwd(cell.cwd, e, rec),
                                  exit_code=rec.exit_code if rec else None, output=excerpt_or_none(out),
                                  output_chars=len(out or ""), duration_s=rec.duration_s if rec else None,
                                  tool=tool, call_id=c.call_id, origin=Origin.SCRIPT, executed=ex,
                                  evidence=_by_proof(ex, rec),
                                  status=rec.status if rec else None, script_order=e.order,
                                  whole_script=e.whole_script)
                if e.whole_script:
                    self.whole_script += 1
                self.script_executed[ex.value] += 1
                items.append(sc)
                items.extend(test_run_items(sc, out))
            elif kind == "patch":
                files = tuple(FileChange(path=f.path, op=f.op.value, move_to=f.move_to,
                                         added=f.added, removed=f.removed) for f in e.files)
                prec = self.match_patch(cell, files)
                hunks: dict[str, str] = {}
                for text in e.patch_texts:
                    hunks.update(patch_hunks(text))
                files = with_diffs(files, hunks, prec.files if prec is not None else ())
                if prec is not None:
                    ex = Executed.NO if prec.status == "declined" else Executed.YES
                elif proven and _all_patches_proven(a, proven) and files and proof_for.holds():
                    ex = self.proof(cell, items, "the patch of " + ", ".join(f.path for f in files))
                elif negative or dead_if_unmatched or (refused_call == "patch" and one_patch_call) or (
                        failure_msg is not None and one_patch_call and len(e.patch_texts) <= 1
                        and any(error_names_path(failure_msg, f.path) for f in files)):
                    ex = Executed.NO
                else:
                    ex = Executed.UNKNOWN
                self.unresolved_paths += e.unresolved_paths
                self.script_executed[ex.value] += 1
                items.append(PatchItem(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, files=files,
                                       success=prec.success if prec else (False if ex is Executed.NO and
                                                                          status == "failed" else None),
                                       # a malformed script patch keeps the parser's error;
                                       # ``executed`` stays what the records prove
                                       error=(parsed.script_error if parsed and ex is Executed.NO and
                                              status == "failed" else e.error),
                                       unresolved_paths=e.unresolved_paths, tool="apply_patch",
                                       call_id=c.call_id, origin=Origin.SCRIPT, executed=ex,
                                       evidence=_by_proof(ex, prec), script_order=e.order))
            elif kind == "stdin_write":
                ex = Executed.NO if negative else Executed.UNKNOWN
                self.script_executed[ex.value] += 1
                items.append(StdinWrite(line=cell.line, timestamp=cell.ts, turn_id=cell.turn,
                                        session_id=None if e.session_id is None else str(e.session_id),
                                        chars=e.chars or "", call_id=c.call_id, origin=Origin.SCRIPT,
                                        executed=ex, script_order=e.order))
            else:
                # an McpToolCall / DynamicToolCall / ImageView record of the cell naming this tool: it ran
                trec = self.match_tool(cell, e.name)
                if trec is not None:
                    ex = Executed.YES
                elif e.order in proven and proof_for.holds():
                    ex = self.proof(cell, items, f"the {e.name} call")
                else:
                    ex = Executed.NO if negative else Executed.UNKNOWN
                self.script_executed[ex.value] += 1
                items.append(ToolCallItem(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, name=e.name,
                                          arguments=excerpt(e.argument_source or ""), call_id=c.call_id,
                                          result=excerpt_or_none(trec.result) if trec is not None else None,
                                          success=trec.success if trec is not None else None,
                                          origin=Origin.SCRIPT, executed=ex, evidence=_by_proof(ex, trec),
                                          script_order=e.order))
        cell.slot.items = items
        late: list[AnyItem] = []
        host = cell.slot  # the late records go after the cell's entries and its other records
        for cr in cell.records:
            if cr.late and not cr.matched:
                # a record no entry claims, written after the cell's output (its script's call was not
                # read, or its command was stripped): it is the cell's work, so it stays inside the cell
                # rather than after the cell's output
                late.extend(record_items(cr.rec, cr.line, cr.ts, cell.turn, c.call_id))
                cr.slot.items = []
                continue
            cr.slot.items = [] if cr.matched else record_items(cr.rec, cr.line, cr.ts, cell.turn, c.call_id)
            if not cr.late:
                host = cr.slot
        if late:
            host.items = [*(host.items or []), *late]

    def proof(self, cell: Cell, items: list[AnyItem], what: str) -> Executed:
        """A proven call with no record of its own: ``yes`` when the session writes no records (Codex
        0.144-0.149: the proof is the only evidence), else a contradiction: reported, ``unknown``."""
        self.proven += 1
        if not self.a.session.records_seen:
            return Executed.YES
        self.contradictions += 1
        items.append(Notice(line=cell.line, timestamp=cell.ts, turn_id=cell.turn, category="contradiction",
                            message=f"{what} lies on the cell's unconditional path and the cell completed, "
                                    "but no record of it was written"))
        return Executed.UNKNOWN

    def match_exec(self, cell: Cell, command: str) -> ExecEnd | None:
        want = command.strip()
        for cr in cell.records:
            if cr.matched or not isinstance(cr.rec, ExecEnd):
                continue
            if want in record_commands(cr.rec):
                cr.matched = True
                return cr.rec
        return None

    def match_tool(self, cell: Cell, name: str) -> ToolEnd | None:
        for cr in cell.records:
            if not cr.matched and isinstance(cr.rec, ToolEnd) and same_tool(name, cr.rec.name):
                cr.matched = True
                return cr.rec
        return None

    def match_patch(self, cell: Cell, files: tuple[FileChange, ...]) -> PatchEnd | None:
        if not files:
            return None
        for cr in cell.records:
            if cr.matched or not isinstance(cr.rec, PatchEnd):
                continue
            rfiles = cr.rec.files
            for f in files:  # every file of the entry is among the record's (loops: no generator frames)
                for r in rfiles:
                    if same_path(f.path, r.path):
                        break
                else:
                    break
            else:
                cr.matched = True
                return cr.rec
        return None


def script_refused(script_error: str | None) -> str | None:
    """``exec`` or ``patch`` when a cell's ``Script error`` is Codex refusing one of its calls (the
    nested call's error is the script's exception: ``refusals`` wording, perhaps as ``Error: …``)."""
    if not script_error:
        return None
    text = script_error.removeprefix("Uncaught ").removeprefix("Error: ")
    if refusals.verdict(text) != refusals.REFUSED:
        return None
    return "patch" if text.lower().startswith("patch") else "exec"


def _by_proof(ex: Executed, record: Any) -> Evidence | None:
    """``proof`` for a ``yes`` no record gave: in ``settle_cell`` only the proof gives one."""
    return Evidence.PROOF if ex is Executed.YES and record is None else None


class _ProofCheck:
    """Whether the proof of a cell's calls stands (``exec_grammar.proof.proven_calls``), asked at most
    once per cell and only when an entry would rest on it: a session with records rarely does."""

    __slots__ = ("_analysis", "_candidates", "_holds")

    def __init__(self, analysis: Any, candidates: frozenset[int]) -> None:
        self._analysis = analysis
        self._candidates = candidates
        self._holds: bool | None = None if candidates else False

    def holds(self) -> bool:
        if self._holds is None:
            from exec_grammar.proof import proven_calls

            self._holds = bool(proven_calls(self._analysis))
        return self._holds


def _proven_orders(a: Any) -> frozenset[int]:
    """The call indexes (entry ``order``) the analysis proves ran if the cell completed."""
    return frozenset(a.proven)


def _all_patches_proven(a: Any, proven: frozenset[int]) -> bool:
    """One patch entry holds every apply_patch call: proven only if each of them is."""
    return all(i in proven for i, c in enumerate(a.calls) if c.name == "apply_patch")
