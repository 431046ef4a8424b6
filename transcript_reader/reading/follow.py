"""Following a file another process is still appending to (``api.follow``): each byte read once, lines
given as they complete, the file checked at every look for deletion, truncation, replacement and
in-place rewrites (a cheap whole-prefix fingerprint)."""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from transcript_reader.errors import (
    FileChangedError,
    InvalidArgumentError,
    NotAFileError,
    PermissionDeniedError,
)
from transcript_reader.reading.source import (
    MAX_LINE_BYTES,
    READ_BUFFER,
    UTF8_BOM,
    Skipped,
    is_zstd_head,
    over_cap_reason,
    skip_bom,
)


class FollowStream:
    """The lines of a file another process is still appending to, for :func:`transcript_reader.api.follow`.

    Iterating yields complete lines as they are written; at the end of the data it waits ``poll_s``
    and looks again, so each byte is read once however long the session runs (a reader that re-reads
    the file on every change costs O(size) per change). A last line without its newline is a line
    still being written: it is held until its newline arrives, or given as it is when ``stop()`` says
    to stop. ``stop`` is asked at the end of the data only; iteration ends when it returns True. Plain
    files only: a ``.zst`` rollout is never appended to.

    At each look the file is checked against what was read (:meth:`_check_same_file`): a file deleted
    (or moved away) ends the iteration, with ``ended`` saying why; a file truncated, replaced or
    rewritten in place raises ``FileChangedError``. A line longer than ``line_bytes`` is a
    :class:`Skipped`, never held whole."""

    #: Blocks of the read prefix compared at every look (a whole-prefix fingerprint, O(1) per look).
    SAMPLES = 16
    SAMPLE_BYTES = 4096
    #: Looks in a row the path may be missing (a rename in progress) before following ends.
    MISSING_LOOKS = 3

    def __init__(self, path: Path, *, poll_s: float, stop: Callable[[], bool],
                 sleep: Callable[[float], None] = time.sleep, line_bytes: int = MAX_LINE_BYTES) -> None:
        self.path = path
        self.poll_s = poll_s
        self.stop = stop
        self.sleep = sleep
        self.line_bytes = line_bytes
        self.fh: IO[bytes] | None = None
        self.ended: str | None = None  # why following ended on its own (the file was deleted)
        self.lines = 0  # lines given so far
        self._start = 0  # where the content starts (after a BOM skipped at open)
        self._crc = 0  # crc32 of every byte read from _start on
        self._samples: list[tuple[int, int, int]] = []  # (offset, length, crc32) over the read prefix
        self._checked_at = -1  # how far the file had been read at the last look
        self._stat: tuple[int, int, int] | None = None  # (size, mtime_ns, ctime_ns) at the last look
        self._missing = 0

    def __enter__(self) -> FollowStream:
        try:
            self.fh = skip_bom(open(self.path, "rb", buffering=READ_BUFFER))  # noqa: SIM115 - closed in __exit__
        except PermissionError:
            raise PermissionDeniedError("permission denied", path=str(self.path)) from None
        except IsADirectoryError:
            raise NotAFileError("not a regular file", path=str(self.path)) from None
        head = self.fh.peek(4)[:4] if hasattr(self.fh, "peek") else b""
        if is_zstd_head(head):
            self.fh.close()
            raise InvalidArgumentError("a .zst transcript cannot be followed (Codex appends to plain files only)",
                                       path=str(self.path))
        self._start = self.fh.tell()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()

    def __iter__(self) -> Iterator[bytes | Skipped]:
        fh = self.fh
        assert fh is not None, "use FollowStream as a context manager"
        partial = b""
        skipping = -1  # bytes of an over-cap line read so far, or -1
        first = True
        limit = self.line_bytes + 1
        while True:
            line = fh.readline(limit)
            if line:
                self._crc = zlib.crc32(line, self._crc)
                if skipping >= 0:
                    skipping += len(line)
                    if line.endswith(b"\n"):
                        self.lines += 1
                        yield Skipped(over_cap_reason(skipping - 1, self.line_bytes), skipping - 1)
                        skipping = -1
                    continue
                if line.endswith(b"\n"):
                    line = partial + line if partial else line
                    partial = b""
                    if first:
                        # a BOM written after following began (the file was empty then)
                        line = line.removeprefix(UTF8_BOM)
                        first = False
                    if len(line) > limit:  # pieces of a line written slowly, over the cap in all
                        self.lines += 1
                        yield Skipped(over_cap_reason(len(line) - 1, self.line_bytes), len(line) - 1)
                        continue
                    self.lines += 1
                    yield line
                else:
                    partial += line
                    if len(partial) > self.line_bytes:
                        skipping, partial = len(partial), b""
                        first = False
                continue
            if not self._check_same_file(fh):
                break
            if self.stop():
                break
            self.sleep(self.poll_s)
        if skipping >= 0:
            self.lines += 1
            yield Skipped(over_cap_reason(skipping, self.line_bytes), skipping)
        elif partial:
            self.lines += 1
            yield partial.removeprefix(UTF8_BOM) if first else partial

    def _check_same_file(self, fh: IO[bytes]) -> bool:
        """False when the file is gone (``ended`` says so); raise ``FileChangedError`` when it shrank,
        was replaced, or its read prefix changed (an exec stream redirected again with ``>``);
        Codex only appends to rollouts. Every look compares :data:`SAMPLES` blocks spread over the
        whole read prefix (cheap: O(1) a look); a look that finds the file modified while nothing was
        appended (an in-place rewrite of the same size) compares the whole prefix's crc32."""
        fd = fh.fileno()
        opened = os.fstat(fd)
        try:
            now = os.stat(self.path)
        except OSError:
            if opened.st_nlink == 0:
                self.ended = "the file was deleted while it was followed"
                return False
            self._missing += 1
            if self._missing >= self.MISSING_LOOKS:
                self.ended = "the file was moved away while it was followed"
                return False
            return True  # gone for the moment: a rename in progress; the next look decides
        self._missing = 0
        pos = fh.tell()
        if (now.st_ino, now.st_dev) != (opened.st_ino, opened.st_dev) or opened.st_size < pos:
            raise FileChangedError("the file was truncated or replaced while it was followed", path=str(self.path))
        for off, n, crc in self._samples:
            if zlib.crc32(os.pread(fd, n, off)) != crc:
                raise FileChangedError("the file was rewritten while it was followed", path=str(self.path))
        stat = (opened.st_size, opened.st_mtime_ns, opened.st_ctime_ns)
        if pos == self._checked_at and self._stat is not None and stat != self._stat:
            # modified, nothing appended: compare every byte read (rare, so the O(size) pass is paid once)
            crc, off = 0, self._start
            while off < pos:
                block = os.pread(fd, min(READ_BUFFER, pos - off), off)
                if not block:
                    break
                crc = zlib.crc32(block, crc)
                off += len(block)
            if crc != self._crc:
                raise FileChangedError("the file was rewritten while it was followed", path=str(self.path))
        self._stat = stat
        if pos != self._checked_at:
            self._checked_at = pos
            self._samples = self._take_samples(fd, pos)
        return True

    def _take_samples(self, fd: int, end: int) -> list[tuple[int, int, int]]:
        span = end - self._start
        if span <= 0:
            return []
        n = min(self.SAMPLE_BYTES, span)
        k = self.SAMPLES if span > n else 1
        offsets = sorted({self._start + (i * (span - n)) // max(1, k - 1) for i in range(k)})
        return [(off, n, zlib.crc32(os.pread(fd, n, off))) for off in offsets]
