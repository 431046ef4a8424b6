"""Property tests of the reader (hypothesis): arbitrary lines never escape as anything but a typed
error in strict mode and never raise in lenient mode; the timeline is in source order; every line is
accounted for exactly once."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from transcript_reader.api import Transcript
from transcript_reader.errors import TranscriptError
from transcript_reader.model import Format

# Lines that look like transcript lines often enough to reach deep into the decoders.
_keys = st.sampled_from(["type", "payload", "timestamp", "call_id", "output", "role", "content", "name",
                         "arguments", "input", "item", "message", "id", "cmd", "command", "record_type", "msg"])
_types = st.sampled_from(["session_meta", "response_item", "event_msg", "turn_context", "compacted", "message",
                          "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
                          "item_completed", "CommandExecution", "FileChange", "exec_command_end", "task_complete",
                          "task_started", "token_count", "user_message", "agent_message", "reasoning", "exec",
                          "apply_patch", "shell", "exec_command", "local_shell_call", "world_state", "refusal"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=12), _types)
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.one_of(_keys, st.text(max_size=5)), inner,
                                                                     max_size=5)), max_leaves=20)
_line = st.one_of(
    st.text(max_size=40).map(lambda s: s.replace("\n", " ")),
    _json.map(json.dumps),
    st.fixed_dictionaries({"type": _types, "payload": _json}).map(json.dumps),
    st.fixed_dictionaries({"timestamp": st.just("2026-01-01T00:00:00Z"), "type": _types,
                           "payload": st.fixed_dictionaries({"type": _types}, optional={
                               "call_id": st.sampled_from(["c1", "c2"]), "output": _json, "name": _types,
                               "input": st.text(max_size=30), "arguments": _json.map(json.dumps),
                               "item": _json, "role": st.sampled_from(["user", "assistant"]),
                               "content": _json})}).map(json.dumps),
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(tmp: Path, lines: list[str], last_newline: bool) -> Path:
    p = tmp / "t.jsonl"
    p.write_text("\n".join(lines) + ("\n" if last_newline else ""), encoding="utf-8")
    return p


@SETTINGS
@given(lines=st.lists(_line, max_size=25), last_newline=st.booleans(),
       fmt=st.sampled_from([Format.ROLLOUT, Format.EARLY_RUST, Format.EXEC_JSON, Format.EXEC_PROTOCOL]))
# a user message event without content waits for its response copy; its notice keeps its place, before
# the unreadable line after it
@example(lines=['{"timestamp": "2026-01-01T00:00:00Z", "type": "event_msg", "payload": {"type": "user_message"}}',
                "0"], last_newline=False, fmt=Format.ROLLOUT)
def test_lenient_never_raises_and_accounts_for_every_line(tmp_path_factory, lines, last_newline, fmt) -> None:
    path = _write(tmp_path_factory.mktemp("p"), lines, last_newline)
    t = Transcript(path, format=fmt)
    items = list(t.items())
    a = t.info().lines
    text = path.read_bytes()
    probe = text[:64 << 10]
    if b"\r" in probe and b"\n" not in probe:  # a CR-only file (old Mac line ends) is read by its CRs
        text = text.replace(b"\r", b"\n")
    physical = text.count(b"\n") + (1 if text and not text.endswith(b"\n") else 0)
    assert a.lines == physical
    assert a.lines == a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank
    order = [i.line for i in items]
    assert order == sorted(order)
    assert all(1 <= i.line <= max(a.lines, 1) for i in items)


@SETTINGS
@given(lines=st.lists(_line, max_size=25), last_newline=st.booleans(),
       fmt=st.sampled_from([Format.ROLLOUT, Format.EARLY_RUST, Format.EXEC_JSON, Format.EXEC_PROTOCOL]))
def test_strict_raises_only_typed_errors(tmp_path_factory, lines, last_newline, fmt) -> None:
    path = _write(tmp_path_factory.mktemp("s"), lines, last_newline)
    try:
        t = Transcript(path, format=fmt, strict=True)
        items = list(t.items())
    except TranscriptError as e:
        assert e.path == str(path) and e.line is not None and e.reason
        return
    assert not [i for i in items if i.kind.value == "unreadable"]


@SETTINGS
@given(data=st.binary(max_size=200))
def test_sniffing_arbitrary_bytes_gives_a_format_or_a_typed_error(tmp_path_factory, data) -> None:
    p = tmp_path_factory.mktemp("b") / "x.jsonl"
    p.write_bytes(data)
    try:
        t = Transcript(p)
        list(t.items())
    except TranscriptError:
        pass


# Real-shaped lines with one value anywhere replaced by arbitrary JSON: reaches the deep branches of
# every decoder (a list where a string was, a null where an object was...).
def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


_REAL_LINES = [ln for p in sorted((Path(__file__).resolve().parents[1] / "fixtures" / "transcripts").glob("*.jsonl"))
               for ln in p.read_text(encoding="utf-8").splitlines() if _parses(ln)]


def _mutate(obj: object, data: st.DataObject, depth: int = 0) -> object:
    if isinstance(obj, dict) and obj and depth < 6:
        key = data.draw(st.sampled_from(sorted(obj)))
        out = dict(obj)
        out[key] = data.draw(_json) if data.draw(st.booleans()) else _mutate(obj[key], data, depth + 1)
        return out
    if isinstance(obj, list) and obj and depth < 6:
        i = data.draw(st.integers(0, len(obj) - 1))
        out_l = list(obj)
        out_l[i] = data.draw(_json) if data.draw(st.booleans()) else _mutate(obj[i], data, depth + 1)
        return out_l
    return data.draw(_json)


@SETTINGS
@given(data=st.data())
def test_mutated_real_lines_never_break_lenient_reading(tmp_path_factory, data) -> None:
    picks = data.draw(st.lists(st.sampled_from(_REAL_LINES), min_size=1, max_size=12))
    lines = [json.dumps(_mutate(json.loads(ln), data)) if data.draw(st.booleans()) else ln for ln in picks]
    path = _write(tmp_path_factory.mktemp("m"), lines, True)
    t = Transcript(path, format=Format.ROLLOUT)
    items = list(t.items())
    a = t.info().lines
    assert a.lines == len(lines) == a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank
    assert [i.line for i in items] == sorted(i.line for i in items)
