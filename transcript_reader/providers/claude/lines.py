"""Every line of a Claude Code file, session file or stream-json output, as one ``Decoded``, each line
by its own shape (the provider contract: a file that mixes shapes loses no well-formed line).

A stream-json event (it names ``session_id``, never ``sessionId``) is read by the stream decoder
(``stream.StreamDecoder``), a session file's line (``sessionId``) by the session decoder
(``decode.ClaudeDecoder``); a line of neither shape by the decoder of the file's format. So a stream read
with ``--format claude-code`` still keeps a sub-agent's prompt (``parent_tool_use_id``) apart from the
person's. When a stream event was read and the whole file was (not a followed one, still being written),
the stream decoder's end entry says how its runs ended."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from transcript_reader.model import Format
from transcript_reader.providers.claude.decode import ClaudeDecoder
from transcript_reader.providers.claude.stream import StreamDecoder
from transcript_reader.providers.jsontext import REPLACED_CHARACTERS, loads_repaired
from transcript_reader.providers.records import BLANK, UNREADABLE, Decoded, NoticeRec
from transcript_reader.reading.source import DEFAULT_CAPS, Readable, ReadCaps, Skipped, iter_lines


def _is_event(obj: Any) -> bool:
    return obj.__class__ is dict and "session_id" in obj and "sessionId" not in obj


def _is_session_line(obj: Any) -> bool:
    return obj.__class__ is dict and "sessionId" in obj


def iter_decoded(path: Readable, fmt: Format, stream: Iterable[bytes | Skipped] | None = None,
                 caps: ReadCaps | None = None) -> Iterator[Decoded]:
    """Every line of ``path`` as a :class:`Decoded`, in order, one per line (a run of blank lines as one
    entry that counts them), then, for a whole read that met a stream event, the stream's end entry.
    ``stream``, when given, supplies the lines (a ``FollowStream`` for a file still being written);
    ``caps`` bounds the reading (a line over the line cap is one unreadable line, never held whole)."""
    is_stream = fmt is Format.CLAUDE_STREAM
    session: ClaudeDecoder | None = None if is_stream else ClaudeDecoder()
    events: StreamDecoder | None = StreamDecoder() if is_stream else None
    lines = iter_lines(path, caps=caps or DEFAULT_CAPS) if stream is None else (
        (n, raw, isinstance(raw, Skipped) or raw.endswith(b"\n")) for n, raw in enumerate(stream, 1))
    loads = orjson.loads
    last = 0
    for n, raw, complete in lines:
        last = n
        if isinstance(raw, Skipped):
            yield Decoded(n, UNREADABLE, reason=raw.reason)
            continue
        if not raw.strip():  # a run of empty lines comes as one (source.iter_lines)
            k = raw.count(b"\n") or 1
            last = n + k - 1
            yield Decoded(n, BLANK, count=k)
            continue
        notice: NoticeRec | None = None
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as e:
            fixed = loads_repaired(raw)  # a bad character costs that character, with a notice
            if fixed is None:
                if complete:
                    yield Decoded(n, UNREADABLE, reason=f"invalid JSON: {e}")
                else:
                    yield Decoded(n, UNREADABLE, reason="truncated last line (cut mid-write)", cut=True)
                continue
            obj, notice = fixed.value, NoticeRec(REPLACED_CHARACTERS, fixed.notice())
        if _is_event(obj) or (is_stream and not _is_session_line(obj)):
            events = events or StreamDecoder()
            d = events.decode(obj, n)
        else:
            session = session or ClaudeDecoder()
            d = session.decode(obj, n)
        if notice is not None:
            d.records = (*d.records, notice)
        yield d
    if events is not None and stream is None:
        yield events.close(last + 1)
