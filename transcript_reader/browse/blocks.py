"""The session view's model: the timeline as a flat list of blocks, with the line arithmetic a
virtual view needs.

A block is one thing a person reads as a unit: a turn's heading and prompt, an answer, a command, a
patch, a test run, a tool call, a code cell, a cell's output, a notice. Folded, a block's height is
known from the item alone (a command is one line, a patch one line per file), so a session of
300,000 items is laid out without rendering anything; only the blocks on screen are rendered, and an
expanded block is rendered once at the current width. The model only grows (items stream in while the
file is read or followed), so laying out new blocks costs what they cost.

No Textual here: the widget (``timeline.py``) asks this model for a block's renderables and does the
drawing.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text

from transcript_reader.browse.text import has_control, one_line, visible
from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    ContextMessage,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    Reasoning,
    ShellCommand,
    StdinWrite,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.present import common as c
from transcript_reader.present import terminal as term

# what a block is, for the jump keys
TURN, COMMAND, CHANGE, FAILURE, REASONING, CONTEXT = 1, 2, 4, 8, 16, 32

#: notice categories that mean something went wrong (the failure jump stops at them)
_BAD_NOTICES = frozenset({"error", "turn_aborted", "stream_error", "late_result"})
#: lines of an answer shown folded (the rest on expanding it)
ANSWER_LINES = 3
#: the most raw-output text kept for ``o`` (whole outputs): beyond it a huge session keeps excerpts only
RAW_OUTPUT_BUDGET = 64 * 1024 * 1024

class Block:
    """One unit of the timeline. ``depth`` 1: inside a code cell. ``kind`` is one of the item
    classes' kinds or ``cell_output``."""

    __slots__ = ("item", "depth", "turn", "flags", "expanded", "folded_height", "cell_output")

    def __init__(self, item: AnyItem, *, depth: int = 0, turn: int = 0, cell_output: bool = False) -> None:
        self.item = item
        self.depth = depth
        self.turn = turn
        self.cell_output = cell_output
        self.expanded = False
        self.flags = _flags(item, cell_output)
        self.folded_height = _folded_height(item, cell_output)


def _flags(item: AnyItem, cell_output: bool) -> int:
    if cell_output:
        return 0
    f = 0
    if isinstance(item, UserMessage):
        f |= TURN
    elif isinstance(item, ShellCommand):
        f |= COMMAND | (FAILURE if item.exit_code not in (None, 0) else 0)
    elif isinstance(item, PatchItem):
        f |= CHANGE | (FAILURE if item.success is False else 0)
    elif isinstance(item, TestRun):
        f |= FAILURE if item.result is TestResult.FAIL else 0
    elif isinstance(item, ToolCallItem):
        f |= FAILURE if item.success is False else 0
    elif isinstance(item, Notice):
        f |= FAILURE if item.category in _BAD_NOTICES else 0
    elif isinstance(item, Unreadable):
        f |= FAILURE
    elif isinstance(item, Reasoning):
        f |= REASONING
    elif isinstance(item, ContextMessage):
        f |= CONTEXT
    return f


def _folded_height(item: AnyItem, cell_output: bool) -> int:
    if cell_output:
        return 1
    if isinstance(item, UserMessage):
        return 2
    if isinstance(item, AssistantMessage):
        return 1 + min(ANSWER_LINES, _line_count(item.text))
    if isinstance(item, PatchItem):
        return 1 + len(item.files) + (1 if item.unresolved_paths else 0) + (1 if item.error else 0)
    return 1


def _line_count(text: str) -> int:
    n = 0
    at = 0
    stripped = text.strip()
    while n < ANSWER_LINES + 1:
        n += 1
        at = stripped.find("\n", at) + 1
        if at == 0:
            break
    return max(1, n)


class Timeline:
    """The blocks of one session and the layout of the visible ones (reasoning and context hidden
    unless toggled on). ``offsets[k]`` is the first line of ``visible[k]``."""

    def __init__(self, session_cwd: str | None = None) -> None:
        self.blocks: list[Block] = []
        self.visible: list[Block] = []
        self.offsets: list[int] = []
        self.height = 0
        self.show_reasoning = False
        self.show_context = False
        self.opts = c.Options(session_cwd=session_cwd)
        self.raw: dict[str, str] = {}
        self._raw_kept = 0
        self._turn = 0
        self._cell: ToolCallItem | None = None
        self._measure: Callable[[Block], int] | None = None
        self._texts: dict[str, str] = {}

    # ---- building ---------------------------------------------------------------------------------

    def add(self, items: Iterable[AnyItem]) -> int:
        """Append blocks for ``items`` (in reading order); returns how many visible blocks came."""
        before = len(self.visible)
        for item in items:
            if isinstance(item, RawOutput):
                if item.call_id and self._raw_kept + len(item.text) <= RAW_OUTPUT_BUDGET:
                    self.raw[item.call_id] = item.text
                    self._raw_kept += len(item.text)
                continue
            nested = self._cell is not None and term.belongs_to_cell(item, self._cell)
            if self._cell is not None and not nested:
                self._close_cell()
            if isinstance(item, UserMessage):
                self._turn += 1
            self._push(Block(item, depth=1 if nested else 0, turn=self._turn))
            if c.is_script_cell(item):
                assert isinstance(item, ToolCallItem)
                self._cell = item
        return len(self.visible) - before

    def shared(self, item: AnyItem) -> AnyItem:
        """The item with its repeated text held once (the reading thread calls this for each item
        before batching, so the batch does not hold the copies either): Codex writes the same context (AGENTS.md, the
        environment, developer instructions) into every turn, which made up a third of the memory a
        long session's blocks took; turn ids repeat on every item of a turn."""
        changes: dict[str, str] = {}
        if isinstance(item, ContextMessage) and len(item.text) > 64:
            text = self._texts.setdefault(item.text, item.text)
            if text is not item.text:
                changes["text"] = text
        if isinstance(item, ToolCallItem) and item.script and item.arguments and item.script.startswith(item.arguments):
            changes["arguments"] = ""  # a cell's arguments are the head of its script, kept whole beside
        if item.turn_id is not None:
            tid = self._texts.setdefault(item.turn_id, item.turn_id)
            if tid is not item.turn_id:
                changes["turn_id"] = tid
        return dataclasses.replace(item, **changes) if changes else item  # type: ignore[type-var, arg-type]

    def finish(self) -> None:
        """The items ended (a whole read): close a code cell still open."""
        if self._cell is not None:
            self._close_cell()

    def _close_cell(self) -> None:
        cell, self._cell = self._cell, None
        if cell is not None and cell.result:
            self._push(Block(cell, depth=1, turn=self._turn, cell_output=True))

    def _push(self, b: Block) -> None:
        self.blocks.append(b)
        if self._shown(b):
            self.visible.append(b)
            self.offsets.append(self.height)
            self.height += b.folded_height

    def _shown(self, b: Block) -> bool:
        if b.flags & REASONING:
            return self.show_reasoning
        if b.flags & CONTEXT:
            return self.show_context
        return True

    # ---- layout -----------------------------------------------------------------------------------

    def set_measure(self, measure: Callable[[Block], int] | None) -> None:
        """How an expanded block's height is found (the widget renders it at its width)."""
        self._measure = measure

    def block_height(self, b: Block) -> int:
        if b.expanded and self._measure is not None:
            return self._measure(b)
        return b.folded_height

    def relayout(self, start: int = 0) -> None:
        """Recompute the offsets from visible block ``start`` on (after an expansion or a resize)."""
        del self.offsets[start:]
        y = 0 if start == 0 else self.offsets[start - 1] + self.block_height(self.visible[start - 1])
        for b in self.visible[start:]:
            self.offsets.append(y)
            y += self.block_height(b)
        self.height = y

    def refilter(self) -> None:
        """Rebuild the visible list after a reasoning/context toggle."""
        self.visible = [b for b in self.blocks if self._shown(b)]
        self.relayout(0)

    def index_at(self, y: int) -> int:
        """The visible block that line ``y`` belongs to (-1 when there is none)."""
        if not self.visible or y < 0 or y >= self.height:
            return -1
        return bisect_right(self.offsets, y) - 1

    def index_of(self, b: Block) -> int:
        """Where a block sits among the visible ones (-1 when hidden)."""
        try:
            return self.visible.index(b)
        except ValueError:
            return -1

    def index_near_line(self, source_line: int) -> int:
        """The first visible block whose item comes from ``source_line`` or later (a search hit's line)."""
        for k, b in enumerate(self.visible):
            if b.item.line >= source_line and not b.cell_output:
                return k
        return len(self.visible) - 1

    def find(self, start: int, step: int, flag: int) -> int:
        """The next (``step`` 1) or previous (-1) visible block after ``start`` with ``flag``, or -1."""
        k = start + step
        while 0 <= k < len(self.visible):
            if self.visible[k].flags & flag:
                return k
            k += step
        return -1

    # ---- what a block says ------------------------------------------------------------------------

    def folded(self, b: Block) -> list[Text]:
        """The block's folded lines, one Text each (never wrapped: the height is known in advance)."""
        item = b.item
        lines: list[Text]
        if b.cell_output:
            assert isinstance(item, ToolCallItem)
            t = Text("↳ cell output  ", style="dim")
            t.append(one_line(item.result or ""), style="dim")
            lines = [t]
        elif isinstance(item, UserMessage):
            head = Text(f"━━ Turn {b.turn}" + (f" · {term.clock_time(item.timestamp)}" if item.timestamp else "") + " ",
                        style="bold")
            head.append("━" * 300, style="dim")
            prompt = Text("› ", style="bold green")
            prompt.append(one_line(item.text))
            lines = [head, prompt]
        elif isinstance(item, AssistantMessage):
            label = Text("assistant", style="bold cyan")
            if item.final:
                label.append(" · final answer", style="bold green")
            if item.refusal:
                label.append(" · refused", style="bold red")
            rows = [ln for ln in item.text.strip().split("\n", ANSWER_LINES + 1)[:ANSWER_LINES + 1]]
            more = len(rows) > ANSWER_LINES
            rows = rows[:ANSWER_LINES] or [""]
            lines = [label] + [Text("  " + one_line(r, 1000)) for r in rows]
            if more:
                lines[-1].append("  …", style="yellow")
        elif isinstance(item, ShellCommand):
            cmd = term.command_line(item, self.opts)
            lines = [Text(visible(cmd.plain), spans=cmd.spans)] if has_control(cmd.plain) else [cmd]
        elif isinstance(item, PatchItem):
            lines = self._patch_lines(item)
        elif isinstance(item, TestRun):
            r = term.item_renderable(item, self.opts, {})
            lines = [r if isinstance(r, Text) else Text(item.command)]
        elif isinstance(item, ToolCallItem):
            if c.is_script_cell(item):
                r = term.script_block(item, self.opts)
                lines = [r if isinstance(r, Text) else Text("⧉ code cell")]
            else:
                t = Text("⚙ tool ", style="blue")
                t.append(item.name, style="bold blue")
                if item.success is False:
                    t.append("  failed", style="bold red")
                t.append(f"  {c.provenance(item.executed, item.origin)}", style="dim")
                if item.arguments:
                    t.append(f"  {one_line(item.arguments)}", style="dim")
                lines = [t]
        elif isinstance(item, StdinWrite):
            t = Text("⌨ stdin ", style="blue")
            t.append(one_line(repr(item.chars)))
            lines = [t]
        elif isinstance(item, Notice):
            lines = [Text(f"! {item.category}: {one_line(item.message)}", style="yellow")]
        elif isinstance(item, Unreadable):
            lines = [Text(f"⚠ line {item.line} unreadable: {one_line(item.reason)}", style="bold red")]
        elif isinstance(item, Reasoning):
            lines = [Text(f"∴ reasoning  {one_line(item.text)}", style="italic dim")]
        elif isinstance(item, ContextMessage):
            lines = [Text(f"[context {item.label}] {one_line(item.text)}", style="dim")]
        else:
            lines = [Text(item.kind.value, style="dim")]
        for t in lines:
            t.no_wrap = True
            t.overflow = "crop" if isinstance(item, UserMessage) and t is lines[0] else "ellipsis"
        return lines

    def _patch_lines(self, item: PatchItem) -> list[Text]:
        head = Text()
        head.append("✎ patch  ", style="magenta" if item.success is not False else "bold red")
        if item.success is False:
            head.append("failed  ", style="bold red")
        head.append(c.provenance(item.executed, item.origin), style="dim")
        lines = [head]
        for letter, path, added, removed in c.patch_summary(item):
            t = Text("    ")
            t.append(f"{letter} ", style={"A": "green", "D": "red", "M": "yellow"}.get(letter, ""))
            t.append(visible(path))
            t.append(f"  +{added}", style="green")
            t.append(f" -{removed}", style="red")
            lines.append(t)
        if item.unresolved_paths:
            lines.append(Text(f"    + {item.unresolved_paths} path(s) the script computes (not resolved)",
                              style="yellow"))
        if item.error:
            lines.append(Text("    " + one_line(item.error), style="red"))
        return lines

    def expanded(self, b: Block, *, plain_text: bool = False) -> list[RenderableType]:
        """What the block shows expanded, below its folded lines: a command's output, a patch's diffs,
        a cell's script, a whole message (``plain_text``: as text, so search hits can be marked)."""
        item = b.item
        out: list[RenderableType] = []
        if b.cell_output:
            assert isinstance(item, ToolCallItem)
            return [_body(item.result or "")]
        if isinstance(item, UserMessage):
            return [_body(item.text, 2)]
        if isinstance(item, AssistantMessage):
            if plain_text:
                return [_body(item.text, 2)]
            return [term.indent(Markdown(visible(item.text) or "_(empty message)_"), 2)]
        if isinstance(item, ShellCommand):
            full = self.raw.get(item.call_id or "") if item.origin is Origin.DIRECT else None
            text = full if full is not None else item.output
            if text:
                out.append(_body(text))
                if full is None and item.output_chars > len(item.output or ""):
                    out.append(Text(f"    … output excerpt: {len(item.output or ''):,} of {item.output_chars:,} "
                                    "chars (the rest was not kept)", style="italic yellow"))
            else:
                out.append(Text("    (no output recorded)", style="dim italic"))
            if item.cwd:
                out.append(Text(f"    cwd {visible(item.cwd)}", style="dim"))
            return out
        if isinstance(item, PatchItem):
            whole = term.patch_block(item, c.Options(diff=True))
            rows = list(whole.renderables) if isinstance(whole, Group) else []
            # the folded lines already show the head and the file list: the rest is the diffs
            return rows[len(self._patch_lines(item)):] or [
                Text("    (no diff text recorded for this patch)", style="dim italic")]
        if isinstance(item, TestRun):
            return [Text("    $ " + visible(item.command), style="bold")]
        if isinstance(item, ToolCallItem):
            if c.is_script_cell(item):
                source = item.script or item.arguments
                return [term.indent(term.highlight_script(visible(source)), 4)] if source else []
            if item.arguments:
                out.append(_body(item.arguments))
            if item.result:
                out.append(Text("    → result", style="dim"))
                out.append(_body(item.result))
            return out
        if isinstance(item, Notice):
            return [_body(item.message)]
        if isinstance(item, Unreadable):
            return [_body(item.reason)]
        if isinstance(item, (Reasoning, ContextMessage)):
            return [_body(item.text)]
        if isinstance(item, StdinWrite) and item.output:
            return [_body(item.output)]
        return out

    def expandable(self, b: Block) -> bool:
        return bool(self.expanded(b))


def _body(text: str, indent: int = 4) -> RenderableType:
    return term.indent(Text(visible(text.rstrip("\n")), style="default"), indent)


def search_text(b: Block) -> str:
    """Everything of a block a search looks at (its folded and expanded text)."""
    item = b.item
    if b.cell_output:
        return getattr(item, "result", "") or ""
    if isinstance(item, ShellCommand):
        return f"{item.command}\n{item.output or ''}"
    if isinstance(item, PatchItem):
        return "\n".join(f"{f.path} {f.move_to or ''}\n{f.diff or ''}" for f in item.files) + (item.error or "")
    if isinstance(item, TestRun):
        return f"{item.framework} {item.command}"
    if isinstance(item, ToolCallItem):
        if c.is_script_cell(item):  # its output is the cell-output block's
            return f"{item.name}\n{item.script or item.arguments}"
        return f"{item.name}\n{item.arguments}\n{item.result or ''}"
    if isinstance(item, Notice):
        return f"{item.category}: {item.message}"
    if isinstance(item, Unreadable):
        return item.reason
    if isinstance(item, StdinWrite):
        return f"{item.chars}\n{item.output or ''}"
    return getattr(item, "text", "") or ""


def copy_text(b: Block) -> str | None:
    """What ``y`` copies from a block: its command (a cell: its script), or None."""
    item = b.item
    if isinstance(item, (ShellCommand, TestRun)):
        return item.command
    if isinstance(item, ToolCallItem) and c.is_script_cell(item) and not b.cell_output:
        return item.script or item.arguments or None
    return None


@dataclass
class Search:
    """A search inside the session: the pattern, and the visible blocks it hits, in order."""

    query: str
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, query: str) -> Search:
        return cls(query, re.compile(re.escape(query), re.IGNORECASE))

    def hits(self, b: Block) -> bool:
        return self.pattern.search(search_text(b)) is not None

    def mark(self, t: Text) -> None:
        t.highlight_regex(self.pattern, style="bold black on yellow")


def group(renderables: list[RenderableType]) -> RenderableType:
    return Group(*renderables)
