"""A UTF-8 byte order mark at the start of a file (a rollout re-saved by a Windows editor or PowerShell)
is skipped once, at the source layer: the file reads exactly like the same file without it --
same format, same items, same session head -- instead of losing its session line as unreadable."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from tests.conftest import FIXTURES, TRANSCRIPT_FIXTURES
from transcript_reader import inspect, iter_items
from transcript_reader.providers import sniff_format
from transcript_reader.providers.codex.head import read_head
from transcript_reader.reading.source import UTF8_BOM

CASES = [
    TRANSCRIPT_FIXTURES / "final_answers.jsonl",  # rollout: the session_meta line is line 1
    TRANSCRIPT_FIXTURES / "early_rust_0_29.jsonl",  # early Rust: a bare session line
    TRANSCRIPT_FIXTURES / "ts_cli_0_1.json",  # the TS CLI's pretty-printed single document
    FIXTURES / "exec_streams" / "completed.jsonl",  # codex exec --json
]


def _with_bom(src: Path, tmp_path: Path, *, compress: bool = False) -> Path:
    data = UTF8_BOM + src.read_bytes()
    if compress:
        dst = tmp_path / (src.name + ".zst")
        dst.write_bytes(zstandard.ZstdCompressor().compress(data))
    else:
        dst = tmp_path / src.name
        dst.write_bytes(data)
    return dst


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zst"])
@pytest.mark.parametrize("src", CASES, ids=lambda p: p.name)
def test_a_leading_bom_reads_like_the_file_without_it(src: Path, compress: bool, tmp_path: Path) -> None:
    bom = _with_bom(src, tmp_path, compress=compress)
    assert sniff_format(bom) is sniff_format(src)
    assert list(iter_items(bom)) == list(iter_items(src))
    want, got = inspect(src), inspect(bom)
    assert got.lines.unreadable == want.lines.unreadable == 0
    assert (got.session_id, got.cwd, got.version) == (want.session_id, want.cwd, want.version)
    assert got.lines.lines == want.lines.lines  # line numbers are unchanged: the BOM is not a line


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zst"])
def test_listing_head_skips_a_leading_bom(compress: bool, tmp_path: Path) -> None:
    src = TRANSCRIPT_FIXTURES / "final_answers.jsonl"
    want = read_head(src)
    got = read_head(_with_bom(src, tmp_path, compress=compress))
    assert want.session_id is not None
    assert (got.format, got.session_id, got.cwd, got.cli_version, got.title) == (
        want.format, want.session_id, want.cwd, want.cli_version, want.title)


def test_only_the_first_bom_is_skipped(tmp_path: Path) -> None:
    """Skipped once: a second BOM is data, and a line that starts with it stays unreadable (fail closed)."""
    src = TRANSCRIPT_FIXTURES / "final_answers.jsonl"
    p = tmp_path / "twice.jsonl"
    p.write_bytes(UTF8_BOM + UTF8_BOM + src.read_bytes())
    info = inspect(p, format="rollout")
    assert info.lines.unreadable == 1
    assert info.session_id is None
