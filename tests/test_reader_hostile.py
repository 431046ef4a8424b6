"""One bad line costs one line, and a damaged container what it damages. Each test builds
its small input: corrupt ``token_count`` lines (the deferred parse), invalid UTF-8 in a fast-path
line, a decoder that raises, lines over the line cap, the ``.zst`` size cap, a skippable frame, a
first frame corrupt after some blocks, CR-only line ends, and a TypeScript ``.json`` that is cut short,
holds 1e309 or nests 100,000 deep."""

from __future__ import annotations

import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from tests.conftest import TRANSCRIPT_FIXTURES
from transcript_reader import api, inspect, read
from transcript_reader.errors import DecodeError, UnsupportedFormatError
from transcript_reader.model import Format
from transcript_reader.providers import sniff_format
from transcript_reader.providers.codex.head import read_head
from transcript_reader.reading.source import SNIFF_BYTES, ReadCaps

SID = "01a22d9c-0000-7000-8000-0000000000aa"


def env(ts: str, type_: str, payload: dict[str, Any]) -> bytes:
    """One rollout line as Codex writes it (compact, keys in Codex's order: the reader's fast path)."""
    return orjson.dumps({"timestamp": ts, "type": type_, "payload": payload}) + b"\n"


def token_count(n: int, total: int) -> bytes:
    usage = {"input_tokens": total - 1, "output_tokens": 1, "total_tokens": total}
    return env(f"2026-01-01T00:00:{n:02d}.000Z", "event_msg",
               {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}})


def rollout(*middle: bytes) -> bytes:
    head = [
        env("2026-01-01T00:00:00.000Z", "session_meta",
            {"id": SID, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w", "originator": "codex_cli_rs",
             "cli_version": "0.171.0", "source": "cli"}),
        env("2026-01-01T00:00:01.000Z", "event_msg", {"type": "task_started", "turn_id": "t1"}),
        env("2026-01-01T00:00:01.000Z", "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
        env("2026-01-01T00:00:02.000Z", "response_item",
            {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "make test"}',
             "call_id": "c1"}),
        env("2026-01-01T00:00:03.000Z", "response_item",
            {"type": "function_call_output", "call_id": "c1",
             "output": "Process exited with code 0\nOutput:\nok\n"}),
    ]
    tail = [
        env("2026-01-01T00:00:09.000Z", "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        env("2026-01-01T00:00:09.000Z", "event_msg",
            {"type": "task_complete", "turn_id": "t1", "last_agent_message": "done"}),
    ]
    return b"".join(head[:3]) + b"".join(middle) + b"".join(head[3:] + tail)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def unreadable(r: Any) -> list[tuple[int, str]]:
    return [(i.line, i.reason) for i in r.items if i.kind.value == "unreadable"]


def balanced(info: Any) -> bool:
    a = info.lines
    return bool(a.lines == a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank)


def kinds(r: Any) -> list[str]:
    return [i.kind.value for i in r.items if i.kind.value != "unreadable"]


# ---------------------------------------------------------------- one line kills the read


def test_a_corrupt_last_token_count_costs_that_line_only(tmp_path: Path) -> None:
    good = token_count(4, 100)
    corrupt = good[:40] + b"\x01garbage" + good[48:]
    p = write(tmp_path, "r.jsonl", rollout(token_count(3, 50), corrupt))
    r = read(p)
    assert [line for line, _ in unreadable(r)] == [5]
    assert r.info is not None and r.info.tokens.total == 50 and balanced(r.info)
    assert r.info.lines.unreadable == 1
    assert kinds(r) == kinds(read(write(tmp_path, "clean.jsonl", rollout(token_count(3, 50)))))
    assert inspect(p).lines.unreadable == 1
    with pytest.raises(DecodeError) as e:
        inspect(p, strict=True)
    assert e.value.line == 5 and e.value.path == str(p)


def test_a_corrupt_earlier_token_count_is_unreadable_and_strict_fails_on_it(tmp_path: Path) -> None:
    corrupt = token_count(3, 50).replace(b'"total_tokens":50', b'"total_tokens":5"0')
    p = write(tmp_path, "r.jsonl", rollout(corrupt, token_count(4, 100)))
    info = inspect(p)
    assert info.lines.unreadable == 1 and info.tokens.total == 100 and balanced(info)
    with pytest.raises(DecodeError) as e:
        read(p, strict=True)
    assert e.value.line == 4


def test_the_cli_strict_read_names_the_line(tmp_path: Path) -> None:
    corrupt = token_count(3, 50)[:-3] + b"\n"
    p = write(tmp_path, "r.jsonl", rollout(corrupt))
    ok = subprocess.run([sys.executable, "-m", "transcript_reader", "read", str(p), "--json"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "transcript_reader", "read", str(p), "--strict"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert f"{p}:4" in bad.stderr + bad.stdout


@pytest.mark.parametrize("type_,payload", [
    ("event_msg", {"type": "token_count", "info": None}),
    ("turn_context", {"cwd": "/w", "model": "gpt-5"}),  # not a fast-path type: the full decode
    ("world_state", {"x": 1}),
])
def test_invalid_utf8_in_the_timestamp_of_a_line_costs_that_character(
        tmp_path: Path, type_: str, payload: dict[str, Any]) -> None:
    line = env("2026-01-01T00:00:0\xff.000Z", type_, payload).replace("\xff".encode(), b"\xff")
    assert b"\xff" in line and b"\xc3" not in line
    p = write(tmp_path, "r.jsonl", rollout(line))
    r = read(p)
    assert unreadable(r) == []
    notices = [i for i in r.items if i.kind.value == "notice" and i.category == "replaced_characters"]
    assert [(i.line, "U+FFFD" in i.message) for i in notices] == [(4, True)]
    assert r.info is not None and balanced(r.info) and "shell_command" in kinds(r)
    with pytest.raises(DecodeError):
        read(p, strict=True)


def test_a_line_whose_decoder_raises_costs_that_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import transcript_reader.providers.codex.lines as decode_pkg

    real = decode_pkg.decode_rollout

    def flaky(obj: Any, line: int) -> Any:
        if line == 4:
            raise KeyError("boom")
        return real(obj, line)

    monkeypatch.setattr(decode_pkg, "decode_rollout", flaky)
    p = write(tmp_path, "r.jsonl", rollout(env("2026-01-01T00:00:02.000Z", "turn_context", {"cwd": "/w"})))
    r = read(p)
    assert unreadable(r) == [(4, "line cannot be decoded: KeyError: 'boom'")]
    assert r.info is not None and balanced(r.info) and "shell_command" in kinds(r)


# ---------------------------------------------------------------- lines and containers


def test_a_line_over_the_cap_is_one_unreadable_line_with_its_length(tmp_path: Path) -> None:
    big = env("2026-01-01T00:00:02.000Z", "response_item",
              {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x" * 5000}]})
    p = write(tmp_path, "r.jsonl", rollout(big))
    caps = ReadCaps(line_bytes=4096)
    t = api.Transcript(p, caps=caps)
    items = list(t.items())
    bad = [i for i in items if i.kind.value == "unreadable"]
    assert len(bad) == 1 and bad[0].line == 4
    assert bad[0].reason.startswith(f"line of {len(big) - 1} bytes is longer than the 4096-byte line cap")  # type: ignore[attr-defined]
    assert balanced(t.info()) and t.info().lines.lines == 8
    # the same file read with the default cap decodes the line
    assert read(p).info.lines.unreadable == 0  # type: ignore[union-attr]
    with pytest.raises(DecodeError):
        list(api.Transcript(p, caps=caps, strict=True).items())


def test_the_decompressed_size_cap_keeps_what_came_before(tmp_path: Path) -> None:
    text = rollout()
    p = write(tmp_path, "r.jsonl.zst", zstandard.ZstdCompressor().compress(text))
    cap = len(text) - 100
    t = api.Transcript(p, caps=ReadCaps(zstd_bytes=cap))
    items = list(t.items())
    bad = [i for i in items if i.kind.value == "unreadable"]
    assert [b.reason for b in bad][-1].startswith(f"decompressed size is over the {cap}-byte cap")  # type: ignore[attr-defined]
    assert "shell_command" in [i.kind.value for i in items] and balanced(t.info())


def test_a_skippable_frame_before_the_first_frame_is_stepped_over(tmp_path: Path) -> None:
    text = (TRANSCRIPT_FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    skip = struct.pack("<II", 0x184D2A5E, 12) + b"metadata1234"
    p = write(tmp_path, "r.jsonl.zst", skip + zstandard.ZstdCompressor().compress(text))
    plain = write(tmp_path, "plain.jsonl", text)
    assert sniff_format(p) is Format.ROLLOUT
    assert read(p).items == read(plain).items
    assert read_head(p).session_id == read_head(plain).session_id is not None


def test_a_first_frame_corrupt_after_some_blocks_keeps_them(tmp_path: Path) -> None:
    lines = [rollout()] + [env(f"2026-01-01T00:01:{i % 60:02d}.000Z", "response_item",
                                {"type": "reasoning", "summary": [{"type": "summary_text",
                                                                  "text": f"step {i} " + "y" * 300}]})
                           for i in range(3000)]
    text = b"".join(lines)
    obj = zstandard.ZstdCompressor(level=1).compressobj()
    blob = bytearray(obj.compress(text) + obj.flush())
    blob[len(blob) * 3 // 4:len(blob) * 3 // 4 + 64] = b"\xff" * 64  # damage a late block of the one frame
    p = write(tmp_path, "r.jsonl.zst", bytes(blob))
    r = read(p)
    bad = unreadable(r)
    assert r.info is not None and balanced(r.info) and "shell_command" in kinds(r)
    assert 1 <= len(bad) <= 2 and any("zstd" in reason for _, reason in bad)
    assert dict(r.info.counts)["reasoning"] > 100


def test_cr_only_line_ends_read_like_lf(tmp_path: Path) -> None:
    text = (TRANSCRIPT_FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    plain = write(tmp_path, "lf.jsonl", text)
    cr = write(tmp_path, "cr.jsonl", text.replace(b"\n", b"\r"))
    zst = write(tmp_path, "cr.jsonl.zst", zstandard.ZstdCompressor().compress(text.replace(b"\n", b"\r")))
    want = read(plain)
    for p in (cr, zst):
        got = read(p)
        assert got.items == want.items and got.info is not None and want.info is not None
        assert got.info.lines.lines == want.info.lines.lines


def test_sniffing_a_file_of_nul_bytes_reads_a_bounded_prefix(tmp_path: Path) -> None:
    p = tmp_path / "nul.jsonl"
    with open(p, "wb") as fh:
        fh.truncate(3 * SNIFF_BYTES)  # a sparse file of NUL bytes, no line end
    tracemalloc.start()
    try:
        with pytest.raises(UnsupportedFormatError):
            sniff_format(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < SNIFF_BYTES  # lines are read a MiB at a time, never the whole 24 MiB line
    # forced to read it as a rollout, the one line is skipped in bounded memory, and counted
    t = api.Transcript(p, format="rollout", caps=ReadCaps(line_bytes=1 << 20))
    list(t.items())
    assert t.info().lines.unreadable == 1 and balanced(t.info())


# ---------------------------------------------------------------- the TypeScript .json document


def ts_doc(items: list[Any] | None = None) -> bytes:
    doc = orjson.loads((TRANSCRIPT_FIXTURES / "ts_cli_0_1.json").read_bytes())
    if items is not None:
        doc["items"] = items
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2)


def test_a_truncated_document_gives_its_readable_items_and_one_unreadable_entry(tmp_path: Path) -> None:
    whole = ts_doc()
    full = read(write(tmp_path, "full.json", whole))
    cut_at = whole.index(b'"type": "function_call_output"')
    r = read(write(tmp_path, "cut.json", whole[:cut_at]))
    assert r.info is not None and r.info.format is Format.TS_JSON and balanced(r.info)
    bad = unreadable(r)
    assert len(bad) == 1 and "ends early" in bad[0][1]
    assert "user_message" in kinds(r) and len(kinds(r)) < len(kinds(full))


def test_a_number_over_1e308_costs_its_item(tmp_path: Path) -> None:
    doc = ts_doc().replace(b'"type": "reasoning"', b'"big": 1e309, "type": "reasoning"', 1)
    assert b"1e309" in doc
    r = read(write(tmp_path, "big.json", doc))
    full = read(write(tmp_path, "full.json", ts_doc()))
    assert len(unreadable(r)) == 1 and "infinity" in unreadable(r)[0][1]
    assert [k for k in kinds(full) if k != "reasoning"] == [k for k in kinds(r) if k != "reasoning"]


def test_a_deeply_nested_value_never_raises_recursion_error(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    doc = ts_doc()
    doc = doc.replace(b'"items": [', b'"items": [' + deep + b",", 1)
    p = write(tmp_path, "deep.json", doc)
    assert sniff_format(p) is Format.TS_JSON
    r = read(p)
    assert r.info is not None and balanced(r.info) and len(unreadable(r)) == 1
    assert "shell_command" in kinds(r)
    head = read_head(p)
    assert head.format is Format.TS_JSON and head.session_id is not None
    # in the session value too: the listing still reads the file
    doc2 = ts_doc().replace(b'"session": {', b'"session": {"deep": ' + deep + b",", 1)
    assert read_head(write(tmp_path, "deep2.json", doc2)).format is Format.TS_JSON
