"""FileChange.diff: what Codex recorded for each file, bounded. The golden fixture ``patch_diffs`` pins
the authority order (recorded unified_diff/content first, else the apply_patch hunk); these tests pin the
hunk split on odd patch texts and the per-file cap (a cut diff says so)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from transcript_reader import read
from transcript_reader.model import PatchItem
from transcript_reader.providers.codex.patch_text import MAX_DIFF_CHARS, cap_diff, content_diff, patch_hunks


def test_hunks_split_per_file_and_skip_deletes_and_move_lines() -> None:
    text = ("<<'EOF'\n*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ ctx\n-x\n+y\n"
            "*** Delete File: gone.py\n*** Add File: new.py\n+hello\n*** End Patch\nEOF\n")
    assert patch_hunks(text) == {"a.py": "@@ ctx\n-x\n+y\n", "new.py": "+hello\n"}


def test_a_path_named_twice_keeps_both_hunks() -> None:
    text = ("*** Begin Patch\n*** Update File: a.py\n@@\n-1\n+2\n*** Update File: a.py\n@@\n-3\n+4\n"
            "*** End Patch\n")
    assert patch_hunks(text) == {"a.py": "@@\n-1\n+2\n@@\n-3\n+4\n"}


def test_no_patch_text_gives_no_hunks() -> None:
    assert patch_hunks(None) == {}
    assert patch_hunks("not a patch") == {}


def test_recorded_content_reads_as_diff_lines() -> None:
    assert content_diff("a\nb\n", "add") == "+a\n+b\n"
    assert content_diff("a\n", "delete") == "-a\n"
    assert content_diff("", "delete") is None


def test_a_long_diff_is_cut_at_a_line_end_and_says_so() -> None:
    diff = "".join(f"+line {i}\n" for i in range(20000))
    cut = cap_diff(diff)
    assert cut is not None and len(cut) < MAX_DIFF_CHARS + 100
    body, _, last = cut.rstrip("\n").rpartition("\n")
    assert diff.startswith(body + "\n")
    assert last.startswith("[… diff cut: ") and str(len(diff) - len(body) - 1) in last
    assert cap_diff("+short\n") == "+short\n"


def test_a_huge_patch_is_read_with_its_diff_capped(tmp_path: Path) -> None:
    body = "".join(f"+row {i}\n" for i in range(30000))
    patch = f"*** Begin Patch\n*** Add File: big.txt\n{body}*** End Patch\n"
    lines = [
        {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
         "payload": {"id": "s", "cwd": "/w", "cli_version": "0.130.0"}},
        {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item",
         "payload": {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}},
        {"timestamp": "2026-01-01T00:00:02.000Z", "type": "response_item",
         "payload": {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."}},
    ]
    p = tmp_path / "r.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    patches = [i for i in read(p, projection="file_changes").items if isinstance(i, PatchItem)]
    assert len(patches) == 1
    (f,) = patches[0].files
    assert f.added == 30000  # the counts come from the whole patch, only the text is cut
    assert f.diff is not None and f.diff.startswith("+row 0\n+row 1\n")
    assert len(f.diff) < MAX_DIFF_CHARS + 100 and "diff cut" in f.diff.splitlines()[-1]


@pytest.mark.parametrize(
    ("changes", "want"),
    [
        # a removed "-- comment" / "---" line and an added "++i;" line are content inside a hunk
        ({"a.sql": {"type": "update", "unified_diff": "@@ -1,2 +1,2 @@\n--- note\n-x\n+++i;\n+y\n"}},
         [("a.sql", "update", None, 2, 2)]),
        # a file header before the first hunk is not content
        ({"a": {"type": "update", "unified_diff": "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n"}},
         [("a", "update", None, 1, 1)]),
        # only an operation names the one key of the 0.40 form; an untyped diff is an update
        ({"a.txt": {"unified_diff": "@@\n-a\n+b\n"}}, [("a.txt", "update", None, 1, 1)]),
        ({"a": {"update": {"unified_diff": "@@\n-x\n+y\n", "move_path": "z"}}}, [("a", "update", "z", 1, 1)]),
        # the list form's kind may carry the move target
        ([{"path": "p", "kind": {"type": "update", "move_path": "q"}}], [("p", "update", "q", 0, 0)]),
        # lines are split at "\n" only: a form feed or U+2028 inside a line is no line break
        ({"f.c": {"type": "add", "content": "a\u2028b\x0cc\nd\n"}}, [("f.c", "add", None, 2, 0)]),
    ],
)
def test_file_changes_shapes_and_counts(changes: Any, want: list[tuple[Any, ...]]) -> None:
    from transcript_reader.providers.codex.patch_text import file_changes

    got = [(f.path, f.op, f.move_to, f.added, f.removed) for f in file_changes(changes)]
    assert got == want
