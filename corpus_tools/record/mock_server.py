"""A scripted mock of the OpenAI Responses API (server-sent events) that real Codex talks to offline.

Listens on 127.0.0.1 only. A scenario is ``{"steps": [[item, …], …]}``: each step is the list of output
items (``function_call``, ``custom_tool_call``, ``message``, ``reasoning``…) of one model response.
The step served is chosen from the request itself: the number of tool outputs already in ``input``
plus the real user prompts beyond the first, so a retried request gets the same answer and the turn
advances exactly when Codex sends a tool result back (the rule of ``../shared/realcodex``'s mock,
re-implemented here). Every request and response is logged to ``log_dir`` when given.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                          "tool_search_output"})


def choose_step(body: dict[str, Any], n_steps: int) -> int:
    """Which scripted step answers this request (past the last step: the last one again)."""
    inputs = body.get("input") or []
    outputs = sum(1 for it in inputs if isinstance(it, dict) and it.get("type") in OUTPUT_TYPES)
    prompts = 0
    for it in inputs:
        if isinstance(it, dict) and it.get("type") == "message" and it.get("role") == "user":
            texts = [c.get("text", "") for c in it.get("content") or [] if isinstance(c, dict)]
            # context messages (<environment_context>, AGENTS.md instructions) are not prompts
            if texts and not texts[0].lstrip().startswith(("<", "# AGENTS.md instructions")):
                prompts += 1
    return min(outputs + max(0, prompts - 1), n_steps - 1)


def sse_stream(items: list[dict[str, Any]], response_id: str, model: str, usage: dict[str, Any]) -> str:
    def event(ev: dict[str, Any]) -> str:
        return f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n"

    parts = [event({"type": "response.created", "response": {
        "id": response_id, "object": "response", "model": model, "status": "in_progress",
        "created_at": int(time.time())}})]
    for idx, original in enumerate(items):
        item = dict(original)
        item.setdefault("id", f"item_{uuid.uuid4().hex[:16]}")
        if item.get("type") in ("function_call", "custom_tool_call", "message"):
            item.setdefault("status", "completed")
        added = dict(item, content=[], status="in_progress") if item.get("type") == "message" else item
        parts.append(event({"type": "response.output_item.added", "output_index": idx, "item": added}))
        if item.get("type") == "message":
            for c in item.get("content", []):
                if c.get("type") == "output_text":
                    parts.append(event({"type": "response.output_text.delta", "item_id": item["id"],
                                        "output_index": idx, "content_index": 0, "delta": c["text"]}))
        parts.append(event({"type": "response.output_item.done", "output_index": idx, "item": item}))
    parts.append(event({"type": "response.completed", "response": {
        "id": response_id, "object": "response", "model": model, "status": "completed", "usage": usage}}))
    return "".join(parts)


class QuietHandler(BaseHTTPRequestHandler):
    """The request handler both mocks build on: HTTP/1.1, nothing on stderr (every exchange is logged to
    files by the server), one way to answer and one way to read a JSON body."""

    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet: requests are logged to files
        return

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _read_json(self) -> tuple[bytes, dict[str, Any]]:
        """The raw body (decompressed when the client sent ``Content-Encoding``) and its JSON object
        (``{}`` when it is not one)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        enc = (self.headers.get("Content-Encoding") or "").lower()
        if enc == "zstd":
            import zstandard

            raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=1 << 28)
        elif enc == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        return raw, body if isinstance(body, dict) else {}


class LoopbackServer:
    """What every scripted mock shares: a threaded HTTP server on 127.0.0.1 only, a request counter, and
    a log of every exchange in ``log_dir``. A mock supplies ``_handler`` (its request handler class)."""

    def __init__(self, *, port: int = 0, log_dir: str | Path | None = None) -> None:
        self.log_dir = Path(log_dir) if log_dir else None
        self._lock = threading.Lock()
        self._count = 0
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def _log(self, name: str, data: str) -> None:
        if self.log_dir:
            (self.log_dir / name).write_text(data, encoding="utf-8")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError


class MockServer(LoopbackServer):
    """``with MockServer(steps) as srv: srv.port`` serves the scenario on 127.0.0.1 in a thread."""

    def __init__(self, steps: list[list[dict[str, Any]]], *, port: int = 0, log_dir: str | Path | None = None,
                 model: str = "mock-model") -> None:
        if not steps:
            raise ValueError("a scenario needs at least one step")
        self.steps = steps
        self.model = model
        self.served: list[int] = []  # step index per POST, in order
        super().__init__(port=port, log_dir=log_dir)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                n = server._next()
                server._log(f"req-{n:03d}-GET.json", json.dumps({"path": self.path}))
                if self.path.split("?")[0].endswith("/models"):
                    body = {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "mock"}]}
                    self._send(200, json.dumps(body).encode(), "application/json")
                else:
                    self._send(404, b'{"error":{"message":"mock: no such GET"}}', "application/json")

            def do_POST(self) -> None:  # noqa: N802
                n = server._next()
                raw, body = self._read_json()
                server._log(f"req-{n:03d}-POST.json", json.dumps({"path": self.path, "body": body}, indent=1))
                if not self.path.split("?")[0].endswith("/responses"):
                    self._send(404, b'{"error":{"message":"mock: no such POST"}}', "application/json")
                    return
                step = choose_step(body, len(server.steps))
                with server._lock:
                    server.served.append(step)
                in_tok = max(1, len(raw) // 4)
                out_tok = 10 + 5 * len(server.steps[step])
                usage = {"input_tokens": in_tok, "input_tokens_details": {"cached_tokens": in_tok // 2 if step else 0},
                         "output_tokens": out_tok, "output_tokens_details": {"reasoning_tokens": 3},
                         "total_tokens": in_tok + out_tok}
                stream = sse_stream(server.steps[step], f"resp_mock_{n:03d}", body.get("model", server.model), usage)
                server._log(f"resp-{n:03d}-step{step}.sse", stream)
                self._send(200, stream.encode(), "text/event-stream")

        return Handler
