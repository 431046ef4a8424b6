"""What ran: a direct ``apply_patch`` Codex answered ``apply_patch verification failed``
applied nothing, so it is ``executed: no`` and failed (the same failure inside a code cell already was);
a patch Codex applied stays ``yes``."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from transcript_reader import read

PATCH = "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"


def _line(ts: int, type_: str, payload: dict[str, object]) -> bytes:
    return orjson.dumps({"timestamp": f"2026-01-01T00:00:{ts:02d}.000Z", "type": type_, "payload": payload}) + b"\n"


def rollout(output: str) -> bytes:
    return b"".join([
        _line(0, "session_meta", {"id": "01a2a160-0000-7000-8000-0000000000ee", "cwd": "/w",
                                  "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli"}),
        _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
        _line(1, "response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": "fix add"}]}),
        _line(2, "response_item", {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch",
                                   "input": PATCH, "status": "completed"}),
        _line(3, "response_item", {"type": "custom_tool_call_output", "call_id": "p1", "output": output}),
        _line(4, "event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": "done"}),
    ])


@pytest.mark.parametrize("output,executed,success", [
    ("apply_patch verification failed: Failed to find expected lines in calc.py:\n    return a - b", "no", False),
    ('{"output":"apply_patch verification failed: Failed to find expected lines","metadata":{"exit_code":1}}',
     "no", False),
    ("Success. Updated the following files:\nM calc.py\n", "yes", True),
])
def test_a_direct_patch_that_failed_verification_did_not_run(tmp_path: Path, output: str, executed: str,
                                                              success: bool) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(rollout(output))
    patches = [i for i in read(p, projection="file_changes").items if i.kind.value == "patch"]
    assert [(i.executed.value, i.success) for i in patches] == [(executed, success)]  # type: ignore[attr-defined]
