"""``usage``: tokens and cost by day, week, month, session, model or project, from the session store; or one
session and its sub-agents as a tree. Presentation only: the sums are ``transcript_reader.usage.report``'s."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from typing import Any

import click

from transcript_reader.cli._common import (
    cache_dir,
    current_dir,
    fail,
    fast_json,
    gc_paused,
    guard,
    homes,
    provider_option,
    resolve_path_arg,
)
from transcript_reader.cli.sessions import _check_when, _until, store_notice
from transcript_reader.errors import SessionNotFoundError, TranscriptError


def _day(value: str | None, *, until: bool) -> str | None:
    """The UTC day a ``--since``/``--until`` value falls on (usage is kept by day)."""
    if value is None:
        return None
    from transcript_reader.sessions.discovery import parse_when

    now = datetime.now(UTC)
    dt = _until(value, now) if until else parse_when(value, now=now)
    return dt.astimezone(UTC).date().isoformat()


@click.command("usage")
@click.argument("session", required=False)
@click.option("--by", type=click.Choice(("day", "week", "month", "session", "model", "project")), default="day",
              show_default=True, help="Sum by UTC day, ISO week, month, session (sub-agents under their parent), "
                                      "model or project (cwd).")
@click.option("--since", metavar="WHEN", callback=_check_when,
              help="Usage spent on or after WHEN's UTC day (2026-11-30, 3d, 2w).")
@click.option("--until", metavar="WHEN", callback=_check_when,
              help="Usage spent on or before WHEN's UTC day (2026-11-30, 3d, 2w).")
@click.option("--all-projects", is_flag=True, help="Every project, not only the current directory.")
@click.option("--cwd", "cwd_filter", metavar="DIR",
              help="Sessions whose cwd is DIR or below it (default: the current directory).")
@provider_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-color", is_flag=True, help="No colours or styles (also: NO_COLOR=1).")
@guard()
def usage_cmd(session: str | None, by: str, since: str | None, until: str | None, all_projects: bool,
              cwd_filter: str | None, provider: str, as_json: bool, no_color: bool) -> None:
    """Tokens and cost, summed by day (or --by week, month, session, model, project).

    Sessions of the current directory by default (--all-projects: every project), live and archived.
    Figures come from the session store. A session whose file records no usage is shown as unknown and
    counted apart, never as 0; a cost the price source cannot give is unknown, with the reason.

    With SESSION (an id, a prefix, `last`, or a path): that session and its sub-agents as a tree, each
    with its own usage, and the session's total with its sub-agents.

    \b
    Example:
      transcript-reader usage --since 7d
      transcript-reader usage --by model --all-projects --json
      transcript-reader usage last
    """
    since_day, until_day = _day(since, until=False), _day(until, until=True)
    cwd = None if all_projects or session else os.path.abspath(cwd_filter) if cwd_filter else current_dir()
    with gc_paused():
        _report(session, by, since_day, until_day, cwd, provider, as_json, no_color)


def _report(session: str | None, by: str, since_day: str | None, until_day: str | None, cwd: str | None,
            provider: str, as_json: bool, no_color: bool) -> None:
    from transcript_reader.cli.output import ProgressLine
    from transcript_reader.usage import report as R

    try:
        root = resolve_path_arg(session, provider) if session else None
        progress = ProgressLine("reading sessions")
        try:
            spent = R.listed(homes(provider), cwd=cwd, store_dir=cache_dir(), workers=os.cpu_count() or 1,
                             notice=store_notice, progress=progress.update if progress else None)
        finally:
            if progress is not None:
                progress.clear()
        if root is not None:
            spent = R.subtree(spent, root)
            if not spent:
                raise SessionNotFoundError(f"{session!r} ({root}) is not a session of "
                                           f"{' or '.join(str(h) for h in homes(provider).values())}")
            by = "session"
        spent = R.clip(spent, since_day, until_day)
    except TranscriptError as e:
        fail(e, as_json=as_json)
    pricer = R.Pricer()
    lines = R.group(spent, by, pricer)
    total = R.total(spent, pricer)
    if as_json:
        from transcript_reader.present.usage import report_json

        click.echo(fast_json(report_json(by, lines, total, since=since_day, until=until_day, project=cwd,
                                          session=root)))
        return
    _text(by, lines, total, no_color=no_color, tree=root is not None)


def _text(by: str, lines: list[Any], total: Any, *, no_color: bool, tree: bool) -> None:
    from transcript_reader.cli.output import echo, for_stdout, is_tty
    from transcript_reader.present import usage as P

    if not lines:
        echo("No usage in the sessions selected." + ("" if tree else " (--all-projects: every project; "
                                                                      "--since/--until: the days)"))
        return
    first = "session" if by == "session" else by
    subs = by == "session" and any(g.with_subagents is not None for g in lines)
    if not is_tty(sys.stdout):
        def put(fields: list[str]) -> None:  # each field made terminal-safe and tab-free by tsv_line
            click.echo(for_stdout(P.tsv_line(fields)))

        head = [first, "sessions", "calls", "input", "cached_input", "output", "reasoning", "total",
                "unknown_tokens", "usd", "unknown_cost"]
        if by == "session":
            head[1:1] = ["depth", "parent", "title"]
            head += ["with_subagents_total", "with_subagents_usd"]
        put(head)
        for g in [*lines, total]:
            row = [g.key, *P.cells(g, plain=True)]
            if by == "session":
                e = g.spent.entry if g.spent is not None else None
                row[1:1] = [str(g.depth), (e.parent_id or "") if e else "", (e.title or "") if e else ""]
                w = g.with_subagents
                row += ["" if w is None else ("unknown" if w.tokens is None else str(w.tokens.total)),
                        "" if w is None or w.cost.usd is None else f"{w.cost.usd:.6f}"]
            put(row)
        for n in P.notes(total):
            echo(f"# {n}")
        return
    from rich.table import Table
    from rich.text import Text

    from transcript_reader.cli._common import make_console

    console = make_console(no_color=no_color)
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column(first, overflow="ellipsis", no_wrap=True, max_width=60)
    for h in P.HEADERS:
        table.add_column(h, justify="right", no_wrap=True)
    if subs:
        table.add_column("with sub-agents", justify="right", no_wrap=True)
    for g in lines:
        row = [Text(P.label(g, by)), *(Text(c) for c in P.cells(g))]
        if subs:
            w = g.with_subagents
            row.append(Text("" if w is None else
                            f"{'unknown' if w.tokens is None else f'{w.tokens.total:,}'} {P.usd_text(w.cost)}"))
        table.add_row(*row)
    row = [Text("total", style="bold"), *(Text(c, style="bold") for c in P.cells(total))]
    if subs:
        row.append(Text(""))
    table.add_row(*row)
    console.print(table)
    for n in P.notes(total):
        console.print(Text(n, style="dim"))
