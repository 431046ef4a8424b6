"""The read caps: the CLI's ``--max-line-mb`` / ``--max-inflated-mb`` set
``source.ReadCaps`` (bad values are a usage error, exit 2, through a real process), and the MCP server's
size cap applies to what a ``.zst`` decompresses to (a small file that inflates past it is ``too_large``,
through a real client session)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
import zstandard
from mcp import Client
from mcp.client._memory import InMemoryTransport

from transcript_reader import inspect
from transcript_reader.mcp import ServerConfig, create_server
from transcript_reader.reading.source import ReadCaps, inflates_past

MIB = 1 << 20


def _line(ts: int, type_: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": f"2026-01-01T00:00:{ts:02d}.000Z", "type": type_, "payload": payload}) + b"\n"


def rollout(pad: int = 0) -> bytes:
    """A small rollout; ``pad`` characters of assistant text make one line ``pad`` bytes long."""
    return b"".join([
        _line(0, "session_meta", {"id": "01a2a160-0000-7000-8000-0000000000cc", "cwd": "/w",
                                  "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli"}),
        _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
        _line(1, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        _line(2, "response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": "x" * pad}]}),
        _line(3, "event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": "done"}),
    ])


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transcript_reader", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_line_cap_flag_sets_the_reading_s_cap(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(rollout(pad=3 * MIB))
    capped = json.loads(cli("inspect", str(p), "--json", "--max-line-mb", "1").stdout)
    whole = json.loads(cli("inspect", str(p), "--json").stdout)
    assert capped["info"]["lines"]["unreadable"] == 1 and whole["info"]["lines"]["unreadable"] == 0
    items = json.loads(cli("read", str(p), "--json", "--max-line-mb", "1", "--include", "unreadable").stdout)["items"]
    [bad] = [i for i in items if i["kind"] == "unreadable"]
    assert bad["line"] == 4 and "byte" in bad["reason"]


def test_the_inflated_cap_flag_sets_the_reading_s_cap(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(rollout(pad=3 * MIB)))
    capped = json.loads(cli("inspect", str(p), "--json", "--max-inflated-mb", "1").stdout)["info"]["lines"]
    assert capped["unreadable"] == 1 and capped["decoded"] == 3  # the first lines, then the cap
    assert inspect(p, caps=ReadCaps(zstd_bytes=MIB)).lines == inspect(p, caps=ReadCaps(zstd_bytes=MIB)).lines


@pytest.mark.parametrize("command,flag,value", [
    ("read", "--max-line-mb", "0"), ("inspect", "--max-line-mb", "-3"), ("show", "--max-line-mb", "1.5"),
    ("read", "--max-inflated-mb", "abc"), ("show", "--max-inflated-mb", str(1 << 21)),
])
def test_a_bad_cap_is_a_usage_error(tmp_path: Path, command: str, flag: str, value: str) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(rollout())
    done = cli(command, str(p), flag, value, *(["--no-pager"] if command == "show" else []))
    assert done.returncode == 2 and flag in done.stderr and "Traceback" not in done.stderr


def test_the_caps_are_in_help_and_readme() -> None:
    text = cli("read", "--help").stdout
    assert "--max-line-mb" in text and "--max-inflated-mb" in text
    doc = (Path(__file__).resolve().parent.parent / "docs" / "reading.md").read_text(encoding="utf-8")
    assert "--max-line-mb" in doc and "--max-inflated-mb" in doc


def _bomb(path: Path, inflated: int) -> None:
    """A rollout whose last line is ``inflated`` bytes of assistant text: tiny once compressed."""
    path.write_bytes(zstandard.ZstdCompressor(level=19).compress(rollout(pad=inflated)))


def test_inflates_past_decompresses_only_up_to_the_cap(tmp_path: Path) -> None:
    p = tmp_path / "b.jsonl.zst"
    _bomb(p, 8 * MIB)
    assert p.stat().st_size < 64 * 1024
    assert inflates_past(p, 4 * MIB) and not inflates_past(p, 16 * MIB)
    plain = tmp_path / "r.jsonl"
    plain.write_bytes(rollout())
    assert not inflates_past(plain, 1)  # not zstd: its own size is what counts


def _call(config: ServerConfig, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with Client(InMemoryTransport(create_server(config))) as client:
            result = await client.call_tool(name, arguments)
            data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
            return data

    result: dict[str, Any] = anyio.run(main)
    return result


@pytest.mark.parametrize("tool,extra", [("agent_transcript_read_file", {"projection": "timeline"}),
                                        ("agent_transcript_inspect_file", {}),
                                        ("agent_transcript_search_file", {"query": "go"})])
def test_the_mcp_size_cap_counts_decompressed_bytes(tmp_path: Path, tool: str, extra: dict[str, Any]) -> None:
    bomb = tmp_path / "rollout-2026-01-01T00-00-00-01a2a160-0000-7000-8000-0000000000cc.jsonl.zst"
    _bomb(bomb, 3 * MIB)
    config = ServerConfig(allow_roots=(tmp_path,), max_file_bytes=2 * MIB)
    answer = _call(config, tool, {"path": str(bomb), **extra})
    assert answer["ok"] is False and answer["error"]["code"] == "too_large"
    assert "decompresses" in answer["error"]["message"] and "--max-file-mb" in answer["error"]["message"]
    roomy = _call(ServerConfig(allow_roots=(tmp_path,), max_file_bytes=8 * MIB), tool, {"path": str(bomb), **extra})
    assert roomy["ok"] is True
