"""``search``: one transcript (``search PATH QUERY``, issue #3's contract) or every session ``ls`` would
list (``search QUERY``), streaming hits as they are found, with a progress bar on stderr.

Cross-session search reads each candidate file whole, so it first checks cheaply whether the query's
bytes occur in the file at all (case-insensitive, for queries JSON never escapes); files without them
are skipped without decoding. Regex queries and queries with characters JSON may escape read every file.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

from transcript_reader.cli._common import codex_home, fail, guard, make_console, resolve_path_arg
from transcript_reader.cli.sessions import filter_options, select_sessions
from transcript_reader.errors import InvalidArgumentError, TranscriptError

#: Bytes read per chunk by the quick pre-check.
_CHUNK = 1 << 20


def _plain_query_bytes(query: str) -> bytes | None:
    """The lower-cased bytes to look for, or None when the query could be written escaped in JSON
    (non-ASCII, quotes, backslashes, slashes, control characters) and the pre-check must not skip."""
    if not query or not query.isascii() or any(ch in query for ch in '"\\/') or any(ord(ch) < 32 for ch in query):
        return None
    return query.lower().encode("ascii")


def file_may_contain(path: str, needle: bytes) -> bool:
    """Whether ``needle`` (lower-case ASCII) occurs in the file, case-insensitively, read in chunks with
    an overlap so a hit across a chunk boundary is found. Compressed files are always read."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) == b"\x28\xb5\x2f\xfd":
                return True
            fh.seek(0)
            tail = b""
            keep = len(needle) - 1
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    return False
                block = tail + chunk.lower()
                if needle in block:
                    return True
                tail = block[-keep:] if keep else b""
    except OSError:
        return True  # let the reader report the error


def _item_text(item: Any) -> str:
    files = getattr(item, "files", None)
    if files:
        return " ".join(f.path for f in files)
    return getattr(item, "command", None) or getattr(item, "text", None) or getattr(item, "name", "") or ""


def _time(ts: str | None) -> str:
    return ts.replace("T", " ")[:19] if ts else ""


@click.command("search")
@click.argument("args", nargs=-1, required=True, metavar="[PATH] QUERY")
@click.option("--regex", is_flag=True, help="QUERY is a regular expression (Python syntax).")
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only items of this kind (repeatable): user_message, assistant_message, shell_command, patch, …")
@click.option("--context", type=click.IntRange(min=0), default=0, help="Items before/after each match (PATH mode).")
@click.option("--max-matches", type=click.IntRange(min=1), default=None,
              help="At most N matches (PATH mode: default 25; across sessions: per session, default 5).")
@filter_options
@click.option("--json", "as_json", is_flag=True, help="JSON (PATH mode: one document; across sessions: JSON lines).")
@click.option("--no-color", is_flag=True, help="No colours (also: NO_COLOR=1).")
@guard()
def search_cmd(args: tuple[str, ...], regex: bool, kinds: tuple[str, ...], context: int, max_matches: int | None,
               archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool, since: str | None,
               until: str | None, grep: str | None, limit: int | None, as_json: bool, no_color: bool) -> None:
    """Search one transcript (PATH QUERY) or every session `ls` would list (QUERY alone).

    PATH may be a file, a session id or prefix, `last` or `last~N`. Matching is a case-insensitive
    substring unless --regex; each hit shows an excerpt centred on it.

    \b
    Example:
      transcript-reader search "pytest -q"
      transcript-reader search --kind shell_command --since 2w "rm -rf"
      transcript-reader search last "calc.py" --context 1 --json
    """
    if len(args) > 2:
        raise click.UsageError("search takes [PATH] QUERY (quote a query that has spaces)")
    if regex:
        try:
            re.compile(args[-1])
        except re.error as e:
            fail(InvalidArgumentError(f"invalid regex: {e}"), as_json=as_json)
    if len(args) == 2:
        _search_one(args[0], args[1], regex=regex, kinds=kinds, context=context,
                    max_matches=max_matches or 25, as_json=as_json, no_color=no_color)
        return
    _search_sessions(args[0], regex=regex, kinds=kinds, max_matches=max_matches or 5, as_json=as_json,
                     no_color=no_color, archived=archived, all_=all_, cwd_filter=cwd_filter,
                     all_projects=all_projects, since=since, until=until, grep=grep, limit=limit)


def _search_one(path_arg: str, query: str, *, regex: bool, kinds: tuple[str, ...], context: int,
                max_matches: int, as_json: bool, no_color: bool) -> None:
    from transcript_reader import api, render

    try:
        path = resolve_path_arg(path_arg)
        result = api.search(path, query, regex=regex, kinds=kinds, context=context, max_matches=max_matches)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if as_json:
        click.echo(json.dumps(render.search_result(result), ensure_ascii=False))
        return
    from rich.text import Text

    console = make_console(no_color=no_color)
    for m in result.matches:
        for b in m.before:
            console.print(Text(f"  {b.line:>6}  {b.kind.value:<17} {_one_line(_item_text(b), 120)}", style="dim"),
                          no_wrap=True, overflow="ellipsis", crop=True)
        line = Text(f"▶ {m.item.line:>6}  ", style="bold")
        line.append(f"{m.item.kind.value:<17} ", style="cyan")
        room = max(20, console.width - len(line.plain))
        line.append_text(_excerpt_text(centre(m.excerpt, query, regex, room), query, regex))
        console.print(line, no_wrap=True, overflow="ellipsis", crop=True)
        for a in m.after:
            console.print(Text(f"  {a.line:>6}  {a.kind.value:<17} {_one_line(_item_text(a), 120)}", style="dim"),
                          no_wrap=True, overflow="ellipsis", crop=True)
    more = f" (showing {len(result.matches)})" if result.truncated else ""
    console.print(Text(f"{result.total_matches} match{'es' if result.total_matches != 1 else ''}{more} in "
                       f"{result.path}", style="dim"))


def _one_line(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def centre(excerpt: str, query: str, regex: bool, width: int) -> str:
    """One line of at most ``width`` characters of ``excerpt`` with the first hit in the middle."""
    text = " ".join(excerpt.split())
    if len(text) <= width:
        return text
    try:
        m = re.search(query if regex else re.escape(query), text, re.IGNORECASE)
    except re.error:
        m = None
    mid = (m.start() + m.end()) // 2 if m else 0
    start = max(0, min(mid - width // 2, len(text) - width))
    out = text[start:start + width]
    if start > 0:
        out = "…" + out[1:]
    if start + width < len(text):
        out = out[:-1] + "…"
    return out


def _excerpt_text(excerpt: str, query: str, regex: bool) -> Any:
    from rich.text import Text

    t = Text(" ".join(excerpt.split()))
    try:
        pattern = re.compile(query if regex else re.escape(query), re.IGNORECASE)
        t.highlight_regex(pattern, style="bold yellow reverse")
    except re.error:
        pass
    return t


def _search_sessions(query: str, *, regex: bool, kinds: tuple[str, ...], max_matches: int, as_json: bool,
                     no_color: bool, **filters: Any) -> None:
    from rich.text import Text

    from transcript_reader import api, render

    try:
        sessions = select_sessions(**filters)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    needle = None if regex else _plain_query_bytes(query)
    console = make_console(no_color=no_color)
    err_console = make_console(stderr=True, no_color=no_color)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    # On a terminal only: rich would leave blank lines in a redirected stderr.
    progress = Progress(TextColumn("searching"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[hits]} hits"), console=err_console, transient=True,
                        disable=not err_console.is_terminal)
    task = progress.add_task("search", total=len(sessions), hits=0)
    hits = skipped = failed = 0
    from transcript_reader.discovery import session_ids, unique_prefixes

    # The id printed must resolve back to its session (`show PREFIX`), among every session (QA F3).
    short = unique_prefixes([e.session_id for e in sessions if e.session_id], session_ids(codex_home()),
                            min_len=13)
    id_width = max((len(v) for v in short.values()), default=0)
    with progress:
        for entry in sessions:
            progress.advance(task)
            if needle is not None and not file_may_contain(entry.path, needle):
                skipped += 1
                continue
            try:
                result = api.search(entry.path, query, regex=regex, kinds=kinds, context=0,
                                    max_matches=max_matches, max_chars_per_match=300)
            except TranscriptError as e:
                failed += 1
                if as_json:
                    click.echo(json.dumps({"ok": False, "session": entry.session_id, "path": entry.path,
                                           "error": {"code": e.code, "message": str(e)}}, ensure_ascii=False))
                else:
                    progress.console.print(Text(f"skipped {entry.path}: {e}", style="yellow"))
                continue
            for m in result.matches:
                hits += 1
                progress.update(task, hits=hits)
                if as_json:
                    click.echo(json.dumps({
                        "ok": True, "session": entry.session_id, "path": entry.path, "title": entry.title,
                        "line": m.item.line, "timestamp": m.item.timestamp, "kind": m.item.kind.value,
                        "excerpt": m.excerpt, "item": render.item_to_dict(m.item),
                    }, ensure_ascii=False))
                    continue
                t = Text()
                t.append(f"{short.get(entry.session_id or '', ''):<{id_width}} ", style="dim")
                t.append(f"{_time(m.item.timestamp or entry.head.timestamp)} ", style="green")
                t.append(f"{m.item.kind.value:<17} ", style="cyan")
                room = max(20, console.width - len(t.plain))
                t.append_text(_excerpt_text(centre(m.excerpt, query, regex, room), query, regex))
                console.print(t, no_wrap=True, overflow="ellipsis", crop=True)
            if result.truncated and not as_json:
                console.print(Text(f"  … {result.total_matches - len(result.matches)} more in this session "
                                   f"(search {entry.session_id} {query!r})", style="dim"))
    if not as_json:
        err_console.print(Text(f"{hits} hit{'s' if hits != 1 else ''} in {len(sessions)} session(s)"
                               + (f", {failed} unreadable" if failed else ""), style="dim"))
