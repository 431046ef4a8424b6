"""A finished session as an OpenTelemetry trace: one trace per session, spans session -> turn -> item.

Spans are made with the OpenTelemetry SDK and handed, as they end, to an SDK ``SpanExporter``
(``otlp_sinks``: the OTLP/HTTP exporter, or a file of OTLP/JSON written with the exporter's own
encoder). Nothing waits for the whole session: an item's span is made when the item is read and ended
at once (its times are the transcript's, not the clock's), a turn's span when the turn ends, the
session's last; so memory holds one open turn's figures and one export batch, whatever the file's size.
A parent need not exist before its children: every id is known up front, derived from the session id
and the item's position (``span_id``), so the same session always exports the same ids.

Attributes follow the OpenTelemetry GenAI semantic conventions where they have a name for the fact
(``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.*``, ``gen_ai.tool.*``,
``gen_ai.conversation.id``); every span also says what it is in ``transcript.kind``, the reader's item
kind (``session``, ``turn``, ``shell_command``, ``patch``, ``tool_call``, ``test_run``, …). A failed
command, patch, tool call, test run or turn (aborted, interrupted, errored) has error status.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from transcript_reader.export.cost import Price
from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    ContextMessage,
    Format,
    Notice,
    PatchItem,
    RawOutput,
    Reasoning,
    SessionInfo,
    ShellCommand,
    StdinWrite,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.timestamps import parse_time

#: Text put on a span (a prompt, an answer, an output) is cut to this many characters; the full length
#: is in ``transcript.text_chars``. A trace is for finding and timing, the transcript keeps the text.
TEXT_CHARS = 4096

#: Notices that end a turn without its answer: the turn's span has error status.
TURN_FAILURES = frozenset({"turn_aborted", "interrupted", "error", "stream_error"})

#: Tools that start a sub-agent; the sub-agent's session is another trace, linked from the call.
SUBAGENT_TOOLS = frozenset({"spawn_agent", "Task", "Agent"})


def _known_sum(counts: Iterable[int | None]) -> int | None:
    """The sum of line counts, or None when one of them is unknown."""
    total = 0
    for n in counts:
        if n is None:
            return None
        total += n
    return total


def trace_id(session_key: str) -> int:
    """The trace id of a session: 128 bits of SHA-256 of its id (never 0, which OTLP reserves)."""
    return int.from_bytes(hashlib.sha256(b"transcript-reader trace " + session_key.encode()).digest()[:16]) or 1


def span_id(session_key: str, position: str) -> int:
    """The span id of ``position`` (``session``, ``turn/N``, ``item/N``) in a session: 64 bits of SHA-256."""
    data = f"transcript-reader span {session_key} {position}".encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8]) or 1


def to_ns(ts: str | None) -> int | None:
    """An ISO-8601 timestamp as nanoseconds since the epoch (None when absent or unreadable)."""
    dt = parse_time(ts)
    if dt is None:
        return None
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


def _cut(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "…"


@dataclass(slots=True)
class ExportFigures:
    """What an export sent: spans by ``transcript.kind``, the trace id (hex), the session's figures."""

    trace_id: str = ""
    spans: Counter[str] = field(default_factory=Counter)
    info: SessionInfo | None = None


@dataclass(slots=True)
class _Turn:
    index: int
    turn_id: str | None
    start: int
    end: int
    prompt: str | None = None
    failed: str | None = None  # the notice category that ended it
    items: int = 0


class _Ids:
    """An SDK ``IdGenerator`` that gives the ids this module decided (set before each span starts)."""

    def __init__(self) -> None:
        self.trace = 1
        self.span = 1

    def generate_span_id(self) -> int:
        return self.span

    def generate_trace_id(self) -> int:
        return self.trace

    def is_trace_id_random(self) -> bool:
        return False  # derived from the session id (W3C's "random" trace flag stays off)


class SpanWriter:
    """Turns a session's items, as they are read, into ended SDK spans handed to ``batcher`` (an SDK
    ``SpanProcessor`` with ``check``, ``flush`` and ``drop``: ``otlp_sinks.Batcher``).

    ``session_key`` is the session's id (from the file's head) that every id derives from; ``agent`` the
    agent that wrote the file (``codex``, ``claude-code``); ``model`` the model its head names."""

    def __init__(self, batcher: Any, *, session_key: str, agent: str, agent_version: str | None,
                 model: str | None, start_ns: int | None, fallback_ns: int = 0) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider
        from opentelemetry.sdk.trace.sampling import ALWAYS_ON

        self.key = session_key
        self.agent = agent
        self.model = model
        self.ids = _Ids()
        self.ids.trace = trace_id(session_key)
        # Resource(), not Resource.create(): create() adds a random service.instance.id, and the same
        # session must export the same bytes
        resource = Resource({"service.name": agent, "telemetry.sdk.name": "opentelemetry",
                             "telemetry.sdk.language": "python",
                             **({"service.version": agent_version} if agent_version else {})})
        self.batcher = batcher
        self.provider = TracerProvider(resource=resource, id_generator=self.ids, sampler=ALWAYS_ON,  # type: ignore[arg-type]
                                       span_limits=SpanLimits(max_attributes=64, max_links=16),
                                       shutdown_on_exit=False)
        self.provider.add_span_processor(self.batcher)
        self.tracer = self.provider.get_tracer("transcript_reader.export.otlp")
        self.figures = ExportFigures(trace_id=f"{self.ids.trace:032x}")
        self.session_span = span_id(session_key, "session")
        self.position = 0
        self.clock = start_ns or 0  # the latest time read: an item without a timestamp takes it
        self.first: int | None = start_ns  # the session's start when the items must tell it
        self.last = self.clock
        #: where the spans of a transcript that records no time at all are placed (the file's mtime), a
        #: microsecond apart in the items' order; such a session says so in ``transcript.time_source``
        self.fallback = fallback_ns
        self.untimed = 0
        self.turn: _Turn | None = None
        self.turn_ids: set[str] = set()
        self.turns = 0
        self.failed_items = 0

    # ---- spans ------------------------------------------------------------------------------------

    def _context(self, parent: int | None) -> Any:
        from opentelemetry import trace
        from opentelemetry.context import Context
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

        if parent is None:
            return Context()  # a root: never the caller's current span
        ctx = SpanContext(trace_id=self.ids.trace, span_id=parent, is_remote=False,
                          trace_flags=TraceFlags(TraceFlags.SAMPLED))
        return trace.set_span_in_context(NonRecordingSpan(ctx))

    def _emit(self, name: str, sid: int, parent: int | None, start: int, end: int, kind: str,
              attrs: dict[str, Any], error: str | None = None, links: Iterable[tuple[str, str]] = ()) -> None:
        from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

        self.ids.span = sid
        attrs["transcript.kind"] = kind
        span_links = [Link(SpanContext(trace_id=trace_id(other), span_id=span_id(other, "session"), is_remote=True,
                                       trace_flags=TraceFlags(TraceFlags.SAMPLED)), {"transcript.link": why})
                      for other, why in links]
        span = self.tracer.start_span(name, context=self._context(parent),
                                      attributes={k: v for k, v in attrs.items() if v is not None},
                                      links=span_links, start_time=start)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=max(end, start))
        self.figures.spans[kind] += 1
        self.batcher.check()

    # ---- items ------------------------------------------------------------------------------------

    def add(self, item: AnyItem) -> None:
        """One item: its span now (under its turn, whose span comes when the turn ends)."""
        start = to_ns(item.timestamp)
        if start is None:
            if self.clock:
                start = self.clock
            else:
                start = self.fallback + self.position * 1000
                self.untimed += 1
        else:
            self.clock = max(self.clock, start)
        if not self.first:
            self.first = start
        self._turn_of(item, start)
        pos = self.position
        self.position += 1
        name, attrs, error, end, links = describe(item, start, self.model)
        attrs["transcript.line"] = item.line
        if item.turn_id:
            attrs["transcript.turn_id"] = item.turn_id
        parent = span_id(self.key, f"turn/{self.turn.index}") if self.turn is not None else self.session_span
        if self.turn is not None:
            self.turn.end = max(self.turn.end, end)
            self.turn.items += 1
            if isinstance(item, Notice) and item.category in TURN_FAILURES:
                self.turn.failed = item.category
        if isinstance(item, UserMessage) and self.turn is not None and self.turn.prompt is None:
            self.turn.prompt = item.text
        if error is not None:
            self.failed_items += 1
        self.last = max(self.last, end)
        self._emit(name, span_id(self.key, f"item/{pos}"), parent, start, end, item.kind.value, attrs, error,
                   links)

    def _turn_of(self, item: AnyItem, start: int) -> None:
        """Open a new turn when ``item`` begins one (a new turn id, or a prompt when there are no ids)."""
        tid = item.turn_id
        if tid is None:
            if not isinstance(item, UserMessage):
                return
        elif (self.turn is not None and tid == self.turn.turn_id) or tid in self.turn_ids:
            return
        else:
            self.turn_ids.add(tid)
        self._end_turn()
        self.turns += 1
        self.turn = _Turn(index=self.turns, turn_id=tid, start=start, end=start)

    def _end_turn(self) -> None:
        t = self.turn
        if t is None:
            return
        self.turn = None
        attrs: dict[str, Any] = {"transcript.turn.index": t.index, "transcript.turn_id": t.turn_id,
                                 "transcript.turn.items": t.items}
        if t.prompt is not None:
            attrs["transcript.text"] = _cut(t.prompt)
            attrs["transcript.text_chars"] = len(t.prompt)
        self._emit(f"turn {t.index}", span_id(self.key, f"turn/{t.index}"), self.session_span, t.start, t.end,
                   "turn", attrs, error=t.failed)

    def finish(self, info: SessionInfo, cost: Price | None, run_failed: bool) -> ExportFigures:
        """The last turn's span and the session's (its figures are known now), then flush everything."""
        self._end_turn()
        start = to_ns(info.first_timestamp) or self.first or 0
        end = max(to_ns(info.last_timestamp) or 0, self.last, start)
        attrs = session_attributes(info, self.agent, cost)
        if start == 0 or self.untimed:
            start = start or self.fallback
            end = max(end, self.last, start)
            attrs["transcript.time_source"] = "file_mtime" if not self.clock else "transcript, file_mtime"
        else:
            attrs["transcript.time_source"] = "transcript"
        links = [(p, why) for p, why in ((info.parent_session_id, "parent session"),
                                        (info.forked_from_id, "forked from")) if p]
        error = f"run {info.run_status}" if run_failed else None
        self._emit(f"invoke_agent {self.agent}", self.session_span, None, start, end, "session", attrs,
                   error, links)
        self.batcher.flush()
        self.provider.shutdown()
        self.figures.info = info
        return self.figures

    def abandon(self) -> None:
        """Stop without exporting what is left (an error ended the reading)."""
        self.batcher.drop()
        self.provider.shutdown()


def session_attributes(info: SessionInfo, agent: str, cost: Price | None) -> dict[str, Any]:
    """The session span's attributes: the agent, model, tokens (only when the file records usage: an
    unknown count is left out, never 0) and cost (usd, source and price date when priced; the reason when not)."""
    provider = "anthropic" if info.format in (Format.CLAUDE, Format.CLAUDE_STREAM) else "openai"
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.provider.name": provider,
        "gen_ai.conversation.id": info.session_id,
        "gen_ai.request.model": info.models[0] if info.models else None,
        "transcript.models": list(info.models) if info.models else None,
        "transcript.format": info.format.value,
        "transcript.version": info.version,
        "transcript.cwd": info.cwd,
        "transcript.title": _cut(info.title) if info.title else None,
        "transcript.turns": info.turns,
        "transcript.run_status": info.run_status,
        "transcript.parent_session_id": info.parent_session_id,
    }
    tok = info.tokens
    if tok is not None and tok.source != "unknown":  # None / "unknown": the file records no usage
        attrs.update({
            "gen_ai.usage.input_tokens": tok.input,
            "gen_ai.usage.output_tokens": tok.output,
            "gen_ai.usage.cache_read.input_tokens": tok.cached_input,
            "gen_ai.usage.reasoning.output_tokens": tok.reasoning,
            "transcript.tokens.total": tok.total,
            "transcript.tokens.source": tok.source,
        })
        cache_write = getattr(tok, "cache_write", None)
        if cache_write:
            attrs["gen_ai.usage.cache_creation.input_tokens"] = cache_write
    if cost is not None and cost.usd is not None:
        attrs["gen_ai.usage.cost"] = cost.usd
        attrs["transcript.cost.usd"] = cost.usd
        attrs["transcript.cost.price_date"] = cost.price_date
    if cost is not None:  # an unknown cost has no usd attribute (never 0), and says why
        attrs["transcript.cost.source"] = cost.source
        attrs["transcript.cost.reason"] = cost.reason
    return attrs


def describe(item: AnyItem, start: int, model: str | None
             ) -> tuple[str, dict[str, Any], str | None, int, list[tuple[str, str]]]:
    """``(span name, attributes, error or None, end ns, links)`` of one item."""
    attrs: dict[str, Any] = {}
    error: str | None = None
    end = start
    links: list[tuple[str, str]] = []
    executed = getattr(item, "executed", None)
    if executed is not None:
        attrs["transcript.executed"] = executed.value
        attrs["transcript.origin"] = item.origin.value  # type: ignore[union-attr]
    if isinstance(item, ShellCommand):
        name = f"execute_tool {item.tool}"
        attrs.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": item.tool,
                      "gen_ai.tool.call.id": item.call_id, "process.command_line": _cut(item.command),
                      "process.exit.code": item.exit_code, "transcript.cwd": item.cwd,
                      "transcript.duration_s": item.duration_s, "transcript.status": item.status,
                      "transcript.output": _cut(item.output) if item.output is not None else None,
                      "transcript.output_chars": item.output_chars})
        if item.duration_s is not None:
            end = start + int(item.duration_s * 1e9)
        if item.exit_code not in (None, 0):
            error = f"exit {item.exit_code}"
        elif item.status in ("failed", "rejected"):
            error = item.status
    elif isinstance(item, PatchItem):
        name = f"execute_tool {item.tool}"
        attrs.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": item.tool,
                      "gen_ai.tool.call.id": item.call_id,
                      "transcript.patch.files": [f.move_to or f.path for f in item.files][:100],
                      # an unknown count (an exec stream's file change) leaves the sum unknown
                      "transcript.patch.added": _known_sum(f.added for f in item.files),
                      "transcript.patch.removed": _known_sum(f.removed for f in item.files),
                      "transcript.patch.success": item.success})
        if item.success is False:
            error = _cut(item.error) or "patch not applied"
    elif isinstance(item, TestRun):
        name = f"test_run {item.framework}"
        attrs.update({"transcript.test.framework": item.framework, "transcript.test.result": item.result.value,
                      "transcript.test.passed": item.passed, "transcript.test.failed": item.failed,
                      "transcript.test.skipped": item.skipped, "process.command_line": _cut(item.command),
                      "process.exit.code": item.exit_code})
        if item.result is TestResult.FAIL:
            error = "tests failed"
    elif isinstance(item, ToolCallItem):
        name = f"execute_tool {item.name}"
        attrs.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": item.name,
                      "gen_ai.tool.call.id": item.call_id, "gen_ai.tool.call.arguments": _cut(item.arguments),
                      "gen_ai.tool.call.result": _cut(item.result) if item.result is not None else None,
                      "transcript.tool.success": item.success})
        server = mcp_server(item.name)
        if server is not None:
            attrs["gen_ai.tool.type"] = "extension"
            attrs["transcript.mcp.server"] = server
        if item.success is False:
            error = "tool call failed"
        child = subagent_id(item)
        if child is not None:
            attrs["transcript.subagent.id"] = child
            links.append((child, "sub-agent"))
    elif isinstance(item, AssistantMessage):
        name = f"chat {model}" if model else "chat"
        attrs.update({"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                      "transcript.final": item.final, "transcript.refusal": item.refusal or None,
                      "transcript.text": _cut(item.text), "transcript.text_chars": len(item.text)})
    elif isinstance(item, UserMessage):
        name = "user_message"
        attrs.update({"transcript.text": _cut(item.text), "transcript.text_chars": len(item.text),
                      "transcript.images": len(item.images) or None})
    elif isinstance(item, ContextMessage):
        name = f"context {item.label}"
        attrs.update({"transcript.context.label": item.label, "transcript.context.role": item.role,
                      "transcript.text_chars": len(item.text)})
    elif isinstance(item, Reasoning):
        name = "reasoning"
        attrs.update({"transcript.text": _cut(item.text), "transcript.text_chars": len(item.text)})
    elif isinstance(item, StdinWrite):
        name = "stdin_write"
        attrs.update({"transcript.text": _cut(item.chars), "process.exit.code": item.exit_code})
    elif isinstance(item, RawOutput):
        name = "raw_output"
        attrs.update({"gen_ai.tool.call.id": item.call_id, "gen_ai.tool.name": item.tool,
                      "transcript.text_chars": len(item.text)})
    elif isinstance(item, Notice):
        name = f"notice {item.category}"
        attrs.update({"transcript.notice.category": item.category, "transcript.text": _cut(item.message)})
    elif isinstance(item, Unreadable):
        name = "unreadable"
        attrs["transcript.text"] = _cut(item.reason)
        error = "unreadable line"
    else:  # pragma: no cover - every kind of the model is named above
        name = item.kind.value
    return name, attrs, error, end, links


def mcp_server(tool: str) -> str | None:
    """The MCP server of a tool call named ``mcp__SERVER__TOOL`` (Claude Code's and the reader's spelling)."""
    if tool.startswith("mcp__"):
        server = tool[5:].split("__", 1)[0]
        return server or None
    return None


def subagent_id(item: ToolCallItem) -> str | None:
    """The id of the sub-agent a ``spawn_agent`` call started, from its result (``{"agent_id": …}``,
    or the bare id); None when the result does not name one."""
    if item.name not in SUBAGENT_TOOLS or not item.result:
        return None
    text = item.result.strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if isinstance(value, dict):
        for key in ("agent_id", "thread_id", "session_id", "agentId", "id"):
            got = value.get(key)
            if isinstance(got, str) and got:
                return got
        return None
    if isinstance(value, str) and value and len(value) <= 128 and not any(c.isspace() for c in value):
        return value
    return None


def export_items(items: Iterable[AnyItem], writer: SpanWriter, info: Callable[[], SessionInfo],
                 cost: Callable[[SessionInfo], Price | None]) -> ExportFigures:
    """Every item's span as it comes, then the session's; on an error nothing more is exported."""
    try:
        for item in items:
            writer.add(item)
        got = info()
        return writer.finish(got, cost(got), run_failed=got.run_status == "failed")
    except BaseException:
        writer.abandon()
        raise
