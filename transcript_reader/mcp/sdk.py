"""The SDK-based shells: an MCP ``Server`` for in-memory clients (the tests) and streamable HTTP.

Built on the ``mcp`` SDK's **2.x** low-level ``Server`` (constructor handlers ``on_list_tools`` /
``on_call_tool``); the low-level server rather than ``MCPServer`` because the latter validates arguments
itself and reports a multi-line pydantic dump, which would break the stable-code contract. Both handlers
answer from the same core as the stdio loop (:func:`.dispatch.run_call`), off the event loop in a worker
thread and within the call's time budget, so one slow call never stalls the others.

HTTP listens on 127.0.0.1 only. A browser page may reach loopback, so the Host header must be the
server's own ``127.0.0.1:<port>`` or ``localhost:<port>`` and an Origin, when sent, exactly
``http://127.0.0.1:<port>`` or ``http://localhost:<port>`` (any other port is another site). Sessions idle
for ``http_idle_s`` are closed and at most ``http_max_sessions`` live at once (a new one past the cap is
refused with 503), so a client that never closes its sessions cannot grow the server without bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

from transcript_reader.mcp.catalog import packaged_tools
from transcript_reader.mcp.dispatch import GRACE_S, run_call, timed_out
from transcript_reader.mcp.names import SERVER_NAME
from transcript_reader.mcp.policy import ServerConfig
from transcript_reader.mcp.stdio import INSTRUCTIONS, version


def create_server(config: ServerConfig) -> Server[Any]:
    """The MCP server for ``config``: five read-only tools; nothing else (no resources, no prompts)."""
    from transcript_reader.mcp.tools import CallState

    tools = [types.Tool.model_validate(t) for t in packaged_tools(config.wire)]
    state = CallState()

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        outcome = None
        with anyio.move_on_after(config.call_timeout_s + GRACE_S):
            outcome = await anyio.to_thread.run_sync(run_call, params.name, params.arguments, config, state,
                                                     abandon_on_cancel=True)
        if outcome is None:
            outcome = timed_out(params.name, config.call_timeout_s, config.wire)
        return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.text)],
                                    structured_content=outcome.structured, is_error=outcome.is_error)

    return Server(SERVER_NAME, version=version(), instructions=INSTRUCTIONS, on_list_tools=on_list_tools,
                  on_call_tool=on_call_tool)


def http_security(port: int) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"],
    )


async def serve_http(config: ServerConfig, port: int, on_ready: Callable[[str], None]) -> None:
    """Streamable HTTP on 127.0.0.1 only. ``port`` 0 picks a free port; ``on_ready`` gets the endpoint
    URL once the socket listens (the exact-origin rule needs the real port, so the socket comes first)."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    real_port = sock.getsockname()[1]
    server = create_server(config)
    app = server.streamable_http_app(host="127.0.0.1", transport_security=http_security(real_port),
                                     session_idle_timeout=config.http_idle_s, max_sessions=config.http_max_sessions)
    url = f"http://127.0.0.1:{real_port}/mcp"
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    on_ready(url)
    await uv.serve(sockets=[sock])
