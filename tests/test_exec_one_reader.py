"""One reader a fact: the ``codex exec --json`` protocol stream's rare events (MCP results, web search,
view image, token counts, ``session_configured``) carry the payloads a rollout's ``event_msg`` lines
carry, and each is read by the rollout's reader of that fact. These tests feed the same payload to both
and ask for the same answer, including shapes where the two readers used to differ (an MCP result with
several content items, an image, an empty result)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_reader.providers.codex.exec_stream import ExecStreamDecoder
from transcript_reader.providers.codex.head import read_head
from transcript_reader.providers.codex.rollout import decode_event, meta_from
from transcript_reader.providers.records import Call, Message, ToolEnd, TurnEnd, UsageEvent

MCP_RESULTS: list[Any] = [
    {"Ok": {"content": [{"type": "text", "text": "x is 42"}], "isError": False}},
    {"Ok": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}},
    {"Ok": {"content": [{"type": "text", "text": "t"}, {"type": "image", "data": "…", "mimeType": "image/png"}]}},
    {"Ok": {"content": [], "isError": False, "_meta": None}},
    {"Ok": {"content": [{"type": "text", "text": "no"}], "isError": True}},
    {"Ok": {"content": [{"type": "text", "text": "s"}], "structuredContent": {"id": 1}}},
    {"Err": "server crashed"},
    None,
]


def stream_records(*payloads: dict[str, Any]) -> tuple[list[Any], ExecStreamDecoder]:
    """The records a protocol stream gives for ``payloads`` (inside one turn), and its decoder."""
    d = ExecStreamDecoder(protocol=True)
    recs: list[Any] = []
    for n, msg in enumerate(({"type": "task_started"}, *payloads), 1):
        recs += d.parsed(n, {"id": "0", "msg": msg}).records
    recs += d.close().records
    return recs, d


def rollout_end(payload: dict[str, Any]) -> ToolEnd:
    return next(r for r in decode_event(payload, 1, None).records if isinstance(r, ToolEnd))


def stream_call(payload: dict[str, Any]) -> Call:
    return next(r for r in stream_records(payload)[0] if isinstance(r, Call))


@pytest.mark.parametrize("result", MCP_RESULTS)
@pytest.mark.parametrize("invocation", [{"invocation": {"server": "docs", "tool": "lookup", "arguments": {"q": 1}}},
                                        {"server": "docs", "tool": "lookup"}, {}])
def test_an_mcp_end_reads_alike_in_a_stream_and_a_rollout(result: Any, invocation: dict[str, Any]) -> None:
    payload = {"type": "mcp_tool_call_end", "call_id": "c1", "result": result, **invocation}
    end, call = rollout_end(payload), stream_call(payload)
    assert call.end is not None and isinstance(call.end, ToolEnd)
    assert (call.name, call.call_id, call.end.result, call.end.success) == (end.name, end.call_id, end.result,
                                                                             end.success)


@pytest.mark.parametrize("result", [r["Ok"] for r in MCP_RESULTS if r and "Ok" in r])
def test_a_thread_stream_mcp_item_reads_its_result_as_the_rollout_does(result: dict[str, Any]) -> None:
    """The thread stream's ``mcp_tool_call`` item carries the ``Ok`` side bare."""
    end = rollout_end({"type": "mcp_tool_call_end", "call_id": "c", "result": {"Ok": result},
                       "invocation": {"server": "s", "tool": "t"}})
    d = ExecStreamDecoder(protocol=False)
    item = {"id": "c", "type": "mcp_tool_call", "server": "s", "tool": "t", "arguments": {}, "result": result,
            "error": None, "status": "in_progress"}
    recs = list(d.parsed(1, {"type": "item.completed", "item": item}).records)
    call = next(r for r in recs if isinstance(r, Call))
    assert isinstance(call.end, ToolEnd)
    assert (call.name, call.end.result, call.end.success) == (end.name, end.result, end.success)


@pytest.mark.parametrize("payload, argument", [
    ({"type": "web_search_end", "call_id": "ws", "query": "what is x"}, "what is x"),
    ({"type": "web_search_end", "call_id": "ws"}, ""),
    ({"type": "view_image_tool_call", "call_id": "v", "path": "/tmp/chart.png"}, "/tmp/chart.png"),
    ({"type": "view_image_tool_call", "call_id": "v", "path": 7}, ""),
])
def test_web_search_and_view_image_read_alike(payload: dict[str, Any], argument: str) -> None:
    """What the rollout's end holds as its result (the query, the path) is the stream call's argument."""
    end, call = rollout_end(payload), stream_call(payload)
    assert isinstance(call.end, ToolEnd)
    assert (call.name, call.call_id, call.end.success) == (end.name, end.call_id, end.success)
    assert call.arguments == argument == (end.result or "")


usage_obj = st.fixed_dictionaries({}, optional={
    k: st.one_of(st.integers(-5, 10**9), st.none(), st.text(max_size=2), st.booleans())
    for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")})


@settings(max_examples=60, deadline=None)
@given(usages=st.lists(usage_obj, min_size=1, max_size=4), cumulative=st.booleans())
def test_token_counts_are_the_rollout_readers_figures(usages: list[dict[str, Any]], cumulative: bool) -> None:
    """A cumulative ``token_count`` (under ``info``): the last figure the rollout's reader gives. A flat
    one (0.20/0.29: one request's usage): the sum of those figures."""
    payloads = [{"type": "token_count", "info": {"total_token_usage": u}} if cumulative else {"type": "token_count", **u}
                for u in usages]
    events = [r for p in payloads for r in decode_event(p, 1, None).records if isinstance(r, UsageEvent)]
    figures = [e.running if cumulative else e.call for e in events]
    _, d = stream_records(*payloads)
    usage = d.summary().usage
    if cumulative:
        last = figures[-1] if figures else None
        assert (usage.input, usage.output, usage.total) == ((last.input, last.output, last.total) if last else (0, 0, 0))
    else:
        assert (usage.input, usage.cached_input, usage.output, usage.reasoning, usage.total) == tuple(
            sum(getattr(f, k) for f in figures if f) for k in ("input", "cached_input", "output", "reasoning", "total"))


def test_session_configured_names_the_session_as_its_header_does(tmp_path: Path) -> None:
    """The stream's ``session_configured`` is read by the rollout's ``session_meta`` reader, and the head
    read (``ls``) and the decoder (``inspect``) read it, and the leading config line, in one place."""
    msg = {"type": "session_configured", "session_id": "5973b6c0", "model": "codex-mini-latest"}
    meta = meta_from(msg)
    lines = [{"model": "o3", "workdir": "/w", "provider": "openai", "approval": "never"}, {"prompt": "hi"},
             {"id": "0", "msg": msg}, {"id": "0", "msg": {"type": "task_started"}}]
    d = ExecStreamDecoder(protocol=True)
    for n, obj in enumerate(lines, 1):
        d.parsed(n, obj)
    d.close()
    s = d.summary()
    path = tmp_path / "run.exec.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines))
    head = read_head(path)
    assert (s.thread_id, head.session_id) == (meta.session_id, meta.session_id) == ("5973b6c0", "5973b6c0")
    # the config line names a model first; the session's own word wins, in both readers
    assert (s.model, head.model, s.cwd, head.cwd) == ("codex-mini-latest", "codex-mini-latest", "/w", "/w")


@pytest.mark.parametrize("payload", [
    {"type": "user_message", "message": "fix it", "images": ["data:image/png;base64,AAAA", "/tmp/a.png"]},
    {"type": "user_message"},
    {"type": "error", "message": "exceeded retry limit"},
    {"type": "error"},
    {"type": "stream_error", "message": "stream error: retrying 1/5"},
    {"type": "stream_error"},
])
def test_prompts_and_error_notices_read_alike(payload: dict[str, Any]) -> None:
    """A prompt (with its images) and an error notice: the record the rollout's reader gives is the
    stream's, field for field."""
    rollout = list(decode_event(payload, 1, None).records)
    stream = [r for r in stream_records(payload)[0] if type(r) is type(rollout[0])]
    assert [repr_of(r) for r in stream][:1] == [repr_of(rollout[0])]


def test_task_complete_names_the_answer_the_rollout_reader_reads() -> None:
    """The turn's only message is the one ``task_complete`` names (``last_agent_message``)."""
    payload = {"type": "task_complete", "last_agent_message": "x is 42."}
    end = next(r for r in decode_event(payload, 1, None).records if isinstance(r, TurnEnd))
    texts = [r.text for r in stream_records(payload)[0] if isinstance(r, Message) and r.role == "assistant"]
    assert texts == [end.last_agent_message] == ["x is 42."]


def repr_of(record: Any) -> tuple[Any, ...]:
    return tuple(getattr(record, f) for f in record.__slots__)
