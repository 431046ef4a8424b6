"""Claude Code session discovery: which files under ``$CLAUDE_CONFIG_DIR/projects`` are sessions, and the
head a listing reads from each, which must agree with a full read (``inspect``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claude_home import RECORDED, build_mixed_home
from transcript_reader.api import inspect
from transcript_reader.model import Format
from transcript_reader.providers.claude.sessions import (
    is_session_file_name,
    iter_session_files,
    read_head,
    read_tail,
)

RECORDINGS = sorted(p for p in RECORDED.rglob("*.jsonl") if ".stream" not in p.name)


def test_session_file_names() -> None:
    assert is_session_file_name("e6e65e77-a301-4395-aaae-1db4b4788ef1.jsonl")
    assert is_session_file_name("agent-aae21d546c9b9b7a2.jsonl")
    assert not is_session_file_name("agent-aae21d546c9b9b7a2.meta.json")
    assert not is_session_file_name("notes.jsonl")


def test_finds_sessions_and_sub_agents_under_projects(tmp_path: Path) -> None:
    home = build_mixed_home(tmp_path)
    found = [p.relative_to(home.claude / "projects") for p in iter_session_files(home.claude)]
    mains = [p for p in found if not p.name.startswith("agent-")]
    agents = [p for p in found if p.name.startswith("agent-")]
    assert len(mains) == 3 and len(agents) == 1
    assert agents[0].parts[-2] == "subagents"
    (home.claude / "projects" / "-x" / "memory").mkdir(parents=True)  # not a session, nothing under it either
    assert len(list(iter_session_files(home.claude))) == 4
    assert list(iter_session_files(tmp_path / "no-such-folder")) == []


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_head_agrees_with_a_full_read(path: Path) -> None:
    head = read_head(path)
    info = inspect(path)
    assert head.format is Format.CLAUDE is info.format
    assert head.error is None
    assert (head.session_id, head.cwd, head.cli_version, head.source, head.parent_session_id) == (
        info.session_id, info.cwd, info.version, info.source, info.parent_session_id)
    assert head.model == info.models[0]
    assert head.title is not None and info.title is not None and head.title.startswith(info.title[:60])
    assert read_tail(path).last_timestamp == info.last_timestamp


def test_a_sub_agent_names_its_parent() -> None:
    agent = next(p for p in RECORDINGS if p.name.startswith("agent-") and "task_agent" in str(p))
    head = read_head(agent)
    assert head.source == "subagent"
    assert head.session_id == "agent-" + agent.stem.removeprefix("agent-")
    assert head.parent_session_id == agent.parent.parent.name
