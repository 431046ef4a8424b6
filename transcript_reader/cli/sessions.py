"""Session commands: ``ls`` (find sessions) and the ``ls`` filters, shared with cross-session ``search``
and ``browse``. (``show`` and ``transcript-reader`` alone live in ``cli.show``, ``export`` in
``cli.export_cmd``: ``ls`` imports neither.) Presentation only: discovery and reading are library calls."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import click

from transcript_reader.cli._common import (
    cache_dir,
    codex_home,
    count_range,
    current_dir,
    fail,
    fast_json,
    guard,
    homes,
    provider_option,
    where_looked,
)
from transcript_reader.errors import TranscriptError

# ---- shared options ---------------------------------------------------------------------------------


def _scope(archived: bool, all_: bool) -> str:
    from transcript_reader.sessions.discovery import Scope

    return Scope.ALL if all_ else Scope.ARCHIVED if archived else Scope.LIVE


def _check_when(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A ``--since``/``--until`` that cannot be read is a usage error, before any file is read."""
    if value is None:
        return None
    from transcript_reader.sessions.discovery import parse_when

    try:
        if param.name == "until":
            _until(value, datetime.now(UTC))
        else:
            parse_when(value, now=datetime.now(UTC))
    except TranscriptError as e:
        raise click.BadParameter(str(e)) from None
    except (OverflowError, ValueError):
        # `--since 999999999d` reaches before year 1: a usage error, not a traceback
        raise click.BadParameter(f"{value!r} is out of the range of dates (year 1 to 9999)") from None
    return value


def filter_options(f: Any) -> Any:
    """The ``ls`` filters, shared with cross-session ``search``."""
    f = click.option("--limit", "-n", type=count_range(1), default=None,
                     help="At most N sessions (sub-agents under a listed parent come along).")(f)
    f = click.option("--grep", "grep", metavar="TEXT",
                     help="Keep sessions whose title, name, cwd, id or model contains TEXT "
                          "(use `search` for full text).")(f)
    f = click.option("--until", metavar="WHEN", callback=_check_when,
                     help="Started at or before WHEN (2026-11-30, 3d, 2w, 12h).")(f)
    f = click.option("--since", metavar="WHEN", callback=_check_when,
                     help="Started at or after WHEN (2026-11-30, 3d, 2w, 12h).")(f)
    f = click.option("--all-projects", is_flag=True, help="Every project, not only the current directory.")(f)
    f = click.option("--cwd", "cwd_filter", metavar="DIR",
                     help="Sessions whose cwd is DIR or below it (default: the current directory).")(f)
    f = click.option("--all", "all_", is_flag=True, help="Live and archived sessions.")(f)
    f = click.option("--archived", is_flag=True, help="Only archived sessions (archived_sessions/).")(f)
    return provider_option(f)


def select_sessions(*, archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool,
                    since: str | None, until: str | None, grep: str | None, limit: int | None,
                    with_stats: bool = False, progress: Any = None, provider: str = "all") -> list[Any]:
    from transcript_reader.sessions.discovery import list_sessions, parse_when

    now = datetime.now(UTC)
    cwd = None if all_projects else os.path.abspath(cwd_filter) if cwd_filter else current_dir()
    return list_sessions(
        None, homes=homes(provider),
        scope=_scope(archived, all_),
        cwd=cwd,
        since=parse_when(since, now=now) if since else None,
        until=_until(until, now) if until else None,
        grep=grep,
        limit=limit,
        with_stats=with_stats,
        progress=progress,
        workers=os.cpu_count() or 1,  # a first build reads every session, on every core
        store_dir=cache_dir(),
        notice=store_notice,
    )


def store_notice(text: str) -> None:
    """A one-line note from the session store (first build of a big home, a store rebuilt or not used)."""
    click.echo(text, err=True)


def _until(value: str, now: datetime) -> datetime:
    """A bare date means "up to the end of that day"."""
    from datetime import timedelta

    from transcript_reader.sessions.discovery import parse_when

    dt = parse_when(value, now=now)
    if len(value.strip()) == 10 and value.strip()[4] == "-":
        try:
            dt = dt + timedelta(days=1) - timedelta(microseconds=1)
        except OverflowError:  # 9999-12-31: the last day there is
            dt = dt.replace(hour=23, minute=59, second=59, microsecond=999999)
    return dt


def unreadable_note(entries: list[Any]) -> str | None:
    """One line naming the sessions that could not be read (a permission-denied file): they are
    listed and counted, never silently dropped."""
    bad = [e for e in entries if (e.head.error or "").startswith("cannot read")]
    if not bad:
        return None
    first = bad[0]
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    return f"{len(bad)} session file(s) could not be read: {first.path} ({first.head.error}){more}"


# ---- ls ---------------------------------------------------------------------------------------------


@click.command("ls")
@filter_options
@click.option("--stats", "with_stats", is_flag=True,
              help="Also compute turns/commands/files/tests for sessions the session store could not take "
                   "(a read-only cache directory; reads them whole).")
@click.option("--utc", is_flag=True, help="Times in UTC (default: local time, zone in the header).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-color", is_flag=True, help="No colours or styles (also: NO_COLOR=1).")
@click.option("--no-pager", is_flag=True, help="Never page a long listing.")
@guard()
def ls_cmd(provider: str, archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool,
           since: str | None, until: str | None, grep: str | None, limit: int | None, with_stats: bool, utc: bool,
           as_json: bool, no_color: bool, no_pager: bool) -> None:
    """List Codex and Claude Code sessions, newest first; sub-agents under their parent.

    By default only sessions of the current directory (and below) are listed.

    \b
    Example:
      transcript-reader ls --since 3d
      transcript-reader ls --all-projects --grep calc --limit 10
    """
    import gc

    # A listing keeps every row it builds until it prints (some 40 objects per session, none freed):
    # the cycle collector would walk them all again and again for nothing (a sixth of a warm `ls` of
    # 10,000 sessions).
    gc.disable()
    try:
        _ls(provider, archived, all_, cwd_filter, all_projects, since, until, grep, limit, with_stats, utc, as_json,
            no_color, no_pager)
    finally:
        gc.enable()


def _ls(provider: str, archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool,
        since: str | None, until: str | None, grep: str | None, limit: int | None, with_stats: bool, utc: bool,
        as_json: bool, no_color: bool, no_pager: bool) -> None:
    from transcript_reader.cli.output import ProgressLine

    try:
        progress = ProgressLine("reading sessions")
        try:
            entries = select_sessions(archived=archived, all_=all_, cwd_filter=cwd_filter,
                                      all_projects=all_projects, since=since, until=until, grep=grep,
                                      limit=limit, with_stats=with_stats,
                                      progress=progress.update if progress else None, provider=provider)
        finally:
            if progress is not None:
                progress.clear()
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if as_json:
        from transcript_reader.projections.render import entry_to_dict

        click.echo(fast_json({
            "ok": True,
            "codex_home": str(codex_home()),
            "claude_home": str(homes()["claude"]),
            "count": len(entries),
            "stats": "computed" if with_stats else "cached",
            "sessions": [entry_to_dict(e) for e in entries],
        }))
        return
    if not entries:
        from transcript_reader.cli.output import echo

        home = codex_home()
        if not any(h.is_dir() for h in homes(provider).values()):
            echo(f"No sessions: {where_looked(home)}. Set CODEX_HOME to your Codex home.")
        else:
            where = "" if all_projects else f" under {os.path.abspath(cwd_filter) if cwd_filter else current_dir()}"
            echo(f"No sessions{where} in {' or '.join(str(h) for h in homes(provider).values())}."
                 + ("" if all_projects else " (--all-projects lists every project)"))
        return
    from transcript_reader.cli.output import text_output
    from transcript_reader.present.common import Clock
    from transcript_reader.present.listing import ls_lines, ls_row
    from transcript_reader.present.text import Line
    from transcript_reader.sessions.discovery import session_ids, unique_prefixes

    clock = Clock(utc)
    # Unique among every session `show PREFIX` resolves against, not only the rows left by the filters
    # and --limit: the prefix printed always finds its session.
    short = unique_prefixes([e.session_id for e in entries if e.session_id], session_ids(None, homes=homes(provider)))
    rows = [ls_row(e, short, clock) for e in entries]
    show_cwd = len({e.head.cwd for e in entries}) > 1
    readable = [e for e in entries if e.head.format is not None]
    missing = sum(1 for e in readable if e.stats is None)
    hide_stats = bool(readable) and missing == len(readable)
    if hide_stats:
        note = "turns, commands, files and tests: `ls --stats` reads each session once and caches the figures."
    elif missing:
        note = (f"…: not computed for {missing} of {len(readable)} sessions; "
                "`ls --stats` reads them once and caches the figures.")
    else:
        note = None
    bad = unreadable_note(entries)
    with text_output(no_color=no_color, pager=not no_pager, utc=utc) as (out, layout):
        for segs in ls_lines(rows, width=layout.width, show_cwd=show_cwd, hide_stats=hide_stats,
                             when_title=f"when ({clock.zone()})"):
            out.line(Line(segs))
        if note:
            out.line(Line([(note, "dim")]))
        if bad:
            out.line(Line([(bad, "yellow")]))
