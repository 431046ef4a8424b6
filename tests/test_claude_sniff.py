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
    claimed_streams = [p.name for p in (RECORDED).glob("*.stream.jsonl") if PROVIDER.sniff(p) is not None]
    assert claimed_streams == []  # the CLI's stream-json output is not a session file


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


def test_a_claude_stream_is_no_ones_transcript() -> None:
    """``claude -p --output-format stream-json`` output names a model in its first event: it was read as a
    Codex exec-protocol stream with every line unknown (an empty success); now no provider claims it and
    reading it is a typed error."""
    from transcript_reader.errors import UnsupportedFormatError
    from transcript_reader.providers import detect

    for stream in sorted(RECORDED.glob("*.stream.jsonl")):
        with pytest.raises(UnsupportedFormatError):
            detect(stream)


def test_a_sub_agent_meta_file_is_no_ones_transcript() -> None:
    from transcript_reader.errors import UnsupportedFormatError
    from transcript_reader.providers import detect

    metas = sorted(RECORDED.rglob("*.meta.json"))
    assert metas
    for meta in metas:
        with pytest.raises(UnsupportedFormatError):
            detect(meta)
