"""I/O for transcripts: open a file (plain or ``.zst``) and yield its lines with 1-based numbers. Which
format wrote a file is the providers' question (``transcript_reader.providers``), decided from content.

It exists so that no decoder touches the file system: decoders receive ``(line_no, bytes)`` pairs and
stay pure, which keeps them testable with in-memory lines and lets ``.zst`` rollouts stream through the
same path as plain ones (a 1 GB rollout never sits in memory).
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import zstandard

from transcript_reader.errors import (
    FileChangedError,
    FileNotFoundTranscriptError,
    InvalidArgumentError,
    NotAFileError,
    PermissionDeniedError,
    UnsupportedFormatError,
)
from transcript_reader.model import Format

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
UTF8_BOM = b"\xef\xbb\xbf"
_Stream = TypeVar("_Stream", bound=IO[bytes])
#: Read buffer of plain and decompressed transcripts.
READ_BUFFER = 1 << 20
#: Compressed bytes fed to the decompressor at a time: one call's output is at most ~32768x its input
#: (RLE blocks), so this bounds the memory a hostile .zst can take (32 MB) at ~+0.3 ns per output byte.
ZSTD_INPUT_CHUNK = 1 << 10
#: Reason of the unreadable entry (lenient) or error (strict) for a .zst file cut inside a frame.
ZSTD_ENDS_EARLY = "zstd stream ends early"
#: Reason of the unreadable entry (lenient) or error (strict) for a .zst file whose frames are followed by
#: bytes that are not zstd (zero padding, appended text: QA F26).
ZSTD_JUNK_AFTER = "bytes after the last zstd frame are not zstd"

def check_path(path: str | os.PathLike[str]) -> Path:
    """Resolve the typed errors a user can hit before any byte is read."""
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


class ZstdFrames(io.RawIOBase):
    """The decompressed bytes of every zstd frame of ``raw``, in turn. ``damage`` names why the stream did
    not end cleanly, once it ended: the input ran out inside a frame (zstandard's ``stream_reader``
    reports a truncated file as a plain EOF, so a cut ``.jsonl.zst`` read as a complete transcript: QA
    F2), or bytes after at least one whole frame do not decompress (QA F26: refusing the file then lost
    every good line). A file that is not zstd from its first frame on still raises ``ZstdError``."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._frame: Any = None  # the open frame's decompressobj; None between frames
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._frames = 0  # whole frames decompressed so far
        self._head = b""  # the first bytes fed to the open frame: its magic number, or not
        self.damage: str | None = None

    @property
    def ended_early(self) -> bool:
        return self.damage is not None

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._pos >= len(self._buf):
            if self._eof:
                return 0
            data = self._raw.read(ZSTD_INPUT_CHUNK)
            if not data:
                self._eof = True
                if self._frame is not None:
                    self.damage = ZSTD_ENDS_EARLY
                return 0
            out = []
            while data:
                if self._frame is None:
                    self._frame = self._dctx.decompressobj()
                    self._head = b""
                if len(self._head) < 4:
                    self._head += data[:4 - len(self._head)]
                try:
                    out.append(self._frame.decompress(data))
                except zstandard.ZstdError as e:
                    if not self._frames:  # not zstd from the start: the caller refuses the file
                        raise
                    # keep what the whole frames gave; the rest is one unreadable entry (QA F26)
                    self.damage = ZSTD_JUNK_AFTER if self._head[:4] != ZSTD_MAGIC[:len(self._head)] \
                        else f"corrupt zstd frame: {e}"
                    self._eof = True
                    break
                if self._frame.eof:
                    data = self._frame.unused_data
                    self._frame = None
                    self._frames += 1
                else:
                    data = b""
            self._buf = b"".join(out)
            self._pos = 0
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = memoryview(self._buf)[self._pos:self._pos + n]
        self._pos += n
        return n


def ended_early(fh: IO[bytes]) -> bool:
    """True when ``fh`` (from :func:`open_binary`) is a zstd stream that did not end cleanly (cut inside
    a frame, or junk after its frames); meaningful once ``fh`` was read to its end."""
    return zstd_damage(fh) is not None


def zstd_damage(fh: IO[bytes]) -> str | None:
    """Why the zstd stream ``fh`` did not end cleanly (the reason of its unreadable entry), else None."""
    raw = getattr(fh, "raw", None)
    return raw.damage if isinstance(raw, ZstdFrames) else None


@contextmanager
def open_binary(path: Path) -> Iterator[IO[bytes]]:
    """Open ``path`` for binary reading, decompressing zstd on the fly when the content is zstd."""
    try:
        # a 1 MB buffer: iterating lines through the default 8 KB one costs 2.5x more CPU on long rollouts
        # (corpus_tools.bench_reader; the bare-decode floor there reads through the same buffer size)
        raw = open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed below
    except PermissionError:
        raise PermissionDeniedError("permission denied", path=str(path)) from None
    except IsADirectoryError:
        raise NotAFileError("not a regular file", path=str(path)) from None
    try:
        head = raw.read(4)
        raw.seek(0)
        if head == ZSTD_MAGIC:
            fh = io.BufferedReader(ZstdFrames(raw), buffer_size=READ_BUFFER)
            try:
                skip_bom(fh)  # decompresses the first block: a corrupt frame shows here already
            except zstandard.ZstdError as e:
                raise UnsupportedFormatError(f"corrupt zstd stream: {e}", path=str(path), line=1) from None
            yield fh
        else:
            yield skip_bom(raw)
    finally:
        raw.close()


def skip_bom(fh: _Stream) -> _Stream:
    """Step over a UTF-8 byte order mark at the start of ``fh`` (once; a BOM further on is data). A
    rollout re-saved by a Windows editor or PowerShell starts with one, and orjson refuses it, so the
    session line was unreadable and the session lost its id, cwd and version (QA F17); RFC 8259 lets a
    JSON reader ignore it."""
    peek = getattr(fh, "peek", None)  # both streams open_binary yields are buffered readers
    if peek is not None and peek(len(UTF8_BOM))[:len(UTF8_BOM)] == UTF8_BOM:
        fh.read(len(UTF8_BOM))
    return fh


def iter_lines(path: Path, *, check_end: bool = True) -> Iterator[tuple[int, bytes, bool]]:
    """``(line_no, text, complete)`` for every line; ``complete`` is False only for a last line that
    lacks its newline (a live rollout cut mid-write). A ``.zst`` file cut inside a frame (or with junk
    after its frames) raises
    ``UnsupportedFormatError`` at its end (``check_end``: sniffing, which reads heads only, does not)."""
    with open_binary(path) as fh:
        n = 0
        try:
            for raw in fh:
                n += 1
                if raw.endswith(b"\n"):
                    yield n, raw, True
                else:
                    yield n, raw, False
        except zstandard.ZstdError as e:  # a corrupt .zst frame
            raise UnsupportedFormatError(f"corrupt zstd stream: {e}", path=str(path), line=n + 1) from None
        damage = zstd_damage(fh)
        if check_end and damage is not None:
            raise UnsupportedFormatError(damage, path=str(path), line=n + 1)


class FollowStream:
    """The lines of a file another process is still appending to, for :func:`transcript_reader.api.follow`.

    Iterating yields complete lines as they are written; at the end of the data it waits ``poll_s``
    and looks again, so each byte is read once however long the session runs (a reader that re-reads
    the file on every change costs O(size) per change). A last line without its newline is a line
    still being written: it is held until its newline arrives, or given as it is when ``stop()`` says
    to stop. ``stop`` is asked at the end of the data only; iteration ends when it returns True. Plain
    files only: a ``.zst`` rollout is never appended to."""

    def __init__(self, path: Path, *, poll_s: float, stop: Callable[[], bool],
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.path = path
        self.poll_s = poll_s
        self.stop = stop
        self.sleep = sleep
        self.fh: IO[bytes] | None = None
        self.head = b""
        self.head_at = 0

    def __enter__(self) -> FollowStream:
        try:
            self.fh = skip_bom(open(self.path, "rb", buffering=READ_BUFFER))  # noqa: SIM115 - closed in __exit__
        except PermissionError:
            raise PermissionDeniedError("permission denied", path=str(self.path)) from None
        except IsADirectoryError:
            raise NotAFileError("not a regular file", path=str(self.path)) from None
        head = self.fh.peek(4)[:4] if hasattr(self.fh, "peek") else b""
        if head == ZSTD_MAGIC:
            self.fh.close()
            raise InvalidArgumentError("a .zst transcript cannot be followed (Codex appends to plain files only)",
                                       path=str(self.path))
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()

    def __iter__(self) -> Iterator[bytes]:
        fh = self.fh
        assert fh is not None, "use FollowStream as a context manager"
        partial = b""
        first = True
        while True:
            line = fh.readline()
            if line and not self.head:
                # the file's first bytes (after a BOM skipped at open), to notice it written anew (QA3 G2)
                self.head, self.head_at = line[:256], fh.tell() - len(line)
            if line:
                if line.endswith(b"\n"):
                    line = partial + line if partial else line
                    partial = b""
                    if first:
                        # a BOM written after following began (the file was empty then): QA2 F10
                        line = line.removeprefix(UTF8_BOM)
                        first = False
                    yield line
                else:
                    partial += line
                continue
            self._check_same_file(fh)
            if self.stop():
                if partial:
                    yield partial.removeprefix(UTF8_BOM) if first else partial
                return
            self.sleep(self.poll_s)

    def _check_same_file(self, fh: IO[bytes]) -> None:
        """Fail when the file shrank or was replaced: what was read no longer describes it (an exec
        stream redirected again with ``>`` truncates it: QA2 F9). Codex only appends to rollouts."""
        try:
            now = os.stat(self.path)
        except OSError:
            return  # gone for the moment: a rename in progress; the next look decides
        opened = os.fstat(fh.fileno())
        changed = (now.st_ino, now.st_dev) != (opened.st_ino, opened.st_dev) or opened.st_size < fh.tell()
        if not changed and self.head:
            # truncated and written again to at least the old size between two looks: its start differs
            changed = os.pread(fh.fileno(), len(self.head), self.head_at) != self.head
        if changed:
            raise FileChangedError("the file was truncated or replaced while it was followed",
                                   path=str(self.path))


def parse_format(value: Format | str | None) -> Format | None:
    if value is None or isinstance(value, Format):
        return value
    try:
        return Format(value)
    except ValueError:
        known = ", ".join(f.value for f in Format)
        raise InvalidArgumentError(f"unknown format {value!r} (known: {known})") from None
