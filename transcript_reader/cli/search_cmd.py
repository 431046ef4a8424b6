"""``search``: one transcript (``search PATH QUERY``, the single-transcript contract) or every session ``ls`` would
list (``search QUERY``), streaming hits as they are found, with a progress bar on stderr.

Cross-session search is the library's (``transcript_reader.home_search``: the session store's index and
stored text, or, for what the store does not hold, a byte pre-filter then the full reader); this module
only presents it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import click

from transcript_reader.cli._common import (
    count_range,
    fail,
    guard,
    homes,
    resolve_path_arg,
)
from transcript_reader.cli.output import echo, echo_json
from transcript_reader.cli.sessions import filter_options, select_sessions
from transcript_reader.errors import InvalidArgumentError, TranscriptError

#: ``--workers``: more processes than this cost more to start than they read, on any machine.
MAX_WORKERS = 256


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
@click.option("--context", type=count_range(), default=0, help="Items before/after each match (PATH mode).")
@click.option("--max-matches", type=count_range(1), default=None,
              help="At most N matches (PATH mode: default 25; across sessions: per session, default 5).")
@click.option("--index", "index_mode", flag_value="update", default=None, hidden=True,
              help="Deprecated, no effect: the session store is the index.")
@click.option("--no-index", "index_mode", flag_value="off", hidden=True, help="Deprecated, no effect.")
@click.option("--workers", type=count_range(1, MAX_WORKERS), default=None,
              help="Across sessions: when the session store cannot be used, read the files that may hold a hit "
                   "in N processes (default: the cores, at most 4).")
@filter_options
@click.option("--json", "as_json", is_flag=True, help="JSON (PATH mode: one document; across sessions: JSON lines).")
@click.option("--utc", is_flag=True, help="Times in UTC (default: local time).")
@click.option("--no-color", is_flag=True, help="No colours or styles (also: NO_COLOR=1).")
@guard()
def search_cmd(args: tuple[str, ...], regex: bool, kinds: tuple[str, ...], context: int, max_matches: int | None,
               index_mode: str | None, workers: int | None, provider: str, archived: bool, all_: bool,
               cwd_filter: str | None,
               all_projects: bool, since: str | None, until: str | None, grep: str | None, limit: int | None,
               as_json: bool, utc: bool, no_color: bool) -> None:
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
                     no_color=no_color, utc=utc, index_mode=index_mode, workers=workers, archived=archived,
                     all_=all_,
                     cwd_filter=cwd_filter, all_projects=all_projects, since=since, until=until, grep=grep,
                     limit=limit, provider=provider)


def _search_one(path_arg: str, query: str, *, regex: bool, kinds: tuple[str, ...], context: int,
                max_matches: int, as_json: bool, no_color: bool) -> None:
    from transcript_reader import api
    from transcript_reader.projections import render

    try:
        path = resolve_path_arg(path_arg)
        result = api.search(path, query, regex=regex, kinds=kinds, context=context, max_matches=max_matches)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if as_json:
        echo_json(json.dumps(render.search_result(result), ensure_ascii=False))
        return
    from transcript_reader.cli.output import text_output
    from transcript_reader.present.text import Line, centre, clean

    with text_output(no_color=no_color) as (out, layout):
        width = layout.width or 10_000
        for m in result.matches:
            for b in m.before:
                out.line(_context_line(b, width))
            head = f"▶ {m.item.line:>6}  {m.item.kind.value:<17} "
            out.line(Line([(head[:10], "bold"), (head[10:], "cyan"),
                           *_excerpt_segs(centre(clean(m.excerpt), query, regex, max(20, width - len(head))),
                                          query, regex)]))
            for a in m.after:
                out.line(_context_line(a, width))
        more = f" (showing {len(result.matches)})" if result.truncated else ""
        out.line(Line([(f"{result.total_matches} match{'es' if result.total_matches != 1 else ''}{more} in "
                        f"{result.path}", "dim")]))


def _check_kinds(kinds: tuple[str, ...]) -> None:
    """A mistyped ``--kind`` is one usage error before any file is read (not a skip per session)."""
    from transcript_reader.projections import parse_kinds

    try:
        parse_kinds(kinds)
    except InvalidArgumentError as e:
        raise click.BadParameter(str(e), param_hint="--kind") from None


def _context_line(item: Any, width: int) -> Any:
    from transcript_reader.present.text import Line, clean

    text = f"  {item.line:>6}  {item.kind.value:<17} " + _one_line(clean(_item_text(item)), 120)
    return Line([(text[:width], "dim")])


def _one_line(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


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
                     no_color: bool, index_mode: str | None, utc: bool = False, workers: int | None = None,
                     **filters: Any) -> None:
    if index_mode is not None:
        echo("note: --index and --no-index are deprecated and have no effect (search reads the session store)",
             err=True)
    from transcript_reader.cli.output import ProgressLine, text_output
    from transcript_reader.cli.sessions import unreadable_note
    from transcript_reader.home_search import SearchStats, item_dict, search_sessions
    from transcript_reader.present.common import Clock
    from transcript_reader.present.text import Line, centre, clean

    try:
        sessions = select_sessions(**filters)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if not sessions and not any(h.is_dir() for h in homes(filters.get("provider", "all")).values()):
        from transcript_reader.cli._common import where_looked

        echo(f"No sessions to search: {where_looked(homes()['codex'])}. Set CODEX_HOME to your Codex home.", err=True)
    progress = ProgressLine("searching")
    clock = Clock(utc)
    hits = done = 0
    short: dict[str, str] = {}
    id_width = -1  # not worked out yet

    def prefixes() -> None:
        """The id printed must resolve back to its session (`show PREFIX`), among every session: the
        shortest unique prefixes, worked out at the first hit (a miss never walks the homes for them)."""
        nonlocal id_width
        from transcript_reader.sessions.discovery import session_ids, unique_prefixes

        short.update(unique_prefixes([e.session_id for e in sessions if e.session_id],
                                     session_ids(None, homes=homes(filters.get("provider", "all"))), min_len=13))
        id_width = max((len(v) for v in short.values()), default=0)

    by_path = {e.path: e for e in sessions}
    stats = SearchStats("scan")
    stores = _store_readers(filters.get("provider", "all"))

    def advance() -> None:
        nonlocal done
        done += 1
        progress.update(done, len(sessions), f"{hits} hits")

    try:
        with text_output(no_color=no_color, utc=utc) as (out, layout):
            width = layout.width or 10_000

            def show(path: str, m: Any) -> None:
                """One hit, printed as soon as it is found (before its session is read to its end)."""
                nonlocal hits
                entry = by_path[path]
                hits += 1
                progress.clear()  # a hit never starts glued to the bar
                if as_json:
                    echo_json(json.dumps({
                        "ok": True, "session": entry.session_id, "path": entry.path, "title": entry.title,
                        "line": m.item.line, "timestamp": m.item.timestamp, "kind": m.item.kind.value,
                        "excerpt": m.excerpt, "item": item_dict(m.item),
                    }, ensure_ascii=False))
                    return
                if id_width < 0:
                    prefixes()
                sid = f"{short.get(entry.session_id or '', ''):<{id_width}} "
                when = f"{clock.stamp(m.item.timestamp or entry.head.timestamp)} "
                kind = f"{m.item.kind.value:<17} "
                room = max(20, width - len(sid) - len(when) - len(kind))
                out.line(Line([(sid, "dim"), (when, "green"), (kind, "cyan"),
                               *_excerpt_segs(centre(clean(m.excerpt), query, regex, room), query, regex)],
                              hang=len(sid) + len(when) + len(kind)))
                out.flush()

            results = search_sessions([e.path for e in sessions], query, regex=regex, kinds=kinds,
                                      max_matches=max_matches, count_all=not as_json, stats=stats,
                                      stores=stores, progress=advance, on_match=show,
                                      workers=workers or min(4, os.cpu_count() or 1))
            for res in results:
                entry = by_path[res.path]
                if res.error is not None:
                    err = res.error
                    progress.clear()
                    if as_json:
                        from transcript_reader.projections.render import error_to_dict

                        echo_json(json.dumps(error_to_dict(err.code, str(err), session=entry.session_id,
                                                            path=entry.path), ensure_ascii=False))
                    else:
                        echo(f"skipped {entry.path}: {err}", err=True)
                    continue
                if res.truncated and res.total is not None and not as_json:
                    progress.clear()
                    out.line(Line([(f"  … {res.total - len(res.matches)} more in this session "
                                    f"(search {entry.session_id} {query!r})", "dim")]))
            progress.clear()
    except TranscriptError as e:
        progress.clear()
        fail(e, as_json=as_json)
    finally:
        for con in stores:
            con.close()
    if as_json:
        return
    how = {"store": f"session store: {stats.stored} from the store" + (f", {stats.read} read from their files"
                                                                       if stats.read else "")
                    + (f", {stats.skipped} skipped unread" if stats.skipped else "") + "".join(f"; {n}" for n in stats.notes),
           "scan": f"byte scan: {stats.skipped} skipped unread, {stats.read} read",
           "read": f"every session read ({'a regex' if regex else 'no letter or digit to pre-check'})"}[stats.method]
    bad = unreadable_note([e for e in sessions if (e.head.error or "").startswith("cannot read")])
    if bad:
        echo(bad, err=True)
    echo(f"{hits} hit{'s' if hits != 1 else ''} in {len(sessions)} session(s)"
               + (f", {stats.failed} unreadable" if stats.failed else "") + f" ({how}; times in {clock.zone()})",
               err=True)


def _store_readers(provider: str) -> list[Any]:
    """Read connections to the session stores of the homes searched (the listing has just brought them
    in step with the files; it printed the store's notice when one cannot be used); none when there is
    no usable store (the search then reads the files)."""
    from transcript_reader.cli._common import cache_dir
    from transcript_reader.sessions.store import store_readers

    return store_readers(homes(provider), cache_dir())
