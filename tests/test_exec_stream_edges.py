"""``codex exec --json`` streams at their edges: an item printed after its turn ended, a command still
running when its turn ended, a file change that carries no diff. Each fixture is a real 0.171.0
stream (``fixtures/exec_streams``; the first two re-ordered from ``multi_step``, the third verbatim from
``apply_patch_custom``); their goldens are checked by ``test_exec_stream.test_golden``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from transcript_reader import api
from transcript_reader.model import Executed, Notice, PatchItem, ShellCommand
from transcript_reader.present import common

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "exec_streams"


def _items(name: str) -> list:
    return list(api.Transcript(FIXTURES / f"{name}.jsonl").items())


def test_a_command_still_running_when_its_turn_completed_has_an_unknown_exit_and_a_notice() -> None:
    items = _items("running_at_turn_end")
    cmd = next(i for i in items if isinstance(i, ShellCommand) and "calc.add" in i.command)
    assert (cmd.exit_code, cmd.executed, cmd.status) == (None, Executed.UNKNOWN, "in_progress")
    notes = [i for i in items if isinstance(i, Notice) and i.category == "still_running"]
    assert len(notes) == 1
    assert "still running when its turn completed" in notes[0].message and "exit is unknown" in notes[0].message
    assert cmd.command in notes[0].message
    # the notice follows the command it speaks of
    assert items.index(notes[0]) > items.index(cmd)


def test_a_stream_cut_while_a_command_runs_says_the_stream_ended() -> None:
    items = _items("incomplete")
    note = next(i for i in items if isinstance(i, Notice) and i.category == "still_running")
    assert "'make all' was still running when the stream ended" in note.message


def test_an_item_after_turn_completed_gets_a_notice_once() -> None:
    items = _items("after_turn_completed")
    notes = [i for i in items if isinstance(i, Notice) and i.category == "after_turn"]
    # the command's two events (started, completed) after turn.completed: one notice, at the first
    assert len(notes) == 1
    assert notes[0].line == 10 and "item_3 came after turn 1 had ended" in notes[0].message
    cmd = next(i for i in items if isinstance(i, ShellCommand) and "calc.add" in i.command)
    assert cmd.exit_code == 0 and cmd.executed is Executed.YES  # what the stream printed stays read
    # items inside the turn get no such notice
    assert not any(isinstance(i, Notice) for i in items if i.line < 10)


def test_a_file_change_without_a_diff_has_unknown_line_counts() -> None:
    items = _items("file_change_no_diff")
    patch = next(i for i in items if isinstance(i, PatchItem))
    assert [(f.path.rsplit("/", 1)[1], f.added, f.removed) for f in patch.files] == [
        ("NOTES.md", None, None), ("calc.py", None, None)]
    assert [row[2:] for row in common.patch_summary(patch)] == [("?", "?"), ("?", "?")]


def test_unknown_line_counts_are_null_in_json_and_question_marks_on_screen() -> None:
    path = str(FIXTURES / "file_change_no_diff.jsonl")
    out = subprocess.run([sys.executable, "-m", "transcript_reader", "read", path, "--json"],
                         capture_output=True, text=True, check=True).stdout
    files = next(i for i in json.loads(out)["items"] if i["kind"] == "patch")["files"]
    assert [(f["added"], f["removed"]) for f in files] == [(None, None), (None, None)]
    shown = subprocess.run([sys.executable, "-m", "transcript_reader", "show", path],
                           capture_output=True, text=True, check=True).stdout
    assert "calc.py  +? -?" in shown and "+0" not in shown
    md = subprocess.run([sys.executable, "-m", "transcript_reader", "export", path, "--format", "md"],
                        capture_output=True, text=True, check=True).stdout
    assert "+? −?" in md and "+0" not in md
