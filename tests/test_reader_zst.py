"""A ``.jsonl.zst`` whose whole frames are followed by bytes that are not zstd (zero padding,
appended text) keeps the lines of its good frames; the junk is one unreadable entry counted in the line
accounting (lenient) or a DecodeError naming the file and reason (strict). A file that is not zstd from
its first frame stays refused whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from tests.conftest import TRANSCRIPT_FIXTURES
from transcript_reader import inspect, read
from transcript_reader.errors import DecodeError, UnsupportedFormatError

JUNK_REASON = "bytes after the last zstd frame are not zstd"


def _frames(text: bytes, split: int) -> bytes:
    lines = text.splitlines(keepends=True)
    c = zstandard.ZstdCompressor()
    return c.compress(b"".join(lines[:split])) + c.compress(b"".join(lines[split:]))


@pytest.mark.parametrize("junk", [b"\x00" * 100, b"TRAILINGJUNK", b"\n", b"\x00" * 5000])
def test_junk_after_whole_frames_is_one_unreadable_entry(tmp_path: Path, junk: bytes) -> None:
    text = (TRANSCRIPT_FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    good = tmp_path / "good.jsonl.zst"
    good.write_bytes(_frames(text, 6))
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(_frames(text, 6) + junk)
    clean = read(good)
    r = read(p)  # no --format: sniffing gets past the junk too
    assert r.info is not None and clean.info is not None
    bad = [i for i in r.items if i.kind.value == "unreadable"]
    assert [b.reason for b in bad] == [JUNK_REASON]  # type: ignore[union-attr]
    assert bad[0].line == clean.info.lines.lines + 1
    # every good line is read, as from the same frames without the junk
    assert [i for i in r.items if i.kind.value != "unreadable"] == list(clean.items)
    acc = r.info.lines
    assert acc.unreadable == 1 and acc.lines == clean.info.lines.lines + 1
    assert acc.lines == acc.decoded + acc.known_noise + acc.unknown + acc.unreadable + acc.blank
    assert inspect(p).lines.unreadable == 1
    with pytest.raises(DecodeError) as e:
        read(p, strict=True)
    assert e.value.reason == JUNK_REASON and e.value.path == str(p)


def test_junk_after_a_frame_that_ends_mid_line_names_the_cut_line(tmp_path: Path) -> None:
    text = (TRANSCRIPT_FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(text[:-40]) + b"JUNK")
    r = read(p)
    bad = [i for i in r.items if i.kind.value == "unreadable"]
    assert [b.reason for b in bad] == [f"{JUNK_REASON} (last line cut)"]  # type: ignore[union-attr]
    assert r.info is not None and r.info.lines.unreadable == 1 and r.info.lines.cut_last_line is None


def test_a_corrupt_second_frame_keeps_the_first_frame_lines(tmp_path: Path) -> None:
    """A second frame that starts with the zstd magic but does not decompress is damage, not junk."""
    text = (TRANSCRIPT_FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    lines = text.splitlines(keepends=True)
    c = zstandard.ZstdCompressor()
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(c.compress(b"".join(lines[:6])) + b"\x28\xb5\x2f\xfd" + b"\xff" * 64)
    r = read(p)
    bad = [i for i in r.items if i.kind.value == "unreadable"]
    assert len(bad) == 1 and bad[0].reason.startswith("corrupt zstd frame")  # type: ignore[union-attr]
    assert r.info is not None and r.info.lines.lines == 7


def test_a_file_that_is_junk_from_the_first_frame_is_still_refused(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00garbage" * 10)
    with pytest.raises(UnsupportedFormatError) as e:
        read(p)
    assert "corrupt zstd stream" in e.value.reason


def test_junk_after_an_exec_stream_is_a_typed_error(tmp_path: Path) -> None:
    text = (TRANSCRIPT_FIXTURES.parent / "exec_streams" / "completed.jsonl").read_bytes()
    p = tmp_path / "e.jsonl.zst"
    p.write_bytes(_frames(text, 2) + b"\x00" * 100)
    with pytest.raises(UnsupportedFormatError) as e:
        read(p)
    assert e.value.reason == JUNK_REASON and e.value.path == str(p)
