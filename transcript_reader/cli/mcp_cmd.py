"""``transcript-reader mcp``: serve the MCP tools over stdio (default) or streamable HTTP on loopback;
``--check`` prints what a client would see, so a user can tell the server works before wiring it in.

Presentation only: this is where ``$CODEX_HOME`` is read (the server takes it as an argument). The stdio
path imports nothing heavy before it answers ``initialize`` (see :mod:`transcript_reader.mcp.stdio`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from transcript_reader.cli._common import FiniteFloatRange
from transcript_reader.mcp.names import MIB, WIRE_OURS, WIRES


def codex_home_from_env() -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (Codex's own default), made absolute so listed paths are too."""
    value = os.environ.get("CODEX_HOME") or "~/.codex"
    return Path(os.path.abspath(os.path.expanduser(value)))


def claude_home_from_env() -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (Claude Code's own default), made absolute."""
    value = os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"
    return Path(os.path.abspath(os.path.expanduser(value)))


def store_dir_from_env() -> Path:
    """Where the session stores live: ``$XDG_CACHE_HOME/transcript-reader`` (as ``cli._common.cache_dir``,
    repeated here so the server's start imports nothing of the CLI)."""
    value = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(os.path.abspath(os.path.expanduser(value))) / "transcript-reader"


@click.command("mcp")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="HTTP port (0 picks a free one; the URL is printed on stderr).")
@click.option("--allow-root", "allow_roots", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="Also allow reading transcripts under DIR (repeatable). $CODEX_HOME is always allowed.")
@click.option("--allow-any-path", is_flag=True, help="Allow reading any regular file the process can read.")
@click.option("--max-file-mb", type=click.IntRange(1, 1 << 20), default=2048, show_default=True,
              help="Refuse transcripts larger than this, a .zst by its decompressed size (too_large).")
@click.option("--call-timeout", type=FiniteFloatRange(0.1, 3600), default=60.0, show_default=True,
              help="Seconds one tool call may take; over it the call returns timeout.")
@click.option("--wire", type=click.Choice(WIRES), default=WIRE_OURS, show_default=True,
              help="Result shapes: ours, or agent-code (the origin's exact shapes, a drop-in for its clients).")
@click.option("--http-idle-timeout", type=FiniteFloatRange(1, 7 * 86400), default=300.0, show_default=True,
              help="HTTP: close a session idle this many seconds.")
@click.option("--http-max-sessions", type=click.IntRange(1, 100_000), default=32, show_default=True,
              help="HTTP: at most this many live sessions (a new one past it gets 503).")
@click.option("--check", is_flag=True, help="Print the roots, the tools and a sample call, then exit.")
def mcp_cmd(http: bool, port: int, allow_roots: tuple[Path, ...], allow_any_path: bool, max_file_mb: int,
            call_timeout: float, wire: str, http_idle_timeout: float, http_max_sessions: int, check: bool) -> None:
    """Serve the transcript tools to MCP clients (Codex, Claude Code, editors).

    Tools: agent_transcript_read_file, agent_transcript_search_file, agent_transcript_inspect_file,
    agent_transcript_list_sessions, exec_script_analyze. Reads only under $CODEX_HOME, Claude Code's
    projects/ ($CLAUDE_CONFIG_DIR) and --allow-root directories unless --allow-any-path is given.

    \b
    Example (register with Codex, ~/.codex/config.toml; the tools then show as mcp__transcripts__…):
      [mcp_servers.transcripts]
      command = "transcript-reader"
      args = ["mcp"]
    """
    from transcript_reader.mcp.policy import ServerConfig

    config = ServerConfig(
        codex_home=codex_home_from_env(),
        claude_home=claude_home_from_env(),
        allow_roots=tuple(Path(os.path.abspath(r)) for r in allow_roots),
        allow_any_path=allow_any_path,
        max_file_bytes=max_file_mb * MIB,
        call_timeout_s=call_timeout,
        wire=wire,
        http_idle_s=http_idle_timeout,
        http_max_sessions=http_max_sessions,
        store_dir=store_dir_from_env(),
    )
    if check:
        sys.exit(run_check(config))
    try:
        if http:
            import anyio

            from transcript_reader.cli.output import echo
            from transcript_reader.mcp.sdk import serve_http

            def ready(url: str) -> None:
                echo(f"transcript-reader MCP server listening on {url}", err=True)
                sys.stderr.flush()

            anyio.run(serve_http, config, port, ready)
        else:
            import logging

            from transcript_reader.mcp.stdio import serve_stdio

            logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
            serve_stdio(config)
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # e.g. the port is taken
        raise click.ClickException(f"cannot serve: {exc.strerror or exc}") from None


def run_check(config: Any) -> int:
    """What a client would see, through a real server process over stdio (the way Codex starts it):
    the handshake and its latency, the roots, the tools, and a sample call on the newest session."""
    import json
    import subprocess
    import time

    from transcript_reader.cli.output import echo
    from transcript_reader.mcp.worker import close_and_wait

    args = [sys.executable, "-m", "transcript_reader", "mcp", "--wire", config.wire,
            "--call-timeout", str(config.call_timeout_s), "--max-file-mb", str(config.max_file_bytes // MIB)]
    for root in config.allow_roots:
        args += ["--allow-root", str(root)]
    if config.allow_any_path:
        args.append("--allow-any-path")
    env = {**os.environ, "CODEX_HOME": str(config.codex_home)}
    echo(f"CODEX_HOME  {config.codex_home}" + ("" if config.codex_home.is_dir() else "  (missing)"))
    if config.claude_home is not None:
        env["CLAUDE_CONFIG_DIR"] = str(config.claude_home)
        projects = config.claude_home / "projects"
        echo(f"claude      {projects}" + ("" if projects.is_dir() else "  (missing)"))
    for root in config.allow_roots:
        echo(f"allow-root  {os.path.realpath(root)}")
    if config.allow_any_path:
        echo("allow-any-path: every regular file this process can read")
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                     "params": params}).encode() + b"\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise click.ClickException("the server exited: " + (proc.stderr.read() if proc.stderr else b"")
                                           .decode("utf-8", "replace")[-500:])
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    try:
        init = ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "transcript-reader-check", "version": "0"}})["result"]
        ready = time.perf_counter() - t0
        info = init["serverInfo"]
        echo(f"server      {info['name']} {info['version']}, protocol {init['protocolVersion']}, "
                   f"initialize answered in {ready * 1000:.0f} ms")
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        tools = ask(1, "tools/list", {})["result"]["tools"]
        echo(f"tools       {len(tools)} (Codex shows them as mcp__<server name>__<tool>):")
        for tool in tools:
            echo(f"  {tool['name']:34} {tool.get('title', '')}")
        result = ask(2, "tools/call", {"name": "agent_transcript_list_sessions", "arguments": {"limit": 1}})["result"]
        body = json.loads(result["content"][0]["text"])
        rows = body.get("sessions") or []
        if result.get("isError") or body.get("ok") is False:
            echo(f"sample      agent_transcript_list_sessions: error {body.get('error')}")
            return 1
        if not rows:
            echo("sample      agent_transcript_list_sessions: no session under CODEX_HOME yet (the server works)")
            return 0
        result = ask(3, "tools/call", {"name": "agent_transcript_inspect_file", "arguments": {"path": "last"}})["result"]
        body = json.loads(result["content"][0]["text"])
        if result.get("isError") or body.get("ok") is False:
            echo(f"sample      inspect last: error {body.get('error')}")
            return 1
        facts = body.get("info") or body.get("stats") or {}
        echo(f"sample      inspect last -> {body['path']}: " +
                   ", ".join(f"{k} {facts[k]}" for k in ("format", "turns", "version") if facts.get(k) is not None))
        return 0
    finally:
        close_and_wait(proc, 30)
