"""Forks and forked sub-agents: Codex copies the parent's rollout items, its ``session_meta`` included,
into the new session's file (codex-rs ``InitialHistory::Forked``, persisted as-is). Those items were
done in the parent; the reader marks where the copy starts, and where it ends when Codex marks it
(a forked sub-agent's ``spawn_agent`` output), and never lets the parent's header overwrite this
session's figures."""

from __future__ import annotations

from pathlib import Path

from transcript_reader import inspect, read

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def _notices(name: str) -> list[tuple[int, str]]:
    return [(i.line, i.message) for i in read(FIXTURES / name).items if i.kind == "notice"]


def test_a_fork_marks_where_the_replayed_history_starts() -> None:
    notices = _notices("forked_session.jsonl")
    assert len(notices) == 1
    line, message = notices[0]
    assert line == 2  # the parent's header, copied in
    assert "00000000-0000-7000-8000-0000000000b1" in message and "forked from" in message


def test_the_parent_header_does_not_become_this_sessions() -> None:
    info = inspect(FIXTURES / "forked_session.jsonl")
    assert info.session_id == "00000000-0000-7000-8000-0000000000b2"
    assert info.forked_from_id == "00000000-0000-7000-8000-0000000000b1"
    assert info.first_timestamp == "2026-03-01T00:00:10.000Z"  # the fork's own header, not the parent's


def test_a_forked_subagent_marks_both_ends_of_the_copy() -> None:
    items = read(FIXTURES / "forked_subagent.jsonl").items
    kinds = [(i.kind, i.line) for i in items]
    start = next(i for i in items if i.kind == "notice" and "starts here" in i.message)
    end = next(i for i in items if i.kind == "notice" and "own work starts here" in i.message)
    assert start.line == 2 and end.line == 8, kinds
    own = [i.command for i in items if i.kind == "shell_command" and i.line > end.line]
    replayed = [i.command for i in items if i.kind == "shell_command" and i.line < end.line]
    assert own == ["make LDFLAGS=-lm"] and replayed == ["make"]


def test_a_header_without_id_does_not_take_the_parents() -> None:
    """This file's own session_meta has no id; the copied parent header must not lend it one."""
    info = inspect(FIXTURES / "forked_header_without_id.jsonl")
    assert info.session_id is None
    assert info.forked_from_id == "00000000-0000-7000-8000-00000000000b"
    assert info.cwd == "/own"
    notices = _notices("forked_header_without_id.jsonl")
    assert len(notices) == 1 and "00000000-0000-7000-8000-00000000000b" in notices[0][1]


def test_a_fork_of_a_forked_subagent_ends_only_the_inner_copy() -> None:
    """D is forked from C, a sub-agent forked from P. P's hand-off ends P's copy; what follows is
    C's work, still replayed into D, not D's own."""
    notices = _notices("forked_nested.jsonl")
    end = next(m for _, m in notices if m.startswith("end of the history"))
    assert "00000000-0000-7000-8000-00000000000b" in end
    assert "the work of session 00000000-0000-7000-8000-00000000000c (replayed too) follows" in end
    assert "this session's own work" not in end
