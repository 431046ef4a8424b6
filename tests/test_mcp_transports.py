"""The MCP server as users run it: ``transcript-reader mcp`` in a real subprocess, over stdio and over
streamable HTTP on loopback, driven by the SDK's own clients."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters

from tests.test_mcp_server import CODEX_HOME, FIX, SNAPSHOT, error_of, ok_payload, wire
from transcript_reader.mcp.worker import close_and_wait

ROOT = Path(__file__).resolve().parents[1]


def server_env() -> dict[str, str]:
    env = {**os.environ, "CODEX_HOME": str(CODEX_HOME), "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    return env


def exercise(client_target: Any) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """List the tools, read a handoff, list sessions and make one refused call, in one session."""

    async def main() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with Client(client_target) as client:
            tools = [wire(t) for t in (await client.list_tools()).tools]
            handoff = wire(await client.call_tool(
                "agent_transcript_read_file",
                {"path": str(FIX / "pytest_run.rollout.jsonl"), "projection": "handoff"},
            ))
            sessions = wire(await client.call_tool("agent_transcript_list_sessions", {"limit": 3}))
            refused = wire(await client.call_tool(
                "agent_transcript_read_file", {"path": "/etc/passwd", "projection": "final"}
            ))
            return tools, handoff, sessions, refused

    result: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, Any]] = anyio.run(main)
    return result


def check(tools: list[dict[str, Any]], handoff: dict[str, Any], sessions: dict[str, Any],
          refused: dict[str, Any]) -> None:
    assert tools == json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    items = ok_payload(handoff)["items"]
    assert {i["kind"] for i in items} == {"user_message", "assistant_message", "shell_command", "patch", "test_run"}
    rows = ok_payload(sessions)["sessions"]
    assert rows and all(Path(r["path"]).resolve().is_relative_to(CODEX_HOME.resolve()) for r in rows)
    assert error_of(refused)[0] == "outside_allowed_roots"


def test_stdio_subprocess() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "transcript_reader", "mcp", "--allow-root", str(FIX)],
        env=server_env(),
        cwd=str(ROOT),
    )
    check(*exercise(params))


@pytest.fixture
def http_server() -> Iterator[str]:
    """``transcript-reader mcp --http --port 0`` in a subprocess; yields the URL it prints once listening."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "transcript_reader", "mcp", "--http", "--port", "0", "--allow-root", str(FIX)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=server_env(), cwd=str(ROOT),
    )
    assert proc.stderr is not None
    lines: list[str] = []
    url = None
    for line in proc.stderr:  # ends when the process exits: a server that fails to start fails the test
        lines.append(line)
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
            break
    assert url is not None, "".join(lines)
    drain = threading.Thread(target=lambda: [lines.append(x) for x in proc.stderr or ()], daemon=True)
    drain.start()
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert "Traceback" not in "".join(lines)


def test_http_on_loopback(http_server: str) -> None:
    assert http_server.startswith("http://127.0.0.1:") and http_server.endswith("/mcp")
    check(*exercise(http_server))


def test_http_refuses_a_foreign_host_header(http_server: str) -> None:
    """Bound to loopback, and the SDK's DNS-rebinding guard rejects a page that points its own name at
    127.0.0.1 (Host and Origin are checked)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Host": "attacker.example", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    response = httpx2.post(http_server, json=body, headers=headers, timeout=30)
    assert response.status_code in (403, 421)


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transcript_reader", "mcp", *args], capture_output=True,
                          text=True, env=server_env(), cwd=str(ROOT), timeout=timeout, stdin=subprocess.DEVNULL)


def test_cli_help_shows_how_to_register() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    assert "[mcp_servers.transcripts]" in done.stdout and "--allow-root" in done.stdout


def test_cli_rejects_a_bad_port_and_a_taken_one() -> None:
    bad = run_cli("--http", "--port", "70000")
    assert bad.returncode == 2 and "70000" in bad.stderr
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = run_cli("--http", "--port", str(taken.getsockname()[1]))
    assert busy.returncode == 1 and "cannot serve" in busy.stderr and "Traceback" not in busy.stderr


def test_list_sessions_does_not_hang_on_a_fifo_in_codex_home(tmp_path: Path) -> None:
    """A FIFO named like a rollout under $CODEX_HOME must be skipped, not opened (opening it blocks)."""
    day = tmp_path / "home" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    shutil.copy(FIX / "multi_step.rollout.jsonl",
                day / "rollout-2026-11-30T17-58-57-01a22d9c-2643-7350-8a76-f18f2f46ae21.jsonl")
    os.mkfifo(day / "rollout-2026-11-30T18-00-00-01a22d9c-0000-7000-8000-000000000000.jsonl")
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from transcript_reader.mcp import ServerConfig, call_tool\n"
        "a = call_tool('agent_transcript_list_sessions', {}, ServerConfig(codex_home=Path(sys.argv[1])))\n"
        "print(json.dumps([r['path'] for r in a.payload['sessions']]))\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "home")], capture_output=True, text=True,
                              env=server_env(), cwd=str(ROOT), timeout=30, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail("agent_transcript_list_sessions blocked on a FIFO under $CODEX_HOME (discovery opened it)")
    assert done.returncode == 0, done.stderr
    assert [Path(p).name for p in json.loads(done.stdout)] == [
        "rollout-2026-11-30T17-58-57-01a22d9c-2643-7350-8a76-f18f2f46ae21.jsonl"]


def test_stdio_speaks_the_handshake_codex_uses() -> None:
    """Raw JSON-RPC lines as Codex's client sends them (the initialize handshake with a 2025 protocol
    version, then tools/list and tools/call): the 2.x SDK server still answers the handshake era."""
    import queue

    proc = subprocess.Popen(
        [sys.executable, "-m", "transcript_reader", "mcp", "--allow-root", str(FIX)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=server_env(), cwd=str(ROOT),
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout or ()], daemon=True).start()

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        while True:
            try:
                message: dict[str, Any] = json.loads(lines.get(timeout=120))  # a hang guard, not a timing check
            except queue.Empty:
                pytest.fail(f"no answer to request {request_id}")
            if message.get("id") == request_id:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"}}})
        init = answer(0)["result"]
        assert init["protocolVersion"] == "2025-06-18" and init["serverInfo"]["name"] == "transcript-reader"
        assert "tools" in init["capabilities"]
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        assert answer(1)["result"]["tools"] == json.loads(SNAPSHOT.read_text(encoding="utf-8"))
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "agent_transcript_read_file",
            "arguments": {"path": str(FIX / "pytest_run.rollout.jsonl"), "projection": "tests"}}})
        result = answer(2)["result"]
        assert result["isError"] is False
        assert [i["kind"] for i in json.loads(result["content"][0]["text"])["items"]] == ["test_run"]
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "agent_transcript_inspect_file", "arguments": {"path": "/dev/zero"}}})
        refused = answer(3)["result"]
        assert refused["isError"] is True
        assert json.loads(refused["content"][0]["text"])["error"]["code"] == "outside_allowed_roots"
    finally:
        close_and_wait(proc)
    assert proc.returncode == 0
