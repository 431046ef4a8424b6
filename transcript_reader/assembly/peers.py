"""What each collaborator of the assembly needs of the others, and nothing more: the assembler gives every
collaborator these views of its peers (it satisfies :class:`Peers`), so no collaborator imports the
``Assembler`` or another collaborator's module. Each view lists only the members some peer uses; a
collaborator that starts using more of a peer says so here first."""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

from transcript_reader.assembly.state import Cell, OrderQueue, PendingCall, Slot
from transcript_reader.model import Format
from transcript_reader.providers.codex.common import ParsedOutput
from transcript_reader.providers.records import Call, ExecEnd, Message, Meta, Output, PatchEnd, ToolEnd


class TurnsView(Protocol):
    """The turn in progress: its id and cwd, how many turns so far; starting one, interrupting it, opening
    it with a person's prompt, and whether a message is the second copy of one just seen."""

    turn_id: str | None
    turn_cwd: str | None
    turn_count: int

    def turn_start(self, turn_id: str | None, line: int = 0, ts: str | None = None) -> None: ...
    def interrupt(self) -> None: ...
    def is_dup(self, key: tuple[Any, ...], src: str, line: int) -> bool: ...
    def open_prompt(self, m: Message, line: int, ts: str | None, slot: Slot | None = None) -> None: ...


class CallsView(Protocol):
    """Direct calls waiting for their output, by call id; settling them."""

    calls: dict[str, PendingCall]
    anon: int

    def mark_resolved(self, cid: str | None) -> None: ...
    def resolve_call(self, pc: PendingCall, out: Output | None, parsed: ParsedOutput | None,
                     where: tuple[int, str | None] | None) -> None: ...
    def settle_turn_calls(self) -> None: ...


class CellsView(Protocol):
    """Code-mode cells open, closed and running; their figures; opening, closing and settling them."""

    cells: list[Cell]
    closed_cells: list[Cell]
    running_cells: dict[str, Cell]
    script_count: int
    calls_by_tool: Counter[str]
    by_parser: Counter[str]
    script_executed: Counter[str]
    unresolved_paths: int
    whole_script: int

    def open_cell(self, c: Call, line: int, ts: str | None) -> None: ...
    def close_cell(self, cell: Cell, text: str | None, parsed: ParsedOutput | None) -> None: ...
    def settle_closed(self, *, turn_over: bool) -> None: ...
    def cell_for_record(self, rec: ExecEnd | PatchEnd | ToolEnd, among: list[Cell] | None = None) -> Cell: ...


class SessionView(Protocol):
    """The session's header so far, whether it writes completion records, whose history is replayed,
    how many gaps its record numbering had so far."""

    meta: Meta
    records_seen: bool
    replaying: list[str]
    title: str | None
    gaps: int


class StreamView(Protocol):
    """Exec-stream items: placing an item's event, settling it with its end."""

    def call(self, c: Call, line: int, ts: str | None) -> None: ...
    def settle(self, pc: PendingCall, end: ExecEnd | PatchEnd | ToolEnd) -> None: ...


class Peers(Protocol):
    """What a collaborator is given: the reading's settings, the output order, and its peers' views."""

    @property
    def path(self) -> str: ...
    @property
    def fmt(self) -> Format: ...
    @property
    def strict(self) -> bool: ...
    @property
    def q(self) -> OrderQueue: ...
    @property
    def session(self) -> SessionView: ...
    @property
    def turns(self) -> TurnsView: ...
    @property
    def calls(self) -> CallsView: ...
    @property
    def cells(self) -> CellsView: ...
    @property
    def stream(self) -> StreamView: ...
