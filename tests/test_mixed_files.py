"""A file that mixes wire shapes reads every well-formed line by its own shape (one line classifier,
``providers.codex.sniff``; a format vote over the first lines): a single stray line never decides a
file, and no well-formed line of another shape is lost as ``unknown``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests.conftest import FIXTURES, TRANSCRIPT_FIXTURES
from transcript_reader import api
from transcript_reader.model import Format, Notice, PatchItem, ShellCommand, UserMessage
from transcript_reader.providers import sniff_format
from transcript_reader.sessions.discovery import read_entry

#: An intact 0.171 rollout written by the real Codex CLI (35 lines).
ROLLOUT_0171 = (FIXTURES / "codex_home" / "sessions" / "2026" / "11" / "30"
                / "rollout-2026-11-30T17-59-09-01a22d9c-5471-7953-942f-93603d8b9241.jsonl")
EARLY_RUST = TRANSCRIPT_FIXTURES / "early_rust_0_29.jsonl"
STRAY = b'{"type":"message"}\n'


def _shifted(items: list, by: int) -> list:
    return [dataclasses.replace(i, line=i.line + by) for i in items]


def test_a_stray_line_before_an_intact_rollout_decides_nothing(tmp_path: Path) -> None:
    mixed = tmp_path / "rollout-stray.jsonl"
    mixed.write_bytes(STRAY + ROLLOUT_0171.read_bytes())
    assert sniff_format(mixed) is Format.ROLLOUT
    want = list(api.iter_items(ROLLOUT_0171))
    got = list(api.iter_items(mixed))
    # the stray line is read as what it is (an early-Rust bare item: an empty user message), every
    # other line exactly as in the intact file
    assert [i for i in got if i.line > 1] == _shifted(want, 1)
    info, intact = api.inspect(mixed), api.inspect(ROLLOUT_0171)
    assert info.format is Format.ROLLOUT and info.session_id == intact.session_id
    assert info.lines.unknown == intact.lines.unknown == 0
    assert info.lines.lines == intact.lines.lines + 1
    assert info.tokens == intact.tokens
    head = read_entry(mixed, False, {}).head
    assert head.format is Format.ROLLOUT and head.session_id == intact.session_id
    assert head.title == read_entry(ROLLOUT_0171, False, {}).head.title


def test_early_rust_lines_then_a_resumed_rollout_read_each_by_their_shape(tmp_path: Path) -> None:
    mixed = tmp_path / "rollout-early-then-envelope.jsonl"
    early = EARLY_RUST.read_bytes()
    mixed.write_bytes(early + ROLLOUT_0171.read_bytes())
    n_early = early.count(b"\n")
    got = list(api.iter_items(mixed))
    want_late = _shifted(list(api.iter_items(ROLLOUT_0171)), n_early)
    late = [i for i in got if i.line > n_early]
    # the envelope lines after the early ones are rollout lines, not unknown items: every prompt,
    # command and patch of the second part is there (its session_meta, another session's header, is
    # marked with a notice where it starts)
    def facts(items: list) -> list:
        return [(type(i).__name__, i.line, getattr(i, "text", None), getattr(i, "command", None),
                 getattr(i, "exit_code", None)) for i in items
                if isinstance(i, UserMessage | ShellCommand | PatchItem)]

    assert facts(late) == facts(want_late) and len(facts(late)) >= 3
    assert any(isinstance(i, Notice) and i.line == n_early + 1 for i in late)
    info = api.inspect(mixed)
    assert info.lines.unknown == 0 and info.lines.unreadable == 0


EXEC_0171 = FIXTURES / "codex_home" / "exec_streams" / "0.171.0-multi_step.exec.jsonl"
EXEC_040 = FIXTURES / "codex_home" / "exec_streams" / "0.40.0-multi_step.exec.jsonl"


def test_a_rollout_followed_by_an_exec_stream_reads_both(tmp_path: Path) -> None:
    for stream in (EXEC_0171, EXEC_040):
        mixed = tmp_path / f"rollout-then-{stream.name}"
        head = ROLLOUT_0171.read_bytes()
        mixed.write_bytes(head + stream.read_bytes())
        n = head.count(b"\n")
        assert sniff_format(mixed) is Format.ROLLOUT
        got = list(api.iter_items(mixed))
        # the rollout part exactly as alone; the exec part as the exec stream read alone (the same
        # decoder and the same assembler), each line by its own shape
        assert [i for i in got if i.line <= n] == list(api.iter_items(ROLLOUT_0171))
        alone = list(api.iter_items(stream))
        assert [i for i in got if i.line > n] == _shifted(alone, n)
        assert any(isinstance(i, ShellCommand) for i in alone)
        info = api.inspect(mixed)
        assert info.lines.unknown == 0 and info.lines.unreadable == 0
        assert info.lines.lines == n + stream.read_bytes().count(b"\n")
        assert info.session_id == api.inspect(ROLLOUT_0171).session_id


def _rollout_line(ts: str, kind: str, payload: dict) -> bytes:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}).encode() + b"\n"


#: A short rollout (fewer lines than the vote's quorum): a prompt, a command and its output, an answer.
SHORT_ROLLOUT = b"".join([
    _rollout_line("2026-11-30T10:00:00.000Z", "session_meta",
                  {"id": "0199bbbb-0000-7000-8000-00000000000a", "cwd": "/w", "cli_version": "0.171.0"}),
    _rollout_line("2026-11-30T10:00:01.000Z", "response_item",
                  {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]}),
    _rollout_line("2026-11-30T10:00:02.000Z", "response_item",
                  {"type": "function_call", "name": "shell", "call_id": "c1",
                   "arguments": json.dumps({"command": ["bash", "-lc", "ls -la"]})}),
    _rollout_line("2026-11-30T10:00:03.000Z", "response_item",
                  {"type": "function_call_output", "call_id": "c1", "output": "a\nb\n"}),
    _rollout_line("2026-11-30T10:00:04.000Z", "response_item",
                  {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a and b"}]}),
])


def test_a_short_rollout_then_a_long_exec_stream_reads_both(tmp_path: Path) -> None:
    """The vote names the exec stream (it has most of the first lines), and the rollout's lines are still
    read as rollout lines: its prompt and command are there as when the rollout is read alone."""
    stream = EXEC_0171.read_bytes() * 4  # 44 lines: four runs of the same thread appended
    alone_stream = tmp_path / "stream.exec.jsonl"
    alone_stream.write_bytes(stream)
    alone_rollout = tmp_path / "rollout-short.jsonl"
    alone_rollout.write_bytes(SHORT_ROLLOUT)
    mixed = tmp_path / "rollout-short-then-exec.jsonl"
    mixed.write_bytes(SHORT_ROLLOUT + stream)
    n = SHORT_ROLLOUT.count(b"\n")
    assert sniff_format(mixed) is Format.EXEC_JSON
    got = list(api.iter_items(mixed))
    want = list(api.iter_items(alone_rollout))
    assert [i for i in got if i.line <= n] == want
    assert [(i.text, i.line) for i in want if isinstance(i, UserMessage)] == [("list the files", 2)]
    assert [(i.command, i.line) for i in want if isinstance(i, ShellCommand)] == [("ls -la", 3)]
    assert [i for i in got if i.line > n] == _shifted(list(api.iter_items(alone_stream)), n)
    info = api.inspect(mixed)
    assert info.lines.unknown == 0 and info.lines.unreadable == 0
    assert info.lines.lines == n + stream.count(b"\n")
    # the session is the rollout's (its header); the stream's thread id names no other session
    assert info.session_id == "0199bbbb-0000-7000-8000-00000000000a"
    assert not any(isinstance(i, Notice) and i.category == "fork" for i in got)
