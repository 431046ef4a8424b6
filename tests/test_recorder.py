"""The recorder's safety and its mock model, without ever running Codex.

- Fail closed: when no network namespace can be created (here: an ``unshare`` that refuses), recording
  raises and the Codex binary (here: a stand-in that would leave a marker) is never started.
- The mock Responses server picks the scripted step from the request (tool outputs + later prompts) and
  streams it as server-sent events.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from corpus_tools.record.mock_server import MockServer, choose_step
from corpus_tools.record.recorder import RecorderError, Scenario, check_unshare, network_interfaces, record


def _exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_record_fails_closed_without_a_namespace(tmp_path: Path) -> None:
    marker = tmp_path / "codex-ran"
    fake_codex = _exe(tmp_path / "codex", f"#!/bin/sh\ntouch {marker}\n")
    refusing = _exe(tmp_path / "unshare", "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    with pytest.raises(RecorderError, match="cannot create a network namespace"):
        record(Scenario.load("hello"), tmp_path / "out", version="0.0.0", codex_bin=fake_codex, unshare=str(refusing))
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_record_fails_closed_without_unshare(tmp_path: Path) -> None:
    with pytest.raises(RecorderError, match="not installed"):
        check_unshare(str(tmp_path / "no-such-unshare"))


def test_cli_exit_code_when_refused(tmp_path: Path) -> None:
    _exe(tmp_path / "unshare", "#!/bin/sh\nexit 1\n")  # first on PATH: a refusing unshare
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, "-m", "corpus_tools.record", "run", "--out", str(tmp_path / "o"), "hello"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3
    assert "refusing to record" in proc.stderr


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "corpus_tools.record", *args], capture_output=True, text=True,
                          timeout=60)


def test_check_says_why_when_there_is_nothing_to_check(tmp_path: Path) -> None:
    empty = _check("check", str(tmp_path))
    assert empty.returncode == 1 and "no recordings in" in empty.stderr and "exec.jsonl" in empty.stderr
    missing = _check("check", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "is not a folder of recordings" in missing.stderr
    unknown = _check("run", "--out", str(tmp_path / "o"), "no-such-scenario")
    assert unknown.returncode == 2 and "no scenario 'no-such-scenario'" in unknown.stderr
    assert not (tmp_path / "o").exists()  # nothing was recorded, no namespace was asked for


def test_interfaces_come_from_proc_not_sysfs(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.write_text("Inter-|   Receive\n face |bytes\n    lo: 0 0\n  eth0: 1 2\n")
    assert network_interfaces(str(dev)) == ["eth0", "lo"]


@pytest.mark.skipif(subprocess.run(["sh", "-c", "unshare -rn true"], capture_output=True).returncode != 0,
                    reason="this machine cannot create user+network namespaces")
def test_inside_a_namespace_only_loopback_is_seen() -> None:
    code = "from corpus_tools.record.recorder import network_interfaces as n; print(n())"
    proc = subprocess.run(["unshare", "-rn", sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "['lo']"


def test_choose_step_counts_tool_outputs_and_later_prompts() -> None:
    ctx = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>"}]}
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}
    out = {"type": "function_call_output", "call_id": "c", "output": "ok"}
    assert choose_step({"input": [ctx, prompt]}, 4) == 0
    assert choose_step({"input": [ctx, prompt, out]}, 4) == 1
    assert choose_step({"input": [ctx, prompt, out, prompt]}, 4) == 2
    assert choose_step({"input": [prompt, out, out, out, out, out]}, 4) == 3  # past the end: the last step


def test_mock_server_streams_the_scripted_step(tmp_path: Path) -> None:
    sc = Scenario.load("shell_and_patch")
    with MockServer(sc.steps, log_dir=tmp_path / "log") as srv:
        body = {"model": "gpt-5.5", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]},
            {"type": "function_call_output", "call_id": "call_1", "output": "calc.py"}]}
        req = urllib.request.Request(f"http://127.0.0.1:{srv.port}/v1/responses", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            text = resp.read().decode()
            assert resp.headers["Content-Type"] == "text/event-stream"
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events][0] == "response.created"
    assert events[-1]["type"] == "response.completed"
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [(d["type"], d["name"]) for d in done] == [("custom_tool_call", "apply_patch")]  # step 1
    assert srv.served == [1]
    assert sorted(p.name for p in (tmp_path / "log").iterdir()) == ["req-001-POST.json", "resp-001-step1.sse"]


def test_every_scenario_loads() -> None:
    for name in ("hello", "shell_and_patch", "code_mode_cell"):
        sc = Scenario.load(name)
        assert sc.steps and sc.prompt
    with pytest.raises(RecorderError, match="no scenario"):
        Scenario.load("no_such_scenario")
