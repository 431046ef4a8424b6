"""``show`` (render one session, ``--follow`` a live one) and what ``transcript-reader`` alone does.

The session is read once, streaming: the header comes from the file's head, each item is rendered as
it is read (into the pager on a terminal), and the footer, counted from every item whatever the filter
shows, closes the view. When no session is found, a real recording bundled with the package is shown,
labelled as an example, with how to point the tool at a real Codex home.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import click

from transcript_reader.cli._common import (
    caps_options,
    codex_home,
    current_dir,
    fail,
    guard,
    homes,
    resolve_path_arg,
    where_looked,
)
from transcript_reader.cli.output import echo, emit, is_tty, text_output
from transcript_reader.cli.reading import from_store
from transcript_reader.errors import FileChangedError, SessionNotFoundError, TranscriptError

#: A real Codex 0.171.0 recording (``../shared/corpus/realcodex/0.171.0/multi_step``), bundled so that the
#: first command of the Quickstart shows what the tool does on a machine with no Codex session yet.
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "codex-0.171.0-multi_step.rollout.jsonl"


def _projection(commands: bool, changes: bool, tests: bool, conversation: bool, final: bool) -> str:
    from transcript_reader.present.common import FILTER_PROJECTIONS

    chosen = [name for name, on in (("commands", commands), ("changes", changes), ("tests", tests),
                                    ("conversation", conversation), ("final", final)) if on]
    if len(chosen) > 1:
        raise click.UsageError("choose one of --commands, --changes, --tests, --conversation, --final")
    return FILTER_PROJECTIONS[chosen[0]] if chosen else "timeline"


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
        click.option("--utc", is_flag=True, help="Times in UTC (default: local time, zone shown)."),
    ]):
        f = opt(f)
    return f


def title_for(info: Any) -> str | None:
    from transcript_reader.sessions.discovery import load_session_index

    if info is not None and info.session_id:
        name = load_session_index(codex_home()).get(info.session_id)
        if name:
            return str(name)
    return info.title if info is not None else None


def head_info(path: str) -> Any:
    """The header's facts from the head of the file (no whole read, ``discovery.read_entry``): a
    ``SessionInfo`` with the id, start, cwd, model and version; a whole ``inspect`` only for a file
    whose head says nothing."""
    from transcript_reader import api
    from transcript_reader.model import SessionInfo
    from transcript_reader.sessions.discovery import read_entry

    try:
        head = read_entry(Path(path), False, {}).head
    except OSError:
        head = None
    if head is None or head.format is None or not (head.session_id or head.timestamp):
        return api.inspect(path)
    return SessionInfo(path=path, format=head.format, version=head.cli_version,
                       session_id=head.session_id, cwd=head.cwd, models=(head.model,) if head.model else (),
                       first_timestamp=head.timestamp, parent_session_id=head.parent_session_id,
                       title=head.title)


#: Largest file whose tokens and cost the header shows: they need a whole read before the first item
#: (the items stream after it), so a larger file is read once and its figures are left to ``inspect``.
HEADER_USAGE_MAX_BYTES = 16 * 1024 * 1024


def usage_line(path: str, caps: Any = None) -> str:
    """The header's tokens and cost (``present.header``'s words): from the home's session store when it
    holds this very file version (as ``inspect`` answers; no read before the first item), else from a
    whole read of a file up to ``HEADER_USAGE_MAX_BYTES``."""
    from transcript_reader import api
    from transcript_reader.export.cost import session_cost
    from transcript_reader.present.header import cost_words, tokens_words

    stored = from_store(path) if caps is None else None
    if stored is not None:
        from transcript_reader.projections.render import tokens_from_dict, usage_from_list
        from transcript_reader.usage.pricing import price_rows, provider_of

        cost = price_rows(usage_from_list(stored["usage"]), provider=provider_of(stored["format"]))
        return f"tokens {tokens_words(tokens_from_dict(stored['tokens']))} · cost {cost_words(cost)}"

    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    if size > HEADER_USAGE_MAX_BYTES:
        return (f"tokens, cost: `transcript-reader inspect` (a file over {HEADER_USAGE_MAX_BYTES >> 20} MB is "
                "read once here; the footer has its tokens)")
    try:
        info = api.inspect(path, caps=caps)
    except TranscriptError:
        return "tokens unknown · cost unknown (the file could not be read whole)"
    return f"tokens {tokens_words(info.tokens)} · cost {cost_words(session_cost(info))}"


def render_session(path: str, projection: str, opts: Any, *, no_color: bool, pager: bool, utc: bool,
                   banner: list[str] | None = None, caps: Any = None) -> None:
    """One streaming pass: header, every item the projection shows, the whole session's footer."""
    from dataclasses import replace

    from transcript_reader import api
    from transcript_reader.present.terminal import TimelineView, header_rows
    from transcript_reader.present.text import Line
    from transcript_reader.projections import selector

    select = selector(projection)
    transcript = api.Transcript(path, caps=caps)
    info = head_info(path)
    opts = replace(opts, session_cwd=info.cwd if info else None)
    with text_output(no_color=no_color, pager=pager, utc=utc) as (out, layout):
        for note in banner or ():
            out.line(Line([(note, "bold yellow")]))
        emit(out, header_rows(info, title_for(info), layout, usage=usage_line(path, caps)))
        view = TimelineView(opts, layout, select=select)
        flushed = time.monotonic()
        for item in transcript.items():
            rows = view.feed(item)
            if rows:
                emit(out, rows)
                now = time.monotonic()
                if now - flushed > 0.05:  # what is rendered is on screen within 50 ms, not when a buffer fills
                    out.flush()
                    flushed = now
        emit(out, view.finish())
        emit(out, view.footer(transcript.info()))


def _banner(reason: str) -> list[str]:
    return [f"Example session, bundled with transcript-reader (a real Codex 0.171.0 recording): {reason}.",
            "Point it at your sessions with CODEX_HOME=/path/to/.codex, or run it in a project Codex worked in "
            "(`transcript-reader ls --all-projects` lists every project).", ""]


@click.command("show")
@click.argument("session", required=False, default="last")
@view_options
@click.option("--follow", "-f", is_flag=True, help="Keep reading a session Codex is still writing.")
@click.option("--example", is_flag=True, help="Show the bundled example session (a real Codex recording).")
@click.option("--no-color", is_flag=True, help="No colours or styles (also: NO_COLOR=1).")
@click.option("--no-pager", is_flag=True, help="Never page long output.")
@caps_options
@guard(None)
def show_cmd(session: str, full: bool, diff: bool, scripts: bool, commands: bool, changes: bool, tests: bool,
             conversation: bool, final: bool, utc: bool, follow: bool, example: bool, no_color: bool,
             no_pager: bool, caps: Any) -> None:
    """Render a session: turns, commands, changes, tests, answers.

    SESSION is a path, a session id or unique prefix, a thread name, `last` or `last~N`
    (default: last, in the current project).

    \b
    Example:
      transcript-reader show last --commands
      transcript-reader show 01a22d9c-54 --diff --scripts
      transcript-reader show last --follow
    """
    from transcript_reader.present.common import Options

    projection = _projection(commands, changes, tests, conversation, final)
    opts = Options(full=full, diff=diff, scripts=scripts)
    idle_exit = follow_idle_exit() if follow else None
    banner = None
    try:
        if example:
            path, banner = str(EXAMPLE), _banner("shown on request (--example)")
        else:
            try:
                path = resolve_path_arg(session)
            except SessionNotFoundError as e:
                if session != "last":
                    raise
                # no session is no answer: `show last --final` in a script must not print the example's
                raise SessionNotFoundError(f"{e} (`show --example` shows a bundled example session)") from None
        if follow and banner is None:
            from transcript_reader.api import unfollowable

            reason = unfollowable(path)
            if reason is None:
                while True:
                    try:
                        follow_session(path, projection, opts, no_color=no_color, utc=utc, idle_exit_s=idle_exit,
                                       caps=caps)
                        return
                    except FileChangedError as e:
                        # written anew (``codex exec --json > file`` again): start over on what it holds now
                        echo(f"note: {e.reason}; reading it again from the start", err=True)
            # a finished file (.zst, a 0.1.x document): shown once, and said why it is not followed
            echo(f"note: not following: {reason}", err=True)
        render_session(path, projection, opts, no_color=no_color, pager=not no_pager, utc=utc, banner=banner,
                       caps=caps)
    except TranscriptError as e:
        fail(e, as_json=False)


def follow_idle_exit() -> float | None:
    """``TRANSCRIPT_READER_FOLLOW_IDLE_EXIT`` (tests): stop following after that many seconds without
    growth. Checked before anything is read: a bad value is a usage error."""
    env_idle = os.environ.get("TRANSCRIPT_READER_FOLLOW_IDLE_EXIT")
    if not env_idle:
        return None
    try:
        idle = float(env_idle)
    except ValueError:
        raise click.UsageError(f"TRANSCRIPT_READER_FOLLOW_IDLE_EXIT must be a number of seconds, "
                               f"not {env_idle!r}") from None
    if not idle >= 0:  # also refuses nan
        raise click.UsageError("TRANSCRIPT_READER_FOLLOW_IDLE_EXIT must be 0 or more seconds")
    return idle


def follow_session(path: str, projection: str, opts: Any, *, no_color: bool, utc: bool = False, caps: Any = None,
                   poll_s: float = 0.5, idle_exit_s: float | None = None) -> None:
    """Print a session's items as Codex writes them, through ``api.follow`` (each byte read once, in
    bounded memory). A command that has started shows as running at once and, on a terminal, is
    completed in place when its result arrives. The footer closes the view on exit, Ctrl-C included
    (exit 130). ``idle_exit_s`` stops after that long without growth."""
    from dataclasses import replace

    from transcript_reader import api
    from transcript_reader.present.terminal import TimelineView, header_rows
    from transcript_reader.projections import selector

    info = head_info(path)
    opts = replace(opts, session_cwd=info.cwd if info else None)
    select = selector(projection)
    with text_output(no_color=no_color, pager=False, utc=utc) as (out, layout):
        live = is_tty(out.stream)
        view = TimelineView(opts, layout, select=select)
        emit(out, header_rows(info, title_for(info), layout))
        out.flush()
        shown = {"rows": 0, "line": None}
        growth = {"size": -1, "at": time.monotonic()}

        def show(rows: list[Any]) -> None:
            if not rows:
                return
            if shown["rows"]:
                out.stream.write("\x1b[1A\x1b[2K" * int(shown["rows"]))  # complete it in place
                shown["rows"], shown["line"] = 0, None
            emit(out, rows)

        def waiting(preview: Any) -> None:
            show(view.flush())
            if live and preview is not None and shown["line"] != preview.line and select(preview):
                show([])
                before = out.lines_written
                emit(out, view.running_rows(preview))
                shown["rows"], shown["line"] = out.lines_written - before, preview.line
            out.flush()

        def stop() -> bool:
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
            for item in api.follow(path, stop=stop, poll_s=poll_s, waiting=waiting, caps=caps):
                show(view.feed(item))
            show(view.finish())
            if not os.path.exists(path):  # gone (api.follow's last notice said so): no footer to read
                return
        except KeyboardInterrupt:
            emit(out, view.finish())
            emit(out, view.footer(_live_info(path, view.tally, info)))
            out.flush()
            raise SystemExit(130) from None
        emit(out, view.footer(_live_info(path, view.tally, info)))


def _live_info(path: str, tally: Any, head: Any) -> Any:
    """Tokens (the file's last cumulative count) and duration (the session's start to the last
    timestamp written) for the footer of a followed session, from the file's tail: no second read."""
    from transcript_reader.model import Format, SessionInfo
    from transcript_reader.sessions.discovery import read_entry
    from transcript_reader.timestamps import session_duration

    try:
        tail = read_entry(Path(path), False, {}).tail
    except OSError:
        tail = None
    tokens = tail.tokens if tail is not None else None
    start = getattr(head, "first_timestamp", None) or tally.first_ts
    dur = session_duration(start, (tail.last_timestamp if tail is not None else None) or tally.last_ts)
    return SessionInfo(path=path, format=Format.ROLLOUT, tokens=tokens, duration_s=dur)


# ---- no arguments ---------------------------------------------------------------------------------------


@click.command("default", hidden=True)
@guard(None)
def default_cmd() -> None:
    """``transcript-reader`` alone: the latest session of the current project; when there is none, the
    bundled example, labelled, with where it looked and how to point it elsewhere."""
    from transcript_reader.present.common import Options
    from transcript_reader.sessions.discovery import list_sessions

    home = codex_home()
    try:
        rows = [e for e in list_sessions(None, cwd=current_dir(), limit=1, homes=homes()) if e.depth == 0]
    except TranscriptError:
        rows = []
    opts = Options()
    if rows:
        render_session(rows[0].path, "timeline", opts, no_color=False, pager=True, utc=False)
        return
    reason = where_looked(home)
    render_session(str(EXAMPLE), "timeline", opts, no_color=False, pager=True, utc=False, banner=_banner(reason))
