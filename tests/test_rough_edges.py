"""What a user meets at the edges: `show last` with no session fails as `read last` does (the bundled
example only on request, or for the bare command, labelled); every numeric argument is range-checked
(a usage error, exit 2, never a traceback); the version column is headed by the agent whose version it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import sessions_home as H
from tests.test_cli_sessions import plain_lines, run


@pytest.fixture
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def test_show_last_with_no_session_fails_like_read_last(home: H.FakeHome, tmp_path: Path) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    for args in (("show", "last", "--final"), ("show",), ("read", "last")):
        p = run(home, *args, cwd=empty, check=False)
        assert p.returncode == 1 and p.stdout == "" and p.stderr.startswith("Error: "), (args, p)
    assert "show --example" in run(home, "show", "last", cwd=empty, check=False).stderr
    assert run(home, "show", "--example", cwd=empty).stdout.startswith("Example session, bundled")
    assert run(home, cwd=empty).stdout.startswith("Example session, bundled")  # the bare command, labelled


@pytest.mark.parametrize("args", [
    ("ls", "--since", "999999999d"), ("ls", "--until", "99999999999999999999h"), ("ls", "--since", "99999999w"),
    ("ls", "--limit", "99999999999999999999999"), ("read", "last", "--tail", "99999999999999999999999"),
    ("read", "last", "--max-chars", "-1"), ("census", "--workers", "0", "."), ("census", "--batch-files", "-3", "."),
    ("mcp", "--call-timeout", "nan", "--check"), ("mcp", "--http-idle-timeout", "inf", "--check"),
    ("mcp", "--port", "70000", "--check"), ("browse", "--limit", "0"),
])
def test_every_numeric_argument_is_range_checked(home: H.FakeHome, args: tuple[str, ...]) -> None:
    p = run(home, *args, check=False)
    assert p.returncode == 2 and "Invalid value for" in p.stderr and p.stdout == "", (args, p.stderr)


def test_the_last_day_there_is_is_a_valid_until(home: H.FakeHome) -> None:
    doc = json.loads(run(home, "ls", "--until", "9999-12-31", "--json").stdout)
    assert doc["count"] == 7


def test_the_version_column_is_headed_by_the_agent(home: H.FakeHome) -> None:
    from transcript_reader.present.listing import ls_lines

    assert plain_lines(run(home, "ls").stdout)[0].split("\t")[5] == "codex"
    row = {"when": "x", "title": "t", "version": "2.1.3", "agent_name": "claude"}
    codex = {**row, "version": "0.171.0", "agent_name": "codex"}
    assert ls_lines([row], width=None, show_cwd=False)[0][10][0] == "claude"
    both = ls_lines([row, codex], width=None, show_cwd=False)
    assert both[0][10][0] == "version" and [r[10][0] for r in both[1:]] == ["claude 2.1.3", "codex 0.171.0"]


def test_one_duration_rule_for_ls_browse_show_and_inspect(home: H.FakeHome) -> None:
    """ls (and the browser, from the same rows) and inspect (and show's footer, from the same info)
    measure a session the same way: from its start (the earlier of what the agent recorded and its first
    timestamped line) to its last timestamped line. ls said 1.04 s and inspect 0.922 s for one session."""
    from transcript_reader.timestamps import session_duration, session_start

    rows = json.loads(run(home, "ls", "--all", "--all-projects", "--json").stdout)["sessions"]
    compared = 0
    for row in rows:
        if row["path"].endswith(".zst") or row["duration_s"] is None:
            continue
        info = json.loads(run(home, "inspect", row["path"], "--json").stdout)["info"]
        assert info["duration_s"] == row["duration_s"], (row["id"], info["duration_s"], row["duration_s"])
        compared += 1
    assert compared >= 5
    footer = run(home, "show", H.PARENT[:11]).stdout.rstrip().split("\n")[-1]
    assert footer.endswith("duration 1.0s"), footer
    assert session_start("2026-11-29T17:58:57.865Z", "2026-11-29T17:58:57.983Z") == "2026-11-29T17:58:57.865Z"
    assert session_duration("2026-11-29T17:58:57.865Z", "2026-11-29T17:58:58.905Z") == 1.04
    assert session_duration("2026-11-29T17:58:59Z", "2026-11-29T17:58:58Z") is None  # the clock went back
    assert session_duration(None, "2026-11-29T17:58:58Z") is None
