"""``transcript-reader read`` / ``inspect`` through a real subprocess: the JSON shapes,
errors as ``{"ok": false, "error": {code, message}}`` with a non-zero exit and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRANSCRIPT_FIXTURES

FIX = TRANSCRIPT_FIXTURES


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transcript_reader", *args], capture_output=True, text=True,
                          timeout=120)


def run_json(*args: str) -> dict[str, Any]:
    p = run(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def test_read_json_has_the_issue_shape() -> None:
    doc = run_json("read", str(FIX / "pairing_shell_argv_envelope.jsonl"))
    assert set(doc) == {"ok", "path", "format", "projection", "items", "truncated", "stats"}
    assert doc["ok"] is True and doc["format"] == "rollout" and doc["projection"] == "timeline"
    kinds = [i["kind"] for i in doc["items"]]
    assert "context" not in kinds and "reasoning" not in kinds and "raw_output" not in kinds  # hidden by default
    shell = [i for i in doc["items"] if i["kind"] == "shell_command"]
    assert [(s["command"], s["exit_code"], s["executed"]) for s in shell] == [("ls missing", 2, "yes"), ("ls", 0, "yes")]
    assert doc["stats"]["lines"]["lines"] == 23 and doc["truncated"] is False


def test_read_projection_include_exclude_and_limits() -> None:
    path = str(FIX / "pairing_shell_argv_envelope.jsonl")
    final = run_json("read", path, "--projection", "final")
    assert [i["text"] for i in final["items"]] == ["Done: a.txt added.", "You're welcome."]
    conv = run_json("read", path, "--projection", "conversation", "--include", "reasoning", "--exclude", "user_message")
    assert {i["kind"] for i in conv["items"]} == {"assistant_message", "reasoning"}
    tail = run_json("read", path, "--tail", "2")
    assert [i["kind"] for i in tail["items"]] == ["user_message", "assistant_message"]
    assert tail["truncated"] is True and tail["stats"]["dropped_items"] == tail["stats"]["total_items"] - 2
    cut = run_json("read", path, "--projection", "raw_outputs", "--max-chars-per-item", "5")
    assert all(len(i["text"]) <= 5 for i in cut["items"]) and cut["stats"]["truncated_chars"] > 0
    assert all(i["truncated_chars"] > 0 for i in cut["items"] if len(i["text"]) == 5)


def test_inspect_json() -> None:
    doc = run_json("inspect", str(FIX / "pairing_records_direct.jsonl"))
    info = doc["info"]
    assert doc["ok"] is True and info["version"] == "0.171.0" and info["turns"] == 1
    assert info["tokens"] == {"input": 100, "cached_input": 50, "cache_write": 0, "output": 10, "reasoning": 1,
                              "total": 110,
                              "source": "sum of running-total differences"}
    lines = info["lines"]
    assert lines["lines"] == lines["decoded"] + lines["known_noise"] + lines["unknown"] + lines["unreadable"] + lines["blank"]
    assert lines["noise_types"] == {"token_usage_record": 1, "world_state": 1}


@pytest.mark.parametrize(("args", "code"), [
    (("read", "/no/such/file.jsonl"), "file_not_found"),
    (("inspect", "/no/such/file.jsonl"), "file_not_found"),
    (("read", str(FIX)), "not_a_file"),
    (("read", str(FIX / "truncated_last_line.jsonl"), "--strict"), "decode_error"),
    (("read", str(FIX.parent / "mcp" / "not_a_transcript.txt")), "unsupported_format"),
])
def test_errors_are_json_with_a_code_and_no_traceback(args: tuple[str, ...], code: str) -> None:
    p = run(*args, "--json")
    assert p.returncode != 0
    doc = json.loads(p.stdout)
    assert doc["ok"] is False and doc["error"]["code"] == code and doc["error"]["message"]
    assert "Traceback" not in p.stderr


def test_strict_error_names_file_line_and_reason() -> None:
    p = run("read", str(FIX / "truncated_last_line.jsonl"), "--strict")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "truncated_last_line.jsonl:5: truncated last line" in p.stderr


def test_plain_output_is_readable() -> None:
    p = run("read", str(FIX / "code_mode_records.jsonl"))
    assert p.returncode == 0
    assert "$ echo never" in p.stdout and "executed no" in p.stdout
    p = run("inspect", str(FIX / "code_mode_records.jsonl"))
    assert p.returncode == 0 and "scripts" in p.stdout and "rollout" in p.stdout


def test_unknown_projection_is_a_usage_error() -> None:
    p = run("read", str(FIX / "dedupe.jsonl"), "--projection", "nope")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_fixture_dir_exists() -> None:
    assert Path(FIX).is_dir()


@pytest.mark.parametrize("args", [
    ("read",), ("read", "--json"), ("read", "--projection", "shell_commands", "--json"), ("inspect",),
    ("inspect", "--json"),
])
def test_a_full_stdout_is_one_error_line_on_stderr(args: tuple[str, ...]) -> None:
    """`read`/`inspect` > /dev/full printed a traceback. Now they are guarded like the other
    commands: non-zero exit, one line on stderr (the JSON envelope with --json, since stdout is what
    failed)."""
    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is absent on this system: cannot make stdout fail")
    cmd, *rest = args
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "transcript_reader", cmd, str(FIX / "code_mode_records.jsonl"),
                            *rest], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1, p.stderr
    if "--json" in rest:
        doc = json.loads(err[0])
        assert doc == {"ok": False, "error": {"code": "output_error",
                                              "message": "cannot write the output: No space left on device"}}
    else:
        assert err[0] == "Error: cannot write the output: No space left on device"


def test_errors_still_reach_a_working_stdout_as_json() -> None:
    # The stderr fallback is only for a failing stdout: a normal error stays the envelope on stdout.
    p = run("inspect", "/no/such/file.jsonl", "--json")
    assert p.returncode == 1 and p.stderr == "" and json.loads(p.stdout)["error"]["code"] == "file_not_found"


def test_a_json_document_with_items_but_no_session_is_not_a_transcript(tmp_path: Path) -> None:
    """Only the TypeScript CLI's {session, items} document is a transcript; another JSON object that
    happens to hold "items" (a golden output, an API dump) is unsupported_format, content not echoed."""
    doc = tmp_path / "golden.json"
    doc.write_text('{"items": [{"kind": "user_message", "text": "secret-ish"}], "ok": true}')
    proc = subprocess.run([sys.executable, "-m", "transcript_reader", "read", "--json", str(doc)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == "unsupported_format" and "secret-ish" not in proc.stdout + proc.stderr
