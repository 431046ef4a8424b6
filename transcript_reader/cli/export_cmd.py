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


def load_timeline(path: str, projection: str, *, full: bool, redactor: Any = None) -> tuple[list[Any], Any, Any]:
    """``(items, info, tally)``: every item the projection shows (the raw outputs too with ``--full``),
    the session's inspect, and the figures of the whole session (every item, whatever the projection),
    from one pass. ``redactor`` (``export.redact.Redactor``) redacts each kept item and the info."""
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
            items.append(item if redactor is None else redactor.item(item))
    info = t.info()
    return items, info if redactor is None else redactor.info(info), tally


# ---- export -----------------------------------------------------------------------------------------


def _redactor(enabled: bool) -> Any:
    """The redactor of ``--redact`` (the exporter's home shown as ``~``), or None."""
    if not enabled:
        return None
    from transcript_reader.export.redact import Redactor

    return Redactor([str(Path.home())])


@click.command("export")
@click.argument("session", required=False, default="last")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json", "otlp"]), default=None,
              help="md (default), html, json, or otlp (OpenTelemetry traces as OTLP/JSON).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write to FILE (default: stdout).")
@click.option("--otlp-endpoint", "endpoint", metavar="URL",
              help="Send the session's trace over OTLP/HTTP to URL (e.g. http://127.0.0.1:4318; "
                   "a URL without a path gets /v1/traces). Implies --format otlp.")
@click.option("--otlp-header", "otlp_headers", multiple=True, metavar="KEY=VALUE",
              help="An HTTP header for --otlp-endpoint (an API key, say); repeatable.")
@click.option("--otlp-timeout", "otlp_timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              metavar="SECONDS", help="How long --otlp-endpoint may take to answer each batch.")
@click.option("--redact", is_flag=True,
              help="Replace secrets (API keys, cloud keys, tokens, private keys, passwords in URLs) and "
                   "show the home directory as ~; the header counts what was redacted.")
@view_options
@guard(None)
def export_cmd(session: str, fmt: str | None, output: str | None, endpoint: str | None,
               otlp_headers: tuple[str, ...], otlp_timeout: float, redact: bool, full: bool, diff: bool,
               scripts: bool, commands: bool, changes: bool, tests: bool, conversation: bool, final: bool,
               utc: bool) -> None:
    """Export a session as Markdown (for a PR), one self-contained HTML file, the JSON timeline, or an
    OpenTelemetry trace (OTLP/JSON to a file, or OTLP/HTTP to a collector with --otlp-endpoint).

    Nothing is uploaded unless --otlp-endpoint says where. Without --redact the export holds what the
    transcript holds; with it, secrets are replaced and the home directory is shown as ~.

    \b
    Example:
      transcript-reader export last --format html --redact -o session.html
      transcript-reader export 01a22d9c-54 --format md --diff > session.md
      transcript-reader export last --format otlp -o trace.otlp.jsonl
      transcript-reader export last --otlp-endpoint http://127.0.0.1:6006
    """
    if endpoint is not None:
        if fmt not in (None, "otlp"):
            fail(RuntimeError(f"--otlp-endpoint sends an OTLP trace: it cannot be used with --format {fmt}"),
                 as_json=False, code="invalid_argument")
        if output:
            fail(RuntimeError("--otlp-endpoint sends the trace; -o writes it to a file: give one of them"),
                 as_json=False, code="invalid_argument")
        fmt = "otlp"
    fmt = fmt or "md"
    if fmt == "otlp":
        _export_otlp(session, output, endpoint, otlp_headers, otlp_timeout, _redactor(redact))
        return
    from transcript_reader.cli.show import _projection, title_for
    from transcript_reader.present.common import Clock, Options

    projection = _projection(commands, changes, tests, conversation, final)
    redactor = _redactor(redact)
    try:
        path = resolve_path_arg(session)
        if output:
            _refuse_overwriting_the_input(path, output, as_json=fmt == "json")
        if fmt == "json":
            text = _export_json(path, projection, redactor)
        else:
            items, info, tally = load_timeline(path, projection, full=full, redactor=redactor)
            opts = Options(full=full, diff=diff or fmt == "html", scripts=scripts or fmt == "html",
                           session_cwd=info.cwd if info else None)
            title = title_for(info)
            if redactor is not None and title:
                title = redactor.text(title, count=False)
            clock = Clock(utc)
            from transcript_reader.export.cost import session_cost
            from transcript_reader.present.header import header_rows

            header = header_rows(tally, info, session_cost(info),
                                 redactor.summary() if redactor is not None else None)
            if fmt == "md":
                from transcript_reader.present.markdown import timeline_markdown

                text = timeline_markdown(items, info, opts, title=title, tally=tally, clock=clock, header=header)
            else:
                from transcript_reader.present.html import timeline_html

                text = timeline_html(items, info, opts, title=title, tally=tally, clock=clock, header=header)
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


def _export_json(path: str, projection: str, redactor: Any = None) -> str:
    """The ``read --json`` document (render.py), the whole timeline; redacted, with a ``redaction``
    member counting what was replaced."""
    from transcript_reader import api
    from transcript_reader.projections import render

    result = api.read(path, projection=projection)
    if redactor is not None:
        import dataclasses

        from transcript_reader.model import ReadResult

        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(ReadResult)}
        redactor.add_home_of(fields["info"].cwd if fields["info"] is not None else None)
        fields.update(path=redactor.text(result.path, count=False), items=tuple(redactor.item(i) for i in result.items),
                      info=redactor.info(fields["info"]))
        result = ReadResult(**fields)
    doc = render.read_result(result)
    if redactor is not None:
        doc["redaction"] = redactor.summary().as_dict()
    return json.dumps(doc, ensure_ascii=False, indent=2)


def _export_otlp(session: str, output: str | None, endpoint: str | None, headers: tuple[str, ...],
                 timeout: float, redactor: Any) -> None:
    """``--format otlp``: the trace to a file (or stdout) as OTLP/JSON lines, or to an OTLP/HTTP endpoint."""
    import sys

    from transcript_reader.export import otlp_sinks

    sent = None
    try:
        otlp_sinks.require_otel()
        path = resolve_path_arg(session)
        if endpoint is not None:
            pairs = dict(_header(h) for h in headers)
            exporter: Any = otlp_sinks.HttpExporter(endpoint, timeout_s=timeout, headers=pairs or None)
            sent = otlp_sinks.export_otlp(path, exporter, redactor=redactor)
            where = exporter.url
        elif output:
            _refuse_overwriting_the_input(path, output, as_json=False)
            try:
                fh = open(output, "w", encoding="utf-8")  # noqa: SIM115 - closed below, removed on failure
            except OSError as e:
                fail(RuntimeError(f"cannot write {output}: {e.strerror or e}"), as_json=False, code="output_error")
            try:
                sent = otlp_sinks.export_otlp(path, otlp_sinks.JsonFileExporter(fh), redactor=redactor)
            except BaseException:
                fh.close()
                Path(output).unlink(missing_ok=True)  # a cut trace is not left behind as if whole
                raise
            fh.close()
            where = output
        else:
            sent = otlp_sinks.export_otlp(path, otlp_sinks.JsonFileExporter(sys.stdout), redactor=redactor)
            where = "stdout"
    except TranscriptError as e:
        fail(e, as_json=False)
    total = sum(sent.spans.values())
    note = f"; {redactor.summary().words()}" if redactor is not None else ""
    click.echo(f"exported trace {sent.trace_id} ({total:,} spans) to {where}{note}", err=True)


def _header(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        fail(RuntimeError(f"--otlp-header wants KEY=VALUE, got {text!r}"), as_json=False, code="invalid_argument")
    return key.strip(), value.strip()
