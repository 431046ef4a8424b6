"""Which Codex wire shape a line has, and which format a file is: the one classifier of the provider.

:func:`classify_line` decides the shape of one decoded JSON line; it is the only such rule in the
library (format detection, the head reader and the line decoders all ask it, so they cannot disagree).
:func:`sniff` decides a file's format by a vote of its first lines: a single odd line (a stray
``{"type":"message"}`` in front of an intact rollout) never decides a file, and the line decoders read
each line by its own shape whatever the file's format (``lines.iter_decoded``).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import orjson

from transcript_reader.model import Format
from transcript_reader.reading.source import SNIFF_BYTES, Readable, open_binary, prefix_lines

#: ResponseItem ``type`` values that start a bare (early Rust) item line.
RESPONSE_ITEM_TYPES = frozenset(
    {
        "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
        "custom_tool_call_output", "local_shell_call", "web_search_call", "image_generation_call",
        "tool_search_call", "tool_search_output", "ghost_snapshot", "compaction", "compaction_summary",
        "context_compaction", "agent_message", "additional_tools",
    }
)

#: Top-level ``type`` values of the 0.50+ ``codex exec --json`` thread stream.
THREAD_EVENT_TYPES = frozenset(
    {
        "thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated",
        "item.completed", "item.plan.delta", "request_user_input", "error",
    }
)

#: Keys of the config-summary line that 0.20-0.40 ``codex exec --json`` printed first.
PROTOCOL_HEADER_KEYS = frozenset(
    {"model", "workdir", "sandbox", "approval", "provider", "reasoning effort", "reasoning summaries"}
)

#: How many non-blank lines format sniffing looks at, at most.
SNIFF_LINES = 40
#: A format with this many votes wins at once (the rest of the window is not read).
QUORUM = 8
#: Lines longer than this are sniffed from their head only (never decoded twice: census hostile files).
SNIFF_MAX_LINE = 1 << 20
ENVELOPE_HEAD = re.compile(rb'\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"[a-z_]+","payload"')


def classify_line(obj: Any) -> Format | None:
    """The wire shape of one decoded JSON line (the format that writes lines of that shape), or None
    when the line does not tell."""
    if not isinstance(obj, dict):
        return None
    t = obj.get("type")
    if "payload" in obj and "type" in obj:
        return Format.ROLLOUT
    if isinstance(t, str):
        if t in THREAD_EVENT_TYPES or t.startswith(("thread.", "turn.", "item.")):
            return Format.EXEC_JSON
        if t in RESPONSE_ITEM_TYPES:
            return Format.EARLY_RUST
    if "msg" in obj and "id" in obj:
        return Format.EXEC_PROTOCOL
    if "session" in obj and isinstance(obj.get("items"), list):
        return Format.TS_JSON
    if "record_type" in obj:
        return Format.EARLY_RUST
    if t is None and "id" in obj and "timestamp" in obj:
        return Format.EARLY_RUST
    if t is None and is_protocol_header(obj):
        return Format.EXEC_PROTOCOL
    return None


def is_protocol_header(obj: dict[str, Any]) -> bool:
    """The 0.20-0.40 exec stream's leading config line or its ``{"prompt": …}`` line (corpus
    realcodex/0.40.0/*.exec.jsonl)."""
    keys = set(obj)
    return keys == {"prompt"} or bool(keys & PROTOCOL_HEADER_KEYS and keys <= PROTOCOL_HEADER_KEYS | {"prompt"})


class Vote:
    """The format vote of a file's first lines: each line votes for its shape; a format with
    :data:`QUORUM` votes is decided at once, otherwise the most votes win and a tie goes to the format
    seen first. Format sniffing and the head reader count the same way."""

    __slots__ = ("votes", "order")

    def __init__(self) -> None:
        self.votes: Counter[Format] = Counter()
        self.order: list[Format] = []

    def add(self, fmt: Format) -> bool:
        """Count one line's vote; True once ``fmt`` has a quorum (the vote is decided)."""
        if fmt not in self.votes:
            self.order.append(fmt)
        self.votes[fmt] += 1
        return self.votes[fmt] >= QUORUM

    def winner(self) -> Format | None:
        if not self.votes:
            return None
        top = max(self.votes.values())
        return next(f for f in self.order if self.votes[f] == top)


def sniff(path: Readable) -> Format | None:
    """The Codex format of ``path`` by a vote of its first lines, or None when it is not a Codex file.

    Each of the first :data:`SNIFF_LINES` non-blank lines votes for the format whose shape it has
    (:func:`classify_line`, counted by :class:`Vote`). An empty or all-blank file is an empty rollout."""
    vote = Vote()
    seen = 0
    preamble = False
    with open_binary(path) as fh:
        for raw, whole in prefix_lines(fh, budget=SNIFF_BYTES, max_line=SNIFF_MAX_LINE):
            fmt, done = _line_vote(path, raw, whole, seen)
            if done:
                return fmt
            if raw.strip():
                seen += 1
            if fmt is _PREAMBLE:
                preamble, fmt = True, None
            if fmt is not None and vote.add(fmt):
                return fmt
            if seen >= SNIFF_LINES:
                break
    winner = vote.winner()
    if winner is not None:
        return winner
    if preamble:
        return Format.EXEC_PROTOCOL
    if seen == 0:
        # an empty (or all-blank) file is an empty transcript, not an error: every line is accounted
        # as blank (corpus realcodex/0.1.x/*.exec.jsonl: the TS CLI printed nothing for `exec --json`)
        return Format.ROLLOUT
    return None


#: What :func:`_line_vote` gives for a config-like line of an exec protocol stream (no vote of its own).
_PREAMBLE = object()


def _line_vote(path: Readable, raw: bytes, whole: bool, seen: int) -> tuple[Any, bool]:
    """``(vote, decided)`` of one sniffed line: the format its shape votes for (or None, or
    :data:`_PREAMBLE`), and whether that alone decides the file (a TypeScript document is one)."""
    s = raw.strip()
    if not s:
        return None, False
    if not whole:
        # a huge line is not decoded just to sniff (the decoder will, once): its head tells
        head = s[:512]
        if b'"payload"' in head and b'"type"' in head or ENVELOPE_HEAD.match(head):
            return Format.ROLLOUT, False
        if seen == 0 and _is_ts_document(path):
            return Format.TS_JSON, True  # a compact TS CLI document over the limit is one giant line
        return None, False
    try:
        obj = orjson.loads(s)
    except orjson.JSONDecodeError:
        if seen == 0 and s == b"{":
            # the TypeScript CLI's pretty-printed single document (0.1.x) spans many lines
            return (Format.TS_JSON if _is_ts_document(path) else None), True
        return None, False
    fmt = classify_line(obj)
    if fmt is Format.TS_JSON:
        return fmt, True  # one document: there is no second line to vote
    if (fmt is None and isinstance(obj, dict) and "type" not in obj
            and (len(obj.keys() & PROTOCOL_HEADER_KEYS) >= 2 or set(obj) == {"prompt"})):
        # the config summary (several of its keys, no type) or the {"prompt"} line of an exec protocol
        # stream; a line merely naming a model is another agent's: Claude Code's stream-json events and
        # sub-agent .meta.json (fixtures/claude/recorded) were read as empty exec-protocol streams
        return _PREAMBLE, False
    return fmt, False


def _is_ts_document(path: Readable) -> bool:
    """True when the file opens as the TS CLI's ``{"session": {…}, "items": [`` document, compact or
    indented, read from a bounded prefix by the incremental scanner (``docscan``: only the session
    member is held; the items are decoded once, by the decoder). Any other JSON object with an "items"
    key is not one (a project's own golden outputs were read as transcripts; census over fixtures/)."""
    from transcript_reader.reading.docscan import ArrayStart, Damage, Member, scan_document

    session = False
    with open_binary(path) as fh:
        for ev in scan_document(fh, "items", cap=SNIFF_BYTES, limit=SNIFF_BYTES):
            if isinstance(ev, Member) and ev.index is None and ev.key == "session":
                session = isinstance(ev.value, bytes) and ev.value[:1] == b"{"
            elif isinstance(ev, ArrayStart):
                return session
            elif isinstance(ev, Damage):
                return False
    return False
