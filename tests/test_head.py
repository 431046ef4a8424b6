"""decode.head: what the head (and tail) of a session file tells, for every era, without a full read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from tests.sessions_home import FIXTURE_HOME
from transcript_reader.model import Format
from transcript_reader.providers.codex.head import HEAD_BYTES, is_harness_context, read_head, read_tail

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def fixture(pattern: str) -> Path:
    hits = sorted(FIXTURE_HOME.rglob(pattern))
    assert len(hits) == 1, (pattern, hits)
    return hits[0]


def test_rollout_0171_head_skips_developer_and_environment_context() -> None:
    """The 0.171 session_meta line is ~22 KB and the prompt comes after skills/environment context."""
    h = read_head(fixture("*5471-7953*.jsonl"))
    assert h.format is Format.ROLLOUT
    assert h.session_id == "01a22d9c-5471-7953-942f-93603d8b9241"
    assert h.timestamp == "2026-11-30T17:59:09.684Z"
    assert h.cwd == "/home/user/project"
    assert h.originator == "codex_exec"
    assert h.cli_version == "0.171.0"
    assert h.model == "gpt-5.6-terra"  # from turn_context
    assert h.source == "exec"
    assert h.title == "make calc tests pass"
    assert h.parent_session_id is None and h.error is None


def test_subagent_parent_link_from_thread_spawn() -> None:
    h = read_head(fixture("*3ed4-7040*.jsonl"))
    assert h.source == "subagent:thread_spawn"
    assert h.parent_session_id == "01a22d9c-2643-7350-8a76-f18f2f46ae21"
    assert h.agent_nickname == "scout"


def test_early_rust_cwd_comes_from_environment_context() -> None:
    h = read_head(fixture("*a15ecbf8*.jsonl"))
    assert h.format is Format.EARLY_RUST
    assert h.session_id == "a15ecbf8-dd23-4bc0-bd21-281b20e67e5a"
    assert h.cwd == "/home/user/project"
    assert h.title == "what is wrong with calc.py?"
    assert h.model is None and h.cli_version is None  # 0.29 wrote neither


def test_ts_cli_document_head() -> None:
    h = read_head(fixture("*.json"))
    assert h.format is Format.TS_JSON
    assert h.session_id == "644b77d0-e8b0-4c9f-8b98-4376343dbf5f"
    assert h.timestamp == "2026-11-26T17:57:59.246Z"
    assert h.title == "fix calc.py and verify"
    assert h.cwd is None


def test_ts_cli_document_cut_by_the_budget_still_gives_its_head(tmp_path: Path) -> None:
    """Only the head of the single JSON document is parsed: items after the budget are never needed."""
    doc = {"session": {"timestamp": "2025-05-01T10:00:00Z", "id": "11111111-2222-3333-4444-555555555555",
                       "instructions": ""},
           "items": [{"role": "user", "type": "message", "content": [{"type": "input_text", "text": "hi there"}]}]
           + [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x" * 1000}]}] * 500}
    p = tmp_path / "rollout-2025-05-01-11111111-2222-3333-4444-555555555555.json"
    p.write_text(json.dumps(doc, indent=2))
    assert p.stat().st_size > 4096
    h = read_head(p, budget=4096)
    assert (h.session_id, h.title, h.format) == ("11111111-2222-3333-4444-555555555555", "hi there", Format.TS_JSON)


def test_exec_streams() -> None:
    new = read_head(FIXTURE_HOME / "exec_streams" / "0.171.0-multi_step.exec.jsonl")
    assert new.format is Format.EXEC_JSON and new.session_id == "01a22d9c-2643-7350-8a76-f18f2f46ae21"
    old = read_head(FIXTURE_HOME / "exec_streams" / "0.40.0-multi_step.exec.jsonl")
    assert old.format is Format.EXEC_PROTOCOL
    assert (old.model, old.cwd, old.title) == ("gpt-5", "/home/user/project", "fix calc.py and verify")


def test_zst_head_equals_plain_head(tmp_path: Path) -> None:
    src = fixture("*dccf-7c32*.jsonl")
    z = tmp_path / (src.name + ".zst")
    z.write_bytes(zstandard.ZstdCompressor().compress(src.read_bytes()))
    assert read_head(z) == read_head(src)
    assert read_tail(z).tokens is None  # a compressed file cannot be read from its end cheaply


def test_tail_gives_last_timestamp_and_last_cumulative_tokens() -> None:
    t = read_tail(fixture("*2643-7350*.jsonl"))
    assert t.last_timestamp == "2026-11-29T17:58:58.905Z"
    assert t.tokens is not None and t.tokens.total == 38891 and t.tokens.input == 38826
    assert t.tokens.cached_input == 14661


def test_head_reads_a_bounded_prefix_of_a_huge_file(tmp_path: Path) -> None:
    """A 20 MB session gives the same head as its first lines: nothing past the budget is read."""
    src = fixture("*2643-7350*.jsonl")
    big = tmp_path / src.name
    lines = src.read_bytes().splitlines(keepends=True)
    with open(big, "wb") as fh:
        fh.write(b"".join(lines))
        filler = lines[-3] * 1
        while fh.tell() < 20 * 1024 * 1024:
            fh.write(filler * 1000)
    assert read_head(big) == read_head(src)


def test_garbage_and_foreign_json_are_reported_not_raised(tmp_path: Path) -> None:
    junk = tmp_path / "rollout-junk.jsonl"
    junk.write_bytes(b"\x00\xff not json\n" * 10)
    assert read_head(junk).format is None and read_head(junk).error
    foreign = tmp_path / "rollout-foreign.jsonl"
    foreign.write_text('{"hello": "world"}\n')
    assert read_head(foreign).error == "not a Codex transcript"
    empty = tmp_path / "rollout-empty.jsonl"
    empty.write_text("")
    # an empty file is an empty rollout for the full read (a session Codex has just created), so ls says
    # so too (ls and inspect agree: tests/test_ls_inspect_agree.py)
    assert read_head(empty).format is Format.ROLLOUT and read_head(empty).error is None


def test_half_written_last_line_is_not_decoded(tmp_path: Path) -> None:
    src = fixture("*2643-7350*.jsonl")
    lines = src.read_bytes().splitlines(keepends=True)
    cut = tmp_path / src.name
    cut.write_bytes(lines[0][: len(lines[0]) // 2])
    h = read_head(cut)
    assert h.session_id is None  # the cut meta line is not guessed at


@pytest.mark.parametrize("text, context", [
    ("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>", True),
    ("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>…</INSTRUCTIONS>", True),
    ("<user_instructions>be nice</user_instructions>", True),
    ("<some_new_tag>whatever</some_new_tag>", True),
    ("fix calc.py and verify", False),
    ("<b>bold</b> is what I want in the README", False),
])
def test_harness_context(text: str, context: bool) -> None:
    assert is_harness_context(text) is context


def test_every_real_recording_has_a_head() -> None:
    """Every rollout of the realcodex corpus gives its session id (= the id in its recorded file name)."""
    corpus = SHARED / "corpus" / "realcodex"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus/realcodex is not available (fresh clone)")
    checked = 0
    for path_file in sorted(corpus.glob("*/*.rollout.path")):
        name = Path(path_file.read_text().strip()).name
        data = path_file.with_name(path_file.name.replace(".rollout.path", ".rollout.jsonl"))
        if not data.exists():
            data = data.with_suffix(".json")
        h = read_head(data)
        assert h.error is None, data
        assert h.session_id and h.session_id in name, (data, h.session_id)
        assert h.title, data
        checked += 1
    assert checked > 50
    assert HEAD_BYTES >= 64 * 1024


def test_corrupt_zst_is_an_error_row_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "rollout-2026-11-30T00-00-00-01a22d9c-0000-7000-8000-0000000000ff.jsonl.zst"
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    h = read_head(bad)
    assert h.format is None and h.error is not None and h.error.startswith("corrupt zstd stream")
