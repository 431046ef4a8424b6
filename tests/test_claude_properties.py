"""Property tests of the Claude Code provider: whatever a file holds (real lines cut, dropped, reordered,
or with any JSON in any field), reading it never raises, every physical line is accounted for exactly once,
and a call is never said to have run without a result line for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.claude_home import RECORDED
from transcript_reader.api import Transcript
from transcript_reader.model import Executed, ShellCommand

SOURCES = [p for p in sorted(RECORDED.rglob("*.jsonl")) if ".stream" not in p.name and "bash_fail" in str(p)]
LINES = SOURCES[0].read_bytes().splitlines(keepends=True) + \
    sorted((Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcripts").glob("*.jsonl"))[0] \
    .read_bytes().splitlines(keepends=True)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _mutate(line: bytes, key: str, value: Any) -> bytes:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    if isinstance(obj, dict):
        target = obj.get("message") if isinstance(obj.get("message"), dict) and len(key) % 2 else obj
        target[key or "type"] = value
    return orjson.dumps(obj) + b"\n"


@st.composite
def damaged_files(draw: st.DrawFn) -> bytes:
    picks = draw(st.lists(st.integers(0, len(LINES) - 1), min_size=1, max_size=30))
    out = []
    for i in picks:
        line = LINES[i]
        how = draw(st.sampled_from(["keep", "keep", "cut", "mutate", "blank"]))
        if how == "cut":
            line = line[: draw(st.integers(0, max(0, len(line) - 1)))] + b"\n"
        elif how == "mutate":
            key = draw(st.sampled_from(["type", "content", "toolUseResult", "isSidechain", "usage", "x",
                                        "is_error", "sessionId"]))
            line = _mutate(line, key, draw(json_values))
        elif how == "blank":
            line = b"   \n"
        out.append(line)
    data = b"".join(out)
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # the file cut mid-write
    return data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=damaged_files())
def test_any_damage_is_read_and_accounted(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("claude") / "damaged.jsonl"
    path.write_bytes(data)
    t = Transcript(path, format="claude-code")
    items = list(t.items())
    acc = t.info().lines
    physical = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert acc.lines == physical
    assert acc.lines == acc.decoded + acc.known_noise + acc.unknown + acc.unreadable + acc.blank
    results = data.count(b'"tool_result"')
    ran = [i for i in items if isinstance(i, ShellCommand) and i.executed is Executed.YES]
    assert len(ran) <= results


def test_a_line_over_the_cap_costs_one_line(tmp_path: Path) -> None:
    """A Claude Code line longer than the read cap (a pasted log, a huge tool result) is one unreadable
    line, skipped without being held; the lines around it read as usual."""
    from transcript_reader.reading.source import ReadCaps

    src = SOURCES[0].read_bytes().splitlines(keepends=True)
    cap = max(len(line) for line in src) + 1  # every recorded line fits; the pasted one does not
    huge = b'{"type":"user","sessionId":"x","message":{"role":"user","content":"' + b"a" * cap + b'"}}\n'
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b"".join(src[:3]) + huge + b"".join(src[3:]))
    t = Transcript(path, caps=ReadCaps(line_bytes=cap))
    items = list(t.items())
    acc = t.info().lines
    assert acc.unreadable == 1 and acc.lines == len(src) + 1
    assert [i.line for i in items if i.kind.value == "unreadable"] == [4]
    assert [i.exit_code for i in items if isinstance(i, ShellCommand)] == [1, 1]
