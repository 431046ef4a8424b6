"""Which files the Claude Code provider claims: a vote over the first lines, so one stray line of another
shape never decides a file, and no Codex fixture is ever claimed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claude_home import RECORDED
from tests.conftest import transcript_fixtures
from transcript_reader.model import Format
from transcript_reader.providers.claude import PROVIDER

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = sorted(p for p in (ROOT / "fixtures" / "claude").rglob("*.jsonl") if ".stream" not in p.name)
CODEX = [p for p in transcript_fixtures() if p.suffix != ".zst"] + sorted((ROOT / "fixtures" / "codex_home").rglob("*.jsonl"))
ROLLOUT_LINE = b'{"timestamp":"2026-11-30T10:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"hi"}}\n'


@pytest.mark.parametrize("path", CLAUDE, ids=[str(p.relative_to(ROOT)) for p in CLAUDE])
def test_every_claude_fixture_is_claimed(path: Path) -> None:
    assert PROVIDER.sniff(path) is Format.CLAUDE


def test_no_codex_fixture_is_claimed() -> None:
    claimed = [p.name for p in CODEX if PROVIDER.sniff(p) is not None]
    assert claimed == []


def test_one_stray_line_does_not_decide(tmp_path: Path) -> None:
    claude = next(p for p in CLAUDE if "bash_ok" in str(p)).read_bytes()
    mixed = tmp_path / "stray_first.jsonl"
    mixed.write_bytes(ROLLOUT_LINE + claude)
    assert PROVIDER.sniff(mixed) is Format.CLAUDE
    codex = next(p for p in CODEX if p.name.endswith(".jsonl")).read_bytes()
    stray = tmp_path / "codex_with_claude_line.jsonl"
    stray.write_bytes(claude.splitlines(keepends=True)[2] + codex)
    assert PROVIDER.sniff(stray) is None


def test_not_json_or_empty_is_not_claimed(tmp_path: Path) -> None:
    for name, data in (("empty.jsonl", b""), ("text.jsonl", b"hello\nworld\n"), ("list.jsonl", b"[1,2]\n")):
        (tmp_path / name).write_bytes(data)
        assert PROVIDER.sniff(tmp_path / name) is None


STREAMS = sorted(RECORDED.glob("*.stream*.jsonl"))


@pytest.mark.parametrize("path", STREAMS, ids=[p.name for p in STREAMS])
def test_a_claude_stream_is_read_as_its_own_format(path: Path) -> None:
    """``claude -p --output-format stream-json`` output is neither a session file nor a Codex stream: the
    Claude provider claims it as ``claude-stream-json``, and detection (Codex first) agrees."""
    from transcript_reader.providers import detect

    assert PROVIDER.sniff(path) is Format.CLAUDE_STREAM
    provider, fmt = detect(path)
    assert (provider.name, fmt) == ("claude", Format.CLAUDE_STREAM)


def test_the_format_is_told_by_content_not_by_name(tmp_path: Path) -> None:
    """A stream saved under a session file's name is still a stream, and a session file named
    ``*.stream.jsonl`` is still a session file."""
    stream = next(p for p in STREAMS if p.name == "bash_ok.stream.jsonl")
    as_session = tmp_path / "5736505b-1cba-45e6-bc94-02b0f315d524.jsonl"
    as_session.write_bytes(stream.read_bytes())
    assert PROVIDER.sniff(as_session) is Format.CLAUDE_STREAM
    session = next(p for p in CLAUDE if "bash_ok" in str(p))
    as_stream = tmp_path / "run.stream.jsonl"
    as_stream.write_bytes(session.read_bytes())
    assert PROVIDER.sniff(as_stream) is Format.CLAUDE


def test_a_stray_stream_line_does_not_decide(tmp_path: Path) -> None:
    stream_line = next(p for p in STREAMS if p.name == "bash_ok.stream.jsonl").read_bytes().splitlines(True)[1]
    codex = next(p for p in CODEX if p.name.endswith(".jsonl")).read_bytes()
    (tmp_path / "codex_with_stream_line.jsonl").write_bytes(stream_line + codex)
    assert PROVIDER.sniff(tmp_path / "codex_with_stream_line.jsonl") is None
