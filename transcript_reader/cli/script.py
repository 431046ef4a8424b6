"""``transcript-reader script``: analyse one Codex code-mode exec script (presentation only)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from exec_grammar import (
    Analysis,
    PatchEntry,
    ShellCommandEntry,
    StdinWriteEntry,
    ToolCallEntry,
    analyze,
)
from exec_grammar.model import Entry
from exec_grammar.render import analysis_to_json
from transcript_reader.cli._common import guard
from transcript_reader.present.text import clean

if TYPE_CHECKING:
    from rich.text import Text

_ARG_WIDTH = 60


def _read(path: str) -> str:
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as e:
        raise click.ClickException(f"cannot read {path}: {e.strerror or e}") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise click.ClickException(f"{path} is not UTF-8 text (byte {e.start})") from e


def _short(text: str, width: int = _ARG_WIDTH) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def _entry_summary(e: Entry) -> str:
    if isinstance(e, ShellCommandEntry):
        if e.whole_script:
            return "whole script (a command in it cannot be read statically: " + ", ".join(e.call_names or ("?",)) + ")"
        return _short(e.command) + (f"  (cwd {e.cwd})" if e.cwd else "")
    if isinstance(e, StdinWriteEntry):
        return f"session {e.session_id}: {_short(repr(e.chars))}"
    if isinstance(e, PatchEntry):
        files = ", ".join(f"{f.op} {f.path}" + (f" -> {f.move_to}" if f.move_to else "") for f in e.files)
        extra = f"  (+{e.unresolved_paths} unresolved)" if e.unresolved_paths else ""
        return (files or "no readable file") + extra
    if isinstance(e, ToolCallEntry):
        return f"{e.name}({_short(e.argument_source, 40)})"
    return ""


def _source_text(a: Analysis) -> Text:
    """The script with its calls highlighted, every piece through ``clean``: a string literal holding
    ``\\x1b]0;…`` is analysed as the escape it decodes to, and shown as text, never sent."""
    from rich.text import Text

    text = Text()
    at = 0
    for c in a.calls:
        start, end = max(c.start.offset, at), max(c.end.offset, at)
        text.append(clean(a.source[at:start]))
        text.append(clean(a.source[start:end]), style="bold black on yellow")
        at = end
    text.append(clean(a.source[at:]))
    return text


def _print_rich(a: Analysis) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    header = f"parser: {a.parser}"
    if a.pragma is not None:
        header += f"   pragma: {json.dumps(dict(a.pragma))}"
    console.print(Text(clean(header)))
    if a.parse_error is not None:
        err = a.parse_error
        line = Text("parse error", style="red")
        line.append(clean(f" at line {err.line}, column {err.column}: {err.message} (calls read by the lexer)"))
        console.print(line)
    console.rule("script")
    console.print(_source_text(a))
    console.rule()
    calls = Table(title=f"{len(a.calls)} call(s)", title_justify="left")
    for col in ("#", "name", "at", "argument"):
        calls.add_column(col, overflow="fold")
    for i, c in enumerate(a.calls):
        arg = "computed: " + _short(c.argument_source) if c.computed else _short(c.argument_source)
        calls.add_row(str(i), Text(clean(c.name)), f"{c.start.line}:{c.start.column}", Text(clean(arg)))
    console.print(calls)
    entries = Table(
        title=f"{len(a.entries)} entr{'y' if len(a.entries) == 1 else 'ies'}", title_justify="left"
    )
    for col in ("call #", "kind", "executed", "what"):
        entries.add_column(col, overflow="fold")
    for e in a.entries:
        entries.add_row(str(e.order), str(e.kind), e.executed, Text(clean(_entry_summary(e))))
    console.print(entries)


@click.command("script")
@click.argument("file", default=None, required=False, metavar="[FILE|-]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the rich view.")
@click.option(
    "--parser",
    type=click.Choice(["tree-sitter", "esprima", "lexer"]),
    default="tree-sitter",
    show_default=True,
    help="Which reader finds the calls (a script the parser rejects is read by the lexer).",
)
@click.pass_context
@guard()
def script_cmd(ctx: click.Context, file: str | None, as_json: bool, parser: str) -> None:
    """Analyse one Codex code-mode exec script: its tool calls and what they mean.

    FILE is the script; `-` (or no FILE, with the script piped in) reads standard input.

    \b
    Example:
      transcript-reader script cell.js
      echo 'await tools.exec_command({cmd: "ls"})' | transcript-reader script - --json
    """
    if file is None:
        if _stdin_is_terminal():
            # nothing piped in and no file named: waiting silently for a script nobody types is no answer
            raise click.UsageError("give a script FILE, or `-` to type one (end with Ctrl-D), or pipe one in", ctx)
        file = "-"
    analysis = analyze(_read(file), parser=parser)
    if as_json:
        from transcript_reader.cli.output import echo_json

        # a lone surrogate from an escape such as "\uD800" is written as its \u escape (clean_json)
        echo_json(json.dumps(analysis_to_json(analysis), ensure_ascii=False))
    else:
        _print_rich(analysis)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, AttributeError):
        return False
