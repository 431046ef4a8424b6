"""The terminal view of a timeline (``show``, ``show --follow``), as styled lines (``present.text``).

Items are rendered as they come (:class:`TimelineView` is fed one item at a time), so the first screen
of a 1 GB session is written while the rest is still being read, and a live session renders exactly as
a finished one. Every piece of content goes through :func:`text.clean` (control characters shown,
never sent); layout adapts to the width: a command that does not fit beside its status goes on its own
line and wraps, it is never cut. Answers in Markdown and highlighted diffs and scripts are laid out by
rich (``present.richtext``) on a terminal, and shown as their plain text in a pipe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    ContextMessage,
    Executed,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    Reasoning,
    SessionInfo,
    ShellCommand,
    StdinWrite,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.present import common as c
from transcript_reader.present.layout import Layout, Row
from transcript_reader.present.text import Line, clean, one_line, width_of

TONE = {"ok": "green", "bad": "bold red", "warn": "yellow", "dim": "dim"}


def _text_rows(text: str, indent: int, style: str = "") -> list[Row]:
    pad = " " * indent
    return [Line([(pad + row, style)], hang=indent) for row in clean(text).split("\n")]


# ---- commands -----------------------------------------------------------------------------------------


def command_rows(item: ShellCommand, opts: c.Options, layout: Layout, *, running: bool = False) -> list[Row]:
    """The command's status line: status, duration, whether and where it ran, cwd, then ``$ command``.
    When the command does not fit beside its status (a narrow terminal, a long command) it goes on
    its own line below, and wraps there: it is never cut to an ellipsis."""
    word, tone = ("running", "warn") if running else c.status_word(item)
    mark = "✓ " if tone == "ok" else "✗ " if tone == "bad" else "· "
    head = Line()
    head.add(mark, TONE[tone]).add(f"{word:<7}", TONE[tone])
    dur = c.duration(item.duration_s)
    head.add(f" {dur:>5}" if dur else "", "dim")
    if not running:
        head.add(f"  {c.provenance(item.executed, item.origin)}",
                 "dim" if item.executed is Executed.YES else "yellow")
    if item.whole_script:
        head.add(" (whole script)", "yellow")
    cwd = c.short_cwd(item.cwd, opts.session_cwd)
    if cwd:
        head.add(f"  in {clean(cwd)}", "cyan")
    command = clean(item.command).replace("\n", " ⏎ ")
    if not opts.full and len(command) > opts.command_chars:
        command = command[:opts.command_chars] + f" … (+{len(command) - opts.command_chars:,} chars, --full)"
    prefix = width_of(head.plain) + 2
    if layout.width is None or prefix + 2 + width_of(command) <= layout.width:
        head.add("  $ ", "bold").add(command, "bold")
        head.hang = prefix + 2 if layout.width is None or prefix + 2 < layout.width // 2 else 4
        return [head]
    return [head, Line([("    $ ", "bold"), (command, "bold")], hang=6)]


def output_rows(text: str | None, total_chars: int, opts: c.Options, *, failed: bool, indent: int = 4) -> list[Row]:
    if not text:
        return []
    folded = c.fold_output(clean(text), opts, failed=failed)
    pad = " " * indent
    rows: list[Row] = [Line([(pad + r, "dim")], hang=indent) for r in folded.head]
    if folded.cut:
        where = "the last lines follow" if folded.tail else "--full"
        rows.append(Line([(f"{pad}… {folded.cut:,} more line{'s' if folded.cut != 1 else ''} ({where})",
                           "italic yellow")], hang=indent))
        rows.extend(Line([(pad + r, "dim")], hang=indent) for r in folded.tail)
    if not opts.full and total_chars > len(text):
        rows.append(Line([(f"{pad}… output excerpt: {len(text):,} of {total_chars:,} chars (--full)",
                           "italic yellow")], hang=indent))
    return rows


# ---- other items ----------------------------------------------------------------------------------------


def patch_rows(item: PatchItem, opts: c.Options, layout: Layout) -> list[Row]:
    failed = item.success is False
    head = Line().add("✎ patch  ", "bold red" if failed else "magenta")
    if failed:
        head.add("failed (not applied)  ", "bold red")
    head.add(c.provenance(item.executed, item.origin), "dim" if item.executed is Executed.YES else "yellow")
    rows: list[Row] = [head]
    for letter, path, added, removed in c.patch_summary(item):
        rows.append(Line([("    ", ""), (f"{letter} ", {"A": "green", "D": "red", "M": "yellow"}.get(letter, "")),
                          (clean(path), "strike" if failed else ""), (f"  +{added}", "green"),
                          (f" -{removed}", "red")], hang=6))
    if item.unresolved_paths:
        rows.append(Line([(f"    + {item.unresolved_paths} path(s) the script computes (not resolved)",
                           "yellow")]))
    if item.error:
        rows.extend(_text_rows(item.error, 4, "red"))
    if opts.diff:
        from transcript_reader.present import richtext

        for f in item.files:
            if f.diff:
                rows.append(Line([(f"    ── {clean(f.path)}" + (f" → {clean(f.move_to)}" if f.move_to else "")
                                   + ("  (not applied)" if failed else ""), "bold")], hang=6))
                rows.extend(richtext.code_rows(f.diff.rstrip("\n"), "diff", layout, indent=4))
        if item.files and not any(f.diff for f in item.files):
            rows.append(Line([("    (no diff text recorded for this patch)", "dim italic")]))
    return rows


def script_rows(item: ToolCallItem, opts: c.Options, layout: Layout) -> list[Row]:
    """A code-mode cell's header and, with ``--scripts``, its JavaScript (highlighted, each
    ``tools.X(…)`` call marked, on a terminal). The entries the cell ran follow it, then its output."""
    head = Line().add("◆ code cell ", "bold blue").add(f"({clean(item.name)})", "dim")
    if item.success is False:
        head.add("  failed", "bold red")
    source = item.script or item.arguments  # the whole cell, not the excerpt
    if opts.scripts and source:
        from transcript_reader.present import richtext

        return [head, *richtext.code_rows(source, "javascript", layout, indent=4)]
    return [head]


def cell_output_rows(item: ToolCallItem, opts: c.Options) -> list[Row]:
    if not item.result:
        return []
    return [Line([("  ↳ cell output", "dim")]),
            *output_rows(item.result, len(item.result), opts, failed=item.success is False)]


def message_rows(text: str, opts: c.Options, layout: Layout, *, indent: int, style: str = "",
                 markdown: bool = False) -> list[Row]:
    folded = c.fold_message(clean(text), opts.message_fold_lines, opts.message_fold_chars, opts.full)
    if markdown and layout.rich:
        from transcript_reader.present import richtext

        rows = richtext.markdown_rows(folded.shown, layout, indent=indent)
    else:
        rows = _text_rows(folded.shown, indent, style)
    note = folded.note()
    if note:
        rows.append(Line([(" " * indent + note, "italic yellow")]))
    return rows


def test_run_rows(item: TestRun, *, with_command: bool = False) -> list[Row]:
    """A test run; ``with_command`` when its command is not shown just above it (``--tests``)."""
    tone = {TestResult.PASS: "green", TestResult.FAIL: "bold red"}.get(item.result, "yellow")
    t = Line(hang=4).add(f"⚑ tests {item.result.value}", tone).add(f"  {item.framework}: {c.test_summary(item)}")
    t.add(f"  {c.provenance(item.executed, item.origin)}", "dim")
    if with_command:
        t.add("  $ ", "bold").add(clean(item.command).replace("\n", " ⏎ "), "bold")
    return [t]


def item_rows(item: AnyItem, opts: c.Options, layout: Layout, full_outputs: dict[str, str], *,
              test_result: TestResult | None = None) -> list[Row]:
    if isinstance(item, ShellCommand):
        text, total = c.output_text(item, full_outputs, opts)
        return [*command_rows(item, opts, layout),
                *output_rows(text, total, opts, failed=c.command_failed(item, test_result))]
    if isinstance(item, AssistantMessage):
        label = Line().add("assistant", "bold cyan")
        if item.final:
            label.add(" · final answer", "bold green")
        if item.refusal:
            label.add(" · refused", "bold red")
        return [label, *message_rows(item.text or "_(empty message)_", opts, layout, indent=2, markdown=True)]
    if isinstance(item, PatchItem):
        return patch_rows(item, opts, layout)
    if isinstance(item, TestRun):
        return test_run_rows(item, with_command=test_result is None)
    if isinstance(item, ToolCallItem):
        if c.is_script_cell(item):
            return script_rows(item, opts, layout)
        t = Line(hang=4).add("⚙ tool ", "blue").add(clean(item.name), "bold blue")
        if item.arguments:
            t.add(f"  {one_line(item.arguments, 200)}", "dim")
        if item.success is False:
            t.add("  failed", "bold red")
        t.add(f"  {c.provenance(item.executed, item.origin)}", "dim")
        if item.result:
            return [t, Line([(f"    {one_line(item.result, 400)}", "dim")], hang=4)]
        return [t]
    if isinstance(item, StdinWrite):
        t = Line(hang=4).add("⌨ stdin ", "blue").add(one_line(repr(item.chars), 200))
        if item.session_id:
            t.add(f"  → session {item.session_id}", "dim")
        return [t]
    if isinstance(item, Notice):
        return [Line([(f"! {clean(item.category)}: {clean(item.message).strip()}", "yellow")], hang=2)]
    if isinstance(item, Unreadable):
        return [Line([(f"⚠ line {item.line} unreadable: {clean(item.reason)}", "bold red")], hang=2)]
    if isinstance(item, Reasoning):
        return message_rows(item.text, opts, layout, indent=2, style="italic dim")
    if isinstance(item, ContextMessage):
        return [Line([(f"[context {clean(item.label)}] {one_line(item.text, 200)}", "dim")], hang=2)]
    return []


# ---- the whole view ----------------------------------------------------------------------------------


def rule(title: str, layout: Layout) -> Line:
    if not title:
        return Line([("─" * (layout.width or 80), "dim")])
    room = (layout.width or 80) - width_of(title) - 1
    return Line([(title, "bold"), (" " + "─" * room, "dim")] if room >= 3 else [(title, "bold")])


def header_rows(info: SessionInfo | None, title: str | None, layout: Layout, usage: str | None = None) -> list[Row]:
    """The title, the session's facts, and ``usage`` (tokens and cost in words) when the caller has it."""
    rows: list[Row] = [Line([(clean(title or (info.title if info else None) or "(untitled session)"), "bold")],
                            hang=2)]
    if info is not None:
        bits = [x for x in (
            info.session_id,
            layout.clock.stamp(info.first_timestamp, zone=True) if info.first_timestamp else None,
            clean(info.cwd) if info.cwd else None,
            ", ".join(info.models) if info.models else None,
            c.agent_version(info),
            info.format.value if info.format else None,
        ) if x]
        rows.append(Line([(" · ".join(bits), "dim")], hang=2))
        if info.parent_session_id:
            rows.append(Line([(f"sub-agent of {info.parent_session_id}", "dim")]))
    if usage:
        rows.append(Line([(clean(usage), "dim")], hang=2))
    return rows


def footer_rows(tally: c.Tally, info: SessionInfo | None, layout: Layout) -> list[Row]:
    return [rule("", layout), Line([(" · ".join(c.footer_parts(tally, info)), "bold")])]


def belongs_to_cell(item: AnyItem, cell: ToolCallItem) -> bool:
    """Entries read from a cell's script or recorded while it ran sit at the cell's line."""
    origin = getattr(item, "origin", None)
    return origin in (Origin.SCRIPT, Origin.RECORD) and item.line == cell.line


class TimelineView:
    """Turns a stream of items into rows, one item at a time (``feed``), so that ``show`` and ``show
    --follow`` render alike: a heading at each prompt (turns numbered from 1), a code cell's entries
    indented under it and its output after them.

    A shell command is held until the next item, which may be its test run (a failing one makes its
    output fold as a failure's) or, with ``--full`` while following, its raw output. ``flush`` lets the
    held rows out (the follow loop calls it when the file stops growing); ``finish`` ends the stream.
    ``select`` says which items are shown; the view counts every item into ``tally`` regardless."""

    def __init__(self, opts: c.Options, layout: Layout, *, select: Callable[[AnyItem], bool] | None = None,
                 full_outputs: dict[str, str] | None = None) -> None:
        self.opts = opts
        self.layout = layout
        self.select = select
        self.tally = c.Tally()
        self.outputs: dict[str, str] = dict(full_outputs or {})
        self.sections = c.Sections()
        # sections are shown when prompts are (a view of commands only has no headings)
        self.headings = select is None or select(UserMessage(line=0, text=""))
        self.cell: ToolCallItem | None = None
        self.held: list[AnyItem] = []

    def feed(self, item: AnyItem) -> list[Row]:
        self.tally.add(item)
        if isinstance(item, RawOutput):
            if self.opts.full and item.call_id:
                self.outputs[item.call_id] = item.text
            return self._release() if self.held else []
        if self.select is not None and not self.select(item):
            if self.headings and self.sections.opens(item):
                # a turn whose first item is not shown (its context, reasoning) still opens its section
                rows = self._release()
                return rows + self._close_cell() + self.turn_heading(None, item.timestamp)
            return []
        if self.held:
            first = self.held[0]
            if isinstance(item, TestRun) and isinstance(first, ShellCommand) and item.line == first.line \
                    and item.command == first.command and len(self.held) == 1:
                self.held.append(item)
                if not (self.opts.full and first.origin is Origin.DIRECT and first.call_id):
                    return self._release()
                return []
            rows = self._release()
        else:
            rows = []
        if isinstance(item, ShellCommand):
            self.held = [item]
            return rows
        return rows + self._render(item)

    def flush(self) -> list[Row]:
        return self._release()

    def finish(self) -> list[Row]:
        rows = self._release()
        return rows + self._close_cell()

    def _release(self) -> list[Row]:
        held, self.held = self.held, []
        if not held:
            return []
        result = held[1].result if len(held) > 1 and isinstance(held[1], TestRun) else None
        rows = self._render(held[0], test_result=result)
        for h in held[1:]:
            rows += self._render(h, test_result=result)  # its command is just above: not repeated
        return rows

    def _close_cell(self) -> list[Row]:
        """The output of the code cell whose entries were shown last, now that they are over."""
        cell, self.cell = self.cell, None
        return cell_output_rows(cell, self.opts) if cell is not None else []

    def footer(self, info: SessionInfo | None) -> list[Row]:
        """The end of the view: a section for each turn no item showed (a turn that recorded nothing,
        e.g. a ``codex exec`` turn that ended without a message), so that the sections are the turns
        the footer counts; then the footer."""
        rows: list[Row] = []
        missing = (info.turns if info is not None and self.headings else 0) - self.sections.count
        for _ in range(max(0, missing)):
            self.sections.count += 1
            rows += self.turn_heading(None, None)
            rows.append(Line([("  " + c.NOTHING_RECORDED, "dim")]))
        return rows + footer_rows(self.tally, info, self.layout)

    def _indent_cell(self, rows: list[Row], nested: bool) -> list[Row]:
        if not nested:
            return rows
        return [Line([("  ", ""), *r.segs], hang=r.hang + 2) if isinstance(r, Line) else _indent_pre(r, 2)
                for r in rows]

    def _render(self, item: AnyItem, *, test_result: TestResult | None = None) -> list[Row]:
        rows: list[Row] = []
        nested = self.cell is not None and belongs_to_cell(item, self.cell)
        if not nested:
            rows += self._close_cell()
        if self.headings and self.sections.opens(item):
            prompt = item if isinstance(item, UserMessage) else None
            rows += self.turn_heading(prompt, item.timestamp)
            if prompt is not None:
                return rows
        if isinstance(item, UserMessage):  # typed into the running turn
            return rows + self.prompt_rows(item)
        rows += self._indent_cell(item_rows(item, self.opts, self.layout, self.outputs, test_result=test_result),
                                  nested)
        if isinstance(item, ToolCallItem) and c.is_script_cell(item):
            self.cell = item
        return rows

    @property
    def turn(self) -> int:
        """The number of the current section (0 before the first)."""
        return self.sections.count

    def turn_heading(self, prompt: UserMessage | None, timestamp: str | None) -> list[Row]:
        when = self.layout.clock.time(timestamp)
        heading: list[Row] = [rule(f"Turn {self.turn}" + (f" · {when}" if when else ""), self.layout)]
        return heading + (self.prompt_rows(prompt) if prompt is not None else [])

    def prompt_rows(self, prompt: UserMessage) -> list[Row]:
        rows: list[Row] = []
        folded = c.fold_message(clean(prompt.text), self.opts.message_fold_lines, self.opts.message_fold_chars,
                                self.opts.full)
        lines = folded.shown.strip().split("\n")
        rows.append(Line([("› ", "bold green"), (lines[0], "")], hang=2))
        rows.extend(Line([("  " + ln, "")], hang=2) for ln in lines[1:])
        if prompt.images:
            rows.append(Line([(f"  [+{len(prompt.images)} image(s)]", "dim")]))
        note = folded.note()
        if note:
            rows.append(Line([("  " + note, "italic yellow")]))
        return rows

    def running_rows(self, item: ShellCommand | ToolCallItem) -> list[Row]:
        """What a live view shows for a call that has started and not finished."""
        if isinstance(item, ShellCommand):
            rows = command_rows(item, self.opts, self.layout, running=True)
        else:
            rows = [Line().add("◆ code cell ", "bold blue").add("running", "yellow")]
        nested = False
        return self._indent_cell(rows, nested)


def _indent_pre(text: str, n: int) -> str:
    return "\n".join(" " * n + r for r in text.split("\n"))


def timeline_rows(items: Iterable[AnyItem], info: SessionInfo | None, opts: c.Options, layout: Layout, *,
                  title: str | None = None, select: Callable[[AnyItem], bool] | None = None,
                  footer: bool = True) -> Iterator[Row]:
    """Header, the turns, and the footer (the whole session's figures, whatever ``select`` shows)."""
    if info is not None or title is not None:
        yield from header_rows(info, title, layout)
    view = TimelineView(opts, layout, select=select, full_outputs=c.raw_outputs(items) if opts.full and
                        isinstance(items, list) else None)
    for item in items:
        yield from view.feed(item)
    yield from view.finish()
    if footer:
        yield from view.footer(info)


def render_text(items: Iterable[AnyItem], info: SessionInfo | None, opts: c.Options, *, width: int | None = 100,
                title: str | None = None, footer: bool = True) -> str:
    """The whole view as plain text at ``width`` (None: unwrapped), for tests and for callers that
    embed it (no colour, rich layout off)."""
    import io

    from transcript_reader.present.text import Out

    buf = io.StringIO()
    out = Out(buf, width=width, color=False)
    for r in timeline_rows(list(items), info, opts, Layout(width=width), title=title, footer=footer):
        if isinstance(r, Line):
            out.line(r)
        else:
            out.rendered(r)
    return buf.getvalue()


# ---- rich renderables of the same rows, for views that embed them (the browser) --------------------------


def _rich(rows: list[Row]) -> Any:
    from transcript_reader.present.richtext import to_text

    return to_text(rows)


def clock_time(ts: str | None) -> str:
    """A timestamp as the local time of day a heading shows."""
    return c.Clock().time(ts)


def indent(renderable: Any, n: int) -> Any:
    """``renderable`` indented by ``n`` cells (rich)."""
    from rich.padding import Padding

    return Padding(renderable, (0, 0, 0, n), expand=False)


def command_line(item: ShellCommand, opts: c.Options) -> Any:
    return _rich(command_rows(item, opts, Layout()))


def item_renderable(item: AnyItem, opts: c.Options, full_outputs: dict[str, str]) -> Any:
    rows = item_rows(item, opts, Layout(rich=True, color=True), full_outputs)
    return _rich(rows) if rows else None


def script_block(item: ToolCallItem, opts: c.Options) -> Any:
    return _rich(script_rows(item, opts, Layout(rich=True, color=True)))


def patch_block(item: PatchItem, opts: c.Options) -> Any:
    return _rich(patch_rows(item, opts, Layout(rich=True, color=True)))


def highlight_script(script: str) -> Any:
    from transcript_reader.present.richtext import code_rows

    return _rich(code_rows(script, "javascript", Layout(width=200, rich=True, color=True), indent=0))


def header(info: SessionInfo | None, title: str | None) -> Any:
    return _rich(header_rows(info, title, Layout()))
