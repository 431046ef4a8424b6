"""The terminal rendering of a timeline (``show`` and ``read`` without ``--json``) and of a session
listing (``ls``), built with rich.

Colour and layout follow the console the caller made: rich drops styles when the output is not a
terminal, honours ``NO_COLOR``, and takes the width from the terminal or ``COLUMNS``; so the same code
gives colour on a TTY and plain, width-bounded text in a pipe or a test.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    ContextMessage,
    Executed,
    Notice,
    PatchItem,
    Reasoning,
    SessionInfo,
    ShellCommand,
    StdinWrite,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
)
from transcript_reader.present import common as c

TONE = {"ok": "green", "bad": "bold red", "warn": "yellow", "dim": "dim"}


def _time(ts: str | None) -> str:
    if not ts:
        return ""
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts
    return dt.strftime("%H:%M:%S")


def command_line(item: ShellCommand, opts: c.Options) -> Text:
    """One line per command: status, duration, ``$ command``, cwd, and whether/where it ran."""
    word, tone = c.status_word(item)
    t = Text()
    t.append("✓ " if tone == "ok" else "✗ " if tone == "bad" else "· ", style=TONE[tone])
    t.append(f"{word:<7}", style=TONE[tone])
    dur = c.duration(item.duration_s)
    t.append(f" {dur:>6} " if dur else " " * 8, style="dim")
    t.append("$ ", style="bold")
    t.append(item.command.replace("\n", " ⏎ "), style="bold")
    cwd = c.short_cwd(item.cwd, opts.session_cwd)
    if cwd:
        t.append(f"  in {cwd}", style="cyan")
    t.append(f"  [{c.provenance(item.executed, item.origin)}]", style="dim" if item.executed is Executed.YES
             else "yellow")
    if item.whole_script:
        t.append(" (whole script)", style="yellow")
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
    return Padding(out, (0, 0, 0, 4))


def patch_block(item: PatchItem, opts: c.Options) -> RenderableType:
    head = Text()
    ok = item.success is not False
    head.append("✎ patch  ", style="magenta" if ok else "bold red")
    if item.success is False:
        head.append("failed  ", style="bold red")
    head.append(f"[{c.provenance(item.executed, item.origin)}]", style="dim")
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
        rows.append(Text(f"    {item.error}", style="red"))
    if opts.diff:
        for f in item.files:
            if f.diff:
                rows.append(Padding(Syntax(f.diff.rstrip("\n"), "diff", theme="ansi_dark", word_wrap=True,
                                           background_color="default"), (0, 0, 0, 4)))
    return Group(*rows)


def script_block(item: ToolCallItem, opts: c.Options) -> RenderableType:
    """A code-mode cell: a header line, and with ``--scripts`` its JavaScript, highlighted, each
    ``tools.X(…)`` call marked (spans from exec_grammar)."""
    head = Text()
    head.append("⧉ code cell ", style="bold blue")
    head.append(f"({item.name})", style="dim")
    if item.success is False:
        head.append("  failed", style="bold red")
    rows: list[RenderableType] = [head]
    if opts.scripts and item.arguments:
        rows.append(Padding(highlight_script(item.arguments), (0, 0, 0, 4)))
    if item.result:
        block = _output_block(item.result, len(item.result), opts)
        if block is not None:
            rows.append(block)
    return Group(*rows)


def highlight_script(script: str) -> Text:
    syntax = Syntax(script, "javascript", theme="ansi_dark", background_color="default")
    text = syntax.highlight(script)
    text.rstrip()
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
        full = full_outputs.get(item.call_id or "") if opts.full else None
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
        body = Markdown(item.text or "_(empty message)_")
        return Group(label, Padding(body, (0, 0, 0, 2)))
    if isinstance(item, PatchItem):
        return patch_block(item, opts)
    if isinstance(item, TestRun):
        tone = {TestResult.PASS: "green", TestResult.FAIL: "bold red"}.get(item.result, "yellow")
        t = Text()
        t.append(f"⚑ tests {item.result.value}", style=tone)
        t.append(f"  {item.framework}: {c.test_summary(item)}")
        t.append(f"  [{c.provenance(item.executed, item.origin)}]", style="dim")
        return t
    if isinstance(item, ToolCallItem):
        if c.is_script_cell(item):
            return script_block(item, opts)
        t = Text()
        t.append("⚙ tool ", style="blue")
        t.append(item.name, style="bold blue")
        if item.arguments:
            t.append(f"  {_one_line(item.arguments, 200)}", style="dim")
        if item.success is False:
            t.append("  failed", style="bold red")
        t.append(f"  [{c.provenance(item.executed, item.origin)}]", style="dim")
        if item.result:
            return Group(t, Padding(Text(_one_line(item.result, 400), style="dim"), (0, 0, 0, 4)))
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
        return Padding(Text(item.text, style="italic dim"), (0, 0, 0, 2))
    if isinstance(item, ContextMessage):
        return Text(f"[context {item.label}] {_one_line(item.text, 200)}", style="dim")
    return None


def _one_line(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def timeline_renderables(items: Sequence[AnyItem], info: SessionInfo | None, opts: c.Options,
                         *, title: str | None = None, footer: bool = True) -> Iterator[RenderableType]:
    """Header, one section per turn, footer."""
    if title is not None or info is not None:
        yield header(info, title)
    full_outputs = c.raw_outputs(items) if opts.full else {}
    for turn in c.group_turns(items):
        if turn.prompt is not None:
            yield Rule(Text(f"Turn {turn.index} · {_time(turn.prompt.timestamp)}".rstrip(" ·"), style="bold"),
                       align="left")
            prompt = Text("› ", style="bold green")
            prompt.append(turn.prompt.text.strip())
            if turn.prompt.images:
                prompt.append(f"  [+{len(turn.prompt.images)} image(s)]", style="dim")
            yield prompt
        for item in turn.items:
            r = item_renderable(item, opts, full_outputs)
            if r is not None:
                yield r
    if footer:
        yield Rule(style="dim")
        yield Text(" · ".join(c.footer_parts(items, info)), style="bold")


def header(info: SessionInfo | None, title: str | None) -> RenderableType:
    t = Text()
    t.append(title or (info.title if info else None) or "(untitled session)", style="bold")
    if info is not None:
        bits = [x for x in (
            info.session_id,
            info.first_timestamp and info.first_timestamp.replace("T", " ")[:19],
            info.cwd,
            ", ".join(info.models) if info.models else None,
            f"codex {info.version}" if info.version else None,
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


# ---- ls ---------------------------------------------------------------------------------------------


def ls_table(rows: Sequence[dict[str, object]], *, show_stats: bool) -> Table:
    """The session listing: ``rows`` are render-ready dicts (see cli.sessions)."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", expand=False)
    table.add_column("when", no_wrap=True)
    table.add_column("took", justify="right", no_wrap=True)
    table.add_column("id", no_wrap=True, style="dim")
    table.add_column("title", overflow="ellipsis", no_wrap=True, ratio=3)
    table.add_column("cwd", overflow="ellipsis", no_wrap=True, style="cyan", ratio=1)
    table.add_column("model", no_wrap=True, overflow="ellipsis")
    table.add_column("ver", no_wrap=True, style="dim")
    if show_stats:
        table.add_column("turns", justify="right", no_wrap=True)
        table.add_column("cmds", justify="right", no_wrap=True)
        table.add_column("files", justify="right", no_wrap=True)
        table.add_column("tests", justify="right", no_wrap=True)
    table.add_column("tokens", justify="right", no_wrap=True)
    for r in rows:
        depth = int(r.get("depth") or 0)  # type: ignore[call-overload]
        title = str(r.get("title") or "(no prompt)")
        if depth:
            title = "  " * (depth - 1) + "└ " + (f"[{r['agent']}] " if r.get("agent") else "") + title
        if r.get("archived"):
            title = "[archived] " + title
        cells = [
            str(r.get("when") or ""),
            str(r.get("took") or ""),
            str(r.get("short_id") or ""),
            title,
            str(r.get("cwd_short") or "?"),
            str(r.get("model") or ""),
            str(r.get("version") or ""),
        ]
        if show_stats:
            cells += [str(r.get(k, "…")) for k in ("turns", "commands", "files", "tests")]
        cells.append(str(r.get("tokens_short") or ""))
        table.add_row(*cells)
    return table
