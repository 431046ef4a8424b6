"""Session commands: ``ls`` (find sessions), ``show`` (render one, ``--follow`` a live one), ``export``
(Markdown, HTML, JSON), and what ``transcript-reader`` alone does (show the latest session of the
current project). Presentation only: discovery and reading are library calls."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from transcript_reader.cli._common import (
    codex_home,
    current_dir,
    emit,
    fail,
    guard,
    make_console,
    print_one,
    resolve_path_arg,
    stats_cache_path,
)
from transcript_reader.errors import FileChangedError, TranscriptError

# ---- shared options ---------------------------------------------------------------------------------


def _scope(archived: bool, all_: bool) -> str:
    from transcript_reader.discovery import Scope

    return Scope.ALL if all_ else Scope.ARCHIVED if archived else Scope.LIVE


def filter_options(f: Any) -> Any:
    """The ``ls`` filters, shared with cross-session ``search``."""
    f = click.option("--limit", "-n", type=click.IntRange(min=1), default=None,
                     help="At most N sessions (sub-agents under a listed parent come along).")(f)
    f = click.option("--grep", "grep", metavar="TEXT",
                     help="Keep sessions whose title, name, cwd, id or model contains TEXT "
                          "(use `search` for full text).")(f)
    f = click.option("--until", metavar="WHEN", help="Started at or before WHEN (2026-11-30, 3d, 2w, 12h).")(f)
    f = click.option("--since", metavar="WHEN", help="Started at or after WHEN (2026-11-30, 3d, 2w, 12h).")(f)
    f = click.option("--all-projects", is_flag=True, help="Every project, not only the current directory.")(f)
    f = click.option("--cwd", "cwd_filter", metavar="DIR",
                     help="Sessions whose cwd is DIR or below it (default: the current directory).")(f)
    f = click.option("--all", "all_", is_flag=True, help="Live and archived sessions.")(f)
    f = click.option("--archived", is_flag=True, help="Only archived sessions (archived_sessions/).")(f)
    return f


def select_sessions(*, archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool,
                    since: str | None, until: str | None, grep: str | None, limit: int | None,
                    with_stats: bool = False, progress: Any = None) -> list[Any]:
    from transcript_reader.discovery import StatsCache, list_sessions, parse_when

    now = datetime.now(UTC)
    cwd = None if all_projects else os.path.abspath(cwd_filter) if cwd_filter else current_dir()
    return list_sessions(
        codex_home(),
        scope=_scope(archived, all_),
        cwd=cwd,
        since=parse_when(since, now=now) if since else None,
        until=_until(until, now) if until else None,
        grep=grep,
        limit=limit,
        cache=StatsCache(stats_cache_path()),
        with_stats=with_stats,
        progress=progress,
    )


def _until(value: str, now: datetime) -> datetime:
    """A bare date means "up to the end of that day"."""
    from datetime import timedelta

    from transcript_reader.discovery import parse_when

    dt = parse_when(value, now=now)
    if len(value.strip()) == 10 and value.strip()[4] == "-":
        dt = dt + timedelta(days=1) - timedelta(microseconds=1)
    return dt


# ---- ls ---------------------------------------------------------------------------------------------


def _local(ts: datetime | None) -> str:
    if ts is None:
        return ""
    return ts.astimezone().strftime("%Y-%m-%d %H:%M")


def _row(e: Any, short_ids: dict[str, str]) -> dict[str, object]:
    from transcript_reader.present.common import count, duration

    s = e.stats
    tok = e.tokens
    cwd = e.head.cwd
    home = str(Path.home())
    if cwd and (cwd == home or cwd.startswith(home.rstrip("/") + "/")):
        cwd = "~" + cwd[len(home):]
    if cwd and len(cwd) > 32:
        cwd = "…" + cwd[-31:]  # the end of a path says which project it is
    row: dict[str, object] = {
        "when": _local(e.started),
        "took": duration(e.duration_s),
        "short_id": short_ids.get(e.session_id or "", ""),
        "title": e.title,
        "cwd_short": cwd,
        "model": e.head.model,
        "version": e.head.cli_version,
        "depth": e.depth,
        "parent_note": e.parent_note,
        "agent": e.head.agent_nickname,
        "archived": e.archived,
        "tokens_short": count(tok.total) if tok is not None else "…" if s is None else "",
        "turns": "…", "commands": "…", "files": "…", "tests": "…",
    }
    if s is not None:
        row.update(turns=s.turns, commands=f"{s.commands}" + (f" ({s.commands_failed}✗)" if s.commands_failed else ""),
                   files=s.files_changed,
                   tests=(f"{s.tests_passed}✓ {s.tests_failed}✗" if s.tests_passed or s.tests_failed else "-"))
    return row


@click.command("ls")
@filter_options
@click.option("--stats", "with_stats", is_flag=True,
              help="Compute turns/commands/files/tests for sessions not in the cache yet (reads them whole).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-color", is_flag=True, help="No colours (also: NO_COLOR=1).")
@guard()
def ls_cmd(archived: bool, all_: bool, cwd_filter: str | None, all_projects: bool, since: str | None,
           until: str | None, grep: str | None, limit: int | None, with_stats: bool, as_json: bool,
           no_color: bool) -> None:
    """List Codex sessions under $CODEX_HOME, newest first; sub-agents under their parent.

    By default only sessions of the current directory (and below) are listed.

    \b
    Example:
      transcript-reader ls --since 3d
      transcript-reader ls --all-projects --grep calc --limit 10
    """
    try:
        progress = _progress_bar("reading sessions") if with_stats and sys.stderr.isatty() else None
        try:
            entries = select_sessions(archived=archived, all_=all_, cwd_filter=cwd_filter,
                                      all_projects=all_projects, since=since, until=until, grep=grep,
                                      limit=limit, with_stats=with_stats,
                                      progress=progress.update if progress else None)
        finally:
            if progress is not None:
                progress.close()
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if as_json:
        from transcript_reader.discovery import entry_to_dict

        click.echo(json.dumps({
            "ok": True,
            "codex_home": str(codex_home()),
            "count": len(entries),
            "stats": "computed" if with_stats else "cached",
            "sessions": [entry_to_dict(e) for e in entries],
        }, ensure_ascii=False))
        return
    if not entries:
        where = "" if all_projects else f" under {os.path.abspath(cwd_filter) if cwd_filter else current_dir()}"
        click.echo(f"No sessions{where} in {codex_home()}."
                   + ("" if all_projects else " (--all-projects lists every project)"))
        return
    from transcript_reader.discovery import session_ids, unique_prefixes
    from transcript_reader.present.listing import ls_lines, segments_plain, segments_text

    # Unique among every session `show PREFIX` resolves against, not only the rows left by the filters
    # and --limit (QA F3).
    short = unique_prefixes([e.session_id for e in entries if e.session_id], session_ids(codex_home()))
    rows = [_row(e, short) for e in entries]
    show_cwd = len({e.head.cwd for e in entries}) > 1
    missing = sum(1 for e in entries if e.stats is None and e.head.format is not None)
    note = (f"…: not computed for {missing} of {len(entries)} sessions; "
            "`ls --stats` reads them once and caches the figures.") if missing else None
    if not sys.stdout.isatty():
        # A pipe: plain text at $COLUMNS (else 80), without building rich objects for 1,000 rows.
        import shutil

        lines = ls_lines(rows, width=shutil.get_terminal_size((80, 24)).columns, show_cwd=show_cwd)
        sys.stdout.write("\n".join(segments_plain(line) for line in lines) + "\n" + (note + "\n" if note else ""))
        return
    from rich.text import Text

    console = make_console(no_color=no_color)
    text = Text("\n").join(segments_text(line) for line in ls_lines(rows, width=console.width, show_cwd=show_cwd))
    console.print(text, no_wrap=True, crop=True)
    if note:
        console.print(Text(note, style="dim"))


class _progress_bar:
    """A progress bar on stderr (only when stderr is a terminal)."""

    def __init__(self, label: str) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                  console=make_console(stderr=True), transient=True)
        self._task = self._progress.add_task(label, total=None)
        self._started = False

    def update(self, done: int, total: int) -> None:
        if not self._started:
            self._progress.start()
            self._started = True
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        if self._started:
            self._progress.stop()


# ---- show -------------------------------------------------------------------------------------------


def _projection(commands: bool, changes: bool, tests: bool, conversation: bool, final: bool) -> str:
    from transcript_reader.present.common import FILTER_PROJECTIONS

    chosen = [name for name, on in (("commands", commands), ("changes", changes), ("tests", tests),
                                    ("conversation", conversation), ("final", final)) if on]
    if len(chosen) > 1:
        raise click.UsageError("choose one of --commands, --changes, --tests, --conversation, --final")
    return FILTER_PROJECTIONS[chosen[0]] if chosen else "timeline"


def load_timeline(path: str, projection: str, *, full: bool) -> tuple[Any, Any]:
    """``(items, info)`` for a rendering: every item of the projection (no item limit), the raw
    outputs too when ``--full`` asks for whole outputs."""
    from transcript_reader import api

    include = ["raw_output"] if full else []
    result = api.read(path, projection=projection, include=include)
    info = result.info if result.info is not None else api.inspect(path)
    return list(result.items), info


def _title_for(path: str, info: Any) -> str | None:
    from transcript_reader.discovery import load_session_index

    if info is not None and info.session_id:
        name = load_session_index(codex_home()).get(info.session_id)
        if name:
            return name
    return info.title if info is not None else None


def view_options(f: Any) -> Any:
    for opt in reversed([
        click.option("--full", is_flag=True, help="Whole command outputs and long messages (default: folded)."),
        click.option("--diff", is_flag=True, help="Show patches as highlighted diffs."),
        click.option("--scripts", is_flag=True, help="Show code cells as highlighted JavaScript, calls marked."),
        click.option("--commands", is_flag=True, help="Only shell commands."),
        click.option("--changes", is_flag=True, help="Only file changes."),
        click.option("--tests", is_flag=True, help="Only test runs."),
        click.option("--conversation", is_flag=True, help="Only the prompts and answers."),
        click.option("--final", is_flag=True, help="Only each turn's final answer."),
    ]):
        f = opt(f)
    return f


@click.command("show")
@click.argument("session", required=False, default="last")
@view_options
@click.option("--follow", "-f", is_flag=True, help="Keep reading a session Codex is still writing.")
@click.option("--no-color", is_flag=True, help="No colours (also: NO_COLOR=1).")
@click.option("--no-pager", is_flag=True, help="Never page long output.")
@guard(None)
def show_cmd(session: str, full: bool, diff: bool, scripts: bool, commands: bool, changes: bool, tests: bool,
             conversation: bool, final: bool, follow: bool, no_color: bool, no_pager: bool) -> None:
    """Render a session's timeline: turns, commands, changes, tests, answers.

    SESSION is a path, a session id or unique prefix, a thread name, `last` or `last~N`
    (default: last, in the current project).

    \b
    Example:
      transcript-reader show last --commands
      transcript-reader show 01a22d9c-54 --diff --scripts
      transcript-reader show last --follow
    """
    from transcript_reader.present.common import Options
    from transcript_reader.present.terminal import timeline_renderables

    projection = _projection(commands, changes, tests, conversation, final)
    try:
        path = resolve_path_arg(session)
        if follow:
            from transcript_reader.api import unfollowable

            reason = unfollowable(path)
            if reason is None:
                while True:
                    try:
                        follow_session(path, projection, Options(full=full, diff=diff, scripts=scripts),
                                       no_color=no_color)
                        return
                    except FileChangedError as e:
                        # written anew (``codex exec --json > file`` again): start over on what it holds now
                        click.echo(f"note: {e.reason}; reading it again from the start", err=True)
            # a finished file (.zst, a 0.1.x document): shown once, and said why it is not followed
            click.echo(f"note: not following: {reason}", err=True)
        items, info = load_timeline(path, projection, full=full)
    except TranscriptError as e:
        fail(e, as_json=False)
    opts = Options(full=full, diff=diff, scripts=scripts, session_cwd=info.cwd if info else None)
    console = make_console(no_color=no_color)
    emit(console, timeline_renderables(items, info, opts, title=_title_for(path, info)), pager=not no_pager)


def follow_session(path: str, projection: str, opts: Any, *, no_color: bool, poll_s: float = 0.5,
                   idle_exit_s: float | None = None) -> None:
    """Print a session's items as Codex writes them, through ``api.follow``: each byte of the file is
    read once however long the session runs, and an item is printed once it is settled (a command
    when its result arrives, a half-written last line when its newline does).

    The header comes from one read of the file as it is when following starts. ``idle_exit_s`` (tests;
    env ``TRANSCRIPT_READER_FOLLOW_IDLE_EXIT``) stops after that long without growth, then prints what
    a whole read would end with; otherwise it runs until interrupted."""
    from rich.rule import Rule
    from rich.text import Text

    from transcript_reader import api
    from transcript_reader.model import RawOutput
    from transcript_reader.present.common import Options, footer_parts
    from transcript_reader.present.terminal import header, timeline_body
    from transcript_reader.projections import selector

    env_idle = os.environ.get("TRANSCRIPT_READER_FOLLOW_IDLE_EXIT")
    if idle_exit_s is None and env_idle:
        try:
            idle_exit_s = float(env_idle)
        except ValueError:
            raise click.UsageError(f"TRANSCRIPT_READER_FOLLOW_IDLE_EXIT must be a number of seconds, "
                                   f"not {env_idle!r}") from None
        if not idle_exit_s >= 0:  # also refuses nan
            raise click.UsageError("TRANSCRIPT_READER_FOLLOW_IDLE_EXIT must be 0 or more seconds")
    console = make_console(no_color=no_color)
    info = api.inspect(path)
    print_one(console, header(info, _title_for(path, info)))
    opts = Options(full=opts.full, diff=opts.diff, scripts=opts.scripts, session_cwd=info.cwd if info else None)
    wanted = selector(projection, include=["raw_output"] if opts.full else [])
    growth = {"size": -1, "at": time.monotonic()}

    def stop() -> bool:
        sys.stdout.flush()  # what is settled is on screen while Codex works
        try:
            size = os.stat(path).st_size
        except OSError:
            size = -1
        now = time.monotonic()
        if size != growth["size"]:
            growth["size"], growth["at"] = size, now
            return False
        return idle_exit_s is not None and now - growth["at"] > idle_exit_s

    try:
        items = (i for i in api.follow(path, stop=stop, poll_s=poll_s)
                 if wanted(i) or (opts.full and isinstance(i, RawOutput)))
        for rendered in timeline_body(items, opts):
            print_one(console, rendered)
        if not os.path.exists(path):  # gone (api.follow's last notice said so): no file to read a footer from
            sys.stdout.flush()
            return
        # the file stopped growing: end as a whole read would, with the footer (one more read of the
        # finished file, so that following keeps no item in memory)
        final_items, final_info = load_timeline(path, projection, full=False)
        print_one(console, Rule(style="dim"))
        print_one(console, Text(" · ".join(footer_parts(final_items, final_info)), style="bold"))
        sys.stdout.flush()
    except KeyboardInterrupt:
        sys.stdout.flush()
        raise SystemExit(130) from None


# ---- export -----------------------------------------------------------------------------------------


@click.command("export")
@click.argument("session", required=False, default="last")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md", show_default=True)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write to FILE (default: stdout).")
@view_options
@guard(None)
def export_cmd(session: str, fmt: str, output: str | None, full: bool, diff: bool, scripts: bool,
               commands: bool, changes: bool, tests: bool, conversation: bool, final: bool) -> None:
    """Export a session as Markdown (for a PR), one self-contained HTML file, or the JSON timeline.

    Nothing is uploaded and nothing is redacted: the export holds what the transcript holds.

    \b
    Example:
      transcript-reader export last --format html -o session.html
      transcript-reader export 01a22d9c-54 --format md --diff > session.md
    """
    from transcript_reader.present.common import Options

    projection = _projection(commands, changes, tests, conversation, final)
    try:
        path = resolve_path_arg(session)
        if output:
            _refuse_overwriting_the_input(path, output, as_json=fmt == "json")
        if fmt == "json":
            text = _export_json(path, projection)
        else:
            items, info = load_timeline(path, projection, full=full)
            opts = Options(full=full, diff=diff or fmt == "html", scripts=scripts or fmt == "html",
                           session_cwd=info.cwd if info else None)
            title = _title_for(path, info)
            if fmt == "md":
                from transcript_reader.present.markdown import timeline_markdown

                text = timeline_markdown(items, info, opts, title=title)
            else:
                from transcript_reader.present.html import timeline_html

                text = timeline_html(items, info, opts, title=title)
    except TranscriptError as e:
        fail(e, as_json=fmt == "json")
    if output:
        _refuse_overwriting_the_input(path, output, as_json=fmt == "json")  # again: it may have appeared since
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as e:
            # A missing directory or a read-only place is the user's to fix, not a bug (QA F4).
            fail(RuntimeError(f"cannot write {output}: {e.strerror or e}"), as_json=fmt == "json",
                 code="output_error")
        click.echo(f"wrote {output} ({len(text.encode('utf-8')):,} bytes)", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))


def _refuse_overwriting_the_input(path: str, output: str, *, as_json: bool) -> None:
    """A read-only viewer never destroys what it reads (QA F20: ``export X.jsonl -o X.jsonl``, or ``-o``
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


# ---- no arguments ---------------------------------------------------------------------------------------


@click.command("default", hidden=True)
@click.pass_context
@guard(None)
def default_cmd(ctx: click.Context) -> None:
    """``transcript-reader`` alone: the latest session of the current project, else a short help."""
    from transcript_reader.discovery import list_sessions

    home = codex_home()
    try:
        rows = [e for e in list_sessions(home, cwd=current_dir(), limit=1) if e.depth == 0]
    except TranscriptError:
        rows = []
    if not rows:
        click.echo(
            "transcript-reader: read what a Codex agent did.\n\n"
            f"No Codex session under {current_dir()} in {home}.\n\n"
            "  transcript-reader ls --all-projects     list every session\n"
            "  transcript-reader show SESSION          render one (a path, an id prefix, last, last~1)\n"
            "  transcript-reader search QUERY          search every session of this project\n"
            "  transcript-reader --help                all commands"
        )
        return
    ctx.invoke(show_cmd, session=rows[0].path)

