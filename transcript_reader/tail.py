"""The last items of a transcript at a cost bound by what is asked, not by the file.

``read --tail N`` used to read the whole file and keep the last N items: 8.9 s on a 1 GB rollout where
``tail -n 100`` takes 2 ms. Here the reading starts at a turn boundary found by reading backwards from
the end (a ``task_started`` line), with the session's head (its lines before the first turn: the
``session_meta`` and the prologue) read first so the reader knows the session, and the line numbers
of the file kept. Starting at a turn boundary loses only what earlier turns left open, so the result
is accepted only once it has *converged*: the last N items read from ``k`` turns back equal those read
from one turn earlier (and there are N of them); otherwise ``k`` doubles, and at the start of the file
it is the whole read. ``tests/test_tail.py`` compares the result with a full read's on every fixture
and corpus file.

What is not known without the whole pass is said to be unknown: ``total_items`` and ``dropped_items``
are None and ``info`` is None (``inspect`` gives the figures). Files the shortcut does not serve are
read whole: other eras and formats (no ``task_started`` envelope), compressed files (no reading
backwards), forked sessions (their head holds a copy of the parent's history), and a head or a turn
longer than the bounds below.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from transcript_reader.model import AnyItem, Format, ReadResult
from transcript_reader.source import ReadCaps, Skipped, read_lines

#: Bytes read per step backwards.
BLOCK = 1 << 20
#: The head (lines before the first turn) is read up to this size; a longer one: the whole read.
MAX_HEAD = 8 << 20
#: Past this many bytes from the end the shortcut gives up and reads the whole file (the tail asked
#: for is most of the file anyway).
MAX_SPAN_FRACTION = 0.5
_TURN_START = re.compile(rb'"type":\s*"event_msg",\s*(?:"ordinal":\s*\d+,\s*)?"payload":\s*\{\s*"type":\s*"task_started"')
_FORKED = re.compile(rb'"forked_from_id":\s*"[^"]')


def _head(fh, size: int) -> tuple[list[bytes], int] | None:  # type: ignore[no-untyped-def]
    """The lines before the first turn start, and the offset of that turn; None when the head is too
    long, holds a fork's copied history, or no turn starts."""
    fh.seek(0)
    data = fh.read(min(size, MAX_HEAD))
    m = _TURN_START.search(data)
    if m is None:
        return None
    start = data.rfind(b"\n", 0, m.start()) + 1
    head = data[:start]
    if _FORKED.search(head) is not None or head.count(b'"type":"session_meta"') + head.count(b'"type": "session_meta"') > 1:
        return None
    return head.splitlines(keepends=True), start


def _turn_starts_backwards(fh, size: int, stop: int) -> Iterator[int]:  # type: ignore[no-untyped-def]
    """Offsets of the lines that start a turn, from the end of the file back to ``stop``."""
    end = size
    carry = b""
    while end > stop:
        begin = max(stop, end - BLOCK)
        fh.seek(begin)
        block = fh.read(end - begin) + carry
        # keep the first (maybe partial) line of the block for the next step back
        cut = block.find(b"\n") + 1 if begin > stop else 0
        found = [begin + m.start() for m in _TURN_START.finditer(block, cut)]
        for off in reversed(found):
            line_start = block.rfind(b"\n", 0, off - begin) + 1
            yield begin + line_start
        carry = block[:cut]
        end = begin


def _newlines(path: Path, start: int, end: int) -> int:
    """How many newlines the file holds in ``[start, end)`` (read once, into one reused buffer)."""
    n = 0
    buf = bytearray(8 << 20)
    view = memoryview(buf)
    left = end - start
    with open(path, "rb", buffering=0) as fh:
        fh.seek(start)
        while left > 0:
            got = fh.readinto(view[: min(len(buf), left)])
            if not got:
                break
            n += buf.count(b"\n", 0, got)
            left -= got
    return n


class _LineNumbers:
    """Line numbers of turn starts: the newlines before the first offset asked are counted once (item
    line numbers are the file's, so the count from the start cannot be skipped); an earlier offset
    costs only the span between."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: tuple[int, int] | None = None  # (offset, newlines before it)

    def before(self, offset: int) -> int:
        if self.known is None:
            self.known = (offset, _newlines(self.path, 0, offset))
        off, n = self.known
        if offset <= off:
            n -= _newlines(self.path, offset, off)
        else:
            n += _newlines(self.path, off, offset)
        self.known = (offset, n)
        return n


def _items_from(path: Path, fmt: Format, head: list[bytes], fh, offset: int, first_line: int,  # type: ignore[no-untyped-def]
                select: Callable[[AnyItem], bool], caps: ReadCaps | None = None) -> list[AnyItem]:
    """The selected items a reading of ``head`` then the file from ``offset`` gives, the head's own
    items left out, with the file's line numbers."""
    from transcript_reader.api import Transcript

    fh.seek(offset)
    n_head = len(head)
    shift = first_line - n_head - 1
    t = Transcript(path, format=fmt, caps=caps)

    def lines() -> Iterator[bytes | Skipped]:
        yield from head
        yield from read_lines(fh, t.caps.line_bytes)  # a line over the cap is skipped, never held

    def renumbered() -> Iterator[object]:
        for d in t.provider.decode(t.path, fmt, lines()):
            if d.line > n_head:
                d.line += shift
            yield d

    return [it for it in t.assemble(renumbered()) if it.line >= first_line and select(it)]


def last_items(path: Path, fmt: Format, n: int, select: Callable[[AnyItem], bool],
               caps: ReadCaps | None = None) -> list[AnyItem] | None:
    """The last ``n`` selected items, exactly as a whole read gives them, or None when this file needs
    the whole read (see the module docstring)."""
    if fmt is not Format.ROLLOUT or n <= 0:
        return None
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if fh.read(4) == b"\x28\xb5\x2f\xfd":
            return None
        got = _head(fh, size)
        if got is None:
            return None
        head, first_turn = got
        starts: list[int] = []
        walker = _turn_starts_backwards(fh, size, first_turn)
        numbers = _LineNumbers(path)
        k = 1
        while True:
            while len(starts) < k + 1:
                off = next(walker, None)
                if off is None:
                    return None  # back at the first turn: the whole read is as cheap
                if size - off > size * MAX_SPAN_FRACTION and size > 64 * BLOCK:
                    return None
                starts.append(off)
            near, far = starts[k - 1], starts[k]
            lines_near = numbers.before(near)
            lines_far = numbers.before(far)
            a = _items_from(path, fmt, head, fh, near, lines_near + 1, select, caps)
            if len(a) >= n:
                b = _items_from(path, fmt, head, fh, far, lines_far + 1, select, caps)
                if a[-n:] == b[-n:]:
                    return a[-n:]
            k *= 2


def read_tail(path: str | os.PathLike[str], n: int, *, projection: str = "timeline", include: Iterable[str] = (),
              exclude: Iterable[str] = (), max_chars: int | None = None,
              max_chars_per_item: int | None = None, caps: ReadCaps | None = None) -> ReadResult:
    """``api.read(path, tail=n, …)`` at the cost of the last turns: the same items; ``total_items``,
    ``dropped_items`` and ``info`` None (unknown without the whole pass) when the shortcut served it,
    else the whole read's result."""
    from transcript_reader import api
    from transcript_reader.projections import Limits, apply_projection, selector

    select = selector(projection, include, exclude)
    limits = Limits(tail=n, max_chars=max_chars, max_chars_per_item=max_chars_per_item)
    limits.check()
    t = api.Transcript(path, caps=caps)
    links = getattr(t.provider, "thread_links", None)
    # a thread in several files (a segment, or a base a segment continues) is read whole, as one
    here = Path(path)  # t.path: read_tail takes paths only
    in_thread = t.format is Format.ROLLOUT and links is not None and any(links(here))
    items = None if in_thread else last_items(here, t.format, n, select, caps)
    if items is None:
        return api.read(path, projection=projection, include=include, exclude=exclude, tail=n, max_chars=max_chars,
                        max_chars_per_item=max_chars_per_item, caps=caps)
    kept, _, _, cut_chars, _ = apply_projection(items, limits)
    return ReadResult(path=str(t.path), format=t.format, projection=projection, items=tuple(kept), truncated=True,
                      dropped_items=None, info=None, total_items=None, truncated_chars=cut_chars)
