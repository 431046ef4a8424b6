"""Windows sessions: Codex runs commands through PowerShell (``powershell.exe -NoProfile -Command
CMD``) or cmd (``cmd.exe /c CMD``), and code-mode scripts call ``tools.shell_command({command})``. A
script's command must still pair with the record of its run, or every command reads as not run beside
an unpaired copy (a wrong ``executed: "no"`` is worse than ``unknown``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from transcript_reader import read
from transcript_reader.providers.codex.rollout import _cwd

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "windows_shell_records.jsonl"


def test_script_commands_pair_with_powershell_and_cmd_records() -> None:
    items = read(FIXTURE, projection="shell_commands").items
    got = [(i.command, i.origin, i.executed, i.exit_code) for i in items]
    assert got == [
        ("Get-ChildItem", "script", "yes", 0),
        ("dir /b", "script", "yes", 0),
        ("pwsh -c 'python -m pytest -q'", "script", "yes", 1),
        # the session writes records and the cell completed without one for this unconditional call:
        # a contradiction (a notice says so), so neither yes nor no
        ("echo skipped", "script", "unknown", None),
    ]
    assert all(i.origin != "record" for i in items), "a record left unpaired would show the command twice"
    notices = [i for i in read(FIXTURE, projection="timeline", include=["notice"]).items if i.kind == "notice"]
    assert [n.category for n in notices if "echo skipped" in n.message] == ["contradiction"]


def test_a_test_run_inside_a_powershell_wrapper_is_detected() -> None:
    runs = read(FIXTURE, projection="tests").items
    assert [(r.framework, r.result) for r in runs] == [("pytest", "fail")]


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("file:///w", "/w"),
        ("file:///C:/repo", "C:/repo"),  # RFC 8089: the drive is the path's start
        ("file:///home/u/my%20dir", "/home/u/my dir"),  # file URLs are percent-encoded
        ("/plain/path", "/plain/path"),
        ("C:\\repo", "C:\\repo"),
        ("file://localhost/home/u", "/home/u"),  # localhost is the local machine
        ("file://server/share/repo", "//server/share/repo"),  # a UNC path
        ("file://", None),
        ("file://LOCALHOST/x", "/x"),  # the host name is case-insensitive
    ],
)
def test_record_cwd_file_urls(value: str, want: str | None) -> None:
    assert _cwd(value) == want


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ('"C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe" -NoProfile -Command "Get-ChildItem"',
         "Get-ChildItem"),
        ("C:\\WINDOWS\\system32\\cmd.exe /c \"dir /b\"", "dir /b"),
        ("bash -lc 'ls'", "ls"),
        ("/bin/bash -lc \"echo \\\"x\\\"\"", 'echo "x"'),
    ],
)
def test_exec_stream_command_lines_unwrap(line: str, want: str) -> None:
    """``codex exec --json`` prints the wrapped command line of a ``command_execution`` item."""
    from transcript_reader.providers.codex.exec_stream import split_shell_command

    assert split_shell_command(line)[0] == want


@pytest.mark.parametrize(
    ("base", "workdir", "want"),
    [
        ("C:\\repo", "C:\\repo\\src", "C:\\repo\\src"),  # absolute, not joined
        ("C:\\repo", "D:/other", "D:/other"),
        ("C:\\repo", "src", "C:\\repo\\src"),
        ("/r", "src", "/r/src"),
        ("/r", "/abs", "/abs"),
    ],
)
def test_workdir_against_the_cwd(base: str, workdir: str, want: str) -> None:
    from transcript_reader.assembly.rules import join_cwd as _join_cwd

    assert _join_cwd(base, workdir) == want
