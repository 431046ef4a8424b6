"""What ran, on small rollouts in the shapes Codex writes:

- every wording Codex uses to refuse a call (``providers/codex/refusals.py``, each with its codex-rs
  source) makes a direct call, and a whole ``exec`` cell, ``executed: no``; an interrupted call
  ("aborted by user") is a failure whose ``executed`` only a record settles;
- a shell call whose arguments do not decode is still a ``shell_command`` (command unknown, said so) with
  the exit code its output reports;
- a ``wait`` (or any call) answered with a timeout is a failure, and the cell's unrecorded calls are not
  ``yes``;
- an output with no call that reports a failure is a visible ``notice``;
- a command known only from a record written after its cell's output stays inside that cell.
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import re._parser as sre_parse
from pathlib import Path
from typing import Any

import orjson
import pytest

from transcript_reader import read
from transcript_reader.model import Executed
from transcript_reader.providers.codex import refusals
from transcript_reader.providers.records import UNKNOWN_COMMAND

META = {"id": "01a2a160-0000-7000-8000-0000000000ef", "cwd": "/w", "originator": "codex_cli_rs",
        "cli_version": "0.171.0", "source": "cli"}


def _line(ts: int, type_: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": f"2026-01-01T00:{ts // 60:02d}:{ts % 60:02d}.000Z", "type": type_,
                         "payload": payload}) + b"\n"


def rollout(tmp_path: Path, *lines: tuple[str, dict[str, Any]], meta: dict[str, Any] | None = None) -> Path:
    """A one-turn rollout: ``session_meta``, ``task_started``, the prompt, ``lines``, ``task_complete``."""
    out = [_line(0, "session_meta", meta or META), _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
           _line(1, "response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": "go"}]})]
    out += [_line(2 + i, t, p) for i, (t, p) in enumerate(lines)]
    out.append(_line(2 + len(lines), "event_msg", {"type": "task_complete", "turn_id": "t1",
                                                   "last_agent_message": "done"}))
    path = tmp_path / "rollout-2026-01-01T00-00-00-01a2a160-0000-7000-8000-0000000000ef.jsonl"
    path.write_bytes(b"".join(out))
    return path


def call(cid: str, name: str, arguments: Any) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "function_call", "name": name, "call_id": cid,
                             "arguments": arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()}


def output(cid: str, text: Any, kind: str = "function_call_output") -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": kind, "call_id": cid, "output": text}


def cell(cid: str, script: str) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "custom_tool_call", "call_id": cid, "name": "exec", "input": script,
                             "status": "completed"}


def items(path: Path, projection: str = "timeline", include: tuple[str, ...] = ()) -> list[Any]:
    return list(read(path, projection=projection, include=list(include)).items)


def of_kind(found: list[Any], kind: str) -> list[Any]:
    return [i for i in found if i.kind.value == kind]


#: One instance of each wording of the table, as Codex writes it (the test below checks that every
#: entry of ``refusals.WORDINGS`` has one, so a new wording comes with its example).
SAMPLES: dict[str, str] = {
    r"exec command rejected by user": "exec command rejected by user",
    r"patch rejected by user": "patch rejected by user",
    r"unified exec command rejected by user": "unified exec command rejected by user",
    r"exec command rejected: ": "exec command rejected: dangerous command",
    r"patch rejected: ": "patch rejected: writing outside of the project",
    r"rejected by user\b": "rejected by user",
    r"`[^\n]*` rejected: ": "`rm -rf /` rejected: blocked by policy",
    r"approval required by policy(?: rule)?, but AskForApproval":
        "approval required by policy, but AskForApproval is set to Never",
    r"This action was rejected due to unacceptable risk\.":
        "This action was rejected due to unacceptable risk.\nReason: deletes the home directory\n"
        "The agent must not attempt to achieve the same outcome via workaround",
    r"The automatic permission approval review did not finish before its deadline\.":
        "The automatic permission approval review did not finish before its deadline. Do not assume the "
        "action is unsafe based on the timeout alone.",
    r"unsupported call\b": "unsupported call: shell",
    r"unsupported custom tool call: ": "unsupported custom tool call: exec",
    r"exec expects raw JavaScript source text": "exec expects raw JavaScript source text",
    r"exec cell \S+ already exists": "exec cell 3 already exists",
    r"command rejected|user rejected|declined": "command rejected by the harness",
    r"Wall time: [\d.]+ seconds\naborted by user": "Wall time: 5.0 seconds\naborted by user",
    r"aborted by user": "aborted by user after 5.0s",
    r"exec runtime ended unexpectedly": "exec runtime ended unexpectedly",
    r"(?:js|js_repl) execution timed out; kernel reset": "js execution timed out; kernel reset, rerun your request",
    r"tool call (?:error: tool call )?failed for `[^`\n]*`\s*Caused by:\s*timed out awaiting":
        "tool call error: tool call failed for `cua_repl/js`\nCaused by:\n    timed out awaiting tools/call after 120s",
}
REFUSED = [SAMPLES[p] for p, v in refusals.WORDINGS if v == refusals.REFUSED]


def test_every_wording_of_the_table_has_an_example_and_reads_as_its_verdict() -> None:
    assert [p for p, _ in refusals.WORDINGS] == list(SAMPLES)
    for pattern, verdict in refusals.WORDINGS:
        assert refusals.verdict(SAMPLES[pattern]) == verdict, pattern
    # a command's own output comes after Codex's header: words it prints are never a verdict
    assert refusals.verdict("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nexec command rejected by user") is None


def _first_literals(tokens: Any) -> set[int]:
    """The code points a parsed pattern can open with (its first literal, through groups and branches)."""
    op, av = tokens[0]
    if op is sre_constants.LITERAL:
        return {av}
    if op is sre_constants.SUBPATTERN:
        return _first_literals(av[-1])
    if op is sre_constants.BRANCH:
        return set().union(*(_first_literals(alt) for alt in av[1]))
    raise AssertionError(f"a wording opens with {op}: give refusals.OPENERS a rule for it")


def test_every_output_a_wording_can_open_is_let_through_to_the_table() -> None:
    """``verdict`` tries the table only on outputs that open with one of ``OPENERS``: every character the
    case-blind table can match first (any code point) must be in it."""
    firsts = set().union(*(_first_literals(sre_parse.parse(p, re.I)) for p, _ in refusals.WORDINGS))
    table = re.compile("|".join(re.escape(chr(c)) for c in sorted(firsts)), re.I)
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert set(table.findall(every)) <= refusals.OPENERS
    assert refusals.OPENERS <= set(table.findall(every))  # and nothing more: the set stays the table's


DIRECT_SHELL = [
    ("exec_command", {"cmd": "rm -rf build"}),
    ("shell", {"command": ["bash", "-lc", "rm -rf build"]}),
    ("shell_command", {"command": "rm -rf build"}),
]


@pytest.mark.parametrize("text", REFUSED)
@pytest.mark.parametrize("name,arguments", DIRECT_SHELL)
def test_a_refused_direct_command_did_not_run(tmp_path: Path, name: str, arguments: dict[str, Any], text: str) -> None:
    found = items(rollout(tmp_path, call("c1", name, arguments), output("c1", text)))
    [sc] = of_kind(found, "shell_command")
    assert (sc.executed, sc.status) == (Executed.NO, "rejected")


@pytest.mark.parametrize("text", ["exec command rejected by user", "`ls` rejected: blocked by policy"])
def test_a_refused_local_shell_call_did_not_run(tmp_path: Path, text: str) -> None:
    found = items(rollout(tmp_path, ("response_item", {"type": "local_shell_call", "call_id": "c1", "status": "completed",
                                                       "action": {"type": "exec", "command": ["ls"]}}),
                          output("c1", text)))
    [sc] = of_kind(found, "shell_command")
    assert (sc.executed, sc.status) == (Executed.NO, "rejected")


@pytest.mark.parametrize("text", ["patch rejected by user", "patch rejected: writing outside of the project",
                                  "This action was rejected due to unacceptable risk.\nReason: x"])
def test_a_refused_direct_patch_did_not_run(tmp_path: Path, text: str) -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"
    found = items(rollout(tmp_path, ("response_item", {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch",
                                                       "input": patch, "status": "completed"}),
                          output("p1", text, "custom_tool_call_output")))
    [pi] = of_kind(found, "patch")
    assert (pi.executed, pi.success) == (Executed.NO, False)


def test_a_declined_patch_record_did_not_apply(tmp_path: Path) -> None:
    """``patch_apply_end`` with ``status: declined`` (PatchApplyStatus::Declined): not applied."""
    patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"
    found = items(rollout(
        tmp_path,
        ("response_item", {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": patch,
                           "status": "completed"}),
        ("event_msg", {"type": "patch_apply_end", "call_id": "p1", "turn_id": "t1", "stdout": "",
                       "stderr": "patch rejected by user", "success": False, "status": "declined",
                       "changes": {"/w/a.txt": {"type": "add", "content": "a\n"}}}),
        output("p1", "patch rejected by user", "custom_tool_call_output")))
    [pi] = of_kind(found, "patch")
    assert (pi.executed, pi.success) == (Executed.NO, False)


def test_an_interrupted_command_is_a_failure_whose_execution_only_a_record_settles(tmp_path: Path) -> None:
    """codex-rs answers a call the interrupt cut off with "aborted by user" whether or not it had
    started: not ``no`` (it may have run), not ``yes`` (nothing proves it), unless its end event says."""
    aborted = "Wall time: 5.0 seconds\naborted by user"
    [sc] = of_kind(items(rollout(tmp_path, call("c1", "exec_command", {"cmd": "sleep 90"}), output("c1", aborted))),
                   "shell_command")
    assert (sc.executed, sc.status) == (Executed.UNKNOWN, "aborted")
    end = ("event_msg", {"type": "exec_command_end", "call_id": "c1", "turn_id": "t1", "command": ["sleep", "90"],
                         "cwd": "/w", "exit_code": -1, "aggregated_output": "", "status": "failed"})
    [sc] = of_kind(items(rollout(tmp_path, call("c1", "exec_command", {"cmd": "sleep 90"}), end, output("c1", aborted))),
                   "shell_command")
    assert sc.executed is Executed.YES


SCRIPT = 'const r = await tools.exec_command({cmd: "make deploy"});\ntext(r.output);'


@pytest.mark.parametrize("text", REFUSED)
def test_a_refused_cell_ran_nothing(tmp_path: Path, text: str) -> None:
    found = items(rollout(tmp_path, cell("x1", SCRIPT), output("x1", text, "custom_tool_call_output")))
    [ex] = [i for i in of_kind(found, "tool_call") if i.name == "exec"]
    [sc] = of_kind(found, "shell_command")
    assert (ex.executed, ex.success, sc.executed) == (Executed.NO, False, Executed.NO)


def test_a_cell_whose_call_codex_refused_did_not_run_that_call(tmp_path: Path) -> None:
    """The nested call's refusal is the script's error: its one shell command did not run."""
    failed = [{"type": "input_text", "text": "Script failed\nWall time 0.2 seconds\nOutput:\n"},
              {"type": "input_text", "text": "Script error:\nexec command rejected by user"}]
    found = items(rollout(tmp_path, cell("x1", SCRIPT), output("x1", failed, "custom_tool_call_output"),
                          meta={**META, "cli_version": "0.144.0"}))
    [sc] = of_kind(found, "shell_command")
    assert sc.executed is Executed.NO


def test_a_declined_record_of_a_cell_is_no(tmp_path: Path) -> None:
    """0.150+: the refused nested call has its CommandExecution record with ``status: declined``."""
    record = ("event_msg", {"type": "item_completed", "thread_id": "th", "turn_id": "t1",
                            "item": {"type": "CommandExecution", "id": "e1", "command": ["bash", "-lc", "make deploy"],
                                     "cwd": "/w", "status": "declined", "aggregated_output": "exec command rejected by user",
                                     "exit_code": -1}})
    failed = "Script failed\nWall time 0.2 seconds\nOutput:\nScript error:\nexec command rejected by user"
    found = items(rollout(tmp_path, cell("x1", SCRIPT), record, output("x1", failed, "custom_tool_call_output")))
    [sc] = of_kind(found, "shell_command")
    assert sc.executed is Executed.NO


@pytest.mark.parametrize("arguments", ["[REDACTED]", "", "{}", '{"cmd": null}', "not json {"])
@pytest.mark.parametrize("name,text,code", [
    ("exec_command", "Chunk ID: 1a2b\nWall time: 0.1 seconds\nProcess exited with code 1\nOriginal token count: 2\n"
                     "Output:\nboom\n", 1),
    ("shell", '{"output":"boom\\n","metadata":{"exit_code":2,"duration_seconds":0.1}}', 2),
    ("shell_command", "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nboom\n", 1),
])
def test_a_command_whose_arguments_do_not_decode_is_still_a_command(tmp_path: Path, name: str, text: str,
                                                                    code: int, arguments: str) -> None:
    found = items(rollout(tmp_path, call("c1", name, arguments), output("c1", text)))
    [sc] = of_kind(found, "shell_command")
    assert (sc.command, sc.exit_code, sc.executed, sc.status) == (UNKNOWN_COMMAND, code, Executed.YES, "failed")
    assert not of_kind(found, "tool_call")


def test_arguments_with_raw_control_characters_are_still_read(tmp_path: Path) -> None:
    """JSON forbids a raw control character inside a string; a re-encoded transcript has them: the
    command is still readable, so it is still the command (never the unknown marker)."""
    found = items(rollout(tmp_path, call("c1", "exec_command", '{"cmd": "echo \x1b[2J"}'),
                          output("c1", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n")))
    [sc] = of_kind(found, "shell_command")
    assert sc.command == "echo \x1b[2J"


@pytest.mark.parametrize("arguments", ["[REDACTED]", "{}"])
def test_a_patch_whose_arguments_do_not_decode_is_still_a_patch(tmp_path: Path, arguments: str) -> None:
    found = items(rollout(tmp_path, call("p1", "apply_patch", arguments),
                          output("p1", "Success. Updated the following files:\nM calc.py\n")))
    [pi] = of_kind(found, "patch")
    assert (pi.executed, pi.success) == (Executed.YES, True)
    assert not of_kind(found, "tool_call")


def test_the_summary_counts_the_commands_whose_arguments_were_stripped(tmp_path: Path) -> None:
    """``show``'s footer (``present.common.footer_parts``) no longer says "0 commands" for a session whose
    command arguments a sanitizer removed."""
    from transcript_reader.present.common import footer_parts

    done = "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {}\nOriginal token count: 1\nOutput:\n"
    found = items(rollout(tmp_path, call("c1", "exec_command", "[REDACTED]"), output("c1", done.format(0)),
                          call("c2", "exec_command", "[REDACTED]"), output("c2", done.format(1))))
    assert "2 commands (1 failed)" in footer_parts(found, None)


TIMED_OUT = "js execution timed out; kernel reset, rerun your request"


def _running_cell(script: str = SCRIPT) -> list[tuple[str, dict[str, Any]]]:
    return [cell("x1", script),
            output("x1", "Script running with cell ID 7\nWall time 10.0 seconds\nOutput:\n", "custom_tool_call_output")]


@pytest.mark.parametrize("answer", [TIMED_OUT, {"content": TIMED_OUT, "success": True},
                                    [{"type": "input_text", "text": TIMED_OUT}]])
def test_a_wait_that_timed_out_is_a_failure_and_its_cell_proves_nothing(tmp_path: Path, answer: Any) -> None:
    found = items(rollout(tmp_path, *_running_cell(), call("w1", "wait", {"cell_id": "7"}), output("w1", answer)))
    [wait] = [i for i in of_kind(found, "tool_call") if i.name == "wait"]
    [ex] = [i for i in of_kind(found, "tool_call") if i.name == "exec"]
    [sc] = of_kind(found, "shell_command")
    assert (wait.success, ex.success) == (False, False)
    assert sc.executed is Executed.UNKNOWN


def test_a_timed_out_cell_keeps_what_its_records_prove(tmp_path: Path) -> None:
    script = 'await tools.exec_command({cmd: "ls"});\nawait tools.exec_command({cmd: "sleep 600"});'
    record = ("event_msg", {"type": "item_completed", "thread_id": "th", "turn_id": "t1",
                            "item": {"type": "CommandExecution", "id": "e1", "command": ["bash", "-lc", "ls"],
                                     "cwd": "/w", "status": "completed", "aggregated_output": "a\n", "exit_code": 0}})
    found = items(rollout(tmp_path, cell("x1", script), record,
                          output("x1", "Script running with cell ID 7\nWall time 10.0 seconds\nOutput:\n",
                                 "custom_tool_call_output"),
                          call("w1", "wait", {"cell_id": "7"}), output("w1", TIMED_OUT)))
    assert [(i.command, i.executed) for i in of_kind(found, "shell_command")] == [
        ("ls", Executed.YES), ("sleep 600", Executed.UNKNOWN)]


def test_an_mcp_call_that_timed_out_failed(tmp_path: Path) -> None:
    text = "tool call error: tool call failed for `browser/navigate`\nCaused by:\n    timed out awaiting tools/call after 60s"
    found = items(rollout(tmp_path, call("m1", "mcp__browser__navigate", {"url": "https://example.test"}),
                          output("m1", {"content": text, "success": True})))
    [tc] = of_kind(found, "tool_call")
    assert (tc.success, tc.executed) == (False, Executed.YES)


@pytest.mark.parametrize("text,says", [
    ([{"type": "input_text", "text": "Script failed\nWall time 0.1 seconds\nOutput:\n"},
      {"type": "input_text", "text": "Script error:\ncollab spawn failed"}], "collab spawn failed"),
    ("exec command rejected by user", "exec command rejected by user"),
    ("Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno such file\n", "exit code 2"),
])
def test_an_output_without_its_call_that_reports_a_failure_is_a_notice(tmp_path: Path, text: Any, says: str) -> None:
    found = items(rollout(tmp_path, output("gone", text, "custom_tool_call_output")))
    [notice] = of_kind(found, "notice")
    assert notice.category == "orphan_failure" and says in notice.message


@pytest.mark.parametrize("text", ["Script completed\nWall time 0.1 seconds\nOutput:\nok\n",
                                  "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n", "Plan updated"])
def test_an_output_without_its_call_that_succeeded_says_its_call_is_missing(tmp_path: Path, text: str) -> None:
    [notice] = of_kind(items(rollout(tmp_path, output("gone", text))), "notice")
    assert notice.category == "orphan_output" and "call id gone" in notice.message  # not an orphan failure


def test_a_record_only_command_stays_inside_its_cell(tmp_path: Path) -> None:
    """A CommandExecution record whose command was stripped, written after its cell's output (the cell
    left it running): shown inside the cell, before the cell's output, its command said to be unknown."""
    stripped = ("event_msg", {"type": "item_completed", "thread_id": "th", "turn_id": "t1",
                              "item": {"type": "CommandExecution", "id": "e9", "cwd": "/w", "status": "completed",
                                       "aggregated_output": "", "exit_code": 0}})
    found = items(rollout(tmp_path, cell("x1", 'await tools.exec_command({cmd: "make"});'),
                          output("x1", "Script completed\nWall time 0.1 seconds\nOutput:\n", "custom_tool_call_output"),
                          stripped), include=("raw_output",))
    kinds = [(i.kind.value, getattr(i, "command", None)) for i in found]
    at = kinds.index(("raw_output", None))
    before = kinds[:at]
    assert ("shell_command", UNKNOWN_COMMAND) in before
    assert all(k != "shell_command" for k, _ in kinds[at:])
