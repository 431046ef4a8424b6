"""Format sniffing of the TypeScript CLI's single-line (compact) ``{session, items}`` document over the
1 MiB sniff line limit: the same document reads whatever its size or whitespace, the giant line
is parsed once (by the decoder, not by sniffing), and a giant JSON line that is not such a document is
still refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import TRANSCRIPT_FIXTURES
from transcript_reader import api
from transcript_reader.errors import UnsupportedFormatError
from transcript_reader.model import Format
from transcript_reader.providers import sniff_format
from transcript_reader.providers.codex.sniff import SNIFF_MAX_LINE

TS_FIXTURE = TRANSCRIPT_FIXTURES / "ts_cli_0_1.json"


def compact_doc(tmp_path: Path, name: str, *, pad: int = 0, instructions: str = "", extra_items: int = 0) -> Path:
    """The fixture's document written on one line, a command output padded by ``pad`` bytes, the session's
    instructions replaced, ``extra_items`` reasoning items appended before the final answer."""
    doc = json.loads(TS_FIXTURE.read_text())
    doc["session"]["instructions"] = instructions
    out = json.loads(doc["items"][3]["output"])
    out["output"] += "x" * pad
    doc["items"][3]["output"] = json.dumps(out)
    filler = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking " * 4}], "id": "rf"}
    doc["items"][-1:-1] = [filler] * extra_items
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc))  # compact: one line, no newline
    return path


def run_json(*args: str) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-m", "transcript_reader", *args, "--json"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def shell(doc: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(i["command"], i["exit_code"], i["executed"]) for i in doc["items"] if i["kind"] == "shell_command"]


def test_a_compact_document_over_the_line_limit_reads_like_the_indented_one(tmp_path: Path) -> None:
    big = compact_doc(tmp_path, "big.json", pad=2 * SNIFF_MAX_LINE)
    assert big.stat().st_size > 2 * SNIFF_MAX_LINE and big.read_bytes().count(b"\n") == 0
    assert sniff_format(big) is Format.TS_JSON
    got = run_json("read", str(big))
    want = run_json("read", str(TS_FIXTURE))
    assert got["format"] == want["format"] == "ts-json"
    assert shell(got) == shell(want) and shell(got)[0] == ("pytest -q", 0, "yes")
    assert [i["kind"] for i in got["items"]] == [i["kind"] for i in want["items"]]
    info = run_json("inspect", str(big))["info"]
    assert info["format"] == "ts-json" and info["session_id"] == "22222222-3333-4444-8555-666666666666"


def test_a_many_item_compact_document_reads_every_item(tmp_path: Path) -> None:
    # the second case: 300,000 items (26 MB) were refused; 30,000 show the same path (3 MB, one line)
    many = compact_doc(tmp_path, "many.json", extra_items=30_000)
    assert many.stat().st_size > 2 * SNIFF_MAX_LINE
    info = run_json("inspect", str(many))["info"]
    assert info["format"] == "ts-json" and info["counts"]["reasoning"] == 30_001
    assert info["counts"]["shell_command"] == 1


def test_a_session_longer_than_the_sniff_window_is_still_recognised(tmp_path: Path) -> None:
    # the session value alone does not close within the first SNIFF_MAX_LINE bytes
    long_session = compact_doc(tmp_path, "long.json", instructions="é" * SNIFF_MAX_LINE)
    assert sniff_format(long_session) is Format.TS_JSON
    assert [(s.command, s.exit_code) for s in api.read(long_session, projection="shell_commands").items] == [
        ("pytest -q", 0)]


def test_the_giant_document_is_never_loaded_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Items are decoded one by one as the document is scanned (a 300 MB document took
    1.2 GB loaded whole); neither sniffing nor decoding parses the document in one piece."""
    big = compact_doc(tmp_path, "big.json", pad=3 * SNIFF_MAX_LINE)
    size = big.stat().st_size
    calls: list[int] = []
    real_loads = orjson.loads

    def counting_loads(data: Any) -> Any:
        if len(data) >= size:  # the whole document (the padded output's own envelope is parsed too)
            calls.append(len(data))
        return real_loads(data)

    monkeypatch.setattr(orjson, "loads", counting_loads)
    info = api.inspect(big)
    assert info.format is Format.TS_JSON and calls == []
    assert info.counts == api.inspect(TS_FIXTURE).counts


@pytest.mark.parametrize(
    "head",
    [
        b'{"items": [',  # a golden output / API dump: items without the session first
        b'{"session": {"id": "s"}, "result": [',  # a session, but no items array after it
        b'{"session": {"id": "s", "items": [',  # "items" inside the session value is not the document's
        b'[{"session": {}}, {"items": [',  # not an object
    ],
)
def test_a_giant_json_line_that_is_not_a_ts_document_is_refused(tmp_path: Path, head: bytes) -> None:
    path = tmp_path / "other.json"
    path.write_bytes(head + b'"' + b"x" * (SNIFF_MAX_LINE + 10) + b'"]}')
    with pytest.raises(UnsupportedFormatError):
        sniff_format(path)
