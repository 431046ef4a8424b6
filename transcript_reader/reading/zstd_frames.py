"""The decompressed bytes of a ``.zst`` transcript, frame after frame, in bounded memory, and why the
stream did not end cleanly when it did not (``source.open_binary`` reads every ``.zst`` file through it).
"""

from __future__ import annotations

import io
import re
from typing import IO, Any

import zstandard

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Compressed bytes first fed to the decompressor at a time: one call's output is at most ~32768x its
#: input (RLE blocks), so this bounds what one call can give (8 MB). The chunk then adapts so that a call
#: gives about ``ZSTD_OUTPUT_TARGET``: larger for ordinary rollouts (~10x), down to a few bytes for a bomb.
ZSTD_INPUT_CHUNK = 1 << 8
ZSTD_OUTPUT_TARGET = 1 << 20
_ZSTD_CHUNK_MAX = 1 << 16
#: Reason of the unreadable entry (lenient) or error (strict) for a .zst file cut inside a frame.
ZSTD_ENDS_EARLY = "zstd stream ends early"
#: Reason of the unreadable entry (lenient) or error (strict) for a .zst file whose frames are followed by
#: bytes that are not zstd (zero padding, appended text).
ZSTD_JUNK_AFTER = "bytes after the last zstd frame are not zstd"

#: Default most bytes decompressed from one ``.zst`` file (``ReadCaps.zstd_bytes``); what follows is
#: one unreadable entry. Codex's own rollouts stay far below it; a bomb stops here.
MAX_ZSTD_BYTES = 8 << 30
#: A zstd skippable frame (magic 0x184D2A50-0x184D2A5F, little endian): metadata a writer may put
#: before the first data frame; libzstd steps over it.
SKIPPABLE_FRAME = re.compile(rb"[\x50-\x5f]\x2a\x4d\x18")


class ZstdFrames(io.RawIOBase):
    """The decompressed bytes of every zstd frame of ``raw``, in turn. ``damage`` names why the stream did
    not end cleanly, once it ended: the input ran out inside a frame (zstandard's ``stream_reader``
    reports a truncated file as a plain EOF, so a cut ``.jsonl.zst`` read as a complete transcript),
    or bytes after at least one whole frame do not decompress (refusing the file then lost every good
    line). A file that is not zstd from its first frame on still raises ``ZstdError``."""

    def __init__(self, raw: IO[bytes], max_bytes: int = MAX_ZSTD_BYTES) -> None:
        super().__init__()
        self._raw = raw
        self._left = max_bytes  # decompressed bytes still allowed (ReadCaps.zstd_bytes)
        self._max = max_bytes
        self._out = 0  # decompressed bytes given so far
        self._chunk = ZSTD_INPUT_CHUNK
        self._dctx = zstandard.ZstdDecompressor()
        self._frame: Any = None  # the open frame's decompressobj; None between frames
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._frames = 0  # whole frames decompressed so far
        self._head = b""  # the first bytes fed to the open frame: its magic number, or not
        self.damage: str | None = None
        self.capped = False  # the stream decompresses to more than ``max_bytes``: the rest is not read

    @property
    def ended_early(self) -> bool:
        return self.damage is not None

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._pos >= len(self._buf):
            if self._eof:
                return 0
            data = self._raw.read(self._chunk)
            n_in = len(data)
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
                    if not self._frames and not self._out and not out:
                        # nothing readable at all: not zstd from the start, the caller refuses the file
                        raise
                    # a first frame corrupt after some blocks keeps what they gave, like a later one
                    # keep what the whole frames gave; the rest is one unreadable entry
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
            # the next read: about ZSTD_OUTPUT_TARGET bytes of output at this ratio
            # (growing at most 2x a read: a call that fails loses what it would have given, so a file
            # corrupt after some blocks keeps every block read before the failing call)
            ratio = len(self._buf) // max(1, n_in)
            self._chunk = max(16, min(_ZSTD_CHUNK_MAX, 2 * self._chunk, ZSTD_OUTPUT_TARGET // max(1, ratio)))
            if len(self._buf) > self._left:
                self._buf = self._buf[:self._left]
                self.damage = f"decompressed size is over the {self._max}-byte cap: the rest is not read"
                self.capped = True
                self._eof = True
            self._left -= len(self._buf)
            self._out += len(self._buf)
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = memoryview(self._buf)[self._pos:self._pos + n]
        self._pos += n
        return n
