"""Which Codex wire shape a line has, and which format a file is: the one classifier of the provider.

:func:`classify_line` decides the shape of one decoded JSON line; it is the only such rule in the
library (format detection, the head reader and the line decoders all ask it, so they cannot disagree).
:func:`sniff` decides a file's format by a vote of its first lines: a single odd line (a stray
``{"type":"message"}`` in front of an intact rollout) never decides a file, and the line decoders read
each line by its own shape whatever the file's format (``lines.iter_decoded``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from transcript_reader.model import Format
from transcript_reader.source import iter_lines, open_binary

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
#: The TypeScript CLI's document opens with its session, then the items array (``JSON.stringify({session,
#: items})``, compact or indented): ``{"session": <value>, "items": [``.
_TS_SESSION_HEAD = re.compile(rb'\A\s*\{\s*"session"\s*:\s*')
_TS_ITEMS_AFTER_SESSION = re.compile(r'\s*,\s*"items"\s*:\s*\[')


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


def sniff(path: Path) -> Format | None:
    """The Codex format of ``path`` by a vote of its first lines, or None when it is not a Codex file.

    Each of the first :data:`SNIFF_LINES` non-blank lines votes for the format whose shape it has
    (:func:`classify_line`, counted by :class:`Vote`). An empty or all-blank file is an empty rollout."""
    vote = Vote()
    seen = 0
    preamble = False
    for _n, raw, _complete in iter_lines(path, check_end=False):
        s = raw.strip()
        if not s:
            continue
        seen += 1
        fmt: Format | None
        if len(s) > SNIFF_MAX_LINE:
            # a huge line is not decoded just to sniff (the decoder will, once): its head tells
            head = s[:512]
            if b'"payload"' in head and b'"type"' in head or ENVELOPE_HEAD.match(head):
                fmt = Format.ROLLOUT
            elif seen == 1 and _is_ts_document_head(s):
                return Format.TS_JSON  # a compact TS CLI document over the limit is one giant line
            else:
                fmt = None
        else:
            try:
                obj = orjson.loads(s)
            except orjson.JSONDecodeError:
                if seen == 1 and s == b"{":
                    # the TypeScript CLI's pretty-printed single document (0.1.x) spans many lines
                    return _sniff_whole_document(path)
                obj = None
            fmt = classify_line(obj)
            if fmt is Format.TS_JSON:
                return fmt  # one document: there is no second line to vote
            if fmt is None and isinstance(obj, dict) and ("prompt" in obj or "model" in obj or "workdir" in obj):
                preamble = True  # a config-like line of an exec protocol stream, with keys of its own
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


def _is_ts_document_head(data: bytes) -> bool:
    """True when ``data`` opens as the TS CLI's ``{"session": <value>, "items": [`` document. Only the
    session value is decoded (from the first :data:`SNIFF_MAX_LINE` bytes, or from the whole text when
    the session alone is longer), never the items: the decoder parses the document once, after this."""
    m = _TS_SESSION_HEAD.match(data)
    if m is None:
        return False
    dec = json.JSONDecoder()
    for window in (data[:SNIFF_MAX_LINE], data):
        # a window cut inside a UTF-8 sequence only loses that character, past where the session ends
        text = window.decode("utf-8", errors="ignore")
        try:
            _session, end = dec.raw_decode(text, len(m.group(0).decode()))
        except ValueError:
            if len(window) == len(data):
                return False
            continue
        return _TS_ITEMS_AFTER_SESSION.match(text, end) is not None
    return False


def _sniff_whole_document(path: Path) -> Format | None:
    try:
        with open_binary(path) as fh:
            doc = orjson.loads(fh.read())
    except orjson.JSONDecodeError:
        return None
    # the TS CLI's document is {session, items[]}: any JSON object with an "items" key is not one (a
    # project's own golden outputs were read as transcripts; census over fixtures/)
    return Format.TS_JSON if classify_line(doc) is Format.TS_JSON else None

