"""Streamable HTTP as a local web page or a careless client would use it: sessions were never
freed (9,000 initializes grew the server from 69 MB to 430 MB) and any ``http://localhost:<port>`` Origin
was accepted, so any local page could drive the server. Real ``transcript-reader mcp --http`` processes,
driven by the SDK's client and by raw requests for the status codes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from tests.test_mcp_server import FIX, ok_payload, wire
from tests.test_mcp_transports import ROOT, server_env

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


def start(*flags: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "transcript_reader", "mcp", "--http", "--port", "0", "--allow-root", str(FIX), *flags],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=server_env(), cwd=str(ROOT))
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
            break
    else:
        pytest.fail("".join(lines))
    threading.Thread(target=lambda: [lines.append(x) for x in proc.stderr or ()], daemon=True).start()
    return proc, url, lines


@pytest.fixture
def short_lived() -> Iterator[str]:
    """A server whose sessions expire after 2 s idle, at most 3 at once."""
    proc, url, lines = start("--http-idle-timeout", "2", "--http-max-sessions", "3")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert "Traceback" not in "".join(lines)


def initialize(url: str, **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=INIT, headers={**HEADERS, **headers}, timeout=30)


def ping(url: str, session: str) -> httpx2.Response:
    return httpx2.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                       headers={**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"},
                       timeout=30)


def test_idle_sessions_expire_and_live_ones_are_capped(short_lived: str) -> None:
    url = short_lived
    sessions = []
    for _ in range(3):
        response = initialize(url)
        assert response.status_code == 200  # never refused: past its bound, the client's oldest goes
        sessions.append(response.headers["mcp-session-id"])
    assert [ping(url, s).status_code for s in sessions] == [404, 200, 200]  # 2 a client at this cap
    time.sleep(4)  # past the idle timeout (2 s), the sessions are closed and forgotten
    assert all(ping(url, s).status_code == 404 for s in sessions)
    again = initialize(url)
    assert again.status_code == 200 and again.headers["mcp-session-id"] not in sessions


def test_the_sdk_client_works_within_the_limits(short_lived: str) -> None:
    async def main() -> dict[str, Any]:
        async with Client(short_lived) as client:
            return wire(await client.call_tool("agent_transcript_inspect_file",
                                               {"path": str(FIX / "pytest_run.rollout.jsonl")}))

    assert ok_payload(anyio.run(main))["info"]["format"] == "rollout"


def test_origin_must_be_the_servers_own_host_and_port(short_lived: str) -> None:
    port = short_lived.split(":")[2].split("/")[0]
    other = str(int(port) + 1 if int(port) < 65535 else int(port) - 1)
    refused = [f"http://localhost:{other}", f"http://127.0.0.1:{other}", "http://localhost", "http://evil.example",
               f"https://127.0.0.1:{port}", "null"]
    for origin in refused:
        assert initialize(short_lived, Origin=origin).status_code == 403, origin
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        response = initialize(short_lived, Origin=origin)
        assert response.status_code == 200, origin
    assert initialize(short_lived, Host=f"localhost:{other}").status_code in (403, 421)
