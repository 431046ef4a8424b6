"""Public Claude Code transcripts (``fixtures/claude/public/MANIFEST.tsv``: repository, path, commit, and how
each was judged real) read without error, with every line accounted for and none unknown or unreadable."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from transcript_reader.api import Transcript
from transcript_reader.model import Format

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "public"
with open(PUBLIC / "MANIFEST.tsv", newline="", encoding="utf-8") as _fh:
    ROWS = list(csv.DictReader(_fh, delimiter="\t"))
KEPT = [r for r in ROWS if r["judged"] == "real"]


def test_manifest_lists_every_kept_file() -> None:
    on_disk = sorted(p.name for p in PUBLIC.glob("*.jsonl"))
    assert on_disk == sorted(r["file"] for r in KEPT)
    for r in ROWS:
        assert r["repository"] and r["path"] and len(r["commit"]) == 40 and r["how_judged"]
    for r in KEPT:
        assert len((PUBLIC / r["file"]).read_text(encoding="utf-8")) == int(r["chars"])


@pytest.mark.parametrize("row", KEPT, ids=[r["file"] for r in KEPT])
def test_public_transcript_reads_with_full_accounting(row: dict[str, str]) -> None:
    path = PUBLIC / row["file"]
    t = Transcript(path)
    assert t.format is Format.CLAUDE
    items = list(t.items())
    info = t.info()
    physical = sum(1 for _ in path.open("rb"))
    acc = info.lines
    assert acc.lines == physical == acc.decoded + acc.known_noise + acc.unknown + acc.unreadable + acc.blank
    assert acc.unknown == 0 and acc.unreadable == 0
    assert info.version == row["claude_code_version"]
    assert any(i.kind.value == "user_message" for i in items)
