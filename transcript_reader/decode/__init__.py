"""Decoders: the only code that reads raw transcript keys (house style: one owner per wire format).

``iter_decoded`` drives the line-based formats: it splits blank, unreadable and cut lines from the rest
and hands each parsed object to its era's decoder (``rollout``, ``early_rust``; ``ts_json`` for the
single-document TypeScript CLI file). Exec streams have their own stateful decoder (``exec_stream``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import zstandard

from transcript_reader.decode.early_rust import decode_early_rust
from transcript_reader.decode.records import BLANK, DECODED, NOISE, UNREADABLE, Decoded, LazyTokens, Tokens
from transcript_reader.decode.rollout import NOISE_EVENTS, NOISE_TOP, decode_rollout
from transcript_reader.decode.ts_json import iter_ts_json
from transcript_reader.errors import UnsupportedFormatError
from transcript_reader.model import Format, TokenUsage
from transcript_reader.source import open_binary

# Fast path for lines whose type alone decides them (they are most of a long rollout's bytes: world_state
# snapshots, per-request usage copies, tool lists). Codex writes the envelope keys in a fixed order, so
# the type is read from the line's head; anything that does not match takes the full decode.
_HEAD = re.compile(
    rb'\{"timestamp":"([^"\\]*)",(?:"ordinal":\d+,)?"type":"([a-z_]+)"(?:,"payload":\{"type":"([a-z_]+)")?'
)
_NOISE_ITEMS = frozenset({b"additional_tools", b"ghost_snapshot"})
_NOISE_TOP_B = frozenset(t.encode() for t in NOISE_TOP)
_NOISE_EVENTS_B = frozenset(t.encode() for t in NOISE_EVENTS)


def _tokens_from_raw(raw: bytes, line: int) -> TokenUsage | None:
    d = decode_rollout(orjson.loads(raw), line)
    for r in d.records:
        if isinstance(r, Tokens):
            return r.usage
    return None


def _fast(raw: bytes, n: int) -> Decoded | None:
    m = _HEAD.match(raw)
    if m is None or not raw.rstrip().endswith(b"}"):
        return None
    tsb, top, sub = m.groups()
    ts = tsb.decode()
    if top in _NOISE_TOP_B and sub is None:
        return Decoded(n, NOISE, top.decode(), (), ts)
    if sub is None:
        return None
    if top == b"response_item" and sub in _NOISE_ITEMS:
        return Decoded(n, NOISE, "response_item/" + sub.decode(), (), ts)
    if top == b"event_msg":
        if sub in _NOISE_EVENTS_B:
            return Decoded(n, NOISE, "event_msg/" + sub.decode(), (), ts)
        if sub == b"token_count":
            if b'"info":null' in raw:  # no figure on this line: the previous cumulative total stands
                return Decoded(n, DECODED, "event_msg/token_count", (), ts)
            return Decoded(n, DECODED, "event_msg/token_count", (LazyTokens(raw, n, _tokens_from_raw),), ts)
    return None


def _numbered(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line_no, raw)``: ``source.iter_lines`` without its per-line tuple (this loop is the hot one)."""
    with open_binary(path) as fh:
        try:
            yield from enumerate(fh, 1)
        except zstandard.ZstdError as e:  # a corrupt .zst frame
            raise UnsupportedFormatError(f"corrupt zstd stream: {e}", path=str(path)) from None


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
    fast = _fast if fmt is Format.ROLLOUT else None
    loads = orjson.loads
    for n, raw in _numbered(path):
        complete = raw.endswith(b"\n")
        if not raw or raw.isspace():
            yield Decoded(n, BLANK)
            continue
        if fast is not None and complete:
            d = fast(raw, n)
            if d is not None:
                yield d
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
