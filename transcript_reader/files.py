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
