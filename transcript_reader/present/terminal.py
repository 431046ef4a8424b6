"""The terminal rendering of a timeline (``show`` and ``read`` without ``--json``) and of a session
listing (``ls``), built with rich.

Colour and layout follow the console the caller made: rich drops styles when the output is not a
terminal, honours ``NO_COLOR``, and takes the width from the terminal or ``COLUMNS``; so the same code
gives colour on a TTY and plain, width-bounded text in a pipe or a test.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

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

TONE = {"ok": "green", "bad": "bold red", "warn": "yellow", "dim": "dim"}


def _indent(renderable: RenderableType, n: int) -> Padding:
    return Padding(renderable, (0, 0, 0, n), expand=False)


def _time(ts: str | None) -> str:
    if not ts:
        return ""
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts
    return dt.strftime("%H:%M:%S")


def command_line(item: ShellCommand, opts: c.Options) -> Text:
    """One line per command: status, duration, whether/where it ran, cwd, then ``$ command`` (cut
    with an ellipsis at the terminal's width unless ``--full``)."""
    word, tone = c.status_word(item)
    t = Text(no_wrap=not opts.full, overflow="ellipsis")
    t.append("✓ " if tone == "ok" else "✗ " if tone == "bad" else "· ", style=TONE[tone])
    t.append(f"{word:<7}", style=TONE[tone])
    dur = c.duration(item.duration_s)
    t.append(f" {dur:>5}" if dur else " " * 6, style="dim")
    t.append(f"  {c.provenance(item.executed, item.origin)}",
             style="dim" if item.executed is Executed.YES else "yellow")
    if item.whole_script:
        t.append(" (whole script)", style="yellow")
    cwd = c.short_cwd(item.cwd, opts.session_cwd)
    if cwd:
        t.append(f"  in {cwd}", style="cyan")
    t.append("  $ ", style="bold")
    t.append(item.command.replace("\n", " ⏎ "), style="bold")
    return t


def _output_block(text: str | None, total_chars: int, opts: c.Options) -> RenderableType | None:
    if not text:
        return None
    shown, cut = c.fold(text, opts.fold_lines, opts.full)
    out = Text(shown, style="dim")
    notes = []
    if cut:
        notes.append(f"… {cut} more line{'s' if cut != 1 else ''} (--full)")
    if not opts.full and total_chars > len(text):
        notes.append(f"… output excerpt: {len(text):,} of {total_chars:,} chars (--full)")
    if notes:
        out.append("\n" + "  ".join(notes), style="italic yellow")
    return _indent(out, 4)


def patch_block(item: PatchItem, opts: c.Options) -> RenderableType:
    head = Text()
    ok = item.success is not False
    head.append("✎ patch  ", style="magenta" if ok else "bold red")
    if item.success is False:
        head.append("failed  ", style="bold red")
    head.append(c.provenance(item.executed, item.origin), style="dim" if item.executed is Executed.YES else "yellow")
    rows: list[RenderableType] = [head]
    for letter, path, added, removed in c.patch_summary(item):
        line = Text("    ")
        line.append(f"{letter} ", style={"A": "green", "D": "red", "M": "yellow"}.get(letter, ""))
        line.append(path)
        line.append(f"  +{added}", style="green")
        line.append(f" -{removed}", style="red")
        rows.append(line)
    if item.unresolved_paths:
        rows.append(Text(f"    + {item.unresolved_paths} path(s) the script computes (not resolved)",
                         style="yellow"))
    if item.error:
        rows.append(_indent(Text(item.error, style="red"), 4))
    if opts.diff:
        for f in item.files:
            if f.diff:
                # each diff under its file's name: a multi-file patch is unreadable otherwise
                rows.append(Text(f"    ── {f.path}" + (f" → {f.move_to}" if f.move_to else ""), style="bold"))
                rows.append(_indent(Syntax(f.diff.rstrip("\n"), "diff", theme="ansi_dark", word_wrap=True,
                                           background_color="default"), 4))
        if item.files and not any(f.diff for f in item.files):
            rows.append(_indent(Text("(no diff text recorded for this patch)", style="dim italic"), 4))
    return Group(*rows)


def script_block(item: ToolCallItem, opts: c.Options) -> RenderableType:
    """A code-mode cell's header and, with ``--scripts``, its JavaScript, highlighted, each
    ``tools.X(…)`` call marked (spans from exec_grammar). The entries the cell ran follow it, then
    ``script_result``."""
    head = Text()
    head.append("⧉ code cell ", style="bold blue")
    head.append(f"({item.name})", style="dim")
    if item.success is False:
        head.append("  failed", style="bold red")
    source = item.script or item.arguments  # the whole cell, not the excerpt
    if opts.scripts and source:
        return Group(head, _indent(highlight_script(source), 4))
    return head


def script_result(item: ToolCallItem, opts: c.Options) -> RenderableType | None:
    if not item.result:
        return None
    label = Text("  ↳ cell output", style="dim")
    block = _output_block(item.result, len(item.result), opts)
    return Group(label, block) if block is not None else None


def highlight_script(script: str) -> Text:
    syntax = Syntax(script, "javascript", theme="ansi_dark", background_color="default")
    text = syntax.highlight(script)
    text.rstrip()
    text.no_wrap = False
    text.overflow = "fold"
    for start, end in script_call_spans(script):
        text.stylize("bold underline", start, end)
    return text


def script_call_spans(script: str) -> list[tuple[int, int]]:
    """``(start, end)`` code-point offsets of each ``tools.X(…)`` call; empty when the analyzer is
    unavailable or rejects the script (the highlighting stays, only the marks go)."""
    try:
        from exec_grammar import analyze

        analysis = analyze(script)
    except Exception:  # noqa: BLE001 - marks are a nicety; never fail a rendering over them
        return []
    return [(call.start.offset, call.end.offset) for call in analysis.calls]


def item_renderable(item: AnyItem, opts: c.Options, full_outputs: dict[str, str]) -> RenderableType | None:
    if isinstance(item, ShellCommand):
        rows: list[RenderableType] = [command_line(item, opts)]
        # a raw output is a direct call's own; a script entry shares its cell's call id, whose raw output is
        # the whole cell's (Script completed / Wall time …), not this command's
        full = full_outputs.get(item.call_id or "") if opts.full and item.origin is Origin.DIRECT else None
        block = _output_block(full if full is not None else item.output,
                              len(full) if full is not None else item.output_chars, opts)
        if block is not None:
            rows.append(block)
        return Group(*rows)
    if isinstance(item, AssistantMessage):
        label = Text("assistant", style="bold cyan")
        if item.final:
            label.append(" · final answer", style="bold green")
        if item.refusal:
            label.append(" · refused", style="bold red")
        folded = c.fold_message(item.text or "_(empty message)_", opts.message_fold_lines,
                                opts.message_fold_chars, opts.full)
        return Group(label, _indent(Markdown(folded.shown), 2), *_fold_note(folded, 2))
    if isinstance(item, PatchItem):
        return patch_block(item, opts)
    if isinstance(item, TestRun):
        tone = {TestResult.PASS: "green", TestResult.FAIL: "bold red"}.get(item.result, "yellow")
        t = Text()
        t.append(f"⚑ tests {item.result.value}", style=tone)
        t.append(f"  {item.framework}: {c.test_summary(item)}")
        t.append(f"  {c.provenance(item.executed, item.origin)}", style="dim")
        return t
    if isinstance(item, ToolCallItem):
        if c.is_script_cell(item):
            return script_block(item, opts)  # timeline_renderables adds the entries and the output
        t = Text()
        t.append("⚙ tool ", style="blue")
        t.append(item.name, style="bold blue")
        if item.arguments:
            t.append(f"  {_one_line(item.arguments, 200)}", style="dim")
        if item.success is False:
            t.append("  failed", style="bold red")
        t.append(f"  {c.provenance(item.executed, item.origin)}", style="dim")
        if item.result:
            return Group(t, _indent(Text(_one_line(item.result, 400), style="dim"), 4))
        return t
    if isinstance(item, StdinWrite):
        t = Text()
        t.append("⌨ stdin ", style="blue")
        t.append(repr(item.chars)[:200])
        if item.session_id:
            t.append(f"  → session {item.session_id}", style="dim")
        return t
    if isinstance(item, Notice):
        return Text(f"! {item.category}: {item.message}", style="yellow")
    if isinstance(item, Unreadable):
        return Text(f"⚠ line {item.line} unreadable: {item.reason}", style="bold red")
    if isinstance(item, Reasoning):
        folded = c.fold_message(item.text, opts.message_fold_lines, opts.message_fold_chars, opts.full)
        return Group(_indent(Text(folded.shown, style="italic dim"), 2), *_fold_note(folded, 2))
    if isinstance(item, ContextMessage):
        return Text(f"[context {item.label}] {_one_line(item.text, 200)}", style="dim")
    return None


def _fold_note(folded: c.Folded, indent: int) -> list[RenderableType]:
    note = folded.note()
    return [_indent(Text(note, style="italic yellow"), indent)] if note else []


def _belongs_to_cell(item: AnyItem, cell: ToolCallItem) -> bool:
    """Entries read from a cell's script or recorded while it ran sit at the cell's line."""
    origin = getattr(item, "origin", None)
    return origin in (Origin.SCRIPT, Origin.RECORD) and item.line == cell.line


def _one_line(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def timeline_renderables(items: Sequence[AnyItem], info: SessionInfo | None, opts: c.Options,
                         *, title: str | None = None, footer: bool = True) -> Iterator[RenderableType]:
    """Header, one section per turn, footer."""
    if title is not None or info is not None:
        yield header(info, title)
    yield from timeline_body(items, opts, c.raw_outputs(items) if opts.full else {})
    if footer:
        yield Rule(style="dim")
        yield Text(" · ".join(c.footer_parts(items, info)), style="bold")


def timeline_body(items: Iterable[AnyItem], opts: c.Options,
                  full_outputs: dict[str, str] | None = None) -> Iterator[RenderableType]:
    """The turns of a timeline, rendered as the items come: a heading at each prompt (numbered from 1),
    a code cell's script entries and records indented under it and its output after them. It reads
    ``items`` once, in order, so ``show`` and ``show --follow`` (a live stream) render alike (QA2 F8).

    ``full_outputs`` (raw outputs by call id, for ``--full``) is known up front for a whole list; a
    stream (``full_outputs`` None) holds a direct command until the next item, which is its raw output
    when nothing came between its call and its output (QA3 G1)."""
    outputs: dict[str, str] = dict(full_outputs or {})
    streaming = full_outputs is None and opts.full
    turn = 0
    cell: ToolCallItem | None = None
    held: list[AnyItem] = []  # a direct command (and its test run) waiting for its raw output

    def render(item: AnyItem) -> Iterator[RenderableType]:
        nonlocal turn, cell
        nested = cell is not None and _belongs_to_cell(item, cell)
        if cell is not None and not nested:
            done = script_result(cell, opts)
            if done is not None:
                yield done
            cell = None
        if isinstance(item, UserMessage):
            turn += 1
            yield from turn_heading(turn, item, opts)
            return
        r = item_renderable(item, opts, outputs)
        if r is not None:
            yield _indent(r, 2) if nested else r
        if isinstance(item, ToolCallItem) and c.is_script_cell(item):
            cell = item

    for item in items:
        if held:
            held_id = getattr(held[0], "call_id", None)
            if isinstance(item, TestRun) and item.call_id == held_id:
                held.append(item)  # the command's test run comes between it and its raw output
                continue
            if isinstance(item, RawOutput) and item.call_id and item.call_id == held_id:
                outputs[item.call_id] = item.text
            for h in held:
                yield from render(h)
            held = []
        if isinstance(item, RawOutput):
            continue
        if streaming and isinstance(item, ShellCommand) and item.origin is Origin.DIRECT and item.call_id:
            held = [item]
            continue
        yield from render(item)
    for h in held:
        yield from render(h)
    if cell is not None:
        done = script_result(cell, opts)
        if done is not None:
            yield done


def turn_heading(index: int, prompt_item: UserMessage, opts: c.Options | None = None) -> list[RenderableType]:
    """A rule naming the turn and its time, then the prompt (folded when long, like outputs)."""
    opts = opts or c.Options()
    rule = Rule(Text(f"Turn {index} · {_time(prompt_item.timestamp)}".rstrip(" ·"), style="bold"), align="left")
    prompt = Text("› ", style="bold green")
    folded = c.fold_message(prompt_item.text, opts.message_fold_lines, opts.message_fold_chars, opts.full)
    prompt.append(folded.shown.strip())
    if prompt_item.images:
        prompt.append(f"  [+{len(prompt_item.images)} image(s)]", style="dim")
    return [rule, prompt, *_fold_note(folded, 2)]


def header(info: SessionInfo | None, title: str | None) -> RenderableType:
    t = Text()
    t.append(title or (info.title if info else None) or "(untitled session)", style="bold")
    if info is not None:
        bits = [x for x in (
            info.session_id,
            info.first_timestamp and info.first_timestamp.replace("T", " ")[:19],
            info.cwd,
            ", ".join(info.models) if info.models else None,
            c.agent_version(info),
            info.format.value,
        ) if x]
        t.append("\n" + " · ".join(bits), style="dim")
        if info.parent_session_id:
            t.append(f"\nsub-agent of {info.parent_session_id}", style="dim")
    return t


def print_timeline(console: Console, items: Sequence[AnyItem], info: SessionInfo | None, opts: c.Options,
                   *, title: str | None = None, footer: bool = True) -> None:
    for r in timeline_renderables(items, info, opts, title=title, footer=footer):
        console.print(r)
