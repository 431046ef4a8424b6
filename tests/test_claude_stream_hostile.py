"""A Claude Code stream-json output that is cut, damaged or hostile: every line is accounted for, one bad
line costs that line only, a run that never ended is never an empty success, and nothing raises past a
typed error. Then the commands a person runs on such a file by path (``read``, ``show``, ``inspect``,
``export``), as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from transcript_reader.api import Transcript
from transcript_reader.model import AssistantMessage, Format, ShellCommand, UserMessage

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "fixtures" / "claude" / "recorded" / "2.1.332"
STREAM = RECORDED / "task_replay.stream.jsonl"

#: Lines no stream carries, each of which must cost exactly itself.
BAD_LINES = [
    b"not json at all",
    b"[1, 2, 3]",
    b'"a string"',
    b'{"type": 5, "session_id": "s"}',
    b'{"session_id": "s"}',
    b'{"type": "user", "message": "not an object", "session_id": "s"}',
    b'{"type": "assistant", "message": {"content": "text, not blocks"}, "session_id": "s", "parent_tool_use_id": 7}',
    b'{"type": "assistant", "message": {"content": [{"type": "tool_use"}, 3, null]}, "session_id": "s"}',
    b'{"type": "system", "subtype": null, "session_id": "s"}',
    b'{"type": "system", "subtype": "task_notification", "status": [], "session_id": "s"}',
    b'{"type": "stream_event", "event": {}, "session_id": "s"}',
    b'{"type": "some_future_event", "session_id": "s"}',
    b'{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": {}}]}, "session_id": "s"}',
    b"\xff\xfe\x00\x01",
    b'{"type": "user", "message": {"content": [{"type": "text", "text": "x"}]}, "session_id": "s", "parent_tool_use_id": "toolu_x"}',
]


def _facts(path: Path) -> tuple[list[Any], Any]:
    t = Transcript(path)
    items = list(t.items())
    return items, t.info()


def _commands(items: list[Any]) -> list[tuple[str, int | None]]:
    return [(i.command, i.exit_code) for i in items if isinstance(i, ShellCommand)]


def _answers(items: list[Any]) -> list[str]:
    return [i.text for i in items if isinstance(i, AssistantMessage) and i.final]


def _prompts(items: list[Any]) -> list[str]:
    return [i.text for i in items if isinstance(i, UserMessage)]


def test_one_bad_line_costs_one_line(tmp_path: Path) -> None:
    """Each bad line, put between every two lines of a real stream, leaves every command, exit code,
    prompt and answer of the other lines as they were, and the accounting total."""
    lines = STREAM.read_bytes().splitlines(keepends=True)
    items, info = _facts(STREAM)
    want = (_commands(items), _answers(items), _prompts(items), info.tokens)
    assert want[0] and want[1] and want[2]
    path = tmp_path / "damaged.jsonl"
    for bad in BAD_LINES:
        for at in range(1, len(lines)):
            path.write_bytes(b"".join(lines[:at]) + bad + b"\n" + b"".join(lines[at:]))
            got_items, got = _facts(path)
            assert got.format is Format.CLAUDE_STREAM
            assert (_commands(got_items), _answers(got_items), _prompts(got_items), got.tokens) == want, (bad, at)
            acc = got.lines
            assert acc.lines == len(lines) + 1
            assert acc.lines == acc.decoded + acc.known_noise + acc.unknown + acc.unreadable + acc.blank


def test_a_bad_character_costs_that_character(tmp_path: Path) -> None:
    raw = STREAM.read_bytes().replace(b"have a sub-agent count", b"have a sub-agent \xffcount", 1)
    path = tmp_path / "bad_char.jsonl"
    path.write_bytes(raw)
    items, info = _facts(path)
    assert _prompts(items) == ["have a sub-agent \ufffdcount the lines of hello.txt, then show the file"]
    assert info.lines.unreadable == 0
    assert any(i.kind.value == "notice" and "replaced" in i.message for i in items)


def test_a_stream_cut_before_its_result_is_incomplete(tmp_path: Path) -> None:
    """The process was killed (no ``result``), and the last line was cut mid-write: the run is incomplete,
    its turn has no answer, its usage unknown (never 0), and the commands that ran are still there."""
    lines = STREAM.read_bytes().splitlines(keepends=True)
    assert lines[-1].startswith(b'{"duration_api_ms"') or b'"type":"result"' in lines[-1]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2])
    items, info = _facts(path)
    assert info.run_status == "incomplete" and "ended before the result of run 1" in (info.run_error or "")
    assert _answers(items) == []
    assert info.tokens is None
    assert _commands(items) == [("wc -l hello.txt", 0), ("cat hello.txt; exit 3", 3)]
    assert info.lines.cut_last_line == len(lines) - 1
    assert any(i.kind.value == "notice" and "has no result line" in i.message for i in items)


def test_a_stream_with_no_run_reports_none(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"type": "stream_event", "event": {}, "session_id": "s"}\n' * 3)
    items, info = _facts(path)
    assert info.format is Format.CLAUDE_STREAM and info.run_status == "no_report" and info.tokens is None
    assert info.lines.known_noise == 3 and _answers(items) == []


def test_a_failed_run_after_a_good_one_fails_the_stream(tmp_path: Path) -> None:
    """Two runs put end to end (``multi_turn``'s first run, then ``max_turns``): one failed, so the stream
    failed; the first run keeps its answer, the second has none, and the second run's other session is said."""
    path = tmp_path / "two.jsonl"
    path.write_bytes((RECORDED / "multi_turn.stream.jsonl").read_bytes()
                     + (RECORDED / "max_turns.stream.jsonl").read_bytes())
    items, info = _facts(path)
    assert info.run_status == "failed" and info.turns == 2
    assert _answers(items) == ["It says hello world."]
    assert any(i.kind.value == "notice" and "belongs to another session" in i.message for i in items)


def test_the_session_format_forced_on_a_stream_reads_it_by_its_shape() -> None:
    """``--format claude-code`` on a stream: each line is still read by its own shape, so the sub-agent's
    prompt (``parent_tool_use_id``) is the sub-agent's, never the person's."""
    for name in ("task_agent", "task_replay"):
        path = RECORDED / f"{name}.stream.jsonl"
        t = Transcript(path, format=Format.CLAUDE)
        items = list(t.items())
        assert not any(p.startswith("SUBTASK-") for p in _prompts(items))
        assert _answers(items) == [json.loads(path.read_bytes().splitlines()[-1])["result"]]


# ---------------------------------------------------------------- the CLI, by path


def _cli(*args: str, ok: bool = True, **more: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": "/nonexistent", "COLUMNS": "100", "TZ": "UTC",
           "PYTHONPATH": str(ROOT), **more}
    p = subprocess.run([sys.executable, "-m", "transcript_reader", *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    assert (p.returncode == 0) == ok, (p.stdout, p.stderr)
    return p


def test_read_show_inspect_export_by_path(tmp_path: Path) -> None:
    path = str(STREAM)
    read = json.loads(_cli("read", "--json", path).stdout)
    assert read["format"] == "claude-stream-json"
    kinds = [i["kind"] for i in read["items"]]
    assert "user_message" in kinds and "shell_command" in kinds and "assistant_message" in kinds
    shown = _cli("show", path).stdout
    assert "have a sub-agent count the lines" in shown and "cat hello.txt; exit 3" in shown
    assert "claude-stream-json" in shown
    info = json.loads(_cli("inspect", "--json", path).stdout)["info"]
    assert info["format"] == "claude-stream-json" and info["run_status"] == "completed"
    assert info["tokens"]["cache_write"] == 3000 and info["tokens"]["output"] == 70
    md = _cli("export", "--format", "md", path).stdout
    assert "Claude Code 2.1.332" in md and "cat hello.txt; exit 3" in md
    out = tmp_path / "t.json"
    _cli("export", "--format", "json", path, "-o", str(out))
    assert json.loads(out.read_text())["format"] == "claude-stream-json"


def test_a_failed_run_shows_as_failed_on_the_cli() -> None:
    info = json.loads(_cli("inspect", "--json", str(RECORDED / "max_turns.stream.jsonl")).stdout)["info"]
    assert info["run_status"] == "failed" and "error_max_turns" in info["run_error"]


@pytest.mark.parametrize("data", [b"garbage\n", b'{"type": "result"}\n'])
def test_not_a_stream_is_a_typed_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(data)
    p = _cli("read", "--json", str(path), ok=False)
    assert json.loads(p.stdout or p.stderr)["ok"] is False


def test_the_fuzz_harness_on_the_recorded_streams(tmp_path: Path) -> None:
    """The reader's fuzz harness (``corpus_tools.fuzz_reader``: only typed errors, the accounting equal to
    the physical line count, every prompt and command of an intact line found), in its dense mode, seeded
    with the recorded streams: a third of each input's lines mutated, plus file-level mutations."""
    import random

    from corpus_tools.fuzz_reader import MUTATIONS, build_input, check_input

    seeds = sorted(RECORDED.glob("*.stream*.jsonl"))
    rnd = random.Random(26)
    mutated = 0
    for _ in range(60):
        plan = [(rnd.choice(MUTATIONS), rnd.random(), rnd.random()) for _ in range(rnd.randrange(4))]
        fi = build_input(rnd.choice(seeds), rnd.choice(seeds), plan, density=0.35, rnd_seed=rnd.random())
        mutated += fi.mutated
        failures = [f for f in check_input(fi, tmp_path) if "(read as " not in f]
        assert failures == [], (fi.seed, fi.mutations, failures)
    assert mutated > 200


def test_values_of_the_wrong_type_cost_nothing_else(tmp_path: Path) -> None:
    """Found by the fuzz harness: a ``type`` that is an object (the vote took it as a key), a structured
    patch whose hunk ``lines`` is a number (the Edit result's files were iterated as a list)."""
    edit = RECORDED / "edit_replay.stream.jsonl"
    raw = edit.read_bytes()
    hunk = b'"lines":[" def add(a, b):","-    return a - b","+    return a + b"]'
    assert raw.count(hunk) == 1
    path = tmp_path / "hunk.jsonl"
    path.write_bytes(b'{"type": {}, "session_id": "s"}\n' + raw.replace(hunk, b'"lines":1.5'))
    items, info = _facts(path)
    assert info.format is Format.CLAUDE_STREAM and info.lines.unknown == 1
    assert _commands(items) == [("python3 -m unittest test_calc", 0)]
    patched = {f.path.rsplit("/", 1)[1]: (f.added, f.removed) for i in items if i.kind.value == "patch"
               for f in i.files}
    assert patched["NOTES.md"] == (3, 0) and "calc.py" in patched


def test_a_stream_kept_in_a_claude_home_is_listed(tmp_path: Path) -> None:
    """Claude Code writes no stream into its home, but a stream saved there under a session's name is
    listed as what it is: its format, its start (the first timed line: ``init`` has no time), its prompt."""
    project = tmp_path / "claude" / "projects" / "-home-user-project"
    project.mkdir(parents=True)
    (project / "4652af0a-82db-454b-ab9d-45de96a337bd.jsonl").write_bytes(STREAM.read_bytes())
    out = _cli("ls", "--json", "--all-projects", "--provider", "claude", CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
               CODEX_HOME=str(tmp_path / "codex"), XDG_CACHE_HOME=str(tmp_path / "cache")).stdout
    (row,) = json.loads(out)["sessions"]
    assert row["format"] == "claude-stream-json" and row["started"] == "2026-12-05T12:15:10.356Z"
    assert row["title"] == "have a sub-agent count the lines of hello.txt, then show the file"

