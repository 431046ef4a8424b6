"""The heads and tails of many session files at once: in worker processes when a listing must read
thousands (a cold ``ls`` of 10,000 sessions spends most of its time decoding the first lines of each
file, work that splits cleanly across cores), else in this process.

Workers are forked (the parent's imports and provider registry come for free; a spawned worker would
pay the interpreter start-up and imports again), only where ``fork`` is the platform's safe default
(Linux); results travel back as plain field lists (:func:`head_row`), which pickle several
times faster than the frozen dataclasses. Anything that goes wrong with the pool (no ``fork``, a
worker killed, a pickling error) falls back to reading in this process: the pool only saves time, it
never changes a row.
"""

from __future__ import annotations

import os
import sys
from dataclasses import fields
from pathlib import Path

from transcript_reader.model import Format, TokenUsage
from transcript_reader.providers import Provider
from transcript_reader.providers import get as get_provider
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.reading.source import Descriptor

_HEAD_FIELDS = tuple(f.name for f in fields(SessionHead))
_TOKEN_FIELDS = tuple(f.name for f in fields(TokenUsage))
_FORMAT_AT = _HEAD_FIELDS.index("format")
#: Formats by value (an ``Enum`` call per cached row cost more than the rest of reading it).
_FORMATS = {f.value: f for f in Format}


def head_row(head: SessionHead, tail: SessionTail) -> list[object]:
    """``[head fields, [last timestamp, token fields]]``: a head and tail as plain JSON-ready lists, field
    by field (not ``dataclasses.asdict``, a deep copy per row), the form the cache keeps and listing
    workers send back."""
    h: list[object] = [getattr(head, f) for f in _HEAD_FIELDS]
    h[_FORMAT_AT] = head.format.value if head.format is not None else None
    tok = tail.tokens
    return [h, [tail.last_timestamp, [getattr(tok, f) for f in _TOKEN_FIELDS] if tok else None]]


def head_from_row(row: list[object]) -> tuple[SessionHead, SessionTail] | None:
    """The head and tail :func:`head_row` wrote, or None when the row is not one (an older cache)."""
    try:
        h, t = row
        if not isinstance(h, list) or len(h) != len(_HEAD_FIELDS) or not isinstance(t, list) or len(t) != 2:
            return None
        fmt = h[_FORMAT_AT]
        if fmt is not None:
            h = h.copy()
            h[_FORMAT_AT] = _FORMATS[fmt]
        ts, tok = t
        return SessionHead(*h), SessionTail(last_timestamp=ts, tokens=TokenUsage(*tok) if isinstance(tok, list) else None)
    except (TypeError, ValueError, KeyError):
        return None


#: Fewer files than this are read in this process (a fork costs more than it saves).
MIN_PARALLEL = 400


def read_head_tail(reader: Provider, readable: Path | Descriptor) -> tuple[SessionHead, SessionTail]:
    """One file's head and tail; an unreadable file gives a head with ``error`` ("cannot read: …") and
    an empty tail, never an exception."""
    try:
        head = reader.read_head(readable)
    except OSError as e:
        head = SessionHead(format=None, error=f"cannot read: {e.strerror or e}")
    try:
        tail = reader.read_tail(readable) if head.format is not None else SessionTail()
    except OSError:
        tail = SessionTail()
    return head, tail


def _read_chunk(jobs: list[tuple[str, str]]) -> list[list[object]]:
    out: list[list[object]] = []
    for provider, path in jobs:
        head, tail = read_head_tail(get_provider(provider), Path(path))
        out.append(head_row(head, tail))
    return out


def read_many(jobs: list[tuple[Provider, str]], workers: int) -> list[tuple[SessionHead, SessionTail]]:
    """The head and tail of each ``(provider, path)``, in order; with ``workers`` > 1 and enough files,
    read by that many forked processes."""
    if workers > 1 and len(jobs) >= MIN_PARALLEL and sys.platform.startswith("linux"):
        try:
            return _in_pool(jobs, workers)
        except Exception:  # noqa: BLE001 - the pool is an accelerator: read here instead
            pass
    return [read_head_tail(p, Path(path)) for p, path in jobs]


def _in_pool(jobs: list[tuple[Provider, str]], workers: int) -> list[tuple[SessionHead, SessionTail]]:
    import multiprocessing

    named = [(p.name, path) for p, path in jobs]
    pieces = workers * 4  # small pieces even out files of very different sizes
    size = -(-len(named) // pieces)
    chunks = [named[i : i + size] for i in range(0, len(named), size)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(min(workers, os.cpu_count() or 1)) as pool:
        rows = [r for chunk in pool.map(_read_chunk, chunks, chunksize=1) for r in chunk]
    out: list[tuple[SessionHead, SessionTail]] = []
    for row in rows:
        pair = head_from_row(row)
        if pair is None:
            raise ValueError("a worker's row did not read back")
        out.append(pair)
    return out
