"""Both providers everywhere a listing is concerned: on a fixtures home holding Codex sessions
(``$CODEX_HOME``) and Claude Code sessions (``$CLAUDE_CONFIG_DIR``, the real CLI's recordings), ``ls``,
cross-session ``search`` and session references (``show PREFIX``) see both, ``--provider`` narrows to one. The CLI runs as a user runs it: a real subprocess, not a TTY."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.claude_home import MixedHome, build_mixed_home

CLAUDE_IDS = {"3d752b2d-5f78-4e06-8f3e-57dead4a8b78", "041a6a50-81d7-4d4c-aa1b-e98e54abeec9",
              "e6e65e77-a301-4395-aaae-1db4b4788ef1", "agent-aae21d546c9b9b7a2"}


@pytest.fixture
def home(tmp_path: Path) -> MixedHome:
    return build_mixed_home(tmp_path)


def run(home: MixedHome, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home.codex.home.parent / "userhome"),
           "CODEX_HOME": str(home.codex.home), "CLAUDE_CONFIG_DIR": str(home.claude),
           "XDG_CACHE_HOME": str(home.codex.home.parent / "cache"), "COLUMNS": "100", "TZ": "UTC",
           "PWD": str(home.project), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    p = subprocess.run([sys.executable, "-m", "transcript_reader", *args], cwd=home.project, env=env,
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 0, (p.stdout, p.stderr)
    return p


def _ls(home: MixedHome, *args: str) -> list[dict[str, Any]]:
    sessions: list[dict[str, Any]] = json.loads(run(home, "ls", "--json", *args).stdout)["sessions"]
    return sessions


def test_ls_lists_both_providers(home: MixedHome) -> None:
    rows = _ls(home)
    by = {r["provider"] for r in rows}
    assert by == {"codex", "claude"}
    assert {r["id"] for r in rows if r["provider"] == "claude"} == CLAUDE_IDS
    agent = next(r for r in rows if r["id"].startswith("agent-"))
    assert agent["depth"] == 1 and agent["parent_session_id"] == "e6e65e77-a301-4395-aaae-1db4b4788ef1"
    assert rows.index(agent) == rows.index(next(r for r in rows if r["id"] == agent["parent_session_id"])) + 1
    assert all(r["format"] == "claude-code" and r["cli_version"] == "2.1.332" for r in rows if r["provider"] == "claude")
    starts = [r["started"] for r in rows if r["depth"] == 0]
    assert starts == sorted(starts, reverse=True)  # one listing, newest first across providers
    assert {r["provider"] for r in _ls(home, "--provider", "claude")} == {"claude"}
    assert {r["provider"] for r in _ls(home, "--provider", "codex")} == {"codex"}
    text = run(home, "ls").stdout
    assert "run the tests" in text and "Fix calc.py" in text


def test_ls_stats_read_claude_sessions(home: MixedHome) -> None:
    rows = {r["id"]: r for r in _ls(home, "--stats", "--provider", "claude")}
    failing = rows["3d752b2d-5f78-4e06-8f3e-57dead4a8b78"]["stats"]
    assert failing == {"turns": 1, "commands": 2, "commands_failed": 2, "files_changed": 0, "tests_passed": 0,
                       "tests_failed": 1}
    assert rows["041a6a50-81d7-4d4c-aa1b-e98e54abeec9"]["stats"]["files_changed"] == 2


def test_search_across_both_providers(home: MixedHome) -> None:
    out = run(home, "search", "--json", "calc").stdout
    hits = [json.loads(line) for line in out.splitlines() if line.strip()]
    paths = {h["path"] for h in hits if h.get("path")}
    assert any(str(home.claude) in p for p in paths) and any(str(home.codex.home) in p for p in paths)
    only = run(home, "search", "--json", "--provider", "claude", "calc").stdout
    assert all(str(home.claude) in json.loads(line)["path"] for line in only.splitlines() if '"path"' in line)


def test_a_claude_session_resolves_by_prefix(home: MixedHome) -> None:
    out = run(home, "show", "041a6a50").stdout
    assert "fix add in calc.py and write NOTES.md" in out and "claude 2.1.332" in out
    inspected = json.loads(run(home, "inspect", "--json", "3d752b2d").stdout)
    assert inspected["info"]["session_id"] == "3d752b2d-5f78-4e06-8f3e-57dead4a8b78"


def _mcp(home: MixedHome, name: str, arguments: dict[str, Any], **config: Any) -> dict[str, Any]:
    """One tool call through the SDK's own client, on a server that knows both homes (as ``mcp`` builds it
    from ``$CODEX_HOME`` and ``$CLAUDE_CONFIG_DIR``)."""
    from tests.test_mcp_server import call, ok_payload
    from transcript_reader.mcp import ServerConfig

    server = ServerConfig(codex_home=home.codex.home, claude_home=home.claude, **config)
    result = call(server, name, arguments)
    if config.get("wire") == "agent-code":  # the origin's shape: a text block only, no structuredContent
        payload: dict[str, Any] = json.loads(result["content"][0]["text"])
        assert payload["ok"] is True, payload
        return payload
    return ok_payload(result)


def test_mcp_list_sessions_lists_both_providers(home: MixedHome) -> None:
    listed = _mcp(home, "agent_transcript_list_sessions", {"limit": 100})
    rows = listed["sessions"]
    assert {r["provider"] for r in rows} == {"codex", "claude"}
    assert {r["id"] for r in rows if r["provider"] == "claude"} == CLAUDE_IDS
    assert listed["claude_home"] == str(home.claude)
    assert [r["id"] for r in rows] == [r["id"] for r in _ls(home, "--all-projects")]  # the same listing as ls
    only = _mcp(home, "agent_transcript_list_sessions", {"limit": 100, "provider": "claude"})["sessions"]
    assert {r["provider"] for r in only} == {"claude"} and {r["id"] for r in only} == CLAUDE_IDS
    codex = _mcp(home, "agent_transcript_list_sessions", {"limit": 100, "provider": "codex"})["sessions"]
    assert codex and {r["provider"] for r in codex} == {"codex"}


def test_mcp_reads_a_claude_session_by_id_and_labels_it(home: MixedHome) -> None:
    ours = _mcp(home, "agent_transcript_read_file", {"path": "041a6a50"})
    assert ours["provider"] == "claude" and ours["items"]
    origin = _mcp(home, "agent_transcript_read_file", {"path": "041a6a50"}, wire="agent-code")
    assert origin["provider"] == "claude"  # the origin's shape, with the provider the file is in
    codex_id = next(r["id"] for r in _ls(home, "--provider", "codex") if r["depth"] == 0)
    assert _mcp(home, "agent_transcript_inspect_file", {"path": codex_id}, wire="agent-code")["provider"] == "codex"


def test_mcp_claude_root_is_its_projects_only(home: MixedHome) -> None:
    from tests.test_mcp_server import call, error_of
    from transcript_reader.mcp import ServerConfig

    secret = home.claude / "settings.json"
    secret.write_text('{"type": "user", "message": "not a transcript"}\n', encoding="utf-8")
    server = ServerConfig(codex_home=home.codex.home, claude_home=home.claude)
    code, _message = error_of(call(server, "agent_transcript_read_file", {"path": str(secret)}))
    assert code == "outside_allowed_roots"


def test_census_with_no_targets_covers_both_homes(home: MixedHome) -> None:
    figures = json.loads(run(home, "census", "--json", "--no-progress", "-w", "1").stdout)["figures"]
    formats = figures["files_by_format"]
    assert formats.get("claude-code", 0) >= 4 and sum(n for f, n in formats.items() if f != "claude-code") > 0
    only = json.loads(run(home, "census", "--json", "--no-progress", "-w", "1", "--provider", "claude").stdout)
    assert set(only["figures"]["files_by_format"]) == {"claude-code"}
    assert only["targets"] == [str(home.claude / "projects")]
