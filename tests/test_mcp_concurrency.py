"""No call stalls the others, and every call ends within its budget (a 120 KB analyze once held every
other call for 37 s). Through the SDK client, in memory and over a real stdio process. The assertions are
on the order of answers and on typed codes, never on a wall-clock figure."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
from mcp import Client
from mcp.client._memory import InMemoryTransport

from tests.test_mcp_server import FIX, error_of, ok_payload, wire
from tests.test_mcp_transports import ROOT, server_env
from transcript_reader.mcp import ServerConfig, create_server

#: ~200 KB of calls: esprima (pure Python) takes seconds on it, the other readers well under one.
SLOW_SCRIPT = "tools.exec_command({cmd:`a${b}`});" * 5_500


def test_a_slow_analyze_does_not_hold_a_fast_inspect() -> None:
    config = ServerConfig(allow_roots=(FIX,), call_timeout_s=120)
    finished: list[str] = []
    results: dict[str, dict[str, Any]] = {}

    async def main() -> None:
        async with Client(InMemoryTransport(create_server(config))) as client:
            async def slow() -> None:
                results["analyze"] = wire(await client.call_tool(
                    "exec_script_analyze", {"script": SLOW_SCRIPT, "parser": "esprima", "maxChars": 1_000}))
                finished.append("analyze")

            async def fast() -> None:
                await anyio.sleep(0.3)  # the analyze is under way
                for _ in range(3):
                    results["inspect"] = wire(await client.call_tool(
                        "agent_transcript_inspect_file", {"path": str(FIX / "pytest_run.rollout.jsonl")}))
                finished.append("inspect")

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                tg.start_soon(fast)

    anyio.run(main)
    assert ok_payload(results["inspect"])["info"]["turns"] == 1
    assert ok_payload(results["analyze"])["parser"] == "esprima"
    assert finished == ["inspect", "analyze"], "three inspects should answer while one analyze runs"


def test_an_analyze_over_its_budget_is_a_timeout_and_the_server_goes_on() -> None:
    config = ServerConfig(allow_roots=(FIX,), call_timeout_s=0.5)
    script = "tools.exec_command({cmd:`a${b}`});" * 5_800  # ~197 KB: seconds of esprima, far over 0.5 s

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(InMemoryTransport(create_server(config))) as client:
            late = wire(await client.call_tool("exec_script_analyze", {"script": script, "parser": "esprima"}))
            after = wire(await client.call_tool("agent_transcript_inspect_file",
                                                {"path": str(FIX / "pytest_run.rollout.jsonl")}))
            return late, after

    late, after = anyio.run(main)
    code, message = error_of(late)
    assert code == "timeout" and "budget" in message
    assert ok_payload(after)["info"]["turns"] == 1


def test_a_read_over_its_budget_is_a_timeout(tmp_path: Any) -> None:
    """The reading stops itself at the deadline (every read of the descriptor checks it)."""
    big = tmp_path / "big.jsonl"
    lines = (FIX / "multi_step.rollout.jsonl").read_bytes().splitlines(keepends=True)
    with open(big, "wb") as fh:
        fh.write(lines[0])
        for _ in range(3_000):
            fh.writelines(lines[1:])
    config = ServerConfig(allow_roots=(tmp_path,), call_timeout_s=0.2)

    async def main() -> dict[str, Any]:
        async with Client(InMemoryTransport(create_server(config))) as client:
            return wire(await client.call_tool("agent_transcript_read_file", {"path": str(big)}))

    code, message = error_of(anyio.run(main))
    assert code == "timeout" and str(big) in message


def test_stdio_answers_calls_concurrently_and_pings_at_once() -> None:
    """Over a real stdio process: a ping and an inspect sent after a slow analyze come back before it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "transcript_reader", "mcp", "--allow-root", str(FIX), "--call-timeout", "120"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=server_env(), cwd=str(ROOT))
    assert proc.stdin is not None and proc.stdout is not None
    order: list[Any] = []

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            order.append(json.loads(line).get("id"))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {
            "name": "exec_script_analyze", "arguments": {"script": SLOW_SCRIPT, "parser": "esprima", "maxChars": 500}}})
        time.sleep(0.2)
        send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        send({"jsonrpc": "2.0", "id": "fast", "method": "tools/call", "params": {
            "name": "agent_transcript_inspect_file", "arguments": {"path": str(FIX / "pytest_run.rollout.jsonl")}}})
        deadline = time.monotonic() + 120  # a hang guard, not a timing check
        while len(order) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert order[0] == 0 and set(order[1:]) == {"slow", "ping", "fast"}, order
    assert order.index("ping") < order.index("slow") and order.index("fast") < order.index("slow"), order
