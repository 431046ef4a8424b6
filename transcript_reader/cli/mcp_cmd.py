"""``transcript-reader mcp``: serve the MCP tools over stdio (default) or streamable HTTP on loopback.

Presentation only: this is where ``$CODEX_HOME`` and ``$CLAUDE_CONFIG_DIR`` are read (the server factory
takes them as arguments).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click


def codex_home_from_env() -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (Codex's own default), made absolute so listed paths are too."""
    value = os.environ.get("CODEX_HOME") or "~/.codex"
    return Path(os.path.abspath(os.path.expanduser(value)))


def claude_home_from_env() -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (Claude Code's own default), made absolute."""
    value = os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"
    return Path(os.path.abspath(os.path.expanduser(value)))


@click.command("mcp")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="HTTP port (0 picks a free one; the URL is printed on stderr).")
@click.option("--allow-root", "allow_roots", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="Also allow reading transcripts under DIR (repeatable). $CODEX_HOME and Claude Code's folder "
                   "($CLAUDE_CONFIG_DIR, ~/.claude) are always allowed.")
@click.option("--allow-any-path", is_flag=True, help="Allow reading any regular file the process can read.")
@click.option("--max-file-mb", type=click.IntRange(1, None), default=2048, show_default=True,
              help="Refuse transcripts larger than this (too_large).")
def mcp_cmd(http: bool, port: int, allow_roots: tuple[Path, ...], allow_any_path: bool, max_file_mb: int) -> None:
    """Serve the transcript tools to MCP clients (Codex, Claude Code, editors).

    Tools: agent_transcript_read_file, agent_transcript_search_file, agent_transcript_inspect_file,
    agent_transcript_list_sessions, exec_script_analyze. Reads only under $CODEX_HOME, Claude Code's folder
    and --allow-root directories unless --allow-any-path is given.

    \b
    Example (register with Codex, ~/.codex/config.toml):
      [mcp_servers.transcript-reader]
      command = "transcript-reader"
      args = ["mcp"]
    """
    import anyio

    from transcript_reader.mcp_server import MIB, ServerConfig, serve_http, serve_stdio

    config = ServerConfig(
        codex_home=codex_home_from_env(),
        claude_home=claude_home_from_env(),
        allow_roots=tuple(allow_roots),
        allow_any_path=allow_any_path,
        max_file_bytes=max_file_mb * MIB,
    )
    try:
        if http:
            def ready(url: str) -> None:
                click.echo(f"transcript-reader MCP server listening on {url}", err=True)
                sys.stderr.flush()

            anyio.run(serve_http, config, port, ready)
        else:
            anyio.run(serve_stdio, config)
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # e.g. the port is taken
        raise click.ClickException(f"cannot serve: {exc.strerror or exc}") from None
