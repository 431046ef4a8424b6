"""Pairing by call id when a transcript reuses an id: the turn decides first (calls of an earlier turn
were settled when it ended), then order (the oldest call still waiting takes the result), and the
reading says when that order was all it had (a notice, category ``ambiguous``). Two cells sharing an id
once got each other's output: a cell that threw showed the calls after its throw as run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transcript_reader import read


def _line(ts: int, typ: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": f"2026-01-01T00:00:{ts:02d}.000Z", "type": typ, "payload": payload})


def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


HEAD = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.171.0"}),
        _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"})]


def _record(cmd: str, n: int) -> str:
    return _line(5, "event_msg", {"type": "item_completed", "turn_id": "t1", "item": {
        "type": "CommandExecution", "id": f"exec-{n}", "command": ["/bin/bash", "-lc", cmd], "exit_code": 0,
        "aggregated_output": "", "status": "completed"}})


def _cell(call_id: str, script: str) -> str:
    return _line(2, "response_item", {"type": "custom_tool_call", "call_id": call_id, "name": "exec", "input": script})


def _cell_output(call_id: str, text: str) -> str:
    return _line(6, "response_item", {"type": "custom_tool_call_output", "call_id": call_id, "output": text})


def _shell(call_id: str, cmd: str) -> str:
    return _line(2, "response_item", {"type": "function_call", "name": "exec_command", "call_id": call_id,
                                      "arguments": json.dumps({"cmd": cmd})})


def _shell_output(call_id: str, code: int) -> str:
    return _line(3, "response_item", {"type": "function_call_output", "call_id": call_id,
                                      "output": f"Exit code: {code}\nWall time: 0.1 seconds\nOutput:\n"})


def _done(turn: str = "t1") -> str:
    return _line(9, "event_msg", {"type": "task_complete", "turn_id": turn, "last_agent_message": None})


def _notices(items: list[Any], category: str) -> list[int]:
    return [i.line for i in items if i.kind.value == "notice" and i.category == category]


def test_two_cells_sharing_an_id_each_get_their_own_output_in_order(tmp_path: Path) -> None:
    lines = HEAD + [
        _cell("X", 'await tools.exec_command({cmd: "make a"});\nthrow new Error("stop");\n'
                   'await tools.exec_command({cmd: "make after"});\n'),
        _cell("X", 'await tools.exec_command({cmd: "make b"});\n'),
        _record("make a", 1),
        _cell_output("X", "Script failed\nWall time 0.2 seconds\nOutput:\nScript error:\nstop"),
        _record("make b", 2),
        _cell_output("X", "Script completed\nWall time 0.2 seconds\nOutput:\n"),
        _done()]
    items = list(read(_write(tmp_path, lines)).items)
    cells = [(i.line, i.success) for i in items if i.kind.value == "tool_call"]
    assert cells == [(3, False), (4, True)]  # the first cell threw; the second completed
    shell = [(i.line, i.command, i.executed.value) for i in items if i.kind.value == "shell_command"]
    # the call after the throw never ran: never "yes" (it was when the cells swapped outputs)
    assert (3, "make after", "yes") not in shell
    assert (3, "make a", "yes") in shell and (4, "make b", "yes") in shell
    assert not [s for s in shell if s[0] not in (3, 4)]  # each record matched its own cell's entry
    assert _notices(items, "ambiguous") == [6]


def test_two_direct_calls_sharing_an_id_in_one_turn_pair_by_order(tmp_path: Path) -> None:
    lines = HEAD + [_shell("c", "make one"), _shell("c", "make two"), _shell_output("c", 1), _shell_output("c", 0),
                    _done()]
    items = list(read(_write(tmp_path, lines)).items)
    shell = [(i.command, i.exit_code, i.executed.value) for i in items if i.kind.value == "shell_command"]
    # before: the second output found no call and the second call was said not to have run ("no")
    assert shell == [("make one", 1, "yes"), ("make two", 0, "yes")]
    assert _notices(items, "ambiguous") == [5]


def test_an_id_reused_in_a_later_turn_pairs_within_its_turn_and_says_nothing(tmp_path: Path) -> None:
    lines = HEAD + [_shell("c", "make one"), _done(),
                    _line(10, "event_msg", {"type": "task_started", "turn_id": "t2"}),
                    _shell("c", "make two"), _shell_output("c", 0), _done("t2")]
    items = list(read(_write(tmp_path, lines)).items)
    shell = [(i.command, i.turn_id, i.exit_code, i.executed.value) for i in items if i.kind.value == "shell_command"]
    assert shell == [("make one", "t1", None, "no"), ("make two", "t2", 0, "yes")]
    assert _notices(items, "ambiguous") == []


def test_a_unique_id_is_never_said_ambiguous(tmp_path: Path) -> None:
    lines = HEAD + [_shell("a", "make one"), _shell("b", "make two"), _shell_output("b", 0), _shell_output("a", 2),
                    _done()]
    items = list(read(_write(tmp_path, lines)).items)
    shell = [(i.command, i.exit_code) for i in items if i.kind.value == "shell_command"]
    assert shell == [("make one", 2), ("make two", 0)] and _notices(items, "ambiguous") == []


# ---------------------------------------------------------------- answers only task_complete carries


def test_an_answer_only_task_complete_carries_is_the_turns_final_answer(tmp_path: Path) -> None:
    """Real files: the turn's answer was never written as an assistant message, only as
    ``task_complete.last_agent_message`` (it was dropped)."""
    lines = HEAD + [_line(2, "response_item", {"type": "message", "role": "assistant", "phase": "commentary",
                                               "content": [{"type": "output_text", "text": "looking"}]}),
                    _line(9, "event_msg", {"type": "task_complete", "turn_id": "t1",
                                           "last_agent_message": "All tests pass."})]
    items = list(read(_write(tmp_path, lines)).items)
    said = [(i.line, i.text, i.final) for i in items if i.kind.value == "assistant_message"]
    assert said == [(3, "looking", False), (4, "All tests pass.", True)]


def test_an_answer_written_as_a_message_is_not_repeated_from_task_complete(tmp_path: Path) -> None:
    lines = HEAD + [_line(2, "response_item", {"type": "message", "role": "assistant",
                                               "content": [{"type": "output_text", "text": "Done."}]}),
                    _line(9, "event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": "Done."})]
    items = list(read(_write(tmp_path, lines)).items)
    assert [(i.text, i.final) for i in items if i.kind.value == "assistant_message"] == [("Done.", True)]
