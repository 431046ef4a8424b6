"""The Claude Code recorder's safety and its mock of the Messages API, without running Claude Code.

- Fail closed: when no network namespace can be created, recording raises and the CLI (here: a stand-in
  that would leave a marker) is never started.
- The mock streams a scripted step as Messages API server-sent events, picks the step from the request
  (tool results + later prompts), answers side requests (no tools) without advancing, and keeps a
  sub-agent's conversation on its own steps."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from corpus_tools.record.claude_mock import ClaudeMockServer, choose_step, conversation, is_side_request
from corpus_tools.record.claude_recorder import ClaudeScenario, record
from corpus_tools.record.recorder import RecorderError
from tests.test_recorder import _exe


def test_record_fails_closed_without_a_namespace(tmp_path: Path) -> None:
    marker = tmp_path / "claude-ran"
    fake = _exe(tmp_path / "claude", f"#!/bin/sh\ntouch {marker}\n")
    refusing = _exe(tmp_path / "unshare", "#!/bin/sh\necho 'unshare: Operation not permitted' >&2\nexit 1\n")
    with pytest.raises(RecorderError, match="cannot create a network namespace"):
        record(ClaudeScenario.load("bash_ok"), tmp_path / "out", claude_bin=fake, unshare=str(refusing))
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_record_fails_closed_without_unshare(tmp_path: Path) -> None:
    fake = _exe(tmp_path / "claude", "#!/bin/sh\nexit 0\n")
    with pytest.raises(RecorderError, match="not installed"):
        record(ClaudeScenario.load("bash_ok"), tmp_path / "out", claude_bin=fake, unshare=str(tmp_path / "nope"))


def _user(*blocks: dict) -> dict:
    return {"role": "user", "content": list(blocks)}


TEXT = {"type": "text", "text": "fix it"}
REMINDER = {"type": "text", "text": "<system-reminder>\ncontext\n</system-reminder>"}
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}


def test_choose_step_counts_tool_results_and_later_prompts() -> None:
    assert choose_step({"messages": [_user(REMINDER, TEXT)]}, 4) == 0
    assert choose_step({"messages": [_user(REMINDER, TEXT), {"role": "assistant", "content": []},
                                     _user(RESULT)]}, 4) == 1
    assert choose_step({"messages": [_user(TEXT), _user(RESULT), _user(REMINDER, TEXT)]}, 4) == 2
    assert choose_step({"messages": [_user(TEXT)] + [_user(RESULT)] * 9}, 4) == 3  # past the end: the last


def test_side_requests_and_sub_agents() -> None:
    assert is_side_request({"messages": [_user(TEXT)]})
    assert not is_side_request({"messages": [_user(TEXT)], "tools": [{"name": "Bash"}]})
    body = {"messages": [_user(REMINDER, {"type": "text", "text": "SUBTASK-7: count"})]}
    assert conversation(body, {"SUBTASK-7": [[]]}) == "SUBTASK-7"
    assert conversation({"messages": [_user(TEXT)]}, {"SUBTASK-7": [[]]}) is None
    notified = {"messages": [_user(TEXT), _user(RESULT), _user(REMINDER, {"type": "text", "text":
                "<system-reminder>\n<task-notification>\n<status>completed</status>"})]}
    assert choose_step(notified, 4) == 2  # a background agent's end wakes the model: the next step


def test_mock_streams_the_scripted_step(tmp_path: Path) -> None:
    sc = ClaudeScenario.load("edit_write").with_project("/p")
    assert sc.steps[0][0]["input"]["file_path"] == "/p/calc.py"
    with ClaudeMockServer(sc.steps, log_dir=tmp_path / "log") as srv:
        body = {"model": "m", "stream": True, "tools": [{"name": "Edit"}],
                "messages": [_user(TEXT), {"role": "assistant", "content": []}, _user(RESULT)]}
        req = urllib.request.Request(f"http://127.0.0.1:{srv.port}/v1/messages?beta=true",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.headers["Content-Type"] == "text/event-stream"
            text = resp.read().decode()
        side = dict(body, tools=[], stream=True)
        req = urllib.request.Request(f"http://127.0.0.1:{srv.port}/v1/messages", data=json.dumps(side).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).read()
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events] == ["message_start", "content_block_start", "content_block_delta",
                                           "content_block_stop", "message_delta", "message_stop"]
    assert events[1]["content_block"]["name"] == "Edit"
    assert json.loads(events[2]["delta"]["partial_json"])["new_string"] == "    return a + b"
    assert events[4]["delta"]["stop_reason"] == "tool_use"
    assert srv.served == ["main:1", "side"]


def test_every_scenario_loads() -> None:
    for name in ("bash_ok", "bash_fail", "edit_write", "multi_turn", "task_agent", "task_background", "denied"):
        sc = ClaudeScenario.load(name)
        assert sc.steps and sc.runs
    with pytest.raises(RecorderError, match="no Claude scenario"):
        ClaudeScenario.load("no_such_scenario")
