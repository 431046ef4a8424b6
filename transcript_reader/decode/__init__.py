"""Decoders: the only code that reads raw transcript keys (house style: one owner per wire format).

``iter_decoded`` drives the line-based formats: it splits blank, unreadable and cut lines from the rest
and hands each parsed object to its era's decoder (``rollout``, ``early_rust``; ``ts_json`` for the
single-document TypeScript CLI file). Exec streams have their own stateful decoder (``exec_stream``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from transcript_reader.decode.early_rust import decode_early_rust
from transcript_reader.decode.records import BLANK, UNREADABLE, Decoded
from transcript_reader.decode.rollout import decode_rollout
from transcript_reader.decode.ts_json import iter_ts_json
from transcript_reader.model import Format
from transcript_reader.source import iter_lines, open_binary


def iter_decoded(path: Path, fmt: Format) -> Iterator[Decoded]:
    """Every line of a rollout-family transcript as a :class:`Decoded`, in order, one per line."""
    if fmt is Format.TS_JSON:
        with open_binary(path) as fh:
            data = fh.read()
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            yield Decoded(1, UNREADABLE, reason=f"invalid JSON document: {e}")
            return
        yield from iter_ts_json(doc)
        return
    decode = decode_rollout if fmt is Format.ROLLOUT else decode_early_rust
    loads = orjson.loads
    for n, raw, complete in iter_lines(path):
        if not raw.strip():
            yield Decoded(n, BLANK)
            continue
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as e:
            if not complete:
                yield Decoded(n, UNREADABLE, reason="truncated last line (cut mid-write)", cut=True)
            else:
                yield Decoded(n, UNREADABLE, reason=f"invalid JSON: {e}")
            continue
        yield decode(obj, n)
