"""Markdown export of a timeline, for pasting into a pull request or an issue.

Same story as the terminal rendering (``present.common`` words it): turns as sections, each command
with its exit status, duration, whether it ran and where it came from, outputs folded, patches as file
lists (with ``--diff``: unified diffs), code cells as JavaScript blocks, a footer with the figures.
Fences are always longer than any backtick run inside them, so transcript text cannot break out.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Notice,
    Origin,
    PatchItem,
    SessionInfo,
    ShellCommand,
    StdinWrite,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.present import common as c

_TICKS = re.compile(r"`+")


def fence(text: str, lang: str = "") -> str:
    longest = max((len(m.group(0)) for m in _TICKS.finditer(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}"


def code(text: str) -> str:
    """Inline code that survives backticks in ``text``."""
    longest = max((len(m.group(0)) for m in _TICKS.finditer(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell (a pipe or a newline would end it)."""
    return text.replace("|", "\\|").replace("\n", " ")


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.strip().split("\n"))


def _command(item: ShellCommand, opts: c.Options, full_outputs: dict[str, str], indent: str) -> list[str]:
    word, tone = c.status_word(item)
    mark = {"ok": "✅", "bad": "❌"}.get(tone, "⚪")
    bits = [f"{mark} {word}"]
    if item.duration_s is not None:
        bits.append(c.duration(item.duration_s))
    bits.append(c.provenance(item.executed, item.origin))
    cwd = c.short_cwd(item.cwd, opts.session_cwd)
    if cwd:
        bits.append(f"in {code(cwd)}")
    lines = [f"{indent}- {' · '.join(bits)}: {code(item.command.replace(chr(10), ' ⏎ '))}"]
    text, _ = c.output_text(item, full_outputs, opts)
    if text:
        failed = c.command_failed(item) or (item.line, item.command) in opts.failing_runs
        block = fence(c.folded_text(c.fold_output(text, opts, failed=failed)))
        lines += [indent + "  " + ln for ln in block.split("\n")]
    return lines


def _patch(item: PatchItem, opts: c.Options, indent: str) -> list[str]:
    state = "failed" if item.success is False else "applied" if item.success else "patch"
    lines = [f"{indent}- ✏️ patch {state} · {c.provenance(item.executed, item.origin)}"]
    for letter, path, added, removed in c.patch_summary(item):
        lines.append(f"{indent}  - {letter} {code(path)} +{added} −{removed}")
    if item.unresolved_paths:
        lines.append(f"{indent}  - {item.unresolved_paths} path(s) computed by the script (not resolved)")
    if item.error:
        lines.append(f"{indent}  - error: {item.error.strip()}")
    if opts.diff:
        for f in item.files:
            if f.diff:
                lines.append(f"{indent}  - diff of {code(f.path)}" + (f" → {code(f.move_to)}" if f.move_to else ""))
                lines += [indent + "  " + ln for ln in fence(f.diff, "diff").split("\n")]
        if item.files and not any(f.diff for f in item.files):
            lines.append(f"{indent}  - _(no diff text recorded for this patch)_")
    return lines


def _item(item: AnyItem, opts: c.Options, full_outputs: dict[str, str], indent: str = "") -> list[str]:
    if isinstance(item, ShellCommand):
        return _command(item, opts, full_outputs, indent)
    if isinstance(item, PatchItem):
        return _patch(item, opts, indent)
    if isinstance(item, UserMessage):  # typed into the running turn
        return ["", _quote(item.text), ""]
    if isinstance(item, AssistantMessage):
        label = "**Assistant" + (" · final answer" if item.final else "") + (" · refused" if item.refusal else "")
        return ["", label + "**", "", item.text.strip() or "_(empty message)_", ""]
    if isinstance(item, TestRun):
        return [f"{indent}- 🧪 tests **{item.result.value}** · {item.framework}: {c.test_summary(item)} · "
                f"{c.provenance(item.executed, item.origin)}"]
    if isinstance(item, ToolCallItem):
        if c.is_script_cell(item):
            lines = ["", f"**Code cell** ({item.name})" + (" · failed" if item.success is False else "")]
            source = item.script or item.arguments  # the whole cell, not the excerpt
            if opts.scripts and source:
                lines += ["", fence(source, "js")]
            lines.append("")
            return lines
        args = " ".join(item.arguments.split())[:200]
        line = f"{indent}- ⚙️ tool {code(item.name)}" + (f" {code(args)}" if args else "")
        if item.success is False:
            line += " · failed"
        return [line]
    if isinstance(item, StdinWrite):
        return [f"{indent}- ⌨️ stdin {code(repr(item.chars)[:200])}"]
    if isinstance(item, Notice):
        return [f"{indent}- ⚠️ {item.category}: {item.message.strip()}"]
    if isinstance(item, Unreadable):
        return [f"{indent}- ⚠️ line {item.line} unreadable: {item.reason}"]
    return []


def timeline_markdown(items: Sequence[AnyItem], info: SessionInfo | None, opts: c.Options,
                      *, title: str | None = None, tally: c.Tally | None = None, clock: c.Clock | None = None,
                      header: Sequence[tuple[str, str]] = ()) -> str:
    """The document; ``header`` rows (``present.header``) are a two-column table under the title."""
    out: list[str] = [f"# {(title or (info.title if info else None) or 'Codex session').strip()}", ""]
    if info is not None:
        meta = [x for x in (
            code(info.session_id) if info.session_id else None,
            (clock or c.Clock()).stamp(info.first_timestamp, zone=True) if info.first_timestamp else None,
            code(info.cwd) if info.cwd else None,
            ", ".join(info.models) if info.models else None,
            c.agent_version(info, "Codex"),
        ) if x]
        out += [" · ".join(meta), ""]
    if header:
        out += ["| | |", "|---|---|"] + [f"| {label} | {_cell(value)} |" for label, value in header] + [""]
    full_outputs = c.raw_outputs(items) if opts.full else {}
    opts = dataclasses.replace(opts, failing_runs=c.failing_runs(items))
    for turn in c.group_turns(items, info.turns if info is not None else 0):
        if turn.index:
            out += [f"## Turn {turn.index}", ""] + ([] if turn.items or turn.prompt else [c.NOTHING_RECORDED, ""])
        if turn.prompt is not None:
            out += [_quote(turn.prompt.text), ""]
        cell: ToolCallItem | None = None
        for item in turn.items:
            nested = (cell is not None and getattr(item, "origin", None) in (Origin.SCRIPT, Origin.RECORD)
                      and item.line == cell.line)
            if cell is not None and not nested:
                out += _cell_output(cell, opts)
                cell = None
            out += _item(item, opts, full_outputs, "")
            if isinstance(item, ToolCallItem) and c.is_script_cell(item):
                cell = item
        if cell is not None:
            out += _cell_output(cell, opts)
    out += ["", "---", "", " · ".join(c.footer_parts(tally if tally is not None else items, info)), ""]
    lines: list[str] = []
    for line in out:  # one blank line between blocks (fenced text is one element: left as is)
        if line == "" and lines and lines[-1] == "":
            continue
        lines.append(line)
    return "\n".join(lines)


def _cell_output(cell: ToolCallItem, opts: c.Options) -> list[str]:
    if not cell.result:
        return []
    folded = c.fold_output(cell.result, opts, failed=cell.success is False)
    return ["", "<sub>cell output</sub>", "", fence(c.folded_text(folded)), ""]
