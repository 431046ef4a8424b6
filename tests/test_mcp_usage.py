"""The usage tool through a real MCP client session: what sessions (a project, one session with its
sub-agents) cost, checked against the raw-line count of each file, the same with and without the session
store, and only ever about files inside the server's roots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client._memory import InMemoryTransport

from tests.test_usage_cli import FORK, NOUSAGE, PARENT, RESUMED, SUB, raw_tokens, tokens_of, write_home
from transcript_reader.mcp import ServerConfig, create_server
from transcript_reader.sessions.store import open_store, refresh

TOOL = "agent_transcript_usage"


def call(config: ServerConfig, arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with Client(InMemoryTransport(create_server(config))) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert TOOL in names
            result = await client.call_tool(TOOL, arguments)
            data: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return data

    result: dict[str, Any] = anyio.run(main)
    return result


def payload_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError") is False, result
    (block,) = result["content"]
    payload: dict[str, Any] = json.loads(block["text"])
    assert payload == result["structuredContent"] and payload["ok"] is True
    return payload


def test_what_each_session_cost_from_the_files_and_from_the_store(tmp_path: Path) -> None:
    home, proj = write_home(tmp_path)
    plain = ServerConfig(codex_home=home, allow_roots=(home,))
    by_session = payload_of(call(plain, {"by": "session"}))
    rows = {r["id"]: r for r in by_session["rows"]}
    assert set(rows) == {PARENT, SUB, RESUMED, FORK, NOUSAGE}
    for row in rows.values():
        assert tokens_of(row) == raw_tokens(Path(row["path"]))
    assert rows[NOUSAGE]["tokens"] is None and rows[NOUSAGE]["cost"]["usd"] is None
    total = by_session["total"]
    assert total["tokens"]["total"] == 160 + 40 + 620 + 30 and total["unknown_tokens"] == 1
    assert total["cost"]["unknown"] >= 1  # the session with no usage has no cost either, never $0
    # the store gives the same answer (the server reads it, never writes it: ls or usage built it)
    cache = tmp_path / "cache"
    refresh(open_store(home, cache_dir=cache))
    stored = ServerConfig(codex_home=home, allow_roots=(home,), store_dir=cache)
    assert payload_of(call(stored, {"by": "session"})) == by_session
    assert payload_of(call(stored, {})) == payload_of(call(plain, {}))  # by model, the default


def test_one_session_with_its_subagents_and_one_project(tmp_path: Path) -> None:
    home, proj = write_home(tmp_path)
    config = ServerConfig(codex_home=home, allow_roots=(home,))
    tree = payload_of(call(config, {"path": PARENT}))
    assert [(r["id"], r["depth"]) for r in tree["rows"]] == [(PARENT, 0), (SUB, 1), (FORK, 1)]
    assert tree["rows"][0]["with_subagents"]["tokens"]["total"] == 160 + 40
    by_file = payload_of(call(config, {"path": tree["rows"][0]["path"]}))
    assert by_file["rows"] == tree["rows"]
    project = payload_of(call(config, {"cwd": str(proj), "by": "day"}))
    assert [r["key"] for r in project["rows"]] == ["2026-03-01", "2026-03-02"]
    assert payload_of(call(config, {"cwd": str(tmp_path / "elsewhere")}))["rows"] == []
    late = payload_of(call(config, {"since": "2026-03-02", "by": "day"}))
    assert late["total"]["tokens"]["total"] == 120


def test_only_sessions_inside_the_roots_are_counted(tmp_path: Path) -> None:
    home, _proj = write_home(tmp_path)
    outside = tmp_path / "other_home"
    other, _ = write_home(outside)
    config = ServerConfig(codex_home=home, allow_roots=(home,))
    one = payload_of(call(config, {"by": "session"}))
    assert all(str(home) in r["path"] for r in one["rows"])
    refused = call(config, {"path": str(next(other.rglob("rollout-*.jsonl")))})
    assert refused.get("isError") is True
    assert json.loads(refused["content"][0]["text"])["error"]["code"] == "outside_allowed_roots"
