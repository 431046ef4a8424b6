"""Edge rules of reading that the golden fixtures do not show on their own: the bounded wait behind an
unanswered call, typed errors (strict mode, corrupt zstd, forced formats), empty files, orphan outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import transcript_reader.assembly as assemble
from tests.conftest import TRANSCRIPT_FIXTURES
from transcript_reader import inspect, iter_items, read
from transcript_reader.assembly import rules
from transcript_reader.errors import DecodeError, InvalidArgumentError, UnsupportedFormatError
from transcript_reader.model import Executed, Format, Origin
from transcript_reader.providers.codex.rollout import decode_rollout


def _line(ts: int, typ: str, payload: dict) -> str:
    return json.dumps({"timestamp": f"2026-01-01T00:00:{ts % 60:02d}.000Z", "type": typ, "payload": payload})


def _write(tmp_path: Path, lines: list[str], name: str = "r.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _until_shell_command(it: Any) -> list[Any]:
    """The items of ``it`` up to and including its first shell command (``it`` goes on after it)."""
    seen = []
    for item in it:
        seen.append(item)
        if item.kind.value == "shell_command":
            break
    return seen


def test_an_unanswered_call_holds_back_at_most_max_pending_items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "MAX_PENDING", 5)
    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.80.0"}),
             _line(1, "response_item", {"type": "function_call", "name": "shell_command",
                                        "arguments": json.dumps({"command": "sleep 1"}), "call_id": "c1"})]
    lines += [_line(i, "response_item", {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": f"u{i}"}]}) for i in range(2, 12)]
    lines.append(_line(12, "response_item", {"type": "function_call_output", "call_id": "c1", "output": "late"}))
    it = iter_items(_write(tmp_path, lines))
    seen = _until_shell_command(it)
    # released before the stream ended: the call is settled as it stood (no output yet)
    assert seen[-1].executed is Executed.UNKNOWN and len(seen) < 8  # type: ignore[union-attr]
    rest = list(it)
    assert [i.kind.value for i in rest][-1] == "raw_output"  # the late output still shows, as an orphan


def test_strict_error_carries_path_line_and_reason(tmp_path: Path) -> None:
    p = _write(tmp_path, [_line(0, "session_meta", {"id": "s"}), "{not json", _line(2, "event_msg", {"type": "x"})])
    with pytest.raises(DecodeError) as e:
        read(p, strict=True)
    assert e.value.path == str(p) and e.value.line == 2 and "invalid JSON" in e.value.reason
    r = read(p)  # lenient: counted and shown
    assert r.info is not None and r.info.lines.unreadable == 1
    assert [i.kind.value for i in r.items] == ["unreadable"]


def test_corrupt_zstd_is_a_typed_error(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00garbage" * 10)
    with pytest.raises(UnsupportedFormatError):
        list(iter_items(p, format="rollout"))


def test_empty_file_is_an_empty_transcript(tmp_path: Path) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"")
    info = inspect(p)
    assert info.lines.lines == 0 and info.counts == ()
    p.write_bytes(b"\n\n")
    assert inspect(p).lines.blank == 2


def test_forced_format_must_be_known() -> None:
    with pytest.raises(InvalidArgumentError):
        read(TRANSCRIPT_FIXTURES / "dedupe.jsonl", format="nope")


def test_forcing_a_format_reads_with_that_decoder() -> None:
    info = inspect(TRANSCRIPT_FIXTURES / "early_rust_0_29.jsonl", format="rollout")
    # read as an envelope, the early Rust lines are not envelope lines: reported, never dropped silently
    assert info.lines.lines == 12 and info.lines.decoded < 12
    assert info.lines.lines == (info.lines.decoded + info.lines.known_noise + info.lines.unknown
                                + info.lines.unreadable + info.lines.blank)


def test_an_output_without_its_call_is_shown_and_kept_as_raw_output(tmp_path: Path) -> None:
    p = _write(tmp_path, [_line(0, "response_item", {"type": "function_call_output", "call_id": "gone",
                                                     "output": "orphan text"})])
    items = list(iter_items(p))
    assert [i.kind.value for i in items] == ["notice", "raw_output"]
    assert items[0].category == "orphan_output" and "gone" in items[0].message  # type: ignore[union-attr]
    assert "orphan text" in items[0].message and items[1].call_id == "gone"  # type: ignore[union-attr]


def test_exec_streams_read_through_the_same_api() -> None:
    """Exec streams go to their own decoder (exec_stream.py), whose decode records the one assembler reads;
    the run summary the decoder gives is in inspect."""
    from tests.conftest import FIXTURES

    info = inspect(FIXTURES / "exec_streams" / "cut_last_line.jsonl")
    assert info.format.value == "exec-json" and info.lines.cut_last_line == info.lines.lines
    assert info.run_status == "incomplete"
    info = inspect(FIXTURES / "exec_streams" / "completed.jsonl")
    assert info.run_status == "completed" and info.tokens.source.startswith("sum of turn.completed")


def test_copies_merge_only_when_written_together(tmp_path: Path) -> None:
    """Codex writes its two copies of a message side by side; the same text from the other source far
    later is a new message (and the dedupe pool never grows with repeated texts)."""
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "continue"}]}
    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.40.0"}),
             _line(1, "response_item", user), _line(1, "event_msg", {"type": "user_message", "message": "continue"})]
    lines += [_line(2, "event_msg", {"type": "agent_reasoning", "text": f"r{i}"}) for i in range(40)]
    lines.append(_line(3, "event_msg", {"type": "user_message", "message": "continue"}))
    texts = [i.text for i in iter_items(_write(tmp_path, lines)) if i.kind.value == "user_message"]  # type: ignore[union-attr]
    assert texts == ["continue", "continue"]


def test_long_texts_merge_only_when_equal_whole(tmp_path: Path) -> None:
    """A long text is pooled by its length and ends (``Turns.is_dup``): two copies of it merge, but a
    text of the same length and ends that differs in the middle is a message of its own."""
    head, tail = "a" * 300, "z" * 300

    def answer(text: str) -> list[str]:
        item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
        return [_line(2, "response_item", item), _line(2, "event_msg", {"type": "agent_message", "message": text})]

    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.40.0"}),
             _line(1, "event_msg", {"type": "user_message", "message": "go"})]
    # the response_item copy of one, then the event copy of another text of the same pool, then one's
    lines += answer(head + "one" + tail)[:1] + answer(head + "two" + tail)[1:] + answer(head + "one" + tail)[1:]
    texts = [i.text[300:303] for i in iter_items(_write(tmp_path, lines))  # type: ignore[union-attr]
             if i.kind.value == "assistant_message"]
    assert texts == ["one", "two"]


def test_backlog_release_keeps_a_cells_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "MAX_PENDING", 3)
    cmd = {"type": "item_completed", "turn_id": "t1", "item": {
        "type": "CommandExecution", "id": "exec-1", "command": ["/bin/bash", "-lc", "ls"], "exit_code": 0,
        "aggregated_output": "a\n", "status": "completed"}}
    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.171.0"}),
             _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
             _line(2, "response_item", {"type": "custom_tool_call", "call_id": "c1", "name": "exec",
                                        "input": 'await tools.exec_command({cmd: "ls"});'}),
             _line(3, "event_msg", cmd)]
    lines += [_line(4, "event_msg", {"type": "agent_reasoning", "text": f"r{i}"}) for i in range(10)]
    items = list(iter_items(_write(tmp_path, lines)))
    shell = [i for i in items if i.kind.value == "shell_command"]
    # released before the cell's output: the record matched its entry, nothing lost, nothing claimed "no"
    assert [(s.command, s.executed.value, s.exit_code) for s in shell] == [("ls", "yes", 0)]  # type: ignore[union-attr]
    assert [i.line for i in items] == sorted(i.line for i in items)


def test_script_commands_without_records_run_in_the_turn_cwd(tmp_path: Path) -> None:
    """0.144 cells write no records: an entry's cwd is its ``workdir`` against the turn's cwd (the
    turn_context of the cell's turn), as for a direct call; the whole-script fallback gets none."""
    script = ('await tools.exec_command({cmd: "ls"});\n'
              'await tools.exec_command({cmd: "make", workdir: "sub"});\n'
              'await tools.exec_command({cmd: "pwd", workdir: "/abs"});\n')
    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.144.0"}),
             _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
             _line(2, "turn_context", {"cwd": "/w/pkg", "model": "m", "turn_id": "t1"}),
             _line(3, "response_item", {"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": script}),
             _line(4, "response_item", {"type": "custom_tool_call", "call_id": "c2", "name": "exec",
                                        "input": "const c = pick();\nawait tools.exec_command({cmd: c});\n"})]
    shell = [i for i in iter_items(_write(tmp_path, lines)) if i.kind.value == "shell_command"]
    got = [(s.command, s.cwd, s.executed.value, s.whole_script) for s in shell]  # type: ignore[union-attr]
    assert got[:3] == [("ls", "/w/pkg", "unknown", False), ("make", "/w/pkg/sub", "unknown", False),
                       ("pwd", "/abs", "unknown", False)]
    assert [(g[1], g[3]) for g in got[3:]] == [(None, True)]


def test_a_running_commands_gathered_output_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that kept running gathers the chunks its session's write_stdin calls return
    (head and tail kept, ``RUNNING_OUTPUT_CHARS``), takes the exit the last one reports, and the
    session table is empty once it is settled."""
    monkeypatch.setattr(rules, "RUNNING_OUTPUT_CHARS", 100)
    fc = {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "pytest"}), "call_id": "c0"}
    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.125.0"}),
             _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
             _line(2, "response_item", fc),
             _line(3, "response_item", {"type": "function_call_output", "call_id": "c0", "output":
                                        "Wall time: 1.0 seconds\nProcess running with session ID 9\nOutput:\nSTART\n"})]
    for i in range(1, 21):
        done = i == 20
        hdr = "Process exited with code 1" if done else "Process running with session ID 9"
        body = "1 failed, 2 passed in 0.1s\n" if done else f"chunk {i:02d} " + "x" * 40 + "\n"
        lines += [_line(4, "response_item", {"type": "function_call", "name": "write_stdin", "call_id": f"c{i}",
                                             "arguments": json.dumps({"session_id": 9, "chars": ""})}),
                  _line(5, "response_item", {"type": "function_call_output", "call_id": f"c{i}",
                                             "output": f"Wall time: 1.0 seconds\n{hdr}\nOutput:\n{body}"})]
    lines.append(_line(6, "event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": None}))
    asm = assemble.Assembler("r.jsonl", Format.ROLLOUT)
    decoded = [decode_rollout(json.loads(text), n) for n, text in enumerate(lines, 1)]
    items = list(asm.run(decoded))
    sc = next(i for i in items if i.kind.value == "shell_command")
    assert (sc.exit_code, sc.status) == (1, "failed")  # type: ignore[union-attr]
    assert sc.output.startswith("START\n") and sc.output.endswith("1 failed, 2 passed in 0.1s\n")  # type: ignore[union-attr]
    assert "characters omitted" in sc.output and len(sc.output) < 200  # type: ignore[union-attr,arg-type]
    assert sc.output_chars == 6 + 19 * 50 + 27  # type: ignore[union-attr]
    tr = next(i for i in items if i.kind.value == "test_run")
    assert (tr.result.value, tr.failed, tr.passed) == ("fail", 1, 2)  # type: ignore[union-attr]
    assert asm.calls.sessions == {} and asm.calls.calls == {}
    assert [i.line for i in items] == sorted(i.line for i in items)


@pytest.mark.parametrize("cut", ["mid_frame", "frame_boundary", "mid_line"])
def test_a_truncated_zstd_file_is_reported_not_read_as_complete(tmp_path: Path, cut: str) -> None:
    """Zstandard reports a .zst cut inside a frame as a plain EOF. Lenient: one unreadable
    "zstd stream ends early" entry, counted in the accounting; strict: a DecodeError naming it."""
    import zstandard

    text = (TRANSCRIPT_FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    lines = text.splitlines(keepends=True)
    c = zstandard.ZstdCompressor()
    head, tail = c.compress(b"".join(lines[:6])), c.compress(b"".join(lines[6:]))
    whole = head + tail
    data = {"mid_frame": whole[: len(head) + len(tail) // 2],  # what of frame 2 was cut is lost
            "frame_boundary": head + tail[:5],  # frame 1 ends at a line end: only the check tells
            "mid_line": c.compress(text[: len(text) - 40])[:-4]}[cut]
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(data)
    r = read(p)
    assert r.info is not None
    bad = [i for i in r.items if i.kind.value == "unreadable"]
    assert len(bad) == 1 and bad[0].reason.startswith("zstd stream ends early")  # type: ignore[union-attr]
    acc = r.info.lines
    assert acc.unreadable == 1 and acc.cut_last_line is None
    assert acc.lines == acc.decoded + acc.known_noise + acc.unknown + acc.unreadable + acc.blank
    with pytest.raises(DecodeError) as e:
        read(p, strict=True)
    assert "zstd stream ends early" in e.value.reason and e.value.path == str(p)
    p.write_bytes(whole)  # the same frames, whole: nothing unreadable
    assert read(p).info.lines.unreadable == 0  # type: ignore[union-attr]


def test_a_truncated_zstd_exec_stream_is_a_typed_error(tmp_path: Path) -> None:
    import zstandard

    lines = (TRANSCRIPT_FIXTURES.parent / "exec_streams" / "completed.jsonl").read_bytes().splitlines(keepends=True)
    c = zstandard.ZstdCompressor()
    p = tmp_path / "e.jsonl.zst"
    p.write_bytes(c.compress(b"".join(lines[:2])) + c.compress(b"".join(lines[2:]))[:-4])
    with pytest.raises(UnsupportedFormatError) as e:
        read(p)
    assert "zstd stream ends early" in e.value.reason


def test_a_running_command_holds_back_at_most_max_pending_items(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A command left running waits for its end event in its place, but no deeper than
    ``MAX_PENDING`` items: then it is settled as it stands (running, exit unknown) and released; when
    its end event comes after all, a notice tells its exit code instead of dropping it."""
    monkeypatch.setattr(rules, "MAX_PENDING", 5)
    fc = {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "npm run dev"}),
          "call_id": "c1"}
    lines = [_line(0, "session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.125.0"}),
             _line(1, "response_item", fc),
             _line(2, "response_item", {"type": "function_call_output", "call_id": "c1", "output":
                                        "Wall time: 1.0 seconds\nProcess running with session ID 5\nOutput:\nready\n"})]
    lines += [_line(3, "event_msg", {"type": "agent_reasoning", "text": f"r{i}"}) for i in range(10)]
    lines.append(_line(4, "event_msg", {"type": "exec_command_end", "call_id": "c1", "exit_code": 7,
                                        "aggregated_output": "ready\n", "status": "completed"}))
    it = iter_items(_write(tmp_path, lines))
    seen = _until_shell_command(it)
    assert (seen[-1].status, seen[-1].exit_code) == ("running", None)  # type: ignore[union-attr]
    assert len(seen) == 1
    rest = list(it)
    assert len(rest) == 12 and not [i for i in rest if i.kind.value == "shell_command"]
    late = rest[-1]
    assert late.kind.value == "notice" and late.category == "late_result"  # type: ignore[union-attr]
    assert "line 2 (npm run dev) ended with exit code 7" in late.message  # type: ignore[union-attr]


def test_duration_needs_two_timestamped_lines(tmp_path: Path) -> None:
    """One timestamp (0.1.x, 0.20, 0.29 record only the session's) measures nothing: unknown, not
    0 s; two lines stamped with the same instant are an instantaneous session, a measured 0."""
    msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    one = _write(tmp_path, [_line(5, "session_meta", {"id": "s", "cwd": "/w"}),
                            json.dumps({"type": "response_item", "payload": msg})], "one.jsonl")
    info = inspect(one)
    assert info.first_timestamp == info.last_timestamp == "2026-01-01T00:00:05.000Z"
    assert info.duration_s is None
    same = _write(tmp_path, [_line(5, "session_meta", {"id": "s", "cwd": "/w"}), _line(5, "response_item", msg)],
                  "same.jsonl")
    assert inspect(same).duration_s == 0.0
    apart = _write(tmp_path, [_line(5, "session_meta", {"id": "s", "cwd": "/w"}), _line(9, "response_item", msg)],
                   "apart.jsonl")
    assert inspect(apart).duration_s == 4.0


def test_duration_of_the_early_rust_and_ts_cli_fixtures_is_unknown() -> None:
    """The committed 0.29 and 0.1.x fixtures hold a single timestamp each."""
    for name in ("early_rust_0_29.jsonl", "ts_cli_0_1.json"):
        info = inspect(TRANSCRIPT_FIXTURES / name)
        assert info.first_timestamp is not None and info.duration_s is None, name


@pytest.mark.parametrize("last_item", [False, True])
def test_the_final_answer_rule_is_the_turn_records_flag(last_item: bool) -> None:
    """One sequence of records, two rules, decided only by the flag the decoder sets on its turn records:
    a rollout's completed turn answers with its last message even when a command followed it; in an
    exec stream's turn the answer must be the turn's last item, so the command makes it commentary."""
    from transcript_reader.assembly.assembler import Assembler
    from transcript_reader.model import AssistantMessage
    from transcript_reader.providers.records import (
        DECODED,
        Call,
        Decoded,
        ExecEnd,
        Message,
        TurnEnd,
        TurnStart,
    )

    origin = Origin.STREAM if last_item else Origin.DIRECT
    end = ExecEnd("c1", "ls", None, None, 0, "a\n", None, "completed", record=False)
    lines = [
        Decoded(1, DECODED, records=(TurnStart("t1", last_item_answers=last_item),)),
        Decoded(2, DECODED, records=(Message(role="assistant", text="done", src="event"),)),
        Decoded(3, DECODED, records=(Call(kind="shell", tool="shell", call_id="c1", command="ls", origin=origin,
                                          end=end if last_item else None),)),
        Decoded(4, DECODED, records=() if last_item else (end,)),
        Decoded(5, DECODED, records=(TurnEnd("t1", last_item_answers=last_item),)),
    ]
    items = list(Assembler("<records>", Format.EXEC_JSON if last_item else Format.ROLLOUT).run(lines))
    assert [(m.text, m.final) for m in items if isinstance(m, AssistantMessage)] == [("done", not last_item)]
