"""The TypeScript CLI's single JSON document (0.1.x): ``{"session": {timestamp, id, instructions},
"items": [Responses items]}``. There are no lines to number, so an item's ``line`` is its 1-based index
in ``items``; the session object is reported as line 0."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from transcript_reader.providers.codex.common import decode_response_item
from transcript_reader.providers.records import DECODED, UNREADABLE, Decoded, Meta

#: The version the TypeScript CLI's document stands for (it records none).
TS_VERSION = "0.1.x"


def iter_ts_json(doc: Any) -> Iterator[Decoded]:
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        yield Decoded(1, UNREADABLE, reason="not a {session, items} document")
        return
    session = doc.get("session")
    ts = None
    if isinstance(session, dict):
        ts = session.get("timestamp") if isinstance(session.get("timestamp"), str) else None
        sid = session.get("id") if isinstance(session.get("id"), str) else None
        yield Decoded(0, DECODED, "session", (Meta(session_id=sid, timestamp=ts, version=TS_VERSION),), ts)
    for i, item in enumerate(doc["items"], 1):
        if not isinstance(item, dict):
            yield Decoded(i, UNREADABLE, reason="item is not an object")
            continue
        yield decode_response_item(item, i, None)
