"""The stdio server: MCP's JSON-RPC, one message a line, answered at once.

Why not the SDK's server here: importing the SDK and the library takes most of a second (1.2-3.6 s on a
loaded machine), and Codex 0.160+ offers MCP tools through ``tool_search`` without waiting for a slow
server, so a model whose first step is a tool search missed ours. This loop imports nothing heavy: it
answers ``initialize``, ``ping`` and ``tools/list`` (from the tool list shipped in the package) right away,
and the library is imported on the first ``tools/call``, in a worker thread. Calls run concurrently on a
few worker threads, each within the call's time budget (a watchdog answers ``timeout`` for a call still
running past it), so one slow call never holds the others; a cancelled call gets no answer, as the
protocol asks.

The protocol spoken is the handshake era's (2024-11-05 .. 2025-11-25), which is what Codex's client
sends; the same tool core answers the SDK-based shells (:mod:`.sdk`: in-memory and streamable HTTP).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from typing import IO, Any

from transcript_reader.mcp.names import SERVER_NAME, SERVER_VERSION

PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
WORKERS = 4
INSTRUCTIONS = (
    "Read what Codex and Claude Code agents did: find a session with agent_transcript_list_sessions, then "
    "agent_transcript_read_file (default projection handoff: the session's shape), "
    "agent_transcript_search_file or agent_transcript_inspect_file. A path argument also takes a session "
    "id, a unique id prefix, `last` or `last~N`. Results are bounded; truncated=true says something was left out. "
    "An item's executed: yes = the transcript proves it ran, no = proof it did not, unknown = it cannot tell; "
    "origin: direct (the model's call), script (read from a code-mode cell), record, stream. A failed call "
    "is isError with {\"ok\":false,\"error\":{\"code\",\"message\"}} (codes such as file_not_found, "
    "session_not_found, outside_allowed_roots, too_large, timeout: narrow the call)."
)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
log = logging.getLogger("transcript_reader.mcp")


def version() -> str:
    return SERVER_VERSION


def initialize_result(requested: Any) -> dict[str, Any]:
    chosen = requested if requested in PROTOCOLS else PROTOCOLS[-1]
    return {"protocolVersion": chosen, "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": version()}, "instructions": INSTRUCTIONS}


class StdioServer:
    """One client on a pair of byte streams (the process's stdin and stdout)."""

    def __init__(self, config: Any, reader: IO[bytes], writer: IO[bytes]) -> None:
        self.config = config
        self.reader = reader
        self.writer = writer
        self.write_lock = threading.Lock()
        self.calls: queue.Queue[tuple[str, Any, dict[str, Any]] | None] = queue.Queue()
        self.open: dict[str, float] = {}  # request key -> deadline of the calls not answered yet
        self.open_lock = threading.Lock()
        self.state: Any = None
        self.state_lock = threading.Lock()
        self.tools: list[dict[str, Any]] | None = None

    # -- the wire

    def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        try:
            data = text.encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            # a lone surrogate (a path argument sent as "\udc80", a file name that is not UTF-8) cannot be
            # written as UTF-8: the same message with every non-ASCII character escaped, the same JSON value
            data = json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"
        with self.write_lock:
            try:
                self.writer.write(data)
                self.writer.flush()
            except (BrokenPipeError, ValueError):  # the client has gone
                pass

    def reply(self, request_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def answer_call(self, key: str, request_id: Any, result: dict[str, Any]) -> None:
        """Answer a tools/call once: the first of its result and its watchdog's timeout wins."""
        with self.open_lock:
            if self.open.pop(key, None) is None:
                return
        self.reply(request_id, result)

    # -- the loop

    def serve(self) -> None:
        workers = [threading.Thread(target=self.work, daemon=True, name=f"mcp-call-{i}") for i in range(WORKERS)]
        for w in workers:
            w.start()
        threading.Thread(target=self.watch, daemon=True, name="mcp-watchdog").start()
        for line in self.reader:
            if line.strip():
                try:
                    self.handle(line)
                except Exception:  # noqa: BLE001 - one bad message costs its answer, never the server
                    log.exception("a message could not be handled")
                    self.error(None, INTERNAL_ERROR, "Internal error (see the server log)")
        for _ in workers:
            self.calls.put(None)

    def handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.error(None, PARSE_ERROR, "Parse error")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.error(None, INVALID_REQUEST, "Invalid Request (one JSON-RPC 2.0 object a line; no batches)")
            return
        method = message.get("method")
        if not isinstance(method, str):
            return  # a response to a request of ours: we send none
        params: dict[str, Any] = message["params"] if isinstance(message.get("params"), dict) else {}
        if "id" not in message:
            if method == "notifications/cancelled":
                with self.open_lock:
                    self.open.pop(json.dumps(params.get("requestId")), None)
            return
        request_id = message["id"]
        if method == "initialize":
            self.reply(request_id, initialize_result(params.get("protocolVersion")))
        elif method == "ping":
            self.reply(request_id, {})
        elif method == "tools/list":
            self.reply(request_id, {"tools": self.tool_list()})
        elif method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
                self.error(request_id, INVALID_PARAMS, "tools/call needs a tool name and an arguments object")
                return
            key = json.dumps(request_id)
            with self.open_lock:
                self.open[key] = time.monotonic() + self.config.call_timeout_s + _grace()
            self.calls.put((key, request_id, {"name": name, "arguments": arguments}))
        else:
            self.error(request_id, METHOD_NOT_FOUND, f"Method not found: {method[:100]}")

    def tool_list(self) -> list[dict[str, Any]]:
        if self.tools is None:
            from transcript_reader.mcp.catalog import packaged_tools

            self.tools = packaged_tools(self.config.wire)
        return self.tools

    def work(self) -> None:
        from transcript_reader.mcp.dispatch import run_call

        while True:
            job = self.calls.get()
            if job is None:
                return
            key, request_id, call = job
            with self.open_lock:
                if key not in self.open:
                    continue  # cancelled, or timed out while it waited
            # The worker survives whatever a call raises (a failure while its answer is written
            # included): four calls that killed their workers used to leave every later call `timeout`.
            try:
                outcome = run_call(call["name"], call["arguments"], self.config, self.call_state())
                self.answer_call(key, request_id, outcome.to_wire())
            except Exception:  # noqa: BLE001 - the last line of defence of a worker thread
                log.exception("tool %s: the answer could not be made", str(call["name"])[:100])
                self.answer_call(key, request_id, self.internal_error(call["name"]))

    def internal_error(self, name: str) -> dict[str, Any]:
        from transcript_reader.mcp.dispatch import failed
        from transcript_reader.mcp.names import ErrorCode, ToolFailure

        return failed(ToolFailure(ErrorCode.INTERNAL_ERROR, f"{name[:100]!a} failed unexpectedly; see the server log"),
                      self.config.wire).to_wire()

    def call_state(self) -> Any:
        with self.state_lock:
            if self.state is None:
                from transcript_reader.mcp.tools import CallState

                self.state = CallState()
            return self.state

    def watch(self) -> None:
        """Answer ``timeout`` for every call still open past its deadline (queued or running)."""
        from transcript_reader.mcp.dispatch import timed_out

        while True:
            time.sleep(0.25)
            try:
                now = time.monotonic()
                with self.open_lock:
                    late = [k for k, deadline in self.open.items() if deadline < now]
                for key in late:
                    outcome = timed_out("the call", self.config.call_timeout_s, self.config.wire)
                    self.answer_call(key, json.loads(key), outcome.to_wire())
            except Exception:  # noqa: BLE001 - the watchdog must outlive any one answer
                log.exception("the watchdog could not answer a late call")


def _grace() -> float:
    from transcript_reader.mcp.dispatch import GRACE_S

    return GRACE_S


def serve_stdio(config: Any) -> None:
    import sys

    StdioServer(config, sys.stdin.buffer, sys.stdout.buffer).serve()
