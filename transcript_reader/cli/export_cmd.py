"""``export``: a session whole as Markdown, HTML or JSON (its own module so that ``ls`` does not import
``show``'s options). Presentation only: reading is a library call."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from transcript_reader.cli._common import fail, guard, resolve_path_arg
from transcript_reader.cli.show import view_options
from transcript_reader.errors import TranscriptError

# ---- reading a session whole (export) -------------------------------------------------------------------


def load_timeline(path: str, projection: str, *, full: bool) -> tuple[list[Any], Any, Any]:
    """``(items, info, tally)``: every item the projection shows (the raw outputs too with ``--full``),
    the session's inspect, and the figures of the whole session (every item, whatever the projection),
    from one pass."""
    from transcript_reader import api
    from transcript_reader.model import RawOutput
    from transcript_reader.present.common import Tally
    from transcript_reader.projections import selector

    select = selector(projection)
    t = api.Transcript(path)
    tally = Tally()
    items = []
    for item in t.items():
        tally.add(item)
        if select(item) or (full and isinstance(item, RawOutput)):
            items.append(item)
    return items, t.info(), tally


# ---- export -----------------------------------------------------------------------------------------




@click.command("export")
@click.argument("session", required=False, default="last")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md", show_default=True)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write to FILE (default: stdout).")
@view_options
@guard(None)
def export_cmd(session: str, fmt: str, output: str | None, full: bool, diff: bool, scripts: bool,
               commands: bool, changes: bool, tests: bool, conversation: bool, final: bool, utc: bool) -> None:
    """Export a session as Markdown (for a PR), one self-contained HTML file, or the JSON timeline.

    Nothing is uploaded and nothing is redacted: the export holds what the transcript holds.

    \b
    Example:
      transcript-reader export last --format html -o session.html
      transcript-reader export 01a22d9c-54 --format md --diff > session.md
    """
    from transcript_reader.cli.show import _projection, title_for
    from transcript_reader.present.common import Clock, Options

    projection = _projection(commands, changes, tests, conversation, final)
    try:
        path = resolve_path_arg(session)
        if output:
            _refuse_overwriting_the_input(path, output, as_json=fmt == "json")
        if fmt == "json":
            text = _export_json(path, projection)
        else:
            items, info, tally = load_timeline(path, projection, full=full)
            opts = Options(full=full, diff=diff or fmt == "html", scripts=scripts or fmt == "html",
                           session_cwd=info.cwd if info else None)
            title = title_for(info)
            clock = Clock(utc)
            if fmt == "md":
                from transcript_reader.present.markdown import timeline_markdown

                text = timeline_markdown(items, info, opts, title=title, tally=tally, clock=clock)
            else:
                from transcript_reader.present.html import timeline_html

                text = timeline_html(items, info, opts, title=title, tally=tally, clock=clock)
    except TranscriptError as e:
        fail(e, as_json=fmt == "json")
    if output:
        _refuse_overwriting_the_input(path, output, as_json=fmt == "json")  # again: it may have appeared since
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as e:
            # A missing directory or a read-only place is the user's to fix, not a bug: one error line, no traceback.
            fail(RuntimeError(f"cannot write {output}: {e.strerror or e}"), as_json=fmt == "json",
                 code="output_error")
        click.echo(f"wrote {output} ({len(text.encode('utf-8')):,} bytes)", err=True)
    else:
        from transcript_reader.cli.output import for_stdout, terminal_safe

        text = for_stdout(terminal_safe(text, as_json=fmt == "json"))
        click.echo(text, nl=not text.endswith("\n"))


def _refuse_overwriting_the_input(path: str, output: str, *, as_json: bool) -> None:
    """A read-only viewer never destroys what it reads (``export X.jsonl -o X.jsonl``, or ``-o``
    through a symlink or hard link to the rollout, replaced the transcript with its export). The
    comparison is by file identity, so every spelling of the same file is caught."""
    try:
        same = os.path.samefile(path, output)
    except OSError:
        return  # the output does not exist (yet) or cannot be examined: it is not the input
    if same:
        fail(RuntimeError(f"refusing to write {output}: it is the session file being exported ({path})"),
             as_json=as_json, code="output_error")


def _export_json(path: str, projection: str) -> str:
    """The ``read --json`` document (issue #3's render.py), the whole timeline."""
    from transcript_reader import api, render

    result = api.read(path, projection=projection)
    doc = render.read_result(result)
    return json.dumps(doc, ensure_ascii=False, indent=2)
