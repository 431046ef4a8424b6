"""The ``agent-code`` wire profile against the behaviours peers.md §1 pins for the origin's tools: field
names, epoch-ms timestamps, the stats object, the error shape (a non-error result with an ``error`` code
string), ``tail`` with ``maxItems`` (the first of the last N), include flags, search context. Through the
SDK client, in memory and over a real ``--wire agent-code`` stdio process. Our profile stays the default."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client._memory import InMemoryTransport

from tests.test_mcp_server import FIX, wire
from tests.test_mcp_transports import ROOT, server_env
from transcript_reader.mcp import WIRE_AGENT_CODE, ServerConfig, create_server

CONFIG = ServerConfig(allow_roots=(FIX,), wire=WIRE_AGENT_CODE)
PYTEST_RUN = str(FIX / "pytest_run.rollout.jsonl")
MULTI = str(FIX / "multi_step.rollout.jsonl")
ORIGIN_KINDS = {"user_message", "assistant_message", "tool_read", "tool_write", "shell_command", "patch", "test_run"}
ORIGIN_FIELDS = {
    "user_message": {"kind", "timestamp", "text"},
    "assistant_message": {"kind", "timestamp", "text", "final"},
    "tool_read": {"kind", "timestamp", "tool", "target", "excerpt"},
    "tool_write": {"kind", "timestamp", "tool", "target", "summary"},
    "shell_command": {"kind", "timestamp", "cwd", "command", "exitCode", "outputExcerpt"},
    "patch": {"kind", "timestamp", "files", "summary"},
    "test_run": {"kind", "timestamp", "command", "result", "outputExcerpt"},
}
STATS = {"totalEvents", "returnedItems", "userMessages", "assistantMessages", "toolReads", "toolWrites",
         "shellCommands", "patches", "testRuns", "parseErrors"}


def calls(batch: list[tuple[str, dict[str, Any]]], config: ServerConfig = CONFIG) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        async with Client(InMemoryTransport(create_server(config))) as client:
            return [wire(await client.call_tool(name, args)) for name, args in batch]

    out: list[dict[str, Any]] = anyio.run(main)
    return out


def body(result: dict[str, Any]) -> dict[str, Any]:
    """The origin's results are text only: no structuredContent, never isError."""
    assert result.get("isError") is False and "structuredContent" not in result, result
    (block,) = result["content"]
    payload: dict[str, Any] = json.loads(block["text"])
    return payload


def read(path: str, **args: Any) -> dict[str, Any]:
    return body(calls([("agent_transcript_read_file", {"path": path, "projection": "timeline", **args})])[0])


def test_items_have_the_origins_kinds_fields_and_epoch_ms_timestamps() -> None:
    payload = read(PYTEST_RUN, include={"rawToolOutputs": True})
    assert set(payload) == {"ok", "path", "provider", "projection", "items", "truncated", "stats"}
    assert payload["ok"] is True and payload["provider"] == "codex" and payload["projection"] == "timeline"
    for item in payload["items"]:
        assert item["kind"] in ORIGIN_KINDS and set(item) <= ORIGIN_FIELDS[item["kind"]], item
        assert isinstance(item["timestamp"], int)
    first = payload["items"][0]
    assert first["timestamp"] == int(datetime.fromisoformat("2026-11-30T17:58:58.129+00:00").timestamp() * 1000)
    shells = [i for i in payload["items"] if i["kind"] == "shell_command"]
    assert shells[0] == {"kind": "shell_command", "timestamp": shells[0]["timestamp"], "cwd": "/home/user/project",
                         "command": "ls && cat calc.py", "exitCode": 0,
                         "outputExcerpt": "calc.py\nhello.txt\ndef add(a, b):\n    return a - b\n"}
    (patch,) = [i for i in payload["items"] if i["kind"] == "patch"]
    assert sorted(Path(f).name for f in patch["files"]) == ["NOTES.md", "calc.py"]
    assert any(i["kind"] == "tool_read" and i["tool"] == "function_call_output" for i in payload["items"])
    (answer,) = [i for i in payload["items"] if i["kind"] == "assistant_message"]
    assert answer["final"] is True


def test_stats_are_the_origins_object() -> None:
    stats = read(PYTEST_RUN)["stats"]
    assert set(stats) == STATS
    assert (stats["userMessages"], stats["assistantMessages"], stats["shellCommands"], stats["patches"]) == (1, 1, 2, 1)
    assert stats["totalEvents"] == 31 and stats["parseErrors"] == 0


def test_tail_then_max_items_keeps_the_first_of_the_last() -> None:
    everything = read(MULTI, maxItems=1000)["items"]
    assert len(everything) >= 4
    pinned = read(MULTI, tail=2, maxItems=1)  # peers.md §1.5: on four items this returns the third
    assert pinned["items"] == everything[-2:-1]
    assert read(MULTI, tail=5, maxItems=2)["items"] == everything[-5:-3]
    ours_all, ours = (r["structuredContent"]["items"] for r in calls(
        [("agent_transcript_read_file", {"path": MULTI, "projection": "timeline", "maxItems": 1000}),
         ("agent_transcript_read_file", {"path": MULTI, "projection": "timeline", "tail": 5, "maxItems": 2})],
        ServerConfig(allow_roots=(FIX,))))
    assert ours == ours_all[-2:]  # our profile keeps the newest of the window


def test_include_flags_as_the_origin() -> None:
    no_users = read(PYTEST_RUN, include={"userMessages": False})["items"]
    assert "user_message" not in {i["kind"] for i in no_users}
    only_final = read(PYTEST_RUN, projection="final", include={"shellCommands": True})["items"]
    assert {i["kind"] for i in only_final} == {"assistant_message", "shell_command"}
    assert not any(i["kind"] == "tool_read" and i["tool"] == "function_call_output" for i in read(PYTEST_RUN)["items"])
    handoff = read(PYTEST_RUN, projection="handoff")
    assert handoff["items"] == read(PYTEST_RUN)["items"] and handoff["projection"] == "handoff"  # = timeline


def test_max_chars_drops_items_and_a_cut_text_does_not_set_truncated() -> None:
    cut = read(PYTEST_RUN, maxCharsPerItem=50)
    assert cut["truncated"] is False
    assert any(i.get("outputExcerpt", "").endswith("\n[truncated]") or i.get("text", "").endswith("\n[truncated]")
               for i in cut["items"]) or all(len(i.get("outputExcerpt", "")) <= 50 for i in cut["items"])
    small = read(PYTEST_RUN, maxChars=100)
    assert small["truncated"] is True and len(small["items"]) < len(read(PYTEST_RUN)["items"])


def test_search_and_inspect_shapes() -> None:
    search, inspect = calls([
        ("agent_transcript_search_file", {"path": PYTEST_RUN, "query": "pytest", "contextItems": 0}),
        ("agent_transcript_inspect_file", {"path": PYTEST_RUN}),
    ])
    found = body(search)
    assert set(found) == {"ok", "path", "provider", "query", "matches", "truncated", "stats"}
    assert found["matches"] and all(set(m) == {"item"} for m in found["matches"])  # contextItems 0: no before/after
    info = body(inspect)
    assert set(info) == {"ok", "path", "provider", "firstTimestamp", "lastTimestamp", "stats"}
    assert isinstance(info["firstTimestamp"], int) and info["lastTimestamp"] >= info["firstTimestamp"]
    with_context = body(calls([("agent_transcript_search_file",
                                {"path": PYTEST_RUN, "query": "pytest", "contextItems": 1})])[0])
    assert any("before" in m for m in with_context["matches"])


def test_errors_are_non_error_results_with_the_origins_codes(tmp_path: Path) -> None:
    results = calls([
        ("agent_transcript_read_file", {"path": "", "projection": "final"}),
        ("agent_transcript_read_file", {"path": str(FIX / "nope.jsonl"), "projection": "final"}),
        ("agent_transcript_read_file", {"path": "/etc/passwd", "projection": "final"}),
        ("agent_transcript_inspect_file", {"path": str(FIX / "not_a_transcript.txt")}),
        ("agent_transcript_inspect_file", {"path": str(FIX)}),
    ])
    codes = []
    for result in results:
        payload = body(result)
        assert set(payload) == {"ok", "error", "message"} and payload["ok"] is False
        assert isinstance(payload["error"], str) and isinstance(payload["message"], str)
        codes.append(payload["error"])
    assert codes == ["path_required", "file_not_found", "file_not_readable", "provider_detection_failed",
                     "transcript_read_failed"]


def test_a_wire_agent_code_process_lists_tools_without_output_schemas() -> None:
    params = StdioServerParameters(command=sys.executable, env=server_env(), cwd=str(ROOT),
                                   args=["-m", "transcript_reader", "mcp", "--wire", "agent-code", "--allow-root", str(FIX)])

    async def main() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with Client(params) as client:
            tools = [wire(t) for t in (await client.list_tools()).tools]
            result = wire(await client.call_tool("agent_transcript_read_file", {"path": PYTEST_RUN, "projection": "tests"}))
            return tools, result

    tools, result = anyio.run(main)
    assert [t["name"] for t in tools][:3] == ["agent_transcript_read_file", "agent_transcript_search_file",
                                              "agent_transcript_inspect_file"]
    assert all("outputSchema" not in t for t in tools)
    assert [i["kind"] for i in body(result)["items"]] == ["test_run"]
