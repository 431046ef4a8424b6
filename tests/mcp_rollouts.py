"""Rollouts written for the MCP budget tests, in 0.171's shape (the records ``fixtures/mcp/pytest_run``
holds, reduced to what the reader needs): a session line, a prompt, shell commands with their outputs,
patches, and a final answer. Sizes are what the tests need (outputs of thousands of characters, a patch of
hundreds or tens of thousands of files), so they are generated rather than stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "01a22d9c-2643-7350-8a76-f18f2f46ae21"
TURN = "01a22d9c-269b-71a1-bc61-2abd47262127"


class Rollout:
    def __init__(self, path: Path, cwd: str = "/home/user/project") -> None:
        self.path = path
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []
        self.n = 0
        self.record("session_meta", {"id": SESSION, "session_id": SESSION, "timestamp": self.ts(), "cwd": cwd,
                                     "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec",
                                     "model_provider": "mock"})
        self.event({"type": "task_started", "turn_id": TURN})

    def ts(self) -> str:
        self.n += 1
        return f"2026-11-30T17:{self.n // 3600 % 60:02d}:{self.n // 60 % 60:02d}.{self.n % 60:03d}Z"

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": self.ts(), "type": kind, "payload": payload})

    def event(self, payload: dict[str, Any]) -> None:
        self.record("event_msg", payload)

    def prompt(self, text: str) -> Rollout:
        self.record("response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": text}]})
        return self

    def command(self, cmd: str, output: str, exit_code: int = 0) -> Rollout:
        call = f"call_{len(self.lines)}"
        self.record("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                      "arguments": json.dumps({"cmd": cmd})})
        self.record("response_item", {"type": "function_call_output", "call_id": call, "output":
                                      f"Chunk ID: 0\nWall time: 0.1 seconds\nProcess exited with code {exit_code}\n"
                                      f"Original token count: 1\nOutput:\n{output}"})
        return self

    def patch(self, files: list[str], body: str = "+x\n") -> Rollout:
        call = f"call_{len(self.lines)}"
        text = "*** Begin Patch\n" + "".join(f"*** Add File: {f}\n{body}" for f in files) + "*** End Patch\n"
        self.record("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": call,
                                      "input": text, "status": "completed"})
        self.record("response_item", {"type": "custom_tool_call_output", "call_id": call,
                                      "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n"})
        return self

    def answer(self, text: str) -> Rollout:
        self.record("response_item", {"type": "message", "role": "assistant", "phase": "final_answer",
                                      "content": [{"type": "output_text", "text": text}]})
        self.event({"type": "task_complete", "turn_id": TURN, "last_agent_message": text})
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as fh:
            for line in self.lines:
                fh.write(json.dumps(line) + "\n")
        return self.path
