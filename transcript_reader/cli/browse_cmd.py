"""``browse``: the interactive session browser (``transcript_reader.browse``). Textual is imported only
here, when the command runs; on a stdout that is not a terminal it does what ``show`` does."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime

import click

from transcript_reader.cli._common import (
    cache_dir,
    codex_home,
    current_dir,
    fail,
    guard,
    homes,
    resolve_path_arg,
)
from transcript_reader.cli.sessions import _scope, _until, filter_options
from transcript_reader.cli.show import show_cmd
from transcript_reader.errors import TranscriptError


@click.command("browse", short_help="Browse sessions interactively: filter, jump, search.")
@click.argument("session", required=False)
@filter_options
@click.option("--follow", "-f", is_flag=True, help="With SESSION: follow it as Codex writes it.")
@click.option("--no-color", is_flag=True, help="No colours (also: NO_COLOR=1).")
@click.pass_context
@guard(None)
def browse_cmd(ctx: click.Context, session: str | None, provider: str, archived: bool, all_: bool,
               cwd_filter: str | None, all_projects: bool, since: str | None, until: str | None, grep: str | None,
               limit: int | None, follow: bool, no_color: bool) -> None:
    """Browse sessions interactively: the `ls` list (same filters), filtered as you type, a preview,
    each session's timeline with keys to jump between failures, commands, changes and turns.

    SESSION (a path, an id or prefix, `last`) opens that session at once. Press h for the keys.
    When stdout is not a terminal, this is `show SESSION`.

    \b
    Example:
      transcript-reader browse
      transcript-reader browse --all-projects --since 2w
      transcript-reader browse last --follow
    """
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        ctx.invoke(show_cmd, session=session or "last", follow=follow, no_color=no_color)
        return
    from transcript_reader.browse import BrowseConfig, run
    from transcript_reader.sessions.discovery import parse_when

    now = datetime.now(UTC)
    try:
        cfg = BrowseConfig(
            codex_home=codex_home(),
            cwd=None if all_projects else os.path.abspath(cwd_filter) if cwd_filter else current_dir(),
            scope=_scope(archived, all_), since=parse_when(since, now=now) if since else None,
            until=_until(until, now) if until else None, grep=grep, limit=limit, store_dir=cache_dir(), workers=os.cpu_count() or 1,
            session=resolve_path_arg(session, provider) if session else None, follow=follow,
            no_color=no_color, now=now, homes=homes(provider))
    except TranscriptError as e:
        fail(e, as_json=False)
    run(cfg)
