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
from pathlib import Path
from typing import Any

import click

from transcript_reader.cli._common import codex_home, fail, guard, resolve_path_arg
from transcript_reader.cli.sessions import filter_options, select_sessions
from transcript_reader.errors import InvalidArgumentError, TranscriptError

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
    """Every word the reader may add to a test run's search text (its framework name, QA F15): a
    superset, all lower-case string constants of the module that detects test runs."""
    import ast

    from transcript_reader import testruns

    tree = ast.parse(Path(testruns.__file__).read_text(encoding="utf-8"))
    return frozenset(n.value.lower() for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str)
                     and re.fullmatch(r"[A-Za-z0-9_.+-]{1,40}", n.value))


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
@click.option("--utc", is_flag=True, help="Times in UTC (default: local time).")
@click.option("--no-color", is_flag=True, help="No colours or styles (also: NO_COLOR=1).")
@guard()
def search_cmd(args: tuple[str, ...], regex: bool, kinds: tuple[str, ...], context: int, max_matches: int | None,
               archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool, since: str | None,
               until: str | None, grep: str | None, limit: int | None, as_json: bool, utc: bool, no_color: bool) -> None:
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
    _check_kinds(kinds)
    if regex:
        try:
            re.compile(args[-1])
        except re.error as e:
            raise click.BadParameter(f"invalid regex: {e}", param_hint="QUERY") from None
    if len(args) == 2:
        _search_one(args[0], args[1], regex=regex, kinds=kinds, context=context,
                    max_matches=max_matches or 25, as_json=as_json, no_color=no_color)
        return
    _search_sessions(args[0], regex=regex, kinds=kinds, max_matches=max_matches or 5, as_json=as_json,
                     no_color=no_color, utc=utc, archived=archived, all_=all_, cwd_filter=cwd_filter,
                     all_projects=all_projects, since=since, until=until, grep=grep, limit=limit)


def _check_kinds(kinds: tuple[str, ...]) -> None:
    """A mistyped ``--kind`` is one usage error before any file is read (not a skip per session)."""
    from transcript_reader.projections import parse_kinds

    try:
        parse_kinds(kinds)
    except InvalidArgumentError as e:
        raise click.BadParameter(str(e), param_hint="--kind") from None


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
    from transcript_reader.cli.output import text_output
    from transcript_reader.present.text import Line, clean

    with text_output(no_color=no_color) as (out, layout):
        width = layout.width or 10_000
        for m in result.matches:
            for b in m.before:
                out.line(_context_line(b, width))
            head = f"▶ {m.item.line:>6}  {m.item.kind.value:<17} "
            out.line(Line([(head[:2], "bold"), (head[2:10], "bold"), (head[10:], "cyan"),
                           *_excerpt_segs(centre(clean(m.excerpt), query, regex, max(20, width - len(head))),
                                          query, regex)]))
            for a in m.after:
                out.line(_context_line(a, width))
        more = f" (showing {len(result.matches)})" if result.truncated else ""
        out.line(Line([(f"{result.total_matches} match{'es' if result.total_matches != 1 else ''}{more} in "
                        f"{result.path}", "dim")]))


def _context_line(item: Any, width: int) -> Any:
    from transcript_reader.present.text import Line, clean

    text = f"  {item.line:>6}  {item.kind.value:<17} " + _one_line(clean(_item_text(item)), 120)
    return Line([(text[:width], "dim")])


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


def _excerpt_segs(excerpt: str, query: str, regex: bool) -> list[tuple[str, str]]:
    """The excerpt as segments, each hit highlighted."""
    text = " ".join(excerpt.split())
    try:
        pattern = re.compile(query if regex else re.escape(query), re.IGNORECASE)
    except re.error:
        return [(text, "")]
    segs: list[tuple[str, str]] = []
    at = 0
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        segs.append((text[at:m.start()], ""))
        segs.append((m.group(0), "bold yellow reverse"))
        at = m.end()
    segs.append((text[at:], ""))
    return [s for s in segs if s[0]]


def _search_sessions(query: str, *, regex: bool, kinds: tuple[str, ...], max_matches: int, as_json: bool,
                     no_color: bool, utc: bool = False, **filters: Any) -> None:
    from transcript_reader import api, render
    from transcript_reader.cli.output import ProgressLine, text_output
    from transcript_reader.cli.sessions import unreadable_note
    from transcript_reader.present.common import Clock
    from transcript_reader.present.text import Line, clean

    try:
        sessions = select_sessions(**filters)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if not sessions and not codex_home().is_dir():
        from transcript_reader.cli._common import where_looked

        click.echo(f"No sessions to search: {where_looked(codex_home())}. Set CODEX_HOME to your Codex home.",
                   err=True)
    needle = None if regex else query_needle(query)
    progress = ProgressLine("searching")
    clock = Clock(utc)
    hits = skipped = failed = 0
    from transcript_reader.discovery import session_ids, unique_prefixes

    # The id printed must resolve back to its session (`show PREFIX`), among every session (QA F3).
    short = unique_prefixes([e.session_id for e in sessions if e.session_id], session_ids(codex_home()),
                            min_len=13)
    id_width = max((len(v) for v in short.values()), default=0)
    unreadable = []
    with text_output(no_color=no_color, utc=utc) as (out, layout):
        width = layout.width or 10_000
        for n, entry in enumerate(sessions, 1):
            progress.update(n, len(sessions), f"{hits} hits")
            if (entry.head.error or "").startswith("cannot read"):
                unreadable.append(entry)  # listed so that it is counted (a permission-denied file)
            if needle is not None and not file_may_contain(entry.path, needle):
                skipped += 1
                continue
            try:
                result = api.search(entry.path, query, regex=regex, kinds=kinds, context=0,
                                    max_matches=max_matches, max_chars_per_match=300)
            except TranscriptError as e:
                failed += 1
                if as_json:
                    progress.clear()
                    click.echo(json.dumps({"ok": False, "session": entry.session_id, "path": entry.path,
                                           "error": {"code": e.code, "message": str(e)}}, ensure_ascii=False))
                else:
                    progress.clear()
                    click.echo(f"skipped {entry.path}: {e}", err=True)
                continue
            for m in result.matches:
                hits += 1
                progress.clear()  # a hit never starts glued to the bar
                if as_json:
                    click.echo(json.dumps({
                        "ok": True, "session": entry.session_id, "path": entry.path, "title": entry.title,
                        "line": m.item.line, "timestamp": m.item.timestamp, "kind": m.item.kind.value,
                        "excerpt": m.excerpt, "item": render.item_to_dict(m.item),
                    }, ensure_ascii=False))
                    continue
                sid = f"{short.get(entry.session_id or '', ''):<{id_width}} "
                when = f"{clock.stamp(m.item.timestamp or entry.head.timestamp)} "
                kind = f"{m.item.kind.value:<17} "
                room = max(20, width - len(sid) - len(when) - len(kind))
                out.line(Line([(sid, "dim"), (when, "green"), (kind, "cyan"),
                               *_excerpt_segs(centre(clean(m.excerpt), query, regex, room), query, regex)],
                              hang=len(sid) + len(when) + len(kind)))
                out.flush()
            if result.truncated and not as_json:
                progress.clear()
                out.line(Line([(f"  … {result.total_matches - len(result.matches)} more in this session "
                                f"(search {entry.session_id} {query!r})", "dim")]))
        progress.clear()
    if not as_json:
        bad = unreadable_note(unreadable)
        if bad:
            click.echo(bad, err=True)
        click.echo(f"{hits} hit{'s' if hits != 1 else ''} in {len(sessions)} session(s)"
                   + (f", {failed} unreadable" if failed else "") + f" (times in {clock.zone()})", err=True)
