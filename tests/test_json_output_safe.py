"""JSON output never fails on what a script contains: a lone UTF-16 surrogate (``"echo \\uD800"``
decodes to one; UTF-8 has no encoding for it) is written as its six-character escape, and a literal
nested deeper than any encoder accepts is cut at ``exec_grammar.render.MAX_JSON_DEPTH``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from exec_grammar import analyze
from exec_grammar.render import MAX_JSON_DEPTH, TOO_DEEP, analysis_to_json, json_text
from tests.test_mcp_server import call, config_for, ok_payload
from transcript_reader.projections import render

ROOT = Path(__file__).resolve().parents[1]
ROLLOUT = ROOT / "fixtures" / "witness" / "0.144.0" / "hostile_cells.rollout.jsonl"


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _hostile_text_cell(tmp_path: Path) -> Path:
    """The recorded 0.144 session with its first cell replaced by one holding a lone surrogate and a
    literal 300 levels deep."""
    cell = (f'await tools.exec_command({{cmd: "echo \\uD800"}});\n'
            f'await tools.view_image({{path: "a\\uDC00.png", deep: {_deep(300)}}});\n')
    out = []
    replaced = False
    for line in ROLLOUT.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        payload = rec.get("payload") or {}
        if not replaced and payload.get("type") == "custom_tool_call" and payload.get("name") == "exec":
            payload["input"] = cell
            replaced = True
        out.append(json.dumps(rec))
    path = tmp_path / "surrogate.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def test_json_text_escapes_lone_surrogates_only() -> None:
    assert json_text("echo \ud800") == "echo \\ud800"
    assert json_text("a\udc00b\ud83d") == "a\\udc00b\\ud83d"
    assert json_text("h\u00e9llo \U0001f600") == "h\u00e9llo \U0001f600"  # a real pair is one code point
    assert json_text("plain") == "plain"


@pytest.mark.parametrize("projection", ["timeline", "shell_commands", "tool_calls"])
def test_read_json_writes_a_lone_surrogate_as_an_escape(tmp_path: Path, projection: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "transcript_reader", "read", "--json", "-p", projection,
                           str(_hostile_text_cell(tmp_path))], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-400:] + proc.stderr[-400:]
    doc = json.loads(proc.stdout.decode("utf-8"))  # strict UTF-8: nothing unencodable got out
    assert doc["ok"] is True
    if projection != "tool_calls":
        commands = [i["command"] for i in doc["items"] if i["kind"] == "shell_command"]
        assert commands[0] == "echo \\ud800"


@pytest.mark.parametrize("depth", [254, 300, 999, 5000])
def test_a_deep_literal_never_breaks_the_encoders(depth: int) -> None:
    a = analyze(f'await tools.view_image({{path: "x\\uD800", deep: {_deep(depth)}}});')
    for data in (analysis_to_json(a), render.analysis(a)):
        text = orjson.dumps(data).decode()  # orjson stops at 255 levels; lone surrogates are refused
        assert json.loads(text)
        assert json.dumps(data, ensure_ascii=False).encode("utf-8")
    argument = analysis_to_json(a)["calls"][0]["argument"]
    if argument is not None:
        level, value = 0, argument["deep"]
        while isinstance(value, list) and value:
            level, value = level + 1, value[0]
        assert level <= MAX_JSON_DEPTH and (value == TOO_DEEP or depth <= MAX_JSON_DEPTH)


@pytest.mark.parametrize("depth", [300, 5000])
def test_the_mcp_analysis_tool_answers_a_deep_literal(depth: int) -> None:
    script = f'await tools.exec_command({{cmd: "echo \\uD800", deep: {_deep(depth)}}});'
    payload = ok_payload(call(config_for(), "exec_script_analyze", {"script": script}))
    assert [c["name"] for c in payload["calls"]] == ["exec_command"]
