"""``search``: one transcript (``search PATH QUERY``, issue #3's contract) or every session ``ls`` would
list (``search QUERY``), streaming hits as they are found, with a progress bar on stderr.

Cross-session search reads each candidate file whole, so it first checks cheaply whether a hit is
possible at all (``query_needle``): a file is skipped without decoding only when it lacks one of the
query's letter-and-digit runs and holds nothing from which the reader could derive it (escapes,
template substitutions). Regex queries read every file.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

import click

from transcript_reader.cli._common import codex_home, fail, guard, make_console, resolve_path_arg
from transcript_reader.cli.sessions import filter_options, select_sessions
from transcript_reader.errors import InvalidArgumentError, TranscriptError
from transcript_reader.render import error_to_dict

#: Bytes read per chunk by the quick pre-check.
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Needle:
    """What the pre-check looks for: every ``piece`` must occur in the raw file (lower-cased ASCII)
    unless one of the ``markers`` does, which means the file may hold text the reader derives rather
    than copies, and so the file is read."""

    pieces: tuple[bytes, ...]
    markers: tuple[bytes, ...]


#: Raw bytes after which any character may be derived: a JSON-escaped backslash (a JS escape inside a
#: script string: ``it\'s``, ``\x41``, ``\u0041``, ``\101``, a line continuation), a JSON ``\u`` escape,
#: and a template substitution (``${dir}/a.txt`` resolved into a patch path) -- QA F15.
_MARKERS = (b"\\\\", b"\\u", b"${")

#: Non-ASCII characters that Python's case-insensitive matching equates with an ASCII letter.
_CASE_PARTNERS = {"i": ("\u0130", "\u0131"), "k": ("\u212a",), "s": ("\u017f",)}


@functools.cache
def _derived_words() -> frozenset[str]:
    """Every word the reader may add to a test run's search text (its framework name, QA F15): the
    framework names declared with each runner (``testruns.FRAMEWORKS``)."""
    from transcript_reader.testruns import FRAMEWORKS

    return frozenset(w.lower() for w in FRAMEWORKS)


def query_needle(query: str) -> Needle | None:
    """The pre-check for a plain query, or None when no file may be skipped for it.

    The query is cut into runs of ASCII letters, digits and ``_``: a derivation the reader makes
    without escapes (argv joined with spaces and quotes, JSON escapes of quotes, slashes and control
    characters, paths joined or normalised) only adds or drops characters outside such runs, so every
    run of a hit occurs in the raw file unless a marker does. Runs that a framework name (added to a
    test run's text) could supply are not required; a query left without runs is never pre-checked."""
    words = _derived_words()
    # A run that a framework name could hold may come from that name, not from the file.
    pieces = [p for p in re.split(r"[^a-z0-9_]+", query.lower()) if p and not any(p in w for w in words)]
    if not pieces:
        return None
    markers = list(_MARKERS)
    for letter, partners in _CASE_PARTNERS.items():
        if any(letter in p for p in pieces):
            markers.extend(ch.encode("utf-8") for ch in partners)
    return Needle(tuple(dict.fromkeys(p.encode("ascii") for p in pieces)), tuple(markers))


def file_may_contain(path: str, needle: Needle) -> bool:
    """Whether a hit is possible in the file: every piece occurs (case-insensitively) or a marker does.
    Read in chunks with an overlap so nothing across a chunk boundary is missed. Compressed files are
    always read."""
    missing = set(needle.pieces)
    keep = max(len(x) for x in (*needle.pieces, *needle.markers)) - 1
    try:
        with open(path, "rb") as fh:
            if fh.read(4) == b"\x28\xb5\x2f\xfd":
                return True
            fh.seek(0)
            tail = b""
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    return False
                block = tail + chunk.lower()
                if any(m in block for m in needle.markers):
                    return True
                missing = {p for p in missing if p not in block}
                if not missing:
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
    needle = None if regex else query_needle(query)
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
                    click.echo(json.dumps(error_to_dict(e.code, str(e), session=entry.session_id, path=entry.path),
                                          ensure_ascii=False))
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
