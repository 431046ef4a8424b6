"""The byte-level pre-check of the message-only reading (``lines.iter_decoded`` with a ``skip`` set) never
skips a line that could reach an item the reading keeps: a property test over generated rollout lines
(each skipped line is decoded in full, and its records may only make calls, outputs, reasoning, token
counts, and, when context is not kept, context items), and over generated sessions (``api.read`` of the
message projections equals a full read's items, whatever the order of copies, context and work)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_reader import api
from transcript_reader.model import Format
from transcript_reader.projections import selector
from transcript_reader.providers.codex.lines import CONTEXT_MESSAGES, MESSAGE_SKIP, SKIPPED, iter_decoded
from transcript_reader.providers.codex.numbering import GAP
from transcript_reader.providers.records import (
    NOISE,
    Call,
    ExecEnd,
    Message,
    Meta,
    NoticeRec,
    Output,
    PatchEnd,
    ReasoningRec,
    Tokens,
    ToolEnd,
    UsageEvent,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TS = "2026-01-01T00:00:00.000Z"

# texts that sit on the edges of the context rule (``common.context_label``) and of the pre-check
_EDGE_TEXTS = st.sampled_from([
    "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>", "<environment_context> x",
    "<environment_contextx>", "<environment_context", "\n <permissions instructions>\nx", "\t<skill>x",
    "<skills_instructions>", "<skill_x>", "# AGENTS.md instructions for /w", " # AGENTS.md", "#AGENTS.md",
    "<user_instructions>a</user_instructions>", "<foo>bar</foo>", "<foo>bar", "<INSTRUCTIONS>", "<goal>",
    '"role":"developer"', '","role":"developer"', "fix calc.py", "", "  ", "\u2028<goal>", "\x0b<goal>",
    "<turn_aborted>", "<env\\ironment_context>", "done",
])
_TEXTS = st.one_of(_EDGE_TEXTS, st.text(max_size=20))
_PART_TYPES = st.sampled_from(["input_text", "output_text", "refusal", "input_image", "text", None])


@st.composite
def _part(draw: Any) -> Any:
    t = draw(_PART_TYPES)
    part: dict[str, Any] = {} if t is None else {"type": t}
    if draw(st.booleans()):
        part["text"] = draw(st.one_of(_TEXTS, st.integers(0, 3), st.none()))
    if t == "refusal" and draw(st.booleans()):
        part["refusal"] = draw(_TEXTS)
    if t == "input_image":
        part["image_url"] = draw(st.sampled_from(["data:image/png;base64,xx", "/p.png", None]))
    return draw(_shuffled(part)) if draw(st.booleans()) else part


def _shuffled(d: dict[str, Any]) -> Any:
    return st.permutations(list(d)).map(lambda keys: {k: d[k] for k in keys})


@st.composite
def _message(draw: Any) -> Any:
    p: dict[str, Any] = {"type": "message"}
    if draw(st.booleans()):
        p["id"] = draw(st.sampled_from(["msg_1", "m\\2", 'm"3', "", 7]))
    p["role"] = draw(st.sampled_from(["user", "developer", "assistant", "system", None, 5]))
    p["content"] = draw(st.one_of(st.lists(_part(), max_size=3), _TEXTS, st.none(), st.integers(0, 2)))
    if draw(st.booleans()):
        p["phase"] = draw(st.sampled_from(["commentary", "final_answer", None]))
    if draw(st.booleans()):
        p["internal_chat_message_metadata_passthrough"] = {"role": "developer"}
    return draw(_shuffled(p)) if draw(st.integers(0, 3)) == 0 else p


@st.composite
def _near_context(draw: Any) -> Any:
    """A message shaped as Codex writes its context (the shape the pre-check reads), with the texts,
    roles and extra parts that decide whether it is context."""
    p: dict[str, Any] = {"type": "message"}
    if draw(st.booleans()):
        p["id"] = "msg_1"
    p["role"] = draw(st.sampled_from(["user", "developer", "assistant", "system"]))
    p["content"] = [{"type": "input_text", "text": draw(st.one_of(_EDGE_TEXTS, _TEXTS))}] + draw(
        st.lists(_part(), max_size=2))
    return p


_OTHER_PAYLOADS = st.sampled_from([
    ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": '{"command":["ls"]}'}),
    ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
    ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "x"}]}),
    ("response_item", {"type": "custom_tool_call", "name": "exec", "call_id": "c2", "input": "text('x')"}),
    ("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 3}}}),
    ("event_msg", {"type": "user_message", "message": "fix calc.py"}),
    ("event_msg", {"type": "agent_message", "message": "done"}),
    ("event_msg", {"type": "item_completed", "item": {"type": "AgentMessage", "content": [{"text": "done"}]}}),
    ("event_msg", {"type": "item_completed", "item": {"type": "UserMessage", "content": [{"text": "fix"}]}}),
    ("event_msg", {"type": "item_completed", "item": {"type": "CommandExecution", "id": "c1", "command": "ls"}}),
    ("event_msg", {"type": "item_completed", "item": {"type": "Reasoning", "summary_text": ["x"]}}),
    ("event_msg", {"type": "exec_command_end", "call_id": "c1", "exit_code": 0}),
    ("event_msg", {"type": "task_started", "turn_id": "t1"}),
    ("event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": "done"}),
    ("turn_context", {"turn_id": "t1", "cwd": "/w"}),
    ("world_state", {"full": True}),
])


@st.composite
def _line(draw: Any) -> bytes:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        t, p = "response_item", draw(_near_context())
    elif kind < 3:
        t, p = "response_item", draw(_message())
    else:
        t, p = draw(_OTHER_PAYLOADS)
    env: dict[str, Any] = {"timestamp": TS}
    if draw(st.booleans()):
        env["ordinal"] = draw(st.integers(0, 99))
    env["type"] = t
    env["payload"] = p
    style = draw(st.integers(0, 3))
    if style == 0:  # another writer: spaces after separators, ASCII escapes
        return json.dumps(env, ensure_ascii=draw(st.booleans())).encode() + b"\n"
    return orjson.dumps(env) + b"\n"


def _records(raw: bytes) -> tuple[Any, ...]:
    """The records the line itself holds (not the notice of the numbers before it that a one-line
    reading does not hold: ``codex.numbering``, which a skipping reading never says)."""
    (d,) = iter_decoded("x.jsonl", Format.ROLLOUT, stream=[raw])
    return tuple(r for r in d.records if not (isinstance(r, NoticeRec) and r.category == GAP))


#: Records that reach no message item: what a skipped line may hold.
_WORK = (Call, Output, ExecEnd, PatchEnd, ToolEnd, ReasoningRec, Tokens, UsageEvent)


def _context_only(rec: Any) -> bool:
    """A record that makes a context item or nothing a message projection keeps (its environment cwd)."""
    if isinstance(rec, Meta):
        return rec.session_id is None
    return isinstance(rec, Message) and (rec.role not in ("user", "assistant") or rec.context_label is not None)


@SETTINGS
@given(raw=_line())
def test_a_skipped_line_reaches_no_kept_item(raw: bytes) -> None:
    for skip, context_kept in ((MESSAGE_SKIP, True), (MESSAGE_SKIP | {CONTEXT_MESSAGES}, False)):
        got = list(iter_decoded("x.jsonl", Format.ROLLOUT, stream=[raw], skip=skip))
        if not got:  # noise the head decides: nothing in it
            (full,) = iter_decoded("x.jsonl", Format.ROLLOUT, stream=[raw])
            assert full.cls == NOISE and not [r for r in full.records if getattr(r, "category", None) != GAP]
            continue
        (d,) = got
        if d.type_name is not SKIPPED:
            continue
        for rec in _records(raw):
            assert isinstance(rec, _WORK) or (not context_kept and _context_only(rec)), (raw, rec)


def test_context_messages_are_skipped_when_context_is_not_kept() -> None:
    """The pre-check does skip what it is for (the property above could hold by skipping nothing)."""
    skip = MESSAGE_SKIP | {CONTEXT_MESSAGES}
    lines = [orjson.dumps({"timestamp": TS, "type": "response_item", "payload": p}) + b"\n" for p in (
        {"type": "message", "id": "m1", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# AGENTS.md for /w"}]},
    )]
    for raw in lines:
        (d,) = iter_decoded("x.jsonl", Format.ROLLOUT, stream=[raw], skip=skip)
        assert d.type_name is SKIPPED
        (d,) = iter_decoded("x.jsonl", Format.ROLLOUT, stream=[raw], skip=MESSAGE_SKIP)
        assert d.type_name is not SKIPPED


# ------------------------------------------------------------------ whole sessions

_USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix calc"}]}


@st.composite
def _turn(draw: Any, n: int) -> list[tuple[str, Any]]:
    tid = f"t{n}"
    out: list[tuple[str, Any]] = []
    if draw(st.booleans()):
        out.append(("event_msg", {"type": "task_started", "turn_id": tid}))
    if draw(st.booleans()):
        out.append(("turn_context", {"turn_id": tid, "cwd": "/w"}))
    body = [("response_item", draw(st.one_of(_message(), _near_context()))) for _ in range(draw(st.integers(0, 2)))]
    prompt = draw(st.sampled_from(["both", "response", "event", "none"]))
    copies = [("response_item", _USER)] if prompt in ("both", "response") else []
    if prompt in ("both", "event"):
        copies.append(("event_msg", {"type": "user_message", "message": "fix calc"}))
    if draw(st.booleans()):
        copies.reverse()
    body += copies
    body += [draw(_OTHER_PAYLOADS) for _ in range(draw(st.integers(0, 3)))]
    answer = draw(st.sampled_from(["done", "fixed it"]))
    phase = draw(st.sampled_from([None, "final_answer", "commentary"]))
    msg: dict[str, Any] = {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": answer}]}
    if phase is not None:
        msg["phase"] = phase
    body.append(("response_item", msg))
    if draw(st.booleans()):
        body.append(("event_msg", {"type": "agent_message", "message": answer}))
    order = draw(st.permutations(range(len(body)))) if draw(st.integers(0, 3)) == 0 else range(len(body))
    out += [body[i] for i in order]
    end = draw(st.sampled_from(["complete", "complete_named", "aborted", "none", "rollback"]))
    if end == "complete":
        out.append(("event_msg", {"type": "task_complete", "turn_id": tid}))
    elif end == "complete_named":
        out.append(("event_msg", {"type": "task_complete", "turn_id": tid, "last_agent_message": answer}))
    elif end == "aborted":
        out.append(("event_msg", {"type": "turn_aborted", "turn_id": tid, "reason": "interrupted"}))
    elif end == "rollback":
        out.append(("event_msg", {"type": "task_complete", "turn_id": tid}))
        out.append(("event_msg", {"type": "thread_rolled_back", "num_turns": draw(st.integers(1, 2))}))
    return out


@st.composite
def _session(draw: Any) -> list[bytes]:
    lines = [{"timestamp": TS, "type": "session_meta",
              "payload": {"id": "s1", "cwd": "/w", "cli_version": draw(st.sampled_from(["0.100.0", "0.171.0"]))}}]
    for n in range(draw(st.integers(1, 4))):
        lines += [{"timestamp": TS, "type": t, "payload": p} for t, p in draw(_turn(n))]
    return [orjson.dumps(x) + b"\n" for x in lines]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session=_session())
def test_message_projections_of_generated_sessions_equal_a_full_read(session: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "rollout-2026-01-01T00-00-00-s1.jsonl"
        f.write_bytes(b"".join(session))
        for projection, include in (("final", ()), ("conversation", ()), ("conversation", ("context",))):
            sel = selector(projection, include)
            full = [i for i in api.Transcript(f).items() if sel(i)]
            r = api.read(f, projection=projection, include=include)
            assert list(r.items) == full, (projection, include)
