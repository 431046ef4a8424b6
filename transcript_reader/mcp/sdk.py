"""The SDK-based shells: an MCP ``Server`` for in-memory clients (the tests) and streamable HTTP.

Built on the ``mcp`` SDK's **2.x** low-level ``Server`` (constructor handlers ``on_list_tools`` /
``on_call_tool``); the low-level server rather than ``MCPServer`` because the latter validates arguments
itself and reports a multi-line pydantic dump, which would break the stable-code contract. Both handlers
answer from the same core as the stdio loop (:func:`.dispatch.run_call`), off the event loop in a worker
thread and within the call's time budget, so one slow call never stalls the others.

HTTP listens on 127.0.0.1 only. A browser page may reach loopback, so the Host header must be the
server's own ``127.0.0.1:<port>`` or ``localhost:<port>`` and an Origin, when sent, exactly
``http://127.0.0.1:<port>`` or ``http://localhost:<port>`` (any other port is another site). Sessions idle
for ``http_idle_s`` are closed and at most ``http_max_sessions`` live at once, a quarter of them (at least
two) per client (told apart by its ``User-Agent``): a client that never closes its sessions cannot grow the
server without bound, and cannot lock the others out either. A new session is always admitted: past a
bound, the least recently used session of that client (else of all) is closed to make room (refusing the
newcomer let 32 ``initialize`` requests lock every new client out until the idle sessions expired).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

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
    app = http_app(config, real_port)
    url = f"http://127.0.0.1:{real_port}/mcp"
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    on_ready(url)
    await uv.serve(sockets=[sock])


def http_app(config: ServerConfig, port: int) -> Any:
    """The Starlette app of the streamable HTTP transport, with :class:`EvictingSessions` as its session
    manager (the SDK's refuses a new session at its cap)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = EvictingSessions(app=create_server(config), security_settings=http_security(port),
                               session_idle_timeout=config.http_idle_s, max_sessions=None)
    manager.cap = config.http_max_sessions
    return Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))],
                     lifespan=lambda app: manager.run())


class EvictingSessions(StreamableHTTPSessionManager):
    """The SDK's session manager, bounded without refusing anyone: before a session opens past the
    per-client or the overall bound, the least recently used session (the client's own first) is
    closed. Sessions also end after ``session_idle_timeout`` without a request (the SDK's rule)."""

    cap: int = 32

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.last_used: dict[str, float] = {}  # session id -> when a request last used it
        self.client_of: dict[str, str] = {}  # session id -> the client (User-Agent) that opened it

    @property
    def per_client(self) -> int:
        return min(self.cap, max(2, self.cap // 4))

    async def _handle_stateful_request(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.requests import Request

        request = Request(scope, receive)
        sid = request.headers.get("mcp-session-id")
        if sid is None:
            client = request.headers.get("user-agent", "")[:200]
            await self._make_room(client)
            before = set(self._server_instances)
            await super()._handle_stateful_request(scope, receive, send)
            for new in set(self._server_instances) - before:
                self.client_of[new] = client
                self.last_used[new] = anyio.current_time()
            return
        if sid in self._server_instances:
            self.last_used[sid] = anyio.current_time()
        await super()._handle_stateful_request(scope, receive, send)

    async def _make_room(self, client: str) -> None:
        live = set(self._server_instances)
        for gone in set(self.last_used) - live:  # ended by the client, idle or a crash
            self.last_used.pop(gone, None)
            self.client_of.pop(gone, None)
        mine = [s for s in live if self.client_of.get(s) == client]
        if len(mine) >= self.per_client:
            await self._evict(min(mine, key=lambda s: self.last_used.get(s, 0.0)))
        elif len(live) >= self.cap:
            await self._evict(min(live, key=lambda s: self.last_used.get(s, 0.0)))

    async def _evict(self, sid: str) -> None:
        transport = self._server_instances.get(sid)
        self.last_used.pop(sid, None)
        self.client_of.pop(sid, None)
        if transport is not None:
            await self._discard_session(sid, transport)
