"""Goldens of the Claude Code provider: every item and the inspect figures of each Claude fixture.

- ``fixtures/claude/recorded/<version>/``: sessions the real CLI wrote (the witness test checks them
  against the CLI's own stream); their goldens pin what the witness cannot see (context, reasoning, raw
  outputs, notices, accounting).
- ``fixtures/claude/transcripts/handmade_*``: hand-written from the documented and observed format, one
  file per group of rules the recordings do not reach (TodoWrite as a plan update, MultiEdit and
  NotebookEdit without a structured patch, Grep/Glob/WebFetch/WebSearch/MCP tools, an inline sidechain,
  summaries, compaction, slash commands, interruption, an API error, refusals, damaged lines).
- ``fixtures/claude/public/``: real public transcripts (MANIFEST.tsv).

``pytest --update-golden`` rewrites them (review the diff)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import golden_path
from tests.test_golden import snapshot

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
FIXTURES = sorted(p for p in ROOT.rglob("*.jsonl") if ".stream" not in p.name)


def test_fixtures_were_found() -> None:
    assert len([p for p in FIXTURES if "recorded" in p.parts]) == 14  # eleven sessions and three sub-agent files
    assert len([p for p in FIXTURES if "transcripts" in p.parts]) >= 4


@pytest.mark.parametrize("fixture", FIXTURES, ids=[str(p.relative_to(ROOT)) for p in FIXTURES])
def test_claude_golden(fixture: Path, update_golden: bool) -> None:
    got = snapshot(fixture)
    assert got["info"]["format"] == "claude-code"
    golden = golden_path(fixture)
    if update_golden or not golden.exists():
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not update_golden:
            pytest.fail(f"{golden.name} did not exist; written now, review it and re-run")
    assert got == json.loads(golden.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[str(p.relative_to(ROOT)) for p in FIXTURES])
def test_every_line_is_accounted_for(fixture: Path) -> None:
    lines = snapshot(fixture)["info"]["lines"]
    with open(fixture, "rb") as fh:
        physical = sum(1 for _ in fh)
    assert lines["lines"] == physical
    assert lines["lines"] == (lines["decoded"] + lines["known_noise"] + lines["unknown"] + lines["unreadable"]
                              + lines["blank"])
