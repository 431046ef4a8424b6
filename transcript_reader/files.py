"""Opening files safely where a listing may meet anything: a FIFO, a directory, a file swapped under us."""

from __future__ import annotations

import os
import stat
from typing import BinaryIO


def open_regular(path: str | os.PathLike[str]) -> BinaryIO | None:
    """Open ``path`` for reading only if it is a regular file; None when it is missing, unreadable or
    anything else (a FIFO named ``session_index.jsonl`` blocked ``ls`` forever in ``open``, a
    directory of that name raised IsADirectoryError). The mode is checked with ``stat`` before the open
    and with ``fstat`` after it (the name may be swapped in between); ``O_NONBLOCK`` keeps the open itself
    from waiting for a writer should a FIFO slip through."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return os.fdopen(fd, "rb")
    except OSError:
        os.close(fd)
        return None


def load_json(path: str | os.PathLike[str]) -> object:
    """The JSON document a cache file holds, or None when it is missing, not a regular file or not JSON
    (a cache only ever costs speed)."""
    import orjson

    fh = open_regular(path)
    if fh is None:
        return None
    try:
        with fh:
            return orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return None


def save_json(path: str | os.PathLike[str], doc: object) -> bool:
    """Write ``doc`` to ``path`` atomically (a concurrent reader never sees half a file); False when it
    could not be written (a cache only ever costs speed)."""
    from pathlib import Path

    import orjson

    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f"{p.name}.{os.getpid()}.tmp")
        tmp.write_bytes(orjson.dumps(doc))
        os.replace(tmp, p)
        return True
    except OSError:
        return False
