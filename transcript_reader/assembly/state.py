"""What assembly keeps while it waits: places in the output order, and the calls, cells and messages
that wait for what settles them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from transcript_reader.assembly import rules
from transcript_reader.model import AnyItem, use_field_repr
from transcript_reader.providers.codex.common import ParsedOutput
from transcript_reader.providers.records import Call, ExecEnd, Message, Output, PatchEnd, ToolEnd


class Slot:
    """A place in the output order; ``items`` is None until what it waits for is known."""

    __slots__ = ("items", "owner")

    def __init__(self, items: list[AnyItem] | None = None, owner: Any = None) -> None:
        self.items = items
        self.owner = owner


class Chunks:
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
        half = rules.RUNNING_OUTPUT_CHARS // 2
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


@dataclass(slots=True, repr=False)
class PendingCall:
    """A direct call waiting for its output or completion record."""

    call: Call
    line: int
    ts: str | None
    turn: str | None
    slot: Slot
    cwd: str | None
    exec_end: ExecEnd | None = None
    patch_end: PatchEnd | None = None
    tool_end: ToolEnd | None = None
    turn_done: bool = False  # its turn's task_complete arrived while it still had no output
    # a shell call whose output said "Process running with session ID N": its output,
    # the chunks its session printed since, and the exit a later write_stdin output reported
    out: Output | None = None
    parsed: ParsedOutput | None = None
    chunks: Chunks | None = None
    stdin_exit: int | None = None
    key: str | None = None  # its key in ``Calls.calls`` (found without a scan when it settles)


@dataclass(slots=True, repr=False)
class CellRecord:
    """A completion record a code cell wrote, waiting for its cell to settle."""

    rec: ExecEnd | PatchEnd | ToolEnd
    line: int
    ts: str | None
    slot: Slot
    matched: bool = False
    late: bool = False  # written after its cell's output: an unmatched one is shown inside the cell


@dataclass(slots=True, repr=False)
class Cell:
    """A code-mode cell: its call, the analysis of its script, and what it waits for."""

    call: Call
    line: int
    ts: str | None
    turn: str | None
    slot: Slot
    analysis: Any = None
    analysis_error: str | None = None
    records: list[CellRecord] = field(default_factory=list)
    cell_id: str | None = None
    output: str | None = None
    final_text: str | None = None  # the output that ended the cell (settled at the end of its turn)
    final_parsed: ParsedOutput | None = None
    cwd: str | None = None  # the turn's cwd when the cell was called: where its commands run by default


@dataclass(slots=True, repr=False)
class Held:
    """An assistant message whose finality is not known yet."""

    msg: Message
    line: int
    ts: str | None
    turn: str | None
    slot: Slot


@dataclass(slots=True, repr=False)
class HeldPrompt:
    """A user-role ``response_item`` message not yet known to be a prompt or context (``prompts``)."""

    msg: Message
    line: int
    ts: str | None
    slot: Slot


@dataclass(slots=True, repr=False)
class HeldFinal:
    """A final answer kept back while a ``thread_rolled_back`` may still rewind its turn (``turns``)."""

    item: AnyItem
    turn: str | None
    slot: Slot


class OrderQueue:
    """The output order: a slot per item (or group of items) in source order; a slot whose items are
    not known yet holds back everything after it (bounded by ``rules.MAX_PENDING``)."""

    __slots__ = ("slots",)

    def __init__(self) -> None:
        self.slots: deque[Slot] = deque()

    def push(self, items: list[AnyItem], owner: Any = None) -> Slot:
        slot = Slot(items, owner)
        self.slots.append(slot)
        return slot

    def pending(self) -> Slot:
        """A place whose items come later (its owner fills them in)."""
        slot = Slot(None)
        self.slots.append(slot)
        return slot


use_field_repr(globals())
