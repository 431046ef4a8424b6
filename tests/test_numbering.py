"""A rollout's record numbering (``ordinal``) read for what its breaks say (``providers.codex.numbering``):
two sessions interleaved line by line in one file are told apart (the file reads as its first session,
the other's lines set aside and said, its prompts named), and a gap in the numbering is a notice naming
the missing records, never a contradiction nor a "not run".

Fixtures: ``interleaved_sessions`` (the real 0.171.0 ``hello`` and ``shell_exec_command`` recordings,
line by line), ``numbering_gap`` (the real 0.171.0 ``code_mode_only`` recording without its record of
``cat calc.py``, ordinal 18); their goldens are checked by ``test_golden``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from transcript_reader import api
from transcript_reader.model import AssistantMessage, Executed, Notice, ShellCommand, UserMessage
from transcript_reader.providers.codex.numbering import MAX_GAP_NOTICES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
INTERLEAVED = FIXTURES / "interleaved_sessions.jsonl"
GAP = FIXTURES / "numbering_gap.jsonl"
REALCODEX = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "realcodex" / "0.171.0"
FIRST, SECOND = "01a22d9c-0b64-7760-ab6e-8ce6ad3eeddb", "01a22d9c-14b3-7633-a8fe-1e862445864d"


def _notices(items: list, category: str) -> list[Notice]:
    return [i for i in items if isinstance(i, Notice) and i.category == category]


def _shape(items: list) -> list[tuple[str, str]]:
    """Items without their line numbers (the same session read from two files)."""
    return [(i.kind.value, getattr(i, "text", "") or getattr(i, "command", "")) for i in items
            if not isinstance(i, Notice)]


def test_interleaved_sessions_read_as_the_first_with_the_second_said() -> None:
    t = api.Transcript(INTERLEAVED)
    items = list(t.items())
    info = t.info()
    assert info.session_id == FIRST
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["say hello"]
    assert [i.text for i in items if isinstance(i, AssistantMessage) and i.final] == ["Hello from the mock model."]
    assert not any(isinstance(i, ShellCommand) for i in items)  # the second session's command is not this one's
    start, closing = _notices(items, "other_session")
    assert start.line == 2 and SECOND in start.message and "numbering starts again at 0" in start.message
    # the second session's prompt is never lost: the closing notice names it, with its lines
    assert f"session {SECOND}: 21 lines from line 2, 1 prompt(s): 'list files'" in closing.message
    lines = info.lines
    assert dict(lines.noise_types)["other_session"] == 21
    assert lines.lines == 35 == lines.decoded + lines.known_noise + lines.unknown + lines.unreadable + lines.blank
    assert info.tokens is not None and info.tokens.total == 9515  # the first session's own usage only


def test_the_order_within_each_pair_of_lines_does_not_change_the_reading(tmp_path: Path) -> None:
    lines = INTERLEAVED.read_text().splitlines(keepends=True)
    # after the two headers the lines alternate first, second; swap each pair: second, first
    swapped = lines[:2]
    rest = lines[2:28]
    for k in range(0, len(rest), 2):
        swapped += [rest[k + 1], rest[k]]
    swapped += lines[28:]
    p = tmp_path / "swapped.jsonl"
    p.write_text("".join(swapped))
    assert _shape(list(api.Transcript(p).items())) == _shape(list(api.Transcript(INTERLEAVED).items()))
    assert api.Transcript(p).info().tokens.total == 9515  # type: ignore[union-attr]


@pytest.mark.skipif(not REALCODEX.is_dir(), reason="needs ../shared/corpus/realcodex (the real recordings)")
def test_the_first_session_reads_as_its_own_recording_does() -> None:
    alone = api.Transcript(REALCODEX / "hello.rollout.jsonl")
    mixed = api.Transcript(INTERLEAVED)
    assert _shape(list(mixed.items())) == _shape(list(alone.items()))
    assert mixed.info().tokens == alone.info().tokens


def _rollout(tmp_path: Path, ordinals: list[int | None], header_at: dict[int, str] | None = None) -> Path:
    """A rollout of user messages numbered ``ordinals`` (None: no number), headers where asked."""
    header_at = {0: "s-one"} if header_at is None else header_at
    out = []
    for k, o in enumerate(ordinals):
        obj: dict = {"timestamp": f"2026-01-01T00:00:{k:02d}.000Z"}
        if o is not None:
            obj["ordinal"] = o
        if k in header_at:
            obj |= {"type": "session_meta", "payload": {"id": header_at[k], "cwd": "/w", "cli_version": "0.171.0"}}
        else:
            obj |= {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                         "content": [{"type": "input_text", "text": f"m{k}"}]}}
        out.append(json.dumps(obj))
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(out) + "\n")
    return p


def test_a_gap_names_the_missing_records_and_is_no_contradiction() -> None:
    items = list(api.Transcript(GAP).items())
    (gap,) = _notices(items, "gap")
    assert gap.message.startswith("record numbered 18 is missing from this file (the numbering goes from 17 to 19")
    cat = next(i for i in items if isinstance(i, ShellCommand) and i.command == "cat calc.py")
    assert cat.executed is Executed.UNKNOWN and cat.exit_code is None
    assert not _notices(items, "contradiction")


def test_without_the_gap_the_same_missing_record_is_a_contradiction(tmp_path: Path) -> None:
    """The witness that the gap is what changes the reading: numbered without a break, the file says
    the record was never written."""
    out = []
    for k, line in enumerate(GAP.read_text().splitlines()):
        obj = json.loads(line)
        obj["ordinal"] = k
        out.append(json.dumps(obj))
    p = tmp_path / "renumbered.jsonl"
    p.write_text("\n".join(out) + "\n")
    items = list(api.Transcript(p).items())
    assert not _notices(items, "gap")
    assert "'cat calc.py'" in _notices(items, "contradiction")[0].message


def test_a_file_without_its_start_says_so(tmp_path: Path) -> None:
    items = list(api.Transcript(_rollout(tmp_path, [8, 9, 10], header_at={})).items())
    (gap,) = _notices(items, "gap")
    assert gap.line == 1 and "records numbered 0–7 (8) are not in this file" in gap.message


def test_numbers_that_repeat_or_go_back_without_a_header_are_not_a_gap(tmp_path: Path) -> None:
    items = list(api.Transcript(_rollout(tmp_path, [0, 1, 2, 2, 3, 1, 4, None, 5])).items())
    assert not _notices(items, "gap") and not _notices(items, "other_session")


def test_a_header_that_goes_on_with_the_numbering_is_a_copy_not_another_session(tmp_path: Path) -> None:
    # a fork's copy of its parent's history is written with the fork's own numbering
    items = list(api.Transcript(_rollout(tmp_path, [0, 1, 2, 3, 4], header_at={0: "s-one", 3: "s-parent"})).items())
    assert not _notices(items, "other_session")
    assert any("header of another session (s-parent)" in n.message for n in _notices(items, "fork"))


def test_past_the_limit_gaps_are_counted_in_one_notice(tmp_path: Path) -> None:
    ordinals = [0, *range(2, 2 * (MAX_GAP_NOTICES + 10) + 2, 2)]  # a gap before every line
    items = list(api.Transcript(_rollout(tmp_path, ordinals)).items())
    gaps = _notices(items, "gap")
    assert len(gaps) == MAX_GAP_NOTICES + 1
    assert gaps[-1].message.startswith("10 more gaps in the record numbering were not said one by one: 10 records")
    assert "60 records missing in all, in 60 gaps" in gaps[-1].message


def test_a_reading_that_skips_lines_says_no_gap() -> None:
    res = api.read(GAP, projection="final")
    assert not [i for i in res.items if isinstance(i, Notice) and i.category == "gap"]
    assert [i.text for i in res.items if isinstance(i, AssistantMessage)] == [
        "Listed the files, read calc.py and fixed `add` with apply_patch inside one code-mode exec cell."]


def test_a_prompt_of_the_second_session_is_named_even_when_it_writes_many(tmp_path: Path) -> None:
    # two sessions whose numbering runs apart: each line goes with the session it continues
    ordinals = [0, 1, 2, 0, 3, 1, 4, 2, 5, 3]
    p = _rollout(tmp_path, ordinals, header_at={0: "s-one", 3: "s-two"})
    items = list(api.Transcript(p).items())
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["m1", "m2", "m4", "m6", "m8"]
    closing = _notices(items, "other_session")[-1]
    assert "session s-two: 4 lines from line 4, 3 prompt(s): 'm5'; 'm7'; 'm9'" in closing.message


def test_a_claude_code_file_history_delta_line_is_known_noise(tmp_path: Path) -> None:
    """Claude Code's ``file-history-delta`` bookkeeping line is counted as known noise, not unknown."""
    head = (Path(__file__).resolve().parent.parent / "fixtures" / "claude" / "transcripts"
            / "handmade_tools.jsonl").read_text().splitlines()[:3]
    delta = {"type": "file-history-delta", "messageId": "u002", "snapshot": {"trackedFileBackups": {}}}
    p = tmp_path / "claude.jsonl"
    p.write_text("\n".join([*head, json.dumps(delta)]) + "\n")
    t = api.Transcript(p)
    list(t.items())
    lines = t.info().lines
    assert (lines.unknown, dict(lines.noise_types).get("file-history-delta")) == (0, 1)
