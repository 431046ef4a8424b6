"""The TypeScript CLI's single JSON document (0.1.x): ``{"session": {timestamp, id, instructions},
"items": [Responses items]}``. There are no lines to number, so an item's ``line`` is its 1-based index
in ``items``; the session object is reported as line 0.

The document is read incrementally (``docscan``): each item is decoded on its own as soon as it ends, so
memory is bounded by the largest item (at most the line cap), never by the document (a 300 MB file took
1.2 GB read whole), and one damaged item, a number JSON cannot hold (1e309), or a document cut short
costs only what it damages: the readable items come out, plus one ``unreadable`` entry."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any

import orjson

from transcript_reader.providers.codex.common import decode_response_item
from transcript_reader.providers.records import DECODED, UNREADABLE, Decoded, Meta
from transcript_reader.reading.docscan import ArrayStart, Damage, Member, scan_document
from transcript_reader.reading.source import MAX_LINE_BYTES, Skipped

#: The version the TypeScript CLI's document stands for (it records none).
TS_VERSION = "0.1.x"


def _session(value: Any) -> Decoded:
    if not isinstance(value, dict):
        return Decoded(0, UNREADABLE, reason="the session is not an object")
    ts = value.get("timestamp") if isinstance(value.get("timestamp"), str) else None
    sid = value.get("id") if isinstance(value.get("id"), str) else None
    return Decoded(0, DECODED, "session", (Meta(session_id=sid, timestamp=ts, version=TS_VERSION),), ts)


def _item(value: Any, index: int) -> Decoded:
    if not isinstance(value, dict):
        return Decoded(index, UNREADABLE, reason="item is not an object")
    try:
        return decode_response_item(value, index, None)
    except Exception as e:  # noqa: BLE001 - one item that breaks its decoder costs that item only
        return Decoded(index, UNREADABLE, reason=f"item cannot be decoded: {type(e).__name__}: {e}")


def iter_ts_json(fh: IO[bytes], *, cap: int = MAX_LINE_BYTES,
                 damage: Callable[[], str | None] = lambda: None) -> Iterator[Decoded]:
    """Every entry of the document read from ``fh``: the session (line 0), then each item, then one
    unreadable entry for whatever kept the rest from being read. ``damage`` says why the container
    (a ``.zst`` file) ended badly, once read: its reason is the one given."""
    items = False
    last = 0
    for ev in scan_document(fh, "items", cap=cap):
        if isinstance(ev, Member):
            if ev.index is None and ev.key != "session":
                continue  # another top-level member: not part of the transcript
            line = 0 if ev.index is None else ev.index
            last = max(last, line)
            v = ev.value
            if isinstance(v, Skipped):
                yield Decoded(line, UNREADABLE, reason=v.reason)
                continue
            try:
                obj = orjson.loads(v)
            except orjson.JSONDecodeError as e:
                yield Decoded(line, UNREADABLE, reason=f"invalid JSON: {e}")
                continue
            yield _session(obj) if ev.index is None else _item(obj, line)
        elif isinstance(ev, ArrayStart):
            items = True
        elif isinstance(ev, Damage):
            yield Decoded(last + 1, UNREADABLE, reason=damage() or ev.reason)
            return
    why = damage()
    if why is not None:  # the document closed, but bytes after it do not decompress
        yield Decoded(last + 1, UNREADABLE, reason=why)
    elif not items:
        yield Decoded(last + 1, UNREADABLE, reason="not a {session, items} document")
