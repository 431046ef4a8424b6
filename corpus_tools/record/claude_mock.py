"""A scripted mock of the Anthropic Messages API (streaming server-sent events) that the real Claude Code
CLI talks to offline (``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``).

Listens on 127.0.0.1 only. A scenario gives ``steps``: each step is the list of content blocks (``text``,
``thinking``, ``tool_use``) of one assistant message. The step served is chosen from the request itself, as
the Codex mock does: the number of ``tool_result`` blocks already in ``messages`` plus the real user prompts
beyond the first (and the ``<task-notification>`` messages that wake the model when a background sub-agent
ends), so a retried request gets the same answer and the turn advances exactly when Claude Code
sends a tool result back. A ``Task`` sub-agent is its own conversation (its first user message is the task's
prompt): ``agents`` maps a substring of that prompt to the sub-agent's own steps.

Claude Code also sends side requests that are not the agent loop (a one-token quota probe, topic or title
detection with a small model, no tools): those get a short text answer and never advance a step; the log
names them ``side``. Every request and response is logged to ``log_dir`` when given.
"""

from __future__ import annotations

import json
import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from corpus_tools.record.mock_server import LoopbackServer, QuietHandler

Steps = list[list[dict[str, Any]]]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]


def _is_prompt(msg: dict[str, Any]) -> bool:
    """A user message a person typed: it has a text block that is not harness context
    (``<system-reminder>``, ``<command-name>``…) and it is not a tool result."""
    content = msg.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return False
    return any(t.strip() and not t.lstrip().startswith("<") for t in _texts(content))


def conversation(body: dict[str, Any], agents: dict[str, Steps]) -> str | None:
    """The name of the sub-agent conversation this request belongs to (None: the main one)."""
    messages = body.get("messages") or []
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    if first is None:
        return None
    text = "\n".join(_texts(first.get("content")))
    for key in agents:
        if key in text:
            return key
    return None


def is_side_request(body: dict[str, Any]) -> bool:
    """Not the agent loop: no tools offered (quota probe, topic/title detection, summaries)."""
    return not body.get("tools")


def choose_step(body: dict[str, Any], n_steps: int) -> int:
    """Which scripted step answers this request (past the last step: the last one again)."""
    results = prompts = 0
    for m in body.get("messages") or []:
        if not isinstance(m, dict) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, list):
            results += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        if _is_prompt(m):
            prompts += 1
        elif any("<task-notification>" in t for t in _texts(content)):
            prompts += 1  # a background sub-agent finished: the harness wakes the model, like a prompt
    return min(results + max(0, prompts - 1), n_steps - 1)


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def sse_stream(blocks: list[dict[str, Any]], message_id: str, model: str, usage: dict[str, int]) -> str:
    """One assistant message as the Messages API streams it: message_start, a start/delta/stop triple per
    content block (text_delta, thinking_delta + signature_delta, input_json_delta), message_delta with the
    stop reason and output tokens, message_stop."""
    start_usage = {"input_tokens": usage["input_tokens"], "output_tokens": 1,
                   "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                   "cache_read_input_tokens": usage["cache_read_input_tokens"]}
    parts = [_event("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}})]
    stop = "end_turn"
    for i, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            parts.append(_event("content_block_start", {"type": "content_block_start", "index": i,
                                                        "content_block": {"type": "text", "text": ""}}))
            parts.append(_event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "text_delta", "text": block["text"]}}))
        elif kind == "thinking":
            parts.append(_event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}))
            parts.append(_event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "thinking_delta", "thinking": block["thinking"]}}))
            parts.append(_event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "signature_delta", "signature": "bW9jay1zaWduYXR1cmU="}}))
        elif kind == "tool_use":
            stop = "tool_use"
            tool_id = block.get("id") or f"toolu_{uuid.uuid4().hex[:24]}"
            parts.append(_event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": tool_id, "name": block["name"], "input": {}}}))
            parts.append(_event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}}))
        else:
            raise ValueError(f"mock: unknown content block type {kind!r}")
        parts.append(_event("content_block_stop", {"type": "content_block_stop", "index": i}))
    parts.append(_event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": usage["output_tokens"]}}))
    parts.append(_event("message_stop", {"type": "message_stop"}))
    return "".join(parts)


class ClaudeMockServer(LoopbackServer):
    """``with ClaudeMockServer(steps, agents) as srv: srv.port`` serves the scenario on 127.0.0.1."""

    def __init__(self, steps: Steps, agents: dict[str, Steps] | None = None, *, port: int = 0,
                 log_dir: str | Path | None = None) -> None:
        if not steps:
            raise ValueError("a scenario needs at least one step")
        self.steps = steps
        self.agents = agents or {}
        self.served: list[str] = []  # "main:N", "agent:KEY:N" or "side", per POST, in order
        super().__init__(port=port, log_dir=log_dir)

    def answer(self, body: dict[str, Any], n: int) -> tuple[str, str]:
        """(label, SSE text) for one POST /v1/messages body."""
        model = str(body.get("model") or "claude-mock")
        raw_len = len(json.dumps(body))
        # Figures chosen so every field is non-zero and distinct: the reader's sums can be checked by hand.
        usage = {"input_tokens": 100 + n, "output_tokens": 20 + n, "cache_creation_input_tokens": 1000,
                 "cache_read_input_tokens": 10 * raw_len // 100}
        if is_side_request(body):
            label, blocks = "side", [{"type": "text", "text": "ok"}]
        else:
            key = conversation(body, self.agents)
            steps = self.steps if key is None else self.agents[key]
            step = choose_step(body, len(steps))
            label = f"main:{step}" if key is None else f"agent:{key}:{step}"
            blocks = steps[step]
        return label, sse_stream(blocks, f"msg_mock_{n:03d}", model, usage)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                n = server._next()
                server._log(f"req-{n:03d}-GET.json", json.dumps({"path": self.path}))
                self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}',
                           "application/json")

            def do_HEAD(self) -> None:  # noqa: N802
                self._send(200, b"", "text/plain")

            def do_POST(self) -> None:  # noqa: N802
                n = server._next()
                raw, body = self._read_json()
                path = self.path.split("?")[0]
                server._log(f"req-{n:03d}-POST.json", json.dumps({"path": self.path, "body": body}, indent=1))
                if path.endswith("/messages/count_tokens"):
                    self._send(200, json.dumps({"input_tokens": max(1, len(raw) // 4)}).encode(), "application/json")
                    return
                if not path.endswith("/messages"):
                    self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}',
                               "application/json")
                    return
                label, stream = server.answer(body, n)
                with server._lock:
                    server.served.append(label)
                server._log(f"resp-{n:03d}-{label.replace(':', '_')}.sse", stream)
                if not body.get("stream"):  # a non-streaming side request: the whole message at once
                    msg = {"id": f"msg_mock_{n:03d}", "type": "message", "role": "assistant",
                           "model": body.get("model"), "content": [{"type": "text", "text": "ok"}],
                           "stop_reason": "end_turn", "stop_sequence": None,
                           "usage": {"input_tokens": 1, "output_tokens": 1}}
                    self._send(200, json.dumps(msg).encode(), "application/json")
                    return
                self._send(200, stream.encode(), "text/event-stream")

        return Handler
