"""The early Rust JSONL format (0.20, 0.29; before the 2025-09 envelope): a bare session line
``{id, timestamp, instructions, git?}``, ``{"record_type": "state"}`` markers, and bare Responses items.
Also the transitional ``{timestamp, record_type: response|event|session_meta|state, …flattened}`` form
(PR #3344; may never have shipped, accepted anyway)."""

from __future__ import annotations

from typing import Any

from transcript_reader.providers.codex.common import decode_response_item
from transcript_reader.providers.codex.rollout import decode_event, meta_from
from transcript_reader.providers.records import DECODED, NOISE, UNKNOWN, UNREADABLE, Decoded, Meta


def decode_early_rust(obj: Any, line: int) -> Decoded:
    if not isinstance(obj, dict):
        return Decoded(line, UNREADABLE, reason="line is JSON but not an object")
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    rt = obj.get("record_type")
    if isinstance(rt, str):
        if rt == "state":
            return Decoded(line, NOISE, "record_type/state", timestamp=ts)
        if rt in ("session_meta", "prev_session_meta"):
            return Decoded(line, DECODED, f"record_type/{rt}", (meta_from(obj),), ts)
        if rt == "response":
            return decode_response_item(obj, line, ts)
        if rt == "event":
            return decode_event(obj, line, ts)
        return Decoded(line, UNKNOWN, f"record_type/{rt}", timestamp=ts)
    if "type" in obj:
        return decode_response_item(obj, line, None)
    if "id" in obj and "timestamp" in obj:
        meta: Meta = meta_from(obj)
        return Decoded(line, DECODED, "session", (meta,), ts)
    return Decoded(line, UNREADABLE, reason="neither a session line, a state marker nor an item")
