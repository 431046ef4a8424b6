"""The message-only reading (``api.read`` for ``final``, ``conversation``…: lines that cannot reach a
message are not decoded) gives exactly a full read's items, on every fixture and corpus file; its
``info`` is computed when asked for, and equals the full read's."""

from __future__ import annotations

from pathlib import Path

import pytest

from transcript_reader import api
from transcript_reader.errors import TranscriptError
from transcript_reader.projections import Limits, apply_projection, selector

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus"
CASES = (("final", (), ()), ("conversation", (), ()), ("assistant_messages", (), ()),
         ("conversation", ("context",), ()), ("final", ("user_message",), ()))


def _files() -> list[Path]:
    out = sorted((ROOT / "fixtures").rglob("*.jsonl")) + sorted((ROOT / "fixtures").rglob("*.zst"))
    if SHARED.is_dir():
        out += sorted(SHARED.rglob("*.jsonl"))
    return out


def _full(path: Path, projection: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> list[object]:
    sel = selector(projection, include, exclude)
    return [i for i in api.Transcript(path).items() if sel(i)]


def test_message_projections_equal_a_full_read_on_every_recorded_file() -> None:
    fast = 0
    for f in _files():
        for projection, include, exclude in CASES:
            try:
                full = _full(f, projection, include, exclude)
            except TranscriptError:
                continue
            r = api.read(f, projection=projection, include=include, exclude=exclude)
            assert list(r.items) == full, (f.name, projection, include)
            assert r.total_items == len(full) and r.dropped_items == 0
            if type(r).__name__ == "_LazyInfoResult":
                fast += 1
    assert fast > 50  # the message-only reading itself was compared, not only the full read


def test_limits_and_lazy_info(tmp_path: Path) -> None:
    f = next(p for p in _files() if p.name.endswith(".jsonl") and "multi" in p.name and p.stat().st_size > 20000)
    full = api.read(f, projection="conversation", tail=3, max_chars=200, lazy_info=False)
    r = api.read(f, projection="conversation", tail=3, max_chars=200)
    assert type(r).__name__ == "_LazyInfoResult"
    assert r.items == full.items and r.truncated == full.truncated and r.truncated_chars == full.truncated_chars
    assert r.dropped_items == full.dropped_items and r.total_items == full.total_items
    assert r.info == full.info == api.inspect(f)  # computed on first read, by a full pass
    assert r == full
    kept, *_ = apply_projection(iter(_full(f, "conversation", (), ())), Limits(tail=3, max_chars=200))
    assert list(r.items) == kept


def test_an_undecided_message_with_a_long_backlog_is_read_whole(tmp_path: Path) -> None:
    """An assistant message without a phase waits for its turn's end; behind more than a quarter of
    the pending bound of skipped lines the message-only reading gives way to the full read (whose
    backlog may release the message as not final)."""
    import orjson

    lines = [{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
              "payload": {"id": "s1", "cwd": "/w", "cli_version": "0.100.0"}},
             {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "task_started"}},
             {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
              "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}}]
    for i in range(1500):
        lines.append({"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
                      "payload": {"type": "function_call", "name": "shell", "call_id": f"c{i}",
                                  "arguments": '{"command":["ls"]}'}})
    lines.append({"timestamp": "2026-01-01T00:00:03Z", "type": "event_msg",
                  "payload": {"type": "task_complete", "last_agent_message": "hi"}})
    f = tmp_path / "rollout-2026-01-01T00-00-00-s1.jsonl"
    f.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    r = api.read(f, projection="final")
    assert type(r).__name__ != "_LazyInfoResult"
    assert list(r.items) == _full(f, "final", (), ())


@pytest.mark.parametrize("strict", [True])
def test_strict_reads_are_whole(strict: bool) -> None:
    f = next(p for p in _files() if p.name.endswith(".rollout.jsonl"))
    assert type(api.read(f, projection="final", strict=strict)).__name__ == "ReadResult"


def _rollout(tmp_path: Path, payloads: list[tuple[str, dict[str, object]]]) -> Path:
    import orjson

    lines = [{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
              "payload": {"id": "s2", "cwd": "/w", "cli_version": "0.150.0"}}]
    lines += [{"timestamp": f"2026-01-01T00:00:{i:02d}Z", "type": t, "payload": p} for i, (t, p) in enumerate(payloads, 1)]
    f = tmp_path / "rollout-2026-01-01T00-00-00-s2.jsonl"
    f.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return f


@pytest.mark.parametrize("between", ["reasoning", "call", "token_count", "broken", "none"])
def test_a_user_message_waiting_for_its_event_copy_settles_as_in_a_full_read(tmp_path: Path, between: str) -> None:
    """A response_item user message waits for its event copy; a record of the turn's work settles it
    first. A line the message-only reading skips still settles it (its records are shown to the prompt
    logic), so the user message is a prompt or context exactly as in the full read."""
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix calc"}]}
    event = {"type": "user_message", "message": "fix calc"}
    work = {"reasoning": ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "x"}]}),
            "call": ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                                       "arguments": '{"command":["ls"]}'}),
            "token_count": ("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 3}}}),
            "broken": ("event_msg", {"type": "exec_command_end", "call_id": 5}),
            }.get(between)
    seq: list[tuple[str, dict[str, object]]] = [("event_msg", {"type": "task_started", "turn_id": "t1"}),
                                                ("event_msg", event), ("response_item", user)]
    # a second turn whose response copy comes first, with work between it and its event copy
    seq += [("event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": None}),
            ("event_msg", {"type": "task_started", "turn_id": "t2"}), ("response_item", user)]
    if work is not None:
        seq.append(work)
    seq += [("event_msg", event),
            ("response_item", {"type": "message", "role": "assistant", "phase": "final_answer",
                               "content": [{"type": "output_text", "text": "done"}]}),
            ("event_msg", {"type": "task_complete", "turn_id": "t2", "last_agent_message": "done"})]
    f = _rollout(tmp_path, seq)
    for projection, include in (("conversation", ()), ("conversation", ("context",)), ("final", ())):
        r = api.read(f, projection=projection, include=include)
        assert type(r).__name__ == "_LazyInfoResult"
        assert list(r.items) == _full(f, projection, include, ()), (projection, include)
