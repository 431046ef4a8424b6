"""``transcript-reader read`` and ``inspect``: thin presentation over ``transcript_reader.read`` /
``inspect``. ``--json`` prints exactly what ``render`` defines; errors print one line (or the JSON error
envelope) and exit non-zero, never a traceback. (``search`` lives in ``search_cmd``.)"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from transcript_reader.cli._common import caps_options, count_range, fail, guard, resolve_path_arg
from transcript_reader.errors import TranscriptError
from transcript_reader.model import Format, Kind

PROJECTION_NAMES = ["timeline", "conversation", "final", "assistant_messages", "shell_commands", "file_changes",
                    "tests", "tool_calls", "raw_outputs", "handoff"]
#: ``handoff`` (the MCP server's too): each turn's final answer, every patch, command and test run, in order.
HANDOFF = ("final", ("patch", "shell_command", "test_run"))
KIND_NAMES = [k.value for k in Kind]

if TYPE_CHECKING:
    from transcript_reader.reading.source import ReadCaps
FORMAT_NAMES = [f.value for f in Format]


def _dump(obj: Any) -> None:
    from transcript_reader.cli.output import echo_json

    echo_json(json.dumps(obj, ensure_ascii=False))


def _one_line(text: str | None, limit: int = 160) -> str:
    if not text:
        return ""
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _plain(item: Any) -> str:
    """A one-line text rendering of an item (the terminal issue owns the rich ``show`` view)."""
    k = item.kind.value
    head = f"{item.line:>5}  {k:<17}"
    if k in ("user_message", "context", "reasoning"):
        return f"{head} {_one_line(item.text)}"
    if k == "assistant_message":
        flags = "".join(f" [{f}]" for f, on in (("final", item.final), ("refusal", item.refusal)) if on)
        return f"{head}{flags} {_one_line(item.text)}"
    if k == "shell_command":
        code = "?" if item.exit_code is None else str(item.exit_code)
        return f"{head} $ {' '.join(item.command.split())}  (exit {code}, {item.origin.value}, executed {item.executed.value})"
    if k == "stdin_write":
        return f"{head} session {item.session_id}: {_one_line(item.chars, 80)!r}"
    if k == "patch":
        files = ", ".join(f"{f.op} {f.path}" + (f" -> {f.move_to}" if f.move_to else "") for f in item.files)
        ok = {True: "ok", False: "FAILED", None: "?"}[item.success]
        return f"{head} {files} ({ok}, {item.origin.value}, executed {item.executed.value})"
    if k == "test_run":
        counts = ", ".join(f"{n} {w}" for n, w in ((item.passed, "passed"), (item.failed, "failed"),
                                                  (item.skipped, "skipped")) if n is not None)
        return f"{head} {item.framework}: {item.result.value}" + (f" ({counts})" if counts else "")
    if k == "tool_call":
        ok = {True: "ok", False: "failed", None: "?"}[item.success]
        return f"{head} {item.name}({_one_line(item.arguments, 80)}) -> {ok}"
    if k == "raw_output":
        return f"{head} [{item.call_id}] {_one_line(item.text)}"
    if k == "notice":
        return f"{head} {item.category}: {_one_line(item.message)}"
    return f"{head} {item.reason}"


@click.command("read")
@click.argument("path", metavar="SESSION")
@click.option("--projection", "-p", type=click.Choice(PROJECTION_NAMES), default="timeline", show_default=True,
              help="Which items to show.")
@click.option("--include", "include", multiple=True, type=click.Choice(KIND_NAMES),
              help="Also show this kind (repeatable).")
@click.option("--exclude", "exclude", multiple=True, type=click.Choice(KIND_NAMES),
              help="Hide this kind (repeatable).")
@click.option("--tail", type=count_range(), default=None, help="Only the last N items.")
@click.option("--max-items", type=count_range(), default=None, help="At most N items.")
@click.option("--max-chars", type=count_range(), default=None, help="At most N characters of text in all.")
@click.option("--max-chars-per-item", type=count_range(), default=None,
              help="Cut each item's text to N characters.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default=None,
              help="Force a format instead of detecting it.")
@click.option("--strict", is_flag=True, help="Fail on the first unreadable line instead of reporting it.")
@caps_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@guard()
def read_cmd(path: str, projection: str, include: tuple[str, ...], exclude: tuple[str, ...], tail: int | None,
             max_items: int | None, max_chars: int | None, max_chars_per_item: int | None, fmt: str | None,
             strict: bool, as_json: bool, caps: ReadCaps | None) -> None:
    """Read a transcript into its timeline: messages, commands, patches, test runs, tool calls.

    SESSION is a file, a session id or unique prefix, a thread name, `last` or `last~N`.

    \b
    Example:
      transcript-reader read rollout.jsonl --projection shell_commands --tail 20 --json
    """
    from transcript_reader.api import read
    from transcript_reader.projections.render import read_result_to_dict
    from transcript_reader.projections.tail import read_tail

    if projection == "handoff":
        projection, include = HANDOFF[0], (*include, *HANDOFF[1])
    try:
        if tail is not None and max_items is None and fmt is None and not strict:
            # the last turns only (the same items; the totals are then not counted)
            from transcript_reader.cli._common import cache_dir
            from transcript_reader.projections.tail import LineCache

            lines = LineCache(cache_dir() / "tail-lines.json")
            result = read_tail(resolve_path_arg(path), tail, projection=projection, include=include, exclude=exclude,
                               max_chars=max_chars, max_chars_per_item=max_chars_per_item, line_cache=lines,
                               caps=caps)
            lines.save()
        else:
            result = read(resolve_path_arg(path), projection=projection, include=include, exclude=exclude, tail=tail,
                          max_items=max_items, max_chars=max_chars, max_chars_per_item=max_chars_per_item,
                          format=fmt, strict=strict, lazy_info=not as_json,  # the JSON's stats need info
                          caps=caps)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if as_json:
        _dump(read_result_to_dict(result))
        return
    from transcript_reader.cli.output import echo

    for item in result.items:
        echo(_plain(item))  # control characters in content are shown, never sent
    if result.truncated and result.total_items is None:
        echo(f"… the last {len(result.items)} item(s); earlier ones were not read (not counted), "
                   f"{result.truncated_chars} character(s) cut")
    elif result.truncated:
        echo(f"… {result.dropped_items} item(s) dropped, {result.truncated_chars} character(s) cut "
                   f"(of {result.total_items} selected)")


def from_store(path: str) -> dict[str, Any] | None:
    """The session's figures from its home's session store, when it holds this very file version
    (``sessions.stored.stored_info``; None: read the file)."""
    from transcript_reader.cli._common import cache_dir, homes
    from transcript_reader.sessions.session_homes import sources
    from transcript_reader.sessions.stored import stored_info

    return stored_info(sources(None, homes()), cache_dir(), path)


@click.command("inspect")
@click.argument("path", metavar="SESSION")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default=None,
              help="Force a format instead of detecting it.")
@click.option("--strict", is_flag=True, help="Fail on the first unreadable line instead of reporting it.")
@caps_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@guard()
def inspect_cmd(path: str, fmt: str | None, strict: bool, as_json: bool, caps: ReadCaps | None) -> None:
    """Show a transcript's metadata and figures: format, session, models, turns, counts, tokens, lines.

    \b
    Example:
      transcript-reader inspect rollout.jsonl --json
    """
    from transcript_reader.api import inspect
    from transcript_reader.projections.render import info_to_dict, with_cost

    try:
        target = resolve_path_arg(path)
        d = from_store(target) if fmt is None and not strict and caps is None else None
        if d is None or "usage" not in d:  # a store written before it kept the usage rows: read the file
            d = info_to_dict(inspect(target, format=fmt, strict=strict, caps=caps))
    except TranscriptError as e:
        fail(e, as_json=as_json)
    d = with_cost(d)
    if as_json:
        _dump({"ok": True, "path": d["path"], "format": d["format"], "info": d})
        return
    from transcript_reader.cli.output import echo

    for key in ("path", "format", "version", "session_id", "cwd", "models", "originator", "source",
                "parent_session_id", "forked_from_id", "first_timestamp", "last_timestamp", "duration_s", "turns",
                "run_status", "run_error"):
        v = d[key]
        if v not in (None, [], ""):
            echo(f"{key:<18} {', '.join(v) if isinstance(v, list) else v}")
    for key in ("counts", "tokens", "scripts", "lines"):
        echo(f"{key:<18} {json.dumps(d[key], ensure_ascii=False)}")
    from transcript_reader.present.header import cost_words
    from transcript_reader.usage.pricing import Price

    echo(f"{'cost':<18} {cost_words(Price(**d['cost']))}")
