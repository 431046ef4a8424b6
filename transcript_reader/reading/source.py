"""I/O for transcripts: open a file (plain or ``.zst``) and yield its lines with 1-based numbers. Which
format wrote a file is the providers' question (``transcript_reader.providers``), decided from content.

It exists so that no decoder touches the file system: decoders receive ``(line_no, bytes)`` pairs and
stay pure, which keeps them testable with in-memory lines and lets ``.zst`` rollouts stream through the
same path as plain ones (a 1 GB rollout never sits in memory).
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar, overload

import zstandard

from transcript_reader.errors import (
    FileNotFoundTranscriptError,
    InvalidArgumentError,
    NotAFileError,
    PermissionDeniedError,
    ReadTimeoutError,
    UnsupportedFormatError,
)
from transcript_reader.model import Format
from transcript_reader.reading.zstd_frames import (
    MAX_ZSTD_BYTES,
    SKIPPABLE_FRAME,
    ZSTD_MAGIC,
    ZSTD_OUTPUT_TARGET,
    ZstdFrames,
)

UTF8_BOM = b"\xef\xbb\xbf"
_Stream = TypeVar("_Stream", bound=IO[bytes])
#: Read buffer of plain and decompressed transcripts.
READ_BUFFER = 1 << 20
#: Default longest line read (``ReadCaps.line_bytes``): a longer line is skipped in bounded memory (never
#: held whole) and reported as one unreadable line giving its length. Codex's longest real lines are
#: compaction histories of a few MB; a 2 GiB line (a decompression bomb) or a 500 MB one would otherwise
#: take gigabytes to hold and decode.
MAX_LINE_BYTES = 32 << 20
#: The most bytes format sniffing reads, whatever the lines (a 2 GB file of NUL bytes has no line end).
SNIFF_BYTES = 8 << 20
#: How far into a file a CR-only line ending is looked for (a file saved with old Mac line ends).
_EOL_PROBE = 64 << 10
class ReadCaps:
    """The documented bounds of one reading (memory stays bounded whatever the file): ``line_bytes``, the
    longest line decoded; ``zstd_bytes``, the most bytes decompressed from a ``.zst`` file."""

    __slots__ = ("line_bytes", "zstd_bytes")

    def __init__(self, line_bytes: int = MAX_LINE_BYTES, zstd_bytes: int = MAX_ZSTD_BYTES) -> None:
        if line_bytes < 1 or zstd_bytes < 1:
            raise InvalidArgumentError("read caps must be positive byte counts")
        self.line_bytes = line_bytes
        self.zstd_bytes = zstd_bytes

    def __repr__(self) -> str:
        return f"ReadCaps(line_bytes={self.line_bytes}, zstd_bytes={self.zstd_bytes})"


DEFAULT_CAPS = ReadCaps()


class Skipped:
    """A line the reader did not read: longer than the line cap (``length`` bytes, skipped without being
    held), or the unreadable rest of a damaged container. The line loops give it as one unreadable line."""

    __slots__ = ("reason", "length")

    def __init__(self, reason: str, length: int | None = None) -> None:
        self.reason = reason
        self.length = length

    def endswith(self, suffix: bytes) -> bool:  # as a line without its newline: loops test for one there only
        return False


def over_cap_reason(length: int, cap: int) -> str:
    return f"line of {length} bytes is longer than the {cap}-byte line cap: skipped, not decoded"


def read_lines(fh: IO[bytes], line_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | Skipped]:
    """The lines of ``fh`` (each with its newline, the last one maybe without), in bounded memory: a line
    longer than ``line_bytes`` is read past in buffer-sized pieces and given as a :class:`Skipped`."""
    readline = fh.readline
    limit = line_bytes + 1
    while True:
        raw = readline(limit)
        if not raw:
            return
        if len(raw) == limit and raw[-1] != 10:
            del raw
            yield skip_rest(fh, limit, line_bytes)
            continue
        yield raw


def skip_rest(fh: IO[bytes], n: int, line_bytes: int) -> Skipped:
    """The :class:`Skipped` of a line over the cap whose first ``n`` bytes were read, its rest read past."""
    readline = fh.readline
    while True:
        rest = readline(READ_BUFFER)
        if not rest:
            break
        n += len(rest)
        if rest[-1] == 10:
            n -= 1  # the newline is not part of the line's length
            break
    return Skipped(over_cap_reason(n, line_bytes), n)


def prefix_lines(fh: IO[bytes], *, budget: int = SNIFF_BYTES,
                 max_line: int = 1 << 20) -> Iterator[tuple[bytes, bool]]:
    """``(head, whole)`` of the first lines of ``fh`` within ``budget`` bytes in all (format sniffing):
    a line longer than ``max_line`` gives its head only (``whole`` False) and is read past within the
    budget; when the budget runs out the lines end (a 2 GB line of NUL bytes is never held). A run of
    empty lines is given as one line of newlines."""
    used = 0
    while used < budget:
        raw = fh.readline(min(max_line + 1, budget - used))
        if not raw:
            return
        used += len(raw)
        if raw == b"\n":  # a run of empty lines is one piece (a file of millions of them)
            raw += blank_run(fh)
            used += len(raw) - 1
            yield raw, True
            continue
        if raw.endswith(b"\n") or len(raw) <= max_line and used < budget:
            yield raw, True
            continue
        yield raw, False
        while used < budget:  # the rest of a long line
            rest = fh.readline(min(READ_BUFFER, budget - used))
            if not rest:
                return
            used += len(rest)
            if rest.endswith(b"\n"):
                break


class Descriptor:
    """A transcript the caller has already opened (and checked), read through that descriptor only.

    Why: a server that checks a path and then opens it again by name reads whatever the name leads to at
    the second open (a directory swapped for a symlink in between). Every reader of the library
    (sniffing, the listing's head and tail, the whole read) accepts a Descriptor wherever it takes a path
    and opens it with :meth:`open`: positional reads on the same open file, each open with its own
    position, so no name is ever resolved again. ``display`` is what results and errors show (the path as
    the caller gave it). Past ``deadline`` (a ``time.monotonic()`` value) every read raises
    :class:`ReadTimeoutError`, so a time budget holds however the reading spends its time. The caller owns
    ``fd`` and closes it (:meth:`close`)."""

    __slots__ = ("fd", "display", "deadline")

    def __init__(self, fd: int, display: str, *, deadline: float | None = None) -> None:
        self.fd = fd
        self.display = display
        self.deadline = deadline

    @property
    def name(self) -> str:
        return os.path.basename(self.display)

    def __str__(self) -> str:
        return self.display

    def __repr__(self) -> str:
        return f"Descriptor({self.fd}, {self.display!r})"

    def stat(self) -> os.stat_result:
        return os.fstat(self.fd)

    def open(self, buffering: int = READ_BUFFER) -> io.BufferedReader:
        return io.BufferedReader(_PositionalReader(self), buffer_size=buffering)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Descriptor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _PositionalReader(io.RawIOBase):
    """The bytes of a :class:`Descriptor` from its own position (``os.pread``: the descriptor's shared
    offset is never moved, so several opens of one descriptor do not disturb each other)."""

    def __init__(self, source: Descriptor) -> None:
        super().__init__()
        self._source = source
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            self._pos = offset
        elif whence == io.SEEK_CUR:
            self._pos += offset
        else:
            self._pos = os.fstat(self._source.fd).st_size + offset
        return self._pos

    def readinto(self, b: Any) -> int:
        deadline = self._source.deadline
        if deadline is not None and time.monotonic() > deadline:
            raise ReadTimeoutError("the reading ran over its time budget", path=self._source.display)
        data = os.pread(self._source.fd, len(b), self._pos)
        n = len(data)
        b[:n] = data
        self._pos += n
        return n


#: What every reader accepts: a path, or a file the caller opened (:class:`Descriptor`).
Readable = Path | Descriptor


@overload
def check_path(path: Descriptor) -> Descriptor: ...
@overload
def check_path(path: str | os.PathLike[str]) -> Path: ...
def check_path(path: str | os.PathLike[str] | Descriptor) -> Path | Descriptor:
    """Resolve the typed errors a user can hit before any byte is read."""
    if isinstance(path, Descriptor):
        import stat as _st

        if not _st.S_ISREG(path.stat().st_mode):
            raise NotAFileError("not a regular file", path=path.display)
        return path
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise FileNotFoundTranscriptError("no such file", path=str(p)) from None
    except PermissionError:
        raise PermissionDeniedError("permission denied", path=str(p)) from None
    except OSError as e:
        raise NotAFileError(f"cannot stat: {e.strerror or e}", path=str(p)) from None
    import stat as _stat

    if not _stat.S_ISREG(st.st_mode):
        raise NotAFileError("not a regular file", path=str(p))
    return p


def inflates_past(path: Readable, cap: int) -> bool:
    """True when ``path`` is zstd and decompresses to more than ``cap`` bytes. Found by decompressing it
    (in bounded memory, a chunk at a time) up to the cap: a frame's declared size may be absent or false.
    Not zstd, or not zstd from its first frame (the reader refuses that with its own error): False."""
    raw: IO[bytes] = path.open() if isinstance(path, Descriptor) else open(path, "rb")  # noqa: SIM115
    try:
        if not is_zstd_head(raw.read(4)):
            return False
        raw.seek(0)
        frames = ZstdFrames(raw, cap)
        chunk = bytearray(ZSTD_OUTPUT_TARGET)
        try:
            while frames.readinto(chunk):
                pass
        except zstandard.ZstdError:
            return False
        return frames.capped
    finally:
        raw.close()


def ended_early(fh: IO[bytes]) -> bool:
    """True when ``fh`` (from :func:`open_binary`) is a zstd stream that did not end cleanly (cut inside
    a frame, or junk after its frames); meaningful once ``fh`` was read to its end."""
    return zstd_damage(fh) is not None


def zstd_damage(fh: IO[bytes]) -> str | None:
    """Why the zstd stream ``fh`` did not end cleanly (the reason of its unreadable entry), else None."""
    raw = getattr(fh, "raw", None)
    if isinstance(raw, _CrToLf):
        raw = getattr(raw.inner, "raw", None)
    return raw.damage if isinstance(raw, ZstdFrames) else None


def is_zstd_head(head: bytes) -> bool:
    """True when ``head`` (a file's first 4 bytes) opens a zstd frame or a skippable frame."""
    return head == ZSTD_MAGIC or SKIPPABLE_FRAME.fullmatch(head) is not None


class _CrToLf(io.RawIOBase):
    """A stream whose lines end with CR only (classic Mac line ends), given with LF ends. JSON text holds
    no raw CR inside a string, so every CR of such a file is a line end."""

    def __init__(self, inner: IO[bytes]) -> None:
        super().__init__()
        self.inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self.inner.read(len(b))
        if not data:
            return 0
        data = data.replace(b"\r", b"\n")
        b[:len(data)] = data
        return len(data)


def _lf_lines(fh: IO[bytes]) -> IO[bytes]:
    """``fh``, or the same stream with CR line ends made LF when the file uses CR alone: lines are split
    at LF, so a CR-only file was one giant line (refused whole)."""
    probe = fh.peek(_EOL_PROBE)[:_EOL_PROBE]  # type: ignore[attr-defined]
    if b"\r" in probe and b"\n" not in probe:
        return io.BufferedReader(_CrToLf(fh), buffer_size=READ_BUFFER)
    return fh


@contextmanager
def open_binary(path: Readable, caps: ReadCaps = DEFAULT_CAPS) -> Iterator[IO[bytes]]:
    """Open ``path`` for binary reading, decompressing zstd on the fly when the content is zstd (at most
    ``caps.zstd_bytes`` of it), with CR-only line ends made LF."""
    try:
        # a 1 MB buffer: iterating lines through the default 8 KB one costs 2.5x more CPU on long rollouts
        # (corpus_tools.bench_reader; the bare-decode floor there reads through the same buffer size)
        raw: IO[bytes] = path.open() if isinstance(path, Descriptor) else \
            open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed below
    except PermissionError:
        raise PermissionDeniedError("permission denied", path=str(path)) from None
    except IsADirectoryError:
        raise NotAFileError("not a regular file", path=str(path)) from None
    try:
        head = raw.read(4)
        raw.seek(0)
        if is_zstd_head(head):
            fh = io.BufferedReader(ZstdFrames(raw, caps.zstd_bytes), buffer_size=READ_BUFFER)
            try:
                skip_bom(fh)  # decompresses the first block: a corrupt frame shows here already
                fh.peek(_EOL_PROBE)
            except zstandard.ZstdError as e:
                raise UnsupportedFormatError(f"corrupt zstd stream: {e}", path=str(path), line=1) from None
            yield _lf_lines(fh)
        else:
            yield _lf_lines(skip_bom(raw))
    finally:
        raw.close()


def skip_bom(fh: _Stream) -> _Stream:
    """Step over a UTF-8 byte order mark at the start of ``fh`` (once; a BOM further on is data). A
    rollout re-saved by a Windows editor or PowerShell starts with one, and orjson refuses it, so the
    session line was unreadable and the session lost its id, cwd and version; RFC 8259 lets a
    JSON reader ignore it."""
    peek = getattr(fh, "peek", None)  # both streams open_binary yields are buffered readers
    if peek is not None and peek(len(UTF8_BOM))[:len(UTF8_BOM)] == UTF8_BOM:
        fh.read(len(UTF8_BOM))
    return fh


_NEWLINES = re.compile(b"\n+")


def blank_run(fh: IO[bytes]) -> bytes:
    """The empty lines that follow in ``fh``'s buffer, read at once (at most one buffer): a run of empty
    lines is read as one piece, so a file of millions of them costs about what its bytes cost, not a
    line's overhead each (``iter_lines`` gives the run as one line of newlines, numbered by its first)."""
    peek = getattr(fh, "peek", None)
    if peek is None:
        return b""
    m = _NEWLINES.match(peek(1))
    return fh.read(m.end()) if m is not None else b""


def iter_lines(path: Readable, *, check_end: bool = True,
               caps: ReadCaps = DEFAULT_CAPS) -> Iterator[tuple[int, bytes | Skipped, bool]]:
    """``(line_no, text, complete)`` for every line; ``complete`` is False only for a last line that
    lacks its newline; a run of empty lines is one ``text`` of newlines only (its count is its length)
    numbered by its first line (a live rollout cut mid-write); a line over ``caps.line_bytes`` is a
    :class:`Skipped`. A ``.zst`` file cut inside a frame (or with junk after its frames) raises
    ``UnsupportedFormatError`` at its end (``check_end``: sniffing, which reads heads only, does not)."""
    with open_binary(path, caps) as fh:
        n = 0
        try:
            for raw in read_lines(fh, caps.line_bytes):
                n += 1
                if raw == b"\n":
                    raw += blank_run(fh)
                    yield n, raw, True
                    n += len(raw) - 1
                elif raw.__class__ is Skipped or raw.endswith(b"\n"):  # type: ignore[union-attr]
                    yield n, raw, True
                else:
                    yield n, raw, False
        except zstandard.ZstdError as e:  # a corrupt .zst frame
            raise UnsupportedFormatError(f"corrupt zstd stream: {e}", path=str(path), line=n + 1) from None
        damage = zstd_damage(fh)
        if check_end and damage is not None:
            raise UnsupportedFormatError(damage, path=str(path), line=n + 1)


def parse_format(value: Format | str | None) -> Format | None:
    if value is None or isinstance(value, Format):
        return value
    try:
        return Format(value)
    except ValueError:
        known = ", ".join(f.value for f in Format)
        raise InvalidArgumentError(f"unknown format {value!r} (known: {known})") from None
