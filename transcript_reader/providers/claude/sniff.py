"""Is this a Claude Code file, and which: a session file or a ``--output-format stream-json`` output? A vote
over the first lines (one stray line never decides a file).

A session-file line is a JSON object whose ``type`` is one Claude Code writes (a message, a summary, a
system line, or one of its bookkeeping types) and which carries one of the session keys every such line
has (``sessionId``, ``uuid``, ``parentUuid``, ``leafUuid``); a line of a type not known yet counts too
when it carries ``sessionId`` (every bookkeeping line Claude Code has added so far does). A stream-json
line is an event (``system``, ``user``, ``assistant``, ``result`` or one of the SDK protocol's) naming
``session_id`` (snake case) and never ``sessionId``. Codex never writes those keys at the top level of a
line (its lines are ``{timestamp, type, payload}`` envelopes, ``{id, msg}`` events, bare Responses items or
``thread.*``/``turn.*``/``item.*`` events)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from transcript_reader.model import Format
from transcript_reader.providers.claude.decode import MESSAGE_TYPES, NOISE_TYPES
from transcript_reader.providers.claude.stream import EVENT_TYPES, NOISE_EVENTS
from transcript_reader.reading.source import SNIFF_BYTES, Readable, open_binary, prefix_lines

#: Non-blank lines looked at, and the longest line decoded whole (a longer one is judged by its head).
SNIFF_LINES = 40
SNIFF_MAX_LINE = 1 << 20
LINE_TYPES = MESSAGE_TYPES | NOISE_TYPES | {"summary", "system"}
STREAM_TYPES = EVENT_TYPES | NOISE_EVENTS
_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid")
_HEAD_TYPE = re.compile(rb'"type"\s*:\s*"([a-z_-]+)"')


def is_claude_line(obj: Any) -> bool:
    if not isinstance(obj, dict) or "payload" in obj or "msg" in obj:
        return False
    if "session_id" in obj and "sessionId" not in obj:
        return False  # a stream-json event (``is_stream_line``), not a session file's line
    t = obj.get("type")
    if not isinstance(t, str):
        return False
    if t in LINE_TYPES:
        return any(k in obj for k in _KEYS)
    return "sessionId" in obj


def is_stream_line(obj: Any) -> bool:
    """A ``--output-format stream-json`` event: a known event type naming ``session_id``, not ``sessionId``."""
    if not isinstance(obj, dict):
        return False
    t = obj.get("type")
    return (isinstance(t, str) and t in STREAM_TYPES and "sessionId" not in obj and "payload" not in obj
            and isinstance(obj.get("session_id"), str))


def _huge_line_vote(head: bytes) -> str | None:
    """A line too long to decode, judged by its head: ``"session"``, ``"stream"`` or None (no vote for
    either: a stream line names ``session_id`` after a message that may be huge)."""
    m = _HEAD_TYPE.search(head)
    if m is None or b'"payload"' in head:
        return None
    t = m.group(1).decode()
    if t in LINE_TYPES and any(k.encode() in head for k in _KEYS):
        return "session"
    if t in STREAM_TYPES and b'"sessionId"' not in head and (b'"session_id"' in head
                                                             or b'"parent_tool_use_id"' in head):
        return "stream"
    return None


def sniff(path: Readable) -> Format | None:
    """``Format.CLAUDE`` when most of the first JSON lines of ``path`` are session-file lines,
    ``Format.CLAUDE_STREAM`` when most are stream-json events, else None. Reads a bounded prefix
    (``source.prefix_lines``: a huge line is judged by its head and never held whole)."""
    session = stream = others = seen = 0
    with open_binary(path) as fh:
        for raw, whole in prefix_lines(fh, budget=SNIFF_BYTES, max_line=SNIFF_MAX_LINE):
            s = raw.strip()
            if not s:
                continue
            seen += 1
            if not whole:
                vote = _huge_line_vote(s[:4096])
                session += vote == "session"
                stream += vote == "stream"
            else:
                try:
                    obj = orjson.loads(s)
                except orjson.JSONDecodeError:
                    obj = None
                if obj is None:
                    if seen >= SNIFF_LINES:
                        break
                    continue
                if is_claude_line(obj):
                    session += 1
                elif is_stream_line(obj):
                    stream += 1
                else:
                    others += 1
            if seen >= SNIFF_LINES:
                break
    if session > stream + others:
        return Format.CLAUDE
    if stream > session + others:
        return Format.CLAUDE_STREAM
    return None
