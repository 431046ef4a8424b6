"""``ls --json`` and ``inspect --json`` tell the same facts about a session: one session-head reader
(the header is read by the full read's own ``session_meta`` decoder), one token-usage reader, one
title rule. Every transcript of ``fixtures/`` and of ``../shared/corpus`` is compared in-process through
the functions both commands print (``render.entry_to_dict``, ``render.inspect_to_dict``); the fixtures
home is compared once more through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, FIXTURES
from transcript_reader import api
from transcript_reader.errors import TranscriptError
from transcript_reader.projections.render import entry_to_dict, inspect_to_dict
from transcript_reader.sessions.discovery import read_entry


def _transcripts(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".golden.json")
                  and p.name.endswith((".jsonl", ".json", ".jsonl.zst")) and "exec-scripts" not in p.parts
                  and "snapshots" not in p.parts and "mcp" not in p.parts and "js" not in p.parts)


FILES = _transcripts(FIXTURES) + _transcripts(CORPUS)


def _ids(paths: list[Path]) -> list[str]:
    base = FIXTURES.parent
    return [str(p.relative_to(base)) if p.is_relative_to(base) else str(p.relative_to(CORPUS.parent))
            for p in paths]


def facts_of_ls(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "title": row["first_prompt"], "cwd": row["cwd"], "model": row["model"],
            "version": row["cli_version"], "source": row["source"]}


def facts_of_inspect(info: dict[str, Any], title: str | None) -> dict[str, Any]:
    return {"id": info["session_id"], "title": title, "cwd": info["cwd"],
            "model": info["models"][0] if info["models"] else None, "version": info["version"],
            "source": info["source"]}


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_ls_and_inspect_agree(path: Path) -> None:
    try:
        info = api.inspect(path)
    except TranscriptError:
        pytest.skip("not a transcript the reader reads (its own tests pin the error)")
    entry = read_entry(path, False, {})
    row = entry_to_dict(entry)
    shown = inspect_to_dict(info)["info"]
    assert row["format"] == shown["format"]
    ls_facts, inspect_facts = facts_of_ls(row), facts_of_inspect(shown, info.title)
    if info.format.value.startswith("exec-"):
        # an exec stream names no version, source or title of its own in its head beyond what both read
        for key in ("version", "source"):
            ls_facts.pop(key), inspect_facts.pop(key)
    assert ls_facts == inspect_facts
    if row["tokens"] is not None:
        # read from the tail (plain files): the last running total, which the summed figure equals unless
        # the session was resumed into the same file (its counter restarted: the tail's is then lower)
        assert shown["tokens"] is not None and row["tokens"]["total"] <= shown["tokens"]["total"]
        if row["tokens"]["total"] == shown["tokens"]["total"]:
            keys = ("input", "cached_input", "cache_write", "output", "total")
            assert {k: row["tokens"][k] for k in keys} == {k: shown["tokens"][k] for k in keys}


FIXTURE_HOME = FIXTURES / "codex_home"


def _cli(*args: str, env: dict[str, str]) -> Any:
    p = subprocess.run([sys.executable, "-m", "transcript_reader", *args, "--json"], capture_output=True,
                       text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def test_ls_and_inspect_agree_through_the_cli(tmp_path: Path) -> None:
    env = {**os.environ, "CODEX_HOME": str(FIXTURE_HOME), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    rows = _cli("ls", "--all", "--all-projects", "--stats", env=env)
    rows = rows["sessions"] if isinstance(rows, dict) else rows
    assert len(rows) >= 5
    for row in rows:
        shown = _cli("inspect", row["path"], env=env)["info"]
        assert facts_of_ls(row) | {"title": None} == facts_of_inspect(shown, None), row["path"]
        assert row["stats"]["turns"] == shown["turns"], row["path"]
        assert row["tokens"] is None or row["tokens"] == shown["tokens"], row["path"]


def test_a_claude_session_lists_its_cache_writes(tmp_path: Path) -> None:
    """Claude Code counts prompt-cache writes apart; ``ls`` (from the store, cold and warm) shows the same
    token figures as ``inspect``, cache writes included, never a 0 the file does not say."""
    import shutil

    project = FIXTURES / "claude/recorded/2.1.332/edit_write.projects/-home-user-project"
    shutil.copytree(project, tmp_path / "claude/projects" / project.name)
    (tmp_path / "codex").mkdir()
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in ("cold", "warm"):
        rows = _cli("ls", "--all", "--all-projects", "--stats", env=env)
        rows = rows["sessions"] if isinstance(rows, dict) else rows
        assert len(rows) == 1
        shown = _cli("inspect", rows[0]["path"], env=env)["info"]
        assert shown["tokens"]["cache_write"] > 0
        assert rows[0]["tokens"] == shown["tokens"]


def _rollout(tmp_path: Path, source: object, usage: dict[str, int]) -> Path:
    lines = [
        {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
         "payload": {"id": "00000000-0000-7000-8000-0000000000d1", "timestamp": "2026-01-01T00:00:00.000Z",
                     "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.160.0", "source": source}},
        {"timestamp": "2026-01-01T00:00:01.000Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "count the files"}},
        {"timestamp": "2026-01-01T00:00:02.000Z", "type": "event_msg",
         "payload": {"type": "token_count", "info": {"total_token_usage": usage}}},
    ]
    p = tmp_path / "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-0000000000d1.jsonl"
    p.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    return p


def test_a_sub_agent_source_reads_the_same_in_ls_and_inspect(tmp_path: Path) -> None:
    # a fix: the head reader had its own session_meta reading and said "subagent:other"
    p = _rollout(tmp_path, {"subagent": {"other": "x"}}, {"input_tokens": 10, "output_tokens": 5})
    assert entry_to_dict(read_entry(p, False, {}))["source"] == api.inspect(p).source == "subagent:x"


def test_a_token_count_without_total_counts_the_same_in_ls_and_inspect(tmp_path: Path) -> None:
    # a fix: the tail reader took an absent total_tokens as 0, the full read as input + output
    p = _rollout(tmp_path, "cli", {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 5})
    row = entry_to_dict(read_entry(p, False, {}))
    assert row["tokens"]["total"] == api.inspect(p).tokens.total == 15
