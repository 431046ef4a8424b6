"""``transcript-reader script``: through a real subprocess, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = (
    '// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}\n'
    'const path = "src/a.ts";\n'
    'const r = await tools.exec_command({cmd: "ls -la", workdir: "/repo"});\n'
    "await tools.apply_patch(`*** Begin Patch\\n*** Update File: ${path}\\n@@\\n-a\\n+b\\n*** End Patch`);\n"
    'await tools.write_stdin({session_id: 3, chars: "q"});\n'
    'await tools.mcp__gh__search({q: "x"});\n'
)


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "transcript_reader", "script", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env={"COLUMNS": "120", "NO_COLOR": "1", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"},
    )


def test_json_shape_exact() -> None:
    p = run("-", "--json", stdin=SCRIPT)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["parser"] == "tree-sitter"
    assert doc["parse_error"] is None
    assert doc["pragma"] == {"yield_time_ms": 10000, "max_output_tokens": 1000}
    assert [c["name"] for c in doc["calls"]] == [
        "exec_command",
        "apply_patch",
        "write_stdin",
        "mcp__gh__search",
    ]
    first = doc["calls"][0]
    assert first == {
        "name": "exec_command",
        "start": {"offset": SCRIPT.index("tools.exec"), "line": 3, "column": 16},
        "end": {"offset": SCRIPT.index(");\nawait tools.apply") + 1, "line": 3, "column": 69},
        "computed": False,
        "argument": {"cmd": "ls -la", "workdir": "/repo"},
        "argument_source": '{cmd: "ls -la", workdir: "/repo"}',
    }
    assert doc["calls"][1]["computed"] is True and doc["calls"][1]["argument"] is None
    assert doc["entries"] == [
        {
            "kind": "shell_command",
            "executed": "unknown",
            "order": 0,
            "command": "ls -la",
            "cwd": "/repo",
            "whole_script": False,
            "options": {},
            "call_names": ["exec_command"],
        },
        {
            "kind": "patch",
            "executed": "unknown",
            "order": 1,
            "files": [{"path": "src/a.ts", "op": "update", "move_to": None, "added": 1, "removed": 1}],
            "unresolved_paths": 0,
            "error": None,
        },
        {"kind": "stdin_write", "executed": "unknown", "order": 2, "session_id": 3, "chars": "q"},
        {
            "kind": "tool_call",
            "executed": "unknown",
            "order": 3,
            "name": "mcp__gh__search",
            "argument": {"q": "x"},
            "argument_source": '{q: "x"}',
        },
    ]


def test_parser_option_and_parse_error(tmp_path: Path) -> None:
    f = tmp_path / "broken.js"
    f.write_text('await tools.exec_command({cmd: "ls"});\nconst x = (1;\n', encoding="utf-8")
    doc = json.loads(run(str(f), "--json").stdout)
    assert doc["parser"] == "lexer"
    assert doc["parse_error"]["line"] == 2 and set(doc["parse_error"]) == {"message", "line", "column"}
    assert [c["name"] for c in doc["calls"]] == ["exec_command"]
    for parser in ("lexer", "esprima", "tree-sitter"):
        doc = json.loads(run("-", "--json", "--parser", parser, stdin=SCRIPT).stdout)
        assert [c["name"] for c in doc["calls"]][:1] == ["exec_command"], parser


def test_rich_view_lists_calls_and_entries() -> None:
    p = run("-", stdin=SCRIPT)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "parser: tree-sitter" in out
    assert 'const r = await tools.exec_command({cmd: "ls -la", workdir: "/repo"});' in out
    assert "4 call(s)" in out and "4 entries" in out
    for text in (
        "exec_command",
        "3:16",
        "shell_command",
        "ls -la  (cwd /repo)",
        "update src/a.ts",
        "unknown",
    ):
        assert text in out, text


def test_missing_file_is_one_error_line() -> None:
    p = run("/nonexistent/cell.js")
    assert p.returncode == 1
    assert p.stderr.strip().startswith("Error: cannot read /nonexistent/cell.js")
    assert "Traceback" not in p.stderr


def test_bad_parser_is_a_usage_error() -> None:
    p = run("-", "--parser", "acorn", stdin="x")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_full_stdout_is_one_error_line_not_a_traceback() -> None:
    """``script [--json] x.js > /dev/full`` fails as one error line on stderr (the JSON error
    envelope with ``--json``), exit non-zero, never a traceback."""
    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is absent on this system")
    for extra in (["--json"], []):
        with open("/dev/full", "w") as full:
            p = subprocess.run(
                [sys.executable, "-m", "transcript_reader", "script", "-", *extra],
                input=SCRIPT,
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                timeout=120,
                env={"COLUMNS": "120", "NO_COLOR": "1", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"},
            )
        assert p.returncode != 0
        assert "Traceback" not in p.stderr, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1, p.stderr
        if extra:  # --json: the error envelope, on stderr since stdout is what failed
            doc = json.loads(lines[0])
            assert doc["ok"] is False and doc["error"]["code"] == "output_error", doc
        else:
            assert lines[0].startswith("Error:") and "No space left" in lines[0], p.stderr


def test_json_reports_a_malformed_patch() -> None:
    """`script --json` says why a patch is malformed instead of showing a clean +0/-0."""
    proc = subprocess.run([sys.executable, "-m", "transcript_reader", "script", "-", "--json"],
                          input='await tools.apply_patch("*** Begin Patch\\n*** Add File: b.txt\\n+hi\\n");\n',
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (patch,) = [e for e in json.loads(proc.stdout)["entries"] if e["kind"] == "patch"]
    assert patch["error"] and "End Patch" in patch["error"]
