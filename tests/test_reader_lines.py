"""What one line may cost: a bad character costs that character (replaced with U+FFFD, and said), never
the line; a run of empty lines is read as one piece, counted line by line. Each test builds its small
input in every line format a bad character can reach (a rollout, an exec stream, a Claude Code file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from transcript_reader import read
from transcript_reader.errors import DecodeError
from transcript_reader.providers.jsontext import REPLACEMENT, loads_repaired
from transcript_reader.reading.source import iter_lines, prefix_lines

SID = "01a22d9c-0000-7000-8000-0000000000bb"
TS = "2026-01-01T00:00:00.000Z"


def env(type_: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": TS, "type": type_, "payload": payload}) + b"\n"


META = env("session_meta", {"id": SID, "timestamp": TS, "cwd": "/w", "originator": "codex_cli_rs",
                            "cli_version": "0.171.0", "source": "cli"})


def user(text: str) -> bytes:
    return env("response_item", {"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": text}]})


def balanced(info: Any) -> bool:
    a = info.lines
    return bool(a.lines == a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank)


def texts(r: Any) -> list[str]:
    return [i.text for i in r.items if i.kind.value == "user_message"]


def replaced_notices(r: Any) -> list[int]:
    return [i.line for i in r.items if i.kind.value == "notice" and i.category == "replaced_characters"]


# the bad characters the reader met in files: raw bytes in the line, or an escape in the JSON text
BAD = {
    "escaped lone high surrogate": (b"\\ud83d", 1),  # a JavaScript writer cut an emoji in half
    "escaped lone low surrogate": (b"\\udc00", 1),
    "overlong UTF-8 (a slash in two bytes)": (b"\xc0\xaf", 2),
    "CESU-8 (an astral character as two 3-byte surrogates)": (b"\xed\xa0\xbd\xed\xb8\x80", 6),
    "a stray byte": (b"\xff", 1),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_character_in_a_prompt_costs_that_character_not_the_prompt(tmp_path: Path, name: str) -> None:
    bad, n_replaced = BAD[name]
    line = user("fix BAD now").replace(b"BAD", bad)
    p = tmp_path / "r.jsonl"
    p.write_bytes(META + line + user("next prompt"))
    r = read(p)
    assert texts(r) == ["fix " + REPLACEMENT * n_replaced + " now", "next prompt"]
    assert replaced_notices(r) == [2]
    assert r.info is not None and balanced(r.info) and r.info.lines.unreadable == 0
    assert r.info.session_id == SID
    with pytest.raises(DecodeError) as e:  # a strict reading accepts no damage, and names the line
        read(p, strict=True)
    assert e.value.line == 2


def test_a_bad_character_in_the_session_line_keeps_the_session(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(META.replace(b'"/w"', b'"/w\xff"') + user("hello"))
    r = read(p)
    assert r.info is not None and r.info.session_id == SID and r.info.cwd == "/w" + REPLACEMENT
    assert texts(r) == ["hello"] and replaced_notices(r) == [1]


def test_a_bad_character_in_an_exec_stream_line_costs_that_character(tmp_path: Path) -> None:
    lines = [
        {"type": "thread.started", "thread_id": SID},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "all BAD done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}},
    ]
    data = b"".join(orjson.dumps(x) + b"\n" for x in lines).replace(b"BAD", b"\\ud800")
    p = tmp_path / "e.jsonl"
    p.write_bytes(data)
    r = read(p)
    answers = [i.text for i in r.items if i.kind.value == "assistant_message"]
    assert answers == ["all " + REPLACEMENT + " done"] and replaced_notices(r) == [3]
    assert r.info is not None and r.info.lines.unreadable == 0


def test_a_bad_character_in_a_claude_code_line_costs_that_character(tmp_path: Path) -> None:
    def line(i: int, obj: dict[str, Any]) -> bytes:
        base = {"sessionId": SID, "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None,
                "timestamp": TS, "cwd": "/w", "version": "2.1.0", "isSidechain": False}
        return orjson.dumps({**base, **obj}) + b"\n"

    data = (line(0, {"type": "user", "message": {"role": "user", "content": "fix BAD please"}})
            + line(1, {"type": "assistant", "message": {"role": "assistant", "model": "claude",
                                                        "content": [{"type": "text", "text": "ok"}]}}))
    p = tmp_path / "c.jsonl"
    p.write_bytes(data.replace(b"BAD", b"\xed\xa0\x80"))
    r = read(p)
    assert texts(r) == ["fix " + REPLACEMENT * 3 + " please"] and replaced_notices(r) == [1]


def test_a_line_that_is_not_json_for_another_reason_stays_unreadable() -> None:
    assert loads_repaired(b'{"a": 1e309, "b": "\\ud800"}') is None  # a value would change: refused
    assert loads_repaired(b'{"a": NaN, "b": "\\ud800"}') is None
    assert loads_repaired(b'{"a": "\xff"') is None  # cut short
    assert loads_repaired(b'{"a": "ok"}') is None  # nothing to repair: not this function's line
    fixed = loads_repaired(b'{"\\udc00k": ["\\ud800", {"x": "\xff"}]}')
    assert fixed is not None and fixed.replaced == 3
    assert fixed.value == {REPLACEMENT + "k": [REPLACEMENT, {"x": REPLACEMENT}]}


# ---------------------------------------------------------------- runs of empty lines


@pytest.mark.parametrize("blank", [1, 2, 5000, 300_000])
def test_a_run_of_empty_lines_is_counted_line_by_line(tmp_path: Path, blank: int) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(META + user("before") + b"\n" * blank + user("after") + b"  \n\r\n" + user("last"))
    r = read(p)
    assert texts(r) == ["before", "after", "last"]
    assert [i.line for i in r.items if i.kind.value == "user_message"] == [2, 3 + blank, 6 + blank]
    assert r.info is not None and balanced(r.info)
    assert r.info.lines.blank == blank + 2 and r.info.lines.lines == 6 + blank


def test_line_numbers_after_a_run_of_empty_lines_hold_in_every_line_reader(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"a\n" + b"\n" * 70_000 + b"b\n\nc")
    got = [(n, raw.strip(), raw.count(b"\n")) for n, raw, _ in iter_lines(p)]  # type: ignore[union-attr]
    assert got[0] == (1, b"a", 1) and got[-1] == (70_004, b"c", 0)
    assert sum(c for _, _, c in got) == 70_003
    with p.open("rb") as fh:
        pieces = [raw for raw, _ in prefix_lines(fh)]
    assert b"".join(pieces) == p.read_bytes() and len(pieces) < 100  # a piece a buffer, not a line


def test_an_exec_stream_with_runs_of_empty_lines_counts_them(tmp_path: Path) -> None:
    lines = [{"type": "thread.started", "thread_id": SID}, {"type": "turn.started"},
             {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "done"}},
             {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}]
    p = tmp_path / "e.jsonl"
    p.write_bytes(b"\n\n\n".join(orjson.dumps(x) for x in lines) + b"\n")
    r = read(p)
    assert r.info is not None and r.info.lines.lines == 10 and r.info.lines.blank == 6 and balanced(r.info)
