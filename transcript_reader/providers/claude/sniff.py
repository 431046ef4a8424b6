"""Is this a Claude Code session file? A vote over the first lines (one stray line never decides a file).

A Claude Code line is a JSON object whose ``type`` is one Claude Code writes (a message, a summary, a
system line, or one of its bookkeeping types) and which carries one of the session keys every such line
has (``sessionId``, ``uuid``, ``parentUuid``, ``leafUuid``); a line of a type not known yet counts too
when it carries ``sessionId`` (every bookkeeping line Claude Code has added so far does). Codex never
writes those keys at the top level of a line (its lines are ``{timestamp, type, payload}`` envelopes,
``{id, msg}`` events or bare Responses items). The CLI's ``--output-format stream-json`` output (events
naming ``session_id``) is not a session file and is not claimed."""

from __future__ import annotations

import re
from typing import Any

import orjson

from transcript_reader.providers.claude.decode import MESSAGE_TYPES, NOISE_TYPES
from transcript_reader.reading.source import SNIFF_BYTES, Readable, open_binary, prefix_lines

#: Non-blank lines looked at, and the longest line decoded whole (a longer one is judged by its head).
SNIFF_LINES = 40
SNIFF_MAX_LINE = 1 << 20
LINE_TYPES = MESSAGE_TYPES | NOISE_TYPES | {"summary", "system"}
_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid")
_HEAD_TYPE = re.compile(rb'"type"\s*:\s*"([a-z-]+)"')


def is_claude_line(obj: Any) -> bool:
    if not isinstance(obj, dict) or "payload" in obj or "msg" in obj:
        return False
    if "session_id" in obj and "sessionId" not in obj:
        return False  # ``claude -p --output-format stream-json`` output: events of a run, not a session file
    t = obj.get("type")
    if not isinstance(t, str):
        return False
    if t in LINE_TYPES:
        return any(k in obj for k in _KEYS)
    return "sessionId" in obj


def _huge_line_vote(head: bytes) -> bool:
    m = _HEAD_TYPE.search(head)
    return (m is not None and m.group(1).decode() in LINE_TYPES and b'"payload"' not in head
            and any(k.encode() in head for k in _KEYS))


def sniff(path: Readable) -> bool:
    """True when most of the first JSON lines of ``path`` are Claude Code lines. Reads a bounded prefix
    (``source.prefix_lines``: a huge line is judged by its head and never held whole)."""
    mine = others = seen = 0
    with open_binary(path) as fh:
        for raw, whole in prefix_lines(fh, budget=SNIFF_BYTES, max_line=SNIFF_MAX_LINE):
            s = raw.strip()
            if not s:
                continue
            seen += 1
            if not whole:
                vote = _huge_line_vote(s[:4096])
            else:
                try:
                    obj = orjson.loads(s)
                except orjson.JSONDecodeError:
                    obj = None
                if obj is None:
                    if seen >= SNIFF_LINES:
                        break
                    continue
                vote = is_claude_line(obj)
            mine += vote
            others += not vote
            if seen >= SNIFF_LINES:
                break
    return mine > others
