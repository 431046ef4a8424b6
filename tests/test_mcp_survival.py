"""No call stops the MCP server: a path holding a lone surrogate is answered (its error escaped), never a
dead worker (four such stdio calls used to kill the four workers, then every call answered `timeout`); a
worker outlives whatever a call raises; over HTTP, a client that opens session after session never
locks the others out (32 `initialize` requests used to refuse every new client for 300 s)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters

from tests.test_mcp_http import HEADERS, INIT, initialize, ping, start
from tests.test_mcp_server import FIX, error_of, ok_payload, wire
from tests.test_mcp_transports import ROOT, server_env
from transcript_reader.mcp import stdio
from transcript_reader.mcp.policy import ServerConfig

GOOD = FIX / "pytest_run.rollout.jsonl"


def _call(request_id: int, path_json: str) -> bytes:
    """A tools/call written by hand: ``path_json`` is JSON text, so it can hold an escaped lone surrogate."""
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"agent_transcript_inspect_file",'
            b'"arguments":{"path":%s}}}\n' % (request_id, path_json.encode("ascii")))


def test_lone_surrogates_in_paths_are_answered_and_the_server_keeps_serving() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "transcript_reader", "mcp", "--allow-root", str(FIX)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=server_env(), cwd=str(ROOT))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n")
        proc.stdin.flush()
        assert b'"id":1' in proc.stdout.readline()
        n = 2 * stdio.WORKERS  # more than there are workers: each would have cost one
        for i in range(n):
            proc.stdin.write(_call(10 + i, json.dumps(f"{FIX}/x\udc80{i}.jsonl")))
        proc.stdin.write(_call(99, json.dumps(str(GOOD))))
        proc.stdin.flush()
        answers = {}
        for _ in range(n + 1):
            line = proc.stdout.readline()
            line.decode("utf-8")  # valid UTF-8: the surrogate went out as an escape
            message = json.loads(line)
            answers[message["id"]] = message["result"]
        assert ok_payload(answers.pop(99))["info"]["format"] == "rollout"
        for i, result in sorted(answers.items()):
            code, message = error_of(result)
            assert code == "file_not_found" and f"x\udc80{i - 10}.jsonl" in message, (code, message)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert b"Traceback" not in proc.stderr.read()


def test_the_sdk_client_over_stdio_after_hostile_calls() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "transcript_reader", "mcp", "--allow-root",
                                                                 str(FIX)], env=server_env(), cwd=str(ROOT))

    async def main() -> list[dict[str, Any]]:
        async with Client(params) as client:
            out = []
            for path in ("/etc/\u202epasswd", str(FIX / "x\x1b]0;t\x07.jsonl"), str(GOOD)):
                out.append(wire(await client.call_tool("agent_transcript_inspect_file", {"path": path})))
            return out

    refused, missing, good = anyio.run(main)
    assert error_of(refused)[0] == "outside_allowed_roots" and error_of(missing)[0] == "file_not_found"
    assert ok_payload(good)["info"]["format"] == "rollout"


def test_a_worker_outlives_any_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call whose run raises (a bug, or a failure while its answer is made) is answered `internal_error`;
    the worker goes on, so more such calls than there are workers leave the server serving."""
    from transcript_reader.mcp import dispatch

    real = dispatch.run_call

    def flaky(name: str, arguments: Any, config: Any, state: Any) -> Any:
        if (arguments or {}).get("path") == "boom":
            raise RuntimeError("a bug")
        return real(name, arguments, config, state)

    monkeypatch.setattr(dispatch, "run_call", flaky)
    lines = [json.dumps(INIT).encode() + b"\n"]
    lines += [_call(10 + i, '"boom"') for i in range(2 * stdio.WORKERS)]
    lines.append(_call(99, json.dumps(str(GOOD))))
    out = io.BytesIO()
    server = stdio.StdioServer(ServerConfig(allow_roots=(FIX,)), io.BytesIO(b"".join(lines)), out)
    server.serve()
    deadline = time.monotonic() + 60
    while out.getvalue().count(b"\n") < len(lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    answers = {m["id"]: m["result"] for m in map(json.loads, out.getvalue().splitlines())}
    assert ok_payload(answers.pop(99))["info"]["format"] == "rollout"
    answers.pop(1)
    assert len(answers) == 2 * stdio.WORKERS
    assert {error_of(r)[0] for r in answers.values()} == {"internal_error"}


# ---- HTTP: bounded, never locked ---------------------------------------------------------------------------


def test_a_flood_of_sessions_never_locks_a_new_client_out() -> None:
    proc, url, lines = start("--http-max-sessions", "8")  # 2 per client
    try:
        earlier = initialize(url, **{"User-Agent": "editor"}).headers["mcp-session-id"]
        flood = []
        for _ in range(32):
            response = initialize(url, **{"User-Agent": "flood"})
            assert response.status_code == 200  # nobody is refused, the flooder included
            flood.append(response.headers["mcp-session-id"])
        # the flooder's own oldest sessions made room: it holds 2, the others are closed
        assert [ping(url, s).status_code for s in flood[-2:]] == [200, 200]
        assert all(ping(url, s).status_code == 404 for s in flood[:-2])
        assert ping(url, earlier).status_code == 200  # another client's session was left alone
        newcomer = initialize(url, **{"User-Agent": "codex"})
        assert newcomer.status_code == 200 and ping(url, newcomer.headers["mcp-session-id"]).status_code == 200
        # past the overall cap, the least recently used session goes, not the newcomer
        others = [initialize(url, **{"User-Agent": f"c{i}"}).headers["mcp-session-id"] for i in range(6)]
        assert all(ping(url, s).status_code == 200 for s in others[-3:])
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert "Traceback" not in "".join(lines)


def test_the_sdk_client_works_after_a_flood() -> None:
    proc, url, lines = start("--http-max-sessions", "4")
    try:
        for _ in range(32):
            httpx2.post(url, json=INIT, headers=HEADERS, timeout=30)

        async def main() -> dict[str, Any]:
            async with Client(url) as client:
                return wire(await client.call_tool("agent_transcript_inspect_file", {"path": str(GOOD)}))

        assert ok_payload(anyio.run(main))["info"]["format"] == "rollout"
    finally:
        proc.terminate()
        proc.wait(timeout=60)



# ---- exec_script_analyze: in process within its budget, a child only past it -------------------------------


def test_an_analysis_within_its_budget_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real cell is answered in process (it takes a fraction of a millisecond; a child cost 0.34-2 s)."""
    from tests.test_mcp_server import call, config_for
    from transcript_reader.mcp import worker

    def no_child() -> Any:
        raise AssertionError("a child process was started for a script analysed within its slice")

    monkeypatch.setattr(worker, "_start", no_child)
    script = 'const r = await tools.exec_command({cmd: "pytest -q", workdir: "/repo"}); text(r.output);'
    started = time.perf_counter()
    for _ in range(20):
        payload = ok_payload(call(config_for(FIX), "exec_script_analyze", {"script": script}))
    assert payload["entries"][0]["kind"] == "shell_command" and payload["entries"][0]["command"] == "pytest -q"
    assert time.perf_counter() - started < 20  # twenty calls, no interpreter started for any


def test_a_script_over_its_slice_goes_to_a_killable_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """An analysis that runs past the in-process slice (here made slow in this process only: the analyzer
    itself is linear) goes to a child with the rest of the budget (killed at its end: the call is then
    `timeout`), and the next call is answered in process once the abandoned thread has ended."""
    import exec_grammar
    from tests.test_mcp_server import call, config_for
    from transcript_reader.mcp import worker

    real_analyze = exec_grammar.analyze

    def slow_analyze(*args: Any, **kwargs: Any) -> Any:
        time.sleep(2.0)  # far over a 0.25 s slice
        return real_analyze(*args, **kwargs)

    monkeypatch.setattr(exec_grammar, "analyze", slow_analyze)

    children = []
    start = worker._start

    def counted() -> Any:
        children.append(1)
        return start()

    monkeypatch.setattr(worker, "_start", counted)
    hostile = "{a:" * 2400 + "1" + "}" * 2400
    config = config_for(FIX, call_timeout_s=1.0)
    started = time.perf_counter()
    result = call(config, "exec_script_analyze", {"script": hostile})
    assert children, "the script over its slice was not handed to a child"
    assert time.perf_counter() - started < 1.0 + worker.START_S + 5
    if result["isError"]:
        assert error_of(result)[0] == "timeout"
    deadline = time.monotonic() + 60
    while not worker._in_process.acquire(timeout=0.1):  # the abandoned thread ends by itself
        assert time.monotonic() < deadline
    worker._in_process.release()
    children.clear()
    monkeypatch.setattr(exec_grammar, "analyze", real_analyze)
    ok = call(config, "exec_script_analyze", {"script": 'tools.exec_command({cmd: "ls"})'})
    assert ok_payload(ok)["entries"][0]["command"] == "ls" and not children
