"""The ``codex exec --json`` decoder, as a spec: one small fixture per behaviour with a golden JSON
expectation (``fixtures/exec_streams/<case>.jsonl`` -> ``<case>.expected.json``), named rules on top,
a property test, and the whole real corpus.

Rewrite the goldens after a reviewed change with ``UPDATE_GOLDEN=1 pytest tests/test_exec_stream.py``.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_reader import api
from transcript_reader.assembly.assembler import Assembler
from transcript_reader.assembly.rules import MAX_PENDING, excerpt
from transcript_reader.errors import DecodeError
from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Executed,
    Format,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    ShellCommand,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.projections.render import item_to_dict, lines_to_dict, tokens_to_dict
from transcript_reader.providers.codex.exec_stream import (
    ExecStreamDecoder,
    ExecStreamSummary,
    RunStatus,
    split_shell_command,
)
from transcript_reader.providers.codex.sniff import classify_line

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "exec_streams"
CORPUS = ROOT.parent / "shared" / "corpus" / "realcodex"
CASES = sorted(p.stem for p in FIXTURES.glob("*.jsonl"))


def numbered(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def is_protocol(lines: list[tuple[int, str]]) -> bool:
    for _, text in lines:
        if text.strip():
            try:
                return classify_line(json.loads(text)) is Format.EXEC_PROTOCOL
            except ValueError:
                return False
    return False


def stream_items(decoder: ExecStreamDecoder, numbered_lines: Iterable[tuple[int, str]], *,
                 strict: bool = False) -> Iterator[AnyItem]:
    """The timeline of ``(number, text)`` lines: the decoder's records through the one assembler (as the
    reader reads a file). Only the last line may lack its newline: a bad one then was cut mid-write."""
    lines = list(numbered_lines)
    last = lines[-1][0] if lines else None
    fed = ((n, text.encode("utf-8", "surrogatepass"), n != last or text.endswith("\n")) for n, text in lines)
    fmt = decoder.format
    yield from Assembler(decoder.path or "<stream>", fmt, strict=strict).run(decoder.decoded(fed))


def decode(path: Path, *, strict: bool = False) -> tuple[list[AnyItem], ExecStreamSummary]:
    """The items the reader gives (the exec decoder's records through the one assembler, which adds
    test runs), and the decoder's own summary of the run."""
    lines = numbered(path)
    protocol = is_protocol(lines)
    decoder = ExecStreamDecoder(protocol=protocol, path=str(path))
    raw = path.read_bytes().splitlines(keepends=True)
    for _ in decoder.decoded((n, r, r.endswith(b"\n")) for n, r in enumerate(raw, 1)):
        pass
    fmt = Format.EXEC_PROTOCOL if protocol else Format.EXEC_JSON
    return list(api.iter_items(path, format=fmt, strict=strict)), decoder.summary()


def summary_to_dict(summary: ExecStreamSummary) -> dict[str, Any]:
    """The decoder's summary as JSON, built from render.py's definitions of its parts."""
    return {
        "format": summary.format.value,
        "run_status": summary.run_status.value,
        "run_error": summary.run_error,
        "usage": {k: v for k, v in (tokens_to_dict(summary.usage) or {}).items() if k != "cache_write"},
        "turns": summary.turns,
        "completed_turns": summary.completed_turns,
        "thread_id": summary.thread_id,
        "model": summary.model,
        "cwd": summary.cwd,
        "lines": lines_to_dict(summary.lines),
    }


def case(name: str) -> tuple[list[AnyItem], ExecStreamSummary]:
    return decode(FIXTURES / f"{name}.jsonl")


def accounting_holds(summary: ExecStreamSummary) -> bool:
    lines = summary.lines
    return lines.lines == lines.decoded + lines.known_noise + lines.unknown + lines.unreadable + lines.blank


# ---------------------------------------------------------------------------------------------- golden


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    """Every fixture decodes to exactly its reviewed expectation (items and summary)."""
    items, summary = case(name)
    actual = {"items": [item_to_dict(i) for i in items], "summary": summary_to_dict(summary)}
    expected_path = FIXTURES / f"{name}.expected.json"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        expected_path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert expected_path.exists(), f"missing golden {expected_path.name}; run with UPDATE_GOLDEN=1"
    assert actual == json.loads(expected_path.read_text(encoding="utf-8"))
    assert accounting_holds(summary)


def test_every_fixture_has_a_golden() -> None:
    goldens = sorted(p.name.removesuffix(".expected.json") for p in FIXTURES.glob("*.expected.json"))
    assert goldens == CASES


# ---------------------------------------------------------------------------------------- named rules


def test_completed_run() -> None:
    items, summary = case("completed")
    assert summary.run_status is RunStatus.COMPLETED and summary.run_error is None
    assert summary.thread_id == "0199aaaa-0000-7000-8000-000000000001"
    assert (summary.turns, summary.completed_turns) == (1, 1)
    shell = [i for i in items if isinstance(i, ShellCommand)]
    assert [(c.command, c.argv, c.exit_code, c.executed, c.origin) for c in shell] == [
        ("cat calc.py", ("bash", "-lc", "cat calc.py"), 0, Executed.YES, Origin.STREAM)
    ]
    assert shell[0].line == 5 and shell[0].turn_id == "turn-1"  # the completion line
    patch = next(i for i in items if isinstance(i, PatchItem))
    assert [(f.path, f.op) for f in patch.files] == [
        ("/home/user/project/calc.py", "update"),
        ("/home/user/project/NOTES.md", "add"),
    ]
    assert patch.success is True and patch.executed is Executed.YES
    raw = next(i for i in items if isinstance(i, RawOutput))
    assert raw.call_id == shell[0].call_id == "item_1" and raw.text == "def add(a, b):\n    return a - b\n"
    answer = [i for i in items if isinstance(i, AssistantMessage)]
    assert [(m.text, m.final) for m in answer] == [("Fixed `add`: it subtracted.", True)]


def test_only_the_last_message_before_turn_completed_is_the_answer() -> None:
    """Seed 000: a message followed by another item is commentary; the last one of the turn answers."""
    items, summary = case("final_vs_commentary")
    messages = [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)]
    assert messages == [
        ("I'll read a.txt first.", False),
        ("Now b.txt.", False),
        ("a.txt says alpha; b.txt was not needed.", True),
    ]
    kinds = [type(i).__name__ for i in items]
    assert kinds.index("AssistantMessage") < kinds.index("ShellCommand")  # stream order kept
    assert summary.run_status is RunStatus.COMPLETED


def test_failed_turn_has_no_answer_and_the_first_failure_message() -> None:
    items, summary = case("failed_turn")
    assert summary.run_status is RunStatus.FAILED
    assert summary.run_error == "stream disconnected before completion: rate limit reached"
    notices = [i for i in items if isinstance(i, Notice)]
    assert len(notices) == 1 and notices[0].category == "error"  # error + turn.failed: one notice
    assert not any(m.final for m in items if isinstance(m, AssistantMessage))
    assert summary.completed_turns == 0


def test_no_report_when_the_turn_completes_without_a_message() -> None:
    items, summary = case("no_report")
    assert summary.run_status is RunStatus.NO_REPORT
    assert not any(isinstance(i, AssistantMessage) for i in items)


def test_stream_cut_mid_turn_is_incomplete_and_open_items_stay_unknown() -> None:
    items, summary = case("incomplete")
    assert summary.run_status is RunStatus.INCOMPLETE
    cmd = next(i for i in items if isinstance(i, ShellCommand))
    assert (cmd.command, cmd.executed, cmd.status, cmd.exit_code) == (
        "make all",
        Executed.UNKNOWN,
        "in_progress",
        None,
    )
    assert not any(m.final for m in items if isinstance(m, AssistantMessage))
    assert not any(isinstance(i, TestRun) for i in items)  # `make all` is no test run


def test_cut_last_line_is_unreadable_and_the_run_incomplete() -> None:
    items, summary = case("cut_last_line")
    assert isinstance(items[-1], Unreadable) and items[-1].line == 4
    assert items[-1].reason == "truncated last line (cut mid-write)"
    assert summary.run_status is RunStatus.INCOMPLETE
    assert summary.lines.unreadable == 1 and summary.lines.cut_last_line == 4 and accounting_holds(summary)
    # the message never saw its turn.completed: not an answer
    assert [m.final for m in items if isinstance(m, AssistantMessage)] == [False]


def test_strict_mode_raises_a_typed_error_naming_file_and_line() -> None:
    path = FIXTURES / "cut_last_line.jsonl"
    with pytest.raises(DecodeError) as err:
        decode(path, strict=True)
    assert err.value.line == 4 and err.value.path == str(path)
    assert "truncated last line" in err.value.reason


def test_a_complete_bad_last_line_is_not_a_cut() -> None:
    """A file's lines keep their newline: a bad last line that has one was written whole."""
    lines = [
        (1, '{"type":"turn.started"}\n'),
        (2, '{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"ok"}}\n'),
        (
            3,
            '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}\n',
        ),
        (4, "garbage\n"),
    ]
    decoder = ExecStreamDecoder(protocol=False)
    items = list(stream_items(decoder, lines))
    summary = decoder.summary()
    assert isinstance(items[-1], Unreadable) and items[-1].reason.startswith("invalid JSON")
    assert summary.lines.cut_last_line is None
    assert summary.run_status is RunStatus.COMPLETED


def test_declined_command_and_patch_did_not_run() -> None:
    items, summary = case("declined")
    cmd = next(i for i in items if isinstance(i, ShellCommand))
    assert (cmd.executed, cmd.status, cmd.exit_code) == (Executed.NO, "declined", None)
    assert not any(isinstance(i, TestRun) for i in items)  # a declined pytest ran no tests
    patch = next(i for i in items if isinstance(i, PatchItem))
    assert patch.executed is Executed.NO and patch.success is None
    assert summary.run_status is RunStatus.COMPLETED


def test_usage_is_summed_over_turn_completed() -> None:
    items, summary = case("usage_two_turns")
    usage = summary.usage
    assert (usage.input, usage.cached_input, usage.output, usage.reasoning, usage.total) == (
        3000,
        1000,
        40,
        4,
        3040,
    )
    assert usage.source == "sum of turn.completed usage"
    assert (summary.turns, summary.completed_turns) == (2, 2)
    assert [(m.text, m.final, m.turn_id) for m in items if isinstance(m, AssistantMessage)] == [
        ("First answer.", True, "turn-1"),
        ("Second answer.", True, "turn-2"),
    ]
    assert summary.lines.blank == 1


def test_test_run_from_a_command() -> None:
    items, _ = case("test_run")
    runs = [i for i in items if isinstance(i, TestRun)]
    assert len(runs) == 1  # `grep -n pytest setup.cfg` names pytest but runs no tests
    run = runs[0]
    assert (run.framework, run.result, run.passed, run.failed, run.skipped, run.exit_code) == (
        "pytest",
        TestResult.FAIL,
        2,
        1,
        1,
        1,
    )
    assert (run.command, run.call_id, run.executed, run.origin) == (
        "cd tests && python -m pytest -q",
        "item_0",
        Executed.YES,
        Origin.STREAM,
    )


def test_tool_items_and_accounting() -> None:
    items, summary = case("tool_items")
    tools = [(t.name, t.success, t.executed) for t in items if isinstance(t, ToolCallItem)]
    assert tools == [
        ("web_search", True, Executed.YES),
        ("mcp__docs__lookup", True, Executed.YES),
        ("mcp__docs__missing", False, Executed.YES),
        ("spawn_agent", True, Executed.YES),
        ("plan", None, Executed.YES),
        ("request_user_input", None, Executed.UNKNOWN),
        ("update_plan", None, Executed.YES),
    ]
    todo = next(t for t in items if isinstance(t, ToolCallItem) and t.name == "update_plan")
    assert todo.arguments == "[x] Search the docs\n[x] Answer"  # emitted once, final state
    lookup = next(t for t in items if isinstance(t, ToolCallItem) and t.name == "mcp__docs__lookup")
    assert lookup.result == "3.13.0: 2024-10-07"
    warning = next(i for i in items if isinstance(i, Notice))
    assert warning.category == "warning" and warning.turn_id is None  # before turn.started
    assert summary.run_status is RunStatus.COMPLETED  # an error *item* is no failure
    assert dict(summary.lines.unknown_types) == {"item:image_view": 1, "turn.progress": 1}
    assert dict(summary.lines.noise_types) == {"item.plan.delta": 1}
    assert accounting_holds(summary)


def test_bad_lines_are_unreadable_and_counted() -> None:
    items, summary = case("bad_lines")
    bad = [(i.line, i.reason) for i in items if isinstance(i, Unreadable)]
    assert [line for line, _ in bad] == [4, 5, 6]
    assert "not an object" in bad[1][1] and "without an item object" in bad[2][1]
    lines = summary.lines
    assert (lines.lines, lines.unreadable, lines.blank) == (9, 3, 2)
    assert accounting_holds(summary)
    # The cut is not at the end: the run still completed.
    assert summary.run_status is RunStatus.COMPLETED


def test_protocol_stream() -> None:
    items, summary = case("protocol")
    assert summary.format is Format.EXEC_PROTOCOL
    assert (summary.model, summary.cwd) == ("gpt-5", "/home/user/project")
    prompt = items[0]
    assert isinstance(prompt, UserMessage) and prompt.text == "fix calc.py and verify" and prompt.line == 2
    shell = [(c.command, c.exit_code, c.duration_s, c.executed) for c in items if isinstance(c, ShellCommand)]
    assert shell == [("cat calc.py", 0, 0.25, Executed.YES), ("python3 -m pytest -q", 0, 1.5, Executed.YES)]
    patch = next(i for i in items if isinstance(i, PatchItem))
    assert [(f.path.rsplit("/", 1)[-1], f.op, f.added, f.removed) for f in patch.files] == [
        ("calc.py", "update", 1, 1),
        ("old.txt", "delete", 0, 0),
        ("NOTES.md", "add", 2, 0),
    ]
    assert [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)] == [
        ("The bug is in add; patching it.", False),
        ("Fixed `add`; the tests pass.", True),  # task_complete is never printed: the clean end closes it
    ]
    run = next(i for i in items if isinstance(i, TestRun))
    assert (run.framework, run.result, run.passed) == ("pytest", TestResult.PASS, 2)
    assert summary.usage.source == "last cumulative token_count" and summary.usage.input == 15000
    assert summary.run_status is RunStatus.COMPLETED
    assert dict(summary.lines.noise_types) == {"exec_command_output_delta": 1, "turn_diff": 2}


def test_protocol_flat_token_counts_are_summed() -> None:
    _, summary = case("protocol_flat_usage")
    usage = summary.usage
    assert (usage.input, usage.cached_input, usage.output, usage.total) == (12100, 3000, 25, 12125)
    assert usage.source == "sum of per-request token_count"


def test_protocol_stream_cut_while_a_command_runs_is_incomplete() -> None:
    items, summary = case("protocol_incomplete")
    assert summary.run_status is RunStatus.INCOMPLETE
    cmd = next(i for i in items if isinstance(i, ShellCommand))
    assert (cmd.command, cmd.executed, cmd.status) == ("make all", Executed.UNKNOWN, "in_progress")
    assert not any(m.final for m in items if isinstance(m, AssistantMessage))


def test_protocol_error_fails_the_run_with_the_first_message() -> None:
    items, summary = case("protocol_error")
    assert summary.run_status is RunStatus.FAILED
    assert summary.run_error == "exceeded retry limit, last status: 429 Too Many Requests"
    assert [n.category for n in items if isinstance(n, Notice)] == ["stream_error", "error", "error"]


def test_protocol_tools_task_complete_and_declined() -> None:
    items, summary = case("protocol_tools")
    assert summary.thread_id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert summary.model == "codex-mini-latest"
    tools = [(t.name, t.success) for t in items if isinstance(t, ToolCallItem)]
    assert tools == [
        ("update_plan", True),
        ("mcp__docs__lookup", True),
        ("mcp__docs__broken", False),
        ("web_search", True),
        ("view_image", True),
    ]
    cmd = next(i for i in items if isinstance(i, ShellCommand))
    assert (cmd.executed, cmd.status) == (Executed.NO, "declined")
    assert [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)] == [("x is 42.", True)]
    assert dict(summary.lines.unknown_types) == {"brand_new_event": 1}
    assert summary.run_status is RunStatus.COMPLETED


def test_empty_stream_is_no_report() -> None:
    decoder = ExecStreamDecoder(protocol=False)
    assert list(stream_items(decoder, [])) == []
    summary = decoder.summary()
    assert summary.run_status is RunStatus.NO_REPORT and summary.lines.lines == 0


def test_thread_started_without_a_turn_is_incomplete() -> None:
    decoder = ExecStreamDecoder(protocol=False)
    list(stream_items(decoder, [(1, '{"type":"thread.started","thread_id":"t"}')]))
    assert decoder.summary().run_status is RunStatus.INCOMPLETE


def test_a_new_turn_before_turn_completed_leaves_the_first_unfinished() -> None:
    lines = [
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"half"}}',
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"b","type":"agent_message","text":"whole"}}',
        '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}',
    ]
    decoder = ExecStreamDecoder(protocol=False)
    items = list(stream_items(decoder, enumerate(lines, 1)))
    assert [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)] == [
        ("half", False),
        ("whole", True),
    ]
    assert decoder.summary().run_status is RunStatus.INCOMPLETE


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"type": "thread.started", "thread_id": "x"}, Format.EXEC_JSON),
        ({"type": "turn.started"}, Format.EXEC_JSON),
        ({"type": "error", "message": "boom"}, Format.EXEC_JSON),
        ({"id": "0", "msg": {"type": "task_started"}}, Format.EXEC_PROTOCOL),
        ({"model": "gpt-5", "workdir": "/w", "sandbox": "read-only"}, Format.EXEC_PROTOCOL),
        ({"prompt": "hi"}, Format.EXEC_PROTOCOL),
        ({"timestamp": "t", "type": "session_meta", "payload": {}}, Format.ROLLOUT),  # rollout envelope
        ({"id": "u", "timestamp": "t", "instructions": None}, Format.EARLY_RUST),  # early Rust session line
        ({"record_type": "state"}, Format.EARLY_RUST),
        ({"type": "message", "role": "user", "content": []}, Format.EARLY_RUST),  # early Rust bare item
        ({"session": {}, "items": []}, Format.TS_JSON),  # TypeScript CLI document
        ({"model": "gpt-5", "extra": 1}, None),
        ([1, 2], None),
    ],
)
def test_the_one_line_classifier_names_each_shape(obj: object, expected: Format | None) -> None:
    assert classify_line(obj) == expected


@pytest.mark.parametrize(
    ("command", "inner", "argv"),
    [
        ("bash -lc 'ls && cat calc.py'", "ls && cat calc.py", ("bash", "-lc", "ls && cat calc.py")),
        ("/bin/bash -lc \"python3 -c 'print(1)'\"", "python3 -c 'print(1)'", None),
        ("ls -la", "ls -la", ("ls", "-la")),
        ("echo 'unterminated", "echo 'unterminated", None),
    ],
)
def test_split_shell_command(command: str, inner: str, argv: tuple[str, ...] | None) -> None:
    got_inner, got_argv = split_shell_command(command)
    assert got_inner == inner
    if argv is not None or "unterminated" in command:
        assert got_argv == argv


def test_excerpt_keeps_head_and_tail() -> None:
    text = "a" * 5000 + "END"
    cut = excerpt(text, 100)
    assert cut.startswith("a" * 50) and cut.endswith("a" * 47 + "END") and "omitted" in cut
    assert excerpt("short", 100) == "short"


# -------------------------------------------------------------------------------------------- property

_event = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda t, item: json.dumps({"type": t, "item": item}),
        st.sampled_from(
            [
                "item.started",
                "item.updated",
                "item.completed",
                "turn.started",
                "turn.completed",
                "turn.failed",
                "error",
                "thread.started",
                "x.y",
            ]
        ),
        st.one_of(
            st.none(),
            st.text(max_size=5),
            st.fixed_dictionaries(
                {"id": st.sampled_from(["i0", "i1", "i2"])},
                optional={
                    "type": st.sampled_from(
                        [
                            "agent_message",
                            "command_execution",
                            "file_change",
                            "todo_list",
                            "mcp_tool_call",
                            "error",
                            "weird",
                        ]
                    ),
                    "status": st.sampled_from(["in_progress", "completed", "failed", "declined"]),
                    "exit_code": st.one_of(st.none(), st.integers(-3, 300), st.text(max_size=2)),
                    "command": st.one_of(st.text(max_size=20), st.integers()),
                    "changes": st.one_of(
                        st.lists(
                            st.dictionaries(st.sampled_from(["path", "kind"]), st.text(max_size=4)),
                            max_size=2,
                        ),
                        st.text(max_size=3),
                    ),
                    "text": st.one_of(st.text(max_size=10), st.none()),
                },
            ),
        ),
    ),
    st.builds(
        lambda t, extra: json.dumps({"id": "0", "msg": {"type": t, **extra}}),
        st.sampled_from(
            [
                "task_started",
                "exec_command_begin",
                "exec_command_end",
                "patch_apply_begin",
                "patch_apply_end",
                "agent_message",
                "token_count",
                "error",
                "mcp_tool_call_end",
                "turn_aborted",
                "task_complete",
                "new_kind",
            ]
        ),
        st.dictionaries(
            st.sampled_from(
                [
                    "call_id",
                    "command",
                    "exit_code",
                    "changes",
                    "message",
                    "info",
                    "result",
                    "invocation",
                    "status",
                    "input_tokens",
                ]
            ),
            st.one_of(
                st.none(),
                st.integers(),
                st.text(max_size=5),
                st.lists(st.text(max_size=3), max_size=3),
                st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
            ),
            max_size=4,
        ),
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event, max_size=12), st.booleans())
def test_any_input_decodes_with_accounting(lines: list[str], protocol: bool) -> None:
    """Lenient decoding never raises; every line lands in exactly one category; unreadable lines are
    items; strict decoding raises only DecodeError."""
    numbered_lines = list(enumerate(lines, start=1))
    decoder = ExecStreamDecoder(protocol=protocol)
    items = list(stream_items(decoder, numbered_lines))
    summary = decoder.summary()
    assert summary.lines.lines == len(lines)
    assert accounting_holds(summary)
    assert summary.lines.unreadable == sum(isinstance(i, Unreadable) for i in items)
    assert summary.run_status in set(RunStatus)
    assert sum(1 for i in items if isinstance(i, AssistantMessage) and i.final) <= summary.completed_turns
    try:
        list(stream_items(ExecStreamDecoder(protocol=protocol), numbered_lines, strict=True))
    except DecodeError as err:
        assert err.line is not None


# ------------------------------------------------------------------------------------------ real corpus

# Scenarios whose run must end a given way whatever the version (see corpus/realcodex/README.md).
_EXPECTED_STATUS = {"hello": RunStatus.COMPLETED, "multi_step": RunStatus.COMPLETED}


def _corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.exec*.jsonl")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"real corpus not present at {CORPUS}")
def test_real_corpus_decodes() -> None:
    """Every real ``codex exec --json`` recording: no crash, accounting holds, no unknown or unreadable
    line (none of them is cut), and every non-empty run ends completed or no_report."""
    files = _corpus_files()
    assert files, "no exec streams in the corpus"
    problems: list[str] = []
    for path in files:
        items, summary = decode(path)
        lines = summary.lines
        where = str(path.relative_to(CORPUS))
        if not accounting_holds(summary):
            problems.append(f"{where}: accounting {lines}")
        if lines.unreadable or lines.unknown:
            problems.append(f"{where}: unreadable={lines.unreadable} unknown={lines.unknown_types}")
        if lines.lines == 0:
            # The TypeScript CLI (0.1.x) printed nothing on stdout for `exec --json`.
            assert summary.run_status is RunStatus.NO_REPORT, where
            continue
        if summary.run_status not in (RunStatus.COMPLETED, RunStatus.NO_REPORT):
            problems.append(f"{where}: {summary.run_status} {summary.run_error}")
        scenario = path.name.split(".", 1)[0]
        expected = _EXPECTED_STATUS.get(scenario)
        if expected is not None and ".turn2." not in path.name and summary.run_status is not expected:
            problems.append(f"{where}: expected {expected}, got {summary.run_status}")
        finals = [m for m in items if isinstance(m, AssistantMessage) and m.final]
        if summary.run_status is RunStatus.COMPLETED and not finals:
            problems.append(f"{where}: completed without a final answer")
        if any(c.executed is not Executed.YES for c in items if isinstance(c, ShellCommand)):
            problems.append(f"{where}: a command not marked executed")
    assert not problems, "\n".join(problems)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"real corpus not present at {CORPUS}")
def test_real_ignored_local_shell_call_is_no_report_from_0_169() -> None:
    """0.169+ ignores a local_shell_call item: the turn ends with no answer (corpus README)."""
    seen = 0
    for path in CORPUS.glob("*/ignored_local_shell_call.exec.jsonl"):
        version = tuple(int(x) for x in path.parent.name.split(".")[:2])
        if version >= (0, 169):
            seen += 1
            _, summary = decode(path)
            assert summary.run_status is RunStatus.NO_REPORT, path
    if not seen:
        pytest.skip("no 0.169+ ignored_local_shell_call recording in the corpus")


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.characters(blacklist_characters="\x00"), max_size=60),
    st.sampled_from(["bash", "/bin/bash", "sh", "/usr/bin/zsh"]),
    st.sampled_from(["-lc", "-c"]),
)
def test_split_shell_command_inverts_codex_quoting(script: str, shell: str, flag: str) -> None:
    """Codex prints an argv shell-quoted; splitting it gives the argv back and the script as the command."""
    argv = (shell, flag, script)
    assert split_shell_command(shlex.join(argv)) == (script, argv)


def test_items_waiting_behind_a_message_are_bounded() -> None:
    """A message waits for its turn's end; garbage after it waits too, but only up to the assembler's
    MAX_PENDING items (then the message is released as it stands: memory does not grow with the file)."""
    lines = ['{"type":"turn.started"}', '{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"hi"}}']
    lines += ["garbage\n"] * (MAX_PENDING + 50)
    decoder = ExecStreamDecoder(protocol=False)
    fed = 0

    def counted() -> Iterator[tuple[int, bytes, bool]]:
        nonlocal fed
        for n, text in enumerate(lines, 1):
            fed = n
            yield n, text.encode(), True

    message_at = None
    for item in Assembler("<stream>", Format.EXEC_JSON).run(decoder.decoded(counted())):
        if isinstance(item, AssistantMessage):
            message_at = fed
            assert not item.final  # released before its turn ended: never an answer
    assert message_at is not None and message_at <= MAX_PENDING + 3
    assert decoder.summary().lines.unreadable == MAX_PENDING + 50


def test_a_retried_stream_error_does_not_fail_a_completed_turn() -> None:
    """Codex prints "Reconnecting…" as a top-level ``error`` too; turn.completed after it proves it
    was retried (a fatal error ends the turn with turn.failed). Shown, not a failure."""
    items, summary = case("transient_error")
    assert summary.run_status is RunStatus.COMPLETED and summary.run_error is None
    assert [n.category for n in items if isinstance(n, Notice)] == ["error"]
    assert [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)] == [("Done after a retry.", True)]


def test_an_error_that_no_turn_end_follows_fails_the_run() -> None:
    items, summary = case("error_then_cut")
    assert summary.run_status is RunStatus.FAILED
    assert summary.run_error == "unexpected status 401 Unauthorized"
    assert not any(m.final for m in items if isinstance(m, AssistantMessage))
    assert [type(i).__name__ for i in items] == ["AssistantMessage", "Notice"]  # source-line order


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
_KEYS = ["type", "item", "id", "msg", "status", "command", "exit_code", "changes", "text", "message", "usage",
         "error", "call_id", "result", "invocation", "info", "prompt", "model", "aggregated_output", "items"]
_TYPES = sorted(
    {"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated",
     "item.completed", "error", "request_user_input", "agent_message", "command_execution", "file_change",
     "mcp_tool_call", "collab_tool_call", "web_search", "todo_list", "plan", "exec_command_begin",
     "exec_command_end", "patch_apply_begin", "patch_apply_end", "token_count", "task_started",
     "task_complete", "mcp_tool_call_end", "plan_update", "turn_aborted"}
)
_shaped = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(_TYPES)},
                          optional={k: _json for k in _KEYS if k != "type"}),
    lambda inner: st.fixed_dictionaries({"type": st.sampled_from(_TYPES)},
                                        optional={"item": inner, "msg": inner, "error": inner, "usage": inner}),
    max_leaves=4,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_shaped | _json, max_size=10), st.booleans())
def test_arbitrary_json_shapes_never_crash(objects: list[object], protocol: bool) -> None:
    """Known event names with values of any JSON type in any field: items or unreadable lines, never
    an exception, and the accounting holds."""
    lines = [(n, json.dumps(o)) for n, o in enumerate(objects, 1)]
    decoder = ExecStreamDecoder(protocol=protocol)
    items = list(stream_items(decoder, lines))
    assert accounting_holds(decoder.summary())
    assert all(isinstance(i.line, int) for i in items)


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "item.completed", "item": {"id": "a", "type": "mcp_tool_call", "result": {"content": 5}}},
        {"id": "0", "msg": {"type": "mcp_tool_call_end", "result": {"Ok": {"content": [1, {"text": 5}]}},
                            "invocation": 3}},
        {"type": "item.completed", "item": {"id": "a", "type": "todo_list", "items": {"a": 1}}},
        {"type": "item.completed", "item": {"id": "a", "type": "file_change", "changes": [{"path": 5, "kind": [1]}]}},
        {"id": "0", "msg": {"type": "patch_apply_begin", "call_id": "c", "changes": {"p": {"update": {"unified_diff": 5}}}}},
        {"id": "0", "msg": {"type": "exec_command_end", "call_id": 5, "command": [1, 2], "duration": {"secs": "x"}}},
        {"id": "0", "msg": {"type": "token_count", "info": {"total_token_usage": []}}},
        {"type": "turn.completed", "usage": {"input_tokens": True}},
        {"type": "item.completed", "item": {"id": ["x"], "type": "reasoning"}},
    ],
)
def test_odd_values_in_known_events(obj: dict[str, Any]) -> None:
    """Values of types no Codex wrote, in events it did: decoded or unreadable, counted once."""
    decoder = ExecStreamDecoder(protocol="msg" in obj)
    list(stream_items(decoder, [(1, json.dumps(obj))]))
    lines = decoder.summary().lines
    assert lines.lines == 1 and accounting_holds(decoder.summary())


@pytest.mark.parametrize("name", CASES)
def test_items_come_out_in_source_line_order(name: str) -> None:
    """Issue 3 "items in order, each with its source line number", on every fixture."""
    items, _summary = case(name)
    lines = [i.line for i in items]
    assert lines == sorted(lines)


def test_an_item_never_completed_keeps_its_place_before_the_answer() -> None:
    """A todo_list started (line 3) and updated (line 4) but never completed was emitted after
    the final answer (line 6); it comes out at its last update, and the answer stays the last item."""
    lines = [
        '{"type":"turn.started"}',
        '{"type":"thread.started","thread_id":"t"}',
        '{"type":"item.started","item":{"id":"p","type":"todo_list","items":[{"text":"a","completed":false}]}}',
        '{"type":"item.updated","item":{"id":"p","type":"todo_list","items":[{"text":"a","completed":true}]}}',
        '{"type":"item.completed","item":{"id":"w","type":"web_search","query":"codex"}}',
        '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"done"}}',
        '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}',
    ]
    items = list(stream_items(ExecStreamDecoder(protocol=False), list(enumerate(lines, 1))))
    assert [(i.line, type(i).__name__) for i in items] == [
        (4, "ToolCallItem"), (5, "ToolCallItem"), (6, "AssistantMessage")]
    assert isinstance(items[-1], AssistantMessage) and items[-1].final


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["done", "later", "never"]), min_size=1, max_size=8), st.randoms())
def test_started_items_never_break_line_order(fates: list[str], rnd: Any) -> None:
    """Items completed at once, completed later (other items finishing in between) or never completed:
    whatever the interleaving, items come out in source-line order, each exactly once."""
    events: list[tuple[str, int]] = []
    for n, fate in enumerate(fates):
        events.append(("completed" if fate == "done" else "started", n))
    closing = [("completed", n) for n, fate in enumerate(fates) if fate == "later"]
    for ev in closing:  # each late completion goes somewhere after its start
        start = events.index(("started", ev[1]))
        events.insert(rnd.randint(start + 1, len(events)), ev)
    lines = ['{"type":"turn.started"}']
    for kind, n in events:
        item = {"id": f"i{n}", "type": "command_execution", "command": f"echo {n}", "aggregated_output": "",
                "exit_code": 0 if kind == "completed" else None,
                "status": "completed" if kind == "completed" else "in_progress"}
        lines.append(json.dumps({"type": f"item.{kind}", "item": item}))
    lines.append('{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"done"}}')
    lines.append('{"type":"turn.completed"}')
    items = list(stream_items(ExecStreamDecoder(protocol=False), list(enumerate(lines, 1))))
    assert [i.line for i in items] == sorted(i.line for i in items)
    commands = sorted(i.call_id for i in items if isinstance(i, ShellCommand))
    assert commands == sorted(f"i{n}" for n in range(len(fates)))
    assert isinstance(items[-1], AssistantMessage) and items[-1].final


@pytest.mark.parametrize("in_turn", [False, True])
def test_a_message_never_completed_is_no_answer(in_turn: bool) -> None:
    """An agent_message started and never completed is shown when its turn (or the stream) ends, and
    never as the answer: not outside a turn, not in a turn that completed."""
    started = '{"type": "item.started", "item": {"id": "i0", "type": "agent_message", "text": "half"}}'
    lines = ['{"type":"turn.started"}', started, '{"type":"turn.completed"}'] if in_turn else [started]
    items = list(stream_items(ExecStreamDecoder(protocol=False), list(enumerate(lines, 1))))
    assert [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)] == [("half", False)]
