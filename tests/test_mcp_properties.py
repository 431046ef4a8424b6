"""Properties of the MCP server's contract, checked on generated calls (hypothesis): any arguments give a
result or a stable-coded tool error, never anything else; every answer fits ``maxChars`` plus the envelope.

These call the server's protocol-free core (``mcp_server.call_tool``, which the MCP handler runs in a worker
thread) so hundreds of examples stay cheap; ``test_mcp_server.py`` covers the same paths over the wire.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_reader import mcp as mcp_server
from transcript_reader.mcp import ENVELOPE_CHARS, ErrorCode, ServerConfig, ToolFailure, call_tool

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "mcp"
CONFIG = ServerConfig(codex_home=ROOT / "fixtures" / "codex_home", allow_roots=(FIX,))
FILES = [str(FIX / n) for n in ("multi_step.rollout.jsonl", "code_mode_multi_cell.rollout.jsonl",
                                "pytest_run.rollout.jsonl", "not_a_transcript.txt", "other_agent.jsonl")]
CODES = {c.value for c in ErrorCode} - {ErrorCode.INTERNAL_ERROR.value}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
ARG_NAMES = ["path", "provider", "projection", "include", "tail", "maxItems", "maxChars", "maxCharsPerItem",
             "query", "kinds", "regex", "maxMatches", "contextItems", "maxCharsPerMatch", "cwd", "since", "until",
             "grep", "limit", "script", "parser", "stats", "archived"]
TOOLS = [t.value for t in mcp_server.ToolName] + ["agent_transcript_nope"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from(TOOLS),
    arguments=st.dictionaries(st.sampled_from(ARG_NAMES), json_values | st.sampled_from(FILES), max_size=6),
)
def test_any_arguments_give_a_result_or_a_coded_error(tool: str, arguments: dict[str, Any]) -> None:
    try:
        answer = call_tool(tool, arguments, CONFIG)
    except ToolFailure as failure:
        assert failure.code in CODES
        assert failure.message and "\n" not in failure.message
        return
    assert answer.payload["ok"] is True
    assert json.loads(answer.text) == answer.payload


PROJECTIONS = sorted(mcp_server.PROJECTIONS)
FLAGS = sorted(mcp_server.INCLUDE_FLAGS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(FILES[:3]),
    projection=st.sampled_from(PROJECTIONS),
    include=st.dictionaries(st.sampled_from(FLAGS), st.booleans(), max_size=3),
    tail=st.none() | st.integers(1, 50),
    max_items=st.integers(1, 10_000),
    max_chars=st.integers(100, 30_000),
    per_item=st.integers(50, 100_000),
)
def test_every_read_fits_max_chars_plus_the_envelope(
    path: str, projection: str, include: dict[str, bool], tail: int | None, max_items: int, max_chars: int,
    per_item: int,
) -> None:
    args: dict[str, Any] = {"path": path, "projection": projection, "include": include, "maxItems": max_items,
                            "maxChars": max_chars, "maxCharsPerItem": per_item}
    if tail is not None:
        args["tail"] = tail
    try:
        answer = call_tool("agent_transcript_read_file", args, CONFIG)
    except ToolFailure as failure:  # contradictory flags (toolWrites vs patches) are the only refusal here
        assert failure.code == "invalid_argument" and "disagree" in failure.message
        return
    assert len(answer.text) <= max_chars + ENVELOPE_CHARS
    payload = answer.payload
    assert len(payload["items"]) <= max_items
    if not payload["truncated"]:
        assert payload["stats"]["returned_items"] == payload["stats"]["total_items"] == len(payload["items"])
    removed = {k for flag, on in include.items() if not on for k in mcp_server.INCLUDE_FLAGS[flag]}
    assert not removed & {i["kind"] for i in payload["items"]}


@settings(max_examples=40, deadline=None)
@given(
    query=st.sampled_from(["calc", "a", "e", "patch", "exit", "python", "zzz-not-there"]),
    max_matches=st.integers(1, 1_000),
    context=st.integers(0, 20),
    per_match=st.integers(50, 100_000),
    max_chars=st.integers(100, 30_000),
)
def test_every_search_fits_max_chars_plus_the_envelope(
    query: str, max_matches: int, context: int, per_match: int, max_chars: int
) -> None:
    answer = call_tool("agent_transcript_search_file", {
        "path": FILES[1], "query": query, "maxMatches": max_matches, "contextItems": context,
        "maxCharsPerMatch": per_match, "maxChars": max_chars}, CONFIG)
    assert len(answer.text) <= max_chars + ENVELOPE_CHARS
    assert len(answer.payload["matches"]) <= max_matches


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(st.dictionaries(st.sampled_from(["kind", "text", "n"]), json_values, max_size=3), max_size=40),
    limit=st.integers(ENVELOPE_CHARS + 100, ENVELOPE_CHARS + 5_000),
    drop_front=st.booleans(),
    stats=st.booleans(),
)
def test_bound_payload_always_fits_and_keeps_an_end(
    entries: list[dict[str, Any]], limit: int, drop_front: bool, stats: bool
) -> None:
    entries = [{**e, "text": str(e.get("text")) * 50} for e in entries]
    payload: dict[str, Any] = {"ok": True, "path": "/p", "items": entries, "truncated": False}
    if stats:
        payload["stats"] = {"returned_items": len(entries), "dropped_items": 0}
    bounded, text = mcp_server.bound_payload(payload, "items", limit, drop_front=drop_front)
    assert len(text) <= limit and json.loads(text) == json.loads(mcp_server.dumps(bounded))
    kept = bounded["items"]
    assert kept == (entries[len(entries) - len(kept):] if drop_front and kept else entries[: len(kept)])
    assert bounded["truncated"] is (len(kept) < len(entries))
